"""The local LP solved by pruning (TRW-S, then HiGHS on the undecided nodes) against the
whole LP by HiGHS and against exact enumeration: the same optimum, a point of the local
polytope, a bound that is never below the exact optimum."""

from __future__ import annotations

import numpy as np
import pytest
from test_graph_inference import CASES, at_most, close, grid_edges, instance, reference

from frankwolfe.applications.structured_svm.models.graph import infer, labelling_score, local_lp
from frankwolfe.applications.structured_svm.models.graph import lp as lp_module


def _feasible(node: np.ndarray, edge: np.ndarray, e: np.ndarray, atol: float) -> bool:
    return bool(node.min() >= 0 and edge.min() >= 0
                and np.allclose(node.sum(axis=1), 1.0, rtol=0, atol=atol)
                and np.allclose(edge.sum(axis=2), node[e[:, 0]], rtol=0, atol=atol)
                and np.allclose(edge.sum(axis=1), node[e[:, 1]], rtol=0, atol=atol))


def _value(u: np.ndarray, p: np.ndarray, node: np.ndarray, edge: np.ndarray) -> float:
    return float(np.sum(u * node) + np.sum(p * edge))


@pytest.mark.parametrize("family", ["tree", "cycle", "grid3"])
def test_pruned_lp_is_the_lp_optimum(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = []  # the sizes of the LPs handed to HiGHS: a whole one means a fallback
    real = lp_module._highs

    def spy(u, p, e, allowed=None):
        whole.append(allowed is None)
        return real(u, p, e, allowed)

    monkeypatch.setattr(lp_module, "_highs", spy)
    fractional = fallbacks = 0
    runs = 0
    for fam, K, seed, submodular in CASES:
        if fam != family:
            continue
        u, p, e = instance(fam, K, seed, submodular)
        p = np.broadcast_to(p, (e.shape[0], K, K)) if p.ndim == 2 else p
        opt = reference(u, p, e)
        tag = (fam, K, seed, submodular)
        before = len(whole)
        r = local_lp(u, p, e, solver="pruned", gap_tol=1e-9)
        fallbacks += any(whole[before:])
        ref = local_lp(u, p, e, solver="highs")
        runs += 1
        assert at_most(opt, r.bound) and at_most(r.score, opt), tag
        assert close(r.bound, ref.bound), tag  # both the LP's optimum
        assert _feasible(r.node_marginals, r.edge_marginals, e, 1e-7), tag
        # the certified gap: the relaxed labelling's value is within gap_tol of the bound
        v = _value(u, p, r.node_marginals, r.edge_marginals)
        assert v <= r.bound + 1e-9 * (1 + abs(r.bound)), tag
        assert r.bound - v <= 1e-7 * (1 + abs(r.bound)), tag
        assert close(r.score, labelling_score(u, p, e, r.labels)), tag
        if fam == "tree" or submodular:
            assert not r.fractional and close(r.score, opt), tag
        fractional += r.fractional
    assert runs >= 60
    if family != "tree":
        assert fractional >= 1  # the relaxed points are exercised, not only labellings
    # most instances never need the whole LP
    assert fallbacks <= 0.25 * runs, (fallbacks, runs)


def test_fallback_to_the_whole_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    # a repulsive 6x6 grid with 3 states: the LP is fractional; with no pruning
    # threshold above 0 the pruned LP cannot reach the bound and the whole LP runs
    rng = np.random.default_rng(3)
    e = grid_edges(6, 6)
    u = rng.normal(size=(36, 3))
    p = -2.0 * np.eye(3) + 0.3 * rng.normal(size=(3, 3))
    ref = local_lp(u, p, e, solver="highs")
    assert ref.fractional
    monkeypatch.setattr(lp_module, "_DELTAS", (0.0,))
    calls = []
    real = lp_module._highs
    monkeypatch.setattr(lp_module, "_highs", lambda *a: calls.append(len(a)) or real(*a))
    r = local_lp(u, p, e, solver="pruned", gap_tol=1e-9)
    assert calls[-1] == 3  # the last HiGHS call had no `allowed`: the whole LP
    assert close(r.bound, ref.bound) and r.fractional


def test_a_large_grid_prunes_to_the_same_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    # above PRUNE_ABOVE variables "auto" prunes; a 30x30 grid with 5 states and a
    # repulsive pairwise term (fractional LP) against the whole LP by HiGHS
    rng = np.random.default_rng(0)
    e = grid_edges(30, 30)
    u = rng.normal(size=(900, 5))
    p = -1.0 * np.eye(5) + 0.2 * rng.normal(size=(5, 5))
    n_vars = 900 * 5 + e.shape[0] * 25
    assert n_vars > lp_module.PRUNE_ABOVE
    ref = local_lp(u, p, e, solver="highs")
    sizes = []
    real = lp_module._highs
    monkeypatch.setattr(lp_module, "_highs",
                        lambda u, p, e, allowed=None: sizes.append(u.shape[0]) or
                        real(u, p, e, allowed))
    r = infer(u, p, e, "lp")  # gap_tol 1e-6
    assert sizes and max(sizes) < 900 / 4  # only undecided nodes went to HiGHS
    assert r.fractional and ref.fractional
    pe = np.broadcast_to(p, (e.shape[0], 5, 5))
    assert r.node_marginals is not None and r.edge_marginals is not None
    assert _feasible(r.node_marginals, r.edge_marginals, e, 1e-7)
    v = _value(u, pe, r.node_marginals, r.edge_marginals)
    tol = 1e-6 * (1 + abs(ref.bound))
    # a point of the local polytope: never above the LP's optimum; within gap_tol of
    # the bound, which is never below that optimum
    assert ref.bound - tol <= v <= ref.bound + 1e-7 * (1 + abs(ref.bound))
    assert r.bound >= ref.bound - 1e-7 * (1 + abs(ref.bound)) and r.bound - v <= tol


def test_bad_solver_options_are_named() -> None:
    u, p, e = np.zeros((2, 2)), np.zeros((2, 2)), np.array([[0, 1]])
    with pytest.raises(ValueError, match="`solver` must be one of.*'simplex'"):
        local_lp(u, p, e, solver="simplex")
    with pytest.raises(ValueError, match="`gap_tol` must be a finite number >= 0, got -1"):
        local_lp(u, p, e, gap_tol=-1)

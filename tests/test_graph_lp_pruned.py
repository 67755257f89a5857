"""The local LP solved by pruning (TRW-S, then HiGHS on the undecided nodes) against the
whole LP by HiGHS and against exact enumeration: the same optimum, a point of the local
polytope, a bound that is never below the exact optimum."""

from __future__ import annotations

import numpy as np
import pytest
from test_graph_inference import at_most, close, family_instances, grid_edges

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
def test_pruned_lp_against_the_whole_lp(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = []  # whether each LP handed to HiGHS was the whole one
    real = lp_module._highs

    def spy(u, p, e, allowed=None):
        whole.append(allowed is None)
        return real(u, p, e, allowed)

    monkeypatch.setattr(lp_module, "_highs", spy)
    reached = runs = 0
    for tag, u, p, e, opt in family_instances(family):
        fam, _, _, submodular = tag
        before = len(whole)
        r = local_lp(u, p, e, solver="pruned", tol=1e-9)
        assert not any(whole[before:]), tag  # never the whole LP
        ref = local_lp(u, p, e, solver="highs")
        runs += 1
        # bound >= the LP's optimum >= the exact optimum >= the rounded labelling's score
        assert at_most(ref.bound, r.bound) and at_most(opt, r.bound), tag
        assert at_most(r.score, opt), tag
        assert close(r.score, labelling_score(u, p, e, r.labels)), tag
        # a point of the local polytope: its value never above the LP's optimum
        assert _feasible(r.node_marginals, r.edge_marginals, e, 1e-7), tag
        v = _value(u, p, r.node_marginals, r.edge_marginals)
        assert close(v, r.value) and at_most(v, ref.bound) and at_most(v, r.bound), tag
        if r.bound - r.value <= 1e-9 * (1 + abs(r.bound)):  # pruning reached the bound
            reached += 1
            assert close(r.bound, ref.bound) and close(v, ref.bound), tag
            if fam == "tree" or submodular:
                assert not r.fractional and close(r.score, opt), tag
    assert runs >= 60
    # (a fractional optimum on these small graphs leaves most nodes undecided: there
    # pruning stops at TRW-S's labelling; the 30x30 grid below exercises relaxed points)
    assert reached >= 0.75 * runs, (reached, runs)


def test_pruning_short_of_the_bound_returns_a_certified_point(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a repulsive 6x6 grid with 3 states: the LP is fractional; with no pruning
    # threshold above 0 the pruned LP cannot reach the bound: the best point found comes
    # back with its certified gap, and the whole LP is not solved
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
    r = local_lp(u, p, e, solver="pruned")
    assert 3 not in calls  # no HiGHS call without `allowed`: never the whole LP
    pe = np.broadcast_to(p, (e.shape[0], 3, 3))
    assert _feasible(r.node_marginals, r.edge_marginals, e, 1e-7)
    v = _value(u, pe, r.node_marginals, r.edge_marginals)
    assert close(v, r.value) and at_most(v, ref.bound) and at_most(ref.bound, r.bound)
    assert r.bound - r.value > 1e-6 * (1 + abs(r.bound))  # short of it, and it says so
    res = infer(u, p, e, "lp", solver="pruned")
    assert not res.exact


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
    r = infer(u, p, e, "lp")  # tol 1e-6
    assert sizes and max(sizes) < 900 / 4  # only undecided nodes went to HiGHS
    assert not r.exact
    assert r.fractional and ref.fractional
    pe = np.broadcast_to(p, (e.shape[0], 5, 5))
    assert r.node_marginals is not None and r.edge_marginals is not None
    assert _feasible(r.node_marginals, r.edge_marginals, e, 1e-7)
    v = _value(u, pe, r.node_marginals, r.edge_marginals)
    tol = 1e-6 * (1 + abs(ref.bound))
    # a point of the local polytope: never above the LP's optimum; within tol of
    # the bound, which is never below that optimum
    assert ref.bound - tol <= v <= ref.bound + 1e-7 * (1 + abs(ref.bound))
    assert r.bound >= ref.bound - 1e-7 * (1 + abs(ref.bound)) and r.bound - v <= tol


def test_bad_solver_options_are_named() -> None:
    u, p, e = np.zeros((2, 2)), np.zeros((2, 2)), np.array([[0, 1]])
    with pytest.raises(ValueError, match="`solver` must be one of.*'simplex'"):
        local_lp(u, p, e, solver="simplex")
    with pytest.raises(ValueError, match="`tol` must be a finite number >= 0, got -1"):
        local_lp(u, p, e, tol=-1)


def test_auto_passes_tol_to_the_lp_it_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tol`` is the relative gap of ``"lp"`` as of ``"trws"``: ``"auto"`` hands it on
    where it picks the LP (it was ``gap_tol`` there, and ``"auto"`` dropped ``tol``), and
    drops it where it picks a method without one."""
    from frankwolfe.applications.structured_svm import GraphCRF
    from frankwolfe.applications.structured_svm.models.graph import inference as inf_module

    seen = []
    real = inf_module.local_lp

    def spy(u, p, e, **options):
        seen.append(options)
        return real(u, p, e, **options)

    monkeypatch.setattr(inf_module, "local_lp", spy)
    rng = np.random.default_rng(3)
    e = grid_edges(3, 3)  # loopy, 3 states, repulsive: "auto" picks "lp"
    u, p = rng.normal(size=(9, 3)), -1.0 * np.eye(3) + 0.2 * rng.normal(size=(3, 3))
    assert inf_module.choose_method(u, np.broadcast_to(p, (e.shape[0], 3, 3)), e) == "lp"
    infer(u, p, e, "auto", tol=1e-9, max_sweeps=3)
    assert seen == [{"tol": 1e-9}]
    # a chain: "auto" picks exact inference, which has no tol
    chain = np.array([[0, 1], [1, 2]])
    r = infer(u[:3], p, chain, "auto", tol=1e-9)
    assert r.method == "exact" and len(seen) == 1
    # a model's options: checked by name at construction, reaching the LP at decoding
    model = GraphCRF(3, 2, inference="auto", inference_options={"tol": 1e-8})
    assert model.inference_options == {"tol": 1e-8}
    with pytest.raises(ValueError, match="takes no option 'gap_tol'"):
        GraphCRF(3, 2, inference="auto", inference_options={"gap_tol": 1e-8})
    with pytest.raises(ValueError, match="option 'tol' must be a finite number >= 0"):
        GraphCRF(3, 2, inference="lp", inference_options={"tol": -1.0})

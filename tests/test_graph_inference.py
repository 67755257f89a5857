"""MAP inference on pairwise graphs checked against exact enumeration.

The reference optimum of every random instance is brute-force enumeration of all
labellings (``exact_enumeration``) where ``K^n <= 2^16``, and variable elimination
otherwise (3x3 grids with 4 states, 4x4 grids with 3-4); elimination itself is checked against
enumeration on every instance where both run.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frankwolfe.applications.structured_svm.models.graph import (
    alpha_expansion,
    exact_elimination,
    exact_enumeration,
    infer,
    is_submodular_binary,
    labelling_score,
    local_lp,
    max_product,
    min_cut_binary,
    tree_max_product,
    trws,
)
from frankwolfe.errors import ShapeError


def grid_edges(h: int, w: int) -> np.ndarray:
    e = []
    for i in range(h):
        for j in range(w):
            k = i * w + j
            if j + 1 < w:
                e.append((k, k + 1))
            if i + 1 < h:
                e.append((k, k + w))
    return np.array(e, dtype=np.int64)


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    # each node after the first hangs from an earlier one, then the labels are shuffled
    perm = rng.permutation(n)
    return np.array([(perm[i], perm[rng.integers(i)]) for i in range(1, n)], dtype=np.int64)


def cycle_edges(n: int, rng: np.random.Generator) -> np.ndarray:
    perm = rng.permutation(n)
    return np.array([(perm[i], perm[(i + 1) % n]) for i in range(n)], dtype=np.int64)


FAMILIES = ("tree", "cycle", "grid3", "grid4")


def instance(family: str, K: int, seed: int, submodular: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if family == "tree":
        edges = random_tree(int(rng.integers(2, 11)), rng)
    elif family == "cycle":
        edges = cycle_edges(int(rng.integers(3, 9)), rng)
    else:
        side = 3 if family == "grid3" else 4
        edges = grid_edges(side, side)
    n = int(edges.max()) + 1
    unary = rng.normal(size=(n, K))
    # strong couplings make the relaxation fractional often enough to be tested
    pairwise = rng.normal(scale=1.5, size=(edges.shape[0], K, K))
    if submodular:
        d = pairwise[:, 0, 0] + pairwise[:, 1, 1] - pairwise[:, 0, 1] - pairwise[:, 1, 0]
        pairwise[:, 1, 1] += np.maximum(-d, 0) + rng.uniform(0, 0.5, size=d.shape)
    return unary, pairwise, edges


def reference(u: np.ndarray, p: np.ndarray, e: np.ndarray) -> float:
    n, K = u.shape
    if K ** n <= 1 << 16:
        y, s = exact_enumeration(u, p, e)
        y2, s2 = exact_elimination(u, p, e)
        assert s2 == pytest.approx(s, rel=1e-12, abs=1e-12)
        assert labelling_score(u, p, e, y2) == pytest.approx(s, rel=1e-12, abs=1e-12)
        return s
    return exact_elimination(u, p, e)[1]


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7 * (1.0 + abs(b))


def at_most(a: float, b: float) -> bool:
    return a <= b + 1e-7 * (1.0 + abs(b))


CASES = [(f, K, s, False) for f in FAMILIES for K in (2, 3, 4) for s in range(15)] + \
        [(f, 2, 100 + s, True) for f in FAMILIES for s in range(15)]


def family_instances(family: str):
    """``(tag, u, p, e, exact optimum)`` of each case of ``family`` in :data:`CASES`."""
    for fam, K, seed, submodular in CASES:
        if fam == family:
            u, p, e = instance(fam, K, seed, submodular)
            yield (fam, K, seed, submodular), u, p, e, reference(u, p, e)


def test_at_least_200_instances() -> None:
    assert len(CASES) >= 200


# 4x4 grids cost a quarter of this file's time: in the slow run (-m slow), with which the
# four families hold the 240 instances
@pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.slow) if f == "grid4" else f
                                    for f in FAMILIES])
def test_every_method_against_enumeration(family: str) -> None:
    fractional = 0
    trws_loose = []
    for tag, u, p, e, opt in family_instances(family):
        fam, _, _, submodular = tag
        tree = fam == "tree"
        # exact
        r = infer(u, p, e, "exact")
        assert close(r.score, opt) and r.exact, tag
        assert close(labelling_score(u, p, e, r.labels), opt), tag
        if tree:
            y, s = tree_max_product(u, p, e)
            assert close(s, opt) and close(labelling_score(u, p, e, y), opt), tag
        # local LP: bound >= optimum >= rounded labelling; exact on trees / submodular
        lp = local_lp(u, p, e)
        assert at_most(opt, lp.bound) and at_most(lp.score, opt), tag
        assert close(lp.score, labelling_score(u, p, e, lp.labels)), tag
        assert np.allclose(lp.node_marginals.sum(axis=1), 1.0, atol=1e-7), tag
        assert np.allclose(lp.edge_marginals.sum(axis=2),
                           lp.node_marginals[e[:, 0]], atol=1e-7), tag
        if tree or submodular:
            assert not lp.fractional and close(lp.score, opt) and close(lp.bound, opt), tag
        if not lp.fractional:
            assert close(lp.score, opt), tag
        fractional += lp.fractional
        # TRW-S: a valid bound, never below the LP's (the LP bound is the best one
        # over reparametrizations)
        t = trws(u, p, e, max_iter=200)
        assert at_most(opt, t.bound) and at_most(lp.bound, t.bound) and at_most(t.score, opt), tag
        assert 0 <= t.nit <= 200 and not hasattr(t, "n_iter"), tag  # scipy's name
        assert close(t.score, labelling_score(u, p, e, t.labels)), tag
        if tree and not close(t.bound, opt):
            trws_loose.append(tag)
        if t.certified:
            assert close(t.score, opt), tag
        # max-product: exact on trees, a valid bound everywhere
        m = max_product(u, p, e, max_iter=50)
        assert at_most(m.score, opt) and at_most(opt, m.bound), tag
        assert 0 <= m.nit <= 50, tag
        if tree:
            assert close(m.score, opt), tag
        # graph cut: exact on binary submodular energies, never above the optimum
        g = alpha_expansion(u, p, e)
        assert at_most(g.score, opt), tag
        assert close(g.score, labelling_score(u, p, e, g.labels)), tag
        if submodular:
            assert g.exact and close(g.score, opt), tag
            assert close(min_cut_binary(u, p, e).score, opt), tag
        # auto: exact where it promises
        a = infer(u, p, e, "auto")
        assert at_most(a.score, opt) and at_most(opt, a.bound), tag
        if tree or submodular:
            assert a.exact and close(a.score, opt), tag
    # TRW-S is exact on trees at convergence; allow a few slow ones, not many
    assert len(trws_loose) <= 2, trws_loose
    if family != "tree":
        assert fractional > 0, "no fractional LP: the test would not exercise rounding"


def test_alpha_expansion_on_potts_never_lowers_the_score() -> None:
    rng = np.random.default_rng(7)
    for seed in range(20):
        e = grid_edges(4, 4)
        K = int(rng.integers(3, 5))
        u = rng.normal(size=(16, K))
        potts = np.eye(K) * rng.uniform(0.2, 1.5)
        y0 = np.argmax(u, axis=1)
        g = alpha_expansion(u, potts, e)
        opt = exact_elimination(u, potts, e)[1]
        assert at_most(labelling_score(u, np.broadcast_to(potts, (24, K, K)), e, y0), g.score)
        assert at_most(g.score, opt), seed
        # every Potts move is submodular: a sweep that changes nothing ends the run
        assert 1 <= g.n_sweeps < 20 and not g.exact


def test_forests_and_isolated_nodes() -> None:
    rng = np.random.default_rng(3)
    u = rng.normal(size=(7, 3))
    e = np.array([[0, 1], [1, 2], [4, 5]])  # nodes 3 and 6 isolated
    p = rng.normal(size=(3, 3, 3))
    opt = exact_enumeration(u, p, e)[1]
    for method in ("exact", "lp", "trws", "max-product", "auto"):
        r = infer(u, p, e, method)
        assert close(r.score, opt), method
    y, s = tree_max_product(u, np.zeros((0, 3, 3)), np.zeros((0, 2), dtype=np.int64))
    assert np.array_equal(y, np.argmax(u, axis=1)) and close(s, u.max(axis=1).sum())


def test_shared_pairwise_matrix() -> None:
    rng = np.random.default_rng(4)
    u, e = rng.normal(size=(9, 3)), grid_edges(3, 3)
    p = rng.normal(size=(3, 3))
    full = np.repeat(p[None], e.shape[0], axis=0)
    assert close(infer(u, p, e, "lp").bound, infer(u, full, e, "lp").bound)
    assert close(infer(u, p, e, "exact").score, exact_enumeration(u, full, e)[1])


def test_malformed_inputs_are_named() -> None:
    u, p = np.zeros((3, 2)), np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"edge 1 = \[1, 3\] has a node outside \[0, 3\)"):
        infer(u, p, [[0, 1], [1, 3]])
    with pytest.raises(ValueError, match=r"edge 0 = \[2, 2\] is a self loop"):
        infer(u, p, [[2, 2]])
    with pytest.raises(ShapeError, match="`pairwise` must have shape"):
        infer(u, np.zeros((3, 3)), [[0, 1]])
    with pytest.raises(ShapeError, match="`edges` must be an integer array"):
        infer(u, p, np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"`unary` holds nan at position \(1, 0\)"):
        infer(np.array([[0.0, 0], [np.nan, 0], [0, 0]]), p, [[0, 1]])
    with pytest.raises(ValueError, match="`method` must be one of"):
        infer(u, p, [[0, 1]], "qpbo")
    with pytest.raises(ValueError, match="the graph has a cycle"):
        tree_max_product(u, p, [[0, 1], [1, 2], [2, 0]])
    with pytest.raises(ValueError, match=r"edge 0 = \[0, 1\] is not submodular"):
        min_cut_binary(u, np.array([[0.0, 1.0], [1.0, 0.0]]), [[0, 1]])
    with pytest.raises(ValueError, match="too wide"):
        exact_elimination(np.zeros((16, 4)), np.zeros((4, 4)), grid_edges(4, 4), max_table=100)
    with pytest.raises(ValueError, match="exceed max_labellings"):
        exact_enumeration(np.zeros((30, 2)), np.zeros((2, 2)), grid_edges(5, 6))
    with pytest.raises(ValueError, match="`max_iter` must be a positive integer"):
        trws(u, p, [[0, 1]], max_iter=0)


def test_submodularity_test_is_the_definition() -> None:
    assert is_submodular_binary(np.array([[[1.0, 0.0], [0.0, 1.0]]]))
    assert not is_submodular_binary(np.array([[[0.0, 1.0], [1.0, 0.0]]]))
    assert not is_submodular_binary(np.zeros((1, 3, 3)))


def test_no_expansion_move_improves_alpha_expansion() -> None:
    # each move is one exact cut on Potts terms: brute force over all 2^12 moves of
    # every label finds none better than the result
    rng = np.random.default_rng(11)
    e = grid_edges(3, 4)
    Z = np.array(list(itertools.product((0, 1), repeat=12)), dtype=bool)
    er = np.arange(e.shape[0])
    for _ in range(8):
        K = 3
        u = rng.normal(size=(12, K))
        p = np.broadcast_to(np.eye(K) * rng.uniform(0.5, 1.5), (e.shape[0], K, K))
        g = alpha_expansion(u, p, e)
        for alpha in range(K):
            cand = np.where(Z, alpha, g.labels[None, :])
            s = u[np.arange(12), cand].sum(axis=1) + p[er, cand[:, e[:, 0]],
                                                        cand[:, e[:, 1]]].sum(axis=1)
            assert at_most(float(s.max()), g.score)


def test_min_cut_equals_the_lp_on_a_large_submodular_grid() -> None:
    # 15x15 grid: too large to enumerate; the LP is exact on binary submodular energies
    rng = np.random.default_rng(12)
    e = grid_edges(15, 15)
    u = rng.normal(size=(225, 2))
    p = rng.normal(size=(e.shape[0], 2, 2))
    d = p[:, 0, 0] + p[:, 1, 1] - p[:, 0, 1] - p[:, 1, 0]
    p[:, 0, 0] += np.maximum(-d, 0) + rng.uniform(0, 1, size=d.shape)
    g = min_cut_binary(u, p, e)
    lp = local_lp(u, p, e)
    assert not lp.fractional and close(g.score, lp.bound) and close(lp.score, lp.bound)
    assert close(g.score, labelling_score(u, p, e, g.labels))

"""Graph inference is scale-equivariant: potentials scaled by a power of two give the
same labelling, and scores and bounds scaled exactly (bit for bit).

Each method's tolerances used to have an absolute floor (``1 + |.|``, HiGHS's absolute
1e-7, a max-flow's ``1e-12 * (1 + capacity)``): at potentials of order 2^-30 every
gap passed it, so the LP returned a wrong labelling with a bound below the optimum
and ``exact=True``, TRW-S stopped after one iteration and certified a labelling 0.67
short of the optimum, and below 2^-36 graph cuts dropped arcs and certified wrong
cuts.  The references are brute-force maxima over every labelling (at most 2^12).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frankwolfe.applications.structured_svm.models.graph import (
    alpha_expansion,
    infer,
    labelling_score,
    local_lp,
    max_product,
    min_cut_binary,
    trws,
)

GRID = np.array([[0, 1], [1, 2], [3, 4], [4, 5], [6, 7], [7, 8],
                 [0, 3], [3, 6], [1, 4], [4, 7], [2, 5], [5, 8]])


def _brute(u: np.ndarray, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every labelling's score: ``(labellings, scores)``."""
    n, K = u.shape
    assert K ** n <= 2 ** 12
    Y = np.array(list(itertools.product(range(K), repeat=n)))
    s = u[np.arange(n), Y].sum(axis=1)
    for k, (a, b) in enumerate(e):
        s = s + p[k][Y[:, a], Y[:, b]]
    return Y, s


def _optimum(u: np.ndarray, p: np.ndarray, e: np.ndarray) -> float:
    return float(_brute(u, p, e)[1].max())


def _grid_energy(seed: int, K: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(9, K)), rng.normal(size=(len(GRID), K, K))


# -- D1: the local LP -----------------------------------------------------------------

@pytest.mark.parametrize("s", [2.0 ** -20, 2.0 ** -30, 2.0 ** 30])
def test_lp_two_nodes_reproducer(s):
    u = np.array([[0.0, 1.0], [0.0, 2.0]])
    p = np.zeros((1, 2, 2))
    e = np.array([[0, 1]])
    r = infer(u * s, p * s, e, method="lp")
    assert r.labels.tolist() == [1, 1]  # was [0, 0] at 2^-30, with bound 0
    assert r.score == 3.0 * s and r.bound == 3.0 * s
    assert r.exact


@pytest.mark.parametrize("seed", range(10))
def test_lp_random_grids_equivariant(seed):
    u, p = _grid_energy(seed)  # binary, non-submodular: "auto" picks the LP
    ref = infer(u, p, GRID)
    assert ref.method == "lp"
    best = _optimum(u, p, GRID)
    for s in (2.0 ** -20, 2.0 ** -30, 2.0 ** 30):
        r = infer(u * s, p * s, GRID)
        assert r.method == "lp"
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert r.score == ref.score * s
        assert r.bound == ref.bound * s
        assert r.exact == ref.exact and r.fractional == ref.fractional
        np.testing.assert_array_equal(r.node_marginals, ref.node_marginals)
        assert r.bound >= best * s * (1 - 1e-9)
        if r.exact:
            assert r.score == pytest.approx(best * s, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_lp_three_states_never_certifies_a_wrong_labelling(seed):
    rng = np.random.default_rng(100 + seed)
    e = np.array([[0, 1], [1, 2], [3, 4], [4, 5], [0, 3], [1, 4], [2, 5]])  # 2x3 grid
    u, p = rng.normal(size=(6, 3)), rng.normal(size=(len(e), 3, 3))
    best = _optimum(u, p, e)
    ref = local_lp(u, p, e, solver="highs")
    for s in (1.0, 2.0 ** -30):
        r = infer(u * s, p * s, e, method="lp")
        assert r.bound == ref.bound * s
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert r.bound >= best * s * (1 - 1e-9)
        assert not r.exact or r.score == pytest.approx(best * s, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_pruned_lp_equivariant(seed):
    u, p = _grid_energy(seed, K=2)
    best = _optimum(u, p, GRID)
    ref = local_lp(u, p, GRID, solver="pruned")
    for s in (2.0 ** -20, 2.0 ** -30):
        r = local_lp(u * s, p * s, GRID, solver="pruned")
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert (r.score, r.bound, r.value) == (ref.score * s, ref.bound * s, ref.value * s)
        assert r.bound >= best * s * (1 - 1e-9)


@pytest.mark.parametrize("seed", [22, 46])
def test_pruned_lp_integral_point_short_of_its_bound_is_not_exact(seed):
    # pruning gives up (too many free nodes) and returns TRW-S's integral labelling
    # with TRW-S's bound above it: not a certificate, at any scale (an absolute
    # allowance of 1e-7 passed the gap of 0.3-1.4 times 2^-30)
    u, p = _grid_energy(seed, K=2)
    best = _optimum(u, p, GRID)
    ref = infer(u, p, GRID, method="lp", solver="pruned")
    assert not ref.fractional and not ref.exact and ref.bound - ref.score > 0.3
    assert ref.bound >= best
    for s in (2.0 ** -30, 2.0 ** 30):
        r = infer(u * s, p * s, GRID, method="lp", solver="pruned")
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert (r.score, r.bound) == (ref.score * s, ref.bound * s)
        assert not r.fractional and not r.exact and r.bound >= best * s


# -- D2: TRW-S and max-product --------------------------------------------------------

def test_trws_reproducer():
    rng = np.random.default_rng(23)
    u, p = rng.normal(size=(9, 2)), rng.normal(size=(12, 2, 2))
    Y, S = _brute(u, p, GRID)
    ref = trws(u, p, GRID)
    assert ref.certified and ref.score == pytest.approx(S.max(), rel=1e-12)
    for s in (2.0 ** -20, 2.0 ** -30):
        r = trws(u * s, p * s, GRID)
        # was: one iteration, score 8.876 (optimum 9.5418), certified at 2^-30
        np.testing.assert_array_equal(r.labels, Y[np.argmax(S)])
        assert (r.score, r.bound) == (ref.score * s, ref.bound * s)
        assert (r.nit, r.converged, r.certified) == (ref.nit, ref.converged, True)


@pytest.mark.parametrize("method", [trws, max_product])
@pytest.mark.parametrize("seed", range(12))
def test_message_passing_equivariant_and_honest(method, seed):
    u, p = _grid_energy(seed, K=2)
    best = _optimum(u, p, GRID)
    ref = method(u, p, GRID)
    for s in (2.0 ** -30, 2.0 ** 30):
        r = method(u * s, p * s, GRID)
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert (r.score, r.bound) == (ref.score * s, ref.bound * s)
        assert (r.nit, r.converged, r.certified) == (ref.nit, ref.converged, ref.certified)
        assert r.bound >= best * s * (1 - 1e-9)
        if r.certified:
            assert r.score == pytest.approx(best * s, rel=1e-12)


def test_trws_certifies_a_score_near_zero_by_cancellation():
    # a loop of attractive edges shifted so that the optimum scores 0 while the
    # potentials are of order 1: the bound then differs from the score by rounding
    # (3e-15), which an allowance relative to |score| alone would refuse
    rng = np.random.default_rng(5)
    e = np.array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 0]])
    u, p = rng.normal(size=(4, 2)), rng.normal(size=(5, 2, 2))
    p[:, 0, 0] += 3.0
    p[:, 1, 1] += 3.0
    u[0] -= _optimum(u, p, e)
    best = _optimum(u, p, e)
    ref = trws(u, p, e)
    assert ref.score == best == 0.0 and ref.bound > 0.0
    for s in (1.0, 2.0 ** -30):
        r = trws(u * s, p * s, e)
        assert (r.score, r.bound) == (ref.score * s, ref.bound * s)
        assert r.certified


# -- D4: graph cuts -------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(40))
def test_min_cut_equivariant_and_optimal(seed):
    rng = np.random.default_rng(seed)
    n = 7
    e = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5])
    u = rng.normal(size=(n, 2))
    p = np.zeros((len(e), 2, 2))
    p[:, 0, 0] = p[:, 1, 1] = rng.uniform(0, 1, len(e))
    Y, S = _brute(u, p, e)
    ref = min_cut_binary(u, p, e)
    assert ref.score == pytest.approx(S.max(), rel=1e-12)
    for s in (2.0 ** -36, 2.0 ** -40, 2.0 ** 40):
        r = infer(u * s, p * s, e, method="graph-cut")
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert r.score == ref.score * s and r.bound == ref.score * s and r.exact


def test_alpha_expansion_moves_at_small_scale():
    # three labels, Potts: the unary argmax is not the optimum, a move is needed
    rng = np.random.default_rng(5)
    e = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 5], [1, 4]])
    u = rng.normal(size=(6, 3))
    p = np.zeros((len(e), 3, 3))
    p[:, np.arange(3), np.arange(3)] = 1.5
    best = _optimum(u, p, e)
    ref = alpha_expansion(u, p, e)
    start = labelling_score(u, p, e, np.argmax(u, axis=1))
    assert ref.score > start + 1.0  # moves were accepted
    for s in (2.0 ** -40, 2.0 ** -50, 2.0 ** 40):
        r = alpha_expansion(u * s, p * s, e)
        np.testing.assert_array_equal(r.labels, ref.labels)
        assert (r.score, r.n_sweeps) == (ref.score * s, ref.n_sweeps)
        assert not r.exact and r.score <= best * s * (1 + 1e-12)

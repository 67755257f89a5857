"""Randomized away-step FW on the K-sparse polytope from its default start: the start is
held under a key of its own (``("x0", ...)``), which has two entries like a vertex key
when K = 2; the candidate sampler took it for one of its vertices and failed."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_rafw_on_the_k_sparse_polytope_reaches_the_optimum(k, seed):
    rng = np.random.default_rng(seed)
    A, b, r = rng.standard_normal((12, 8)), rng.standard_normal(12), 0.7
    res = fw.randomized_away_step_frank_wolfe(fw.LeastSquares(A, b),
                                              fw.KSparsePolytope(k, r, dim=8),
                                              random_state=seed, tol=1e-9, max_iter=20000)
    assert res.status == "converged"
    x = res.x
    assert np.abs(x).sum() <= k * r * (1 + 1e-12) and np.abs(x).max() <= r * (1 + 1e-12)
    # the gap at x in closed form: min over the polytope of <g, s> is -r times the sum
    # of the k largest |g_i|
    g = A.T @ (A @ x - b)
    gap = float(g @ x) + r * np.sort(np.abs(g))[-k:].sum()
    assert gap == pytest.approx(res.gap, rel=1e-6, abs=1e-12)
    assert gap <= 1e-8
    v = cp.Variable(8)
    f_star = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ v - b)),
                        [cp.norm1(v) <= k * r, cp.norm_inf(v) <= r]).solve()
    # cvxpy's interior point answers to its own tolerance (1e-5 here), both ways
    assert res.fun == pytest.approx(f_star, rel=1e-4)

"""Randomized away-step Frank-Wolfe and the subset-oracle capability.

References are independent of the solver: optima built from KKT conditions
(closed form), cvxpy, and brute-force minimization over the sampled ids.
"""

import cvxpy as cp
import numpy as np
import pytest

from frankwolfe import (
    L1Ball,
    L2Ball,
    LeastSquares,
    ProbabilitySimplex,
    QuadraticObjective,
    UnitSimplex,
    away_step_frank_wolfe,
    minimize,
    randomized_away_step_frank_wolfe,
)
from frankwolfe.lmo.subset import supports_subsets


def lasso_kkt(n=1000, m=3000, s=20, seed=0):
    """Least squares over an l1 ball with a known ``s``-sparse optimum on the
    boundary (strict complementarity), built from the KKT conditions."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n)) / np.sqrt(m)
    support = rng.choice(n, s, replace=False)
    x_star = np.zeros(n)
    x_star[support] = rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s)
    g_star = rng.uniform(-0.5, 0.5, n)  # |g_i| < 1 off the support
    g_star[support] = -np.sign(x_star[support])
    r = A @ np.linalg.solve(A.T @ A, g_star)  # A^T r = g*, r = A x* - b
    b = A @ x_star - r
    return LeastSquares(A, b), L1Ball(np.abs(x_star).sum(), dim=n), x_star, support


def simplex_kkt(n=200, face=5, seed=1):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = (U * rng.uniform(1.0, 4.0, n)) @ U.T
    Q = (Q + Q.T) / 2
    support = rng.choice(n, face, replace=False)
    x_star = np.zeros(n)
    x_star[support] = rng.dirichlet(np.ones(face))
    g_star = 0.3 + rng.uniform(0.1, 1.0, n)
    g_star[support] = 0.3
    return QuadraticObjective(Q, g_star - Q @ x_star), ProbabilitySimplex(dim=n), x_star, support


def afw_inner_products(res, n):
    """<g, a> evaluations of AFW: a full oracle (n) and the away query (|S|) per iteration,
    plus the final certification's oracle call."""
    sizes = res.history["active_set_size"]
    return int(res.nit * n + np.sum(sizes[: res.nit]) + n)


def test_rafw_reaches_1e8_with_fewer_inner_products_than_afw():
    f, lmo, x_star, support = lasso_kkt()
    n = x_star.size
    afw = away_step_frank_wolfe(f, lmo, tol=1e-8, max_iter=5000)
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=0.1, tol=1e-8, max_iter=5000,
                                           seed=3)
    assert afw.success and res.success
    assert res.gap <= 1e-8
    # independent check of the certificate: FW gap recomputed from the returned x
    g = f.gradient(res.x)
    assert g @ res.x + lmo.radius * np.abs(g).max() <= 1e-8
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)
    assert {a.key[1] for a in res.active_set.atoms} == set(support.tolist())
    ours, theirs = res.extra["n_atom_products"], afw_inner_products(afw, n)
    assert ours < 0.5 * theirs
    # the count adds up: sampled + active atoms per iteration, n per full call
    assert res.extra["n_atom_products"] >= res.extra["n_full_oracle_calls"] * n
    assert res.extra["n_subset_oracle_calls"] + res.extra["n_full_oracle_calls"] >= res.nit


def test_certified_gap_only_every_gap_every_iterations():
    f, lmo, x_star, _ = simplex_kkt()
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=20, gap_every=7, tol=1e-10,
                                           max_iter=3000, seed=0)
    assert res.success
    it = res.history["iteration"].astype(int)
    gaps = res.history["gap"]
    certified = ~np.isnan(gaps)
    assert np.all(it[certified] % 7 == 0)
    assert np.all(certified[it % 7 == 0])
    np.testing.assert_allclose(res.x, x_star, atol=1e-7)
    # linear convergence over the certified gaps
    k, lg = it[certified], np.log10(np.maximum(gaps[certified], 1e-300))
    half = k.size // 2
    assert np.polyfit(k[half:], lg[half:], 1)[0] < -1e-2


def test_stop_between_certificates_is_certified():
    f, lmo, x_star, _ = simplex_kkt()
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=0.05, gap_every=50, tol=0.0,
                                           max_iter=33, seed=0)
    assert res.nit == 33 and np.isfinite(res.gap)
    g = f.gradient(res.x)
    np.testing.assert_allclose(res.gap, g @ res.x - g.min(), rtol=1e-9, atol=1e-12)
    assert res.extra["n_full_oracle_calls"] == 1 + 1  # iteration 0 and the final certificate


@pytest.mark.parametrize("lmo_cls", [ProbabilitySimplex, UnitSimplex])
def test_matches_cvxpy_on_simplices(lmo_cls):
    rng = np.random.default_rng(5)
    n = 60
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + 0.1 * np.eye(n)
    c = rng.standard_normal(n)
    f = QuadraticObjective(Q, c)
    x = cp.Variable(n, nonneg=True)
    cons = [cp.sum(x) == 1] if lmo_cls is ProbabilitySimplex else [cp.sum(x) <= 1]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL)
    res = randomized_away_step_frank_wolfe(f, lmo_cls(dim=n), subsample=0.2, tol=1e-10,
                                           max_iter=20000, seed=1)
    assert res.success
    assert abs(res.fun - prob.value) <= 1e-7 * max(1.0, abs(prob.value))


def test_minimize_method_and_generator_seed():
    f, lmo, x_star, _ = simplex_kkt(n=50, seed=4)
    res = minimize(f, lmo, method="rafw", subsample=5, tol=1e-9, max_iter=5000,
                   seed=np.random.default_rng(2))
    assert res.success and res.method == "randomized_away_step_frank_wolfe"
    np.testing.assert_allclose(res.x, x_star, atol=1e-7)


@pytest.mark.parametrize("seed", range(5))
def test_extreme_point_among_is_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    n = 30
    g = rng.standard_normal(n)
    ids = rng.choice(n, 7, replace=False)
    for lmo in (ProbabilitySimplex(2.0), UnitSimplex(1.5), L1Ball(3.0)):
        assert supports_subsets(lmo)
        # brute force: every vertex of the sampled candidates
        verts = []
        for i in ids:
            for s in ((1.0, -1.0) if isinstance(lmo, L1Ball) else (1.0,)):
                e = np.zeros(n)
                e[i] = s * lmo.radius
                verts.append(e)
        if isinstance(lmo, UnitSimplex):
            verts.append(np.zeros(n))
        best = verts[int(np.argmin([g @ v for v in verts]))]  # no ties for random g
        a = lmo.extreme_point_among(g, ids)
        np.testing.assert_array_equal(a.to_dense(), best)
        # same identity as the full oracle's answer for that vertex
        assert a.key == lmo(-best if best.any() else np.ones(n)).key


def test_bad_input():
    f, lmo, _, _ = simplex_kkt(n=20)
    with pytest.raises(ValueError, match="subsample"):
        randomized_away_step_frank_wolfe(f, lmo, subsample=0)
    with pytest.raises(ValueError, match="subsample"):
        randomized_away_step_frank_wolfe(f, lmo, subsample=1.5)
    with pytest.raises(ValueError, match="gap_every"):
        randomized_away_step_frank_wolfe(f, lmo, gap_every=0)
    with pytest.raises(TypeError, match="subset"):
        randomized_away_step_frank_wolfe(f, L2Ball(dim=20))
    with pytest.raises(ValueError, match="ids"):
        lmo.extreme_point_among(np.ones(20), [])
    with pytest.raises(ValueError, match=r"\[0, 20\)"):
        lmo.extreme_point_among(np.ones(20), [3, 20])

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
from frankwolfe.lmo import Box, Hypercube, KSparsePolytope, LinfBall
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
                                           random_state=3)
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
                                           max_iter=3000, random_state=0)
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
                                           max_iter=33, random_state=0)
    assert res.nit == 33 and np.isfinite(res.gap)
    g = f.gradient(res.x)
    np.testing.assert_allclose(res.gap, g @ res.x - g.min(), rtol=1e-9, atol=1e-12)
    # the starting vertex, iteration 0 and the final certificate
    assert res.extra["n_full_oracle_calls"] == 1 + 1 + 1


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
                                           max_iter=20000, random_state=1)
    assert res.success
    assert abs(res.fun - prob.value) <= 1e-7 * max(1.0, abs(prob.value))


def test_minimize_method_and_generator_seed():
    f, lmo, x_star, _ = simplex_kkt(n=50, seed=4)
    res = minimize(f, lmo, method="rafw", subsample=5, tol=1e-9, max_iter=5000,
                   random_state=np.random.default_rng(2))
    assert res.success and res.method == "rafw"
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


# -- sampled vertices: boxes and the k-sparse polytope -----------------------------------


def box_kkt(lmo_kind, n=30, seed=0):
    """Strongly convex quadratic over a box with a known optimum on a face (KKT with
    strict complementarity): a third of the coordinates at each bound."""
    rng = np.random.default_rng(seed)
    if lmo_kind == "box":
        lo, up = rng.uniform(-2, -0.5, n), rng.uniform(0.5, 2, n)
        lmo = Box(lo, up)
    elif lmo_kind == "linf":
        lo, up = np.full(n, -1.5), np.full(n, 1.5)
        lmo = LinfBall(1.5, dim=n)
    else:
        lo, up = np.zeros(n), np.ones(n)
        lmo = Hypercube(dim=n)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = (U * rng.uniform(1.0, 4.0, n)) @ U.T
    Q = (Q + Q.T) / 2
    state = rng.permutation(np.arange(n) % 3)  # 0: lower, 1: upper, 2: interior
    mid = (lo + up) / 2
    x_star = np.where(state == 0, lo, np.where(state == 1, up,
                                                mid + 0.4 * (up - lo) * rng.uniform(-1, 1, n)))
    g_star = np.where(state == 0, rng.uniform(0.2, 1.0, n),
                      np.where(state == 1, -rng.uniform(0.2, 1.0, n), 0.0))
    return QuadraticObjective(Q, g_star - Q @ x_star), lmo, x_star, Q, lo, up


def check_active_set(res, tol=1e-10):
    S = res.active_set
    w = S.weights
    assert np.all(w > 0) and abs(w.sum() - 1.0) <= 1e-12
    x = sum(wi * a.to_dense() for wi, a in zip(w, S.atoms))
    np.testing.assert_allclose(x, res.x, atol=tol * max(1.0, np.abs(res.x).max()))


@pytest.mark.parametrize("kind", ["box", "linf", "hypercube"])
def test_box_vertices_reach_1e8_and_match_cvxpy(kind):
    f, lmo, x_star, Q, lo, up = box_kkt(kind)
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=20, gap_every=10, tol=1e-8,
                                           max_iter=5000, random_state=0)
    assert res.success and res.gap <= 1e-8
    # the certificate recomputed from the returned x: the box LMO in closed form
    g = f.gradient(res.x)
    assert g @ res.x - np.sum(np.minimum(g * lo, g * up)) <= 1e-8
    x = cp.Variable(x_star.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + f.c @ x), [x >= lo, x <= up])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert abs(res.fun - prob.value) <= 1e-8 * max(1.0, abs(prob.value))
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)
    check_active_set(res)
    # only every gap_every-th row is certified; the counts add up
    it = res.history["iteration"].astype(int)
    certified = ~np.isnan(res.history["gap"])
    assert np.all(it[certified] % 10 == 0)
    n = x_star.size
    ex = res.extra
    assert ex["n_subset_oracle_calls"] + ex["n_full_oracle_calls"] >= res.nit
    # a dense vertex costs n coordinates; a full call on a box is one O(n) pass
    assert ex["n_coordinate_ops"] == n * ex["n_atom_products"]


def ksparse_problem(seed=0, m=60, n=40, k=5):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    b = A @ (0.6 * rng.standard_normal(n))
    f, lmo = LeastSquares(A, b), KSparsePolytope(k, 1.0, dim=n)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)),
                      [cp.abs(x) <= 1.0, cp.norm1(x) <= k])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return f, lmo, x.value, prob.value


def test_ksparse_polytope_reaches_1e8_and_matches_cvxpy():
    f, lmo, x_ref, f_ref = ksparse_problem()
    # the optimum lies inside a face (l1 constraint active, many fractional entries)
    assert np.count_nonzero(np.abs(x_ref) > 1e-6) > 10 and abs(np.abs(x_ref).sum() - 5) < 1e-6
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=50, gap_every=10, tol=1e-8,
                                           max_iter=20000, random_state=0)
    assert res.success and res.gap <= 1e-8
    g = f.gradient(res.x)
    k_largest = np.sort(np.abs(g))[-5:].sum()  # the k-sparse LMO in closed form
    assert g @ res.x + k_largest <= 1e-8
    assert abs(res.fun - f_ref) <= 1e-8 * max(1.0, abs(f_ref))
    np.testing.assert_allclose(res.x, x_ref, atol=1e-6)
    check_active_set(res)
    # k = 5 coordinates per sampled or active vertex; a full call reads n = 40 coordinates
    # and is worth ceil(40 / 5) = 8 vertex products
    ex = res.extra
    full = ex["n_full_oracle_calls"]
    assert ex["n_coordinate_ops"] == 5 * (ex["n_atom_products"] - 8 * full) + 40 * full


@pytest.mark.parametrize("seed", range(4))
def test_sampled_candidates_brute_force_and_keys(seed):
    rng = np.random.default_rng(seed)
    n = 10
    g = rng.standard_normal(n)
    for lmo in (Box(rng.uniform(-2, 0, n), rng.uniform(0, 2, n)), LinfBall(2.0, dim=n),
                Hypercube(dim=n), KSparsePolytope(3, 1.5, dim=n)):
        assert supports_subsets(lmo)
        cands = lmo.sample_candidates((n,), 7, np.random.default_rng(seed), [])
        assert lmo.count_candidates(cands) == 7
        # brute force over the explicit vertices of the candidates
        if isinstance(lmo, KSparsePolytope):
            verts = []
            for idx, sg in zip(*cands):
                v = np.zeros(n)
                v[idx] = 1.5 * sg
                verts.append(v)
        else:
            lo = np.broadcast_to(lmo.lower, (n,))
            up = np.broadcast_to(lmo.upper, (n,))
            verts = [np.where(mask, up, lo) for mask in cands]
        best = verts[int(np.argmin([g @ v for v in verts]))]
        a = lmo.extreme_point_among(g, cands)
        np.testing.assert_allclose(a.to_dense(), best, atol=0)
        # the same identity as the full oracle's answer for that vertex
        direction = -(best - (lo + up) / 2) if not isinstance(lmo, KSparsePolytope) else \
            -best - 0.01 * np.sign(best) + 0.0
        assert a.key == lmo(direction).key
        # sampling excludes active vertices
        again = lmo.sample_candidates((n,), 50, np.random.default_rng(seed), [a])
        keys = set()
        for j in range(lmo.count_candidates(again)):
            sub = (again[0][j:j + 1], again[1][j:j + 1]) if isinstance(again, tuple) \
                else again[j:j + 1]
            keys.add(lmo.extreme_point_among(g, sub).key)
        assert a.key not in keys and len(keys) == lmo.count_candidates(again)


@pytest.mark.parametrize("lmo", [KSparsePolytope(2, dim=5), Hypercube(dim=5)])
def test_sampling_is_uniform(lmo):
    """Each of the vertices (40 of the 2-sparse polytope in R^5, 32 of the cube) is drawn
    about equally often: seeded, so the bound is a fixed check, not a flaky one."""
    rng = np.random.default_rng(0)
    g = np.zeros(5)
    n_vert = 40 if isinstance(lmo, KSparsePolytope) else 32
    counts: dict = {}
    draws = 100 * n_vert
    for _ in range(draws):
        c = lmo.sample_candidates((5,), 1, rng, [])
        key = lmo.extreme_point_among(g, c).key
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == n_vert
    assert min(counts.values()) >= 60 and max(counts.values()) <= 145


@pytest.mark.parametrize("n", [60, 30, 20])
def test_box_fraction_subsample_is_refused(n):
    """A tenth of 2^20 box vertices is 1e5 full oracle calls' work an iteration (2^30: a
    27 GiB draw): refused, at once."""
    f, lmo, *_ = box_kkt("box", n=n)
    with pytest.raises(ValueError, match="than 64 full oracle calls.*give a count"):
        randomized_away_step_frank_wolfe(f, lmo, subsample=0.1)


def test_box_fraction_subsample_of_a_few_vertices_runs():
    f, lmo, x_star, *_ = box_kkt("box", n=6)  # 64 vertices: a tenth is 7 of them
    res = randomized_away_step_frank_wolfe(f, lmo, subsample=0.1, max_iter=20000,
                                           tol=1e-9, random_state=0)
    assert res.success, res.message
    np.testing.assert_allclose(res.x, x_star, atol=1e-3)

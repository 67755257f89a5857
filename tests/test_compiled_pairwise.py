"""The compiled pairwise method with corrective rounds, checked against scikit-learn and cvxpy."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Lasso

import frankwolfe as fw
import frankwolfe.algorithms.compiled_pairwise as compiled_pairwise_module
from frankwolfe import (
    L1Ball,
    LeastSquares,
    ProbabilitySimplex,
    Status,
    compiled_pairwise_frank_wolfe,
)
from frankwolfe.direction import Direction


def rel_err(x, ref):
    return float(np.abs(x - ref).max() / np.abs(ref).max())


def lasso_problem(sparse, seed=0, m=120, n=600, k=10):
    rng = np.random.default_rng(seed)
    if sparse:
        A = sp.random(m, n - 3, density=0.05, format="csc", random_state=seed,
                      data_rvs=rng.standard_normal)
        # a few frequent columns, as in text data (heavy Gram columns)
        A = sp.csc_array(sp.hstack([sp.csc_array(rng.standard_normal((m, 3))), A]))
    else:
        A = rng.standard_normal((m, n))
    x_true = np.zeros(n)
    x_true[rng.choice(n, k, replace=False)] = rng.standard_normal(k)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    return A, b


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("corrective", [True, False])
def test_agrees_with_sklearn_lasso(sparse, corrective):
    A, b = lasso_problem(sparse)
    m = A.shape[0]
    alpha = 0.1 * float(np.abs(A.T @ b).max()) / m
    sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(A, b)
    radius = float(np.abs(sk.coef_).sum())
    assert 3 <= np.count_nonzero(sk.coef_) < m
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius, dim=A.shape[1]),
                                        tol=1e-11, max_iter=100000, corrective=corrective)
    assert res.status == Status.CONVERGED and res.gap <= 1e-11
    assert rel_err(res.x, sk.coef_) <= 1e-6
    f_sk = 0.5 * float(np.sum((A @ sk.coef_ - b) ** 2))
    assert -1e-9 * f_sk <= res.fun - f_sk <= res.gap + 1e-9 * f_sk
    # the result's value, gap and active set describe the returned point
    assert res.fun == pytest.approx(0.5 * float(np.sum((A @ res.x - b) ** 2)), rel=1e-10)
    np.testing.assert_allclose(res.active_set.x, res.x, rtol=0, atol=1e-12 * radius)
    assert np.abs(res.x).sum() <= radius * (1 + 1e-12)
    assert res.nit == res.extra["n_pairwise_steps"] + res.extra["n_corrective_steps"]
    if not corrective:
        assert res.extra["n_corrective_steps"] == 0


def cvxpy_value(A, b, constraint):
    x = cp.Variable(A.shape[1])
    Ad = A.toarray() if sp.issparse(A) else A
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Ad @ x - b)), constraint(x))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, x.value


@pytest.mark.parametrize("sparse", [True, False])
def test_simplex_and_interior_optimum_match_cvxpy(sparse):
    A, b = lasso_problem(sparse, seed=3, m=60, n=40)
    # the scaled simplex
    f_star, _ = cvxpy_value(A, b, lambda x: [x >= 0, cp.sum(x) == 2.0])
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), ProbabilitySimplex(2.0, dim=40),
                                        tol=1e-10, max_iter=100000)
    assert res.status == Status.CONVERGED
    assert np.all(res.x >= 0) and abs(res.x.sum() - 2.0) <= 1e-12
    scale = 1e-7 * max(1.0, abs(f_star))
    assert -scale <= res.fun - f_star <= res.gap + scale
    # an l1 ball larger than the least-squares solution: the optimum is interior
    x_ls = np.linalg.lstsq(A.toarray() if sparse else A, b, rcond=None)[0]
    radius = 2.0 * float(np.abs(x_ls).sum())
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius, dim=40),
                                        tol=1e-10, max_iter=100000)
    assert res.status == Status.CONVERGED
    f_ls = 0.5 * float(np.sum((A @ x_ls - b) ** 2))
    assert -scale <= res.fun - f_ls <= res.gap + scale
    if not sparse:  # well conditioned: the point too
        assert rel_err(res.x, x_ls) <= 1e-6


@pytest.mark.parametrize("radius", [1e4, 1e6])
def test_a_radius_far_beyond_an_interior_optimum_converges(radius, monkeypatch):
    """Corrective rounds on a face holding +-r e_j at weights near 1/2 (whose spacing
    bounds how finely x moves) "decreased" f by rounding alone for ever: 20000 rounds
    at a gap of 2.5e-4 (r = 1e6), never falling back to pairwise steps.  Checked against
    the least-squares solution (the interior optimum).

    The chunks of compiled steps are sized by the time a step takes, and the fallback
    compares gaps within a chunk: on a loaded machine (small chunks) the run took 1406
    iterations where it takes 711.  Chunks sized by their doubling alone make the run
    the same everywhere."""
    monkeypatch.setattr(compiled_pairwise_module, "_CHUNK_SECONDS", 1.0)
    rng = np.random.default_rng(13)
    A, b = rng.standard_normal((20, 8)), 2.0 * rng.standard_normal(20)
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=1e-9,
                                        max_iter=20000)
    assert res.status == Status.CONVERGED and res.nit < 1000
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    f_ls = 0.5 * float(np.sum((A @ x_ls - b) ** 2))
    scale = 1e-9 * max(1.0, f_ls)
    assert -scale <= res.fun - f_ls <= res.gap + scale


def test_warm_start_budget_callback_and_bad_input():
    A, b = lasso_problem(True, seed=5)
    f = LeastSquares(A, b)
    ball = L1Ball(2.0, dim=A.shape[1])
    first = compiled_pairwise_frank_wolfe(f, ball, tol=1e-10, max_iter=100000)
    warm = compiled_pairwise_frank_wolfe(f, ball, first.active_set, tol=1e-10)
    assert warm.nit == 0 and warm.status == Status.CONVERGED  # already optimal
    short = compiled_pairwise_frank_wolfe(f, ball, tol=0.0, max_iter=3, corrective=False)
    assert short.status == Status.MAX_ITER and short.nit == 3
    seen = []
    stop = compiled_pairwise_frank_wolfe(f, ball, tol=0.0, max_iter=10**6,
                                         callback=lambda s: seen.append(s.k) or len(seen) < 2)
    assert stop.status == Status.CALLBACK_STOP and len(seen) == 2
    with pytest.raises(TypeError, match="L1Ball or ProbabilitySimplex"):
        compiled_pairwise_frank_wolfe(f, fw.L2Ball(1.0, dim=A.shape[1]))
    with pytest.raises(ValueError, match="x0"):  # outside the ball (an interior one is decomposed)
        compiled_pairwise_frank_wolfe(f, ball, np.full(A.shape[1], 1.0))
    with pytest.raises(ValueError, match="refresh_every"):
        compiled_pairwise_frank_wolfe(f, ball, refresh_every=0)


@pytest.mark.parametrize("compiled", [False, True])
def test_pairwise_steps_never_ascend_near_the_optimum(compiled):
    """Regression: the slope of the line search must have the sign of the gap.  A slope
    from a support-only <g, x> summed in another order than the gap's once turned a
    descent direction into an ascent one near the optimum (the step then went uphill).
    Here the run starts at the optimum, where gap and slope are at the rounding level."""
    A, b = lasso_problem(True, seed=7)
    alpha = 0.1 * float(np.abs(A.T @ b).max()) / A.shape[0]
    sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-15, max_iter=10**6).fit(A, b)
    radius = float(np.abs(sk.coef_).sum())
    f = LeastSquares(A, b)
    ball = L1Ball(radius, dim=A.shape[1])
    best = compiled_pairwise_frank_wolfe(f, ball, tol=1e-13, max_iter=100000)
    funs = []
    keep = lambda s: funs.append(s.fun)  # noqa: E731
    if compiled:
        compiled_pairwise_frank_wolfe(f, ball, best.active_set, corrective=False, tol=0.0,
                                      max_iter=200, callback=keep)
    else:
        fw.pairwise_frank_wolfe(f, ball, best.active_set, tol=0.0, max_iter=200, callback=keep)
    funs = np.asarray(funs)
    assert funs.size >= 2
    # each step goes downhill (up to the rounding of f)
    assert np.all(np.diff(funs) <= 1e-13 * funs[0])
    # the Frank-Wolfe direction: its slope is exactly minus the gap, from the same <g, x>
    rng = np.random.default_rng(0)
    g = rng.standard_normal(A.shape[1]) * 1e8
    v = ball(g)
    g_dot_x = float(np.vdot(g, best.x))
    d = Direction.frank_wolfe(v)
    assert d.dot(g, g_dot_x) == -(g_dot_x - v.dot(g))


def test_faces_larger_than_the_tracked_products_fall_back_to_pairwise(monkeypatch):
    import frankwolfe.algorithms.compiled_pairwise as cpw

    monkeypatch.setattr(cpw, "FACE_LIMIT", 6)  # the optimum has more active vertices
    A, b = lasso_problem(True, seed=8, m=80, n=200, k=12)
    alpha = 0.05 * float(np.abs(A.T @ b).max()) / A.shape[0]
    sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(A, b)
    assert np.count_nonzero(sk.coef_) > 6
    radius = float(np.abs(sk.coef_).sum())
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius, dim=200),
                                        tol=1e-10, max_iter=10**6)
    assert res.status == Status.CONVERGED
    assert res.extra["n_pairwise_steps"] > 0
    assert rel_err(res.x, sk.coef_) <= 1e-5


def test_cholesky_deletions_give_the_factor_of_the_smaller_matrix():
    """The face minimizer factors a face once and then deletes vertices from the factor
    (Givens rotations); each deletion must give numpy's factor of the matrix without
    that row and column (unique for a positive definite matrix)."""
    from numba import njit

    from frankwolfe.algorithms.compiled_pairwise_kernels import _cholesky, _cholesky_delete

    @njit
    def factor_then_delete(Q, ridge, order):
        k = Q.shape[0]
        L = np.zeros((k, k))
        sub = np.arange(k)
        if not _cholesky(Q, sub, k, ridge, L):
            return L, sub, False
        for p in order:
            if not _cholesky_delete(L, sub, k, p):
                return L, sub, False
            k -= 1
        return L, sub, True

    rng = np.random.default_rng(3)
    B = rng.standard_normal((9, 12))
    Q = B @ B.T
    ridge = 1e-3
    for order in ([0], [8], [3, 3, 0, 4], [4, 4, 4, 4, 4, 0, 2, 0]):
        L, sub, ok = factor_then_delete(Q, ridge, np.array(order))
        assert ok
        keep = list(range(9))
        for p in order:
            del keep[p]
        k = len(keep)
        assert list(sub[:k]) == keep
        expected = np.linalg.cholesky(Q[np.ix_(keep, keep)] + ridge * np.eye(k))
        np.testing.assert_allclose(np.tril(L[:k, :k]), expected, rtol=0, atol=1e-12)
    # not positive definite: the factorization says so
    _, _, ok = factor_then_delete(-np.eye(3), 0.0, np.array([0]))
    assert not ok

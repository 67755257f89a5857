"""Fully corrective Frank-Wolfe and its corrective solvers, checked against cvxpy."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frankwolfe import (
    FunctionObjective,
    L1Ball,
    LeastSquares,
    Objective,
    ProbabilitySimplex,
    QuadraticObjective,
    away_step_frank_wolfe,
    fully_corrective_frank_wolfe,
    minimize,
)
from frankwolfe.algorithms.corrective import simplex_qp


def simplex_qp_problem(n=150, seed=0):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + 0.05 * np.eye(n)
    c = rng.standard_normal(n)
    return QuadraticObjective(Q, c), ProbabilitySimplex(dim=n), Q, c


def lasso_problem(m=300, n=500, s=20, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    x_true = np.zeros(n)
    x_true[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    return A, b, float(np.abs(x_true).sum())


def test_simplex_qp_matches_cvxpy_with_fewer_iterations_than_afw():
    f, lmo, Q, c = simplex_qp_problem()
    n = c.size
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), [cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    res = fully_corrective_frank_wolfe(f, lmo, tol=1e-10, max_iter=500)
    afw = away_step_frank_wolfe(f, lmo, tol=1e-10, max_iter=20000)
    assert res.success and afw.success
    assert abs(res.fun - prob.value) <= 1e-8 * max(1.0, abs(prob.value))
    assert res.nit < afw.nit
    assert res.extra["n_corrective_qp"] == res.nit
    # zero weights are dropped: every active atom carries mass, and they span x's support
    w = res.active_set.weights
    assert np.all(w > 0)
    support = {a.key[1] for a in res.active_set.atoms}
    assert support == set(np.flatnonzero(res.x).tolist())


def test_lasso_matches_cvxpy_with_fewer_iterations_than_afw():
    A, b, radius = lasso_problem()
    n = A.shape[1]
    f, lmo = LeastSquares(A, b), L1Ball(radius, dim=n)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    res = fully_corrective_frank_wolfe(f, lmo, tol=1e-9, max_iter=500)
    afw = away_step_frank_wolfe(f, lmo, tol=1e-9, max_iter=20000)
    assert res.success and afw.success
    assert abs(res.fun - prob.value) <= 1e-8 * max(1.0, abs(prob.value))
    assert res.nit < afw.nit
    np.testing.assert_allclose(res.x, x.value, atol=1e-6)


class _QuarticObjective(Objective):
    """0.5 ||x - y||^2 + 0.25 sum x^4: smooth, not quadratic; cvxpy form given."""

    def __init__(self, y):
        self.y = np.asarray(y, dtype=float)
        self.shape = self.y.shape

    def value(self, x):
        return 0.5 * float((x - self.y) @ (x - self.y)) + 0.25 * float(np.sum(x**4))

    def gradient(self, x):
        return x - self.y + x**3

    def to_cvxpy(self, x):
        return 0.5 * cp.sum_squares(x - self.y) + 0.25 * cp.sum(cp.power(x, 4))


def test_cvxpy_corrective_on_a_user_objective():
    rng = np.random.default_rng(3)
    n = 40
    y = rng.standard_normal(n) * 2
    f = _QuarticObjective(y)
    radius = 3.0
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(f.to_cvxpy(x)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL)
    # the corrective solves are as accurate as cvxpy's solver (about 1e-7 here)
    res = fully_corrective_frank_wolfe(f, L1Ball(radius, dim=n), tol=1e-5, max_iter=200)
    assert res.success
    assert res.extra["n_corrective_cvxpy"] >= 1 and res.extra["n_corrective_qp"] == 0
    assert abs(res.fun - prob.value) <= 1e-6 * max(1.0, abs(prob.value))


def test_forced_cvxpy_on_a_quadratic_and_minimize():
    f, lmo, Q, c = simplex_qp_problem(n=40, seed=2)
    qp = minimize(f, lmo, method="fcfw", tol=1e-10)
    via_cvxpy = fully_corrective_frank_wolfe(f, lmo, corrective="cvxpy", tol=1e-7)
    assert qp.success and via_cvxpy.success
    assert qp.method == "fully_corrective_frank_wolfe"
    assert via_cvxpy.extra["n_corrective_cvxpy"] >= 1
    assert abs(qp.fun - via_cvxpy.fun) <= 1e-7


def _qp_value(G, lin, w):
    return 0.5 * w @ G @ w + lin @ w


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 25), rank=st.integers(1, 25))
def test_simplex_qp_matches_cvxpy(seed, k, rank):
    """Exact simplex QP on random PSD (also rank-deficient) Gram matrices."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((min(rank, k), k))
    G = B.T @ B
    lin = rng.standard_normal(k)
    w0 = rng.dirichlet(np.ones(k)) if seed % 2 else None
    w, _ = simplex_qp(G, lin, w0)
    assert np.all(w >= 0) and abs(w.sum() - 1) <= 1e-12
    v = cp.Variable(k, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(v, cp.psd_wrap(G)) + lin @ v),
                      [cp.sum(v) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    scale = 1.0 + np.abs(G).max() + np.abs(lin).max()
    assert _qp_value(G, lin, w) <= prob.value + 1e-8 * scale
    # KKT: no coordinate has a smaller gradient than the support's common value
    grad = G @ w + lin
    assert grad.min() >= w @ grad - 1e-8 * scale


def test_bad_input():
    f, lmo, _, _ = simplex_qp_problem(n=10)
    with pytest.raises(ValueError, match="corrective"):
        fully_corrective_frank_wolfe(f, lmo, corrective="newton")
    plain = FunctionObjective(lambda x: float(x @ x), lambda x: 2 * x)
    with pytest.raises(TypeError, match="to_cvxpy"):
        fully_corrective_frank_wolfe(plain, ProbabilitySimplex(dim=10))
    with pytest.raises(TypeError, match="qp"):
        fully_corrective_frank_wolfe(plain, ProbabilitySimplex(dim=10), corrective="qp")
    with pytest.raises(ValueError, match="w0"):
        simplex_qp(np.eye(3), np.zeros(3), np.array([0.5, 0.6, 0.0]))

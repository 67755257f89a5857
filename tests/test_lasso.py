"""The lasso application, checked against scikit-learn's Lasso and cvxpy."""

import sys
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import frankwolfe as fw  # noqa: E402
from frankwolfe import ShapeError  # noqa: E402
from frankwolfe.applications.lasso import (  # noqa: E402
    ConstrainedLasso,
    alpha_max,
    lasso_path,
    penalty_from_radius,
    radius_from_penalty,
    solve_lasso,
    warm_start,
)


def rel_err(x, ref):
    return float(np.abs(x - ref).max() / np.abs(ref).max())


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X - X.mean(0), y - y.mean()


@pytest.mark.parametrize("alpha", [0.02, 0.1, 0.5])
@pytest.mark.parametrize("method", ["away", "pairwise", "rafw", "fcfw"])
def test_diabetes_agrees_with_sklearn(diabetes, alpha, method):
    A, b = diabetes
    tau, coef = radius_from_penalty(A, b, alpha)  # sklearn, tol 1e-12
    # f is about 6e5 here: tol 1e-8 is a relative accuracy of 1e-14
    res = solve_lasso(A, b, tau, method, tol=1e-8, max_iter=200000)
    assert res.success
    assert rel_err(res.x, coef) <= 1e-6
    assert penalty_from_radius(A, b, res.x) == pytest.approx(alpha, rel=1e-6)


def test_synthetic_2000x5000_agrees_with_sklearn():
    rng = np.random.default_rng(0)
    m, n, k = 2000, 5000, 50
    A = rng.standard_normal((m, n))
    x_true = np.zeros(n)
    x_true[rng.choice(n, k, replace=False)] = rng.standard_normal(k)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    alpha = 0.05 * alpha_max(A, b)
    tau, coef = radius_from_penalty(A, b, alpha)
    res = solve_lasso(A, b, tau, "pairwise", tol=1e-9, max_iter=100000)
    assert res.success
    assert rel_err(res.x, coef) <= 1e-6


def test_path_warm_starts_and_matches_cvxpy():
    rng = np.random.default_rng(1)
    m, n = 80, 120
    A = rng.standard_normal((m, n))
    b = A @ (rng.standard_normal(n) * (rng.random(n) < 0.1)) + 0.1 * rng.standard_normal(m)
    radii = np.linspace(0.5, 4.0, 8)
    warm = lasso_path(A, b, radii, "pairwise", tol=1e-9)
    cold = lasso_path(A, b, radii, "pairwise", tol=1e-9, warm_start=False)
    assert warm.n_iter[1:].sum() < cold.n_iter[1:].sum()
    x = cp.Variable(n)
    t = cp.Parameter(nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= t])
    for r, coef, res in zip(radii, warm.coefs, warm.results):
        t.value = r
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
        assert res.fun <= prob.value + 1e-7
        assert np.abs(coef).sum() <= r * (1 + 1e-12)
    assert np.all(warm.gaps <= 1e-9)
    with pytest.raises(TypeError, match="`warm_start` must be True or False, got 'no'"):
        lasso_path(A, b, radii, "pairwise", warm_start="no")


@pytest.mark.parametrize("method", ["fw", "away", "rafw", "fcfw", "compiled_pairwise", "auto"])
def test_sparse_design_matches_dense_via_cvxpy(method):
    rng = np.random.default_rng(2)
    A = sp.random(60, 90, density=0.2, random_state=3, format="csr")
    b = rng.standard_normal(60)
    radius = 1.5
    x = cp.Variable(90)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A.toarray() @ x - b)),
                      [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    tol = 1e-3 if method == "fw" else 1e-9  # vanilla FW is sublinear
    res = solve_lasso(A, b, radius, method, tol=tol, max_iter=50000)
    assert res.success
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7
    if method == "auto":  # a sparse A: the compiled method (its counters)
        assert "n_corrective_steps" in res.extra


@pytest.mark.parametrize("method", ["pairwise", "fcfw", "compiled_pairwise"])
def test_sparse_high_dimensional_design_agrees_with_sklearn(method):
    # n >> m, 2% non-zeros with Gaussian values (the benchmark's design, small):
    # the constrained solution at radius ||x_alpha||_1 is scikit-learn's x_alpha
    rng = np.random.default_rng(11)
    m, n = 150, 1500
    A = sp.random(m, n, density=0.02, format="csc", random_state=12,
                  data_rvs=rng.standard_normal)
    x_true = np.zeros(n)
    x_true[rng.choice(n, 15, replace=False)] = rng.standard_normal(15)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    alpha = 0.2 * alpha_max(A, b)
    radius, coef = radius_from_penalty(A, b, alpha, tol=1e-14)
    assert 5 <= np.count_nonzero(coef) < m  # a sparse, unique-looking optimum
    res = solve_lasso(A, b, radius, method, tol=1e-12, max_iter=100000)
    assert res.success
    assert rel_err(res.x, coef) <= 1e-6
    assert penalty_from_radius(A, b, res.x) == pytest.approx(alpha, rel=1e-6)
    # the certified gap bounds f(x) - f(x_alpha) from both sides
    f_sk = 0.5 * float(np.sum((A @ coef - b) ** 2))
    assert -1e-9 * f_sk <= res.fun - f_sk <= res.gap + 1e-9 * f_sk


def test_compiled_path_warm_starts_and_matches_pairwise():
    rng = np.random.default_rng(4)
    A = sp.random(100, 400, density=0.05, format="csc", random_state=5,
                  data_rvs=rng.standard_normal)
    b = A @ (rng.standard_normal(400) * (rng.random(400) < 0.05)) + 0.01 * rng.standard_normal(100)
    radii = np.linspace(0.5, 3.0, 5)
    warm = lasso_path(A, b, radii, "compiled_pairwise", tol=1e-10)
    cold = lasso_path(A, b, radii, "compiled_pairwise", tol=1e-10, warm_start=False)
    ref = lasso_path(A, b, radii, "pairwise", tol=1e-10, max_iter=100000)
    assert warm.n_iter[1:].sum() <= cold.n_iter[1:].sum()
    for a, r in zip(warm.results, ref.results):
        assert -1e-9 <= a.fun - r.fun + r.gap and a.fun - r.fun <= a.gap + 1e-9


def test_warm_start_represents_the_point():
    x = np.array([0.5, 0.0, -0.25, 0.0])
    S = warm_start(x, 2.0)
    np.testing.assert_allclose(S.x, x, atol=1e-15)
    assert abs(S.weights.sum() - 1) <= 1e-15 and np.all(S.weights > 0)
    shrunk = warm_start(x, 0.5)  # outside the ball: scaled onto its boundary
    np.testing.assert_allclose(shrunk.x, x * (0.5 / 0.75), atol=1e-15)
    np.testing.assert_allclose(warm_start(np.zeros(4), 1.0).x, np.zeros(4), atol=1e-15)


@pytest.mark.parametrize("method", ["away", "pairwise", "fcfw", "rafw", "bpcg"])
def test_active_set_of_another_radius_warm_starts_correctly(method):
    """The active set of a solve at radius 5 starts one at radius 20: its atoms (+-5 e_i) are
    feasible points there, but the new ball's oracle names +-20 e_i by the same keys.
    The new vertices' weight went to the old vectors: x left the ball (||x||_1 = 25.7),
    the "certified" gap was -16 and the run "converged" 3000 above the optimum."""
    rng = np.random.default_rng(1)
    A, b = rng.standard_normal((30, 20)), rng.standard_normal(30) * 5
    small = solve_lasso(A, b, 5.0, "pairwise", tol=1e-10)
    x = cp.Variable(20)
    f_star = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)),
                        [cp.norm1(x) <= 20.0]).solve(solver=cp.CLARABEL)
    kw = {"random_state": 0} if method == "rafw" else {}
    res = fw.minimize(fw.LeastSquares(A, b), fw.L1Ball(20.0), x0=small.active_set,
                      method=method, tol=1e-9, max_iter=20000, **kw)
    assert res.success, res.message
    assert np.abs(res.x).sum() <= 20.0 * (1 + 1e-12)
    f = 0.5 * float(np.sum((A @ res.x - b) ** 2))
    assert -1e-6 * f_star <= f - f_star <= res.gap + 1e-6 * f_star  # cvxpy's accuracy
    assert res.gap >= -1e-12 * f_star  # not the -16 of the mixed-up keys (rounding aside)
    # each key names one vector: +-20 e_i under the ball's own key, an old +-5 e_i under
    # its old key (or, beside the new vertex of that key, under ("x0", key))
    keys = res.active_set.keys
    assert len(set(keys)) == len(keys)
    for atom, _ in res.active_set:
        key = atom.key[1] if atom.key[0] == "x0" else atom.key
        _, i, sign = key
        v = atom.to_dense()
        assert any(np.array_equal(v, sign * r * np.eye(20)[i]) for r in (5.0, 20.0)), key


def test_estimator_matches_sklearn_with_intercept():
    X, y = load_diabetes(return_X_y=True)
    sk = Lasso(alpha=0.2, tol=1e-12, max_iter=100000).fit(X, y)
    tau = float(np.abs(sk.coef_).sum())
    est = ConstrainedLasso(radius=tau, tol=1e-8, max_iter=100000).fit(X, y)
    assert rel_err(est.coef_, sk.coef_) <= 1e-6
    assert est.intercept_ == pytest.approx(sk.intercept_, rel=1e-9)
    assert est.score(X, y) == pytest.approx(r2_score(y, sk.predict(X)), rel=1e-9)
    np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=1e-7)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and not hasattr(twin, "coef_")
    assert twin.set_params(method="fcfw").method == "fcfw"


def test_estimator_and_helpers_bad_input():
    with pytest.raises(ValueError, match="not fitted"):
        ConstrainedLasso().predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Invalid parameter 'alpha'"):
        ConstrainedLasso().set_params(alpha=1.0)
    # a sparse X with fit_intercept=True is fitted (test_edges_inputs), no longer refused
    with pytest.raises(ValueError, match="method"):
        solve_lasso(np.eye(3), np.ones(3), 1.0, method="newton")
    with pytest.raises(ValueError, match="radius"):
        solve_lasso(np.eye(3), np.ones(3), -1.0)
    for bad in (True, "2"):  # were radii 1 and 2
        with pytest.raises(ValueError, match="`radius` must be positive and finite"):
            solve_lasso(np.eye(3), np.ones(3), bad)
    # an objective of another b was solved in place of these A and b
    with pytest.raises(ValueError, match="`objective` must be a LeastSquares of these A and b"):
        solve_lasso(np.eye(3), np.ones(3), 1.0, objective=fw.LeastSquares(np.eye(3), np.zeros(3)))
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        solve_lasso(np.eye(3), np.ones(4), 1.0)
    est = ConstrainedLasso(fit_intercept=False).fit(np.eye(3), np.ones(3))
    with pytest.raises(ShapeError, match="n_samples, 3"):
        est.predict(np.ones((2, 4)))


def test_conversions_refuse_non_finite_data_by_name():
    """alpha_max and penalty_from_radius returned NaN for a NaN in A or x (solve_lasso
    refused it by name)."""
    A, b = np.ones((3, 2)), np.ones(3)
    bad = A.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"alpha_max: `A` contains NaN"):
        alpha_max(bad, b)
    with pytest.raises(ValueError, match=r"penalty_from_radius: `x` contains NaN"):
        penalty_from_radius(A, b, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"radius_from_penalty: `b` contains NaN or inf"):
        radius_from_penalty(A, np.array([1.0, np.inf, 0.0]), 0.1)


def test_default_method_converges_on_an_uncentred_dense_design():
    """Features around 5 without an intercept: pairwise steps need tens of thousands of
    iterations there; the default picks the corrective rounds on a dense design too."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 10)) + 5.0
    y = X @ rng.normal(size=10) * 0.3 + rng.normal(size=200)
    beta = cp.Variable(10)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ beta - y)), [cp.norm1(beta) <= 5.0]).solve()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = ConstrainedLasso(radius=5.0, fit_intercept=False).fit(X, y)
    assert est.result_.method == "compiled_pairwise"
    np.testing.assert_allclose(est.coef_, beta.value, atol=1e-5)
    res = solve_lasso(X, y, 5.0)
    assert res.success and res.method == "compiled_pairwise"
    f_star = 0.5 * float(np.sum((X @ beta.value - y) ** 2))
    assert abs(res.fun - f_star) <= res.gap + 1e-6 * f_star


def test_default_method_keeps_pairwise_steps_from_a_start_of_many_atoms():
    """The compiled corrective rounds track faces of at most FACE_LIMIT vertices; from a
    denser start they would take plain pairwise steps, slower than the Python ones."""
    from frankwolfe.algorithms.compiled_pairwise import FACE_LIMIT

    rng = np.random.default_rng(1)
    n = FACE_LIMIT + 200
    A = rng.standard_normal((60, n))
    b = rng.standard_normal(60)
    x0 = np.full(n, 0.5 / n)
    assert solve_lasso(A, b, 1.0, x0=x0, max_iter=5).method == "pairwise"
    assert solve_lasso(A, b, 1.0, max_iter=5).method == "compiled_pairwise"
    sparse_start = np.zeros(n)
    sparse_start[:10] = 0.05
    assert solve_lasso(A, b, 1.0, x0=sparse_start, max_iter=5).method == "compiled_pairwise"

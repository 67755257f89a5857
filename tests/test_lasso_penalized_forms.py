"""alpha_max against scikit-learn's Lasso on a non-square A, and the estimator's
intercept against an ordinary least-squares fit with intercept."""
import numpy as np
from sklearn.linear_model import Lasso

from frankwolfe.applications.lasso import ConstrainedLasso, alpha_max


def test_alpha_max_is_sklearns_zero_threshold_on_a_wide_matrix():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 80))  # m != p
    b = rng.standard_normal(30)
    a = alpha_max(A, b)

    def fit(alpha):
        return Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100000).fit(A, b).coef_

    assert np.all(fit(a * 1.0001) == 0.0)
    assert np.any(fit(a * 0.99) != 0.0)


def test_intercept_matches_least_squares_with_an_intercept():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4)) + 3.0  # features far from centred
    y = X @ np.array([0.5, -0.2, 0.1, 0.3]) + 7.0 + 0.01 * rng.standard_normal(60)
    M = np.column_stack([X, np.ones(60)])
    sol = np.linalg.lstsq(M, y, rcond=None)[0]
    est = ConstrainedLasso(radius=10.0, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(est.coef_, sol[:4], atol=1e-5)
    assert abs(est.intercept_ - sol[4]) < 1e-4

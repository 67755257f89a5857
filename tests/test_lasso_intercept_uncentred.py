"""ConstrainedLasso's intercept on features that are not centred (belongs with
tests/test_lasso.py: its sklearn comparison uses load_diabetes, whose columns have mean
0, so the intercept there is mean(y) whatever the sign of the x_mean term)."""

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from frankwolfe.applications.lasso import ConstrainedLasso


def test_intercept_matches_sklearn_on_uncentred_features():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) + np.array([5.0, -3.0, 2.0, 10.0])
    y = X @ np.array([1.5, -2.0, 0.0, 0.5]) + 7.0 + 0.01 * rng.normal(size=60)
    sk = Lasso(alpha=0.05, tol=1e-12, max_iter=100000).fit(X, y)
    tau = float(np.abs(sk.coef_).sum())
    est = ConstrainedLasso(radius=tau, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(est.coef_, sk.coef_, rtol=1e-5, atol=1e-7)
    assert est.intercept_ == pytest.approx(sk.intercept_, rel=1e-6)
    # the closed form of the intercept: mean(y) - mean(X) @ coef
    assert est.intercept_ == pytest.approx(y.mean() - X.mean(axis=0) @ est.coef_, rel=1e-12)
    np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=1e-6)

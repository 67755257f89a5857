"""The lasso's outputs hold arrays of their own: editing one (or the caller's input) in
place does not change another."""

from __future__ import annotations

import numpy as np

from frankwolfe.applications.lasso import ConstrainedLasso, lasso_path


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 6))
    return X, X @ np.array([1.0, -2.0, 0.0, 0.0, 0.5, 0.0]) + 0.01 * rng.standard_normal(30)


def test_coef_is_not_the_results_x():
    X, y = _data()
    est = ConstrainedLasso(radius=2.0).fit(X, y)
    before = est.result_.x.copy()
    est.coef_[:] = 0.0
    np.testing.assert_array_equal(est.result_.x, before)


def test_the_path_keeps_its_own_radii():
    X, y = _data()
    radii = np.array([0.5, 1.0, 2.0])
    path = lasso_path(X, y, radii)
    radii[:] = 9.0
    np.testing.assert_array_equal(path.radii, [0.5, 1.0, 2.0])
    # each coefficient vector lies on its own radius' l1 sphere (the constraint binds)
    np.testing.assert_allclose(np.abs(path.coefs).sum(axis=1), [0.5, 1.0, 2.0], rtol=1e-6)

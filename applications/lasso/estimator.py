"""The scikit-learn estimator of the l1-constrained lasso (imports scikit-learn)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

import frankwolfe as fw
from frankwolfe import LeastSquares
from frankwolfe._finite import check_finite
from frankwolfe._sparse import issparse
from frankwolfe._warnings import warn_user
from frankwolfe.errors import ShapeError

from .._params import BOOLEAN, RANDOM_STATE, Check, Interval, Options, validate_params
from .solve import lasso_methods, resolve_method, solve_lasso

__all__ = ["ConstrainedLasso"]


class ConstrainedLasso(RegressorMixin, BaseEstimator):
    """Linear regression with an l1 constraint, ``||coef||_1 <= radius``, fitted by Frank-Wolfe.

    A scikit-learn regressor (``fit``, ``predict``, ``score`` = R^2; works with
    ``clone``, pipelines, model selection and ``check_estimator``).

    Parameters
    ----------
    radius : float, default 1.0
        The l1 bound on the coefficients.
    method : str, default "auto"
        See :func:`solve_lasso`: ``"auto"`` or a core method that runs on the l1 ball,
        by any of its names (:func:`lasso_methods`).
    tol : float, default 1e-8
        Target Frank-Wolfe gap relative to the loss of the zero coefficients,
        ``1/2 ||y - mean(y)||^2`` (``1/2 ||y||^2`` without an intercept): the fit stops
        at a certified ``f(coef) - f* <= tol * 1/2 ||y - mean(y)||^2``, whatever the units
        of ``y`` (scikit-learn's ``Lasso`` scales its ``tol`` by ``||y||^2`` likewise).
        Where that loss is 0 (a constant ``y``), ``tol`` is the gap itself.
    max_iter : int, default 10000
        Iteration budget; ``fit`` warns with scikit-learn's ``ConvergenceWarning``
        when it ends the run before ``tol``.
    fit_intercept : bool, default True
        Fit an unpenalized intercept (by centring: a dense ``X`` is centred, a sparse
        one stays sparse and its column means are subtracted inside the products,
        :class:`~frankwolfe.LeastSquares`'s ``offset``).
    warm_start : bool, default False
        Start a new ``fit`` from the previous coefficients.
    random_state : int, numpy.random.Generator or RandomState, optional
        Seed of ``method="rafw"``'s sampled vertices (the other methods draw nothing).

    Attributes
    ----------
    coef_ : ndarray, shape (n_features,)
    intercept_ : float
    n_iter_ : int
    gap_ : float
        Certified Frank-Wolfe gap of the fit (absolute: a bound on ``f(coef_) - f*``).
    result_ : Result
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.lasso import ConstrainedLasso
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> est = ConstrainedLasso(radius=1.5, fit_intercept=False).fit(X, X @ [1.0, -0.5])
    >>> np.round(est.coef_, 6), round(est.score(X, X @ [1.0, -0.5]), 6)
    (array([ 1. , -0.5]), 1.0)
    """

    _param_checks: dict[str, list[Check]] = {
        "radius": [Interval(Real, 0, None, closed="neither")],
        "method": [Options(lasso_methods())],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "fit_intercept": [BOOLEAN],
        "warm_start": [BOOLEAN],
        "random_state": [RANDOM_STATE],
    }

    def __init__(self, radius: float = 1.0, method: str = "auto", tol: float = 1e-8,
                 max_iter: int = 10000, fit_intercept: bool = True,
                 warm_start: bool = False,
                 random_state: int | np.random.Generator | None = None) -> None:
        self.radius = radius
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # the compiled method has no centred sparse design (LeastSquares' offset): with an
        # intercept it refuses a sparse X, and says so
        tags.input_tags.sparse = not (self._compiled() and self.fit_intercept)
        # the l1 bound caps the fit: with the default radius the R^2 on unscaled data is low
        tags.regressor_tags.poor_score = True
        return tags

    def _compiled(self) -> bool:
        """Whether ``method`` names the compiled pairwise method (by any of its names)."""
        try:
            return resolve_method(self.method) is fw.compiled_pairwise_frank_wolfe
        except (TypeError, ValueError):  # refused by fit's parameter checks
            return False

    def _validate_X(self, X: Any, y: Any = None, reset: bool = False) -> Any:
        where = "ConstrainedLasso." + ("fit" if reset else "predict")
        check_finite(where, "X", X)
        if y is not None:
            check_finite(where, "y", y)
        kw = {"y": y, "y_numeric": True} if reset else {}
        if reset and issparse(X) and self._compiled() and self.fit_intercept:
            raise TypeError(f"ConstrainedLasso: method={self.method!r} (the compiled pairwise "
                            "method) has no centred sparse design, so a sparse X (an "
                            "intercept fitted) is not supported there: give "
                            "fit_intercept=False, or method='auto' (pairwise steps on the "
                            "centred products)")
        try:
            out = validate_data(self, X, reset=reset, accept_sparse=("csr", "csc"),
                                dtype=np.float64, **kw)
        except ValueError as e:
            if not reset and "features, but" in str(e):
                raise ShapeError(f"ConstrainedLasso: {e} `X` has shape {X.shape}, expected "
                                 f"(n_samples, {self.n_features_in_})") from None
            raise
        if reset and out[1].dtype.kind in "SU":
            # y_numeric converts object arrays only; scikit-learn's Lasso reads numeric
            # text ("1.5") too, and y.mean() raised numpy's TypeError on it
            try:
                yf = out[1].astype(np.float64)
            except ValueError as e:
                raise ValueError(f"{where}: `y` must be numbers (numeric text is read as "
                                 f"numbers), got dtype {out[1].dtype} ({e})") from None
            check_finite(where, "y", yf)  # "nan" and "inf" as text
            out = (out[0], yf)
        elif reset and out[1].dtype != np.float64:
            # validate_data converts X only: the mean of a float16 y, and the intercept
            # from it, were rounded to float16 (scikit-learn's Lasso computes in float64)
            out = (out[0], out[1].astype(np.float64))
        return out

    def fit(self, X: Any, y: Any) -> Self:
        """Fit the coefficients; returns ``self``."""
        validate_params(self, self._param_checks)
        X, y = self._validate_X(X, y, reset=True)
        objective = None
        if self.fit_intercept:
            x_mean = np.asarray(X.mean(axis=0), dtype=float).reshape(-1)
            y_mean = float(y.mean())
            yc = y - y_mean
            if issparse(X):  # centred implicitly: X - 1 x_mean^T would be dense
                Xc = X
                objective = LeastSquares(X, yc, offset=x_mean)
            else:
                Xc = X - x_mean
        else:
            Xc, yc = X, y
        x0 = None
        previous = getattr(self, "coef_", None)  # fitted attributes exist after fit only
        if self.warm_start and previous is not None and np.shape(previous) == (X.shape[1],):
            x0 = previous
        # relative to the null model's loss, so that rescaling y does not turn a
        # converged fit into a ConvergenceWarning
        null_loss = 0.5 * float(np.dot(yc, yc))
        target = self.tol * null_loss if null_loss > 0.0 else self.tol
        # only rafw samples (the other solvers take no random_state)
        rafw = resolve_method(self.method) is fw.randomized_away_step_frank_wolfe
        seeded = {"random_state": self.random_state} if rafw else {}
        res = solve_lasso(Xc, yc, self.radius, self.method, x0, tol=target,
                          max_iter=self.max_iter, objective=objective, **seeded)
        self.result_ = res
        self.coef_ = np.array(res.x, dtype=float)  # its own: result_.x stays the run's
        self.intercept_ = (y_mean - float(x_mean @ self.coef_)) if self.fit_intercept else 0.0
        self.n_iter_ = int(res.nit)
        self.gap_ = float(res.gap)
        if res.status == fw.Status.INTERRUPTED:
            warn_user(f"ConstrainedLasso: interrupted (Ctrl-C) after {res.nit} iterations "
                          f"at gap {self.gap_:.3g}; coef_ holds the coefficients so far",
                          ConvergenceWarning)
        elif res.status == fw.Status.MAX_ITER:
            null = "1/2 ||y - mean(y)||^2" if self.fit_intercept else "1/2 ||y||^2"
            warn_user(f"ConstrainedLasso: max_iter={self.max_iter} ended the run at gap "
                          f"{self.gap_:.3g} > tol * {null} = {target:.3g} "
                          f"(tol={self.tol}); raise max_iter or tol",
                          ConvergenceWarning)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self, "coef_")
        X = self._validate_X(X)
        return np.asarray(X @ self.coef_, dtype=float).reshape(-1) + self.intercept_

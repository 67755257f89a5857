"""The l1-constrained lasso: one problem, a path, warm starts and the penalized lasso.

See :mod:`frankwolfe.applications.lasso` for the problem; the estimator
:class:`~frankwolfe.applications.lasso.ConstrainedLasso` is in :mod:`.estimator`
(it needs scikit-learn, which these functions do not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import frankwolfe as fw
from frankwolfe import ActiveSet, Atom, L1Ball, LeastSquares, Result
from frankwolfe._finite import check_finite
from frankwolfe._numbers import as_real, check_flag, check_whole, real_array
from frankwolfe.algorithms.compiled_pairwise import FACE_LIMIT
from frankwolfe.errors import NonConvexError, ShapeError
from frankwolfe.lmo._checks import check_radius
from frankwolfe.registry import available_methods, lookup

__all__ = [
    "lasso_methods",
    "solve_lasso",
    "lasso_path",
    "LassoPath",
    "warm_start",
    "penalty_from_radius",
    "radius_from_penalty",
    "alpha_max",
]

#: the lasso's own method name: the compiled pairwise method or the Python one, chosen
#: per problem (:func:`solve_lasso`); every other name is the core registry's
AUTO = "auto"
#: core methods that do not solve ``min 1/2 ||A x - b||^2`` over an l1 ball, and why
#: (each would refuse the problem in its own words, naming neither the lasso nor
#: the methods that do)
_NOT_LASSO = {
    "bcfw": "needs a product of blocks (ProductDomain)",
    "alm": "finds a point in the intersection of two or more domains",
    "saddle": "solves saddle-point problems over a pair of domains",
    "sfw": "needs a finite-sum objective (mini-batch gradients)",
    "dicg": "needs a domain with an in-face oracle (simplices, 0/1 polytopes), which the "
            "l1 ball has not",
}
#: methods that take the warm start as an active set (the others as a point of the ball)
_ACTIVE_SET = ("afw", "pfw", "rafw", "fcfw", "bcg", "bpcg", "compiled_pairwise")
#: keywords of the compiled method besides the run keywords ("auto" picks it only then)
_COMPILED_OPTIONS = {"corrective", "refresh_every", "cache_bytes", "tol", "rtol", "max_iter",
                     "time_limit", "callback", "verbose", "history_every", "progress"}


def lasso_methods() -> list[str]:
    """The names ``method=`` accepts in :func:`solve_lasso`, :func:`lasso_path` and
    :class:`~frankwolfe.applications.lasso.ConstrainedLasso`: ``"auto"`` and every name
    and alias of :func:`frankwolfe.available_methods` whose method runs on the lasso
    (all but ``bcfw``, ``alm``, ``saddle``, ``sfw``, ``dicg`` and their aliases)."""
    refused = {lookup(name) for name in _NOT_LASSO}
    return sorted({AUTO, *(m for m in available_methods() if lookup(m) not in refused)})


def resolve_method(method: Any, where: str = "solve_lasso") -> Any:
    """The core solver that ``method`` names (as :func:`frankwolfe.minimize` reads it,
    case aside), or None for ``"auto"``.

    Raises
    ------
    TypeError
        When ``method`` is not a string.
    ValueError
        When it names no method, or one that does not run on the lasso (naming why).
    """
    if not isinstance(method, str):
        raise TypeError(f"{where}: `method` must be a method name (a str), got {method!r} "
                        f"({type(method).__name__})")
    if method.lower() == AUTO:
        return None
    try:
        solver = lookup(method)
    except ValueError:
        raise ValueError(f"{where}: `method` must be one of {lasso_methods()}, got "
                         f"{method!r}") from None
    for name, why in _NOT_LASSO.items():
        if solver is lookup(name):
            raise ValueError(f"{where}: method={method!r} does not solve the lasso: it "
                             f"{why}; the lasso's methods are {lasso_methods()}")
    return solver


def _solver(method: str, A: Any = None, options: Any = (), offset: bool = False,
            start_size: int = 0) -> Any:
    solver = resolve_method(method)
    if solver is None:  # "auto": the compiled method wherever it can run
        # dense too: the Python pairwise steps are faster per iteration there, but on an
        # ill-conditioned design (uncentred or correlated columns) they need thousands of
        # iterations where the corrective rounds need a few (benchmarks/README.md,
        # "Measurements behind code choices")
        # ... but not from a start of more atoms than its corrective rounds track (a
        # dense warm start): it takes plain pairwise steps until the face shrinks
        compiled = (set(options) <= _COMPILED_OPTIONS and not offset
                    and start_size <= FACE_LIMIT)
        solver = fw.compiled_pairwise_frank_wolfe if compiled else fw.pairwise_frank_wolfe
    return solver


def _check_problem(A: Any, b: Any, where: str, finite: bool = True) -> tuple[Any, np.ndarray]:
    # real_array: a complex A or b lost its imaginary part with a mere ComplexWarning, and
    # text, ragged lists or a sparse b met numpy's errors, which name neither
    A = real_array(A, where, "A", what="a matrix of numbers", sparse=True)
    if A.ndim != 2:
        raise ShapeError(f"{where}: `A` must be a 2-D matrix, got shape {A.shape}")
    b = real_array(b, where, "b", what="a 1-D array of numbers")
    if b.shape != (A.shape[0],):
        raise ShapeError(f"{where}: `b` has shape {b.shape}, expected ({A.shape[0]},) to "
                         f"match A {A.shape}")
    if finite:  # (solve_lasso's objective checks them itself)
        check_finite(where, "A", A)
        check_finite(where, "b", b)
    return A, b


def warm_start(x: np.ndarray, radius: float) -> ActiveSet:
    """An active set of the l1 ball of ``radius`` representing ``x`` (or ``x`` shrunk into it).

    ``x`` is scaled down to ``||x||_1 = radius`` if it lies outside the
    ball; the weights are ``|x_i| / radius`` on the vertices
    ``sign(x_i) radius e_i``, and the slack ``1 - ||x||_1 / radius`` is split
    evenly between ``+-radius e_j`` (``j`` the largest ``|x_j|``), which
    cancel.

    Parameters
    ----------
    x : ndarray, shape (n,)
        A previous solution (e.g. for a neighbouring radius).
    radius : float

    Returns
    -------
    ActiveSet
    """
    radius = check_radius("warm_start", radius)
    x = real_array(x, "warm_start", "x").reshape(-1)
    check_finite("warm_start", "x", x)
    n1 = float(np.abs(x).sum())
    if n1 > radius:
        x = x * (radius / n1)
    return L1Ball(radius).decompose(x)


def solve_lasso(
    A: Any,
    b: Any,
    radius: float,
    method: str = "auto",
    x0: np.ndarray | ActiveSet | None = None,
    *,
    tol: float = 1e-8,
    max_iter: int = 10000,
    objective: LeastSquares | None = None,
    **options: Any,
) -> Result:
    """Solve ``min 1/2 ||A x - b||^2  s.t.  ||x||_1 <= radius``.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
    b : array_like, shape (m,)
    radius : float
        The l1 bound, positive.
    method : str, default "auto"
        A method of :func:`frankwolfe.minimize` by any of its names
        (:func:`frankwolfe.available_methods`), meaning what it means there: ``"fw"``,
        ``"away"`` (``"afw"``), ``"pairwise"`` (``"pfw"``), ``"rafw"``, ``"fcfw"``,
        ``"bcg"``, ``"bpcg"``, ``"cfw"``, ``"bfw"``, ``"compiled_pairwise"``
        (:func:`frankwolfe.compiled_pairwise_frank_wolfe`: pairwise steps and
        corrective rounds in numba, the fastest on a sparse ``A``), ...; the ones that
        do not solve this problem (``"bcfw"``, ``"alm"``, ``"saddle"``, ``"sfw"``,
        ``"dicg"``) are refused, naming why (:func:`lasso_methods` lists the
        accepted names).  Or the lasso's own ``"auto"``: ``"compiled_pairwise"``
        unless ``options`` holds keywords only the other methods take, ``objective``
        has an ``offset``, or ``x0`` has more non-zeros than the compiled method's
        corrective rounds track
        (:data:`frankwolfe.algorithms.compiled_pairwise.FACE_LIMIT`); then
        ``"pairwise"``.
    x0 : ndarray or ActiveSet, optional
        Warm start.  An array, or an ActiveSet's point (e.g. a previous radius's
        ``result.active_set``), is converted with :func:`warm_start` for the
        active-set methods (shrunk into the ball if needed); default: the
        vertex ``-radius e_0``.
    tol : float, default 1e-8
        Target Frank-Wolfe gap (a certified bound on ``f(x) - f*``).
    max_iter : int, default 10000
    objective : LeastSquares, optional
        Reuse an existing ``LeastSquares(A, b)`` (its smoothness estimate), or one with
        an ``offset`` (a centred design: ``"auto"`` then picks ``"pairwise"``).
    **options
        Passed to the solver (``step_size``, ``subsample``, ``time_limit``, ...).

    Returns
    -------
    Result
        ``x`` the coefficients, ``gap`` the certified gap, ``active_set`` the
        signed support as an :class:`~frankwolfe.ActiveSet` (active-set methods).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.lasso import solve_lasso
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> res = solve_lasso(A, A @ [1.0, -0.5], radius=1.5, tol=1e-12)
    >>> np.round(res.x, 6)
    array([ 1. , -0.5])
    """
    A, b = _check_problem(A, b, "solve_lasso", finite=False)
    radius = check_radius("solve_lasso", radius)
    n = A.shape[1]
    if x0 is not None and not isinstance(x0, (ActiveSet, Atom)):
        x0 = real_array(x0, "solve_lasso", "x0")
        if x0.shape != (n,):
            raise ShapeError(f"solve_lasso: `x0` has shape {x0.shape}, expected ({n},)")
    if isinstance(x0, ActiveSet):
        # its point, then as an array start: a previous radius's vertices carry keys of
        # this ball's other vertices, which the compiled method refused
        x0 = np.asarray(x0.copy(keep_x=False).resum(), dtype=float).reshape(-1)
        if x0.shape != (n,):
            raise ShapeError(f"solve_lasso: `x0` has shape {x0.shape}, expected ({n},)")
    start_size = int(np.count_nonzero(x0)) if isinstance(x0, np.ndarray) else 0
    solver = _solver(method, A, options, getattr(objective, "offset", None) is not None,
                     start_size)
    if objective is not None:
        # the objective is what is solved, not A and b: one of another problem answered
        shape = getattr(objective, "shape", None)
        if shape != (A.shape[1],) or not np.array_equal(getattr(objective, "b", ()), b):
            other = f"shape {shape}" if shape != (A.shape[1],) else "another `b`"
            raise ValueError(f"solve_lasso: `objective` must be a LeastSquares of these A and "
                             f"b (reused for its smoothness estimate), got one of {other}")
    f = objective if objective is not None else LeastSquares(A, b)
    lmo = L1Ball(radius, dim=n)
    start: Any = x0
    active = any(solver is lookup(name) for name in _ACTIVE_SET)
    if isinstance(x0, np.ndarray):
        if not active:
            n1 = float(np.abs(x0).sum())
            start = x0 * (radius / n1) if n1 > radius else x0
        else:
            start = warm_start(x0, radius)
    try:
        return solver(f, lmo, start, tol=tol, max_iter=max_iter, **options)
    except NonConvexError as err:
        # least squares is convex: this "negative curvature" is rounding (vertices of size
        # radius, f the small difference of huge terms), not the objective's
        raise _rounding_error(err, radius) from None


def _rounding_error(err: NonConvexError, radius: float) -> NonConvexError:
    """``err`` (its run attached) reworded: on least squares a fall below the tangent is
    the rounding of iterates built from vertices of size ``radius``."""
    new = NonConvexError(
        f"solve_lasso: rounding errors, not curvature (least squares is convex): with "
        f"radius={radius:g} the iterates are differences of vertices of size {radius:g}, "
        f"whose rounding exceeds the decrease of f; use a radius nearer the solution's "
        f"l1 norm (the solver said: {err})")
    new.result = err.result
    return new


@dataclass
class LassoPath:
    """Solutions along a regularization path.

    Attributes
    ----------
    radii : ndarray, shape (p,)
    coefs : ndarray, shape (p, n)
        ``coefs[i]`` solves the problem with ``radii[i]``.
    results : list of Result
    """

    radii: np.ndarray
    coefs: np.ndarray
    results: list[Result] = field(default_factory=list)

    @property
    def n_iter(self) -> np.ndarray:
        """Iterations per radius."""
        return np.array([r.nit for r in self.results])

    @property
    def gaps(self) -> np.ndarray:
        """Certified gaps per radius."""
        return np.array([r.gap for r in self.results])


def lasso_path(
    A: Any,
    b: Any,
    radii: Sequence[float] | np.ndarray,
    method: str = "auto",
    *,
    tol: float = 1e-8,
    max_iter: int = 10000,
    warm_start: bool = True,
    **options: Any,
) -> LassoPath:
    """Solve the constrained lasso for each radius, warm starting along the path.

    Each problem starts from the previous solution's active set, carried
    over to the new ball by the function :func:`warm_start` (same signed support; scaled
    down when the radius shrinks).  Increasing radii (from small, sparse
    solutions) is the cheap direction.

    Parameters
    ----------
    A, b
        As in :func:`solve_lasso`.
    radii : sequence of float
        Positive radii, in the order solved.
    method, tol, max_iter
        As in :func:`solve_lasso`.
    warm_start : bool, default True
        Warm start from the previous solution (``False``: every problem from
        the default vertex), as the estimators' ``warm_start``.
    **options
        As in :func:`solve_lasso`.

    Returns
    -------
    LassoPath
    """
    A, b = _check_problem(A, b, "lasso_path")
    check_flag(warm_start, "warm_start")
    # no text ("1"), no bool, no matrix (2-D radii were flattened)
    radii = real_array(radii, "lasso_path", "radii", bools=False,
                       what="a 1-D sequence of radii (numbers)")
    if radii.ndim != 1:
        raise ValueError(f"lasso_path: `radii` must be a 1-D sequence of radii, got an "
                         f"array of shape {radii.shape}")
    if radii.size == 0:
        raise ValueError("lasso_path: `radii` is empty")
    for r in radii:
        check_radius("lasso_path", r)
    f = LeastSquares(A, b)
    coefs = np.zeros((radii.size, A.shape[1]))
    results: list[Result] = []
    prev: Result | None = None
    for i, r in enumerate(radii):
        x0: Any = None
        if warm_start and prev is not None:
            x0 = prev.x
        res = solve_lasso(A, b, r, method, x0, tol=tol, max_iter=max_iter, objective=f,
                          **options)
        coefs[i] = res.x
        results.append(res)
        prev = res
    # the path's own radii: the caller's array may be changed after the call
    return LassoPath(radii.copy(), coefs, results)


# -- the penalized lasso ---------------------------------------------------------
def alpha_max(A: Any, b: Any) -> float:
    """The smallest ``alpha`` for which scikit-learn's ``Lasso(alpha)`` returns 0:
    ``||A^T b||_inf / m``.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
        The design matrix, with at least one row and one column.
    b : array_like, shape (m,)
        The targets.

    Returns
    -------
    float
        ``||A^T b||_inf / m``.

    Raises
    ------
    ShapeError
        When ``A`` is not 2-D or ``b`` does not have its ``m`` entries.
    ValueError
        When ``A`` has no row or no column, or ``A`` or ``b`` is not finite.
    """
    A, b = _check_problem(A, b, "alpha_max")
    _check_not_empty(A, "alpha_max")
    return float(np.abs(A.T @ b).max()) / A.shape[0]


def _check_not_empty(A: Any, where: str) -> None:
    """``||A^T r||_inf / m`` needs a row (a division by m) and a column (a maximum)."""
    if A.shape[0] == 0:
        raise ValueError(f"{where}: `A` has no rows (shape {A.shape}): the penalty "
                         f"||A^T r||_inf / m is not defined for m = 0")
    if A.shape[1] == 0:
        raise ValueError(f"{where}: `A` has no columns (shape {A.shape}): there is no "
                         f"coefficient to penalize")


def penalty_from_radius(A: Any, b: Any, x: np.ndarray) -> float:
    """The penalty ``alpha`` of scikit-learn's ``Lasso`` with the same solution as the
    constrained solution ``x``.

    ``alpha = ||A^T (b - A x)||_inf / m``: the KKT conditions of
    ``1/(2m) ||A x - b||^2 + alpha ||x||_1`` hold at ``x`` with this alpha
    when ``x`` solves the constrained problem on the boundary of the ball.
    Accurate to the solution's accuracy (solve with a small ``tol``).

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
        The design matrix, with at least one row and one column.
    b : array_like, shape (m,)
        The targets.
    x : array_like, shape (n,)
        The constrained solution (e.g. ``solve_lasso(A, b, radius).x``).

    Returns
    -------
    float
        ``||A^T (b - A x)||_inf / m``.

    Raises
    ------
    ShapeError
        When ``A`` is not 2-D, or ``b`` or ``x`` does not have the shape ``A`` gives.
    ValueError
        When ``A`` has no row or no column, or ``A``, ``b`` or ``x`` is not finite.
    """
    A, b = _check_problem(A, b, "penalty_from_radius")
    _check_not_empty(A, "penalty_from_radius")
    x = real_array(x, "penalty_from_radius", "x").reshape(-1)
    if x.shape != (A.shape[1],):
        raise ShapeError(f"penalty_from_radius: `x` has shape {x.shape}, expected "
                         f"({A.shape[1]},)")
    check_finite("penalty_from_radius", "x", x)
    r = b - A @ x
    return float(np.abs(A.T @ r).max()) / A.shape[0]


def radius_from_penalty(A: Any, b: Any, alpha: float, *, tol: float = 1e-12,
                        max_iter: int = 100000) -> tuple[float, np.ndarray]:
    """``(||x_alpha||_1, x_alpha)`` with ``x_alpha`` from scikit-learn's ``Lasso(alpha)``
    (no intercept, tight tolerance).

    Needs scikit-learn.  The constrained problem with this radius has the
    same solution when it is unique.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
        The design matrix.
    b : array_like, shape (m,)
        The targets.
    alpha : float
        The penalty of ``1/(2m) ||A x - b||^2 + alpha ||x||_1``; positive and finite.
    tol : float, default 1e-12
        ``Lasso``'s ``tol`` (its duality-gap tolerance); non-negative.
    max_iter : int, default 100000
        ``Lasso``'s ``max_iter`` (coordinate-descent epochs); at least 1.

    Returns
    -------
    radius : float
        ``||x_alpha||_1``.
    x_alpha : ndarray of shape (n,)
        ``Lasso(alpha).coef_``.

    Raises
    ------
    ShapeError
        When ``A`` is not 2-D or ``b`` does not have its ``m`` entries.
    ValueError
        When ``A`` or ``b`` is not finite, ``alpha`` is not a positive finite number,
        ``tol`` not a non-negative finite one, or ``max_iter`` not a whole number of
        at least 1.
    TypeError
        When ``max_iter`` is not a number.
    """
    from sklearn.linear_model import Lasso

    where = "radius_from_penalty"
    A, b = _check_problem(A, b, where)
    # as_real: np.isfinite(None | "1" | 10**30) raised numpy's TypeError, an array "truth
    # value ambiguous"; tol and max_iter were refused by Lasso, naming Lasso
    a = as_real(alpha)
    if not (math.isfinite(a) and a > 0):
        raise ValueError(f"{where}: `alpha` must be positive and finite, got {alpha!r}")
    if not (math.isfinite(as_real(tol)) and as_real(tol) >= 0):
        raise ValueError(f"{where}: `tol` must be a non-negative number, got {tol!r}")
    iters = check_whole(max_iter, "max_iter", 1, where)
    model = Lasso(alpha=a, fit_intercept=False, tol=as_real(tol), max_iter=iters)
    model.fit(A, b)
    coef = np.asarray(model.coef_, dtype=float)
    return float(np.abs(coef).sum()), coef

"""A scipy-like entry point over every method."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ._numbers import is_real
from .lmo.base import LMO
from .objectives.base import Objective
from .objectives.function import FunctionObjective
from .registry import lookup
from .result import Result

__all__ = ["minimize"]


def minimize(objective: Objective | Callable[[np.ndarray], Any], domain: LMO,
             method: str = "fw", *, jac: Callable[[np.ndarray], np.ndarray] | bool | None = None,
             **options: Any) -> Result:
    """Minimize ``objective`` over ``domain`` with the chosen Frank-Wolfe method.

    Parameters
    ----------
    objective : Objective or callable
        Smooth objective, or (as in :func:`scipy.optimize.minimize`) a plain function
        ``fun(x) -> float`` whose gradient ``jac`` gives: it is wrapped in a
        :class:`~frankwolfe.FunctionObjective` (build that yourself to declare a
        smoothness constant, an exact line search or a cvxpy expression).  Such a
        function is declared convex, FunctionObjective's default: the result's gap,
        ``dual_bound`` and "converged" certify optimality for a convex ``f`` only (a
        local minimum of another reads as optimal; a lower bound that its values
        contradict raises :class:`~frankwolfe.errors.NonConvexError`).  For a
        non-convex ``f`` pass ``FunctionObjective(fun, jac, convex=False)``: the gap
        then measures stationarity.  An answer
        of one entry (``np.array([f])``, a 1x1 array) is read as that entry, as scipy
        reads it; more entries are refused (:class:`~frankwolfe.errors.ShapeError`).
    domain : LMO
        The domain, given by its linear minimization oracle.
    method : str, default "fw"
        One of :func:`~frankwolfe.available_methods` (the names given to
        :func:`~frankwolfe.register`): ``"fw"``, ``"away"``,
        ``"pairwise"``, ``"bpcg"``, ``"bcg"``, ``"dicg"``, ``"rafw"``,
        ``"fcfw"``, ``"compiled_pairwise"``, ``"bcfw"``, ``"cfw"``, ``"bfw"``,
        ``"sfw"``, ``"alm"``, ``"saddle"``, each also by its function's name
        (``"frank_wolfe"``, ``"away_step_frank_wolfe"``,
        ``"block_coordinate_frank_wolfe"``, ...), and the aliases ``"afw"``,
        ``"pfw"``, ``"blended_pairwise"``, ``"decomposition_invariant"``.
    jac : callable or True, optional
        With a plain function ``objective`` (and only then): its gradient
        ``jac(x) -> ndarray`` of ``x``'s shape, or ``True`` when ``objective``
        returns ``(f, gradient)``, as in scipy (which then runs once per point: the
        last point's pair is kept).  Frank-Wolfe methods are first order: a plain
        function without ``jac`` is refused.
    **options
        Passed to the method: ``x0``, ``step_size``, the run keywords of
        :class:`~frankwolfe.options.RunOptions` (``tol``, ``rtol``,
        ``max_iter``, ``time_limit``, ``callback``, ``verbose``,
        ``history_every``, ``progress``; ``"bcfw"`` counts ``max_iter`` in
        passes) and the method's own keywords.  scipy's keywords that are spelled
        otherwise here are refused with the way to say them: ``args`` (wrap ``fun``
        with :func:`functools.partial` or a lambda), ``options`` (pass the keywords
        directly), ``maxiter`` (``max_iter``), ``bounds`` (a
        :class:`~frankwolfe.Box` domain), ``constraints`` (the ``domain``), ``hess``
        and ``hessp`` (first-order methods).

    Returns
    -------
    Result
        ``Result.method`` is the primary name of the method (``"fw"`` for
        ``method="frank_wolfe"``).

    Raises
    ------
    TypeError
        For a scipy keyword the method does not take, a plain function without ``jac``,
        or a function whose answer is no number (text, None; with ``jac=True`` anything
        but a pair ``(f, gradient)``).
    """
    solver = lookup(method)
    _refuse_scipy_keywords(solver, options)
    if isinstance(domain, np.ndarray) or is_real(domain) or (
            isinstance(domain, (list, tuple)) and domain
            and all(is_real(v) for v in domain)):
        # scipy.optimize.minimize(fun, x0, ...): the start in the domain's place
        raise TypeError(f"minimize: the second argument is the domain (an LMO, e.g. "
                        f"fw.ProbabilitySimplex()), got {type(domain).__name__}; a start "
                        "point goes in the keyword x0=...")
    if not isinstance(objective, Objective) and callable(objective):
        objective = _function_objective(objective, jac)
    elif jac is not None and not isinstance(objective, Objective):
        # "int gives its own gradient" sent the caller after `jac`; without `jac` the
        # method says what it takes (alternating methods also take None)
        raise TypeError(f"minimize: `fun` (the objective) must be an Objective or a "
                        f"callable, got {type(objective).__name__}")
    elif jac is not None:
        raise TypeError(f"minimize: `jac` goes with a plain function objective; "
                        f"{type(objective).__name__} gives its own gradient")
    result: Result = solver(objective, domain, **options)
    return result


#: scipy.optimize.minimize's keywords that Frank-Wolfe spells otherwise, with the way here
_FIRST_ORDER = "Frank-Wolfe methods are first order: they use no Hessian; leave it out"
_SCIPY_KEYWORDS = {
    "args": "wrap the extra arguments into the functions, with functools.partial(fun, *args) "
            "or a lambda (and the same for `jac`)",
    "options": "pass the method's keywords directly, e.g. max_iter=..., tol=...",
    "maxiter": "the iteration budget is max_iter=...",
    "bounds": "give the box as the domain, fw.Box(lower, upper)",
    "constraints": "the feasible set is the `domain` argument, an LMO (a linear "
                   "minimization oracle: fw.ProbabilitySimplex, fw.L1Ball, fw.Polytope, ...)",
    "hess": _FIRST_ORDER,
    "hessp": _FIRST_ORDER,
}


def _refuse_scipy_keywords(solver: Callable[..., Any], options: dict[str, Any]) -> None:
    """A ``TypeError`` from minimize for a keyword of scipy's ``minimize`` that the method
    does not take, saying how it is spelled here: the method's own "unexpected keyword
    argument" named an inner function and no way forward."""
    for key in options:
        hint = _SCIPY_KEYWORDS.get(key)
        if hint is None:
            continue
        try:
            param = inspect.signature(solver).parameters.get(key)
        except (TypeError, ValueError):  # pragma: no cover - registered methods have one
            param = None
        if param is None or param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"minimize: scipy's keyword `{key}` is not one of this "
                            f"method's: {hint}")


def _function_objective(fun: Callable[[np.ndarray], Any],
                        jac: Callable[[np.ndarray], np.ndarray] | bool | None
                        ) -> FunctionObjective:
    """scipy's ``(fun, jac)`` as a :class:`FunctionObjective`."""
    if jac is True:
        # raw: FunctionObjective converts them, refusing complex values (float() and
        # np.asarray(..., dtype=float) kept the real part with a mere ComplexWarning)
        pair = _LastPair(fun)
        return FunctionObjective(pair.value, pair.gradient, value_and_gradient=pair)
    if jac is None or jac is False:
        raise TypeError("minimize: a plain function objective needs its gradient: pass "
                        "jac=grad (or jac=True when it returns (f, gradient)); Frank-Wolfe "
                        "methods are first order")
    if not callable(jac):
        raise TypeError(f"minimize: `jac` must be callable or True, got {type(jac).__name__}")

    def checked_fun(x: np.ndarray) -> Any:
        return _checked_value(fun(x), "`fun`")

    def checked_jac(x: np.ndarray) -> Any:
        return _checked_gradient(jac(x), "`jac`")

    return FunctionObjective(checked_fun, checked_jac)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _checked_value(value: Any, who: str) -> Any:
    """``value`` unless it is text or None, which ``float()`` refused with its own message
    ("could not convert string to float: 'a'"), naming neither ``fun`` nor minimize.  The
    rest (numbers, arrays, complex values) FunctionObjective converts and checks."""
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"minimize: {who} must return a real number, got {_shown(value)} "
                        f"({type(value).__name__})")
    return value


def _checked_gradient(gradient: Any, who: str) -> Any:
    """``gradient`` unless it is text or None (numpy's "could not convert string to
    float" named no argument); the rest FunctionObjective converts and checks."""
    text = gradient is None or isinstance(gradient, (str, bytes))
    if not text:
        try:
            text = np.asarray(gradient).dtype.kind in "USV"
        except (TypeError, ValueError):  # ragged: FunctionObjective's conversion says so
            pass
    if text:
        raise TypeError(f"minimize: {who} must return an array of numbers (the gradient), "
                        f"got {_shown(gradient)} ({type(gradient).__name__})")
    return gradient


class _LastPair:
    """``fun(x) -> (f, gradient)`` (scipy's ``jac=True``), called once per point.

    The loop asks for the value and the gradient at a point separately (the value
    first, then the gradient, or both at once); each call ran ``fun`` in full, twice per
    point.  As scipy's ``MemoizeJac`` does, the last point's pair is kept: ``x`` is the
    same point when it equals the kept copy (a copy, since callers may change their
    array in place; taken only when ``fun`` runs), and the gradient is handed out as a
    copy, so that nobody's change to it reaches the next answer.
    """

    def __init__(self, fun: Callable[[np.ndarray], Any]) -> None:
        self.fun = fun
        self._x: np.ndarray | None = None
        self._value: Any = None
        self._gradient: Any = None

    def _at(self, x: Any) -> None:
        """Run ``fun`` unless ``x`` is the last point."""
        x = np.asarray(x)
        last = self._x
        if (last is not None and last.shape == x.shape and last.dtype == x.dtype
                and np.array_equal(last, x)):
            return
        out = self.fun(x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(
                f"minimize: with jac=True `fun` must return the pair (f, gradient), got "
                f"{_shown(out)} ({type(out).__name__})")
        self._value = _checked_value(out[0], "`fun` (its f, with jac=True)")
        gradient = _checked_gradient(out[1], "`fun` (its gradient, with jac=True)")
        self._gradient = gradient.copy() if isinstance(gradient, np.ndarray) else gradient
        self._x = x.copy()

    def value(self, x: np.ndarray) -> Any:
        self._at(x)
        return self._value

    def gradient(self, x: np.ndarray) -> Any:
        self._at(x)
        g = self._gradient
        return g.copy() if isinstance(g, np.ndarray) else g

    def __call__(self, x: np.ndarray) -> tuple[Any, Any]:
        return self.value(x), self.gradient(x)

"""A scipy-like entry point over every method."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

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
        smoothness constant, an exact line search or a cvxpy expression).
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
        returns ``(f, gradient)``, as in scipy.  Frank-Wolfe methods are first
        order: a plain function without ``jac`` is refused.
    **options
        Passed to the method: ``x0``, ``step_size``, the run keywords of
        :class:`~frankwolfe.options.RunOptions` (``tol``, ``rtol``,
        ``max_iter``, ``time_limit``, ``callback``, ``verbose``,
        ``history_every``, ``progress``; ``"bcfw"`` counts ``max_iter`` in
        passes) and the method's own keywords.

    Returns
    -------
    Result
        ``Result.method`` is the primary name of the method (``"fw"`` for
        ``method="frank_wolfe"``).
    """
    solver = lookup(method)
    if not isinstance(objective, Objective) and callable(objective):
        objective = _function_objective(objective, jac)
    elif jac is not None:
        raise TypeError(f"minimize: `jac` goes with a plain function objective; "
                        f"{type(objective).__name__} gives its own gradient")
    result: Result = solver(objective, domain, **options)
    return result


def _function_objective(fun: Callable[[np.ndarray], Any],
                        jac: Callable[[np.ndarray], np.ndarray] | bool | None
                        ) -> FunctionObjective:
    """scipy's ``(fun, jac)`` as a :class:`FunctionObjective`."""
    if jac is True:
        # raw: FunctionObjective converts them, refusing complex values (float() and
        # np.asarray(..., dtype=float) kept the real part with a mere ComplexWarning)
        def value(x: np.ndarray) -> Any:
            return fun(x)[0]

        def gradient(x: np.ndarray) -> Any:
            return fun(x)[1]

        return FunctionObjective(value, gradient,
                                 value_and_gradient=lambda x: _pair(fun(x)))
    if jac is None or jac is False:
        raise TypeError("minimize: a plain function objective needs its gradient: pass "
                        "jac=grad (or jac=True when it returns (f, gradient)); Frank-Wolfe "
                        "methods are first order")
    if not callable(jac):
        raise TypeError(f"minimize: `jac` must be callable or True, got {type(jac).__name__}")
    return FunctionObjective(fun, jac)


def _pair(out: Any) -> tuple[Any, Any]:
    value, gradient = out
    return value, gradient

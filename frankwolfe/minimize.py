"""A scipy-like entry point over every method."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .lmo.base import LMO
from .objectives.base import Objective
from .result import Result

__all__ = ["minimize", "register_method", "available_methods"]

_METHODS: dict[str, Callable[..., Result]] = {}


def register_method(name: str, solver: Callable[..., Result]) -> None:
    """Make ``solver(objective, domain, **options)`` available as ``minimize(method=name)``."""
    _METHODS[name.lower()] = solver


def available_methods() -> list[str]:
    """Names accepted by :func:`minimize`."""
    return sorted(_METHODS)


def minimize(objective: Objective, domain: LMO, method: str = "fw", **options: Any) -> Result:
    """Minimize ``objective`` over ``domain`` with the chosen Frank-Wolfe method.

    Parameters
    ----------
    objective : Objective
        Smooth objective.
    domain : LMO
        The domain, given by its linear minimization oracle.
    method : str, default "fw"
        One of :func:`available_methods`: ``"fw"``, ``"away"``,
        ``"pairwise"``, ``"rafw"``, ``"fcfw"``, ``"bcfw"``, ``"cfw"``,
        ``"bfw"``, ``"saddle"`` (and the aliases ``"frank_wolfe"``,
        ``"afw"``, ``"pfw"``).
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
    try:
        solver = _METHODS[method.lower()]
    except (KeyError, AttributeError):
        raise ValueError(
            f"unknown method {method!r}; available: {', '.join(available_methods())}"
        ) from None
    return solver(objective, domain, **options)

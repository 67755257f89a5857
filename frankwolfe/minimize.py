"""A scipy-like entry point over every method."""

from __future__ import annotations

from typing import Any

from .lmo.base import LMO
from .objectives.base import Objective
from .registry import lookup
from .result import Result

__all__ = ["minimize"]


def minimize(objective: Objective, domain: LMO, method: str = "fw", **options: Any) -> Result:
    """Minimize ``objective`` over ``domain`` with the chosen Frank-Wolfe method.

    Parameters
    ----------
    objective : Objective
        Smooth objective.
    domain : LMO
        The domain, given by its linear minimization oracle.
    method : str, default "fw"
        One of :func:`~frankwolfe.available_methods` (the names given to
        :func:`~frankwolfe.register`): ``"fw"``, ``"away"``,
        ``"pairwise"``, ``"bpcg"``, ``"bcg"``, ``"dicg"``, ``"rafw"``,
        ``"fcfw"``, ``"compiled_pairwise"``, ``"bcfw"``, ``"cfw"``, ``"bfw"``,
        ``"sfw"``, ``"alm"``, ``"saddle"`` (and the aliases ``"frank_wolfe"``,
        ``"afw"``, ``"pfw"``, ``"blended_pairwise"``,
        ``"blended_conditional_gradient"``, ``"decomposition_invariant"``,
        ``"stochastic_frank_wolfe"``, ``"alternating_linear_minimization"``).
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
    result: Result = lookup(method)(objective, domain, **options)
    return result

"""Vanilla (classic) Frank-Wolfe."""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .loop import Variant, run_frank_wolfe

__all__ = ["frank_wolfe"]


class _Vanilla(Variant):
    name = "fw"
    plain = True  # the engine inlines the methods below

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None


@register("fw", "frank_wolfe")
@solver()
def frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | None = None,
    *,
    step_size: str | StepSize | None = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a compact convex set with Frank-Wolfe.

    Each iteration calls the oracle once on the gradient, ``v = LMO(grad f(x))``,
    certifies ``f(x) - f* <= <grad f(x), x - v>`` (the Frank-Wolfe gap) and
    moves to ``x + gamma (v - x)``.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain, given by its linear minimization oracle.
    x0 : ndarray or Atom, optional
        Feasible start; by default a vertex of the domain.
    step_size : str or StepSize, optional
        ``"agnostic"``, ``"short"``, ``"exact"``, ``"adaptive"``, ``"armijo"``
        or a :class:`~frankwolfe.step_size.StepSize`.  Default: ``"exact"``
        when the objective has a closed-form line search, else ``"adaptive"``.

    Returns
    -------
    Result
        ``x``, ``fun``, ``gap`` (certified), ``status``, counters and history.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import frank_wolfe, QuadraticObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = QuadraticObjective(np.eye(3), -y)    # 1/2 ||x - y||^2 + const
    >>> res = frank_wolfe(f, ProbabilitySimplex(), tol=1e-9)
    >>> np.round(res.x, 6)
    array([0.6, 0.4, 0. ])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    return run_frank_wolfe(objective, domain, _Vanilla(), x0, step_size=step_size,
                           options=options)

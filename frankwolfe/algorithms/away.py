"""Away-step Frank-Wolfe (AFW)."""

from __future__ import annotations

import math
from typing import Any, Unpack

import numpy as np

from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import ActiveSetVariant, split_start
from .loop import run_frank_wolfe

__all__ = ["away_step_frank_wolfe"]


class _AwayStep(ActiveSetVariant):
    name = "away"

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        if len(S) == 1:  # x is the single atom: the away direction is zero
            return self.fw_step(v)
        i, a, score = S.away_atom(gradient)
        away_gap = score - g_dot_x
        gamma_max = S.away_gamma_max(i)  # w_a / (1 - w_a)
        if gap >= away_gap or not math.isfinite(gamma_max):
            return self.fw_step(v)
        return Direction.away(a), gamma_max, ("away", a.key, gamma_max)


@register("away", "afw")
@solver()
def away_step_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    lazy: bool = False,
    lazy_tolerance: float = 2.0,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a polytope with away-step Frank-Wolfe.

    The iterate is kept as a convex combination of vertices (an
    :class:`~frankwolfe.ActiveSet`).  Each iteration compares the Frank-Wolfe
    vertex ``v = LMO(g)`` with the away vertex ``a = argmax_{a active} <g, a>``
    and moves along whichever of ``v - x`` and ``x - a`` has the larger gap;
    the away step's largest step ``w_a / (1 - w_a)`` removes ``a`` (a drop
    step).  For a strongly convex objective over a polytope the rate is
    linear (Lacoste-Julien and Jaggi, NeurIPS 2015), where vanilla
    Frank-Wolfe zig-zags at O(1/k) when the optimum lies on a face.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain's linear minimization oracle (a polytope for the linear rate).
    x0 : Atom, ActiveSet or ndarray, optional
        Start: a vertex (an Atom, or an array the oracle returns for ``-x0``), any
        point of a domain with :meth:`~frankwolfe.LMO.decompose` (the simplices, the
        l1 ball, boxes: written as a convex combination of their vertices), or an
        ActiveSet for a warm start (copied).  Default: a vertex.
    lazy, lazy_tolerance
        Lazy oracle calls, as in :func:`~frankwolfe.pairwise_frank_wolfe`: the best
        active atom serves as the Frank-Wolfe vertex while the active set's own gap
        is large enough.
    step_size : str or StepSize, optional
        ``"exact"``, ``"short"``, ``"adaptive"``, ``"agnostic"``, ... as in
        :func:`~frankwolfe.frank_wolfe`; clipped to the step's ``gamma_max``.
    resum_every : int, default 100
        Period of the drift control: renormalize the weights, remove those
        below ``sparsify_tol``, recompute ``x`` from the active set.
    sparsify_tol : float, default 1e-15
        Weight below which an atom is removed by the drift control.

    Returns
    -------
    Result
        As for :func:`~frankwolfe.frank_wolfe`; ``active_set`` is the final
        :class:`~frankwolfe.ActiveSet`, ``extra`` counts the steps
        (``n_fw_steps``, ``n_away_steps``, ``n_drop_steps``, ``n_resyncs``), and
        the history has an ``active_set_size`` column.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import away_step_frank_wolfe, FunctionObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y,
    ...                       exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    >>> res = away_step_frank_wolfe(f, ProbabilitySimplex(dim=3), tol=1e-12)
    >>> np.round(res.x, 6), len(res.active_set)
    (array([0.6, 0.4, 0. ]), 2)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    warm, start = split_start(x0)
    variant = _AwayStep(warm, resum_every, sparsify_tol, lazy, lazy_tolerance)
    return run_frank_wolfe(objective, domain, variant, start, step_size=step_size,
                           options=options)

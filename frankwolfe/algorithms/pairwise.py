"""Pairwise Frank-Wolfe (PFW) and its blended variant (BPFW)."""

from __future__ import annotations

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

__all__ = ["pairwise_frank_wolfe"]


class _Pairwise(ActiveSetVariant):
    name = "pairwise"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 blended: bool) -> None:
        super().__init__(warm, resum_every, sparsify_tol)
        self.blended = bool(blended)

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        scores = S.scores(gradient)
        i = int(np.argmax(scores))
        a = S.atom_at(i)
        if self.blended:
            j = int(np.argmin(scores))
            # local pairwise step while the active set's own gap dominates
            if scores[i] - scores[j] >= gap:
                target = S.atom_at(j)
            else:
                return self.fw_step(v)
        else:
            target = v
        if target.key == a.key:  # zero direction: nothing to transfer
            return self.fw_step(v)
        gamma_max = S.weight_at(i)
        return Direction.pairwise(target, a), gamma_max, ("pairwise", target, a.key, gamma_max)

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        active, extra = super().outputs()
        extra["blended"] = self.blended
        return active, extra


@register("pairwise", "pfw")
@solver()
def pairwise_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    blended: bool = False,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a polytope with pairwise Frank-Wolfe.

    The iterate is kept as a convex combination of vertices (an
    :class:`~frankwolfe.ActiveSet`).  Each iteration moves mass from the away
    vertex ``a = argmax_{a active} <g, a>`` to the Frank-Wolfe vertex
    ``v = LMO(g)`` along ``v - a``, with largest step ``w_a`` (which drops
    ``a``).  Linear rate on polytopes for strongly convex objectives
    (Lacoste-Julien and Jaggi, NeurIPS 2015).

    With ``blended=True`` (blended pairwise, Tsuji, Pokutta and Tanaka, ICML
    2022) the step is a pairwise transfer inside the active set, from ``a``
    to the best active atom ``s = argmin_{a active} <g, a>``, while its local
    gap ``<g, a - s>`` is at least the Frank-Wolfe gap, and a Frank-Wolfe
    step ``v - x`` otherwise; the active set then stays smaller.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain's linear minimization oracle (a polytope for the linear rate).
    x0 : Atom, ActiveSet or ndarray, optional
        Start: a vertex (Atom, or an array the oracle returns for ``-x0``),
        or an ActiveSet for a warm start (copied).  Default: a vertex.
    blended : bool, default False
        Use the blended pairwise rule.
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe`; clipped to ``gamma_max``.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``active_set`` is the final :class:`~frankwolfe.ActiveSet`; ``extra``
        counts the steps (``n_fw_steps``, ``n_pairwise_steps``,
        ``n_drop_steps``, ``n_resyncs``) and records ``blended``; the history
        has ``active_set_size``.  ``method`` is ``"pairwise"`` for both rules.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import pairwise_frank_wolfe, FunctionObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y,
    ...                       exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    >>> res = pairwise_frank_wolfe(f, ProbabilitySimplex(dim=3), tol=1e-12)
    >>> np.round(res.x, 6), sorted(res.active_set.keys)
    (array([0.6, 0.4, 0. ]), [('e', 0), ('e', 1)])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    warm, start = split_start(x0)
    return run_frank_wolfe(objective, domain, _Pairwise(warm, resum_every, sparsify_tol, blended),
                           start, step_size=step_size, options=options)

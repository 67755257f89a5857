"""Pairwise Frank-Wolfe (PFW) and its blended variant (BPFW)."""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from .._numbers import check_flag
from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import ActiveSetVariant, lazy_options, split_start
from .loop import run_frank_wolfe

__all__ = ["pairwise_frank_wolfe", "blended_pairwise_conditional_gradient"]


class _Pairwise(ActiveSetVariant):
    name = "pairwise"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 blended: bool, lazy: bool = False, lazy_tolerance: float = 2.0) -> None:
        super().__init__(warm, resum_every, sparsify_tol, lazy, lazy_tolerance)
        self.blended = check_flag(blended, "blended")

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        scores = self.active_scores(k, gradient)
        i = int(scores.argmax())  # the methods: np.argmax adds a Python-level wrapper
        a = S.atom_at(i)
        if self.blended:
            j = int(scores.argmin())
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
        extra["lazy"] = self.lazy
        return active, extra


@register("pairwise", "pfw")
@solver()
def pairwise_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    blended: bool = False,
    lazy: bool = False,
    lazy_tolerance: float = 2.0,
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
        Start: a vertex (an Atom, or an array the oracle returns for ``-x0``), any
        point of a domain with :meth:`~frankwolfe.LMO.decompose` (the simplices, the
        l1 ball, boxes: written as a convex combination of their vertices), or an
        ActiveSet for a warm start (copied).  Default: a vertex.
    blended : bool, default False
        Use the blended pairwise rule (also :func:`blended_pairwise_conditional_gradient`).
    lazy : bool, default False
        Call the oracle only when no active atom gives enough progress: when the
        active set's pairwise gap is at least ``phi / lazy_tolerance`` (``phi``: an
        estimate of the Frank-Wolfe gap, halved when the oracle's vertex falls
        short of it) the step uses the best active atom.  Such iterations report no
        certified gap (NaN in the history); the returned gap is always certified.
        Pays where the oracle is expensive (Birkhoff, LPs, shortest paths).
    lazy_tolerance : float, default 2.0
        The factor ``K >= 1`` of the lazy test (larger: fewer oracle calls, shorter
        steps between them).
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe`; clipped to ``gamma_max``.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``active_set`` is the final :class:`~frankwolfe.ActiveSet`; ``extra``
        counts the steps (``n_fw_steps``, ``n_pairwise_steps``,
        ``n_drop_steps``, ``n_resyncs``, ``n_lazy_steps``) and records ``blended``
        and ``lazy``; the history
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
    variant = _Pairwise(warm, resum_every, sparsify_tol, blended, lazy, lazy_tolerance)
    return run_frank_wolfe(objective, domain, variant, start, step_size=step_size,
                           options=options)


@register("bpcg", "blended_pairwise")
@solver()
def blended_pairwise_conditional_gradient(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    lazy: bool = True,
    lazy_tolerance: float = 2.0,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Blended pairwise conditional gradient (BPCG), lazy by default.

    Tsuji, Pokutta and Tanaka (ICML 2022): pairwise transfers inside the active
    set, from the away atom to the best active atom, while their local gap
    dominates, and Frank-Wolfe steps otherwise; with ``lazy=True`` (the default,
    FrankWolfe.jl's flagship) the oracle is called only when the local gap falls
    below ``phi / lazy_tolerance``.  The same method as
    ``pairwise_frank_wolfe(blended=True, lazy=lazy)``.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain's linear minimization oracle (a polytope for the linear rate).
    x0 : Atom, ActiveSet or ndarray, optional
        Start, as in :func:`~frankwolfe.pairwise_frank_wolfe`.
    lazy, lazy_tolerance
        As in :func:`~frankwolfe.pairwise_frank_wolfe` (here ``lazy`` defaults to True).
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe`; clipped to ``gamma_max``.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        As :func:`~frankwolfe.pairwise_frank_wolfe`; ``method`` is ``"bpcg"``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Birkhoff, QuadraticObjective, blended_pairwise_conditional_gradient
    >>> rng = np.random.default_rng(0)
    >>> n = 6
    >>> M = rng.standard_normal((n * n, n * n))
    >>> f = QuadraticObjective(M.T @ M / n + np.eye(n * n), rng.standard_normal(n * n))
    >>> res = blended_pairwise_conditional_gradient(f, Birkhoff(n), tol=1e-8)
    >>> str(res.status), bool(res.gap <= 1e-8)
    ('converged', True)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    warm, start = split_start(x0)
    variant = _Pairwise(warm, resum_every, sparsify_tol, True, *lazy_options(lazy, lazy_tolerance))
    variant.name = "bpcg"
    return run_frank_wolfe(objective, domain, variant, start, step_size=step_size,
                           options=options)

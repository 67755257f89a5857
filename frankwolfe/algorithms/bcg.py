"""Blended conditional gradients (BCG): simplex descent over the active set, lazy
Frank-Wolfe steps outside it."""

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
from .active_variant import ActiveSetVariant, lazy_options, split_start
from .loop import run_frank_wolfe

__all__ = ["blended_conditional_gradient"]


class _Blended(ActiveSetVariant):
    """The lazy oracle of :class:`ActiveSetVariant` decides between a simplex descent
    step (no oracle call) and a Frank-Wolfe step."""

    name = "bcg"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 lazy_tolerance: float) -> None:
        super().__init__(warm, resum_every, sparsify_tol, True, lazy_tolerance)
        self.counts["n_descent_steps"] = 0

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        if v.key not in S or len(S) == 1:
            return self.fw_step(v)
        # simplex gradient descent (Braun, Pokutta, Tu, Wright, ICML 2019): the gradient
        # in barycentric coordinates, projected on sum = 0, d = -sum_i (c_i - mean c) a_i
        c = self.active_scores(k, gradient)
        # from differences to the smallest score (exact for close scores, Sterbenz): the
        # mean of c itself carries an error of eps |c|, which near the face's optimum
        # (score differences ~1e-8) would make sum(shift) and the slope's sign rounding
        diff = c - c.min()
        shift = diff - diff.mean()
        # scaled to max |shift| = 1: the slope -sum(shift^2) / max|shift| then shrinks like
        # the local gap, not its square, and stays above rounding down to gaps of ~1e-15
        top = float(np.abs(shift).max())
        if not 0.0 < top < np.inf:
            # every active score equal (a zero direction: x is optimal on its face, and
            # 0 / 0 made the whole shift NaN), or not finite
            return self._no_descent(v)
        shift /= top
        down = shift > 0
        if not down.any():
            # positive entries below the rounding of the mean (subnormal score
            # differences) or underflowed in the scaling: no weight would decrease
            return self._no_descent(v)
        w = S.weights
        ratios = w[down] / shift[down]
        j = int(np.flatnonzero(down)[np.argmin(ratios)])
        gamma_max = float(ratios.min())
        terms = tuple((-float(s), S.atom_at(i)) for i, s in enumerate(shift) if s != 0.0)
        return Direction(0.0, terms), gamma_max, ("descent", shift, j, gamma_max)

    def _no_descent(self, v: Atom) -> tuple[Direction, float, Any]:
        """The Frank-Wolfe step to ``v`` where the active set offers no simplex descent.

        The paper's step when the face's own gap does not pass the lazy test.  The face
        gives no progress, so the next iteration asks the oracle: a lazy ``v`` is the
        best active atom, no certificate, and with ``phi <= 0`` (gaps that rounded to 0 at
        ``tol=0``) the lazy test would otherwise pass on every later iteration.
        """
        self.force_oracle = True
        return self.fw_step(v)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if gamma == 0.0:
            self.force_oracle = True
        if info[0] != "descent":
            super().after_step(direction, gamma, info)
            return
        _, shift, j, gamma_max = info
        self.counts["n_drop_steps"] += self.active.shift_weights(
            -gamma * shift, drop=j if gamma >= gamma_max else None)
        self.counts["n_descent_steps"] += 1
        self.n_steps += 1
        if self.n_steps % self.resum_every == 0:
            self.maintain()


@register("bcg", "blended_conditional_gradient")
@solver()
def blended_conditional_gradient(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    lazy_tolerance: float = 2.0,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a polytope with blended conditional
    gradients.

    Braun, Pokutta, Tu and Wright (ICML 2019): while the active set's own gap
    ``max_a <g, a> - min_s <g, s>`` is at least ``phi / lazy_tolerance`` (``phi``: an
    estimate of the Frank-Wolfe gap), a simplex gradient descent step moves all the
    active weights at once, along the gradient in barycentric coordinates, without
    calling the oracle; otherwise the oracle is called and a Frank-Wolfe step taken,
    and ``phi`` is halved when even the oracle's vertex falls short of it.  Few oracle
    calls, and active sets smaller than pairwise FW's.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain's linear minimization oracle (a polytope).
    x0 : Atom, ActiveSet or ndarray, optional
        Start, as in :func:`~frankwolfe.pairwise_frank_wolfe`.
    lazy_tolerance : float, default 2.0
        The factor ``K >= 1`` of the lazy test.
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe` (a line search; default ``"exact"`` or
        ``"adaptive"``); clipped to the step's ``gamma_max``.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``active_set``; ``extra`` counts ``n_descent_steps``, ``n_fw_steps``,
        ``n_drop_steps`` and ``n_lazy_steps`` (iterations without an oracle call,
        which report no certified gap).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import L1Ball, LeastSquares, blended_conditional_gradient
    >>> rng = np.random.default_rng(0)
    >>> A, b = rng.standard_normal((60, 200)), rng.standard_normal(60)
    >>> res = blended_conditional_gradient(LeastSquares(A, b), L1Ball(3.0, dim=200), tol=1e-8,
    ...                                    max_iter=100000)
    >>> str(res.status), bool(res.n_oracle_calls < res.nit)
    ('converged', True)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    _, lazy_tolerance = lazy_options(True, lazy_tolerance)
    warm, start = split_start(x0)
    return run_frank_wolfe(objective, domain,
                           _Blended(warm, resum_every, sparsify_tol, lazy_tolerance), start,
                           step_size=step_size, options=options)

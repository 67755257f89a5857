"""Open-loop rules: step sizes fixed in advance by the iteration counter.

They need nothing of the objective (no function values, no smoothness constant),
give the O(1/k) rate of Frank-Wolfe on smooth convex problems, and have numba forms
for the compiled drivers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from .._numbers import check_real, check_whole
from ..direction import Direction
from ..objectives.base import Tracker
from .base import StepSize, _slack, _trial_slope

__all__ = ["OpenLoop", "Agnostic", "LogAgnostic", "NonConvexAgnostic", "Monotonic"]


@njit(cache=True, nogil=True)
def _agnostic_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    ell = params[0]
    return min(gamma_max, ell / (t + ell))


class OpenLoop(StepSize):
    """A rule fixed in advance by the iteration counter ``k`` (no reading of ``f``).

    Block-coordinate FW calls it with ``k`` counted in passes (block steps over
    ``n``); the away and pairwise block steps refuse it (their steps need a line
    search).
    """


class Agnostic(OpenLoop):
    """The open-loop rule ``gamma = ell / (k + ell)`` (``ell = 2``: 2/(k+2)).

    Needs no information about the objective; gives the O(1/k) rate.

    Parameters
    ----------
    ell : float, default 2.0
        The constant ``ell``, a finite number > 0 (``1``: ``1 / (k + 1)``).
    """

    def __init__(self, ell: float = 2.0) -> None:
        self.ell = check_real(ell, "ell", "Agnostic", low=0.0, low_open=True)

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        return min(gamma_max, self.ell / (k + self.ell))

    def compiled(self) -> tuple[Any, np.ndarray]:
        return _agnostic_kernel, np.array([self.ell])

    def _params(self) -> dict[str, Any]:
        return {"ell": self.ell}



@njit(cache=True, nogil=True)
def _log_agnostic_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    ell = 2.0 + np.log(t + 1.0)
    return min(gamma_max, ell / (t + ell))


@njit(cache=True, nogil=True)
def _nonconvex_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    return min(gamma_max, params[0] / np.sqrt(t + 1.0))


class LogAgnostic(OpenLoop):
    """The log-adaptive open-loop rule ``gamma = ell_k / (k + ell_k)``,
    ``ell_k = 2 + log(k + 1)``.

    Keeps the O(1/k) rate of ``2/(k+2)`` in general and, as the steps shrink a little
    more slowly, reaches the faster rates that the larger constant ``ell`` of
    :class:`Agnostic` gives on strongly convex sets, without choosing ``ell``
    (S. Pokutta, "The Frank-Wolfe algorithm: a short introduction", 2023; Wirth,
    Kerdreux, Pokutta, AISTATS 2023).
    """

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        ell = 2.0 + np.log(k + 1.0)
        return float(min(gamma_max, ell / (k + ell)))

    def compiled(self) -> tuple[Any, np.ndarray]:
        return _log_agnostic_kernel, np.zeros(1)


class NonConvexAgnostic(OpenLoop):
    """The open-loop rule ``gamma = c / sqrt(k + 1)`` for non-convex objectives.

    With it Frank-Wolfe's smallest gap over the first ``K`` iterations falls as
    O(1/sqrt(K)) on an L-smooth, possibly non-convex objective (Lacoste-Julien,
    "Convergence rate of Frank-Wolfe for non-convex objectives", 2016, whose
    analysis uses the constant step ``1/sqrt(K+1)``; the decreasing form needs no
    horizon).  For a monotone objective sequence wrap it in :class:`Monotonic`.

    Parameters
    ----------
    scale : float, default 1.0
        The constant ``c``, positive.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_real(scale, "scale", "NonConvexAgnostic", low=0.0, low_open=True)

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        return float(min(gamma_max, self.scale / np.sqrt(k + 1.0)))

    def compiled(self) -> tuple[Any, np.ndarray]:
        return _nonconvex_kernel, np.array([self.scale])

    def _params(self) -> dict[str, Any]:
        return {"scale": self.scale}


class Monotonic(OpenLoop):
    """An open-loop rule made monotone: its step times ``2^-N``, where the halving
    count ``N`` grows (and is kept for the later steps) until ``f`` does not increase.

    The monotonic step size of Carderera, Besancon and Pokutta (NeurIPS 2021): with
    :class:`Agnostic` inside it keeps the O(1/k) rate on generalized self-concordant
    objectives (logistic loss, log-barriers), where ``f`` may be infinite outside
    its domain and a plain open-loop step can leave it; a trial point whose value is
    not finite counts as an increase.  Each step costs one or more values of ``f``
    (one once ``N`` has settled).

    A trial value above ``f(x)`` by at most 16 ulps of the run's largest ``|f|`` (none
    absolute, so ``f`` scaled by a power of two gives the same steps; ``f`` near 0 by
    cancellation of large terms rounds in units of those terms) cannot tell whether
    ``f`` increased: the directional derivative decides, ``<grad f(x + gamma d), d> <=
    0`` (still descending at the trial) passing it.  On an objective declared convex,
    any finite trial value above ``f(x)`` is checked so before ``N`` grows: there
    ``<grad f(x + gamma d), d> <= 0`` means ``f`` did not increase (convexity: ``f(x +
    gamma d) - f(x) <= gamma <grad f(x + gamma d), d>``), and the value's excess was
    rounding.  That costs a gradient only for such trials; an accepted trial's gradient
    is the next iteration's.

    Parameters
    ----------
    rule : OpenLoop, default Agnostic()
        The open-loop rule to make monotone (for example :class:`NonConvexAgnostic`).
    max_halvings : int, default 60
        A step still increasing ``f`` after this many halvings is 0.
    """

    uses_trials = True

    def __init__(self, rule: OpenLoop | None = None, max_halvings: int = 60) -> None:
        if rule is not None and not isinstance(rule, OpenLoop):
            raise TypeError(f"Monotonic: `rule` must be an open-loop rule (Agnostic, "
                            f"LogAgnostic, NonConvexAgnostic), got {rule!r}")
        if isinstance(rule, Monotonic):
            raise TypeError("Monotonic: `rule` is already monotonic")
        self.max_halvings = check_whole(max_halvings, "max_halvings", 1, "Monotonic")
        self.rule: OpenLoop = Agnostic() if rule is None else rule
        #: the halvings learnt so far this run (``N``), kept for its later steps
        self.halvings = 0

    def reset(self) -> None:
        super().reset()
        self.halvings = 0
        self.rule.reset()

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        if not slope < 0.0:
            return 0.0
        base = self.rule(k, tracker, direction, slope, gamma_max)
        f0 = tracker.value()
        bound = f0 + _slack(self._value_top(tracker, f0))
        convex = tracker.objective.convex
        while self.halvings <= self.max_halvings:
            gamma = base * 0.5 ** self.halvings
            if gamma <= 0.0:
                return 0.0
            ft = tracker.trial_value(direction, gamma)
            if ft <= f0:  # False for NaN and inf: outside the domain of f counts as up
                return float(gamma)
            if (ft <= bound or convex and math.isfinite(ft)) and \
                    _trial_slope(tracker, direction, gamma) <= 0.0:
                return float(gamma)
            self.halvings += 1
        self.halvings = self.max_halvings
        return 0.0

    def _params(self) -> dict[str, Any]:
        return {"rule": self.rule, "max_halvings": self.max_halvings}

"""Step-size rules.

Each rule is a small object with one method, ``__call__``, returning
``gamma`` in ``[0, gamma_max]`` for a step ``x + gamma d``.  String
shortcuts: ``"agnostic"``, ``"short"``, ``"exact"``, ``"adaptive"``,
``"armijo"``.  The default is ``"exact"`` when the objective has a closed-form
line search, else ``"adaptive"``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numba import njit

from .direction import Direction
from .errors import NonConvexError
from .objectives.base import Tracker

__all__ = [
    "StepSize",
    "Agnostic",
    "ShortStep",
    "ExactStep",
    "Adaptive",
    "Armijo",
    "make_step_size",
]

_EPS = np.finfo(float).eps


def _slack(f: float) -> float:
    """Room for rounding when comparing objective values near ``f``."""
    return 16.0 * _EPS * max(1.0, abs(f))


class StepSize(ABC):
    """A step-size rule."""

    #: whether the rule reads ``f`` or ``grad f`` at trial points
    uses_trials: bool = False

    @abstractmethod
    def __call__(
        self, k: int, tracker: Tracker, direction: Direction, slope: float, gamma_max: float
    ) -> float:
        """Step size for iteration ``k``.

        Parameters
        ----------
        k : int
            Iteration counter (0-based).
        tracker : Tracker
            The current iterate, with cached ``f`` and ``grad f``.
        direction : Direction
            The search direction ``d``.
        slope : float
            ``<grad f(x), d>`` (negative for a descent direction).
        gamma_max : float
            Largest feasible step.
        """

    def reset(self) -> None:
        """Forget state carried between runs (estimates of L)."""

    def compiled(self) -> tuple[Any, np.ndarray] | None:
        """The rule as a numba kernel for compiled drivers, or ``None``.

        ``(kernel, params)`` with ``kernel(params, t, slope, curv, gamma_max) ->
        gamma`` for a step along ``d`` at iteration ``t`` (a float: block-coordinate
        FW counts passes, ``block steps / n``), where ``slope = <grad f(x), d>`` and
        ``curv = d^T H d`` along a line of a quadratic.  The kernel is the same rule
        as :meth:`__call__`.
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@njit(cache=True, nogil=True)
def _agnostic_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    ell = params[0]
    return min(gamma_max, ell / (t + ell))


@njit(cache=True, nogil=True)
def _exact_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    if not slope < 0.0:
        return 0.0
    if curv <= 0.0:  # flat (or, on a nonconvex quadratic, concave) along d: go all the way
        return gamma_max
    return min(gamma_max, -slope / curv)


class Agnostic(StepSize):
    """The open-loop rule ``gamma = ell / (k + ell)`` (``ell = 2``: 2/(k+2)).

    Needs no information about the objective; gives the O(1/k) rate.
    """

    def __init__(self, ell: float = 2.0) -> None:
        if ell <= 0:
            raise ValueError(f"Agnostic: `ell` must be positive, got {ell!r}")
        self.ell = float(ell)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        return min(gamma_max, self.ell / (k + self.ell))

    def compiled(self):
        return _agnostic_kernel, np.array([self.ell])

    def __repr__(self) -> str:
        return f"Agnostic(ell={self.ell:g})"


class ShortStep(StepSize):
    """The short step ``gamma = -<g, d> / (L ||d||^2)``, clipped to ``[0, gamma_max]``.

    Parameters
    ----------
    smoothness : float, optional
        Lipschitz constant L of the gradient; taken from
        ``objective.smoothness`` when omitted.
    """

    def __init__(self, smoothness: float | None = None) -> None:
        if smoothness is not None and not (np.isfinite(smoothness) and smoothness > 0):
            raise ValueError(f"ShortStep: `smoothness` must be positive, got {smoothness!r}")
        self.smoothness = smoothness

    def __call__(self, k, tracker, direction, slope, gamma_max):
        L = self.smoothness if self.smoothness is not None else tracker.objective.smoothness
        if L is None:
            raise ValueError(
                "step_size='short' needs a smoothness constant: give ShortStep(smoothness=L) "
                "or set `smoothness` on the objective"
            )
        if L <= 0 or not np.isfinite(L):
            raise NonConvexError(f"short step: smoothness must be positive and finite, got {L!r}")
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        return float(min(gamma_max, -slope / (L * dd)))

    def __repr__(self) -> str:
        return f"ShortStep(smoothness={self.smoothness!r})"


class ExactStep(StepSize):
    """Exact line search through the objective's closed form, clipped to ``[0, gamma_max]``."""

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if not tracker.has_exact_step:
            raise ValueError(
                f"step_size='exact' needs an objective with exact_step(); "
                f"{type(tracker.objective).__name__} has none (use 'adaptive' or 'short')"
            )
        if slope >= 0:
            return 0.0
        gamma = tracker.exact_step(direction)
        if gamma != gamma:  # NaN (a plain comparison: this runs once per block step)
            raise FloatingPointError("exact line search returned NaN")
        if gamma < 0:
            # A descent direction of a convex function has a non-negative
            # minimizer along it; a negative one means negative curvature.
            if tracker.objective.convex:
                raise NonConvexError(
                    f"exact line search gave gamma={gamma:.3g} < 0 along a descent direction: "
                    "negative curvature on an objective declared convex"
                )
            return 0.0
        return float(min(gamma_max, gamma))

    def compiled(self):
        return _exact_kernel, np.zeros(1)


class Adaptive(StepSize):
    """Backtracking estimate of the local smoothness constant.

    The rule of Pedregosa, Negiar, Askari and Jaggi (AISTATS 2020): try the
    short step with the estimate ``M = eta * L_prev`` and increase ``M`` (by at
    most a factor ``tau``, to the curvature measured by the failed trial when
    that is smaller) until the quadratic upper bound holds.

    Numerical robustness: when the predicted decrease is within a thousand
    ulps of ``f``, comparing values of ``f`` is meaningless, so the same
    quadratic bound is tested through the directional derivative at the
    trial point instead; rounding near convergence can then neither inflate
    ``M`` without bound nor let overlong steps through.  After
    ``max_backtracks`` failures the last trial step is taken and ``M`` is not
    stored.

    Parameters
    ----------
    L0 : float, optional
        Initial estimate; by default estimated from a gradient difference.
    eta, tau : float
        Decrease and increase factors (``eta <= 1 < tau``).
    max_backtracks : int
        Bound on the backtracking loop.
    """

    uses_trials = True

    def __init__(
        self, L0: float | None = None, eta: float = 0.9, tau: float = 2.0, max_backtracks: int = 60
    ) -> None:
        if not (0 < eta <= 1 and tau > 1):
            raise ValueError(f"Adaptive: need 0 < eta <= 1 < tau, got eta={eta}, tau={tau}")
        if L0 is not None and not (np.isfinite(L0) and L0 > 0):
            raise ValueError(f"Adaptive: `L0` must be positive, got {L0!r}")
        self.L0 = L0
        self.eta = float(eta)
        self.tau = float(tau)
        self.max_backtracks = int(max_backtracks)
        self.L: float | None = L0

    def reset(self) -> None:
        self.L = self.L0

    def _initial_estimate(self, tracker: Tracker, direction: Direction, dd: float) -> float:
        eps = 1e-3
        g0 = tracker.gradient()
        g1 = tracker.trial_gradient(direction, eps)
        est = float(np.linalg.norm(g1 - g0) / (eps * np.sqrt(dd)))
        if not np.isfinite(est) or est <= 0:
            est = 1.0
        return est

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        if self.L is None:
            self.L = self._initial_estimate(tracker, direction, dd)
        f0 = tracker.value()
        noise = 4.0 * _EPS * max(1.0, abs(f0))
        M = self.eta * self.L
        gamma = 0.0
        for _ in range(self.max_backtracks):
            gamma = min(gamma_max, -slope / (M * dd))
            if -gamma * slope > 1e3 * noise:
                ft = tracker.trial_value(direction, gamma)
                accept = ft <= f0 + gamma * slope + 0.5 * gamma * gamma * M * dd + noise
            else:
                # The predicted decrease is at the rounding level of f, where
                # comparing f values says nothing: test the same quadratic
                # bound through the directional derivative instead,
                # <grad f(x + gamma d), d> <= slope + gamma M ||d||^2.
                gt = direction.dot(tracker.trial_gradient(direction, gamma), x=tracker.x)
                ft = None
                accept = gt <= slope + gamma * M * dd + 1e-12 * abs(slope)
            if accept:
                self.L = M
                return float(gamma)
            if ft is None:
                M *= self.tau
                continue
            # The failed trial measures the curvature along d; jumping to it
            # (within the usual factor tau) avoids systematically halved steps
            # on quadratics, where it is exact.
            implied = 2.0 * (ft - f0 - gamma * slope) / (gamma * gamma * dd)
            M = min(self.tau * M, max(implied, 1.01 * M)) if np.isfinite(implied) else self.tau * M
        return float(gamma)

    def __repr__(self) -> str:
        return f"Adaptive(L={self.L!r}, eta={self.eta:g}, tau={self.tau:g})"


class Armijo(StepSize):
    """Backtracking on ``f``: shrink ``gamma`` from ``gamma_max`` by ``beta``
    until ``f(x + gamma d) <= f(x) + c gamma <g, d>``.

    Parameters
    ----------
    c : float
        Sufficient-decrease constant in ``(0, 1)``.
    beta : float
        Shrink factor in ``(0, 1)``.
    max_backtracks : int
        Bound on the loop; a step of 0 is returned when it runs out.
    """

    uses_trials = True

    def __init__(self, c: float = 1e-4, beta: float = 0.5, max_backtracks: int = 60) -> None:
        if not (0 < c < 1 and 0 < beta < 1):
            raise ValueError(f"Armijo: need 0 < c < 1 and 0 < beta < 1, got c={c}, beta={beta}")
        self.c = float(c)
        self.beta = float(beta)
        self.max_backtracks = int(max_backtracks)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        f0 = tracker.value()
        slack = _slack(f0)
        gamma = gamma_max
        for _ in range(self.max_backtracks):
            if tracker.trial_value(direction, gamma) <= f0 + self.c * gamma * slope + slack:
                return float(gamma)
            gamma *= self.beta
        return 0.0

    def __repr__(self) -> str:
        return f"Armijo(c={self.c:g}, beta={self.beta:g})"


_SHORTCUTS: dict[str, type[StepSize]] = {
    "agnostic": Agnostic,
    "short": ShortStep,
    "exact": ExactStep,
    "adaptive": Adaptive,
    "armijo": Armijo,
    "backtracking": Armijo,
}


def make_step_size(spec: str | StepSize | None, tracker: Tracker) -> StepSize:
    """Turn a step-size argument into a :class:`StepSize`.

    ``None`` selects ``"exact"`` when the objective offers a closed-form line
    search and ``"adaptive"`` otherwise.
    """
    if spec is None:
        return ExactStep() if tracker.has_exact_step else Adaptive()
    if isinstance(spec, StepSize):
        return spec
    if isinstance(spec, str):
        try:
            cls = _SHORTCUTS[spec.lower()]
        except KeyError:
            raise ValueError(
                f"unknown step_size {spec!r}; choose one of {sorted(_SHORTCUTS)} or pass a StepSize"
            ) from None
        return cls()
    raise TypeError(f"step_size must be a string, a StepSize or None, got {type(spec).__name__}")

"""Line searches: rules that read the objective (a constant, a closed form, values).

:class:`ShortStep` needs the smoothness constant, :class:`ExactStep` the objective's
closed-form line search, :class:`Adaptive` and :class:`Armijo` function values at
trial points.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .._numbers import check_real, check_whole
from ..direction import Direction
from ..errors import NonConvexError
from ..objectives.base import Tracker
from .base import _EPS, _SLACK_ULPS, StepSize, _slack, _trial_slope

__all__ = ["ShortStep", "ExactStep", "Adaptive", "Armijo", "Secant"]

_TINY = np.finfo(float).tiny  # the smallest normal float
_INF = float("inf")


@njit(cache=True, nogil=True)
def _exact_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    if not slope < 0.0:
        return 0.0
    if curv <= 0.0:  # flat (or, on a nonconvex quadratic, concave) along d: go all the way
        return gamma_max
    gamma = -slope / curv
    # a comparison, not min(): numba compiles min for each argument type on a cold start
    return gamma if gamma < gamma_max else gamma_max


def _slope_is_rounding(tracker: Tracker, direction: Direction, slope: float) -> bool:
    """Whether ``|slope|`` is within the rounding of a sum ``<g, d>``: ``n eps |g| |d|``
    for each of two sums of ``n`` terms (Cauchy-Schwarz bounds ``sum |g_i d_i|``).  Only
    read when an exact step comes out negative (O(n) then, never per step)."""
    g = np.asarray(tracker.gradient(), dtype=float).reshape(-1)
    dd = max(float(tracker.direction_sq_norm(direction)), 0.0)
    return bool(abs(slope) <= 2.0 * g.size * _EPS * float(np.linalg.norm(g)) * dd ** 0.5)


class ShortStep(StepSize):
    """The short step ``gamma = -<g, d> / (L ||d||^2)``, clipped to ``[0, gamma_max]``.

    Parameters
    ----------
    smoothness : float, optional
        Lipschitz constant L of the gradient, finite and ``>= 0``; taken from
        ``objective.smoothness`` when omitted.  ``L = 0`` (a linear objective)
        makes every descent step ``gamma_max``.
    """

    def __init__(self, smoothness: float | None = None) -> None:
        self.smoothness = (None if smoothness is None
                           else check_real(smoothness, "smoothness", "ShortStep", low=0.0))

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        L = self.smoothness if self.smoothness is not None else tracker.objective.smoothness
        if L is None:
            raise ValueError(
                "step_size='short' needs a smoothness constant: give ShortStep(smoothness=L) "
                "or set `smoothness` on the objective"
            )
        if not (L >= 0 and np.isfinite(L)):
            raise NonConvexError(f"short step: smoothness must be finite and >= 0, got {L!r}")
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        if L * dd <= 0:  # L = 0 (linear) or an underflow: the step -slope / 0 is infinite
            return float(gamma_max)
        return float(min(gamma_max, -slope / (L * dd)))

    def _params(self) -> dict[str, Any]:
        return {"smoothness": self.smoothness}


class ExactStep(StepSize):
    """Exact line search through the objective's closed form, clipped to ``[0, gamma_max]``."""

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        if not tracker.has_exact_step:
            raise ValueError(
                f"step_size='exact' needs an objective with exact_step(); "
                f"{type(tracker.objective).__name__} has none (use 'adaptive' or 'short')"
            )
        if slope >= 0:
            return 0.0
        gamma = tracker.exact_step(direction)
        if gamma != gamma:  # NaN (a plain comparison: this runs once per block step)
            raise FloatingPointError(f"exact line search returned NaN: "
                                     f"{type(tracker.objective).__name__}.exact_step")
        if gamma < 0:
            # A descent direction of a convex function has a non-negative minimizer
            # along it: a negative one means negative curvature, unless the slope is
            # within rounding of 0, where the caller's <g, d> (e.g. a block's gap) and
            # the objective's own sum may differ in sign (mini-batch BCFW at its optimum)
            if tracker.objective.convex and not _slope_is_rounding(tracker, direction,
                                                                   slope):
                raise NonConvexError(
                    f"exact line search gave gamma={gamma:.3g} < 0 along a descent direction: "
                    "negative curvature on an objective declared convex"
                )
            return 0.0
        return float(gamma if gamma < gamma_max else gamma_max)  # min() without the call

    def compiled(self) -> tuple[Any, np.ndarray]:
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
    ``M`` without bound nor let overlong steps through.  The ulps are relative, with
    no absolute floor (``f`` scaled by a power of two gives the same steps): of ``|f|``
    on an objective declared convex, whose rounding beyond them is measured (below);
    of the run's largest ``|f|`` on other objectives (``f`` near 0 by cancellation of
    large terms rounds in units of those terms).  On an objective declared convex, a
    failed trial implying a curvature above ``tau M`` is checked against the convexity
    bound ``f(x + gamma d) - f(x) <= gamma <grad f(x + gamma d), d>``: values above it
    round by more than the allowance (``f`` near 0 by cancellation of large terms), the
    excess is kept as the allowance of the later steps (``f_rounding``), and the
    derivative test takes over for the rest of the step.  Only a trial whose rise above
    the tangent is within the rounding allowed to ``f`` (``Tracker.rounding`` relative
    to the run's largest ``|f|``, as the loop's tangent check allows) is checked, at the
    cost of a gradient: a larger rise is taken for curvature.  After ``max_backtracks``
    failures the last trial step is taken and ``M`` is not stored.

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
        eta_f = check_real(eta, "eta", "Adaptive", finite=False)
        tau_f = check_real(tau, "tau", "Adaptive", finite=False)
        if not (0 < eta_f <= 1 < tau_f < np.inf):  # False for NaN
            raise ValueError(f"Adaptive: need 0 < eta <= 1 < tau (tau finite), got eta={eta!r}, "
                             f"tau={tau!r}")
        if L0 is not None:
            L0 = check_real(L0, "L0", "Adaptive", low=0.0, low_open=True)
        self.max_backtracks = check_whole(max_backtracks, "max_backtracks", 1, "Adaptive")
        self.L0 = L0
        self.eta = eta_f
        self.tau = tau_f
        #: the estimate of the smoothness constant learnt so far this run
        self.L: float | None = L0
        #: the rounding of f's values seen this run (above the convexity bound), in
        #: units of f: 0 until a failed trial shows it
        self.f_rounding = 0.0

    def reset(self) -> None:
        super().reset()
        self.L = self.L0
        self.f_rounding = 0.0

    def _initial_estimate(self, tracker: Tracker, direction: Direction, dd: float) -> float:
        eps = 1e-3
        g0 = tracker.gradient()
        g1 = tracker.trial_gradient(direction, eps)
        diff = np.asarray(g1 - g0, dtype=float).reshape(-1)
        # the norm squares the entries, which underflow on f scaled by a tiny power of
        # two (the estimate fell back to L = 1, and the steps stalled) and overflow on a
        # huge one; dividing by a power of two near the largest entry first keeps them
        # in range and the estimate exact under power-of-two scalings of f
        top = float(np.max(np.abs(diff))) if diff.size else 0.0
        if not (0.0 < top < np.inf):  # NaN as well
            return 1.0
        shift = int(np.frexp(top)[1])
        est = float(np.ldexp(np.linalg.norm(np.ldexp(diff, -shift)) / (eps * np.sqrt(dd)),
                             shift))
        if not np.isfinite(est) or est <= 0:
            est = 1.0
        return est

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        if self.L is None:
            self.L = self._initial_estimate(tracker, direction, dd)
        f0 = tracker.value()
        convex = tracker.objective.convex
        # the allowance passes trials unchecked, so it is kept small where rounding can
        # be measured: on a convex f, ulps of f0 and the rounding seen above the
        # convexity bound (f_rounding); on another f, which has no such bound, ulps of
        # the run's largest |f| (f near 0 by cancellation of large terms rounds in units
        # of those terms: ulps of f0 alone failed its trials until BCFW ran out of passes)
        top = abs(f0) if convex else self._value_top(tracker, f0)
        noise = max(4.0 * _EPS * top, self.f_rounding)
        rounding = False  # whether this step's values of f were seen to be rounding
        # M shrinks by eta on every accepted step (on a linear objective, whose L is 0, on
        # every step): once it underflowed to 0, -slope / (M dd) raised ZeroDivisionError
        # and M *= tau could never grow it again
        M = max(self.eta * self.L, _TINY)
        gamma = 0.0
        for _ in range(self.max_backtracks):
            gamma = min(gamma_max, -slope / (M * dd)) if M * dd > 0 else gamma_max
            gt = None
            if not rounding and -gamma * slope > 1e3 * noise:
                ft = tracker.trial_value(direction, gamma)
                if ft <= f0 + gamma * slope + 0.5 * gamma * gamma * M * dd + noise:
                    self.L = M
                    return float(gamma)
                # The failed trial measures the curvature along d; jumping to it
                # (within the usual factor tau) avoids systematically halved steps
                # on quadratics, where it is exact.
                rise = ft - f0 - gamma * slope
                implied = 2.0 * rise / (gamma * gamma * dd)
                finite = bool(np.isfinite(implied))
                if convex and finite and implied > self.tau * M and \
                        self._may_be_rounding(tracker, rise, ft, f0):
                    # f(x + gamma d) - f(x) <= gamma <grad f(x + gamma d), d> on a convex
                    # f: values above that bound are rounding (f near 0 by cancellation),
                    # which would inflate M without end; the excess is kept as the noise
                    # allowance of the later steps.  Asked only of a rise that rounding
                    # could make: it costs a gradient, an iteration's worth on most objectives
                    gt = _trial_slope(tracker, direction, gamma)
                    excess = ft - f0 - gamma * gt
                    rounding = excess > 0.0
                    if rounding and excess > self.f_rounding:
                        self.f_rounding = excess
                if not rounding:
                    M = min(self.tau * M, max(implied, 1.01 * M)) if finite else self.tau * M
                    continue
            # The predicted decrease is at the rounding level of f, where
            # comparing f values says nothing: test the same quadratic
            # bound through the directional derivative instead,
            # <grad f(x + gamma d), d> <= slope + gamma M ||d||^2.
            if gt is None:
                gt = _trial_slope(tracker, direction, gamma)
            if gt <= slope + gamma * M * dd + 1e-12 * abs(slope):
                self.L = M
                return float(gamma)
            M *= self.tau
        return float(gamma)

    def _may_be_rounding(self, tracker: Tracker, rise: float, ft: float,
                         f0: float) -> bool:
        """Whether the rounding of ``f``'s values may have made a failed trial's ``rise``
        above the tangent: within ``Tracker.rounding`` (the loop's tangent check's
        allowance) of the run's largest ``|f|`` (``f0``, the value at ``x``, included),
        or of the rounding seen.  Always, for a tracker that declares no rounding (a
        block step's view)."""
        allowed = getattr(tracker, "rounding", None)
        if allowed is None:
            return True
        top = self._value_top(tracker, f0)
        return rise <= max(allowed * (abs(ft) + top), self.f_rounding)

    def _params(self) -> dict[str, Any]:
        return {"L0": self.L0, "eta": self.eta, "tau": self.tau,
                "max_backtracks": self.max_backtracks}


class Armijo(StepSize):
    """Backtracking on ``f``: shrink ``gamma`` from ``gamma_max`` by ``beta``
    until ``f(x + gamma d) <= f(x) + c gamma <g, d>``.

    Numerical robustness: a value within 16 ulps above the bound cannot tell whether
    the condition holds.  The ulps are those of the run's largest ``|f|`` (and of the
    bound), none absolute: ``f`` scaled by a power of two gives the same steps, and
    ``f`` near 0 by cancellation of large terms, which rounds in units of those terms,
    is covered.  Such a trial is decided by the directional derivative, ``<grad f(x +
    gamma d), d> <= c <g, d>``: on an objective declared convex it implies the
    condition (convexity: ``f(x + gamma d) - f(x) <= gamma <grad f(x + gamma d), d>``);
    on others it says the step stops short of where ``f`` stops falling along ``d``
    (passing such trials unchecked took overlong steps that stalled away-step FW).
    Values whose rounding exceeds the allowance show, on a convex ``f``, as two failed
    trials whose secant slopes ``(f(x + gamma d) - f(x)) / gamma`` grow as ``gamma``
    shrinks, which convexity forbids; the remaining trials then use the derivative test
    alone, so rounding can neither reject every step nor let overlong ones through.
    The derivative costs a gradient per such trial (none more when the trial is
    accepted: it is the next iteration's gradient).

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
        c_f = check_real(c, "c", "Armijo", finite=False)
        beta_f = check_real(beta, "beta", "Armijo", finite=False)
        if not (0 < c_f < 1 and 0 < beta_f < 1):  # False for NaN
            raise ValueError(f"Armijo: need 0 < c < 1 and 0 < beta < 1, got c={c!r}, "
                             f"beta={beta!r}")
        self.max_backtracks = check_whole(max_backtracks, "max_backtracks", 1, "Armijo")
        self.c = c_f
        self.beta = beta_f

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        if slope >= 0:
            return 0.0
        f0 = tracker.value()
        # hoisted out of the trials, which on a cheap objective cost little more than
        # this arithmetic.  A trial within 16 ulps of max(top, |bound|) above the bound
        # is near (_slack, inline; top: the run's largest |f|, f0's included); as bound
        # <= f0, |bound| > top only when bound < -top
        c, beta, trial_value = self.c, self.beta, tracker.trial_value
        top = self._value_top(tracker, f0)
        slack0 = _SLACK_ULPS * top
        gamma = gamma_max
        if not tracker.objective.convex:
            # a near trial is decided by the derivative: passed unchecked, overlong steps
            # that raised f by rounding's worth stalled away-step FW near its optimum
            for _ in range(self.max_backtracks):
                bound = f0 + c * gamma * slope
                ft = trial_value(direction, gamma)
                if ft <= bound or (
                        ft <= bound + (_SLACK_ULPS * -bound if bound < -top else slack0)
                        and _trial_slope(tracker, direction, gamma) <= c * slope):
                    return float(gamma)
                gamma *= beta
            return 0.0
        rounding = False  # whether the values of f were seen to be rounding
        secant = _INF  # the secant slope of the last failed trial
        for _ in range(self.max_backtracks):
            if not rounding:
                bound = f0 + c * gamma * slope
                ft = trial_value(direction, gamma)
                if ft <= bound:
                    return float(gamma)
                # a convex f's secant slopes fall as gamma shrinks: a rise is rounding
                s = (ft - f0) / gamma
                if s > secant:
                    rounding = True
                else:
                    secant = s
                    if not ft <= bound + (_SLACK_ULPS * -bound if bound < -top else slack0):
                        gamma *= beta
                        continue
            # the values cannot tell: the derivative bound implies the condition
            if _trial_slope(tracker, direction, gamma) <= c * slope:
                return float(gamma)
            gamma *= beta
        return 0.0

    def _params(self) -> dict[str, Any]:
        return {"c": self.c, "beta": self.beta, "max_backtracks": self.max_backtracks}


_INV_PHI = (np.sqrt(5.0) - 1.0) / 2.0  # 1/golden ratio


class Secant(StepSize):
    """Line search for any differentiable objective: the root of the directional
    derivative ``phi'(gamma) = <grad f(x + gamma d), d>`` on ``[0, gamma_max]``.

    Needs no closed form and no smoothness constant, only gradients at trial points.
    The root is bracketed (``phi'(0) < 0``; the first trial is the previous step,
    then ``gamma_max``) and found by secant steps kept inside the bracket (the
    Illinois variant of regula falsi, superlinear on smooth ``phi``), stopping when
    ``|phi'(gamma)| <= tol * |phi'(0)|``.  When a trial gradient is not finite, or on
    an objective not declared convex when the secant point does not decrease ``f``,
    a golden-section search on the values of ``f`` takes over (a step that does not
    decrease ``f`` is 0).  FrankWolfe.jl made a secant search its default after
    robustness reports on backtracking steps.

    Cost per step: typically 2-5 gradients on smooth problems, at most ``max_iter``
    gradients plus ``max_iter`` values.

    Parameters
    ----------
    tol : float, default 1e-8
        Relative tolerance on the directional derivative, in ``(0, 1)``.
    max_iter : int, default 50
        Bound on the secant (and, separately, the golden-section) iterations.
    """

    uses_trials = True

    def __init__(self, tol: float = 1e-8, max_iter: int = 50) -> None:
        tol = check_real(tol, "tol", "Secant", low=0.0, high=1.0, low_open=True,
                         high_open=True)
        self.max_iter = check_whole(max_iter, "max_iter", 1, "Secant")
        self.tol = float(tol)
        self.last: float | None = None

    def reset(self) -> None:
        super().reset()
        self.last = None

    def __call__(self, k: int, tracker: Tracker, direction: Direction, slope: float,
                 gamma_max: float) -> float:
        if not slope < 0.0 or not gamma_max > 0.0:
            return 0.0
        gamma = self._secant(tracker, direction, slope, gamma_max)
        if gamma is not None and not tracker.objective.convex:
            f0 = tracker.value()
            if not tracker.trial_value(direction, gamma) <= \
                    f0 + _slack(self._value_top(tracker, f0)):
                gamma = None  # a stationary point of phi above phi(0): not a descent step
        if gamma is None:
            gamma = self._golden(tracker, direction, gamma_max)
        if gamma > 0.0:
            self.last = gamma
        return float(gamma)

    def _secant(self, tracker: Tracker, direction: Direction, slope: float,
                gamma_max: float) -> float | None:
        """The bracketed secant search; ``None`` when a derivative is not finite."""
        def dphi(gamma: float) -> float:
            return float(direction.dot(tracker.trial_gradient(direction, gamma), x=tracker.x))

        target = self.tol * -slope
        a, da = 0.0, slope
        b = gamma_max if self.last is None else min(gamma_max, self.last)
        db = dphi(b)
        if db != db or abs(db) == np.inf:
            return None
        if abs(db) <= target:
            return b
        if db < 0.0:  # still descending at the first trial
            if b == gamma_max:
                return gamma_max
            a, da, b = b, db, gamma_max
            db = dphi(b)
            if db != db or abs(db) == np.inf:
                return None
            if db <= target:
                return gamma_max
        side = 0
        for _ in range(self.max_iter):
            c = b - db * (b - a) / (db - da)
            if not a < c < b:  # rounding at the bracket's ends: bisect
                c = 0.5 * (a + b)
            dc = dphi(c)
            if dc != dc or abs(dc) == np.inf:
                return None
            if abs(dc) <= target or b - a <= 4.0 * _EPS * b:
                return c
            if dc > 0.0:
                b, db = c, dc
                if side == -1:
                    da *= 0.5  # Illinois: the end kept twice in a row loses half its weight
                side = -1
            else:
                a, da = c, dc
                if side == 1:
                    db *= 0.5
                side = 1
        return a if -da < db else b

    def _golden(self, tracker: Tracker, direction: Direction, gamma_max: float) -> float:
        """Golden-section search for the minimum of ``f`` on ``[0, gamma_max]``; 0 when
        no point found decreases ``f``."""
        f0 = tracker.value()

        def phi(gamma: float) -> float:
            v = tracker.trial_value(direction, gamma)
            return v if v == v else np.inf

        a, b = 0.0, gamma_max
        c, d = b - _INV_PHI * (b - a), a + _INV_PHI * (b - a)
        fc, fd = phi(c), phi(d)
        for _ in range(self.max_iter):
            if b - a <= self.tol * gamma_max:
                break
            if fc <= fd:
                b, d, fd = d, c, fc
                c = b - _INV_PHI * (b - a)
                fc = phi(c)
            else:
                a, c, fc = c, d, fd
                d = a + _INV_PHI * (b - a)
                fd = phi(d)
        best, fbest = (c, fc) if fc <= fd else (d, fd)
        fmax = phi(gamma_max)
        if fmax < fbest:
            best, fbest = gamma_max, fmax
        return float(best) if fbest < f0 else 0.0

    def _params(self) -> dict[str, Any]:
        return {"tol": self.tol, "max_iter": self.max_iter}


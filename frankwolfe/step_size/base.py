"""The step-rule protocol: :class:`StepSize`, and the rounding slack rules share."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..direction import Direction
from ..objectives.base import Tracker

__all__ = ["StepSize", "checked_step"]

# Python floats, not numpy scalars: the rules' per-trial arithmetic with a numpy scalar
# costs several times the float's, with the same bits
_EPS = float(np.finfo(float).eps)
#: 16 ulps, the unit of :func:`_slack` (hoisted by the loops that compare many trials)
_SLACK_ULPS = 16.0 * _EPS


def _slack(top: float) -> float:
    """Room for rounding when comparing objective values: 16 ulps of ``top``, the run's
    largest ``|f|`` (:meth:`StepSize._value_top`).

    Relative, with no absolute floor: a floor in units of ``f`` (the former
    ``max(1, |f|)``) exceeded the whole change of ``f`` once ``|f| << 1``, so every trial
    passed and the rules' iterates changed with the scale of ``f``; relative, ``f``
    scaled by a power of two gives the same iterates bit for bit.  Relative to the
    run's largest ``|f|``, not to the ``f`` compared: ``f`` near 0 by cancellation of
    large terms rounds in units of those terms (ulps of ``|f|`` alone failed trials by
    rounding until runs stalled).  A trial within the slack is decided through the
    directional derivative (:func:`_trial_slope`), as are, on convex objectives, values
    that round by more still (terms larger than any ``f`` seen).
    """
    return _SLACK_ULPS * top


def _trial_slope(tracker: Tracker, direction: Direction, gamma: float) -> float:
    """``phi'(gamma) = <grad f(x + gamma d), d>``, the directional derivative at a trial.

    On a convex objective ``phi(gamma) - phi(0) <= gamma phi'(gamma)``, so a bound on
    ``phi'(gamma)`` bounds the change of ``f`` without subtracting two values of ``f``
    (whose rounding may exceed the change).  At an accepted trial the tracker keeps the
    gradient for the next iteration.
    """
    return float(direction.dot(tracker.trial_gradient(direction, gamma), x=tracker.x))


class StepSize(ABC):
    """A step-size rule.

    Notes
    -----
    A rule object holds the state of one run: a run resets it when it starts
    (:meth:`reset`) and then updates it every step (the adaptive and monotonic rules'
    estimates, for one).  Runs in turn may reuse one object; runs at the same time
    (threads) must not share one, or each reads the other's state and their answers
    change.  Pass the rule's name (``step_size="adaptive"``, a new object per run) or
    one object per concurrent run.

    ``repr(rule)`` is the constructor's call with all its arguments
    (``Armijo(c=0.0001, beta=0.5, max_backtracks=60)``), which ``eval`` turns back into
    the rule; what a run learnt is read from attributes (``Adaptive.L``,
    ``Monotonic.halvings``, ``SaddleBacktracking.C``).
    """

    #: whether the rule reads ``f`` or ``grad f`` at trial points
    uses_trials: bool = False

    #: (id of a tracker-like object without a record of ``|f|``, the largest ``|f|``
    #: seen at it): :meth:`_value_top`'s own record, for a block step's view
    _view_top: tuple[int, float] | None = None

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
        self._view_top = None

    def _value_top(self, tracker: Any, f: float) -> float:
        """``max(|f|, the run's largest |f|)`` for ``f``, a value at the tracked point:
        the scale of the rounding of ``f``'s values (:func:`_slack`).

        The run's record is the tracker's (:meth:`Tracker.note_value`, which the loop's
        checks read too); a tracker-like object without one (a block step's view) gets
        the rule's own, kept while the rule sees that object.
        """
        note = getattr(tracker, "note_value", None)
        if note is not None:
            return float(note(f))
        a = abs(f)
        seen = self._view_top
        top = seen[1] if seen is not None and seen[0] == id(tracker) else 0.0
        if top < a < math.inf:  # False for NaN: a value not finite is no scale
            top = a
        self._view_top = (id(tracker), top)
        return top

    def compiled(self) -> tuple[Any, np.ndarray] | None:
        """The rule as a numba kernel for compiled drivers, or ``None``.

        ``(kernel, params)`` with ``kernel(params, t, slope, curv, gamma_max) ->
        gamma`` for a step along ``d`` at iteration ``t`` (a float: block-coordinate
        FW counts passes, ``block steps / n``), where ``slope = <grad f(x), d>`` and
        ``curv = d^T H d`` along a line of a quadratic.  The kernel is the same rule
        as :meth:`__call__`.
        """
        return None

    def _params(self) -> dict[str, Any]:
        """The constructor's arguments, as :meth:`__repr__` shows them (a rule with
        parameters lists them all, in the constructor's order)."""
        return {}

    def __repr__(self) -> str:
        # the constructor's call, so that eval(repr(rule)) rebuilds the rule; the state
        # a run learns (estimates of L or C, halving counts) is in attributes of its own
        args = ", ".join(f"{name}={value!r}" for name, value in self._params().items())
        return f"{type(self).__name__}({args})"


def checked_step(rule: Any, gamma: float, gamma_max: float, k: Any) -> float:
    """``gamma``, the answer of ``rule`` at iteration ``k``, checked to lie in ``[0,
    gamma_max]`` (an excess of rounding size is cut to ``gamma_max``).

    A step outside it leaves the domain (``x + gamma d`` with ``gamma > gamma_max``) or
    moves uphill along a descent direction; a user's rule that answered 2 on the simplex
    ended "converged" at an infeasible point with a negative gap.
    """
    if 0.0 <= gamma <= gamma_max:
        return gamma
    if gamma_max < gamma <= gamma_max * (1.0 + 1e-12) + 1e-300:
        return gamma_max
    raise ValueError(f"step size rule {rule!r} answered gamma={gamma!r} at iteration {k}, "
                     f"outside [0, gamma_max={gamma_max!r}]: a step size must keep x in the "
                     f"domain (gamma <= gamma_max) and go along d (gamma >= 0)")

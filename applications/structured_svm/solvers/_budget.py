"""The pass budget the application's own solvers share: oracle calls, counted exactly.

A pass is ``n`` oracle calls: ``n`` max-oracle calls (loss-augmented decodings)
for SSG, ``n`` expectation-oracle calls (forward-backward marginals) for online EG
and the dual extragradient.  Their iterations cost a varying number of calls (a
retried EG step, a rejected extragradient trial), so the budget is kept in calls,
and the driver is told when no iteration fits any more
(:attr:`frankwolfe.algorithms.engine.Observation.budget_spent`).

A time limit is kept inside a pass too (:class:`PassClock`): a pass of SSG or online EG
stops after the example step under way when the budget is spent (a partial pass,
counted in calls like any other), the dual extragradient drops the iteration under way
(its point is the last whole iteration's).

The estimator's translation of ``max_passes`` into the iterations of the core's
BCFW and cutting plane is here too (:func:`bcfw_step_passes`, :func:`cp_iterations`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from frankwolfe import RunOptions
from frankwolfe.monitor import ClockReads, Monitor

__all__ = ["CallBudget", "PassClock", "bcfw_step_passes", "budget_options", "cp_iterations"]

#: seconds of example steps between two clock reads inside a pass (as the core's Python
#: BCFW pass: a read costs little next to a step)
#: (benchmarks/README.md, "Measurements behind code choices")
_CHECK_SECONDS = 0.01
#: example steps before the first read, and at most between two
_CHECK_FIRST, _CHECK_MOST = 8, 4096


class CallBudget:
    """``floor(max_passes * n)`` oracle calls and the count spent.

    Parameters
    ----------
    max_passes : float
        Budget in passes of ``n`` calls (``>= 0``).
    n : int
        Examples.
    name : str
        The solver, for messages.
    """

    def __init__(self, max_passes: float, n: int, name: str) -> None:
        if not (np.isfinite(max_passes) and max_passes >= 0):
            raise ValueError(f"{name}: `max_passes` must be a non-negative number, "
                             f"got {max_passes!r}")
        self.n = int(n)
        self.total = int(np.floor(max_passes * n))
        self.spent = 0

    @property
    def left(self) -> int:
        """Calls still allowed."""
        return self.total - self.spent

    def fits(self, calls: int) -> bool:
        """Whether ``calls`` more calls stay within the budget."""
        return self.spent + calls <= self.total

    @property
    def passes(self) -> float:
        """Effective passes spent (calls / n)."""
        return self.spent / self.n

    def info(self) -> dict[str, float]:
        """The counters as history columns."""
        return {"effective_passes": self.passes, "oracle_calls": self.spent}


#: ``RunOptions``' own ``max_iter``: the one a solver counting passes accepts (it sets it)
_DEFAULT_MAX_ITER = RunOptions().max_iter


def budget_options(run_options: RunOptions | None, max_passes: float, name: str
                   ) -> RunOptions:
    """``run_options`` (default ``RunOptions()``) with the driver's iteration bound taken
    from ``max_passes``: an iteration costs at least one pass, so the call budget always
    ends the run first (or together).  Anything but a ``RunOptions`` (a dict of the run
    keywords failed in ``dataclasses.replace``) is a ``TypeError``, and a ``max_iter`` of
    its own a ``ValueError`` (it was overridden without a word): ``name`` counts its
    budget in ``max_passes``."""
    if run_options is None:
        run_options = RunOptions()
    elif not isinstance(run_options, RunOptions):
        raise TypeError(f"{name}: `run_options` must be a frankwolfe.RunOptions or None, got "
                        f"{type(run_options).__name__}")
    if run_options.max_iter != _DEFAULT_MAX_ITER:
        raise ValueError(f"{name}: `run_options` has max_iter={run_options.max_iter!r}, but "
                         f"{name} counts its budget in `max_passes` (its iterations follow "
                         f"from it): leave max_iter at its default and give max_passes")
    return replace(run_options, max_iter=max(0, math.ceil(max_passes)))


class PassClock:
    """The time limit inside a pass: whether it is spent, with the clock read about every
    ``_CHECK_SECONDS`` of example steps (the interval follows the measured step time).
    :attr:`reserve` seconds are kept for the closing work (a certificate) when set.

    Parameters
    ----------
    monitor : Monitor
        The run's monitor (its time limit; none: :meth:`up` is always False and
        :meth:`chunks` yields the whole order at once).
    """

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor
        self.limited = monitor.time_limit is not None
        #: whether a pass stopped early for the time limit
        self.stopped = False
        #: seconds kept for the run's closing work (the solver measures it)
        self.reserve = 0.0
        self._reads = ClockReads(_CHECK_FIRST, _CHECK_MOST, _CHECK_SECONDS)

    def start(self) -> None:
        """A pass begins (its step counter from 0)."""
        self._reads.start()

    def up(self, done: int) -> bool:
        """Whether to stop the pass, ``done`` example steps in (True once the time limit
        is spent; it then stays so)."""
        if self.stopped:
            return True
        if not self.limited or not self._reads.due(done):
            return False
        self._reads.read(done)
        self.stopped = self.monitor.time_up(self.reserve)
        return self.stopped

    def fits(self, seconds: float) -> bool:
        """Whether ``seconds`` more of work (and the reserve) fit in the time limit; False
        stops the run (:attr:`stopped`)."""
        if self.limited and not self.stopped:
            self.stopped = self.monitor.time_up(seconds + self.reserve)
        return not self.stopped

    def chunks(self, order: np.ndarray) -> Iterator[np.ndarray]:
        """``order`` in consecutive chunks of about ``_CHECK_SECONDS`` of steps each (the
        whole of it without a time limit), ending early when the time limit is spent:
        for compiled kernels that run the steps of a chunk in one call."""
        if not self.limited:
            yield order
            return
        self.start()
        done = 0
        while done < order.size and not self.up(done):
            stop = min(order.size, max(done + 1, self._reads.next))
            yield order[done:stop]
            done = stop


def bcfw_step_passes(max_passes: int, gap_every: int) -> int:
    """Passes of block steps ``P`` whose certificate passes (one every ``gap_every``, and a
    closing one unless ``P`` ends on one) fit with them in ``max_passes`` passes: the
    largest ``P`` with ``P + ceil(P / gap_every) <= max_passes``."""
    steps = max_passes * gap_every // (gap_every + 1)
    while steps + 1 + -(-(steps + 1) // gap_every) <= max_passes:
        steps += 1
    while steps > 0 and steps + -(-steps // gap_every) > max_passes:
        steps -= 1
    return steps


def cp_iterations(max_passes: int, gap_every: int, n: int, cycle: int, per_step: int) -> int:
    """Iterations of the cutting plane (``cycle`` a pass, ``per_step`` blocks each) within
    ``max_passes`` passes of oracle calls.

    ``P`` passes cost ``P n`` calls, plus the closing certificate (``n``: the point
    returned is certified), plus ``n - per_step`` for each certificate every
    ``gap_every`` passes in between (its first iteration calls every block, its own
    blocks among them; none when a pass is one iteration, which certifies itself)."""
    budget, g = max_passes * n, gap_every
    extra = max(0, n - per_step)
    # the largest P with (P + 1) n + ... <= budget, by bisection (max_passes may be huge
    # when time_limit is the budget meant)
    lo, hi = 0, max_passes + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (mid + 1) * n + extra * ((mid - 1) // g) <= budget:
            lo = mid
        else:
            hi = mid
    return lo * cycle

"""The pass budget the application's own solvers share: oracle calls, counted exactly.

A pass is ``n`` oracle calls: ``n`` max-oracle calls (loss-augmented decodings)
for SSG, ``n`` expectation-oracle calls (forward-backward marginals) for online EG
and the dual extragradient.  Their iterations cost a varying number of calls (a
retried EG step, a rejected extragradient trial), so the budget is kept in calls,
and the driver is told when no iteration fits any more
(:attr:`frankwolfe.algorithms.engine.Observation.budget_spent`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from frankwolfe import RunOptions

__all__ = ["CallBudget", "budget_options"]


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


def budget_options(options: RunOptions | None, max_passes: float) -> RunOptions:
    """``options`` (default ``RunOptions()``) with the driver's iteration bound taken from
    ``max_passes``: an iteration costs at least one pass, so the call budget always ends
    the run first (or together)."""
    options = RunOptions() if options is None else options
    return replace(options, max_iter=max(0, math.ceil(max_passes)))

"""The oracles of a round on threads of this process.

Useful when the oracles release the GIL, as numba ``nogil`` kernels do; the
blocks must tolerate concurrent calls.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..atoms import Atom
from .base import _InProcess

__all__ = ["ThreadExecutor", "effective_n_jobs", "cpu_count"]


def cpu_count() -> int:
    """The cores this process may run on (its CPU affinity where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def effective_n_jobs(n_jobs: Any, name: str = "n_jobs") -> int:
    """The number of threads ``n_jobs`` asks for, by scikit-learn's (joblib's) rule.

    Parameters
    ----------
    n_jobs : int or None
        A positive integer is taken as it is; ``-1`` means all cores, ``-2`` all but
        one, and so on (at least one); ``None`` means one.
    name : str, default "n_jobs"
        The argument's name in the error message (a caller's own name for it).

    Returns
    -------
    int
        The number of threads, at least 1.

    Raises
    ------
    ValueError
        When ``n_jobs`` is anything else: 0, a non-integral number, a bool, a string.
    """
    if n_jobs is None:
        return 1
    try:
        ok = not isinstance(n_jobs, (bool, np.bool_)) and int(n_jobs) == n_jobs != 0
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a positive integer or -1 (all cores), got {n_jobs!r}; "
                         f"a negative {name} counts back from all cores as in scikit-learn "
                         f"(-2: all but one)")
    n = int(n_jobs)
    return n if n > 0 else max(1, cpu_count() + 1 + n)



class ThreadExecutor(_InProcess):
    """The oracles split into ``n_jobs`` contiguous chunks, one thread each (one call of
    the domain's batch block oracle per chunk when it offers one).

    Parameters
    ----------
    n_jobs : int, default -1
        Threads, as scikit-learn counts them: ``-1`` one per core, ``-2`` all cores
        but one, and so on.
    """

    name = "threads"

    def __init__(self, n_jobs: int = -1) -> None:
        self.n_jobs = effective_n_jobs(n_jobs)
        self._pool: ThreadPoolExecutor | None = None

    def start(self, blocks: Sequence[Any], indices: Sequence[np.ndarray] | None = None,
              shapes: Sequence[tuple[int, ...]] | None = None) -> None:
        super().start(blocks, indices, shapes)
        if self._pool is None and self.n_jobs > 1:
            self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="frankwolfe-oracle")

    def _cuts(self, m: int) -> list[tuple[int, int]]:
        cuts = np.linspace(0, m, min(self.n_jobs, m) + 1).astype(int)
        return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))

    def map(self, which: Sequence[int], directions: Sequence[np.ndarray]) -> list[Atom]:
        if self._pool is None or len(which) < 2:
            return super().map(which, directions)
        serial = super().map
        futures = [self._pool.submit(serial, which[a:b], directions[a:b])
                   for a, b in self._cuts(len(which))]
        return [atom for f in futures for atom in f.result()]

    def chunks(self, call: Any, which: Sequence[int], arg: Any) -> list[Any]:
        """``call`` on ``n_jobs`` contiguous chunks of ``which`` in the pool, in order (the
        last chunk in the calling thread, which would otherwise wait idle)."""
        if self._pool is None or len(which) < 2:
            return [call(which, arg)]
        cuts = self._cuts(len(which))
        futures = [self._pool.submit(call, which[a:b], arg) for a, b in cuts[:-1]]
        a, b = cuts[-1]
        last = call(which[a:b], arg)
        return [f.result() for f in futures] + [last]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def abort(self) -> None:
        # a second Ctrl-C must not wait for the oracle chunks still running (a hung
        # oracle held it for ever): the queued ones are cancelled, the running ones end
        # on their own and their answers are dropped
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def __repr__(self) -> str:
        return f"ThreadExecutor(n_jobs={self.n_jobs})"

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

__all__ = ["ThreadExecutor"]


def _n_threads(n_jobs: int) -> int:
    if isinstance(n_jobs, bool) or int(n_jobs) != n_jobs or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


class ThreadExecutor(_InProcess):
    """The oracles split into ``n_jobs`` contiguous chunks, one thread each (one call of
    the domain's batch block oracle per chunk when it offers one).

    Parameters
    ----------
    n_jobs : int, default -1
        Threads (``-1``: one per core).
    """

    name = "threads"

    def __init__(self, n_jobs: int = -1) -> None:
        self.n_jobs = _n_threads(n_jobs)
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

    def __repr__(self) -> str:
        return f"ThreadExecutor(n_jobs={self.n_jobs})"

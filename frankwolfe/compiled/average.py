"""The lazy average inside a compiled block step: its typed record and the kernel
that settles a coordinate before a step moves it."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .inner import inner_kernel

__all__ = ["Average", "AverageState", "NO_AVERAGE", "average_touch"]


class AverageState(NamedTuple):
    """The lazy average a compiled pass keeps (the arrays of
    :class:`~frankwolfe.algorithms.bcfw.store.LazyAverage`): ``kind`` 0 (none), 1
    (weighted) or 2 (uniform, or tail's current epoch, summed since iterate ``start``),
    the sums ``acc`` and the step ``since`` which each coordinate was last settled.  The
    pass driver's argument; :class:`Average` is its form inside one step."""

    kind: int
    acc: np.ndarray
    since: np.ndarray
    start: int


class Average(NamedTuple):
    """The lazy average inside a compiled step (the compiled form of
    :class:`~frankwolfe.algorithms.bcfw.store.LazyAverage`): ``kind`` 0 (none), 1
    (weighted), 2 (uniform, or the current epoch of tail: the plain sum since iterate
    ``start``; the doubling trick ends epochs between passes, in Python); ``ck1`` the
    cumulative weight up to step ``k``."""

    kind: int
    acc: np.ndarray
    since: np.ndarray
    start: int
    ck1: float
    k: int


#: the state of a pass without averaging
NO_AVERAGE = AverageState(0, np.zeros(0), np.zeros(0, dtype=np.int64), 0)


@inner_kernel
def _avg_cum(kind, t, start):  # pragma: no cover - compiled
    if kind == 1:  # weighted: weights j for j < t
        return t * (t - 1) / 2.0
    return float(t - start)


@njit(cache=True, nogil=True, inline="always")
def average_touch(avg, x, j):  # pragma: no cover - compiled
    """Settle coordinate ``j`` of the lazy average before step ``avg.k`` moves it
    (touching a coordinate twice in one step adds zero the second time); call it only
    when averaging is on (``avg.kind > 0``)."""
    avg.acc[j] += x[j] * (avg.ck1 - _avg_cum(avg.kind, avg.since[j], avg.start))
    avg.since[j] = avg.k + 1

"""How a compiled pass picks its blocks: the :class:`Picker` record and the sum tree of
gap sampling (one implementation: the Python block order calls the same kernels)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .inner import inner_kernel

__all__ = ["Picker", "order_picker", "tree_set", "gap_pick", "gap_pick_round", "gap_draws",
           "gap_weight"]


class Picker(NamedTuple):
    """How a compiled pass picks its blocks: ``order`` (mode 0), gap sampling from the
    sum tree (mode 1, one uniform number per step from ``unif``) or ``order`` with the
    sum tree kept up to date (mode 2: the blocks of a round, picked by gap sampling)."""

    mode: int
    order: np.ndarray
    unif: np.ndarray
    est: np.ndarray
    tree: np.ndarray
    tsize: int
    degree: float
    nextu: np.ndarray


def order_picker(order: np.ndarray, est: np.ndarray) -> Picker:
    """The :class:`Picker` of the blocks ``order`` taken in turn (mode 0; no sum tree),
    writing their gap estimates into ``est``."""
    return Picker(0, order, np.zeros(0), est, np.zeros(2), 1, 1.0, np.zeros(1, dtype=np.int64))


@njit(cache=True, nogil=True)
def tree_set(tree: np.ndarray, size: int, i: int, v: float) -> None:  # pragma: no cover
    """Set leaf ``i`` to ``v`` and update its ancestors."""
    j = i + size
    tree[j] = v
    j //= 2
    while j >= 1:
        # recompute from children (not a running difference) so rounding
        # errors cannot accumulate over millions of updates
        tree[j] = tree[2 * j] + tree[2 * j + 1]
        j //= 2


@inner_kernel
def _tree_find(tree: np.ndarray, size: int, u: float) -> int:  # pragma: no cover
    j = 1
    while j < size:
        left = tree[2 * j]
        if u < left or tree[2 * j + 1] <= 0.0:
            j = 2 * j
        else:
            u -= left
            j = 2 * j + 1
    return j - size


@inner_kernel
def _uniform_unheld(est: np.ndarray, u: float, n: int) -> int:  # pragma: no cover - compiled
    """Block ``int(u * m)`` of the ``m`` blocks not held out (a held block's estimate is
    ``-0.0``, see :func:`gap_pick_round`), in index order: ``int(u * n)`` when none is
    held; when every block is held, ``int(u * n)``."""
    m = 0
    for j in range(n):
        if not (est[j] == 0.0 and math.copysign(1.0, est[j]) < 0.0):
            m += 1
    if m == 0 or m == n:
        return int(u * n)
    r = int(u * m)
    if r > m - 1:
        r = m - 1
    for j in range(n):
        if not (est[j] == 0.0 and math.copysign(1.0, est[j]) < 0.0):
            if r == 0:
                return j
            r -= 1
    return n - 1


@njit(cache=True, nogil=True)
def gap_pick(tree, size, est, nextu, u, n):  # pragma: no cover - compiled
    """The block of a gap-sampling step: the first unvisited block (estimate ``+inf``,
    cursor ``nextu[0]``), else the leaf of the sum tree holding ``u * total`` (uniform
    over the blocks not held out when every weight is 0: held blocks, estimate ``-0.0``,
    stay out of the picks then too)."""
    while nextu[0] < n and np.isfinite(est[nextu[0]]):
        nextu[0] += 1
    if nextu[0] < n:
        return nextu[0]
    # comparisons, not min(): numba compiles min for each argument type on a cold start
    i = _tree_find(tree, size, u * tree[1]) if tree[1] > 0.0 else _uniform_unheld(est, u, n)
    return i if i < n - 1 else n - 1


@njit(cache=True, nogil=True)
def gap_weight(g, degree):  # pragma: no cover - compiled
    """Sampling weight ``max(g, 0) ** degree`` of a block gap."""
    g = g if g > 0.0 else 0.0
    return g if degree == 1.0 else g ** degree


@njit(cache=True, nogil=True)
def gap_pick_round(tree, size, est, nextu, unif, n, out):  # pragma: no cover
    """The blocks of a mini-batch round by gap sampling, one per number of ``unif``, into
    ``out``: :func:`gap_pick`, each block held out of the rest of the round as it is
    picked (its leaf set to 0: weight 0 at every degree, where ``gap_weight(0, 0)`` is
    1; its estimate to ``-0.0``, which marks it held for the uniform draw of a tree of
    weight 0, until its step writes the new one), the operations of the Python block
    order's ``next`` and ``hold`` in the same order (the same blocks), in one call
    instead of two per block."""
    for a in range(unif.size):
        i = gap_pick(tree, size, est, nextu, unif[a], n)
        out[a] = i
        est[i] = -0.0
        tree_set(tree, size, i, 0.0)


@njit(cache=True, nogil=True)
def gap_draws(tree, size, est, nextu, unif, n, out):  # pragma: no cover - compiled
    """A pass of gap-sampling draws made at once, from the estimates as they are (the
    steps update nothing in between), one per number of ``unif``, into ``out``: the
    unvisited blocks first, each once, in index order (the cursor ``nextu[0]`` passes
    a block as it is drawn), then leaves of the sum tree, with replacement."""
    for a in range(unif.size):
        i = gap_pick(tree, size, est, nextu, unif[a], n)
        out[a] = i
        if not np.isfinite(est[i]):
            nextu[0] = i + 1

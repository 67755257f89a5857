"""A block direction in structured form (scaled data rows plus explicit entries) and
the kernel that moves ``x`` and ``grad f`` along it without materializing it."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .atomic import atomic_add
from .average import average_touch
from .inner import inner_kernel
from .touched import touch

__all__ = ["StructuredDirection", "structured_direction", "apply_direction", "direction_dot",
           "touch_direction"]


class StructuredDirection(NamedTuple):
    """A block direction in a form the core's driver applies without materializing it:

    ``d = sum_a val[a] e_{idx[a]} + sum_r coef[r] P_{base[r]} R[row[r]]``

    with ``R`` a data matrix of the domain and ``P_b`` the placement of a row at
    offset ``b``: for dense rows (``dense``, ``(N, F)``) the coordinates ``b .. b + F -
    1``; for sparse rows (CSR ``rptr``, ``rcol``, ``rval``; ``rval`` empty when every
    stored value is 1) the coordinates ``b + rcol[p]`` of the row's stored entries; for
    categorical rows (``ids``, ``(N, m)``: value ``v > 0`` of column ``j`` is the
    one-hot coordinate ``id_offsets[j] + v - 1``, ``0`` absent) the coordinates ``b +
    id_offsets[j] + ids[r, j] - 1``.  ``counts = (entries, row terms, segments)``;
    ``seg`` lists the distinct offsets of the dense row terms (each range is settled
    in the average once).  One of ``dense`` / ``rptr`` / ``ids`` is nonempty.
    """

    counts: np.ndarray
    idx: np.ndarray
    val: np.ndarray
    row: np.ndarray
    base: np.ndarray
    coef: np.ndarray
    seg: np.ndarray
    dense: np.ndarray
    ids: np.ndarray
    id_offsets: np.ndarray
    rptr: np.ndarray
    rcol: np.ndarray
    rval: np.ndarray


def structured_direction(max_entries: int, max_rows: int, max_segments: int,
                         dense: np.ndarray | None = None, ids: np.ndarray | None = None,
                         id_offsets: np.ndarray | None = None,
                         sparse: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                         ) -> StructuredDirection:
    """Scratch :class:`StructuredDirection` over the rows ``dense``, ``ids`` or ``sparse``
    (CSR ``(ptr, col, val)`` of the rows; ``val`` empty for all-ones values)."""
    if (dense is not None) + (ids is not None) + (sparse is not None) != 1:
        raise ValueError("structured_direction: give exactly one of `dense`, `ids` and "
                         "`sparse`")
    if ids is not None and (id_offsets is None or len(id_offsets) != ids.shape[1]):
        raise ValueError("structured_direction: `ids` needs `id_offsets`, one per column")
    if sparse is not None:
        ptr, col, rval = sparse
        if ptr.size < 2 or (rval.size and rval.size != col.size):
            raise ValueError(f"structured_direction: `sparse` must be CSR rows (ptr, col, "
                             f"val) with at least one row and val empty or of col's size; "
                             f"got {ptr.size} pointers, {col.size} columns, {rval.size} "
                             f"values")
    # the empty placeholders have the types of the real rows (int32 ids and CSR columns,
    # as the chain data makes them): every layout is then one compiled variant
    return StructuredDirection(
        counts=np.zeros(3, dtype=np.int64), idx=np.empty(max_entries, dtype=np.int64),
        val=np.empty(max_entries), row=np.empty(max_rows, dtype=np.int64),
        base=np.empty(max_rows, dtype=np.int64), coef=np.empty(max_rows),
        seg=np.empty(max_segments, dtype=np.int64),
        dense=np.zeros((0, 0)) if dense is None else dense,
        ids=np.zeros((0, 0), dtype=np.int32) if ids is None else ids,
        id_offsets=(np.zeros(0, dtype=np.int64) if id_offsets is None
                    else np.asarray(id_offsets, dtype=np.int64)),
        rptr=np.zeros(0, dtype=np.int64) if sparse is None else sparse[0],
        rcol=np.zeros(0, dtype=np.int32) if sparse is None else sparse[1],
        rval=np.zeros(0) if sparse is None else sparse[2])


@inner_kernel(fastmath=True)
def _axpy2(a, xrow, h, x, g, base, shared):  # pragma: no cover - compiled
    """``x[base + f] += a xrow[f]``, ``g[base + f] += a h[base + f] xrow[f]`` (contiguous:
    vectorized; ``shared``: ``g``'s adds atomic)."""
    if shared:
        for f in range(xrow.size):
            v = a * xrow[f]
            x[base + f] += v
            atomic_add(g, base + f, h[base + f] * v)
        return
    for f in range(xrow.size):
        v = a * xrow[f]
        x[base + f] += v
        g[base + f] += h[base + f] * v


@njit(cache=True, nogil=True, inline="always")
def _move_g(g, p, dv, shared):  # pragma: no cover - compiled
    if shared:
        atomic_add(g, p, dv)
    else:
        g[p] += dv


@njit(cache=True, nogil=True, inline="always")
def apply_direction(sd, gamma, h, x, g, avg, shared=False):  # pragma: no cover - compiled
    """``x += gamma d``, ``g += gamma diag(h) d`` for the :class:`StructuredDirection`
    ``sd``, settling every coordinate of ``d``'s support in the lazy average ``avg``
    (when on) before any moves.  ``shared`` (a constant): other threads write ``g`` at
    the same time (lock-free passes), so its adds are atomic."""
    ne, nr, ns = sd.counts[0], sd.counts[1], sd.counts[2]
    dense = sd.dense.shape[0] > 0
    rptr, rcol, rval = sd.rptr, sd.rcol, sd.rval
    sparse = rptr.size > 0
    ids, ioff = sd.ids, sd.id_offsets
    m = ids.shape[1]
    if avg.kind > 0:
        for a in range(ne):
            average_touch(avg, x, sd.idx[a])
        if dense:
            F = sd.dense.shape[1]
            for q in range(ns):
                b = sd.seg[q]
                for f in range(F):
                    average_touch(avg, x, b + f)
        else:
            for r in range(nr):
                b, row = sd.base[r], sd.row[r]
                if sparse:
                    for p in range(rptr[row], rptr[row + 1]):
                        average_touch(avg, x, b + rcol[p])
                    continue
                for j in range(m):
                    v = ids[row, j]
                    if v != 0:
                        average_touch(avg, x, b + ioff[j] + v - 1)
    for a in range(ne):
        p = sd.idx[a]
        v = gamma * sd.val[a]
        x[p] += v
        _move_g(g, p, h[p] * v, shared)
    ones = rval.size == 0
    for r in range(nr):
        c = gamma * sd.coef[r]
        b, row = sd.base[r], sd.row[r]
        if dense:
            _axpy2(c, sd.dense[row], h, x, g, b, shared)
        elif sparse:  # a row's few stored entries: scattered, but a fraction of F
            for q in range(rptr[row], rptr[row + 1]):
                p = b + rcol[q]
                v = c if ones else c * rval[q]
                x[p] += v
                _move_g(g, p, h[p] * v, shared)
        else:
            for j in range(m):
                v = ids[row, j]
                if v != 0:
                    p = b + ioff[j] + v - 1
                    x[p] += c
                    _move_g(g, p, h[p] * c, shared)


@njit(cache=True, nogil=True, inline="always")
def direction_dot(sd, g):  # pragma: no cover - compiled
    """``<g, d>`` for the :class:`StructuredDirection` ``sd``: the slope of a quadratic
    along ``d`` read at the current ``g`` (lock-free passes, where other threads moved
    ``g`` since the oracle's gap was read)."""
    ne, nr = sd.counts[0], sd.counts[1]
    dense = sd.dense.shape[0] > 0
    rptr, rcol, rval = sd.rptr, sd.rcol, sd.rval
    sparse = rptr.size > 0
    ones = rval.size == 0
    ids, ioff = sd.ids, sd.id_offsets
    m = ids.shape[1]
    s = 0.0
    for a in range(ne):
        s += g[sd.idx[a]] * sd.val[a]
    for r in range(nr):
        b, row = sd.base[r], sd.row[r]
        t = 0.0
        if dense:
            xrow = sd.dense[row]
            for f in range(xrow.size):
                t += g[b + f] * xrow[f]
        elif sparse:
            for q in range(rptr[row], rptr[row + 1]):
                t += g[b + rcol[q]] if ones else g[b + rcol[q]] * rval[q]
        else:
            for j in range(m):
                v = ids[row, j]
                if v != 0:
                    t += g[b + ioff[j] + v - 1]
        s += sd.coef[r] * t
    return s


@inner_kernel
def touch_direction(sd, tr, dx):  # pragma: no cover - compiled
    """List the support of the :class:`StructuredDirection` ``sd`` (what
    :func:`apply_direction` writes) in the :class:`~.touched.Touched` record ``tr``; unless
    ``dx`` is empty, also ``dx += d`` in the same sweep (a joint round's sum of
    directions: ``diag(h) dx`` is formed where it is read, so no second vector)."""
    ne, nr = sd.counts[0], sd.counts[1]
    dense = sd.dense.shape[0] > 0
    rptr, rcol, rval = sd.rptr, sd.rcol, sd.rval
    sparse = rptr.size > 0
    ones = rval.size == 0
    ids, ioff = sd.ids, sd.id_offsets
    m = ids.shape[1]
    add = dx.size > 0
    for a in range(ne):
        p = sd.idx[a]
        touch(tr, p)
        if add:
            dx[p] += sd.val[a]
    for r in range(nr):
        c = sd.coef[r]
        b, row = sd.base[r], sd.row[r]
        if dense:
            xrow = sd.dense[row]
            for f in range(xrow.size):
                touch(tr, b + f)
                if add:
                    dx[b + f] += c * xrow[f]
        elif sparse:
            for q in range(rptr[row], rptr[row + 1]):
                p = b + rcol[q]
                touch(tr, p)
                if add:
                    dx[p] += c if ones else c * rval[q]
        else:
            for j in range(m):
                v = ids[row, j]
                if v != 0:
                    p = b + ioff[j] + v - 1
                    touch(tr, p)
                    if add:
                        dx[p] += c

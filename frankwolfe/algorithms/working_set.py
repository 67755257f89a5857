"""The working-set domain: a product of the convex hulls of stored atoms.

Block ``b`` is the hull of its atoms ``a_j`` (sparse vectors in the flat
coordinates of the iterate, rows ``j`` of a CSR table), its point
``z_b = sum_j w_j a_j`` kept as weights ``w`` on the block's simplex; the
iterate is ``x = sum_b z_b``.  This is the domain of the corrective QP of
fully corrective Frank-Wolfe over a :class:`~frankwolfe.ProductDomain` (the
n-slack cutting plane), and the block machinery of the core runs on it:
the kernels below answer the oracle (the best stored atom), the direction
and the away atom (:class:`~frankwolfe.compiled.PairwiseKernels`); the step
and the updates are the driver's (:func:`~frankwolfe.compiled.compiled_driver`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..compiled import CompiledBlocks, PairwiseKernels

__all__ = ["WorkingSetState", "working_set_blocks"]


class WorkingSetState(NamedTuple):
    """Atom ``j`` is ``(idx, val)[ptr[j]:ptr[j+1]]`` (sorted unique indices); block ``b``
    owns the atoms ``members[bptr[b]:bptr[b+1]]`` with weights ``w`` (updated in place).
    ``scores`` holds ``<g, a_j>`` of the last oracle call of ``j``'s block, ``last`` its
    vertex and away atom, ``work`` / ``mark`` a zeroed scratch vector of the flat length."""

    ptr: np.ndarray
    idx: np.ndarray
    val: np.ndarray
    members: np.ndarray
    bptr: np.ndarray
    w: np.ndarray
    scores: np.ndarray
    last: np.ndarray
    work: np.ndarray
    mark: np.ndarray


@njit(cache=True, nogil=True)
def _ws_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    ptr, aidx, aval, w = state.ptr, state.idx, state.val, state.w
    s_min = np.inf
    jf = -1
    avg = 0.0
    for m in range(state.bptr[i], state.bptr[i + 1]):
        j = state.members[m]
        s = 0.0
        for p in range(ptr[j], ptr[j + 1]):
            s += g[aidx[p]] * aval[p]
        state.scores[j] = s
        if s < s_min:
            s_min = s
            jf = j
        if w[j] > 0.0:
            avg += w[j] * s
    state.last[0] = jf
    nnz = 0
    if want:  # d = a_s - sum_j w_j a_j, gathered through the scratch vector
        work, mark = state.work, state.mark
        for m in range(state.bptr[i], state.bptr[i + 1]):
            j = state.members[m]
            c = (1.0 if j == jf else 0.0) - w[j]
            if c == 0.0:
                continue
            for p in range(ptr[j], ptr[j + 1]):
                r = aidx[p]
                if mark[r] == 0:
                    mark[r] = 1
                    idx[nnz] = r
                    nnz += 1
                work[r] += c * aval[p]
        idx[:nnz].sort()
        for a in range(nnz):
            r = idx[a]
            val[a] = work[r]
            work[r] = 0.0
            mark[r] = 0
    gap = avg - s_min
    return nnz, gap if gap > 0.0 else 0.0, s_min


@njit(cache=True, nogil=True)
def _ws_commit(state, i, gamma):  # pragma: no cover - compiled
    w = state.w
    for m in range(state.bptr[i], state.bptr[i + 1]):
        w[state.members[m]] *= 1.0 - gamma
    w[state.last[0]] += gamma


@njit(cache=True, nogil=True)
def _ws_away(state, i, g, idx, val):  # pragma: no cover - compiled
    w, scores = state.w, state.scores
    jf = state.last[0]
    ja = -1
    s_away = -np.inf
    for m in range(state.bptr[i], state.bptr[i + 1]):
        j = state.members[m]
        if w[j] > 0.0 and scores[j] > s_away:
            s_away = scores[j]
            ja = j
    state.last[1] = ja
    if ja < 0 or ja == jf:
        return 0, 0.0
    # a_s - a_a: merge of two sorted index lists
    ptr, aidx, aval = state.ptr, state.idx, state.val
    p, pe = ptr[jf], ptr[jf + 1]
    q, qe = ptr[ja], ptr[ja + 1]
    nnz = 0
    while p < pe or q < qe:
        if q >= qe or (p < pe and aidx[p] < aidx[q]):
            idx[nnz] = aidx[p]
            val[nnz] = aval[p]
            p += 1
        elif p >= pe or aidx[q] < aidx[p]:
            idx[nnz] = aidx[q]
            val[nnz] = -aval[q]
            q += 1
        else:
            idx[nnz] = aidx[p]
            val[nnz] = aval[p] - aval[q]
            p += 1
            q += 1
        nnz += 1
    return nnz, w[ja]


@njit(cache=True, nogil=True)
def _ws_move(state, i, gamma):  # pragma: no cover - compiled
    w = state.w
    jf, ja = state.last[0], state.last[1]
    if gamma >= w[ja]:  # a drop step: the weight is exactly 0
        w[jf] += w[ja]
        w[ja] = 0.0
    else:
        w[jf] += gamma
        w[ja] -= gamma


def working_set_blocks(ptr: np.ndarray, idx: np.ndarray, val: np.ndarray,
                       members: np.ndarray, bptr: np.ndarray, w: np.ndarray, n: int
                       ) -> tuple[CompiledBlocks, PairwiseKernels]:
    """The compiled kernels of the working-set domain (see :class:`WorkingSetState`;
    ``n`` the flat length).  ``w`` is updated in place."""
    sizes = np.diff(ptr)
    block_nnz = np.add.reduceat(sizes[members], bptr[:-1]) if members.size else np.zeros(1)
    max_nnz = int(min(n, max(2 * int(sizes.max(initial=0)), int(block_nnz.max(initial=0)))))
    state = WorkingSetState(ptr, idx, val, members, bptr, w, np.zeros(ptr.size - 1),
                            np.zeros(2, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=np.int8))
    blocks = CompiledBlocks(_ws_direction, _ws_commit, state, max(max_nnz, 1), start=None)
    return blocks, PairwiseKernels(_ws_away, _ws_move)

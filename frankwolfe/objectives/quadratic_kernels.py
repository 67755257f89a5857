"""Compiled (numba) kernels of quadratic objectives for the block-coordinate drivers.

``1/2 x^T Q x + c^T x`` with a CSR ``Q`` (:func:`csr_quadratic_kernels`) or a
diagonal ``Q`` (:func:`diag_quadratic_line` / :func:`diag_quadratic_update`):
the objective's side of :class:`frankwolfe.compiled.CompiledObjective`
(slope and curvature along a sparse direction, update of ``x`` and ``grad f``),
plus the CSR row products that the Python block hooks of
:class:`~frankwolfe.QuadraticObjective` call.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["csr_rows_dot", "csr_rows_grad", "csr_rows_combination", "quad_sparse_move",
           "AtomImage", "csr_block_quad", "diag_quadratic_line", "diag_quadratic_update",
           "csr_line", "csr_update", "csr_data"]


@njit(cache=True, nogil=True)
def _row_dot_csr(indptr, indices, data, r, x):
    s = 0.0
    for p in range(indptr[r], indptr[r + 1]):
        s += data[p] * x[indices[p]]
    return s


@njit(cache=True, nogil=True)
def _in_sorted(a, v):
    lo, hi = 0, a.size
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo if (lo < a.size and a[lo] == v) else -1


@njit(cache=True, nogil=True)
def csr_rows_dot(indptr, indices, data, rows, x):
    """``(Q @ x)[rows]`` for a CSR ``Q``, O(nnz of the rows)."""
    out = np.empty(rows.size)
    for a in range(rows.size):
        out[a] = _row_dot_csr(indptr, indices, data, rows[a], x)
    return out


@njit(cache=True, nogil=True)
def csr_rows_grad(indptr, indices, data, rows, x, c):  # pragma: no cover - compiled
    """``(Q @ x)[rows] + c[rows]`` for a CSR ``Q``, O(nnz of the rows), in any order of
    ``rows`` (repeats allowed, negative ones counted from the end as numpy counts them).

    Each row sums its stored entries in order from ``0.0`` and then adds ``c``: the
    rounding of ``Q[rows] @ x + c[rows]`` in scipy (its CSR product sums a row the same
    way), without the row extraction's copy and its fixed cost a call whatever the rows
    (benchmarks/README.md, "Measurements behind code choices").
    """
    n = indptr.shape[0] - 1
    out = np.empty(rows.shape[0])
    for a in range(rows.shape[0]):
        r = rows[a]
        if r < 0:
            r += n
        if r < 0 or r >= n:
            raise IndexError("partial_gradient: an index is out of range")
        s = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            s += data[p] * x[indices[p]]
        out[a] = s + c[r]
    return out


@njit(cache=True, nogil=True)
def csr_rows_combination(indptr, indices, data, rows, vals, work, acc, seen):  # pragma: no cover
    """``sum_t vals[t] Q[rows[t], :]`` for a CSR ``Q`` (``Q a`` of a sparse atom ``a`` for a
    symmetric ``Q``; least squares' ``A^T u`` over the rows where ``u`` is non-zero),
    reading at most ``work`` entries of ``Q``, as sorted ``(indices, values)``.

    The rows add up in the order of ``rows``, each entry's term ``Q_rj a_r`` into a
    zeroed accumulator: the rounding of scipy's ``Q[rows].T @ vals``.  ``acc`` and
    ``seen`` are zero n-vectors, left zero again.
    """
    idx = np.empty(work, dtype=np.int64)
    cnt = 0
    for t in range(rows.shape[0]):
        r = rows[t]
        v = vals[t]
        for k in range(indptr[r], indptr[r + 1]):
            j = indices[k]
            if not seen[j]:
                seen[j] = True
                idx[cnt] = j
                cnt += 1
            acc[j] += data[k] * v
    idx = np.sort(idx[:cnt])
    out = np.empty(cnt)
    for t in range(cnt):
        j = idx[t]
        out[t] = acc[j]
        acc[j] = 0.0
        seen[j] = False
    return idx, out


class AtomImage(NamedTuple):
    """An atom's product ``Q a`` as :func:`quad_sparse_move` reads it: ``dense`` (an
    n-vector) or, when ``dense`` is empty, the sparse ``(indices, values)``."""

    dense: np.ndarray
    indices: np.ndarray
    values: np.ndarray


@njit(cache=True, nogil=True)
def quad_sparse_move(g, point, s, scale_x, qa, ga, qb, gb, ia, va, ib,
                     vb):  # pragma: no cover - compiled
    """A quadratic tracker's move ``x <- s x + ga a + gb b`` (sparse atoms) at its
    :class:`~frankwolfe.objectives.product_tracker.QuadPoint` ``point`` ``(p, xf, c)``,
    where the products ``Q a``, ``Q b`` (:class:`AtomImage` ``qa``, ``qb``) may be
    sparse.

    Rounded as :func:`~frankwolfe.objectives.product_tracker._quad_pair_move`:
    ``p_i <- (s p_i + ga (Q a)_i) + gb (Q b)_i`` (the sparse terms added only where they
    are non-zero, and skipped when ``s == 1``: two passes over ``n`` less for a pairwise
    step), ``g = p + c``, ``x *= s`` then the atoms added, and ``<x, p/2 + c>`` summed in
    index order.  Returns ``(<x, p/2 + c>, whether g is finite)``.
    """
    p, xf, c = point
    ma, ma_i, ma_v = qa
    mb, mb_i, mb_v = qb
    n = p.shape[0]
    dense_a = ma.shape[0] == n
    dense_b = mb.shape[0] == n
    if dense_a:
        for i in range(n):
            p[i] = s * p[i] + ga * ma[i]
    elif s != 1.0:
        for i in range(n):
            p[i] = s * p[i]
    if not dense_a:
        for t in range(ma_i.shape[0]):
            p[ma_i[t]] += ga * ma_v[t]
    if dense_b:
        for i in range(n):
            p[i] += gb * mb[i]
    else:
        for t in range(mb_i.shape[0]):
            p[mb_i[t]] += gb * mb_v[t]
    if scale_x:
        for i in range(n):
            xf[i] *= s
    for t in range(ia.shape[0]):
        xf[ia[t]] += ga * va[t]
    for t in range(ib.shape[0]):
        xf[ib[t]] += gb * vb[t]
    finite = True
    acc = 0.0
    for i in range(n):
        t = p[i] + c[i]
        g[i] = t
        if not math.isfinite(t):
            finite = False
        acc += xf[i] * (0.5 * p[i] + c[i])
    return acc, finite


@njit(cache=True, nogil=True)
def csr_block_quad(indptr, indices, data, rows, v):
    """``v^T Q[rows, rows] v`` for a CSR ``Q`` with sorted column indices and sorted ``rows``."""
    curv = 0.0
    for a in range(rows.size):
        r = rows[a]
        s = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            c = indices[p]
            b = a if c == r else _in_sorted(rows, c)  # the diagonal needs no search
            if b >= 0:
                s += data[p] * v[b]
        curv += v[a] * s
    return curv


@njit(cache=True, nogil=True)
def diag_quadratic_line(data, x, g, idx, val, nnz):  # pragma: no cover - compiled
    """``(slope, curv)`` of ``f = 1/2 sum h x^2 + c^T x`` (``data = (h,)``)."""
    h = data[0]
    slope = 0.0
    curv = 0.0
    for a in range(nnz):
        j = idx[a]
        v = val[a]
        slope += g[j] * v
        curv += h[j] * v * v
    return slope, curv


@njit(cache=True, nogil=True)
def diag_quadratic_update(data, x, g, idx, val, nnz, gamma):  # pragma: no cover - compiled
    """``x += gamma d``, ``g += gamma h * d`` for a diagonal quadratic."""
    h = data[0]
    for a in range(nnz):
        j = idx[a]
        v = gamma * val[a]
        x[j] += v
        g[j] += h[j] * v


@njit(cache=True, nogil=True)
def csr_line(data, x, g, idx, val, nnz):  # pragma: no cover - compiled
    """``(slope, curv)`` of ``1/2 x^T Q x + c^T x`` along a direction with sorted indices."""
    indptr, indices, qdata = data
    slope = 0.0
    for a in range(nnz):
        slope += g[idx[a]] * val[a]
    rows = idx[:nnz]
    curv = 0.0
    if nnz > 0 and rows[nnz - 1] - rows[0] == nnz - 1:
        # a contiguous block (the usual Cartesian product): membership is a range check
        r0 = rows[0]
        for a in range(nnz):
            r = rows[a]
            s = 0.0
            for p in range(indptr[r], indptr[r + 1]):
                b = indices[p] - r0
                if 0 <= b < nnz:
                    s += qdata[p] * val[b]
            curv += val[a] * s
        return slope, curv
    return slope, csr_block_quad(indptr, indices, qdata, rows, val)


@njit(cache=True, nogil=True)
def csr_update(data, x, g, idx, val, nnz, gamma):  # pragma: no cover - compiled
    """``x += gamma d`` and ``g += gamma Q d`` (Q symmetric: column j = row j)."""
    indptr, indices, qdata = data
    for a in range(nnz):
        j = idx[a]
        v = gamma * val[a]
        x[j] += v
        for p in range(indptr[j], indptr[j + 1]):
            g[indices[p]] += qdata[p] * v


def csr_data(Q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of a symmetric ``Q`` (any format) as sorted CSR, the
    ``data`` of :func:`csr_line` / :func:`csr_update`."""
    import scipy.sparse as sp

    Q = sp.csr_array(Q)
    if not Q.has_sorted_indices:  # a sorted copy: Q's arrays may be the caller's
        Q = Q.sorted_indices()
    return (np.asarray(Q.indptr, dtype=np.int64), np.asarray(Q.indices, dtype=np.int64),
            np.asarray(Q.data, dtype=float))

"""Compiled (numba) kernels of quadratic objectives for the block-coordinate drivers.

``1/2 x^T Q x + c^T x`` with a CSR ``Q`` (:func:`csr_quadratic_kernels`) or a
diagonal ``Q`` (:func:`diag_quadratic_line` / :func:`diag_quadratic_update`):
the objective's side of :class:`frankwolfe.compiled.CompiledObjective`
(slope and curvature along a sparse direction, update of ``x`` and ``grad f``),
plus the CSR row products that the Python block hooks of
:class:`~frankwolfe.QuadraticObjective` call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["csr_rows_dot", "csr_block_quad", "diag_quadratic_line", "diag_quadratic_update",
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
    Q.sort_indices()
    return (np.asarray(Q.indptr, dtype=np.int64), np.asarray(Q.indices, dtype=np.int64),
            np.asarray(Q.data, dtype=float))

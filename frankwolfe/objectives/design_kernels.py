"""Compiled kernels of a design matrix ``A``: the products a quadratic objective
``1/2 ||A x - b||^2`` needs along coordinate directions.

A :class:`Design` is the typed record of ``A`` and ``b`` handed to numba: a
:class:`DenseDesign` or a :class:`SparseDesign` (scipy.sparse ``A`` in both CSC and CSR
form).  The kernels answer questions about columns of ``A`` (its image ``A e_j``, the
Gram column ``A^T A e_j``, inner products of columns) and recompute ``A x`` and the
gradient exactly.  They hold no step logic: the core's compiled driver
(:mod:`frankwolfe.algorithms.compiled_pairwise`) decides the steps.

The kind of ``A`` is the record's type, not a field: a kernel branches on
``hasattr(D, "A")``, which numba decides while typing, so each kind compiles its own
branches only (else a first sparse lasso compiles the dense ones too, and the other way
round, a visible share of a first run: benchmarks/README.md, "Measurements behind code
choices").  The kernels
here are compiled with :func:`~frankwolfe.compiled.inner.inner_kernel`: other kernels
call them, Python does not.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba.experimental import structref

from .._sparse import issparse
from ..compiled.inner import inner_kernel
from ..compiled.records import RecordRefType

__all__ = ["Design", "DenseDesign", "SparseDesign", "DenseDesignRef", "SparseDesignRef",
           "make_design", "design_ref", "full_work", "column_work",
           "add_gram_column", "column_dot", "add_column", "exact_products", "extend_gram",
           "half_sq_residual"]


class DenseDesign(NamedTuple):
    """A dense ``A`` (``(m, n)``, C-ordered) and ``b`` of ``1/2 ||A x - b||^2``."""

    m: int
    n: int
    A: np.ndarray
    b: np.ndarray


class SparseDesign(NamedTuple):
    """A sparse ``A`` as its CSC arrays ``cp, ci, cd`` and CSR arrays ``rp, ri, rd``
    (``int32`` indices, sorted, no duplicates), and ``b``."""

    m: int
    n: int
    cp: np.ndarray
    ci: np.ndarray
    cd: np.ndarray
    rp: np.ndarray
    ri: np.ndarray
    rd: np.ndarray
    b: np.ndarray


# design_ref tells the two records apart by their lengths (4 and 9)
_DENSE_FIELDS = len(DenseDesign._fields)

#: the record of ``A`` and ``b`` the kernels take: its type says which kind ``A`` is
Design = DenseDesign | SparseDesign


@structref.register
class _DenseDesignType(RecordRefType):
    """A dense design by reference (see :mod:`frankwolfe.compiled.records`)."""


@structref.register
class _SparseDesignType(RecordRefType):
    """A sparse design by reference (see :mod:`frankwolfe.compiled.records`)."""


class DenseDesignRef(structref.StructRefProxy):
    """A :class:`DenseDesign` as the kernels take it (its arrays shared, not copied)."""


class SparseDesignRef(structref.StructRefProxy):
    """A :class:`SparseDesign` as the kernels take it (its arrays shared, not copied)."""


structref.define_proxy(DenseDesignRef, _DenseDesignType, list(DenseDesign._fields))
structref.define_proxy(SparseDesignRef, _SparseDesignType, list(SparseDesign._fields))


def make_design(A: Any, b: np.ndarray, rows: Any = None) -> Design:
    """The :class:`DenseDesign` of a dense ``A``, or the :class:`SparseDesign` of a
    canonical CSC ``A`` with its CSR copy ``rows``."""
    b = np.ascontiguousarray(b, dtype=float)
    m, n = A.shape
    if not issparse(A):
        return DenseDesign(m, n, np.ascontiguousarray(A, dtype=float), b)
    if A.nnz >= 2**31:
        raise ValueError(f"compiled design: A has {A.nnz} non-zeros, more than int32 indices "
                         "address")
    rows = sp.csr_array(A) if rows is None else rows

    def i32(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.int32)

    return SparseDesign(m, n, i32(A.indptr), i32(A.indices),
                        np.ascontiguousarray(A.data, dtype=float), i32(rows.indptr),
                        i32(rows.indices), np.ascontiguousarray(rows.data, dtype=float), b)


@inner_kernel
def design_ref(D):  # pragma: no cover - compiled
    """The reference (:class:`DenseDesignRef` or :class:`SparseDesignRef`) of the record
    ``D``."""
    # the length of a tuple argument is a constant numba prunes the other branch by
    # (hasattr would compile a function for the tuple's type)
    if len(D) == _DENSE_FIELDS:
        return DenseDesignRef(*D)
    return SparseDesignRef(*D)


@inner_kernel
def full_work(D):  # pragma: no cover - compiled
    """Entries of ``A`` read by :func:`exact_products`: the cost of recomputing ``A x``
    and the gradient from scratch."""
    if hasattr(D, "A"):
        return D.m * D.n
    return D.cp[D.n] + D.n


@inner_kernel
def column_work(D, j):  # pragma: no cover - compiled
    """Entries of ``A`` read by :func:`add_gram_column` for column ``j``."""
    if hasattr(D, "A"):
        return D.m * D.n
    w = 0
    for k in range(D.cp[j], D.cp[j + 1]):
        i = D.ci[k]
        w += D.rp[i + 1] - D.rp[i]
    return w


@inner_kernel
def add_gram_column(D, j, c, out):  # pragma: no cover - compiled
    """``out += c A^T A e_j``, through the rows of ``A`` that column ``j`` touches."""
    if hasattr(D, "A"):
        A = D.A
        for i in range(D.m):
            t = c * A[i, j]
            if t != 0.0:
                row = A[i]
                for k in range(D.n):
                    out[k] += t * row[k]
        return
    for k in range(D.cp[j], D.cp[j + 1]):
        i = D.ci[k]
        t = c * D.cd[k]
        for kk in range(D.rp[i], D.rp[i + 1]):
            out[D.ri[kk]] += t * D.rd[kk]


@inner_kernel
def column_dot(D, i, j):  # pragma: no cover - compiled
    """``<A e_i, A e_j>`` (``||A e_j||^2`` for ``i == j``)."""
    s = 0.0
    if hasattr(D, "A"):
        for r in range(D.m):
            s += D.A[r, i] * D.A[r, j]
        return s
    a, ae = D.cp[i], D.cp[i + 1]
    c, ce = D.cp[j], D.cp[j + 1]
    while a < ae and c < ce:  # merge of two sorted row lists
        ra, rc = D.ci[a], D.ci[c]
        if ra == rc:
            s += D.cd[a] * D.cd[c]
            a += 1
            c += 1
        elif ra < rc:
            a += 1
        else:
            c += 1
    return s


@inner_kernel
def add_column(D, j, c, p):  # pragma: no cover - compiled
    """``p += c A e_j``."""
    if hasattr(D, "A"):
        for r in range(D.m):
            p[r] += c * D.A[r, j]
        return
    for k in range(D.cp[j], D.cp[j + 1]):
        p[D.ci[k]] += c * D.cd[k]


@inner_kernel
def exact_products(D, x, support, k, p, g, seen, res):  # pragma: no cover - compiled
    """``p = A x`` (``x`` non-zero only on ``support[:k]``, repeats allowed) and
    ``g = A^T (p - b)``, from scratch; ``seen`` (``(n,)`` booleans) and ``res``
    (``(m,)``) are workspace."""
    # loops, not slices or array expressions: each of those compiles a helper of its
    # own on a cold start (benchmarks/README.md, "First call")
    for i in range(D.m):
        p[i] = 0.0
    for j in range(D.n):
        seen[j] = False
    for t in range(k):
        j = support[t]
        if not seen[j] and x[j] != 0.0:
            seen[j] = True
            add_column(D, j, x[j], p)
    for i in range(D.m):
        res[i] = p[i] - D.b[i]
    if hasattr(D, "A"):
        for c in range(D.n):
            g[c] = 0.0
        for i in range(D.m):
            t = res[i]
            if t != 0.0:
                row = D.A[i]
                for c in range(D.n):
                    g[c] += t * row[c]
        return
    for j in range(D.n):
        s = 0.0
        for kk in range(D.cp[j], D.cp[j + 1]):
            s += D.cd[kk] * res[D.ci[kk]]
        g[j] = s


@inner_kernel
def extend_gram(D, js, pos, first_new, count, G, img):  # pragma: no cover - compiled
    """Fill the rows and columns ``first_new:count`` of ``G[u, v] = <A e_{js[u]}, A e_{js[v]}>``
    (sparse ``A``; ``pos[js[u]] = u``, -1 for the other coordinates; rows ``u < first_new``
    already filled).

    Each new column takes the cheaper of two ways: the rows it touches, restricted to
    the numbered coordinates (reads ``column_work`` entries), or its image ``A e_j``
    against the numbered columns (reads their non-zeros).  ``img`` (``(m,)``) is
    workspace."""
    if count <= first_new:
        return
    for i in range(D.m):
        img[i] = 0.0
    known = 0  # non-zeros of the columns numbered before u
    for u in range(first_new):
        j = js[u]
        known += D.cp[j + 1] - D.cp[j]
    for u in range(first_new, count):
        j = js[u]
        lo, hi = D.cp[j], D.cp[j + 1]
        for v in range(u + 1):
            G[u, v] = 0.0
        if column_work(D, j) <= known + (hi - lo):
            for k in range(lo, hi):
                i = D.ci[k]
                a = D.cd[k]
                for kk in range(D.rp[i], D.rp[i + 1]):
                    v = pos[D.ri[kk]]
                    if v >= 0 and v <= u:
                        G[u, v] += a * D.rd[kk]
        else:
            for k in range(lo, hi):
                img[D.ci[k]] = D.cd[k]
            for v in range(u + 1):
                jv = js[v]
                t = 0.0
                for kk in range(D.cp[jv], D.cp[jv + 1]):
                    t += D.cd[kk] * img[D.ci[kk]]
                G[u, v] = t
            for k in range(lo, hi):
                img[D.ci[k]] = 0.0
        for v in range(u):
            G[v, u] = G[u, v]
        known += hi - lo


@inner_kernel
def half_sq_residual(D, p):  # pragma: no cover - compiled
    """``1/2 ||p - b||^2``."""
    s = 0.0
    for i in range(D.m):
        t = p[i] - D.b[i]
        s += t * t
    return 0.5 * s

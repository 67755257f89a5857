"""Least squares ``1/2 ||A x - b||^2`` with an incremental tracker."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._finite import check_finite
from .._numbers import real_array
from .._sparse import issparse
from ..atoms import Atom
from ..errors import ShapeError
from .atom_cache import DEFAULT_CACHE_BYTES
from .base import Objective, Tracker
from .design_kernels import Design, make_design
from .line import line_minimizer
from .product_tracker import (
    PENDING,
    ProductTracker,
    SparseProduct,
    StoredProducts,
    _comb3,
    _comb_sq_norm,
    _half_sq_dist,
    add_scaled,
    check_tracker_options,
)
from .quadratic import _flat, _point_shape

__all__ = ["LeastSquares", "LeastSquaresTracker"]

#: below this many rows or columns sigma_max comes from the small Gram matrix
_DENSE_SVD_MAX = 1000
#: ``A^T u`` scatters the rows where ``u`` is non-zero while they hold at most this
#: fraction of the non-zeros of ``A``, as a scatter costs more than a gather
#: (benchmarks/README.md, "Measurements behind code choices")
_ROWS_MAX = 0.5
#: ``A^T A a`` is kept sparse when at most this fraction of it is non-zero (sparse ``A``)
_SPARSE_HESS = 0.25


class LeastSquares(Objective):
    r"""The least-squares objective :math:`f(x) = \tfrac12 \|A x - b\|^2`.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
        Design matrix.  A sparse matrix is copied into canonical CSC form
        (repeated entries summed, indices sorted; column slices give the
        products ``A a`` of sparse atoms), so the caller's arrays are never
        changed, and may be read-only.  A dense float64 ``A`` is used by
        reference, not copied (it can be the largest object of the problem):
        changing it in place afterwards leaves the objective inconsistent
        (``A^T b`` and the smoothness are computed once), so build a new one.
    b : array_like, shape (m,)
        Targets (copied).
    shape : tuple of int, optional
        Shape of the points (default ``(n,)``); matrix-shaped points are
        flattened in C order (free for C-contiguous arrays).
    cache_bytes : int, default 256 MB
        Memory budget of each tracker's cache of per-atom products
        ``(A a, A^T A a)``; ``(m + n) * 8`` bytes per atom.
    refresh_every : int, default 500
        A tracker recomputes ``A x`` and the gradient exactly after this
        many incremental moves.
    offset : array_like, shape (n,), optional
        Column offsets ``mu`` subtracted from the design inside the products:
        the objective is ``1/2 ||(A - 1 mu^T) x - b||^2`` (``mu`` the column
        means: a centred design, as an intercept needs) without forming
        ``A - 1 mu^T``, which would be dense for a sparse ``A``; copied.  With an offset
        each iteration recomputes ``A x`` and the gradient (two products with
        ``A``; no incremental tracker, no compiled design).

    Attributes
    ----------
    smoothness : float
        ``sigma_max(A)^2``, the Lipschitz constant of the gradient, computed
        on first access (eigenvalues of the smaller Gram matrix when
        ``min(m, n) <= 1000`` and ``A`` is dense, ARPACK ``svds``
        otherwise).  Assignable.

    Notes
    -----
    ``f`` and ``grad f = A^T (A x - b)`` cost two matrix-vector products.
    During a run, the :class:`LeastSquaresTracker` keeps ``A x`` and the
    gradient and updates them from the cached ``A a`` and ``A^T A a`` of
    each atom: after a step towards a sparse vertex whose products are
    cached, an iteration costs O(m + n) instead of O(mn).  A new atom costs
    one product with ``A`` and one with ``A^T``.

    For a sparse ``A``, ``A a`` is a column slice and ``A^T (A a)`` goes
    through the rows of ``A`` that the column touches (a CSR copy of ``A``,
    made on first use): a new vertex costs the non-zeros of those rows,
    not a product with ``A^T``, and when ``A^T A a`` has few non-zeros it is
    cached as a :class:`~frankwolfe.objectives.product_tracker.SparseProduct`,
    so that a move updates the gradient in O(its non-zeros) plus one copy.  A
    direction combining many sparse atoms (a fully corrective step) costs one
    pass over their columns and one product with ``A^T``, not one n-vector per
    atom.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import LeastSquares, L1Ball, frank_wolfe
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> f = LeastSquares(A, [1.0, 1.0])
    >>> f.value(np.zeros(2))
    1.0
    >>> res = frank_wolfe(f, L1Ball(10.0), tol=1e-10)
    >>> np.round(res.x, 6)
    array([1. , 0.5])
    """

    def __init__(
        self,
        A: Any,
        b: Any,
        *,
        shape: tuple[int, ...] | int | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        refresh_every: int = 500,
        offset: Any = None,
    ) -> None:
        name = "LeastSquares"
        # real_array: a complex A or b lost its imaginary part with a mere ComplexWarning
        A = real_array(A, name, "A", what="a matrix of numbers", sparse=True)
        if issparse(A):
            if A.ndim != 2:
                raise ShapeError(f"{name}: `A` must be a matrix, got shape {A.shape}")
            # a private copy, canonicalised (column slices below assume no repeated
            # entries): in place, sum_duplicates rewrote the arrays the caller shares,
            # and failed on read-only ones
            A = sp.csc_array(A, dtype=float, copy=True)
            A.sum_duplicates()
        elif A.ndim != 2:
            raise ShapeError(f"{name}: `A` must be a 2-D matrix, got shape {A.shape}")
        check_finite(name, "A", A)
        m, n = A.shape
        if n == 0:  # no point to start from: the run failed in numpy's argmax
            raise ShapeError(f"{name}: `A` must have at least one column (one per "
                             f"coordinate of x), got shape {A.shape}")
        b = real_array(b, name, "b")
        if b.shape != (m,):
            raise ShapeError(
                f"{name}: `b` has shape {b.shape}, expected ({m},) to match A {A.shape}"
            )
        check_finite(name, "b", b)
        b = b.copy()  # b.sum() and A^T b are kept: the caller's b may change afterwards
        if offset is not None:
            offset = real_array(offset, name, "offset").copy()
            if offset.shape != (n,):
                raise ShapeError(f"{name}: `offset` has shape {offset.shape}, expected ({n},) "
                                 f"(one per column of A {A.shape})")
            check_finite(name, "offset", offset)
        self.offset: np.ndarray | None = offset
        self.cache_bytes, self.refresh_every = check_tracker_options(
            name, cache_bytes, refresh_every)
        self.A = A
        self.b = b
        self.m, self.n = m, n
        self.shape = _point_shape(name, shape, n)
        self.convex = True
        self.Atb = np.asarray(A.T @ b, dtype=float)
        if offset is not None:  # (A - 1 mu^T)^T b
            self.Atb -= offset * float(b.sum())
        self._smoothness: float | None = None
        self._rows: Any = None
        self._sparse_A = issparse(A)
        self._design: Design | None = None

    @property
    def rows(self) -> Any:
        """``A`` in CSR form (sparse ``A`` only; made once, on first use)."""
        if self._rows is None:
            self._rows = sp.csr_array(self.A)
            self._rows.sort_indices()
        return self._rows

    @property
    def smoothness(self) -> float:
        """``sigma_max(A)^2`` (computed once, lazily)."""
        if self._smoothness is None:
            design = self.A if self.offset is None else self._operator()
            self._smoothness = sigma_max_squared(design)
        return self._smoothness

    @smoothness.setter
    def smoothness(self, value: float | None) -> None:
        self._smoothness = None if value is None else float(value)

    def _operator(self) -> Any:
        """``A - 1 mu^T`` (the offset design) as a scipy ``LinearOperator``."""
        from scipy.sparse.linalg import LinearOperator

        A, mu = self.A, self.offset
        assert mu is not None
        return LinearOperator(
            A.shape, dtype=float,
            matvec=lambda v: self._times(np.ravel(v)),
            rmatvec=lambda r: self._times_t(np.ravel(r)))

    def _times(self, v: np.ndarray) -> np.ndarray:
        """``(A - 1 mu^T) v`` (``A v`` without an offset)."""
        out = np.asarray(self.A @ v, dtype=float)
        return out if self.offset is None else out - float(np.dot(self.offset, v))

    def _times_t(self, r: np.ndarray) -> np.ndarray:
        """``(A - 1 mu^T)^T r``."""
        out = np.asarray(self.A.T @ r, dtype=float)
        return out if self.offset is None else out - self.offset * float(r.sum())

    # -- evaluation ---------------------------------------------------------------
    def residual(self, x: np.ndarray) -> np.ndarray:
        """``A x - b`` (with the offset: ``(A - 1 mu^T) x - b``)."""
        return self._times(_flat("LeastSquares", x, self.n)) - self.b

    def value(self, x: np.ndarray) -> float:
        r = self.residual(x)
        return 0.5 * float(np.dot(r, r))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return self._times_t(self.residual(x)).reshape(x.shape)

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.asarray(x, dtype=float)
        r = self.residual(x)
        return 0.5 * float(np.dot(r, r)), self._times_t(r).reshape(x.shape)

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        """Unclipped minimizer ``-<g, d> / ||A d||^2`` of ``f(x + gamma d)``.

        Returns ``+inf`` when ``A d = 0`` and ``<g, d> < 0`` (the step-size
        rule clips it to ``gamma_max``).
        """
        d = _flat("LeastSquares.exact_step", direction, self.n)
        g = _flat("LeastSquares.exact_step", gradient, self.n)
        Ad = self._times(d)
        curv = float(np.dot(Ad, Ad))
        return float(line_minimizer(float(np.dot(g, d)), curv, curv, True, "LeastSquares"))

    def compiled_design(self) -> Design:
        """``A`` and ``b`` as the typed record of the compiled kernels
        (:mod:`frankwolfe.objectives.design_kernels`; made once, on first use)."""
        if self.offset is not None:
            raise NotImplementedError("LeastSquares with an `offset` has no compiled design "
                                      "(use a method of the Python loop, e.g. pairwise)")
        if self._design is None:
            self._design = make_design(self.A, self.b, self.rows if self._sparse_A else None)
        return self._design

    def tracker(self, x: np.ndarray) -> Tracker:
        """A :class:`LeastSquaresTracker` at ``x`` (copied); with an ``offset``, the plain
        :class:`~frankwolfe.objectives.base.Tracker`."""
        if self.offset is not None:
            return Tracker(self, x)
        return LeastSquaresTracker(self, x, cache_bytes=self.cache_bytes,
                                   refresh_every=self.refresh_every)

    def to_cvxpy(self, x_expr: Any) -> Any:
        """The cvxpy expression ``0.5 * sum_squares(A x - b)`` (C-order vec for matrices)."""
        import cvxpy as cp

        x = cp.vec(x_expr, order="C") if len(x_expr.shape) > 1 else x_expr
        if self.offset is not None:
            return 0.5 * cp.sum_squares(self.A @ x - self.offset @ x - self.b)
        return 0.5 * cp.sum_squares(self.A @ x - self.b)

    def __repr__(self) -> str:
        kind = "sparse" if issparse(self.A) else "dense"
        offset = "" if self.offset is None else ", offset"
        return f"LeastSquares(m={self.m}, n={self.n}, {kind}{offset})"


class LeastSquaresTracker(ProductTracker):
    """Tracker of :class:`LeastSquares`: keeps ``A x`` and ``grad f``; caches
    ``(A a, A^T A a)`` per atom.

    A move along ``d = x_coef x + sum c_i a_i`` updates
    ``A x <- (1 + gamma x_coef) A x + gamma sum c_i A a_i`` (O(m)) and
    ``grad <- grad + gamma (x_coef (grad + A^T b) + sum c_i A^T A a_i)`` (O(n));
    the value comes from the residual (O(m)) and the exact step is
    ``-<g, d> / ||A d||^2`` with ``A d`` from the same products.
    Counters are described in :mod:`frankwolfe.objectives.product_tracker`.

    For a sparse ``A``, ``A^T A a`` is computed through the rows of ``A``
    where ``A a`` is non-zero, and a direction of many sparse atoms (a
    corrective step) gets ``A d`` from one pass over their columns and
    ``H d`` from one product with ``A^T`` (see :class:`LeastSquares`).
    """

    objective: LeastSquares

    def __init__(self, objective: LeastSquares, x: np.ndarray, **options: Any) -> None:
        self._sparse = issparse(objective.A)
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None  # zeroed n-vectors
        super().__init__(objective, x, **options)

    def _recompute(self) -> None:
        obj = self.objective
        self._p = np.asarray(obj.A @ self._xf, dtype=float)
        r = self._p - obj.b
        self._f = 0.5 * float(np.dot(r, r))
        self._gf = np.asarray(obj.A.T @ r, dtype=float)

    def _compute_atom_products(self, atom: Atom) -> StoredProducts:
        obj = self.objective
        A = obj.A
        if atom.is_sparse:
            Aa = _column_combination(A, atom.indices, atom.values)
        else:
            Aa = np.asarray(A @ atom.to_dense().reshape(-1), dtype=float)
        if self._sparse:  # A^T (A a) through the rows A a touches: no product with A^T
            return Aa, self._sparse_hessian_product(Aa)
        return Aa, np.asarray(A.T @ Aa, dtype=float)

    def _sparse_hessian_product(self, u: np.ndarray) -> np.ndarray | SparseProduct:
        """``A^T u`` (sparse ``A``) as a :class:`SparseProduct` when it has few non-zeros."""
        rows = self.objective.rows
        touched = np.flatnonzero(u)
        work = int(np.sum(rows.indptr[touched + 1] - rows.indptr[touched]))
        n = self.objective.n
        if work > _SPARSE_HESS * n:  # too many entries for a sparse product
            return self._add_transposed(np.zeros(n), u, 1.0, u, 0.0)
        if self._scratch is None:
            self._scratch = (np.zeros(n), np.zeros(n, dtype=np.bool_))
        # A^T u = sum_i u_i A[i, :]: the rows' combination of a symmetric Q's product
        from .quadratic_kernels import csr_rows_combination

        idx, vals = csr_rows_combination(rows.indptr, rows.indices, rows.data, touched,
                                         u[touched], work, *self._scratch)
        return SparseProduct(idx, vals, n)

    def _products(self, direction: Any, need_hess: bool = False) -> Any:
        terms = [(c, a) for c, a in direction.terms if c]
        if not self._sparse or len(terms) <= 2 or not all(a.is_sparse for _, a in terms):
            return super()._products(direction, need_hess)
        # a long combination of sparse atoms on a sparse A (a corrective step): A d from
        # one pass over their columns, H d from one product with A^T, instead of an
        # m-vector and an n-vector per atom
        memo = self._memo_for(direction)
        xc = direction.x_coef
        if memo.image is PENDING:
            idx = np.concatenate([a.indices for _, a in terms])
            vals = np.concatenate([c * a.values for c, a in terms])
            image = _column_combination(self.objective.A, idx, vals)
            memo.image = image + xc * self._p if xc else image
        if need_hess and memo.hess is PENDING:
            # H d = x_coef H x + A^T (A d - x_coef A x), H x = g + A^T b
            change = memo.image - xc * self._p if xc else memo.image
            hess = xc * self._hess_x() if xc else np.zeros_like(self._xf)
            memo.hess = self._add_transposed(hess, change, 1.0, change, 0.0)
        return memo

    def _add_transposed(self, out: np.ndarray, u: np.ndarray, cu: float, v: np.ndarray,
                        cv: float) -> np.ndarray:
        """``out + A^T (cu u + cv v)`` (sparse ``A``); in place through the rows of ``A`` when
        ``u`` and ``v`` have few non-zeros."""
        rows = self.objective.rows
        touched = np.flatnonzero(u if not cv else (u != 0) | (v != 0))
        work = int(np.sum(rows.indptr[touched + 1] - rows.indptr[touched]))
        if work > _ROWS_MAX * rows.nnz:
            # most of A: a gather over the columns (CSC) beats a scatter of the rows
            return out + self.objective.A.T @ (cu * u + cv * v)
        _add_rows_t(out, u, cu, v, cv, rows.indptr, rows.indices, rows.data)
        return out

    def _hess_x(self) -> np.ndarray:
        return self._gf + self.objective.Atb

    def _value_from_image(self) -> float:
        return float(_half_sq_dist(self._p, self.objective.b))

    def _gradient_after(self, s: float, gx: float, ha: np.ndarray, ca: float,
                        hb: np.ndarray, cb: float) -> np.ndarray:
        # g + gamma H d with H x = g + A^T b:  s g + gx A^T b + ca H a + cb H b
        atb = self.objective.Atb
        if not (isinstance(ha, SparseProduct) or isinstance(hb, SparseProduct)):
            return _comb3(self._gf, s, atb, gx, ha, ca, hb, cb)
        # sparse H a (sparse A): touch only their entries after the dense part
        out = self._gf.copy() if s == 1.0 and gx == 0.0 else \
            _comb3(self._gf, s, atb, gx, atb, 0.0, atb, 0.0)
        add_scaled(out, ca, ha)
        add_scaled(out, cb, hb)
        return out

    def _curvature(self, memo: Any) -> tuple[float, float]:
        pair = self._atom_pair(memo.direction)
        if pair is not None:  # ||A d||^2 without forming A d
            (ca, pa), (cb, pb) = pair
            curv = float(_comb_sq_norm(self._p, memo.direction.x_coef, pa[0], ca, pb[0], cb))
        else:
            image = self._products(memo.direction).image
            curv = float(np.dot(image, image))
        return curv, curv


@njit(cache=True, nogil=True)
def _add_rows_t(out, u, cu, v, cv, indptr, indices, data):  # pragma: no cover - compiled
    """``out += A^T (cu u + cv v)`` for ``A`` in CSR form, visiting only the rows
    where ``cu u + cv v`` is non-zero."""
    for i in range(u.shape[0]):
        t = cu * u[i] + cv * v[i]
        if t != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += t * data[k]


@njit(cache=True, nogil=True)
def _add_columns(out, idx, vals, indptr, indices, data):  # pragma: no cover - compiled
    """``out += A[:, idx] @ vals`` for ``A`` in CSC form (repeated columns add up)."""
    for t in range(idx.shape[0]):
        j = idx[t]
        c = vals[t]
        for k in range(indptr[j], indptr[j + 1]):
            out[indices[k]] += c * data[k]


def _column_combination(A: Any, idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """``A[:, idx] @ vals`` touching only the selected columns."""
    m = A.shape[0]
    if idx.size == 0:
        return np.zeros(m)
    if issparse(A):  # CSC: read the columns straight from the index arrays
        if idx.size == 1:
            j = idx[0]
            lo, hi = A.indptr[j], A.indptr[j + 1]
            out = np.zeros(m)
            out[A.indices[lo:hi]] = A.data[lo:hi] * vals[0]
            return out
        out = np.zeros(m)
        _add_columns(out, np.asarray(idx, dtype=np.int64), np.asarray(vals, dtype=float),
                     A.indptr, A.indices, A.data)
        return out
    if idx.size == 1:
        return A[:, idx[0]] * vals[0]
    return A[:, idx] @ vals


def sigma_max_squared(A: Any) -> float:
    """``||A||_2^2``, the largest squared singular value of a dense or sparse matrix (or
    a linear operator): dense eigenvalues of the Gram matrix up to its size limit, else
    ARPACK from a fixed start (its default start is random: smoothness estimates, and
    the steps they set, differed between runs)."""
    m, n = A.shape
    if m == 0 or n == 0:
        return 0.0
    k = min(m, n)
    if not (isinstance(A, np.ndarray) or issparse(A)):  # an operator (offset design)
        if k == 1:  # one row or column: its squared norm (svds needs two)
            v = A.rmatvec(np.ones(1)) if m == 1 else A.matvec(np.ones(1))
            return float(np.dot(v, v))
        if m * n <= 1 << 20:
            A = A @ np.eye(n)
        else:
            from scipy.sparse.linalg import svds

            v0 = np.random.default_rng(0).standard_normal(k)
            return float(svds(A, k=1, v0=v0, return_singular_vectors=False)[0]) ** 2
    if k <= _DENSE_SVD_MAX and (not issparse(A) or k <= 64):
        Ad = A.toarray() if issparse(A) else A
        G = Ad @ Ad.T if m <= n else Ad.T @ Ad
        return float(max(np.linalg.eigvalsh(G)[-1], 0.0))
    from scipy.sparse.linalg import svds

    v0 = np.random.default_rng(0).standard_normal(k)
    s = svds(A, k=1, v0=v0, return_singular_vectors=False)
    return float(s[0]) ** 2

"""Quadratic objectives ``1/2 x^T Q x + c^T x + constant``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._finite import check_finite
from .._numbers import as_real, check_flag, real_array
from ..atoms import Atom
from ..direction import Direction
from ..errors import ShapeError
from .atom_cache import DEFAULT_CACHE_BYTES
from .base import Objective, point_shape
from .line import line_minimizer
from .product_tracker import (
    _UNSET,
    PENDING,
    ProductTracker,
    QuadPoint,
    SparseProduct,
    StoredProducts,
    _pair_image,
    _quad_pair_move,
    _quad_value,
    _scatter_add,
    check_tracker_options,
)

# the second atom of a one-atom direction, for the fused move (never written)
_NO_INDEX = np.zeros(0, dtype=np.int64)
_NO_VALUE = np.zeros(0)

#: the compiled entry of :func:`_quad_pair_move` for its usual argument types, once
#: compiled or loaded (``None`` before, or where numba has none: the dispatcher serves)
_ENTRY: list[Any] = [None]


def _move_entry() -> Any:
    """The compiled function behind :func:`_quad_pair_move` for C-contiguous float64
    arrays (``int64`` indices), floats and a bool, called without numba's dispatch.

    The dispatcher types each of the 12 arguments (one a :class:`QuadPoint` of three
    arrays) on every call, about a microsecond, a twentieth of a Frank-Wolfe step at
    n = 20.  The entry does not check the types: the tracker calls it only with arrays
    it made itself (its image, point, gradient and cached products are C-contiguous
    float64 arrays; the objective's ``c`` float64) and atoms of at most one entry (any
    array of one entry is contiguous, and an atom's indices and values are int64 and
    float64).
    """
    try:
        from numba import types

        f, i = types.float64[::1], types.int64[::1]
        point = types.NamedUniTuple(f, 3, QuadPoint)  # three arrays of one type
        sig = (f, point, types.float64, types.boolean, f, types.float64, f, types.float64,
               i, f, i, f)
        # an attribute of numba's compile results that its types do not declare
        return getattr(_quad_pair_move.overloads[sig], "entry_point", None)
    except (AttributeError, KeyError, ImportError):  # another numba, or none compiled
        return None

_EPS = np.finfo(float).eps

__all__ = ["QuadraticObjective", "QuadraticTracker"]

#: dense matrices up to this order get all eigenvalues from LAPACK
_DENSE_EIG_MAX = 1000
#: ``Q a`` of a sparse atom (sparse ``Q``) is kept as a :class:`SparseProduct` when the
#: rows it sums hold at most this fraction of ``n`` entries (as least squares keeps
#: ``A^T A a``) ...
_SPARSE_PRODUCT = 0.25
#: ... and ``n`` is at least this: below it a dense product is at most 32 KB and the
#: fused dense move (its compiled entry called without dispatch) is the cheaper step
_SPARSE_PRODUCT_MIN_N = 4096
#: the empty arrays that stand for "this product is sparse" / "no second atom" in the move
_NO_DENSE = np.zeros(0)


def _point_shape(owner: str, shape: Any, n: int) -> tuple[int, ...]:
    dims = point_shape(owner, shape)
    if dims is None:
        return (n,)
    if math.prod(dims) != n:
        raise ShapeError(f"{owner}: `shape` {dims} has {math.prod(dims)} entries, expected {n}")
    return dims


def _flat(owner: str, x: np.ndarray, n: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.size != n:
        raise ShapeError(f"{owner}: x has shape {x.shape} ({x.size} entries), expected {n} entries")
    return x.reshape(-1)



def _curvature_scale(Q: Any, d: np.ndarray, Qd: np.ndarray, curv: float, convex: bool
                     ) -> float:
    """The size of the terms summed into ``curv = d^T Q d``, for
    :func:`~.line.line_minimizer`'s "zero to rounding" test (0 when ``curv > 0``).

    ``|d|^T |Q d|`` is taken after the cancellation inside ``Q d``: along a direction
    near the null space of a positive semidefinite ``Q`` (``A^T A`` with fewer rows than
    columns) ``Q d`` is itself rounding, and a curvature of -2e-17 was refused as
    negative.  Where that smaller scale would call the curvature negative on a
    convex-declared objective, it is measured again as ``|d|^T (|Q| |d|)`` (one more
    product, only on that path); on other objectives zero and negative curvature give
    the same step."""
    if curv > 0:
        return 0.0
    ad = np.abs(d)
    scale = float(np.dot(ad, np.abs(Qd)))
    if convex and curv < -64.0 * _EPS * scale:
        scale = float(np.dot(ad, abs(Q) @ ad))
    return scale

class QuadraticObjective(Objective):
    r"""The quadratic :math:`f(x) = \tfrac12 x^\top Q x + c^\top x + \text{constant}`.

    Parameters
    ----------
    Q : ndarray or scipy.sparse matrix, shape (n, n)
        Symmetric matrix (checked at construction with two random probes,
        O(nnz(Q))).  A sparse matrix is copied into canonical CSR form
        (repeated entries summed, indices sorted), so the caller's arrays are
        never changed, and may be read-only.  A dense float64 ``Q`` is used by
        reference, not copied (it can be the largest object of the problem):
        changing it in place afterwards leaves the objective inconsistent
        (its smoothness is computed once), so build a new one.
    c : array_like, shape (n,), optional
        Linear term (zero by default; copied).
    constant : float, default 0.0
    convex : bool, default True
        Declared convexity (Q positive semidefinite).  Not verified up
        front; negative curvature met along a search direction raises
        :class:`~frankwolfe.errors.NonConvexError`.
    shape : tuple of int, optional
        Shape of the points (default ``(n,)``).  Matrix-shaped points are
        flattened in C order, which is free for C-contiguous arrays:
        ``Q`` then acts on ``x.ravel()``.
    cache_bytes : int, default 256 MB
        Memory budget of each tracker's cache of products ``Q a``.
    refresh_every : int, default 500
        A tracker recomputes ``Q x`` exactly after this many incremental moves.

    Attributes
    ----------
    smoothness : float
        Largest absolute eigenvalue of ``Q`` (the largest eigenvalue when
        ``Q`` is PSD), computed on first access: LAPACK for dense ``n <=
        1000``, ARPACK (``eigsh``) otherwise.  Assignable.

    Notes
    -----
    Evaluating ``f`` and ``grad f`` costs one product ``Q x``.  During a run
    the :class:`QuadraticTracker` keeps ``Q x`` and updates it from cached
    columns ``Q a`` of the atoms, so an iteration after a sparse vertex step
    costs O(n).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import QuadraticObjective
    >>> f = QuadraticObjective(np.diag([1.0, 2.0]), c=[1.0, 0.0])
    >>> f.value(np.array([1.0, 1.0]))
    2.5
    """

    def __init__(
        self,
        Q: Any,
        c: Any = None,
        constant: float = 0.0,
        *,
        convex: bool = True,
        shape: tuple[int, ...] | int | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        refresh_every: int = 500,
    ) -> None:
        name = "QuadraticObjective"
        # real_array: a complex Q or c lost its imaginary part with a mere ComplexWarning
        Q = real_array(Q, name, "Q", what="a matrix of numbers", sparse=True)
        if bool(sp.issparse(Q)):  # bool(): Q stays Any (scipy's stubs lack CSR attributes)
            if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
                raise ShapeError(f"{name}: `Q` must be a square matrix, got shape {Q.shape}")
            # a private canonical copy, made once: block passes read sorted rows, and
            # sorting in place rewrote the caller's arrays (or failed on read-only ones)
            Q = sp.csr_array(Q, dtype=float, copy=True)
            Q.sum_duplicates()
        elif Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
            raise ShapeError(f"{name}: `Q` must be a square matrix, got shape {Q.shape}")
        check_finite(name, "Q", Q)
        n = Q.shape[0]
        if n == 0:  # no point to start from: the run failed in numpy's argmax
            raise ShapeError(f"{name}: `Q` must be at least 1 x 1, got shape {Q.shape}")
        point_shape = _point_shape(name, shape, n)
        if c is None:
            c = np.zeros(n)
        else:
            c = real_array(c, name, "c")
            if c.shape != (n,) and c.shape != point_shape:
                raise ShapeError(
                    f"{name}: `c` has shape {c.shape}, expected ({n},) to match Q {Q.shape}"
                )
            c = c.reshape(-1).copy()  # the caller's c may change after construction
            check_finite(name, "c", c)
        if not math.isfinite(as_real(constant)):  # np.isfinite("1"): numpy's TypeError
            raise ValueError(f"{name}: `constant` must be finite, got {constant!r}")
        self.cache_bytes, self.refresh_every = check_tracker_options(
            name, cache_bytes, refresh_every)
        self.Q = Q
        self.c = c
        self.constant = float(constant)
        self.convex = check_flag(convex, "convex", where=name)
        self.n = n
        self.shape = point_shape
        self._smoothness: float | None = None
        self._check_symmetric()

    def _check_symmetric(self) -> None:
        # u^T Q v - v^T Q u = u^T (Q - Q^T) v vanishes for random u, v only
        # when Q is symmetric (almost surely): two products instead of O(n^2).
        if self.n == 0:
            return
        rng = np.random.default_rng(0)
        u = rng.standard_normal(self.n)
        v = rng.standard_normal(self.n)
        # The products are taken with u, v scaled by a power of two that brings Q's
        # largest entry near 1: at 1e160 * Q the norms of Qu, Qv overflowed (a false
        # "NaN or inf"), at 1e-190 * Q they underflowed to 0 (a false "not symmetric").
        # A power of two changes no digit, so the test reads the same at any scale; the
        # clip keeps 2**shift * u normal and finite for a Q of subnormal or huge entries.
        Q: Any = self.Q
        data = Q.data if bool(sp.issparse(Q)) else Q
        peak = max(abs(float(data.max())), abs(float(data.min()))) if data.size else 0.0
        shift = -min(max(math.frexp(peak)[1], -1000), 1000)
        Qu, Qv = Q @ np.ldexp(u, shift), Q @ np.ldexp(v, shift)
        a, b = float(u @ Qv), float(v @ Qu)
        scale = np.linalg.norm(u) * np.linalg.norm(Qv) + np.linalg.norm(v) * np.linalg.norm(Qu)
        if not np.isfinite(scale):
            raise ValueError("QuadraticObjective: `Q` contains NaN or inf")
        if abs(a - b) > 1e-10 * scale:
            with np.errstate(over="ignore"):  # reported at Q's own scale, inf past it
                gap = float(np.ldexp(a - b, -shift))
            raise ValueError(
                f"QuadraticObjective: `Q` (shape {self.Q.shape}) is not symmetric "
                f"(u^T Q v - v^T Q u = {gap:.3g} for random u, v); pass (Q + Q.T) / 2, "
                "which defines the same quadratic"
            )

    # -- smoothness -------------------------------------------------------------
    @property
    def smoothness(self) -> float:
        """Largest absolute eigenvalue of ``Q`` (computed once, lazily)."""
        if self._smoothness is None:
            self._smoothness = _spectral_radius(self.Q)
        return self._smoothness

    @smoothness.setter
    def smoothness(self, value: float | None) -> None:
        self._smoothness = None if value is None else float(value)

    # -- evaluation ---------------------------------------------------------------
    def value(self, x: np.ndarray) -> float:
        xf = _flat("QuadraticObjective", x, self.n)
        return float(0.5 * np.dot(xf, self.Q @ xf) + np.dot(self.c, xf) + self.constant)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        xf = _flat("QuadraticObjective", x, self.n)
        return (self.Q @ xf + self.c).reshape(x.shape)

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.asarray(x, dtype=float)
        xf = _flat("QuadraticObjective", x, self.n)
        Qx = self.Q @ xf
        f = 0.5 * np.dot(xf, Qx) + np.dot(self.c, xf) + self.constant
        return float(f), (Qx + self.c).reshape(x.shape)

    def partial_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Gradient entries at flat ``indices``: rows of ``Q``, O(n |indices|) for a dense
        ``Q``, O(nnz of the rows) for a sparse one."""
        xf = _flat("QuadraticObjective", x, self.n)
        idx = np.asarray(indices, dtype=np.int64)
        Q: Any = self.Q
        if idx.ndim == 1 and bool(sp.issparse(Q)):
            # numba on the CSR arrays: scipy's row extraction has a fixed cost a call,
            # whatever the rows, most of a Python block-coordinate pass; the kernel costs
            # what the rows hold (benchmarks/README.md, "Measurements behind code choices")
            from .quadratic_kernels import csr_rows_grad

            try:
                return csr_rows_grad(Q.indptr, Q.indices, Q.data, idx, xf, self.c)
            except IndexError:  # the compiled kernel's message cannot name the index
                n = self.n
                bad = int(idx[(idx < -n) | (idx >= n)][0])
                raise IndexError(f"QuadraticObjective.partial_gradient: index {bad} is out "
                                 f"of range for {n} coordinates (valid: {-n} to {n - 1})"
                                 ) from None
        return Q[idx] @ xf + self.c[idx]

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        """Unclipped minimizer ``-<g, d> / (d^T Q d)`` of ``f(x + gamma d)``.

        Returns ``+inf`` when the curvature ``d^T Q d`` is zero (to rounding)
        and ``<g, d> < 0``: the step-size rule clips it to ``gamma_max``.

        Raises
        ------
        NonConvexError
            If ``d^T Q d < 0`` and the objective is declared convex.
        """
        d = _flat("QuadraticObjective.exact_step", direction, self.n)
        g = _flat("QuadraticObjective.exact_step", gradient, self.n)
        Qd = self.Q @ d
        curv = float(np.dot(d, Qd))
        scale = _curvature_scale(self.Q, d, Qd, curv, self.convex)
        return float(line_minimizer(float(np.dot(g, d)), curv, scale, self.convex,
                                    "QuadraticObjective"))

    def exact_step_block(self, x: np.ndarray, indices: np.ndarray, direction: np.ndarray,
                         partial_gradient: np.ndarray) -> float:
        """Exact step along ``direction`` supported on flat ``indices`` (block methods).

        Needs only the block ``Q[idx, idx]``: O(|idx|^2), not O(n).
        """
        idx = np.asarray(indices, dtype=np.int64)
        v = np.asarray(direction, dtype=float).reshape(-1)
        Q: Any = self.Q
        sparse = bool(sp.issparse(Q))  # a plain bool: Q stays Any for the type checker
        if sparse and idx.size and np.all(idx[1:] > idx[:-1]):
            # numba: scipy slicing's cost a call outweighs a small block's work
            # (benchmarks/README.md, "Measurements behind code choices")
            from .quadratic_kernels import csr_block_quad

            curv = float(csr_block_quad(Q.indptr, Q.indices, Q.data, idx, v))
            scale = float(csr_block_quad(Q.indptr, Q.indices, np.abs(Q.data), idx,
                                         np.abs(v))) if curv <= 0 else 0.0
        else:
            Qb = Q[idx][:, idx] if sparse else Q[np.ix_(idx, idx)]
            Qv = Qb @ v
            curv = float(np.dot(v, Qv))
            scale = _curvature_scale(Qb, v, Qv, curv, self.convex)
        return float(line_minimizer(float(np.dot(partial_gradient, v)), curv, scale,
                                    self.convex, "QuadraticObjective"))

    def as_quadratic(self) -> QuadraticObjective:
        return self

    def compiled_block_objective(self) -> Any:
        """CSR kernels of ``1/2 x^T Q x + c^T x`` for compiled block passes (flat ``x``)."""
        from ..compiled import CompiledObjective
        from .quadratic_kernels import csr_data, csr_line, csr_update

        return CompiledObjective(csr_line, csr_update, csr_data(self.Q))

    def tracker(self, x: np.ndarray) -> QuadraticTracker:
        """A :class:`QuadraticTracker` at ``x`` (copied)."""
        return QuadraticTracker(self, x, cache_bytes=self.cache_bytes,
                                refresh_every=self.refresh_every)

    # -- modelling ------------------------------------------------------------------
    def to_cvxpy(self, x_expr: Any) -> Any:
        """The cvxpy expression of ``f`` at the variable ``x_expr``.

        ``Q`` is wrapped in ``cp.psd_wrap`` when the objective is declared
        convex (skipping cvxpy's own eigenvalue check); matrix variables are
        vectorized in C order to match :meth:`value`.
        """
        import cvxpy as cp

        x = cp.vec(x_expr, order="C") if len(x_expr.shape) > 1 else x_expr
        Q = cp.psd_wrap(self.Q) if self.convex else self.Q
        return 0.5 * cp.quad_form(x, Q) + self.c @ x + self.constant

    def __repr__(self) -> str:
        kind = "sparse" if sp.issparse(self.Q) else "dense"
        return f"QuadraticObjective(n={self.n}, {kind}, convex={self.convex})"


class QuadraticTracker(ProductTracker):
    """Tracker of a :class:`QuadraticObjective`: keeps ``Q x`` and cached ``Q a``.

    A move along ``d = x_coef x + sum c_i a_i`` updates
    ``Q x <- (1 + gamma x_coef) Q x + gamma sum c_i Q a_i`` and
    ``grad f = Q x + c`` in O(n); the value is ``<x, Qx>/2 + <c, x> + constant``
    (O(n)); the exact step uses ``d^T Q d = <d, Q d>`` from the same products.
    Counters are described in :mod:`frankwolfe.objectives.product_tracker`.
    """

    _image_is_hessian = True
    objective: QuadraticObjective

    def __init__(self, objective: QuadraticObjective, x: np.ndarray, **options: Any) -> None:
        Q: Any = objective.Q
        #: whether sparse atoms may get sparse products ``Q a`` (a large sparse ``Q``)
        self._sparse = bool(sp.issparse(Q)) and objective.n >= _SPARSE_PRODUCT_MIN_N
        #: a row of Q is its product's sorted, unique indices (one vertex: no scratch)
        self._canonical = self._sparse and bool(Q.has_canonical_format)
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None  # zeroed n-vectors
        self._qpoint: QuadPoint | None = None  # the fused moves' record (_point)
        super().__init__(objective, x, **options)

    def _recompute(self) -> None:
        obj = self.objective
        self._p = np.asarray(obj.Q @ self._xf, dtype=float)
        self._gf = self._p + obj.c
        self._f = self._value_from_image()

    def _compute_atom_products(self, atom: Atom) -> StoredProducts:
        Q = self.objective.Q
        idx, val = atom.indices, atom.values
        if atom.is_sparse:
            if idx.size == 0:
                return (np.zeros(self._xf.size),)
            if self._sparse:
                prod = self._sparse_product(idx, val)
                if prod is not None:
                    return (prod,)  # type: ignore[return-value]  # a SparseProduct image
            # Q is symmetric: Q a = sum_j a_j Q[j, :], rows are contiguous
            rows: Any = Q[idx]
            if bool(sp.issparse(rows)):  # bool(): rows stays Any for the type checker
                return (np.asarray(rows.T @ val, dtype=float).ravel(),)
            if idx.size == 1:
                return (rows[0] * val[0],)
            return (val @ rows,)
        return (np.asarray(Q @ atom.to_dense().reshape(-1), dtype=float),)

    def _sparse_product(self, idx: np.ndarray, val: np.ndarray) -> SparseProduct | None:
        """``Q a = sum_t val_t Q[idx_t, :]`` (sparse ``Q``, symmetric) as a
        :class:`SparseProduct` when the rows hold at most ``_SPARSE_PRODUCT * n`` entries
        (else ``None``); the same numbers as the dense product."""
        Q: Any = self.objective.Q
        indptr = Q.indptr
        n = self._xf.size
        if idx.size == 1:
            r = int(idx[0])
            lo, hi = int(indptr[r]), int(indptr[r + 1])
            if hi - lo > _SPARSE_PRODUCT * n:
                return None
            if self._canonical:  # the row's own sorted, unique columns
                return SparseProduct(Q.indices[lo:hi].astype(np.int64), Q.data[lo:hi] * val[0], n)
            work = hi - lo
        else:
            work = int(np.sum(indptr[idx + 1] - indptr[idx]))
            if work > _SPARSE_PRODUCT * n:
                return None
        from .quadratic_kernels import csr_rows_combination

        if self._scratch is None:
            self._scratch = (np.zeros(n), np.zeros(n, dtype=np.bool_))
        ind, vals = csr_rows_combination(indptr, Q.indices, Q.data,
                                         np.asarray(idx, dtype=np.int64),
                                         np.asarray(val, dtype=float), work, *self._scratch)
        return SparseProduct(ind, vals, n)

    def atom_image(self, atom: Atom) -> np.ndarray:
        """The cached ``Q a`` of ``atom`` as a dense array (computed on a miss)."""
        prod = self._stored_products(atom)[0]
        return prod.to_dense() if type(prod) is SparseProduct else prod

    def _hess_x(self) -> np.ndarray:
        return self._p

    def _value_from_image(self) -> float:
        obj = self.objective
        return float(_quad_value(self._xf, self._p, obj.c)) + obj.constant

    def _gradient_after(self, s: float, gx: float, ha: np.ndarray, ca: float,
                        hb: np.ndarray, cb: float) -> np.ndarray:
        return self._p + self.objective.c  # Q x is already updated

    def _fill(self, memo: Any, need_hess: bool = False) -> Any:
        # the base class's image of a direction, with sparse products ``Q a`` scattered in
        if not self._sparse or memo.image is not PENDING:
            return super()._fill(memo, need_hess)
        direction = memo.direction
        xc = direction.x_coef
        if len(direction.terms) <= 2:
            pair = memo.pair
            if pair is _UNSET:
                pair = memo.pair = self._find_pair(direction)
            image = _direction_image(xc, self._p, pair)
        else:
            image = xc * self._p if xc else np.zeros_like(self._p)
            for c, a in direction.terms:
                if c:
                    _add_product(image, c, self._stored_products(a)[0])
        memo.image = memo.hess = image
        return memo

    def _point(self) -> QuadPoint:
        """The record of ``Q x``, ``x`` and ``c`` the fused moves take: kept while those
        arrays are the same (a full evaluation replaces ``Q x``)."""
        rec = self._qpoint
        if rec is None or rec.p is not self._p or rec.xf is not self._xf:
            rec = self._qpoint = QuadPoint(self._p, self._xf, self.objective.c)
        return rec

    def _move_pair(self, direction: Direction, s: float, pa: StoredProducts, ga: float,
                   pb: StoredProducts, gb: float) -> bool:
        # one kernel instead of five numpy and numba calls: on small problems the calls,
        # not the O(n) work, are the cost of a step
        x_coef, terms = direction
        if self._sparse and (type(pa[0]) is SparseProduct or type(pb[0]) is SparseProduct):
            return self._move_sparse(direction, s, pa[0], ga, pb[0], gb)
        if len(terms) == 1:
            a = terms[0][1]
            if a._dense is not None:  # Atom.is_sparse inline
                return False
            ia, va, ib, vb = a.indices, a.values, _NO_INDEX, _NO_VALUE
        elif len(terms) == 2:
            a, b = terms[0][1], terms[1][1]
            if a._dense is not None or b._dense is not None:
                return False
            ia, va, ib, vb = a.indices, a.values, b.indices, b.values
        else:
            return False
        obj = self.objective
        p = self._p
        g = np.empty(p.shape[0])  # a new gradient array: callers may hold the previous one
        args = (g, self._point(), s, x_coef != 0.0, pa[0], ga, pb[0], gb, ia, va, ib, vb)
        if ia.size <= 1 and ib.size <= 1 and _ENTRY[0] is not None:
            acc, finite = _ENTRY[0](*args)
        else:
            acc, finite = _quad_pair_move(*args)
            if _ENTRY[0] is None and ia.size <= 1 and ib.size <= 1:
                _ENTRY[0] = _move_entry()
        self._gf = g
        self._f = float(acc) + obj.constant
        self._finite = finite and math.isfinite(self._f)
        return True

    def _move_sparse(self, direction: Direction, s: float, ma: Any, ga: float, mb: Any,
                     gb: float) -> bool:
        """:meth:`_move_pair` where a product is a :class:`SparseProduct`: always done here
        (the base class's unfused move reads dense products), fused when both atoms are
        sparse; a sparse product adds only its entries, and a pairwise step (``s == 1``)
        skips the scaling passes."""
        x_coef, terms = direction
        obj = self.objective
        if len(terms) == 1:
            mb, gb = _NO_DENSE, 0.0  # the base pads with (0, Q a): nothing to add
        sa, sb = type(ma) is SparseProduct, type(mb) is SparseProduct
        atoms = [a for _, a in terms]
        if all(a._dense is None for a in atoms):
            from .quadratic_kernels import AtomImage, quad_sparse_move

            a = atoms[0]
            b = atoms[1] if len(atoms) == 2 else None
            g = np.empty(self._p.shape[0])  # a new array: callers may hold the previous one
            acc, finite = quad_sparse_move(
                g, self._point(), s, x_coef != 0.0,
                AtomImage(_NO_DENSE, ma.indices, ma.values) if sa else
                AtomImage(ma, _NO_INDEX, _NO_VALUE), ga,
                AtomImage(_NO_DENSE, mb.indices, mb.values) if sb else
                AtomImage(mb, _NO_INDEX, _NO_VALUE), gb,
                a.indices, a.values,
                _NO_INDEX if b is None else b.indices, _NO_VALUE if b is None else b.values)
            self._gf = g
            self._f = float(acc) + obj.constant
            self._finite = finite and math.isfinite(self._f)
            return True
        # a dense atom beside a sparse product: the base class's steps, rounded alike
        p = self._p
        if s != 1.0:
            p *= s
        _add_product(p, ga, ma)
        if gb:
            _add_product(p, gb, mb)
        self._gf = p + obj.c
        if x_coef:
            self.x *= s
        for coef, a in zip((ga, gb), atoms):
            a.add_to(self.x, coef)
        self._f = self._value_from_image()
        self._finite = None
        return True

    def _curvature(self, memo: Any) -> tuple[float, float]:
        direction = memo.direction
        xc = direction.x_coef
        image = memo.image  # Q d
        if image is PENDING:
            pair = memo.pair  # _fill inline for a direction of at most two atoms
            if pair is _UNSET:
                pair = memo.pair = self._find_pair(direction)
            if pair is not None:
                (ca, pa), (cb, _) = pair
                if self._sparse:
                    image = _direction_image(xc, self._p, pair)
                elif not cb and (ca == 1.0 or ca == -1.0) and xc == -ca:  # FW or away
                    image = pa[0] - self._p if ca > 0 else self._p - pa[0]  # as _pair_image
                else:
                    image = _pair_image(xc, self._p, pair)
                memo.image = memo.hess = image
            else:
                image = self._fill(memo).image
        curv = xc * float(self._xf.dot(image)) if xc else 0.0  # np.dot without dispatch
        for c, a in direction.terms:
            if c:
                curv += c * a.dot(image)
        if curv > 0:
            return curv, 0.0
        # only near zero does the size of the summed terms matter
        absimg = np.abs(image)
        # w = |xc| |x| + sum |c_i| |a_i|, the sizes of the terms summed into d
        w = abs(xc) * np.abs(self._xf) if xc else np.zeros_like(self._xf)
        for c, a in direction.terms:
            if c:
                if a.is_sparse:
                    np.add.at(w, a.indices, abs(c) * np.abs(a.values))
                else:
                    w += abs(c) * np.abs(a.to_dense().reshape(-1))
        scale = float(np.dot(w, absimg))
        if self.objective.convex and curv < -64.0 * _EPS * scale:
            scale += _image_rounding(self.objective.Q, direction, self._xf, w)
        return curv, scale


def _image_rounding(Q: Any, direction: Direction, xf: np.ndarray, w: np.ndarray) -> float:
    """``|d|^T |Q| w``: the size of the rounding that the image ``Q d`` of ``direction``
    carries into ``d^T Q d`` when the image is summed as ``xc Q x + sum c_i Q a_i``.

    ``w`` is ``|xc| |x| + sum |c_i| |a_i|``.  Each product ``Q x``, ``Q a_i`` is rounded
    to a fraction of ``|Q| |x|``, ``|Q| |a_i|``, not of ``|Q d|``.  Along ``s - x`` of
    the conjugate methods, near the null space of a rank-one ``Q`` with ``s`` next to
    ``x``, ``Q d`` was 1e-13 but carried the 1e-16 rounding of ``Q s`` and ``Q x``:
    ``|d|^T |Q d|`` allowed a curvature of -2e-26, and -8e-20 was refused as negative."""
    d = direction.x_coef * xf if direction.x_coef else np.zeros_like(xf)
    for c, a in direction.terms:
        if c:
            if a.is_sparse:
                np.add.at(d, a.indices, c * a.values)
            else:
                d += c * a.to_dense().reshape(-1)
    if bool(sp.issparse(Q)):  # bool(): Q stays Any (scipy's stubs lack abs of a matrix)
        return float(np.dot(np.abs(d), abs(Q) @ w))
    # by rows: |Q| of a dense Q whole was an n x n temporary (800 MB at n = 10^4)
    total, step = 0.0, max(1, (1 << 22) // max(1, Q.shape[1]))
    for i in range(0, Q.shape[0], step):
        total += float(np.dot(np.abs(d[i:i + step]), np.abs(Q[i:i + step]) @ w))
    return total


def _add_product(out: np.ndarray, c: float, prod: Any) -> None:
    """``out += c * Q a`` in place for a dense or :class:`SparseProduct` ``Q a``, rounded as
    numpy's ``out += c * prod`` (a sparse product adds its entries only)."""
    if type(prod) is SparseProduct:
        _scatter_add(out, prod.indices, prod.values, float(c))
    else:
        out += c * prod


def _direction_image(xc: float, p: np.ndarray, pair: Any) -> np.ndarray:
    """:func:`_pair_image` (``xc p + ca Q a + cb Q b``, a new array) where the products
    may be :class:`SparseProduct`: the same numbers, a sparse product scattered into the
    dense part instead of read as an n-vector."""
    (ca, pa), (cb, pb) = pair
    ma, mb = pa[0], pb[0]
    if type(ma) is not SparseProduct and type(mb) is not SparseProduct:
        return _pair_image(xc, p, pair)
    if not cb and (ca == 1.0 or ca == -1.0) and xc == -ca:  # FW (Q a - p) or away (p - Q a)
        image = -p if ca > 0 else p.copy()  # u - w is (-w) + u and w + (-u), exactly
        _add_product(image, ca, ma)
        return image
    image = xc * p if xc else np.zeros_like(p)
    if ca:
        _add_product(image, ca, ma)
    if cb:
        _add_product(image, cb, mb)
    if not xc:
        image += 0.0  # as _pair_image's pairwise image: no -0.0
    return image


def _spectral_radius(Q: Any) -> float:
    n = Q.shape[0]
    if n == 0:
        return 0.0
    sparse = bool(sp.issparse(Q))  # a plain bool: Q stays Any for the type checker
    if n <= _DENSE_EIG_MAX and (not sparse or n <= 64):
        w = np.linalg.eigvalsh(Q.toarray() if sparse else Q)
        return float(max(abs(w[0]), abs(w[-1])))
    from scipy.sparse.linalg import eigsh

    v0 = np.random.default_rng(0).standard_normal(n)
    w = eigsh(Q, k=1, which="LM", v0=v0, return_eigenvectors=False)
    return float(abs(w[0]))

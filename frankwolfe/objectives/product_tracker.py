"""Incremental tracking of quadratic objectives through cached products.

For a quadratic ``f`` with Hessian ``H`` the tracker keeps an "image"
``p = M x`` of the iterate (``A x`` for least squares, ``Q x`` for a
quadratic form) together with ``f`` and ``grad f``.  A direction
``d = x_coef * x + sum_i c_i a_i`` has image ``M d = x_coef * p + sum_i c_i M a_i``
and Hessian product ``H d = x_coef * H x + sum_i c_i H a_i``; with the
per-atom products ``(M a, H a)`` cached, a move, an exact line search, a
trial value or a trial gradient all cost O(m + n) instead of full
matrix-vector products.

Counters (all on the tracker):

``n_function_calls``, ``n_gradient_calls``
    Full evaluations of ``f`` / ``grad f`` from ``x`` (matrix-vector
    products with the whole matrix): at the start, on :meth:`set_point`,
    on every drift-control refresh.
``n_incremental_updates``
    Moves absorbed through cached products (O(m + n) each).
``n_incremental_evaluations``
    Trial values and trial gradients computed from cached products.
``n_atom_products``
    Atoms whose products were computed (cache misses); each costs about
    one full matrix-vector product for least squares, O(n * nnz) for a
    dense quadratic.
``n_refreshes``
    Exact recomputations for drift control (every ``refresh_every`` moves).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from .._numbers import check_whole
from ..atoms import Atom
from ..direction import Direction
from ..errors import ShapeError
from .atom_cache import DEFAULT_CACHE_BYTES, AtomCache
from .base import Objective, Tracker, all_finite
from .line import line_minimizer

__all__ = ["ProductTracker", "SparseProduct", "QuadPoint", "add_scaled", "check_tracker_options"]

_EPS = np.finfo(float).eps


def check_tracker_options(owner: str, cache_bytes: Any, refresh_every: Any) -> tuple[int, int]:
    """Validate the ``cache_bytes`` and ``refresh_every`` constructor arguments (``int()``
    truncated 2.5 and raised ``OverflowError`` on inf)."""
    return (check_whole(cache_bytes, "cache_bytes", 0, owner),
            check_whole(refresh_every, "refresh_every", 1, owner))


# Fused kernels for the common directions (at most two atoms: FW, away,
# pairwise): one pass over the data instead of several numpy temporaries.
@njit(cache=True, nogil=True)
def _comb_inplace(p, s, ma, ca, mb, cb):  # pragma: no cover - compiled
    """``p <- s p + ca ma + cb mb``."""
    for i in range(p.shape[0]):
        p[i] = s * p[i] + ca * ma[i] + cb * mb[i]


class QuadPoint(NamedTuple):
    """A quadratic tracker's point as its fused moves (:func:`_quad_pair_move`,
    :func:`~frankwolfe.objectives.quadratic_kernels.quad_sparse_move`) read and write
    it: the image ``p = Q x``, the flat iterate ``xf`` (a view of ``x``) and the linear
    term ``c``.  Kept by the tracker while those arrays are the same; the moves change
    ``p`` and ``xf`` in place."""

    p: np.ndarray
    xf: np.ndarray
    c: np.ndarray


@njit(cache=True, nogil=True)
def _quad_pair_move(g, point, s, scale_x, ma, ga, mb, gb, ia, va, ib,
                    vb):  # pragma: no cover - compiled
    """A quadratic tracker's move ``x <- s x + ga a + gb b`` (sparse atoms ``a``, ``b``
    as flat indices and values) at its :class:`QuadPoint` ``point`` ``(p, xf, c)``,
    rounded as its separate steps round it:
    ``p <- s p + ga Q a + gb Q b`` (:func:`_comb_inplace`), the new gradient ``p + c``
    into ``g``, ``x *= s`` (when ``scale_x``) then ``x[ia] += ga va`` and
    ``x[ib] += gb vb`` (:meth:`Direction.apply`), and ``<x, p/2 + c>``
    (:func:`_quad_value`).

    Returns ``(<x, p/2 + c>, whether the gradient is finite)``.  The gradient's array
    comes from the caller: an array returned by a kernel is boxed through numba's
    pickled type, which cost more than the whole move at n = 20.
    """
    p, xf, c = point
    n = p.shape[0]
    for i in range(n):
        p[i] = s * p[i] + ga * ma[i] + gb * mb[i]
    finite = True
    for i in range(n):
        t = p[i] + c[i]
        g[i] = t
        if not math.isfinite(t):
            finite = False
    if scale_x:
        for i in range(n):
            xf[i] *= s
    for t in range(ia.shape[0]):
        xf[ia[t]] += ga * va[t]
    for t in range(ib.shape[0]):
        xf[ib[t]] += gb * vb[t]
    acc = 0.0
    for i in range(n):
        acc += xf[i] * (0.5 * p[i] + c[i])
    return acc, finite


@njit(cache=True, nogil=True)
def _comb3(g, s, u, cu, ma, ca, mb, cb):  # pragma: no cover - compiled
    """A new array ``s g + cu u + ca ma + cb mb``."""
    out = np.empty_like(g)
    for i in range(g.shape[0]):
        out[i] = s * g[i] + cu * u[i] + ca * ma[i] + cb * mb[i]
    return out


@njit(cache=True, nogil=True)
def _comb_sq_norm(p, s, ma, ca, mb, cb):  # pragma: no cover - compiled
    """``||s p + ca ma + cb mb||^2`` without forming the vector."""
    acc = 0.0
    for i in range(p.shape[0]):
        t = s * p[i] + ca * ma[i] + cb * mb[i]
        acc += t * t
    return acc


@njit(cache=True, nogil=True)
def _half_sq_dist(p, b):  # pragma: no cover - compiled
    """``||p - b||^2 / 2``."""
    acc = 0.0
    for i in range(p.shape[0]):
        t = p[i] - b[i]
        acc += t * t
    return 0.5 * acc


@njit(cache=True, nogil=True)
def _quad_value(x, p, c):  # pragma: no cover - compiled
    """``<x, p/2 + c>``."""
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * (0.5 * p[i] + c[i])
    return acc


class SparseProduct:
    """A per-atom product with few non-zeros, stored as flat ``indices`` and ``values``.

    A sparse design's ``A^T A e_j`` touches only the columns that share a row
    with column ``j``: stored densely, every move would stream n-vectors
    through memory to add a few thousand entries.
    """

    __slots__ = ("indices", "values", "size")

    def __init__(self, indices: np.ndarray, values: np.ndarray, size: int) -> None:
        self.indices = np.asarray(indices, dtype=np.int64)
        self.values = np.asarray(values, dtype=float)
        self.size = int(size)

    def to_dense(self) -> np.ndarray:
        """The product as a dense flat array (a new array)."""
        out = np.zeros(self.size)
        out[self.indices] = self.values
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held (for the cache budget)."""
        return self.indices.nbytes + self.values.nbytes


@njit(cache=True, nogil=True)
def _scatter_add(out, idx, vals, c):  # pragma: no cover - compiled
    """``out[idx] += c * vals`` (indices unique)."""
    for t in range(idx.shape[0]):
        out[idx[t]] += c * vals[t]


@njit(cache=True, nogil=True)
def _axpy(out, c, h):  # pragma: no cover - compiled
    """``out += c * h`` without a temporary."""
    for i in range(out.shape[0]):
        out[i] += c * h[i]


def add_scaled(out: np.ndarray, c: float, h: np.ndarray | SparseProduct) -> None:
    """In place ``out += c * h`` for a dense or :class:`SparseProduct` ``h`` (flat ``out``)."""
    if not c:
        return
    if isinstance(h, SparseProduct):
        _scatter_add(out, h.indices, h.values, float(c))
    else:
        _axpy(out, float(c), h)


def atom_inner(a: Atom, b: Atom) -> float:
    """``<a, b>`` for two atoms, O(nnz) when both are sparse."""
    if a is b:
        return a.sq_norm()
    if not a.is_sparse:
        return b.dot(a.to_dense())
    if not b.is_sparse:
        return a.dot(b.to_dense())
    if a.indices.size == 1 and b.indices.size == 1:  # the common case: two vertices e_i
        return float(a.values[0] * b.values[0]) if a.indices[0] == b.indices[0] else 0.0
    _, ia, ib = np.intersect1d(a.indices, b.indices, assume_unique=True, return_indices=True)
    return float(np.dot(a.values[ia], b.values[ib]))


_UNSET = object()


#: a product of :class:`_DirectionProducts` not computed yet (compared by identity)
PENDING = np.zeros(0)
PENDING.flags.writeable = False


class _DirectionProducts:
    """Products of one direction at one tracker state (reused by the
    exact step, the trial values and the move that follows)."""

    __slots__ = ("direction", "version", "image", "hess", "slope", "curvature", "scale", "pair")

    def __init__(self, direction: Direction, version: int) -> None:
        self.direction = direction
        self.version = version
        self.image = PENDING  # M d, computed on demand
        self.hess = PENDING  # H d, computed on demand
        self.slope: float | None = None
        self.curvature: float | None = None
        self.scale = 0.0
        self.pair: Any = _UNSET  # the (at most two) atoms' products, see _atom_pair


#: an atom's cached products: the image ``M a`` (dense), then the Hessian product ``H a``
#: when it differs from the image (dense or a :class:`SparseProduct`)
StoredProducts = tuple[np.ndarray, *tuple[np.ndarray | SparseProduct, ...]]


def _pair_image(xc: float, p: np.ndarray, pair: Any) -> np.ndarray:
    """``xc p + ca M a + cb M b`` (a new array) for the products ``pair`` of a direction
    of at most two atoms, rounded as ``xc * p`` (zeros when ``xc == 0``) with each
    ``c * M a`` of a non-zero ``c`` added in turn.

    The directions of Frank-Wolfe (``M a - p``), away steps (``p - M a``) and pairwise
    steps (``M a - M b``) take one subtraction instead of three to five numpy calls:
    with coefficients of 1 and -1 the products are exact and ``u + (-w)`` is ``u - w``;
    the pairwise sum started from zeros differs only in turning a ``-0.0`` into
    ``0.0``, which adding ``0.0`` redoes.
    """
    (ca, pa), (cb, pb) = pair
    if not cb and (ca == 1.0 or ca == -1.0) and xc == -ca:
        return pa[0] - p if ca > 0 else p - pa[0]
    if not xc and ca == 1.0 and cb == -1.0:
        image = pa[0] - pb[0]
        image += 0.0
        return image
    image = xc * p if xc else np.zeros_like(p)
    if ca:
        image += ca * pa[0]
    if cb:
        image += cb * pb[0]
    return image


class ProductTracker(Tracker):
    """Base class of trackers of quadratic objectives with per-atom product caches.

    Subclasses define the image ``p = M x`` and implement :meth:`_recompute`,
    :meth:`_compute_atom_products`, :meth:`_hess_x`, :meth:`_value_from_image`
    and :meth:`_curvature`.  See the module docstring for the counters.

    Parameters
    ----------
    objective : Objective
        The objective; it must have an ``n`` attribute (number of entries of x).
    x : ndarray
        Starting point (copied); any shape with ``n`` entries.
    cache_bytes : int
        Memory budget of the per-atom product cache (LRU).
    refresh_every : int
        Recompute the image and the gradient exactly after this many moves
        (drift control).
    """

    #: whether the image M d equals the Hessian product H d (quadratic forms)
    _image_is_hessian: bool = False

    # the exact state that _recompute() sets and moves update
    _p: np.ndarray  # the image M x (flat)
    _gf: np.ndarray  # the gradient (flat)
    _f: float

    def __init__(self, objective: Objective, x: np.ndarray, *,
                 cache_bytes: int = DEFAULT_CACHE_BYTES, refresh_every: int = 500) -> None:
        super().__init__(objective, _checked_point(objective, x))
        self.cache: AtomCache[StoredProducts] = AtomCache(cache_bytes)
        self.refresh_every = int(refresh_every)
        self.n_incremental_updates = 0
        self.n_incremental_evaluations = 0
        self.n_atom_products = 0
        self.n_refreshes = 0
        self._version = 0
        self._memo: _DirectionProducts | None = None
        self._load()

    # -- exact state ---------------------------------------------------------
    def _load(self) -> None:
        self._xf = self.x.reshape(-1)  # a view: moves update x in place
        self._gdx: float | None = None
        self._finite: bool | None = None  # whether f and the gradient are; None: unknown
        self._recompute()
        self.n_function_calls += 1
        self.n_gradient_calls += 1
        self._since_refresh = 0
        self._version += 1
        self._memo = None

    def refresh(self) -> None:
        """Recompute the cached image, value and gradient exactly from ``x``."""
        self.n_refreshes += 1
        self._load()

    def set_point(self, x: np.ndarray) -> None:
        """Jump to ``x`` (copied); the per-atom cache is kept."""
        self.x = np.array(_checked_point(self.objective, x), dtype=float, order="C", copy=True)
        self._load()

    @abstractmethod
    def _recompute(self) -> None:
        """Set ``self._p``, ``self._gf`` (flat gradient) and ``self._f`` from ``self._xf``."""

    @abstractmethod
    def _compute_atom_products(self, atom: Atom) -> StoredProducts:
        """``(M a, H a)`` (or ``(Q a,)`` when the image is the Hessian product)."""

    @abstractmethod
    def _hess_x(self) -> np.ndarray:
        """``H x`` from the cached quantities (flat)."""

    @abstractmethod
    def _value_from_image(self) -> float:
        """``f(x)`` from ``self._p`` (and ``x``)."""

    @abstractmethod
    def _curvature(self, memo: _DirectionProducts) -> tuple[float, float]:
        """``(d^T H d, scale)`` of ``memo.direction``; see :func:`line_minimizer`."""

    # -- per-atom products -----------------------------------------------------
    def atom_products(self, atom: Atom) -> tuple[np.ndarray, ...]:
        """The cached products of ``atom``, computed on a miss (dense arrays)."""
        return tuple(p.to_dense() if isinstance(p, SparseProduct) else p
                     for p in self._stored_products(atom))

    def atom_image(self, atom: Atom) -> np.ndarray:
        """The cached image ``M a`` of ``atom`` (``A a``, ``Q a``), computed on a miss."""
        return self._stored_products(atom)[0]

    def _stored_products(self, atom: Atom) -> StoredProducts:
        """The cached products of ``atom`` as stored (sparse ones as :class:`SparseProduct`)."""
        key = atom._key  # Atom.key inline when set (an oracle's atoms have their key)
        prods = self.cache.get(atom.key if key is None else key)
        return self._new_products(atom) if prods is None else prods

    def _new_products(self, atom: Atom) -> StoredProducts:
        """The products of ``atom`` not found in the cache: computed and stored."""
        if atom.shape != self.x.shape and int(np.prod(atom.shape)) != self._xf.size:
            raise ShapeError(
                f"atom of shape {atom.shape} does not match x of shape {self.x.shape}"
            )
        prods = self._compute_atom_products(atom)
        self.n_atom_products += 1
        self.cache.put(atom.key, prods)
        return prods

    def _memo_for(self, direction: Direction) -> _DirectionProducts:
        memo = self._memo
        if memo is None or memo.direction is not direction or memo.version != self._version:
            memo = _DirectionProducts(direction, self._version)
            self._memo = memo
        return memo

    def _products(self, direction: Direction, need_hess: bool = False) -> _DirectionProducts:
        """The direction's memo with its image ``M d`` (and ``H d`` if asked) filled in."""
        return self._fill(self._memo_for(direction), need_hess)

    def _fill(self, memo: _DirectionProducts, need_hess: bool = False) -> _DirectionProducts:
        """:meth:`_products` on the current ``memo``."""
        direction = memo.direction
        if memo.image is PENDING:
            xc = direction.x_coef
            hess = PENDING
            if self._image_is_hessian and len(direction.terms) <= 2:
                # the pair the move will ask for: its products are looked up once
                pair = memo.pair
                if pair is _UNSET:
                    pair = memo.pair = self._find_pair(direction)
                image = _pair_image(xc, self._p, pair)
                hess = image
            elif self._image_is_hessian:
                image = xc * self._p if xc else np.zeros_like(self._p)
                for c, a in direction.terms:
                    if c:
                        image += c * self._stored_products(a)[0]
                hess = image
            elif need_hess:
                image = xc * self._p if xc else np.zeros_like(self._p)
                hess = xc * self._hess_x() if xc else np.zeros_like(self._xf)
                for c, a in direction.terms:
                    if c:
                        prods = self._stored_products(a)
                        ma, ha = prods[0], prods[-1]
                        image += c * ma
                        add_scaled(hess, c, ha)
            else:
                image = xc * self._p if xc else np.zeros_like(self._p)
                for c, a in direction.terms:
                    if c:
                        image += c * self._stored_products(a)[0]
            memo.image = image
            memo.hess = hess
        if need_hess and memo.hess is PENDING:
            xc = direction.x_coef
            hess = xc * self._hess_x() if xc else np.zeros_like(self._xf)
            for c, a in direction.terms:
                if c:
                    add_scaled(hess, c, self._stored_products(a)[-1])
            memo.hess = hess
        return memo

    def _atom_pair(
        self, direction: Direction
    ) -> tuple[tuple[float, tuple], tuple[float, tuple]] | None:
        """The products of a direction's (at most two) atoms, padded with a zero
        term; ``None`` for longer directions (handled by the generic path)."""
        memo = self._memo
        if memo is not None and memo.direction is direction and memo.version == self._version:
            if memo.pair is _UNSET:  # the line search and the move ask for the same pair
                memo.pair = self._find_pair(direction)
            return memo.pair
        return self._find_pair(direction)

    def _find_pair(
        self, direction: Direction
    ) -> tuple[tuple[float, tuple], tuple[float, tuple]] | None:
        terms = direction.terms
        n = len(terms)
        if n == 1:
            ca, a = terms[0]
            key = a._key  # _stored_products inline (a Frank-Wolfe or away step's look-up)
            pa = self.cache.get(a.key if key is None else key)
            if pa is None:
                pa = self._new_products(a)
            return (ca, pa), (0.0, pa)
        if n == 2:
            (ca, a), (cb, b) = terms
            return (ca, self._stored_products(a)), (cb, self._stored_products(b))
        if n > 2:
            return None
        z = (np.zeros_like(self._p), np.zeros_like(self._xf))
        return (0.0, z), (0.0, z)

    def _move_pair(self, direction: Direction, s: float, pa: StoredProducts, ga: float,
                   pb: StoredProducts, gb: float) -> bool:
        """The whole move along a direction of at most two atoms in one fused step, when
        the tracker has one for it (default: none, ``False``): ``p``, the gradient,
        ``x``, ``f`` and ``_finite`` set as the separate steps would set them."""
        return False

    @abstractmethod
    def _gradient_after(self, s: float, gx: float, ha: np.ndarray, ca: float,
                        hb: np.ndarray, cb: float) -> np.ndarray:
        """New gradient array after the move ``x <- s x + ca a + cb b`` (``gx = s - 1``),
        called once ``self._p`` has been updated."""

    def slope(self, direction: Direction, gradient: np.ndarray | None = None,
              gradient_dot_x: float | None = None) -> float:
        """``<grad f(x), d>``, kept for the line search and the move along ``direction``
        (the arguments, this tracker's own, are not read)."""
        memo = self._memo  # _memo_for and _slope inline: the loop asks once per step
        if memo is None or memo.direction is not direction or memo.version != self._version:
            memo = self._memo = _DirectionProducts(direction, self._version)
        elif memo.slope is not None:
            return memo.slope
        x_coef, terms = direction
        gf = self._gf
        # Direction.dot inline, summed in its order
        s = 0.0
        if x_coef:
            gdx = self._gdx  # gradient_dot_x() inline
            if gdx is None:
                gdx = self._gdx = float(gf.dot(self._xf))
            s = x_coef * gdx
        for c, a in terms:
            s += c * a.dot(gf)
        memo.slope = s
        return s

    def _slope(self, memo: _DirectionProducts) -> float:
        if memo.slope is None:
            d = memo.direction
            memo.slope = d.dot(self._gf, self.gradient_dot_x() if d.x_coef else None)
        return memo.slope

    def gradient_dot_x(self, gradient: np.ndarray | None = None) -> float:
        """``<grad f(x), x>``, kept until the next move (the loop's gap and the line
        search's slope both read it); ``gradient`` is this tracker's own, not read."""
        gdx = self._gdx
        if gdx is None:
            gdx = self._gdx = float(self._gf.dot(self._xf))  # the method: no dispatch
        return gdx

    def _curv(self, memo: _DirectionProducts) -> tuple[float, float]:
        if memo.curvature is None:
            memo.curvature, memo.scale = self._curvature(memo)
        return memo.curvature, memo.scale

    # -- evaluation ---------------------------------------------------------------
    def value(self) -> float:
        return self._f

    def gradient(self) -> np.ndarray:
        gf = self._gf
        return gf if self.x.ndim == 1 else gf.reshape(self.x.shape)

    def value_and_gradient(self) -> tuple[float, np.ndarray]:
        gf = self._gf
        return self._f, gf if self.x.ndim == 1 else gf.reshape(self.x.shape)

    def finite(self, value: float, gradient: np.ndarray) -> bool:
        finite = self._finite
        if finite is None:  # not learnt by the last move: one pass
            finite = self._finite = math.isfinite(self._f) and all_finite(self._gf)
        return finite

    # -- moves --------------------------------------------------------------------
    def move(self, direction: Direction, gamma: float) -> None:
        """``x <- x + gamma d``, updating the image, ``f`` and ``grad f`` in O(m + n)."""
        if gamma == 0:
            return
        memo = self._memo  # _atom_pair inline (once per step)
        if memo is not None and memo.direction is direction and memo.version == self._version:
            if memo.pair is _UNSET:
                memo.pair = self._find_pair(direction)
            pair = memo.pair
        else:
            pair = self._find_pair(direction)
        xc = direction.x_coef
        if pair is not None:
            (ca, pa), (cb, pb) = pair
            s = 1.0 + gamma * xc
            ga, gb = gamma * ca, gamma * cb
            if not self._move_pair(direction, s, pa, ga, pb, gb):
                _comb_inplace(self._p, s, pa[0], ga, pb[0], gb)
                # a new gradient array: callers may hold the previous one
                self._gf = self._gradient_after(s, gamma * xc, pa[-1], ga, pb[-1], gb)
                direction.apply(self.x, gamma)
                self._f = self._value_from_image()
                self._finite = None
        else:
            memo = self._products(direction, need_hess=True)
            # p + gamma * M d equals (1 + gamma x_coef) p + gamma sum c_i M a_i
            self._p += gamma * memo.image
            self._gf = self._gf + gamma * memo.hess
            direction.apply(self.x, gamma)
            self._f = self._value_from_image()
            self._finite = None
        self._gdx = None
        self._version += 1
        self._memo = None
        self.n_incremental_updates += 1
        self._since_refresh += 1
        if self._since_refresh >= self.refresh_every:
            self.refresh()

    def exact_step(self, direction: Direction) -> float:
        """Unclipped exact step ``-<g, d> / d^T H d`` from cached products.

        Zero curvature gives ``+inf`` for a descent direction (the step-size
        rule clips it to ``gamma_max``); see :func:`line_minimizer`.
        """
        memo = self._memo  # _memo_for inline: the one the loop's slope() made
        if memo is None or memo.direction is not direction or memo.version != self._version:
            memo = self._memo_for(direction)
        slope = memo.slope
        if slope is None:
            slope = self._slope(memo)
        curv = memo.curvature
        if curv is None:
            memo.curvature, memo.scale = curv, _ = self._curvature(memo)
        if curv > 64.0 * _EPS * memo.scale:  # line_minimizer's usual case, inline
            return float(-slope / curv)
        return float(line_minimizer(slope, curv, memo.scale, self.objective.convex,
                                    type(self.objective).__name__))

    def trial_value(self, direction: Direction, gamma: float) -> float:
        """``f(x + gamma d) = f + gamma <g, d> + gamma^2 d^T H d / 2`` (exact for a quadratic)."""
        memo = self._memo_for(direction)
        self.n_incremental_evaluations += 1
        slope = self._slope(memo)
        curv, _ = self._curv(memo)
        return float(self._f + gamma * slope + 0.5 * gamma * gamma * curv)

    def trial_gradient(self, direction: Direction, gamma: float) -> np.ndarray:
        """``grad f(x + gamma d) = g + gamma H d``."""
        memo = self._products(direction, need_hess=True)
        self.n_incremental_evaluations += 1
        return (self._gf + gamma * memo.hess).reshape(self.x.shape)

    def direction_sq_norm(self, direction: Direction) -> float:
        """``||d||^2``; O(nnz) for directions between atoms (``x_coef == 0``)."""
        if direction.x_coef:
            d = direction.dense(self.x)
            return float(np.vdot(d, d))
        terms = [(c, a) for c, a in direction.terms if c]
        s = 0.0
        for i, (ci, ai) in enumerate(terms):
            s += ci * ci * ai.sq_norm()
            for cj, aj in terms[i + 1:]:
                s += 2.0 * ci * cj * atom_inner(ai, aj)
        return max(s, 0.0)

    #: a plain attribute, not the base class's property: the exact step asks every step
    has_exact_step = True

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n={self._xf.size}, "
                f"full_evaluations={self.n_gradient_calls}, "
                f"incremental_updates={self.n_incremental_updates}, cache={self.cache!r})")


def _checked_point(objective: Objective, x: Any) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    n = objective.n  # type: ignore[attr-defined]
    if x.size != n:
        raise ShapeError(
            f"{type(objective).__name__}: x has shape {x.shape} ({x.size} entries), "
            f"expected {n} entries"
        )
    return x

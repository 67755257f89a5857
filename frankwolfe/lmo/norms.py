"""Norm balls, boxes and the k-sparse polytope.

Every oracle here treats a direction of any shape as a flat vector (C order),
so a matrix direction gets the ball of the *entrywise* norm (the l2 ball of
matrices is the Frobenius ball).  Answers are sparse :class:`Atom` s when the
vertex is sparse (l1 ball, k-sparse polytope, hypercube) and dense otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from ..atoms import Atom
from ..errors import ShapeError
from .base import LMO
from .subset import SubsetOracle, checked_ids
from .simplex import _check_direction, _check_radius, _dim_shape, _repr_with_dim

__all__ = ["L1Ball", "L2Ball", "LpBall", "LinfBall", "Box", "Hypercube", "KSparsePolytope"]


def _max_abs(lmo: LMO, flat: np.ndarray) -> float:
    """Largest ``|g_i|`` of a direction, refusing nan/inf (they have no minimizer)."""
    m = float(np.max(np.abs(flat), initial=0.0))
    if not np.isfinite(m):
        raise ValueError(f"{lmo!r}: `direction` must be finite, got an entry equal to {m}")
    return m


def _lp_norm(x: np.ndarray, p: float) -> float:
    """``||x||_p`` without overflow or underflow (scaled by ``max|x_i|``); nan -> inf."""
    a = np.abs(np.asarray(x, dtype=float)).reshape(-1)
    m = float(np.max(a, initial=0.0))
    if not np.isfinite(m):
        return float("inf")
    if m == 0.0:
        return 0.0
    u = a / m
    if p == 2.0:
        return m * float(np.sqrt(np.dot(u, u)))
    return m * float(np.sum(u**p)) ** (1.0 / p)


@njit(cache=True, nogil=True)
def _select_array(g: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    out = np.empty(g.size)
    for i in range(g.size):
        out[i] = upper[i] if g[i] < 0 else lower[i]
    return out


@njit(cache=True, nogil=True)
def _select_scalar(g: np.ndarray, lower: float, upper: float) -> np.ndarray:
    out = np.empty(g.size)
    for i in range(g.size):
        out[i] = upper if g[i] < 0 else lower
    return out


def _argmax_abs(g: np.ndarray) -> int:
    """``argmax |g_i|`` (first index on ties, a nan wins) from the SIMD ``argmax`` and
    ``argmin`` of ``g``: two read-only passes, no temporary ``|g|`` (an n-vector allocated
    per call costs page faults on large n)."""
    hi, lo = int(np.argmax(g)), int(np.argmin(g))
    a, b = abs(g[hi]), abs(g[lo])
    if a != a:
        return hi
    if b != b or b > a or (b == a and lo < hi):
        return lo
    return hi


def _zero_atom(shape: tuple[int, ...]) -> Atom:
    return Atom.sparse([], [], shape, key=("zero",))


class L1Ball(SubsetOracle, LMO):
    """The l1 ball ``{x : ||x||_1 <= radius}``.

    Vertices: ``+-radius * e_i`` (key ``("e", i, sign)``).  LMO cost: one
    argmax of ``|g|``, O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    Ties in ``|g_i|`` go to the smallest flat index; ``g_i = 0`` (only
    possible for the zero direction) gives ``+radius * e_i``.  The answer is a
    sparse :class:`Atom`.

    Examples
    --------
    >>> import numpy as np
    >>> L1Ball(2.0)(np.array([0.5, -3.0, 1.0])).to_dense()
    array([0., 2., 0.])
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("L1Ball", radius)
        self.shape = _dim_shape(dim, "L1Ball")

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius``."""
        return 2.0 * self.radius

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        i = _argmax_abs(flat)
        sign = -1 if flat[i] > 0 else 1
        return Atom.sparse([i], [sign * self.radius], direction.shape, key=("e", i, sign))

    def extreme_point_among(self, direction: np.ndarray, ids: Any) -> Atom:
        """The best vertex ``+-radius * e_i`` over the coordinates ``ids``; O(len(ids)).

        Candidate ``i`` stands for the pair ``+-radius * e_i`` (one inner
        product ranks both), see :class:`~frankwolfe.lmo.subset.SubsetOracle`.
        """
        flat = _check_direction(self, direction)
        ids = checked_ids(self, flat, ids)
        i = int(ids[np.argmax(np.abs(flat[ids]))])
        sign = -1 if flat[i] > 0 else 1
        return Atom.sparse([i], [sign * self.radius], direction.shape, key=("e", i, sign))

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_1 - radius) / radius`` (``inf`` for non-finite ``x``)."""
        n1 = float(np.abs(np.asarray(x, dtype=float)).sum())
        if not np.isfinite(n1):
            return float("inf")
        return max(0.0, n1 - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {"radius": self.radius})


class L2Ball(LMO):
    """The Euclidean ball ``{x : ||x||_2 <= radius}``.

    Vertices: the whole sphere ``||x||_2 = radius`` (a continuous set, so keys
    are the automatic digests of the vector).  LMO: ``-radius * g / ||g||_2``,
    cost O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    For the zero direction every point is a minimizer; the answer is then the
    centre ``0`` (key ``("zero",)``).  The direction is scaled by its largest
    entry first, so huge or tiny gradients neither overflow nor underflow.
    A non-finite direction raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> L2Ball(10.0)(np.array([3.0, -4.0])).to_dense()
    array([-6.,  8.])
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("L2Ball", radius)
        self.shape = _dim_shape(dim, "L2Ball")

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius``."""
        return 2.0 * self.radius

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        m = _max_abs(self, flat)
        if m == 0.0:
            return _zero_atom(direction.shape)
        u = flat / m
        u *= -self.radius / float(np.sqrt(np.dot(u, u)))
        return Atom(u.reshape(direction.shape))

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_2 - radius) / radius`` (``inf`` for non-finite ``x``)."""
        return max(0.0, _lp_norm(x, 2.0) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {"radius": self.radius})


class LpBall(LMO):
    """The lp ball ``{x : ||x||_p <= radius}`` for ``1 < p < inf``.

    Vertices: the whole sphere ``||x||_p = radius`` (continuous; automatic
    keys).  LMO, with ``1/p + 1/q = 1``:
    ``s_i = -radius * sign(g_i) |g_i|^(q-1) / ||g||_q^(q-1)``, which attains
    Hölder's bound ``<g, s> = -radius ||g||_q``; cost O(n) (two powers).

    Parameters
    ----------
    p : float
        Exponent, ``1 < p < inf``.  Use :class:`L1Ball` for ``p = 1`` and
        :class:`LinfBall` (or :class:`Box`) for ``p = inf``.
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Attributes
    ----------
    q : float
        The dual exponent ``p / (p - 1)``.

    Notes
    -----
    The direction is scaled by its largest entry before the powers are taken,
    so neither ``p`` close to 1 (huge ``q``) nor large ``p`` overflows.  For
    the zero direction the answer is ``0`` (key ``("zero",)``).  A non-finite
    direction raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> s = LpBall(3.0)(np.array([1.0, -1.0])).to_dense()
    >>> np.round(s, 6), round(float(np.sum(np.abs(s) ** 3)), 12)
    (array([-0.793701,  0.793701]), 1.0)
    """

    def __init__(self, p: float, radius: float = 1.0, dim: int | None = None) -> None:
        try:
            pf = float(p)
        except (TypeError, ValueError):
            raise ValueError(f"LpBall: `p` must be a number with 1 < p < inf, got {p!r}") from None
        if pf == np.inf:
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r}; "
                "use LinfBall (or Box) for p = inf"
            )
        if pf == 1.0:
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r}; use L1Ball for p = 1"
            )
        if not (pf > 1.0):  # also catches nan
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r} (p < 1 is not a norm ball)"
            )
        self.p = pf
        self.q = pf / (pf - 1.0)
        self.radius = _check_radius("LpBall", radius)
        self.shape = _dim_shape(dim, "LpBall")

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        m = _max_abs(self, flat)
        if m == 0.0:
            return _zero_atom(direction.shape)
        u = np.abs(flat) / m  # in [0, 1]: the powers below cannot overflow
        w = u ** (self.q - 1.0)
        total = float(np.dot(w, u))  # sum u^q >= 1 (the max entry is 1)
        w *= -self.radius / total ** (1.0 / self.p)  # ||u||_q^(q-1) = (sum u^q)^(1/p)
        w *= np.sign(flat)
        return Atom(w.reshape(direction.shape))

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``2 * radius * n^max(0, 1/2 - 1/p)`` (exact).

        ``||x||_2 <= n^(1/2 - 1/p) ||x||_p`` for ``p >= 2``, attained at
        ``+-radius * n^(-1/p) * (1, ..., 1)``; ``||x||_2 <= ||x||_p`` for
        ``p <= 2``, attained at ``+-radius * e_1``.  ``None`` for ``p > 2`` when
        the dimension is unknown.
        """
        if self.p <= 2.0:
            return 2.0 * self.radius
        shape = self.shape if self.shape is not None else shape
        if shape is None:
            return None
        n = int(np.prod(shape))
        return 2.0 * self.radius * float(n) ** (0.5 - 1.0 / self.p)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_p - radius) / radius`` (``inf`` for non-finite ``x``)."""
        return max(0.0, _lp_norm(x, self.p) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {"p": self.p, "radius": self.radius})


class _ArrayRepr:
    """Short repr for bound arrays: in full when small, summarized otherwise."""

    def __init__(self, a: np.ndarray) -> None:
        # Built once: LMO.__call__ formats repr(lmo) on every oracle call.
        if a.size <= 6:
            self.text = repr(a)
        else:
            self.text = f"array(shape={a.shape}, min={a.min():g}, max={a.max():g})"

    def __repr__(self) -> str:
        return self.text


class Box(SubsetOracle, LMO):
    """The box ``{x : lower <= x <= upper}`` (coordinate-wise).

    Vertices: the ``2^n`` points with ``x_i`` in ``{lower_i, upper_i}``; key
    ``("box", n, bytes)`` where ``bytes`` packs the pattern of coordinates at
    their upper bound.  LMO: ``upper_i`` where ``g_i < 0``, ``lower_i``
    elsewhere; cost O(n).  Subset oracle (randomized away-step): candidates
    are sampled vertices, a ``(p, n)`` boolean array of upper-bound patterns
    drawn uniformly; scoring them costs O(p n).

    Parameters
    ----------
    lower, upper : float or array_like
        Finite bounds with ``lower <= upper``; scalars apply to every
        coordinate.  An array fixes the shape of the domain (the two broadcast
        to a common shape).
    dim : int, optional
        Dimension; with array bounds it must equal their size.

    Notes
    -----
    Ties ``g_i = 0`` go to ``lower_i``.  Coordinates with
    ``lower_i = upper_i`` count as "at the lower bound" in the key, so each
    point has one key.  The answer is a dense :class:`Atom`.

    Examples
    --------
    >>> import numpy as np
    >>> Box([0.0, -1.0, 2.0], [1.0, 1.0, 5.0])(np.array([1.0, -2.0, 0.0])).to_dense()
    array([0., 1., 2.])
    """

    def __init__(self, lower: Any, upper: Any, dim: int | None = None) -> None:
        name = type(self).__name__
        self._init_bounds(name, lower, upper, dim)

    def _init_bounds(self, name: str, lower: Any, upper: Any, dim: int | None) -> None:
        try:
            lo = np.asarray(lower, dtype=float)
            up = np.asarray(upper, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}: `lower` and `upper` must be numbers or numeric arrays, "
                f"got {lower!r} and {upper!r}"
            ) from None
        try:
            shape = np.broadcast_shapes(lo.shape, up.shape)
        except ValueError:
            raise ShapeError(
                f"{name}: `lower` (shape {lo.shape}) and `upper` (shape {up.shape}) "
                "do not broadcast to a common shape"
            ) from None
        if 0 in shape:
            raise ShapeError(f"{name}: `lower` and `upper` must not be empty, got shape {shape}")
        for arg, arr in (("lower", lo), ("upper", up)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name}: `{arg}` must be finite, got {_ArrayRepr(arr)!r}")
        bad = lo > up
        if np.any(bad):
            i = int(np.flatnonzero(np.broadcast_to(bad, shape))[0]) if shape else 0
            lo_i = float(np.broadcast_to(lo, shape).reshape(-1)[i]) if shape else float(lo)
            up_i = float(np.broadcast_to(up, shape).reshape(-1)[i]) if shape else float(up)
            raise ValueError(
                f"{name}: `lower` must be <= `upper`, got lower={lo_i:g} > upper={up_i:g}"
                + (f" at flat index {i}" if shape else "")
            )
        if shape:
            if dim is not None:
                _dim_shape(dim, name)
                size = int(np.prod(shape))
                if int(dim) != size:
                    raise ShapeError(
                        f"{name}: `dim`={dim!r} does not match the bounds' shape {shape} "
                        f"({size} entries)"
                    )
            lo = np.ascontiguousarray(np.broadcast_to(lo, shape))
            up = np.ascontiguousarray(np.broadcast_to(up, shape))
            self.shape = tuple(shape)
        else:
            self.shape = _dim_shape(dim, name)
        self.lower: np.ndarray | float = lo if shape else float(lo)
        self.upper: np.ndarray | float = up if shape else float(up)
        self._bounds_repr = (_ArrayRepr(lo), _ArrayRepr(up)) if shape else None
        self._lo_flat = lo.reshape(-1) if shape else float(lo)
        self._up_flat = up.reshape(-1) if shape else float(up)
        # Coordinates fixed by lower == upper must not split one point into two keys.
        fixed = np.asarray(lo == up).reshape(-1)
        self._free: np.ndarray | bool | None = (
            None if not fixed.any() else (~fixed if shape else False)
        )
        # Scale of the box for a relative violation; a single point {c} uses |c| or 1.
        scale = max(float(np.max(up - lo)), float(np.max(np.maximum(np.abs(lo), np.abs(up)))))
        self._scale = scale if scale > 0 else 1.0

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``||upper - lower||_2``, the distance between two opposite corners (exact).

        With scalar bounds the dimension comes from the domain or ``shape``;
        ``None`` when neither gives it.
        """
        if isinstance(self._lo_flat, np.ndarray):
            return float(np.linalg.norm(self._up_flat - self._lo_flat))
        shape = self.shape if self.shape is not None else shape
        if shape is None:
            return None
        return (self._up_flat - self._lo_flat) * float(np.sqrt(int(np.prod(shape))))

    def _pattern_key(self, upper_mask: np.ndarray) -> tuple[str, int, bytes]:
        if self._free is not None:
            upper_mask = upper_mask & self._free
        return ("box", upper_mask.size, np.packbits(upper_mask).tobytes())

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        at_upper = flat < 0
        # numba select: np.where mispredicts branches on random signs and the
        # arithmetic select needs a temporary; this is 3-10x faster at n = 1e6.
        if isinstance(self._lo_flat, np.ndarray):
            s = _select_array(flat, self._lo_flat, self._up_flat)
        else:
            s = _select_scalar(flat, self._lo_flat, self._up_flat)
        return Atom(s.reshape(direction.shape), key=self._pattern_key(at_upper))

    # -- subset oracle: sampled vertices as bit patterns ---------------------------
    def _free_mask(self, n: int) -> np.ndarray:
        if self._free is None:
            return np.ones(n, dtype=bool)
        if isinstance(self._free, np.ndarray):
            return self._free
        return np.zeros(n, dtype=bool)  # scalar bounds with lower == upper: one point

    def n_candidates(self, shape: tuple[int, ...]) -> int:
        """Number of vertices, ``2^(free coordinates)`` (a Python int, possibly huge)."""
        n = int(np.prod(shape))
        return 1 << int(np.count_nonzero(self._free_mask(n)))

    def candidate_cost(self, shape: tuple[int, ...]) -> int:
        """A vertex is dense: scoring one reads all ``n`` coordinates."""
        return int(np.prod(shape))

    def count_candidates(self, candidates: np.ndarray) -> int:
        return int(candidates.shape[0])

    def sample_candidates(self, shape: tuple[int, ...], size: int, rng: np.random.Generator,
                          active: Sequence[Atom]) -> np.ndarray:
        """``size`` distinct vertices drawn uniformly outside ``active``, as a ``(p, n)``
        boolean array of upper-bound patterns (``p <= size``); O(size * n)."""
        n = int(np.prod(shape))
        free = self._free_mask(n)
        taken = [a.key[2] for a in active
                 if isinstance(a.key, tuple) and len(a.key) == 3 and a.key[0] == "box"]
        limit = self.n_candidates(shape) - len(taken)

        def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
            masks = (rng.random((m, n)) < 0.5) & free
            return masks, np.packbits(masks, axis=1)

        return _sample_distinct(draw, size, taken, limit)

    def _vertex(self, mask: np.ndarray, shape: tuple[int, ...]) -> Atom:
        s = np.where(mask, self._up_flat, self._lo_flat).astype(float)
        return Atom(s.reshape(shape), key=self._pattern_key(mask))

    def extreme_point_among(self, direction: np.ndarray, candidates: Any) -> Atom:
        """The best of the sampled vertices ``candidates`` (a ``(p, n)`` boolean array of
        upper-bound patterns, from :meth:`sample_candidates`); O(p n)."""
        flat = _check_direction(self, direction)
        B = np.asarray(candidates)
        if B.ndim != 2 or B.shape[1] != flat.size or B.shape[0] == 0 or B.dtype != bool:
            raise ShapeError(
                f"{self!r}.extreme_point_among: `candidates` must be a non-empty boolean array "
                f"of shape (p, {flat.size}), got {B.dtype} array of shape {B.shape}"
            )
        # <g, s> = <g, lower> + <g * (upper - lower), mask>; the constant is common to all
        gain = flat * (self._up_flat - self._lo_flat)
        j = int(np.argmin(B @ gain))
        return self._vertex(B[j], direction.shape)

    def violation(self, x: np.ndarray) -> float:
        """Largest coordinate excess ``max(lower - x, x - upper, 0)`` over the box's scale.

        The scale is ``max(max(upper - lower), max(|lower|, |upper|))`` (1 for
        the box ``{0}``); ``inf`` for non-finite ``x``.
        """
        flat = np.asarray(x, dtype=float).reshape(-1)
        if isinstance(self._lo_flat, np.ndarray) and flat.size != self._lo_flat.size:
            raise ShapeError(
                f"{self!r}.violation: `x` has {flat.size} entries, expected {self._lo_flat.size}"
            )
        if flat.size == 0:
            return 0.0
        excess = float(np.max(np.maximum(self._lo_flat - flat, flat - self._up_flat)))
        if not np.isfinite(excess):  # np.max propagates nan
            return float("inf")
        return max(0.0, excess) / self._scale

    def _repr_params(self) -> dict[str, Any]:
        if self._bounds_repr is not None:
            return {"lower": self._bounds_repr[0], "upper": self._bounds_repr[1]}
        return _repr_with_dim(self, {"lower": self.lower, "upper": self.upper})


class LinfBall(Box):
    """The l-infinity ball ``{x : max_i |x_i| <= radius}`` = ``Box(-radius, radius)``.

    Vertices: ``{-radius, radius}^n`` (Box keys).  LMO:
    ``-radius * sign(g)`` with ``g_i = 0`` giving ``-radius``; cost O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Examples
    --------
    >>> import numpy as np
    >>> LinfBall(2.0)(np.array([1.0, -3.0, 0.0])).to_dense()
    array([-2.,  2., -2.])
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("LinfBall", radius)
        self._init_bounds("LinfBall", -self.radius, self.radius, dim)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_inf - radius) / radius`` (``inf`` for non-finite ``x``)."""
        m = float(np.max(np.abs(np.asarray(x, dtype=float)), initial=0.0))
        if not np.isfinite(m):
            return float("inf")
        return max(0.0, m - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {"radius": self.radius})


class Hypercube(Box):
    """The unit hypercube ``[0, 1]^n`` = ``conv{0, 1}^n``.

    Vertices: the 0/1 vectors, with the :class:`Box` keys ``("box", n, bytes)``
    (the 0/1 pattern packed into bits: hashing stays O(n/8) even when half
    the coordinates are 1).  LMO: ``s = (g < 0)`` (ties ``g_i = 0`` give 0);
    cost O(n), sparse answer with one entry per negative ``g_i``.

    Parameters
    ----------
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Examples
    --------
    >>> import numpy as np
    >>> a = Hypercube()(np.array([1.0, -2.0, 0.0, -0.5]))
    >>> a.indices, a.to_dense()
    (array([1, 3]), array([0., 1., 0., 1.]))
    """

    def __init__(self, dim: int | None = None) -> None:
        self._init_bounds("Hypercube", 0.0, 1.0, dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        ones = flat < 0
        idx = np.flatnonzero(ones)
        return Atom.sparse(idx, np.ones(idx.size), direction.shape, key=self._pattern_key(ones))

    def _vertex(self, mask: np.ndarray, shape: tuple[int, ...]) -> Atom:
        idx = np.flatnonzero(mask)
        return Atom.sparse(idx, np.ones(idx.size), shape, key=self._pattern_key(mask))

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {})


class KSparsePolytope(SubsetOracle, LMO):
    """The k-sparse polytope ``conv{x : ||x||_0 <= k, ||x||_inf <= radius}``.

    Equivalently ``{x : ||x||_1 <= k * radius, ||x||_inf <= radius}``.
    Vertices: the points with exactly ``k`` entries equal to ``+-radius`` and
    the rest 0; key = tuple of ``(index, sign)`` pairs sorted by index.  LMO:
    the ``k`` largest ``|g_i|`` get ``-radius * sign(g_i)``; cost O(n) (one
    ``argpartition``), sparse answer with ``k`` entries.  Subset oracle
    (randomized away-step): candidates are sampled vertices, a pair of
    ``(p, k)`` arrays (sorted supports, signs) drawn uniformly; scoring them
    costs O(p k).

    Parameters
    ----------
    k : int
        Sparsity, a positive integer (at most ``dim`` when ``dim`` is given).
    radius : float, default 1.0
        Bound on each entry; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    When ``dim`` is not given and a direction has ``n < k`` entries, the
    polytope is the box ``[-radius, radius]^n`` and all ``n`` entries are set.
    Ties in ``|g_i|`` are broken by ``argpartition`` (deterministically for a
    given input); a selected ``g_i = 0`` gets ``+radius``, so the answer is
    always a vertex.

    Examples
    --------
    >>> import numpy as np
    >>> a = KSparsePolytope(2, radius=3.0)(np.array([0.1, -5.0, 2.0, 1.0]))
    >>> a.key, a.to_dense()
    (((1, 1), (2, -1)), array([ 0.,  3., -3.,  0.]))
    """

    def __init__(self, k: int, radius: float = 1.0, dim: int | None = None) -> None:
        try:
            ok = int(k) == k and k >= 1 and not isinstance(k, bool)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"KSparsePolytope: `k` must be a positive integer, got {k!r}")
        self.k = int(k)
        self.radius = _check_radius("KSparsePolytope", radius)
        self.shape = _dim_shape(dim, "KSparsePolytope")
        if self.shape is not None and self.k > self.shape[0]:
            raise ValueError(f"KSparsePolytope: `k` must be <= `dim`={dim}, got k={k!r}")

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius * sqrt(k)``: two opposite vertices with ``k`` entries ``+-radius``."""
        return 2.0 * self.radius * float(np.sqrt(self.k))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = _check_direction(self, direction)
        n = flat.size
        k = min(self.k, n)
        if k < n:
            idx = np.argpartition(np.abs(flat), n - k)[n - k:]
            idx.sort()
        else:
            idx = np.arange(n)
        signs = np.where(flat[idx] > 0, -1, 1)
        key = tuple(zip(idx.tolist(), signs.tolist()))
        return Atom.sparse(idx, self.radius * signs, direction.shape, key=key)

    # -- subset oracle: sampled vertices as (support, signs) ----------------------
    def n_candidates(self, shape: tuple[int, ...]) -> int:
        """Number of vertices, ``C(n, k) 2^k`` (a Python int, possibly huge)."""
        n = int(np.prod(shape))
        k = min(self.k, n)
        return math.comb(n, k) << k

    def candidate_cost(self, shape: tuple[int, ...]) -> int:
        """A vertex has ``k`` entries: scoring one reads ``k`` coordinates."""
        return min(self.k, int(np.prod(shape)))

    def count_candidates(self, candidates: tuple[np.ndarray, np.ndarray]) -> int:
        return int(candidates[0].shape[0])

    def sample_candidates(self, shape: tuple[int, ...], size: int, rng: np.random.Generator,
                          active: Sequence[Atom]) -> tuple[np.ndarray, np.ndarray]:
        """``size`` distinct vertices drawn uniformly outside ``active``: sorted supports
        and signs, two ``(p, k)`` arrays (``p <= size``).  O(size * k log k) while
        ``k^2 <= n`` (rejection of supports with repeats), O(size * n) otherwise."""
        n = int(np.prod(shape))
        k = min(self.k, n)
        taken = [np.asarray([2 * i + (sg > 0) for i, sg in a.key], dtype=np.int64).tobytes()
                 for a in active if isinstance(a.key, tuple) and len(a.key) == k]
        limit = self.n_candidates(shape) - len(taken)

        def draw(m: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
            if k * k <= n:
                idx = rng.integers(0, n, size=(m, k))
                idx.sort(axis=1)
                bad = np.flatnonzero(np.any(idx[:, 1:] == idx[:, :-1], axis=1))
                while bad.size:  # a repeat has probability <= k^2 / (2n) <= 1/2 per row
                    redo = rng.integers(0, n, size=(bad.size, k))
                    redo.sort(axis=1)
                    idx[bad] = redo
                    bad = bad[np.any(redo[:, 1:] == redo[:, :-1], axis=1)]
            else:
                idx = np.argpartition(rng.random((m, n)), k - 1, axis=1)[:, :k]
                idx.sort(axis=1)
            signs = np.where(rng.random((m, k)) < 0.5, -1, 1).astype(np.int64)
            return (idx, signs), idx * 2 + (signs > 0)

        return _sample_distinct(draw, size, taken, limit)

    def extreme_point_among(self, direction: np.ndarray, candidates: Any) -> Atom:
        """The best of the sampled vertices ``candidates = (supports, signs)`` (two
        ``(p, k)`` arrays from :meth:`sample_candidates`); O(p k)."""
        flat = _check_direction(self, direction)
        try:
            idx, signs = (np.asarray(c) for c in candidates)
        except (TypeError, ValueError):
            raise ShapeError(f"{self!r}.extreme_point_among: `candidates` must be a pair "
                             "(supports, signs) of (p, k) arrays") from None
        k = min(self.k, flat.size)
        if idx.ndim != 2 or idx.shape != signs.shape or idx.shape[0] == 0 or idx.shape[1] != k:
            raise ShapeError(
                f"{self!r}.extreme_point_among: `candidates` must be two non-empty (p, {k}) "
                f"arrays, got shapes {idx.shape} and {signs.shape}"
            )
        if idx.min() < 0 or idx.max() >= flat.size:
            raise ShapeError(f"{self!r}.extreme_point_among: supports must lie in "
                             f"[0, {flat.size})")
        j = int(np.argmin(np.sum(flat[idx] * signs, axis=1)))
        sel, sg = idx[j], signs[j].astype(np.int64)
        key = tuple(zip(sel.tolist(), sg.tolist()))
        return Atom.sparse(sel, self.radius * sg, direction.shape, key=key)

    def violation(self, x: np.ndarray) -> float:
        """Largest relative excess: ``||x||_inf`` over ``radius``, ``||x||_1`` over ``k * radius``.

        ``inf`` for non-finite ``x``.
        """
        a = np.abs(np.asarray(x, dtype=float))
        n1 = float(a.sum())
        if not np.isfinite(n1):
            return float("inf")
        ninf = float(a.max(initial=0.0))
        l1_radius = self.k * self.radius
        return max(0.0, (ninf - self.radius) / self.radius, (n1 - l1_radius) / l1_radius)

    def _repr_params(self) -> dict[str, Any]:
        return _repr_with_dim(self, {"k": self.k, "radius": self.radius})


def _sample_distinct(draw: Any, size: int, taken: list[bytes], limit: int) -> Any:
    """Up to ``size`` distinct uniform vertices whose codes are not in ``taken``.

    ``draw(m)`` returns ``m`` uniform vertices as ``(payload, codes)``: the
    payload an array (or a tuple of arrays) with one row per vertex, ``codes``
    a 2-d array identifying them (the key's bytes).  Rejection of repeats and
    of taken vertices keeps the draw uniform over the remaining vertices.
    ``limit`` is how many remain, so a tiny domain cannot loop forever.
    """
    want = int(min(size, limit))
    payload, codes = draw(want + len(taken) + max(4, want // 8))
    rows = _row_bytes(codes)
    bad = _row_bytes_from(taken, rows.dtype)
    for _ in range(50):
        _, first = np.unique(rows, return_index=True)
        keep = np.zeros(rows.size, dtype=bool)
        keep[first] = True
        if bad.size:
            keep &= ~np.isin(rows, bad)
        if np.count_nonzero(keep) >= want:
            break
        more, more_codes = draw(max(4, want))
        payload = (tuple(np.concatenate([a, b]) for a, b in zip(payload, more))
                   if isinstance(payload, tuple) else np.concatenate([payload, more]))
        rows = np.concatenate([rows, _row_bytes(more_codes)])
    sel = np.sort(np.flatnonzero(keep))[:want]
    return tuple(a[sel] for a in payload) if isinstance(payload, tuple) else payload[sel]


def _row_bytes(a: np.ndarray) -> np.ndarray:
    """The rows of a 2-d array as one opaque (void) value each, for set operations."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


def _row_bytes_from(keys: list[bytes], dtype: np.dtype) -> np.ndarray:
    """Byte strings (of the same length as ``dtype``) as a void array."""
    keys = [k for k in keys if len(k) == dtype.itemsize]
    return np.frombuffer(b"".join(keys), dtype=dtype) if keys else np.zeros(0, dtype=dtype)

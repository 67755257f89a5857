"""Boxes: ``lower <= x <= upper``, the l-infinity ball and the unit hypercube.

A direction of any shape is treated as a flat vector (C order).  The
hypercube answers with sparse :class:`Atom` s, the other boxes with dense
ones.  Their vertices are too many to index, so the subset oracle of the
randomized away-step samples them as bit patterns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from .._numbers import real_array
from ..active_set import ActiveSet
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from ._vertices import decomposed_point
from .base import LMO
from .dual import DualSolution, bounds_value
from .in_face import FACE_TOL, nonneg_step, upper_step
from .subset import SubsetOracle, sample_distinct

__all__ = ["Box", "LinfBall", "Hypercube"]


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


def parse_bounds(name: str, lower: Any,
                 upper: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """``lower`` and ``upper`` as float arrays of their own (copies) and their common
    (broadcast) shape, refused with an error naming ``name`` when they are not numeric, do
    not broadcast, are empty or are not finite (the order of the bounds is the caller's
    check)."""
    # no text ("1" was 1.0), no bool, no None (NaN, refused as "not finite"); copies: a
    # bound the caller changes later must not move the checked domain
    what = "a number or an array of numbers"
    lo = real_array(lower, name, "lower", bools=False, what=what).copy()
    up = real_array(upper, name, "upper", bools=False, what=what).copy()
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
    return lo, up, tuple(shape)


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
        to a common shape).  Copied: changing the caller's arrays afterwards
        does not change the box.
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
    >>> from frankwolfe import Box
    >>> Box([0.0, -1.0, 2.0], [1.0, 1.0, 5.0])(np.array([1.0, -2.0, 0.0])).to_dense()
    array([0., 1., 2.])
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, lower: Any, upper: Any, dim: int | None = None) -> None:
        name = type(self).__name__
        self._init_bounds(name, lower, upper, dim)

    def _init_bounds(self, name: str, lower: Any, upper: Any, dim: int | None) -> None:
        lo, up, shape = parse_bounds(name, lower, upper)
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
                dim_shape(dim, name)
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
            self.shape = dim_shape(dim, name)
        self.lower: np.ndarray | float = lo if shape else float(lo)
        self.upper: np.ndarray | float = up if shape else float(up)
        self._bounds_repr = (_ArrayRepr(lo), _ArrayRepr(up)) if shape else None
        # flat bound arrays, or the two scalars of scalar bounds
        self._lo_flat: np.ndarray | float = lo.reshape(-1) if shape else float(lo)
        self._up_flat: np.ndarray | float = up.reshape(-1) if shape else float(up)
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
        return (float(self._up_flat) - self._lo_flat) * float(np.sqrt(int(np.prod(shape))))

    def _pattern_key(self, upper_mask: np.ndarray) -> tuple[str, int, bytes]:
        if self._free is not None:
            upper_mask = upper_mask & self._free
        return ("box", upper_mask.size, np.packbits(upper_mask).tobytes())

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        at_upper = flat < 0
        # numba select: np.where mispredicts branches on random signs and the
        # arithmetic select needs a temporary (timing: benchmarks/README.md,
        # "Measurements behind code choices")
        lo, up = self._lo_flat, self._up_flat
        if isinstance(lo, np.ndarray) and isinstance(up, np.ndarray):
            s = _select_array(flat, lo, up)
        else:
            s = _select_scalar(flat, float(lo), float(up))
        return Atom(s.reshape(direction.shape), key=self._pattern_key(at_upper), copy=False)

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """Dual of ``min <d, x>`` over the box: no rows, the reduced costs are ``d``; O(n).

        The value is ``sum_j d_j * (lower_j if d_j > 0 else upper_j)``.
        """
        flat = check_direction(self, direction)
        rc = np.array(flat, dtype=float)
        return DualSolution({}, rc, bounds_value(rc, self._lo_flat, self._up_flat))

    def decompose(self, x: Any) -> ActiveSet:
        """``x`` as a convex combination of at most ``n + 1`` nested vertices; O(n log n + k n).

        The staircase decomposition: with ``t_i = (x_i - lower_i) / (upper_i -
        lower_i)`` in ``[0, 1]`` sorted decreasingly, ``t_(1) >= ... >= t_(n)``, the
        vertex ``v_k`` has the ``k`` coordinates of largest ``t`` at their upper
        bound and the others at their lower bound, with weight ``t_(k) - t_(k+1)``
        (``t_(0) = 1``, ``t_(n+1) = 0``); coordinate ``i`` is at its upper bound in
        vertices of total weight ``t_i``.  Vertices of weight 0 (ties) are left
        out, so ``k`` is at most the number of distinct values of ``t`` plus one (2
        for the center of the box).  The atoms are the oracle's (the :class:`Box`
        keys of their upper-bound patterns; sparse for the hypercube), each
        ``n`` entries: ``k n`` in all.  Coordinates with ``lower_i = upper_i`` stay
        at their bound.

        Parameters
        ----------
        x : array_like
            A point of the box, of the shape the oracle is asked with.

        Returns
        -------
        ActiveSet

        Raises
        ------
        InfeasibleError
            When ``x`` is outside the box (beyond the feasibility tolerance).

        Examples
        --------
        >>> import numpy as np
        >>> from frankwolfe import Box
        >>> S = Box(0.0, [1.0, 2.0]).decompose(np.array([0.25, 1.5]))
        >>> [a.to_dense() for a in S.atoms], S.weights
        ([array([0., 0.]), array([0., 2.]), array([1., 2.])], array([0.25, 0.5 , 0.25]))
        """
        a = decomposed_point(self, x)
        flat = a.reshape(-1)
        n = flat.size
        lo, up = self._bounds(n)
        width = up - lo
        free = width > 0
        t = np.zeros(n)
        # clipped: a point within the feasibility tolerance outside the box
        t[free] = np.clip((flat[free] - lo[free]) / width[free], 0.0, 1.0)
        order = np.argsort(-t, kind="stable")
        levels = np.concatenate(([1.0], t[order], [0.0]))
        w = levels[:-1] - levels[1:]  # w[k]: the vertex with order[:k] at the upper bound
        mask = np.zeros(n, dtype=bool)
        atoms, weights = [], []
        done = 0
        for k in np.flatnonzero(w > 0):
            mask[order[done:k]] = True
            done = int(k)
            atoms.append(self._vertex(mask.copy(), a.shape))
            weights.append(w[k])
        wa = np.asarray(weights)
        return ActiveSet(atoms, wa / wa.sum(), keep_x=False)

    # -- in-face oracle (decomposition-invariant methods) ---------------------------
    def _bounds(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        lo = np.broadcast_to(np.asarray(self._lo_flat, dtype=float), (n,))
        up = np.broadcast_to(np.asarray(self._up_flat, dtype=float), (n,))
        return lo, up

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): coordinates of ``x`` at a
        bound stay there, the others follow the sign of ``direction``; O(n)."""
        c = np.array(check_direction(self, direction), dtype=float)
        xf = np.asarray(x, dtype=float).reshape(-1)
        lo, up = self._bounds(c.size)
        tol = FACE_TOL * np.maximum(up - lo, 1.0)
        c[xf <= lo + tol] = 1.0
        c[xf >= up - tol] = -1.0
        return self.extreme_point(c.reshape(direction.shape))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d`` in the box."""
        xf = np.asarray(x, dtype=float).reshape(-1)
        d = np.asarray(direction, dtype=float).reshape(-1)
        lo, up = self._bounds(xf.size)
        return min(nonneg_step(xf - lo, d), upper_step(xf, d, up))

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

        return sample_distinct(draw, size, taken, limit)

    def _vertex(self, mask: np.ndarray, shape: tuple[int, ...]) -> Atom:
        s = np.where(mask, self._up_flat, self._lo_flat).astype(float)
        return Atom(s.reshape(shape), key=self._pattern_key(mask), copy=False)

    def extreme_point_among(self, direction: np.ndarray, candidates: Any) -> Atom:
        """The best of the sampled vertices ``candidates`` (a ``(p, n)`` boolean array of
        upper-bound patterns, from :meth:`sample_candidates`); O(p n)."""
        flat = check_direction(self, direction)
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
        return repr_with_dim(self, {"lower": self.lower, "upper": self.upper})


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
    >>> from frankwolfe import LinfBall
    >>> LinfBall(2.0)(np.array([1.0, -3.0, 0.0])).to_dense()
    array([-2.,  2., -2.])
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("LinfBall", radius)
        self._init_bounds("LinfBall", -self.radius, self.radius, dim)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_inf - radius) / radius`` (``inf`` for non-finite ``x``)."""
        m = float(np.max(np.abs(self._point(x)), initial=0.0))
        if not np.isfinite(m):
            return float("inf")
        return max(0.0, m - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"radius": self.radius})


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
    >>> from frankwolfe import Hypercube
    >>> a = Hypercube()(np.array([1.0, -2.0, 0.0, -0.5]))
    >>> a.indices, a.to_dense()
    (array([1, 3]), array([0., 1., 0., 1.]))
    """

    def __init__(self, dim: int | None = None) -> None:
        self._init_bounds("Hypercube", 0.0, 1.0, dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        ones = flat < 0
        idx = np.flatnonzero(ones)
        return Atom.sparse(idx, np.ones(idx.size), direction.shape, key=self._pattern_key(ones),
                           copy=False)

    def _vertex(self, mask: np.ndarray, shape: tuple[int, ...]) -> Atom:
        idx = np.flatnonzero(mask)
        return Atom.sparse(idx, np.ones(idx.size), shape, key=self._pattern_key(mask), copy=False)

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {})

"""Balls of structured norms: the K-norm, ordered weighted l1 (OWL / SLOPE), group l1
and the box-scaled l1 "diamond".

Every oracle here treats a direction of any shape as a flat vector (C order) and
costs O(n) or O(n log n).  The Euclidean ball, lp balls and the plain l1 ball are in
:mod:`frankwolfe.lmo.norms`; the k-sparse polytope in :mod:`frankwolfe.lmo.ksparse`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from .base import LMO, declared_shape
from .box import _ArrayRepr, parse_bounds
from .hypersimplex import check_k

__all__ = ["KNormBall", "OrderedWeightedL1Ball", "GroupL1Ball", "ScaledL1Ball"]


def _excess(norm: float, radius: float) -> float:
    """``max(0, norm - radius) / radius``, ``inf`` for a non-finite norm."""
    if not np.isfinite(norm):
        return float("inf")
    return max(0.0, norm - radius) / radius


class KNormBall(LMO):
    """The K-norm ball ``conv(B_1(radius) ∪ B_inf(radius / k))``.

    This is FrankWolfe.jl's ``KNormBallLMO``: the convex hull of the l1 ball of radius
    ``radius`` and the l-infinity ball of radius ``radius / k``.  It is the ball
    ``{x : sum of the k largest |x_i| <= radius}`` of the top-k norm, whose dual norm
    is ``max(||g||_inf, ||g||_1 / k)``.  (Not the k-sparse polytope
    ``B_1(k r) ∩ B_inf(r)``: that is :class:`~frankwolfe.lmo.ksparse.KSparsePolytope`.)

    Vertices: ``-radius * sign(g_i) e_i`` (sparse, key ``("e", i, sign)``) and the
    corners ``-(radius / k) * sign(g)`` (dense, key ``("corner", n, bytes)``, the sign
    pattern packed into bits).  LMO: the better of the two candidates, comparing
    ``radius * max|g_i|`` with ``radius / k * ||g||_1``; cost O(n).

    Parameters
    ----------
    k : int
        Positive integer (at most ``dim`` when ``dim`` is given, as for
        :class:`~frankwolfe.lmo.ksparse.KSparsePolytope`); ``k = 1`` gives the
        l-infinity ball of radius ``radius``.
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    On a tie the sparse vertex wins; ``g_i = 0`` gives ``+`` in a corner.  When
    ``dim`` is not given and a direction has ``n <= k`` entries, the corners lie in
    the l1 ball (their l1 norm is ``n * radius / k``): the ball is ``B_1(radius)``
    and every answer is a vertex ``+-radius * e_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import KNormBall
    >>> KNormBall(2)(np.array([3.0, -1.0, 0.5])).to_dense()
    array([-1.,  0.,  0.])
    >>> KNormBall(2)(np.array([1.0, -1.0, 1.0])).to_dense()
    array([-0.5,  0.5, -0.5])
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, k: int, radius: float = 1.0, dim: int | None = None) -> None:
        self.shape = dim_shape(dim, "KNormBall")
        self.k = check_k("KNormBall", k, self.shape)
        self.radius = check_radius("KNormBall", radius)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        a = np.abs(flat)
        i = int(np.argmax(a))
        if a[i] * self.k >= float(a.sum()):  # l1 vertex at least as good as the corner
            sign = -1 if flat[i] > 0 else 1
            return Atom.vertex(i, sign * self.radius, direction.shape, ("e", i, sign))
        pos = flat > 0
        s = np.where(pos, -self.radius / self.k, self.radius / self.k)
        return Atom(s.reshape(direction.shape),
                    key=("corner", flat.size, np.packbits(pos).tobytes()), copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_(k) - radius) / radius`` with ``||x||_(k)`` the sum of the ``k``
        largest ``|x_i|``; ``inf`` for non-finite ``x``; O(n)."""
        a = np.abs(np.asarray(x, dtype=float)).reshape(-1)
        k = min(self.k, a.size)
        top = a if k >= a.size else np.partition(a, a.size - k)[a.size - k:]
        return _excess(float(top.sum()), self.radius)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``2 * radius * max(1, sqrt(n) / k)`` (exact: the longest vertex, doubled);
        ``None`` when the dimension is unknown and ``k`` is small enough for the
        corners to be longest."""
        shape = self.shape if self.shape is not None else shape
        if shape is None:
            return None
        n = int(np.prod(shape))
        return 2.0 * self.radius * max(1.0, float(np.sqrt(n)) / self.k)

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"k": self.k, "radius": self.radius})


class OrderedWeightedL1Ball(LMO):
    """The ordered weighted l1 (OWL / SLOPE) ball ``{x : sum_i w_i |x|_[i] <= radius}``.

    ``|x|_[1] >= |x|_[2] >= ...`` are the magnitudes sorted in decreasing order and
    ``w_1 >= w_2 >= ... >= 0`` the weights, ``w_1 > 0``.  Equal weights give the
    l1 ball (scaled), ``w = (1, 0, ..., 0)`` the l-infinity ball, ``w = 1_k`` the
    K-norm ball.

    Vertices: ``-radius / W_j * sign(g_i)`` on ``j`` coordinates, 0 elsewhere, with
    ``W_j = w_1 + ... + w_j``; key ``("owl", indices, signs)`` (bytes).  LMO: sort
    ``|g|``, take the ``j`` maximizing ``(sum of the j largest |g_i|) / W_j`` (the dual
    norm) and put the vertex on those ``j`` coordinates; cost O(n log n), sparse
    answer with ``j`` entries.

    Parameters
    ----------
    weights : array_like
        The ``n`` weights, non-increasing and non-negative, the first positive; they
        fix the dimension.
    radius : float, default 1.0
        Positive and finite.

    Notes
    -----
    Ties in the ratio go to the smallest ``j`` (the sparsest vertex); ``g_i = 0`` on a
    chosen coordinate gives ``+``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import OrderedWeightedL1Ball
    >>> owl = OrderedWeightedL1Ball([2.0, 1.0, 1.0])
    >>> owl(np.array([1.0, -3.0, 0.5])).to_dense()
    array([0. , 0.5, 0. ])
    >>> owl(np.array([1.0, -1.0, 0.5])).to_dense()
    array([-0.33333333,  0.33333333,  0.        ])
    """

    def __init__(self, weights: Any, radius: float = 1.0) -> None:
        try:
            w = np.array(weights, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"OrderedWeightedL1Ball: `weights` must be a 1-D array of numbers, got {weights!r}"
            ) from None
        if w.ndim != 1 or w.size == 0:
            raise ShapeError(
                "OrderedWeightedL1Ball: `weights` must be a non-empty 1-D array, got shape "
                f"{w.shape}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(
                "OrderedWeightedL1Ball: `weights` must be finite and non-negative, got "
                f"{_ArrayRepr(w)!r}"
            )
        if not w[0] > 0:
            raise ValueError(f"OrderedWeightedL1Ball: `weights[0]` must be positive, got {w[0]:g}")
        rise = np.flatnonzero(w[1:] > w[:-1])
        if rise.size:
            i = int(rise[0])
            raise ValueError(
                f"OrderedWeightedL1Ball: `weights` must be non-increasing, got "
                f"weights[{i}]={w[i]:g} < weights[{i + 1}]={w[i + 1]:g}"
            )
        self.weights = w
        self.weights.flags.writeable = False
        self._cum = np.cumsum(w)
        self._weights_repr = _ArrayRepr(w)
        self.radius = check_radius("OrderedWeightedL1Ball", radius)
        self.shape = (w.size,)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        order = np.argsort(-np.abs(flat), kind="stable")
        ratios = np.cumsum(np.abs(flat[order])) / self._cum
        j = int(np.argmax(ratios)) + 1  # argmax: first (smallest j) on ties
        idx = np.sort(order[:j])
        signs = np.where(flat[idx] > 0, -1, 1).astype(np.int8)
        key = ("owl", idx.tobytes(), signs.tobytes())
        return Atom.sparse(idx, signs * (self.radius / self._cum[j - 1]), direction.shape, key=key,
                           copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, sum_i w_i |x|_[i] - radius) / radius``; ``inf`` for non-finite ``x``;
        O(n log n)."""
        a = np.abs(np.asarray(x, dtype=float)).reshape(-1)
        if a.size != self.weights.size:
            raise ShapeError(f"{self!r}.violation: `x` has {a.size} entries, expected "
                             f"{self.weights.size}")
        return _excess(float(np.dot(np.sort(a)[::-1], self.weights)), self.radius)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius * max_j sqrt(j) / W_j`` (exact: the longest vertex, doubled)."""
        j = np.arange(1, self.weights.size + 1)
        return 2.0 * self.radius * float(np.max(np.sqrt(j) / self._cum))

    def _repr_params(self) -> dict[str, Any]:
        return {"weights": self._weights_repr, "radius": self.radius}


class GroupL1Ball(LMO):
    """The group l1 (l1/l2) ball ``{x : sum_g ||x_g||_2 <= radius}``.

    The groups partition the coordinates.  Vertices: ``-radius * g_G / ||g_G||_2`` on
    one group ``G`` (a continuum: automatic keys).  LMO: the group of largest
    ``||g_G||_2``; cost O(n) (one pass over the direction), sparse answer with the
    group's entries.  Singleton groups give the l1 ball, one group the l2 ball.

    Parameters
    ----------
    groups : sequence of array_like of int
        Index arrays (flat indices) partitioning ``0, ..., n - 1``: every index in
        exactly one non-empty group.  They fix the dimension ``n``.
    radius : float, default 1.0
        Positive and finite.

    Notes
    -----
    For the zero direction every point is optimal; the answer is then ``0`` (key
    ``("zero",)``), as for :class:`~frankwolfe.lmo.norms.L2Ball`.  Ties between groups
    go to the first group.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import GroupL1Ball
    >>> ball = GroupL1Ball([[0, 1], [2]], radius=5.0)
    >>> ball(np.array([3.0, -4.0, 2.0])).to_dense()
    array([-3.,  4.,  0.])
    """

    def __init__(self, groups: Sequence[Any], radius: float = 1.0) -> None:
        try:
            arrays = [np.asarray(g).reshape(-1) for g in groups]
        except (TypeError, ValueError):
            raise ValueError(
                f"GroupL1Ball: `groups` must be a sequence of index arrays, got {groups!r}"
            ) from None
        if not arrays:
            raise ValueError("GroupL1Ball: `groups` must hold at least one group, got none")
        for j, g in enumerate(arrays):
            if g.size == 0:
                raise ValueError(f"GroupL1Ball: `groups[{j}]` is empty")
            if not np.issubdtype(g.dtype, np.integer):
                raise ValueError(
                    f"GroupL1Ball: `groups[{j}]` must hold integer indices, got dtype {g.dtype}"
                )
        perm = np.concatenate(arrays).astype(np.int64)
        n = perm.size
        bad = (perm < 0) | (perm >= n)
        if np.any(bad):
            raise ValueError(
                f"GroupL1Ball: `groups` must partition 0..{n - 1}, got index {int(perm[bad][0])}"
            )
        counts = np.bincount(perm, minlength=n)
        if np.any(counts != 1):
            i = int(np.flatnonzero(counts != 1)[0])
            raise ValueError(
                f"GroupL1Ball: `groups` must partition 0..{n - 1}: index {i} is in "
                f"{int(counts[i])} groups"
            )
        self.groups = [g.astype(np.int64) for g in arrays]
        self._perm = perm
        sizes = np.array([g.size for g in arrays])
        self._starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        self._group_of = np.empty(n, dtype=np.int64)
        self._group_of[perm] = np.repeat(np.arange(len(arrays)), sizes)
        self.radius = check_radius("GroupL1Ball", radius)
        self.shape = (n,)

    def _scaled_norms(self, flat: np.ndarray) -> tuple[float, np.ndarray]:
        """``(m, norms)``: ``m = max|flat|`` and the group norms of ``flat / m`` (zeros
        for ``m = 0``).  Squares of huge or tiny entries would overflow or underflow;
        those of ``flat / m`` (at most 1) do not, and the norms (at most ``sqrt(n)``)
        stay finite where ``m`` times them, the true norms, may overflow."""
        m = float(np.max(np.abs(flat), initial=0.0))
        if m == 0.0:
            return m, np.zeros(len(self.groups))
        u = flat[self._perm] / m
        return m, np.sqrt(np.add.reduceat(u * u, self._starts))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        # the group and the vertex from the scaled norms: the true ones may overflow
        # (ties at inf, a vertex of inf / inf = NaN or 0)
        m, norms = self._scaled_norms(flat)
        j = int(np.argmax(norms))
        if norms[j] == 0.0:
            return Atom.sparse([], [], direction.shape, key=("zero",))
        idx = np.sort(self.groups[j])
        u = flat[idx] / m
        u *= -self.radius / float(norms[j])
        return Atom.sparse(idx, u, direction.shape, copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, sum_g ||x_g||_2 - radius) / radius``; ``inf`` for non-finite ``x``; O(n)."""
        flat = np.asarray(x, dtype=float).reshape(-1)
        if flat.size != self._perm.size:
            raise ShapeError(f"{self!r}.violation: `x` has {flat.size} entries, expected "
                             f"{self._perm.size}")
        if not np.all(np.isfinite(flat)):
            return float("inf")
        m, norms = self._scaled_norms(flat)
        return _excess(m * float(norms.sum()), self.radius)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius`` (exact)."""
        return 2.0 * self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"groups": len(self.groups), "dim": self._perm.size, "radius": self.radius}


class ScaledL1Ball(LMO):
    """The box-scaled l1 ball ("diamond") ``{x : sum_i |x_i - c_i| / h_i <= 1}``.

    ``c = (lower + upper) / 2`` and ``h = (upper - lower) / 2``: the convex hull of the
    ``2n`` points ``c`` with one coordinate moved to ``lower_i`` or ``upper_i``.  This
    is FrankWolfe.jl's ``ScaledBoundL1NormBall(lower_bounds, upper_bounds)``; its
    bounding box is ``[lower, upper]``.

    Vertices: ``c`` with ``x_i = lower_i`` (key ``("diamond", i, -1)``) or ``upper_i``
    (key ``("diamond", i, 1)``).  LMO: the coordinate of largest ``|g_i| h_i``, moved
    to ``lower_i`` if ``g_i > 0``, to ``upper_i`` otherwise; cost O(n), dense answer.

    Parameters
    ----------
    lower, upper : float or array_like
        Finite bounds with ``lower < upper`` in every coordinate; scalars apply to
        every coordinate.  An array fixes the shape of the domain.
    dim : int, optional
        Dimension; needed when both bounds are scalars and no direction gives it.

    Notes
    -----
    Ties go to the smallest flat index; the zero direction gives ``upper_0``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import ScaledL1Ball
    >>> d = ScaledL1Ball([-1.0, 0.0], [3.0, 1.0])
    >>> d(np.array([1.0, -1.0])).to_dense()
    array([-1. ,  0.5])
    """

    def __init__(self, lower: Any, upper: Any, dim: int | None = None) -> None:
        lo, up, shape = parse_bounds("ScaledL1Ball", lower, upper)
        lo_b = np.broadcast_to(lo, shape).reshape(-1)
        up_b = np.broadcast_to(up, shape).reshape(-1)
        bad = np.flatnonzero(lo_b >= up_b)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"ScaledL1Ball: `lower` must be < `upper`, got lower={lo_b[i]:g} >= "
                f"upper={up_b[i]:g}" + (f" at flat index {i}" if shape else "")
            )
        if shape:
            dshape = dim_shape(dim, "ScaledL1Ball")
            if dshape is not None and dshape[0] != lo_b.size:
                raise ShapeError(f"ScaledL1Ball: `dim`={dim!r} does not match the bounds' "
                                 f"shape {shape} ({lo_b.size} entries)")
            self.shape = tuple(shape)
        else:
            self.shape = dim_shape(dim, "ScaledL1Ball")
        self.lower = np.broadcast_to(lo, shape).copy() if shape else float(lo)
        self.upper = np.broadcast_to(up, shape).copy() if shape else float(up)
        self._lo, self._up = lo_b.copy(), up_b.copy()
        self._repr = (_ArrayRepr(lo_b), _ArrayRepr(up_b)) if shape else None

    def _arrays(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self._lo.size == n:
            return self._lo, self._up
        return np.full(n, self._lo[0]), np.full(n, self._up[0])  # scalar bounds

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        lo, up = self._arrays(flat.size)
        i = int(np.argmax(np.abs(flat) * (up - lo)))
        s = (lo + up) * 0.5
        sign = -1 if flat[i] > 0 else 1
        s[i] = lo[i] if sign < 0 else up[i]
        return Atom(s.reshape(direction.shape), key=("diamond", i, sign), copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, sum_i |x_i - c_i| / h_i - 1)`` (the gauge's excess); ``inf`` for
        non-finite ``x``; O(n)."""
        flat = np.asarray(x, dtype=float).reshape(-1)
        own = declared_shape(self)
        # scalar bounds with `dim`: the dimension's entries
        n = self._lo.size if own is None or self._lo.size > 1 else math.prod(own)
        if own is not None and flat.size != n:
            raise ShapeError(f"{self!r}.violation: `x` has {flat.size} entries, expected {n}")
        lo, up = self._arrays(flat.size)
        gauge = float(np.sum(np.abs(2.0 * flat - lo - up) / (up - lo)))
        return _excess(gauge, 1.0)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``max_i (upper_i - lower_i)`` (exact: the two vertices on the widest axis)."""
        return float(np.max(self._up - self._lo))

    def _repr_params(self) -> dict[str, Any]:
        if self._repr is not None:
            return {"lower": self._repr[0], "upper": self._repr[1]}
        return repr_with_dim(self, {"lower": self.lower, "upper": self.upper})

"""Hypersimplices: the capped simplices ``{0 <= x <= r, sum(x) = k r}`` and ``<= k r``.

Their vertices are ``r`` times the indicator vectors of ``k``-subsets (top-k
selection); the oracle is one ``argpartition``, O(n).  A direction of any shape is
treated as a flat vector (C order); answers are sparse :class:`Atom` s with at most
``k`` entries, keyed by the packed bit pattern of their support.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numbers import check_whole
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from .base import LMO
from .dual import DualSolution
from .in_face import FACE_TOL, forcing_cost, nonneg_step, sum_step, upper_step

__all__ = ["HyperSimplex", "UnitHyperSimplex"]


def check_k(cls: str, k: Any, shape: tuple[int, ...] | None) -> int:
    """``k`` as a positive integer, at most the dimension when it is known."""
    kk = check_whole(k, "k", 1, cls)  # int(inf) raised OverflowError before the check
    if shape is not None and kk > shape[0]:
        raise ValueError(f"{cls}: `k` must be <= `dim`={shape[0]}, got k={k!r}")
    return kk


def _smallest(flat: np.ndarray, k: int) -> np.ndarray:
    """Sorted indices of the ``k`` smallest entries (``k <= flat.size``)."""
    n = flat.size
    idx = np.arange(n) if k >= n else np.argpartition(flat, k - 1)[:k]
    idx.sort()
    return idx


def _subset_atom(idx: np.ndarray, r: float, n: int, shape: tuple[int, ...]) -> Atom:
    mask = np.zeros(n, dtype=bool)
    mask[idx] = True
    # packed bits: the key of a k-subset costs n/8 bytes whatever k is
    key = ("subset", n, np.packbits(mask).tobytes())
    return Atom.sparse(idx, np.full(idx.size, r), shape, key=key)


def _box_violation(x: np.ndarray, r: float) -> tuple[float, float] | None:
    """``(excess over [0, r] relative to r, sum(x))``; ``None`` for non-finite ``x``."""
    flat = np.asarray(x, dtype=float).reshape(-1)
    total = float(flat.sum())
    if not np.isfinite(total):
        return None
    if flat.size == 0:
        return 0.0, total
    excess = max(0.0, -float(flat.min()), float(flat.max()) - r) / r
    return excess, total


class HyperSimplex(LMO):
    """The hypersimplex ``{x : 0 <= x <= radius, sum(x) = k * radius}``.

    Vertices: ``radius`` times the indicator of a ``k``-subset of the coordinates (key
    ``("subset", n, bytes)``, the support packed into bits).  LMO: ``radius`` on the
    ``k`` smallest entries of the direction; cost O(n) (one ``argpartition``), sparse
    answer with ``k`` entries.  For ``k = 1`` it is the probability simplex; it is the
    domain of top-k selection and of ``k``-sparse weight vectors.

    Parameters
    ----------
    k : int
        Number of coordinates at ``radius`` in a vertex; positive, at most ``dim``.
    radius : float, default 1.0
        Upper bound of each coordinate; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction, which must then have at least
        ``k`` entries).

    Notes
    -----
    Ties between equal entries are broken by ``argpartition`` (deterministic for a
    given input).  The LP behind :meth:`dual_solution` is one ``"eq"`` row
    ``sum(x) = k * radius`` and the bounds ``0 <= x <= radius``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import HyperSimplex
    >>> a = HyperSimplex(2)(np.array([0.3, -1.0, 2.0, -0.5]))
    >>> a.to_dense()
    array([0., 1., 0., 1.])
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, k: int, radius: float = 1.0, dim: int | None = None) -> None:
        name = type(self).__name__
        self.shape = dim_shape(dim, name)
        self.k = check_k(name, k, self.shape)
        self.radius = check_radius(name, radius)

    def _flat(self, direction: np.ndarray) -> np.ndarray:
        flat = check_direction(self, direction)
        if flat.size < self.k:
            raise ShapeError(
                f"{self!r}: `direction` has {flat.size} entries, fewer than k={self.k} "
                "(the set would be empty)"
            )
        return flat

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = self._flat(direction)
        return _subset_atom(_smallest(flat, self.k), self.radius, flat.size, direction.shape)

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """Dual of ``min <d, x>`` over the hypersimplex; O(n).

        The multiplier of ``sum(x) = k * radius`` is ``y``, the ``k``-th smallest entry
        of ``d``; the reduced costs ``d - y`` are ``<= 0`` on the chosen coordinates (at
        ``radius``) and ``>= 0`` elsewhere (at ``0``).
        """
        flat = self._flat(direction)
        idx = _smallest(flat, self.k)
        y = float(flat[idx].max())
        rc = flat - y
        value = self.k * self.radius * y + self.radius * float(rc[rc < 0].sum())
        return DualSolution({"eq": np.array([y])}, rc, value)

    def violation(self, x: np.ndarray) -> float:
        """Largest of the excess over ``[0, radius]`` (over ``radius``) and
        ``|sum(x) - k radius|`` (over ``k radius``); ``inf`` for non-finite ``x``."""
        res = _box_violation(x, self.radius)
        if res is None:
            return float("inf")
        excess, total = res
        target = self.k * self.radius
        return max(excess, abs(total - target) / target)

    def _face_costs(self, x: np.ndarray, direction: np.ndarray) -> tuple[np.ndarray, ...]:
        c = np.array(self._flat(direction), dtype=float)
        xf = np.asarray(x, dtype=float).reshape(-1)
        tol = FACE_TOL * self.radius
        return c, xf <= tol, xf >= self.radius - tol, xf

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): coordinates of ``x`` at 0 or
        ``radius`` stay there, the best of the others fill the ``k``; O(n)."""
        c, zero, full, _ = self._face_costs(x, direction)
        big = forcing_cost(c)
        c[zero], c[full] = big, -big
        return self.extreme_point(c.reshape(direction.shape))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d`` in ``[0, radius]`` (``d`` keeps the
        sum: a difference of vertices)."""
        xf = np.asarray(x, dtype=float).reshape(-1)
        d = np.asarray(direction, dtype=float).reshape(-1)
        return min(nonneg_step(xf, d), upper_step(xf, d, self.radius))

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``radius * sqrt(2 min(k, n - k))`` (exact: two vertices with supports as
        disjoint as possible); ``None`` when the dimension is unknown."""
        shape = self.shape if self.shape is not None else shape
        if shape is None:
            return None
        n = int(np.prod(shape))
        return self.radius * float(np.sqrt(2.0 * max(0, min(self.k, n - self.k))))

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"k": self.k, "radius": self.radius})


class UnitHyperSimplex(HyperSimplex):
    """The unit hypersimplex ``{x : 0 <= x <= radius, sum(x) <= k * radius}``.

    Vertices: ``radius`` times the indicator of a subset of at most ``k`` coordinates
    (same keys as :class:`HyperSimplex`; ``0`` is the empty subset).  LMO: ``radius``
    on the negative entries among the ``k`` smallest of the direction; cost O(n) (one
    ``argpartition``), sparse answer with at most ``k`` entries.  For ``k = 1`` it is
    the unit simplex; for ``k >= n`` the box ``[0, radius]^n``.

    Parameters
    ----------
    k : int
        Largest number of coordinates at ``radius`` in a vertex; positive.
    radius : float, default 1.0
        Upper bound of each coordinate; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    A zero entry of the direction is not chosen (the sparser vertex wins the tie).
    The LP behind :meth:`dual_solution` is one ``"ineq"`` row
    ``sum(x) <= k * radius`` and the bounds ``0 <= x <= radius``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import UnitHyperSimplex
    >>> UnitHyperSimplex(2)(np.array([0.3, -1.0, 2.0, 0.0])).to_dense()
    array([0., 1., 0., 0.])
    """

    def _flat(self, direction: np.ndarray) -> np.ndarray:
        return check_direction(self, direction)

    def _chosen(self, flat: np.ndarray) -> np.ndarray:
        idx = _smallest(flat, min(self.k, flat.size))
        return idx[flat[idx] < 0]

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = self._flat(direction)
        return _subset_atom(self._chosen(flat), self.radius, flat.size, direction.shape)

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): as for
        :class:`HyperSimplex`, with exactly ``k`` coordinates at ``radius`` when
        ``sum(x) = k radius`` and at most ``k`` otherwise; O(n)."""
        c, zero, full, xf = self._face_costs(x, direction)
        big = forcing_cost(c)
        if float(xf.sum()) >= self.k * self.radius * (1.0 - FACE_TOL):
            c -= big  # every free coordinate negative: the k best are all taken
        c[zero], c[full] = big, -4.0 * big
        return self.extreme_point(c.reshape(direction.shape))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d`` in ``[0, radius]`` with sum at most
        ``k radius``."""
        xf = np.asarray(x, dtype=float).reshape(-1)
        d = np.asarray(direction, dtype=float).reshape(-1)
        return min(super().max_step(x, direction), sum_step(xf, d, self.k * self.radius))

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """Dual of ``min <d, x>`` over the unit hypersimplex; O(n).

        The multiplier of ``sum(x) <= k * radius`` is ``y = min(d_(k), 0) <= 0`` with
        ``d_(k)`` the ``k``-th smallest entry (``0`` when ``k >= n``); the reduced costs
        ``d - y`` are ``<= 0`` on the chosen coordinates and ``>= 0`` elsewhere.
        """
        flat = self._flat(direction)
        if self.k >= flat.size:
            y = 0.0
        else:
            y = min(float(flat[_smallest(flat, self.k)].max()), 0.0)
        rc = flat - y
        value = self.k * self.radius * y + self.radius * float(rc[rc < 0].sum())
        return DualSolution({"ineq": np.array([y])}, rc, value)

    def violation(self, x: np.ndarray) -> float:
        """Largest of the excess over ``[0, radius]`` (over ``radius``) and
        ``sum(x) - k radius`` (over ``k radius``); ``inf`` for non-finite ``x``."""
        res = _box_violation(x, self.radius)
        if res is None:
            return float("inf")
        excess, total = res
        target = self.k * self.radius
        return max(excess, (total - target) / target)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``radius * sqrt(min(2k, n))`` (exact: two vertices with disjoint supports, or
        ``0`` and the all-``radius`` vertex when ``n <= k``); ``radius * sqrt(2k)``, an
        upper bound, when the dimension is unknown."""
        shape = self.shape if self.shape is not None else shape
        m = 2 * self.k if shape is None else min(2 * self.k, int(np.prod(shape)))
        return self.radius * float(np.sqrt(m))

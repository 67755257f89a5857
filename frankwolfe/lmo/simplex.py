"""Simplices."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._warnings import warn_user
from ..active_set import ActiveSet
from ..atoms import Atom
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from ._vertices import SLACK_TOL, UnitVertices, decomposed_point
from .base import LMO, answers_atoms
from .dual import DualSolution
from .in_face import FACE_TOL, forcing_cost, nonneg_step, sum_step
from .subset import SubsetOracle, checked_ids

__all__ = ["ProbabilitySimplex", "UnitSimplex"]


def _warn_integer_radius(cls: str, radius: Any, dim: Any) -> None:
    """Warn where ``ProbabilitySimplex(5)`` was likely meant as the simplex of dimension 5:
    the first argument is the radius, so it ran on the simplex whose coordinates sum to 5
    (a different problem, solved without any error)."""
    if (dim is None and isinstance(radius, (int, np.integer)) and not isinstance(radius, bool)
            and radius >= 2):
        warn_user(f"{cls}({radius}): the first argument is the radius (the coordinates "
                      f"sum to {radius}); the simplex of dimension {radius} is "
                      f"{cls}(dim={radius}).  A float radius ({float(radius)}) says the "
                      "radius is meant", UserWarning)


class ProbabilitySimplex(UnitVertices, SubsetOracle, LMO):
    """The scaled probability simplex ``{x >= 0, sum(x) = radius}``.

    Vertices: ``radius * e_i`` (key ``("e", i)``).  LMO cost: one argmin, O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Sum of the coordinates; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    Directions of any shape are treated as flat vectors (C order).  Ties go
    to the smallest flat index.  The answer is a sparse :class:`Atom`.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import ProbabilitySimplex
    >>> ProbabilitySimplex(2.0)(np.array([0.5, -1.0, 3.0])).to_dense()
    array([0., 2., 0.])
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("ProbabilitySimplex", radius)
        self.shape = dim_shape(dim, "ProbabilitySimplex")
        _warn_integer_radius("ProbabilitySimplex", radius, dim)

    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> Atom:
        shape = self.shape
        if direction.ndim == 1 and (shape is None or shape == direction.shape):
            flat = direction  # check_direction's answer, without the call
        else:
            flat = check_direction(self, direction)
        i = int(flat.argmin())
        return self._unit_vertex(i, i, self.radius, direction.shape, ("e", i))

    def extreme_point_among(self, direction: np.ndarray, ids: Any) -> Atom:
        """The best vertex ``radius * e_i`` over the coordinates ``ids``; O(len(ids)).

        Candidates are the coordinates (see :class:`~frankwolfe.lmo.subset.SubsetOracle`).
        """
        flat = check_direction(self, direction)
        ids = checked_ids(self, flat, ids)
        i = int(ids[np.argmin(flat[ids])])
        return self._unit_vertex(i, i, self.radius, direction.shape, ("e", i))

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """Dual of ``min <d, x>`` over ``{x >= 0, sum(x) = radius}`` (one ``"eq"`` row); O(n).

        The multiplier of ``sum(x) = radius`` is ``y = min(d)``, the reduced costs are
        ``d - y >= 0`` and the value is ``radius * y``.

        Examples
        --------
        >>> import numpy as np
        >>> from frankwolfe import ProbabilitySimplex
        >>> dual = ProbabilitySimplex(2.0).dual_solution(np.array([0.5, -1.0, 3.0]))
        >>> dual.multipliers["eq"], dual.reduced_costs, dual.value
        (array([-1.]), array([1.5, 0. , 4. ]), -2.0)
        """
        flat = check_direction(self, direction)
        y = float(flat.min())
        return DualSolution({"eq": np.array([y])}, flat - y, self.radius * y)

    def decompose(self, x: Any) -> ActiveSet:
        """``x`` as the convex combination ``sum_i (x_i / radius) (radius e_i)``; O(n).

        The atoms are the oracle's vertices ``radius * e_i`` (keys ``("e", i)``,
        flat ``i``) for the coordinates with ``x_i > 0``; the weights are
        renormalized to sum to one (which absorbs the rounding of ``sum(x)``, and
        the negative entries within the feasibility tolerance, counted as 0).

        Parameters
        ----------
        x : array_like
            A point of the simplex, of the shape the oracle is asked with.

        Returns
        -------
        ActiveSet

        Raises
        ------
        InfeasibleError
            When ``x`` is outside the simplex (beyond the feasibility tolerance).

        Examples
        --------
        >>> import numpy as np
        >>> from frankwolfe import ProbabilitySimplex
        >>> S = ProbabilitySimplex(2.0).decompose(np.array([0.5, 0.0, 1.5]))
        >>> S.keys, S.weights
        ([('e', 0), ('e', 2)], array([0.25, 0.75]))
        """
        a = decomposed_point(self, x)
        flat = a.reshape(-1)
        ids = np.flatnonzero(flat > 0)
        r = self.radius
        w = flat[ids] / r
        atoms = [self._unit_vertex(int(i), int(i), r, a.shape, ("e", int(i))) for i in ids]
        return ActiveSet(atoms, w / w.sum(), keep_x=False)

    def violation(self, x: np.ndarray) -> float:
        """Largest of the negative part of ``min(x)`` and ``|sum(x) - radius|``, over ``radius``.

        ``inf`` when ``x`` has a non-finite entry.
        """
        x = self._point(x)
        total = float(x.sum())
        if not np.isfinite(total):  # a nan would otherwise slip through max()
            return float("inf")
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(neg, abs(total - self.radius)) / self.radius

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``sqrt(2) * radius``: the distance between two vertices ``radius * e_i``."""
        return float(np.sqrt(2.0) * self.radius)

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): the best ``radius * e_i``
        with ``x_i > 0``; O(n)."""
        c = np.array(check_direction(self, direction), dtype=float)
        c[np.asarray(x, dtype=float).reshape(-1) <= FACE_TOL * self.radius] = forcing_cost(c)
        return self.extreme_point(c.reshape(direction.shape))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d >= 0`` (``d`` keeps the sum: a
        difference of vertices)."""
        return nonneg_step(np.asarray(x, dtype=float).reshape(-1),
                           np.asarray(direction, dtype=float).reshape(-1))

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"radius": self.radius})


class UnitSimplex(UnitVertices, SubsetOracle, LMO):
    """The scaled unit simplex ``{x >= 0, sum(x) <= radius}``.

    Vertices: ``0`` (key ``("zero",)``) and ``radius * e_i`` (key ``("e", i)``).
    LMO cost: one argmin, O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Bound on the sum of the coordinates; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    Directions of any shape are treated as flat vectors (C order).  When the
    smallest entry of the direction is ``0`` (a tie between ``0`` and some
    ``radius * e_i``), the answer is the vertex ``0``.  The answer is a sparse
    :class:`Atom`.
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("UnitSimplex", radius)
        self.shape = dim_shape(dim, "UnitSimplex")
        _warn_integer_radius("UnitSimplex", radius, dim)

    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        i = int(flat.argmin())
        if flat[i] < 0:
            return self._unit_vertex(i, i, self.radius, direction.shape, ("e", i))
        return Atom.sparse([], [], direction.shape, key=("zero",))

    def extreme_point_among(self, direction: np.ndarray, ids: Any) -> Atom:
        """The best of ``0`` and ``radius * e_i`` over the coordinates ``ids``; O(len(ids)).

        The vertex ``0`` costs no inner product and is always a candidate.
        """
        flat = check_direction(self, direction)
        ids = checked_ids(self, flat, ids)
        j = int(np.argmin(flat[ids]))
        i = int(ids[j])
        if flat[i] < 0:
            return self._unit_vertex(i, i, self.radius, direction.shape, ("e", i))
        return Atom.sparse([], [], direction.shape, key=("zero",))

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """Dual of ``min <d, x>`` over ``{x >= 0, sum(x) <= radius}`` (one ``"ineq"`` row); O(n).

        The multiplier of ``sum(x) <= radius`` is ``y = min(min(d), 0) <= 0``, the
        reduced costs are ``d - y >= 0`` and the value is ``radius * y``.
        """
        flat = check_direction(self, direction)
        y = min(float(flat.min()), 0.0)
        return DualSolution({"ineq": np.array([y])}, flat - y, self.radius * y)

    def decompose(self, x: Any) -> ActiveSet:
        """``x`` as ``sum_i (x_i / radius) (radius e_i) + (1 - sum(x) / radius) 0``; O(n).

        The atoms are the oracle's vertices ``radius * e_i`` (keys ``("e", i)``,
        flat ``i``) for the coordinates with ``x_i > 0``, and the vertex ``0`` (key
        ``("zero",)``) carrying the slack ``1 - sum(x) / radius`` when it is more
        than rounding.  Negative entries within the feasibility tolerance count as
        0; a sum beyond ``radius`` within it is renormalized.

        Parameters
        ----------
        x : array_like
            A point of the simplex, of the shape the oracle is asked with.

        Returns
        -------
        ActiveSet

        Raises
        ------
        InfeasibleError
            When ``x`` is outside the simplex (beyond the feasibility tolerance).

        Examples
        --------
        >>> import numpy as np
        >>> from frankwolfe import UnitSimplex
        >>> S = UnitSimplex(2.0).decompose(np.array([0.5, 0.0, 0.5]))
        >>> S.keys, S.weights
        ([('e', 0), ('e', 2), ('zero',)], array([0.25, 0.25, 0.5 ]))
        """
        a = decomposed_point(self, x)
        flat = a.reshape(-1)
        ids = np.flatnonzero(flat > 0)
        r = self.radius
        atoms = [self._unit_vertex(int(i), int(i), r, a.shape, ("e", int(i))) for i in ids]
        w = flat[ids] / r
        slack = 1.0 - float(w.sum())
        if slack > SLACK_TOL or not atoms:
            atoms.append(Atom.sparse([], [], a.shape, key=("zero",)))
            w = np.append(w, max(slack, 0.0))
        return ActiveSet(atoms, w / w.sum(), keep_x=False)

    def violation(self, x: np.ndarray) -> float:
        """Largest of the negative part of ``min(x)`` and ``sum(x) - radius``, over ``radius``.

        ``inf`` when ``x`` has a non-finite entry.
        """
        x = self._point(x)
        total = float(x.sum())
        if not np.isfinite(total):
            return float("inf")
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(neg, total - self.radius) / self.radius

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``sqrt(2) * radius``: the distance between two vertices ``radius * e_i``."""
        return float(np.sqrt(2.0) * self.radius)

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): the best vertex with zeros
        where ``x`` has them, and not ``0`` when ``sum(x) = radius``; O(n)."""
        c = np.array(check_direction(self, direction), dtype=float)
        xf = np.asarray(x, dtype=float).reshape(-1)
        big = forcing_cost(c)
        zero = xf <= FACE_TOL * self.radius
        if float(xf.sum()) >= self.radius * (1.0 - FACE_TOL):
            c[~zero] -= big  # all negative: the vertex 0 is off this face
        c[zero] = big
        return self.extreme_point(c.reshape(direction.shape))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d`` nonnegative with sum at most
        ``radius``."""
        xf = np.asarray(x, dtype=float).reshape(-1)
        d = np.asarray(direction, dtype=float).reshape(-1)
        return min(nonneg_step(xf, d), sum_step(xf, d, self.radius))

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"radius": self.radius})

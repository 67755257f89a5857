"""The vertices ``value * e_i`` of the simplices and the l1 ball, built once per oracle.

An oracle of these domains answers with one of ``2 n`` atoms at most, and Frank-Wolfe
meets the same few again and again.  An atom is immutable (its key is its identity),
so the oracle keeps the atoms it built and answers with the same object: on a small
problem, building an atom (two arrays, the key) costs as much as the argmin itself,
and a known atom is cheaper downstream too (its key is built, its cached products are
found at once).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from .._numbers import real_array
from ..atoms import Atom
from ..errors import ShapeError

__all__ = ["VertexCache", "UnitVertices", "decomposed_point", "SLACK_TOL"]

#: a slack weight ``1 - sum(w)`` at or below this is the rounding of the sum, not mass
#: left inside the domain: :meth:`LMO.decompose` drops it instead of adding two atoms
SLACK_TOL = 1e-15

#: at most this many atoms kept per oracle (a few hundred bytes each); past it the
#: cache starts afresh
MAX_KEPT = 1024


class VertexCache:
    """The vertex atoms ``value * e_i`` an oracle has built for one ``radius`` and one
    shape of its points.

    Attributes
    ----------
    radius : float
        The oracle's scale when the atoms were built.
    shape : tuple of int
        The shape of the atoms.
    atoms : dict of int to Atom
        The atoms by slot: ``i`` for ``+radius e_i`` (the simplices' vertices), ``-1 - i``
        for ``-radius e_i``; at most :data:`MAX_KEPT`.
    """

    __slots__ = ("radius", "shape", "atoms")

    def __init__(self, radius: float, shape: tuple[int, ...]) -> None:
        self.radius = radius
        self.shape = shape
        self.atoms: dict[int, Atom] = {}

    def vertex(self, slot: int, index: int, value: float, key: Hashable) -> Atom:
        """The atom of ``slot``, ``value * e_index`` (flat ``index``, as
        :meth:`Atom.vertex`), built on first use."""
        atom = self.atoms.get(slot)
        if atom is None:
            if len(self.atoms) >= MAX_KEPT:
                self.atoms.clear()
            atom = self.atoms[slot] = Atom.vertex(index, value, self.shape, key)
        return atom


class UnitVertices:
    """Mixin of the oracles whose vertices are ``+-radius * e_i`` (the simplices, the l1
    ball): they answer with the same atom object for the same vertex, kept in their own
    :class:`VertexCache`, created on first use and afresh when ``radius`` or the shape
    of the points changed."""

    radius: float
    #: the kept atoms (None until the first answer)
    _vertices: VertexCache | None = None

    def _unit_vertex(self, slot: int, index: int, value: float, shape: tuple[int, ...],
                     key: Hashable) -> Atom:
        """The atom ``value * e_index`` of ``slot`` (see :attr:`VertexCache.atoms`), the
        same object each time."""
        cache = self._vertices
        if cache is not None and cache.radius == self.radius and cache.shape == shape:
            # a vertex met before (the usual answer) without a second call
            atom = cache.atoms.get(slot)
            if atom is not None:
                return atom
        else:
            cache = self._vertices = VertexCache(self.radius, shape)
        return cache.vertex(slot, index, value, key)


def decomposed_point(lmo: Any, x: Any) -> np.ndarray:
    """``x`` as a float array for ``lmo.decompose``, refused outside the domain.

    Raises
    ------
    ValueError
        When ``x`` is not an array of real numbers.
    ShapeError
        When ``x`` is empty.
    InfeasibleError
        When ``x`` lies outside the domain beyond the feasibility tolerance (a
        decomposition of it would have negative weights or leave the domain).
    """
    a = real_array(x, f"{lmo!r}.decompose", "x")
    if a.size == 0:  # no vertex to write it with: the oracles refuse empty directions too
        raise ShapeError(f"{lmo!r}.decompose: `x` is empty; a point has at least one "
                         f"coordinate")
    # x, not a: a float32 point is allowed its own rounding (feasibility_tolerance)
    lmo.check_feasible(x if isinstance(x, np.ndarray) else a, "x")
    return a

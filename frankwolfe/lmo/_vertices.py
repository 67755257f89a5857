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

__all__ = ["unit_vertex", "decomposed_point", "SLACK_TOL"]

#: a slack weight ``1 - sum(w)`` at or below this is the rounding of the sum, not mass
#: left inside the domain: :meth:`LMO.decompose` drops it instead of adding two atoms
SLACK_TOL = 1e-15

#: at most this many atoms kept per oracle (a few hundred bytes each); past it the
#: cache starts afresh
MAX_KEPT = 1024


def unit_vertex(lmo: Any, slot: int, index: int, value: float, radius: float,
                shape: tuple[int, ...], key: Hashable) -> Atom:
    """The atom ``value * e_index`` (flat ``index``) of ``lmo``, the same object each time.

    Parameters
    ----------
    lmo : LMO
        The oracle that keeps the atoms (in its ``__dict__``).
    slot : int
        The atom's place among the oracle's vertices (``i``, or ``-1 - i`` for
        ``-radius e_i``).
    index, value, shape, key
        As :meth:`Atom.vertex`.
    radius : float
        The oracle's scale: the kept atoms are dropped when it or ``shape`` changed.
    """
    kept = lmo.__dict__.get("_vertex_cache")
    if kept is None or kept[0] != radius or kept[1] != shape:
        kept = lmo.__dict__["_vertex_cache"] = (radius, shape, {})
    atoms: dict[int, Atom] = kept[2]
    atom = atoms.get(slot)
    if atom is None:
        if len(atoms) >= MAX_KEPT:
            atoms.clear()
        atom = atoms[slot] = Atom.vertex(index, value, shape, key)
    return atom


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

"""The in-face oracle protocol of decomposition-invariant methods (DICG), and its helpers.

A domain that is a 0/1-type polytope (simplices, boxes, hypersimplices, Birkhoff)
answers two more questions:

``in_face_extreme_point(x, direction)``
    ``argmin <direction, v>`` over the vertices of the minimal face containing ``x``
    (the face cut out by the bound constraints ``x`` meets), as an
    :class:`~frankwolfe.Atom`.  Called with ``-gradient`` it gives the away vertex of
    DICG without an active set (Garber and Meshi, NeurIPS 2016).
``max_step(x, direction)``
    The largest ``gamma >= 0`` with ``x + gamma * direction`` in the domain.

Each domain answers the first by calling its own oracle on a modified direction: a
coordinate at a bound gets a cost that forces the vertex to the same bound (a large
finite cost, never an infinity, so the oracle's own checks hold).  A coordinate
within ``FACE_TOL`` (relative) of a bound counts as at it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FACE_TOL", "supports_in_face", "forcing_cost", "nonneg_step", "upper_step",
           "sum_step"]

#: Relative distance to a bound below which a coordinate counts as at the bound.
FACE_TOL = 1e-12


def supports_in_face(lmo: Any) -> bool:
    """Whether ``lmo`` implements the in-face protocol."""
    return callable(getattr(lmo, "in_face_extreme_point", None)) and \
        callable(getattr(lmo, "max_step", None))


def forcing_cost(c: np.ndarray, n_terms: int = 1) -> float:
    """A finite cost larger than any sum of ``n_terms`` entries of ``|c|`` (and than 1):
    an oracle minimizing a sum of that many entries never picks a coordinate costed
    ``+forcing_cost`` when another choice exists, and always picks ``-forcing_cost``."""
    return 2.0 * n_terms * float(np.abs(c).max(initial=0.0)) + 1.0


def nonneg_step(x: np.ndarray, d: np.ndarray) -> float:
    """Largest ``gamma`` keeping ``x + gamma d >= 0`` (``inf`` if no entry decreases)."""
    neg = d < 0
    if not neg.any():
        return np.inf
    return float(max(0.0, np.min(np.maximum(x[neg], 0.0) / -d[neg])))


def upper_step(x: np.ndarray, d: np.ndarray, upper: Any) -> float:
    """Largest ``gamma`` keeping ``x + gamma d <= upper``."""
    pos = d > 0
    if not pos.any():
        return np.inf
    room = np.maximum((upper[pos] if np.ndim(upper) else upper) - x[pos], 0.0)
    return float(np.min(room / d[pos]))


def sum_step(x: np.ndarray, d: np.ndarray, cap: float) -> float:
    """Largest ``gamma`` keeping ``sum(x + gamma d) <= cap``."""
    s = float(d.sum())
    if s <= 0:
        return np.inf
    return max(0.0, cap - float(x.sum())) / s

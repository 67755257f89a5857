"""Norm balls and boxes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..atoms import Atom
from .base import LMO
from .simplex import _check_radius, _dim_shape

__all__ = ["L1Ball"]


class L1Ball(LMO):
    """The l1 ball ``{x : ||x||_1 <= radius}``.

    Vertices: ``+-radius * e_i`` (key ``("e", i, sign)``).  LMO cost: one
    argmax of ``|g|``, O(n).

    Parameters
    ----------
    radius : float, default 1.0
    dim : int, optional
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("L1Ball", radius)
        self.shape = _dim_shape(dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = direction.reshape(-1)
        i = int(np.argmax(np.abs(flat)))
        sign = -1 if flat[i] > 0 else 1
        return Atom.sparse([i], [sign * self.radius], direction.shape, key=("e", i, sign))

    def violation(self, x: np.ndarray) -> float:
        return max(0.0, float(np.abs(np.asarray(x, dtype=float)).sum()) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"radius": self.radius}

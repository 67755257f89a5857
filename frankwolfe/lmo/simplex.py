"""Simplices."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..atoms import Atom
from .base import LMO

__all__ = ["ProbabilitySimplex", "UnitSimplex"]


def _check_radius(cls: str, radius: float) -> float:
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"{cls}: `radius` must be positive and finite, got {radius!r}")
    return float(radius)


def _dim_shape(dim: int | None) -> tuple[int, ...] | None:
    if dim is None:
        return None
    if int(dim) != dim or dim < 1:
        raise ValueError(f"`dim` must be a positive integer, got {dim!r}")
    return (int(dim),)


class ProbabilitySimplex(LMO):
    """The scaled probability simplex ``{x >= 0, sum(x) = radius}``.

    Vertices: ``radius * e_i`` (key ``("e", i)``).  LMO cost: one argmin, O(n).

    Parameters
    ----------
    radius : float, default 1.0
    dim : int, optional
        Dimension (otherwise taken from the direction).
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("ProbabilitySimplex", radius)
        self.shape = _dim_shape(dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        i = int(np.argmin(direction.reshape(-1)))
        return Atom.sparse([i], [self.radius], direction.shape, key=("e", i))

    def violation(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float)
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(neg, abs(float(x.sum()) - self.radius)) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"radius": self.radius}


class UnitSimplex(LMO):
    """The scaled unit simplex ``{x >= 0, sum(x) <= radius}``.

    Vertices: ``0`` (key ``("zero",)``) and ``radius * e_i`` (key ``("e", i)``).
    LMO cost: one argmin, O(n).
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = _check_radius("UnitSimplex", radius)
        self.shape = _dim_shape(dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = direction.reshape(-1)
        i = int(np.argmin(flat))
        if flat[i] < 0:
            return Atom.sparse([i], [self.radius], direction.shape, key=("e", i))
        return Atom.sparse([], [], direction.shape, key=("zero",))

    def violation(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float)
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(neg, float(x.sum()) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"radius": self.radius}

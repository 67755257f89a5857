"""Argument checks shared by the concrete domains (radius, dimension, direction, repr)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numbers import as_real, check_whole
from ..errors import ShapeError
from .base import LMO, declared_shape

__all__ = ["check_radius", "dim_shape", "check_direction", "repr_with_dim"]


def check_radius(cls: str, radius: float, name: str = "radius") -> float:
    """``radius`` (a domain's scalar parameter) as a positive finite float, or a
    ``ValueError`` naming ``cls`` and ``name``.  A 0-d array of numbers counts as its
    number, as ``np.float32(0.5)`` does (``np.array(0.5)`` was refused)."""
    if isinstance(radius, np.ndarray) and radius.ndim == 0 and radius.dtype.kind in "iuf":
        radius = radius[()]
    # a number: float("2") and float(True) would pass
    r = as_real(radius)
    if not (np.isfinite(r) and r > 0):
        raise ValueError(f"{cls}: `{name}` must be positive and finite, got {radius!r}")
    return r


def dim_shape(dim: int | None, cls: str = "") -> tuple[int, ...] | None:
    if dim is None:
        return None
    # (int(inf) raised OverflowError before the check)
    return (check_whole(dim, "dim", 1, cls),)


def check_direction(lmo: LMO, direction: np.ndarray) -> np.ndarray:
    """Return ``direction`` flattened, after checking its size against ``lmo.shape``."""
    flat = direction if direction.ndim == 1 else direction.reshape(-1)
    shape = lmo.shape  # a user's class may give an int n (declared_shape)
    if shape is not None and flat.size != (shape if isinstance(shape, int)
                                           else math.prod(shape)):
        raise ShapeError(
            f"{lmo!r}: `direction` has shape {direction.shape} ({flat.size} entries), "
            f"expected {int(np.prod(shape))} entries (shape {lmo.shape})"
        )
    return flat


def repr_with_dim(lmo: LMO, params: dict[str, Any]) -> dict[str, Any]:
    """Add ``dim`` to the repr parameters when the LMO knows a 1-D shape."""
    shape = declared_shape(lmo)
    if shape is not None and len(shape) == 1:
        params["dim"] = shape[0]
    return params

"""The one check of the regularization ``lam`` below the estimator."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_lam"]


def check_lam(lam: Any, owner: str) -> float:
    """``lam`` as a float after checking it is a finite positive number (``ValueError``
    naming ``owner`` otherwise)."""
    try:
        value = float(lam)
    except (TypeError, ValueError):
        value = np.nan
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{owner}: `lam` must be a positive number, got {lam!r}")
    return value

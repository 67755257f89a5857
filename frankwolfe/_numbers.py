"""What the argument checks ask of a number: a real one (no bool, no text), a whole one.

One place for the tests that ``int(value) == value`` made by hand: ``int("x")``,
``int(nan)`` and ``int(inf)`` raise their own errors, which name no argument, and
``True`` passes for 1.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, overload

import numpy as np

__all__ = ["is_real", "is_whole", "check_flag"]


def is_real(value: Any) -> bool:
    """Whether ``value`` is a real number (Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_whole(value: Any, least: int = 0) -> bool:
    """Whether ``value`` is a finite whole number (``2.0`` too) of at least ``least``."""
    if not is_real(value):
        return False
    f = float(value)
    return math.isfinite(f) and f >= least and f == int(f)


@overload
def check_flag(value: Any, name: str) -> bool: ...


@overload
def check_flag(value: Any, name: str, optional: bool) -> bool | None: ...


def check_flag(value: Any, name: str, optional: bool = False) -> bool | None:
    """``value`` as a bool, or a ``TypeError`` naming ``name`` unless it is one (numpy's
    too; ``None`` where ``optional``): ``"no"`` is true to ``bool()``."""
    if optional and value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        extra = ", or None" if optional else ""
        raise TypeError(f"`{name}` must be True or False{extra}, got {value!r}")
    return bool(value)

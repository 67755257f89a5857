"""What the synthetic generators share: their argument checks (named errors) and the
random rectangles of the grid generators."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from frankwolfe._numbers import check_real, check_whole

__all__ = ["check_counts", "check_number", "paint_blocks"]


def check_counts(where: str, counts: Iterable[tuple[str, Any, int]]) -> None:
    """Each ``(name, value, lo)``: a whole number ``>= lo`` (:func:`check_whole`), or a
    TypeError (text, a bool, None) or ValueError (``2.5``, too small) naming ``where``,
    the argument and the value."""
    for name, v, lo in counts:
        check_whole(v, name, lo, where)


def check_number(where: str, name: str, v: Any, positive: bool = False) -> None:
    """A finite number ``>= 0`` (``> 0`` with ``positive``), or a named TypeError (not a
    real number) or ValueError (:func:`check_real`)."""
    check_real(v, name, where, low=0, low_open=positive)


def paint_blocks(rng: np.random.Generator, lab: np.ndarray, n_blocks: int,
                 n_states: int) -> None:
    """Paint ``n_blocks`` rectangles of random states, sizes (up to half the grid) and
    places onto the grid ``lab``, in place."""
    height, width = lab.shape
    for _ in range(n_blocks):
        r0, c0 = rng.integers(height), rng.integers(width)
        r1 = r0 + 1 + rng.integers(max(1, height // 2))
        c1 = c0 + 1 + rng.integers(max(1, width // 2))
        lab[r0:r1, c0:c1] = rng.integers(n_states)

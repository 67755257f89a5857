"""Built-in compiled blocks: a product of scaled probability simplices with dense block
iterates."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .protocol import CompiledBlocks

__all__ = ["SimplexState", "simplex_blocks"]


class SimplexState(NamedTuple):
    """Dense block iterates ``Z[off[i]:off[i+1]]`` over ``idx_flat[off[i]:off[i+1]]``."""

    Z: np.ndarray
    idx_flat: np.ndarray
    off: np.ndarray
    radius: np.ndarray
    last: np.ndarray  # vertex of the last oracle call


@njit(cache=True, nogil=True)
def _simplex_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    Z, idx_flat, off = state.Z, state.idx_flat, state.off
    lo = off[i]
    hi = off[i + 1]
    m = hi - lo
    jmin = 0
    gz = 0.0
    for a in range(m):
        ga = g[idx_flat[lo + a]]
        gz += ga * Z[lo + a]
        if ga < g[idx_flat[lo + jmin]]:
            jmin = a
    score = state.radius[i] * g[idx_flat[lo + jmin]]
    state.last[0] = jmin
    if want:
        for a in range(m):
            idx[a] = idx_flat[lo + a]
            val[a] = -Z[lo + a]
        val[jmin] += state.radius[i]
    return m, gz - score, score


@njit(cache=True, nogil=True)
def _simplex_commit(state, i, gamma):  # pragma: no cover - compiled
    Z, off = state.Z, state.off
    lo = off[i]
    for a in range(off[i + 1] - lo):
        Z[lo + a] *= 1.0 - gamma
    Z[lo + state.last[0]] += gamma * state.radius[i]


def simplex_blocks(Z: np.ndarray, idx_flat: np.ndarray, off: np.ndarray,
                   radius: np.ndarray) -> CompiledBlocks:
    """:class:`CompiledBlocks` of a product of probability simplices whose block
    iterates are the dense rows ``Z[off[i]:off[i+1]]`` over ``idx_flat[off[i]:off[i+1]]``
    (updated in place)."""
    state = SimplexState(Z, idx_flat, off, radius, np.zeros(1, dtype=np.int64))
    sizes = np.diff(off)
    return CompiledBlocks(_simplex_direction, _simplex_commit, state,
                          int(sizes.max(initial=1)), start=None)

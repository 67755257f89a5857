"""Synthetic grid labelling data (noisy blocks) for graph-CRF tests and demos."""

from __future__ import annotations

import numpy as np

from frankwolfe._random import as_generator

from ..models.graph.grid import grid_edges
from ._synthetic_checks import check_counts, check_number, paint_blocks

__all__ = ["make_noisy_blocks"]


def make_noisy_blocks(n_samples: int, height: int = 8, width: int = 8, n_states: int = 2, *,
                      noise: float = 1.0, n_blocks: int = 3,
                      random_state: int | np.random.Generator | None = None
                      ) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray]]:
    """Grids of a few constant rectangles, observed as noisy one-hot features.

    Each grid starts as state 0 and receives ``n_blocks`` rectangles of random
    states, sizes and places; node features are ``onehot(state) + noise *
    N(0, I)`` followed by a constant 1 (``n_states + 1`` features).  Neighbouring
    cells mostly agree, so pairwise terms (4-neighbourhood edges) pay when the noise
    hides the state.

    Returns
    -------
    X : list of (node_features, edges)
        ``GraphCRF(n_states, n_states + 1)`` examples.
    Y : list of ndarray of int64
        The states, row-major.
    """
    where = "make_noisy_blocks"
    check_counts(where, (("n_samples", n_samples, 1), ("height", height, 1),
                         ("width", width, 1), ("n_states", n_states, 2),
                         ("n_blocks", n_blocks, 0)))
    check_number(where, "noise", noise)
    rng = as_generator(random_state)
    edges, _ = grid_edges(height, width)
    X, Y = [], []
    for _ in range(n_samples):
        lab = np.zeros((height, width), dtype=np.int64)
        paint_blocks(rng, lab, n_blocks, n_states)
        y = lab.ravel()
        feats = np.zeros((y.size, n_states + 1))
        feats[np.arange(y.size), y] = 1.0
        feats[:, :n_states] += noise * rng.normal(size=(y.size, n_states))
        feats[:, n_states] = 1.0
        X.append((feats, edges.copy()))
        Y.append(y)
    return X, Y

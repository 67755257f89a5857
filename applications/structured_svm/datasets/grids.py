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

    Parameters
    ----------
    n_samples : int
        The number of grids, at least 1.
    height, width : int, default 8
        The grid's size (at least 1 each); ``height * width`` nodes.
    n_states : int, default 2
        The number of states, at least 2 (0 is the background).
    noise : float, default 1.0
        The standard deviation of the Gaussian noise on the one-hot features (finite,
        >= 0; 0 gives the states exactly).
    n_blocks : int, default 3
        Rectangles painted per grid (>= 0), each up to half the grid's height and
        width.
    random_state : int, numpy.random.Generator or None, default None
        A seed or a generator (``None``: fresh entropy, different grids each call).

    Returns
    -------
    X : list of (node_features, edges)
        ``GraphCRF(n_states, n_states + 1)`` examples: ``node_features`` of shape
        ``(height * width, n_states + 1)`` (float64, nodes row-major) and ``edges`` of
        shape ``(n_edges, 2)`` (int, the 4-neighbourhood of the grid).
    Y : list of ndarray of int64, shape (height * width,)
        The states, row-major.

    Raises
    ------
    ValueError
        When a count is not an integer of at least its bound, or ``noise`` is not a
        finite number >= 0 (the message names the argument and the value).
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

"""Synthetic grids whose labels need hidden sub-states (an XOR-like task for the latent
structural SVM)."""

from __future__ import annotations

import numpy as np

from frankwolfe._random import as_generator

from ..models.graph.grid import grid_edges
from ._synthetic_checks import check_counts, check_number, paint_blocks

__all__ = ["make_latent_blocks"]


def make_latent_blocks(n_samples: int, height: int = 6, width: int = 6, n_labels: int = 2,
                       n_hidden_states: int = 2, *, radius: float = 2.0, noise: float = 0.5,
                       n_blocks: int = 3,
                       random_state: int | np.random.Generator | None = None
                       ) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray]]:
    """Grids of constant rectangles whose labels a linear unary per label cannot tell
    apart, while one per hidden sub-state can.

    Each grid gets a random background label and ``n_blocks`` rectangles of random
    labels, sizes and places.  Label ``c`` has ``n_hidden_states`` clusters: cluster
    ``j`` is centred on the circle of radius ``radius`` at the angle ``2 pi (j K + c) /
    (K k)`` (``K = n_labels``, ``k = n_hidden_states``), so the labels' clusters
    alternate around the circle (for 2 labels of 2 clusters, label 0 at ``(+-r, 0)``
    and label 1 at ``(0, +-r)``: XOR).  A node draws one of its label's clusters at
    random and its two features are the centre plus ``noise * N(0, I)``; there is no
    constant feature.  A score ``<w_c, x>`` per label is linear through the origin
    (``<w_c, -m> = -<w_c, m>``), so it cannot favour label ``c`` at both of two
    opposite centres ``+-m``: a :class:`.GraphCRF` on these features is near chance at
    the nodes (with 2 labels of 2 clusters), while a
    :class:`.LatentGraphCRF` with ``k`` sub-states (one weight vector per cluster)
    separates them; neighbouring cells mostly share a label (4-neighbourhood edges).

    Parameters
    ----------
    n_samples : int
        The number of grids, at least 1.
    height, width : int, default 6
        The grid's size (at least 1 each); ``height * width`` nodes.
    n_labels : int, default 2
        ``K``, the number of visible labels, at least 2.
    n_hidden_states : int, default 2
        ``k``, the clusters (hidden sub-states) per label, at least 1.
    radius : float, default 2.0
        The radius of the circle of cluster centres (finite, > 0).
    noise : float, default 0.5
        The standard deviation of the Gaussian noise around a centre (finite, >= 0).
    n_blocks : int, default 3
        Rectangles painted per grid (>= 0), each up to half the grid's height and
        width.
    random_state : int, numpy.random.Generator or None, default None
        A seed or a generator (``None``: fresh entropy, different grids each call).

    Returns
    -------
    X : list of (node_features, edges)
        ``GraphCRF(n_labels, 2)`` / ``LatentGraphCRF(n_labels, 2, n_hidden_states)``
        examples: ``node_features`` of shape ``(height * width, 2)`` (float64, nodes
        row-major) and ``edges`` of shape ``(n_edges, 2)`` (int, the 4-neighbourhood).
    Y : list of ndarray of int64, shape (height * width,)
        The visible labels, row-major.

    Raises
    ------
    ValueError
        When a count is not an integer of at least its bound, ``radius`` is not a
        finite number > 0 or ``noise`` not a finite number >= 0 (the message names
        the argument and the value).
    """
    where = "make_latent_blocks"
    check_counts(where, (("n_samples", n_samples, 1), ("height", height, 1),
                         ("width", width, 1), ("n_labels", n_labels, 2),
                         ("n_hidden_states", n_hidden_states, 1), ("n_blocks", n_blocks, 0)))
    check_number(where, "radius", radius, positive=True)
    check_number(where, "noise", noise)
    rng = as_generator(random_state)
    K, k = int(n_labels), int(n_hidden_states)
    angle = 2 * np.pi * (np.arange(k)[None, :] * K + np.arange(K)[:, None]) / (K * k)
    centres = radius * np.stack([np.cos(angle), np.sin(angle)], axis=-1)  # (K, k, 2)
    edges, _ = grid_edges(height, width)
    X, Y = [], []
    for _ in range(n_samples):
        lab = np.full((height, width), rng.integers(K), dtype=np.int64)
        paint_blocks(rng, lab, n_blocks, K)
        y = lab.ravel()
        sub = rng.integers(k, size=y.size)
        feats = centres[y, sub] + noise * rng.normal(size=(y.size, 2))
        X.append((feats, edges.copy()))
        Y.append(y)
    return X, Y

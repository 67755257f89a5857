"""Edges of 2-D grids (4- and 8-neighbourhoods), cells numbered row-major."""

from __future__ import annotations

import numpy as np

from frankwolfe._numbers import check_whole

__all__ = ["grid_edges", "GRID_DIRECTIONS"]

#: the ``(d_row, d_col)`` offset of each direction id that :func:`grid_edges` returns
GRID_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def grid_edges(height: int, width: int, neighborhood: int = 4
               ) -> tuple[np.ndarray, np.ndarray]:
    """Edges of a ``height x width`` grid and the direction of each.

    Cell ``(r, c)`` is node ``r * width + c``.  Each edge ``(u, v)`` points right
    (direction 0), down (1) and, with ``neighborhood=8``, down-right (2) and
    down-left (3): the offsets of :data:`GRID_DIRECTIONS`.

    Returns
    -------
    edges : ndarray of int64, shape (n_edges, 2)
    directions : ndarray of int64, shape (n_edges,)
    """
    for name, v in (("height", height), ("width", width)):
        check_whole(v, name, 1, "grid_edges")
    if neighborhood not in (4, 8):
        raise ValueError(f"grid_edges: `neighborhood` must be 4 or 8, got {neighborhood!r}")
    ids = np.arange(height * width, dtype=np.int64).reshape(height, width)
    parts, dirs = [], []
    for d, (dr, dc) in enumerate(GRID_DIRECTIONS[:2 if neighborhood == 4 else 4]):
        a = ids[:height - dr, max(0, -dc):width - max(0, dc)]
        b = ids[dr:, max(0, dc):width + min(0, dc)]
        parts.append(np.stack([a.ravel(), b.ravel()], axis=1))
        dirs.append(np.full(a.size, d, dtype=np.int64))
    return np.concatenate(parts), np.concatenate(dirs)

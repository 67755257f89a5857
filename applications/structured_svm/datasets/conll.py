"""CoNLL-2000 chunking with the Sha & Pereira (2003) attribute templates."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from frankwolfe._numbers import check_flag

from ...data.home import find_folder, get_data_home
from ...data.sources import (
    check_download_flag,
    check_published,
    conll2000_home,
)

__all__ = ["load_conll2000", "Conll2000Source", "CONLL_TEMPLATES"]

#: The 19 CRFsuite chunking templates: (field, offset) tuples, field "w" =
#: lower-cased word, "p" = POS tag.  The order is the column order of
#: Schmidt's coNLL_{train,test}.mat.
CONLL_TEMPLATES: tuple[tuple[tuple[str, int], ...], ...] = (
    (("w", -2),), (("w", -1),), (("w", 0),), (("w", 1),), (("w", 2),),
    (("w", -1), ("w", 0)), (("w", 0), ("w", 1)),
    (("p", -2),), (("p", -1),), (("p", 0),), (("p", 1),), (("p", 2),),
    (("p", -2), ("p", -1)), (("p", -1), ("p", 0)), (("p", 0), ("p", 1)), (("p", 1), ("p", 2)),
    (("p", -2), ("p", -1), ("p", 0)), (("p", -1), ("p", 0), ("p", 1)),
    (("p", 0), ("p", 1), ("p", 2)),
)
_MIN_COUNT = 3  # a template value is kept iff it occurs >= 3 times in train
#: sentences of each file (shared/data/conll2000/SOURCE.md)
_SENTENCES = {"train.txt": 8936, "test.txt": 2012}


def _read(path: Path) -> tuple[list[str], list[str], list[str], np.ndarray]:
    """Tokens (word, POS, chunk) in file order and the sentence lengths."""
    words: list[str] = []
    pos: list[str] = []
    chunks: list[str] = []
    lengths: list[int] = []
    n = 0
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, 1):
            try:
                line = raw.decode("ascii")
            except UnicodeDecodeError as e:
                raise ValueError(f"load_conll2000: {path}:{line_no}: not ASCII text (byte "
                                 f"{raw[e.start]:#04x} in {raw[:60]!r})") from None
            parts = line.split()
            if not parts:
                if n:
                    lengths.append(n)
                n = 0
                continue
            if len(parts) != 3:
                raise ValueError(f"load_conll2000: {path}:{line_no}: expected 'WORD POS CHUNK', "
                                 f"got {line.rstrip()!r}")
            words.append(parts[0].lower())
            pos.append(parts[1])
            chunks.append(parts[2])
            n += 1
    if n:
        lengths.append(n)
    if not lengths:
        raise ValueError(f"load_conll2000: {path} holds no sentence (an empty file?); "
                         "expected lines 'WORD POS CHUNK' with a blank line after each sentence")
    return words, pos, chunks, np.asarray(lengths, dtype=np.int64)


def _encode(values: list[str], vocab: dict[str, int]) -> np.ndarray:
    return np.fromiter((vocab.setdefault(v, len(vocab)) for v in values), dtype=np.int64,
                       count=len(values))


class _Shifter:
    """Field codes at offset ``o`` from each token, begin/end markers outside the sentence."""

    def __init__(self, lengths: np.ndarray) -> None:
        self.n = int(lengths.sum())
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        self.pos = np.arange(self.n) - starts
        self.length = np.repeat(lengths, lengths)

    def __call__(self, codes: np.ndarray, o: int, bos: int, eos: int) -> np.ndarray:
        j = self.pos + o
        src = np.clip(np.arange(self.n) + o, 0, self.n - 1)
        out = codes[src]
        out[j < 0] = bos
        out[j >= self.length] = eos
        return out


def _template_keys(fields: dict[str, np.ndarray], sizes: dict[str, int], shift: _Shifter
                   ) -> list[np.ndarray]:
    """One int64 key per token and template, equal iff the template values are equal."""
    keys = []
    for template in CONLL_TEMPLATES:
        key = np.zeros(shift.n, dtype=np.int64)
        for field, o in template:
            base = sizes[field] + 2  # codes, then the begin and end markers
            key = key * base + shift(fields[field], o, base - 2, base - 1)
        keys.append(key)
    return keys


@overload
def load_conll2000(data_home: str | os.PathLike[str] | None = None,
                   return_info: Literal[False] = False, download_if_missing: bool = False
                   ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                              list[np.ndarray]]: ...


@overload
def load_conll2000(data_home: str | os.PathLike[str] | None, return_info: Literal[True],
                   download_if_missing: bool = False
                   ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                              list[np.ndarray], dict[str, Any]]: ...


@overload
def load_conll2000(data_home: str | os.PathLike[str] | None = None, *,
                   return_info: Literal[True], download_if_missing: bool = False
                   ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                              list[np.ndarray], dict[str, Any]]: ...


@overload
def load_conll2000(data_home: str | os.PathLike[str] | None = None, return_info: bool = False,
                   download_if_missing: bool = False
                   ) -> (tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               list[np.ndarray]]
                         | tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                 list[np.ndarray], dict[str, Any]]): ...


def load_conll2000(data_home: str | os.PathLike[str] | None = None, return_info: bool = False,
                   download_if_missing: bool = False
                   ) -> (tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               list[np.ndarray]]
                         | tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                 list[np.ndarray], dict[str, Any]]):
    """Load CoNLL-2000 chunking as attribute-id sequences for :class:`ChainModel`.

    Features follow the recipe verified against Schmidt's ``coNLL_test.mat``
    (see ``shared/reference/reference-setups.md`` §3): 19 CRFsuite templates
    over the lower-cased word and the POS tag (:data:`CONLL_TEMPLATES`), one
    begin and one end marker as ordinary values, one dictionary per template
    built on train keeping values seen >= 3 times, ids 1.. in order of first
    appearance in train, 0 = absent.  Chunk tags are numbered by first
    appearance in train (B-NP = 0, B-PP = 1, I-NP = 2, ...; 22 tags), a
    test-only tag after them (I-LST = 22).

    Parameters
    ----------
    data_home : path, optional
        Folder holding ``conll2000/train.txt`` and ``conll2000/test.txt`` (or the
        two files themselves).
    return_info : bool, default False
        Also return a dict with ``feature_sizes`` (per column, for
        ``ChainModel(n_states, feature_sizes)``), ``n_states`` (22, the
        train tags), ``labels`` (tag names by id) and ``templates``.
    download_if_missing : bool, default False
        Download the files from their public origin into the cache folder
        when they are missing (see :mod:`frankwolfe.applications.fetch`).

    Returns
    -------
    X_train, y_train, X_test, y_test : lists of ndarray
        ``X`` are int32 arrays of shape ``(L, 20)``: column 0 is the constant
        bias (id 1 always, gapBCFW's prepended column of ones) and columns
        1..19 the template ids.  ``y`` are int64 tag ids.  8936 train and 2012
        test sentences; ``ChainModel(22, info["feature_sizes"])`` has
        d = 1,643,026.
    info : dict
        Only when ``return_info`` is True.

    Raises
    ------
    FileNotFoundError
        Naming the expected files when they are missing.
    ValueError
        Naming the file (and the line) when it does not parse, or when its sha256
        is not the published one (a truncated or modified copy).
    """
    expected = ["train.txt", "test.txt"]
    return_info = check_flag(return_info, "return_info", where="load_conll2000")
    if check_download_flag(download_if_missing, "load_conll2000"):
        data_home = conll2000_home(data_home)
    folder = find_folder(data_home, "conll2000", expected, "load_conll2000")
    missing = [f for f in expected if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"load_conll2000: {missing} missing in {folder}; "
                                f"expected {expected}")
    train = _read(folder / "train.txt")
    test = _read(folder / "test.txt")
    for name, part in (("train.txt", train), ("test.txt", test)):
        # a file cut at a line end (or inside a tag: "B-N" read as a 24th tag) parses
        check_published(folder / name, f"conll2000/{name}", "load_conll2000",
                        f"{part[3].size} sentences read, CoNLL-2000's {name} has "
                        f"{_SENTENCES[name]}")

    vocab: dict[str, dict[str, int]] = {"w": {}, "p": {}, "y": {}}
    codes = []
    for words, pos, chunks, _ in (train, test):  # train first: tag ids by first appearance in train
        codes.append({"w": _encode(words, vocab["w"]), "p": _encode(pos, vocab["p"]),
                      "y": _encode(chunks, vocab["y"])})
    n_states = int(codes[0]["y"].max()) + 1
    sizes = {f: len(vocab[f]) for f in ("w", "p")}
    keys_train = _template_keys(codes[0], sizes, _Shifter(train[3]))
    keys_test = _template_keys(codes[1], sizes, _Shifter(test[3]))

    n_tpl = len(CONLL_TEMPLATES)
    ids_train = np.ones((keys_train[0].size, n_tpl + 1), dtype=np.int32)
    ids_test = np.ones((keys_test[0].size, n_tpl + 1), dtype=np.int32)
    feature_sizes = [1]
    for j, (ktr, kte) in enumerate(zip(keys_train, keys_test), 1):
        uniq, first, counts = np.unique(ktr, return_index=True, return_counts=True)
        kept = counts >= _MIN_COUNT
        uniq, first = uniq[kept], first[kept]
        # id = rank of the value's first appearance in train, 1-based
        ids_sorted = np.empty(uniq.size, dtype=np.int32)
        ids_sorted[np.argsort(first, kind="stable")] = np.arange(1, uniq.size + 1)
        for keys, out in ((ktr, ids_train), (kte, ids_test)):
            at = np.minimum(np.searchsorted(uniq, keys), max(uniq.size - 1, 0))
            found = uniq[at] == keys if uniq.size else np.zeros(keys.size, dtype=bool)
            out[:, j] = np.where(found, ids_sorted[at] if uniq.size else 0, 0)
        feature_sizes.append(int(uniq.size))

    def sentences(ids: np.ndarray, y: np.ndarray, lengths: np.ndarray
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        cuts = np.cumsum(lengths)[:-1]
        return np.split(ids, cuts), np.split(y, cuts)

    X_train, y_train = sentences(ids_train, codes[0]["y"], train[3])
    X_test, y_test = sentences(ids_test, codes[1]["y"], test[3])
    if not return_info:
        return X_train, y_train, X_test, y_test
    info = {
        "feature_sizes": np.asarray(feature_sizes, dtype=np.int64),
        "n_states": n_states,
        "labels": list(vocab["y"]),
        "templates": ["bias"] + ["|".join(f"{f}[{o}]" for f, o in t) for t in CONLL_TEMPLATES],
    }
    return X_train, y_train, X_test, y_test, info


class Conll2000Source:
    """CoNLL-2000's training sentences as an example source
    (:meth:`~frankwolfe.applications.structured_svm.SSVMDual.from_source`): it pickles
    as its folder, and each process that asks for examples reads the files itself,
    once, so a cluster's workers (on storage they share) each keep only their range.

    Parameters
    ----------
    data_home : path, optional
        As :func:`load_conll2000`; resolved here, so the workers read the same files.

    Attributes
    ----------
    n_states : int
        22 chunk tags.
    feature_sizes : ndarray
        Per column, for ``ChainModel(n_states, feature_sizes)``.

    Examples
    --------
    >>> from frankwolfe.applications.structured_svm import ChainModel, Conll2000Source
    >>> corpus = Conll2000Source()  # doctest: +SKIP
    >>> model = ChainModel(corpus.n_states, corpus.feature_sizes)  # doctest: +SKIP
    """

    _loaded: dict[str, tuple] = {}  # per process, by folder: (X, y, info)

    def __init__(self, data_home: str | os.PathLike[str] | None = None) -> None:
        self.data_home = str(get_data_home(data_home).resolve())

    def __reduce__(self) -> Any:
        return Conll2000Source, (self.data_home,)

    def _load(self) -> tuple:
        hit = Conll2000Source._loaded.get(self.data_home)
        if hit is None:
            X, y, _, _, info = load_conll2000(self.data_home, return_info=True)
            hit = Conll2000Source._loaded[self.data_home] = (X, y, info)
        return hit

    def __len__(self) -> int:
        return len(self._load()[0])

    @property
    def n_states(self) -> int:
        return int(self._load()[2]["n_states"])

    @property
    def feature_sizes(self) -> np.ndarray:
        return self._load()[2]["feature_sizes"]

    def examples(self, start: int, stop: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Sentences ``start .. stop - 1`` of the training set, as :func:`load_conll2000`
        gives them."""
        X, y, _ = self._load()
        if not 0 <= start <= stop <= len(X):
            raise ValueError(f"Conll2000Source.examples: need 0 <= start <= stop <= {len(X)}, "
                             f"got start={start!r}, stop={stop!r}")
        return X[start:stop], y[start:stop]

"""Data loaders against the published counts and the reference files."""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from frankwolfe.applications.data import get_data_home
from frankwolfe.applications.structured_svm import ChainModel, load_conll2000, load_ocr

# counts from shared/data/{ocr,conll2000}/SOURCE.md and reference-setups.md
OCR_WORDS_PER_FOLD = [626, 704, 684, 698, 693, 651, 739, 717, 690, 675]
CONLL_SIZES = [6046, 6324, 6325, 6163, 5986, 12432, 12055, 45, 45, 44, 44, 44,
               901, 911, 888, 878, 5241, 5246, 5040]


@cache
def _ocr(data_home: Path, split: str, source: str):
    return load_ocr(split, data_home=data_home, source=source)


@cache
def _conll(data_home: Path):
    return load_conll2000(data_home=data_home, return_info=True)


# -- OCR ------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["pickle", "mat"])
def test_ocr_counts_and_layout(shared_data, source):
    X_tr, y_tr, X_te, y_te = _ocr(shared_data, "ocr2", source)
    assert (len(X_tr), len(X_te)) == (6251, 626)
    assert sum(len(y) for y in y_tr + y_te) == 52152
    assert sum(len(y) for y in y_te) == 4617  # fold 0 letters
    for x, y in zip(X_tr[:50] + X_te[:50], y_tr[:50] + y_te[:50]):
        assert x.shape == (len(y), 129) and x.dtype == np.float64
        assert set(np.unique(x[:, :128])) <= {0.0, 1.0}
        np.testing.assert_array_equal(x[:, 128], 1.0)
        assert y.dtype == np.int64 and 0 <= y.min() and y.max() <= 25
    lengths = [len(y) for y in y_tr + y_te]
    assert (min(lengths), max(lengths)) == (3, 14)
    density = np.concatenate(X_tr + X_te)[:, :128].mean()
    assert density == pytest.approx(0.2197, abs=5e-5)
    assert ChainModel(26, X_tr[0].shape[1]).size_joint_feature == 4082

    small = _ocr(shared_data, "ocr", source)
    assert (len(small[0]), len(small[2])) == (626, 6251)
    # "ocr" swaps the two sides of "ocr2"
    assert all(np.array_equal(a, b) for a, b in zip(small[0], X_te))
    assert all(np.array_equal(a, b) for a, b in zip(small[3], y_tr))


def test_ocr_pickle_and_mat_agree(shared_data):
    a = _ocr(shared_data, "ocr2", "pickle")
    b = _ocr(shared_data, "ocr2", "mat")
    for part_a, part_b in zip(a, b):
        assert len(part_a) == len(part_b)
        assert all(np.array_equal(u, v) for u, v in zip(part_a, part_b))


def test_ocr_first_word(shared_data):
    # the first word of the file is "ommanding" (SOURCE.md) in fold 1
    _, y_tr, _, _ = _ocr(shared_data, "ocr2", "pickle")
    assert "".join(chr(97 + c) for c in y_tr[0]) == "ommanding"


def test_ocr_raw_letter_data(shared_data, tmp_path):
    """Taskar's raw format, written here from the .mat rows, reads back identically."""
    m = scipy.io.loadmat(shared_data / "ocr" / "ocr.mat")
    y, fold = m["y"].ravel().astype(int), m["fold"].ravel().astype(int)
    rows = np.flatnonzero(y > 0)
    last = y[rows + 1] == 0  # the .mat ends with a separator row
    word = np.concatenate([[0], np.cumsum(last)[:-1]])
    first = np.concatenate([[0], np.flatnonzero(last)[:-1] + 1])
    pos = np.arange(rows.size) - first[word]
    ids = np.arange(1, rows.size + 1)
    next_id = np.where(last, -1, ids + 1)
    pixels = ["\t".join(r) for r in m["X"][rows].astype(str).tolist()]
    lines = [f"{i}\t{chr(96 + c)}\t{n}\t{wd + 1}\t{p + 1}\t{fo}\t{px}\t"  # lines end in a tab
             for i, c, n, wd, p, fo, px in zip(ids, y[rows], next_id, word, pos, fold[rows],
                                               pixels)]
    (tmp_path / "ocr").mkdir()
    with gzip.open(tmp_path / "ocr" / "letter.data.gz", "wt", compresslevel=1) as f:
        f.write("\n".join(lines) + "\n")
    raw = load_ocr("ocr2", data_home=tmp_path)  # "auto" finds the raw file
    ref = _ocr(shared_data, "ocr2", "pickle")
    for part_a, part_b in zip(raw, ref):
        assert len(part_a) == len(part_b)
        assert all(np.array_equal(u, v) for u, v in zip(part_a, part_b))


def test_ocr_missing_data_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"letters\.pickle\.gz.*ocr\.mat.*letter\.data"):
        load_ocr(data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match="FRANKWOLFE_DATA"):
        load_ocr(data_home=tmp_path)
    with pytest.raises(ValueError, match=r"`split` must be 'ocr2' or 'ocr', got 'ocr3'"):
        load_ocr("ocr3", data_home=tmp_path)
    with pytest.raises(ValueError, match="`source`"):
        load_ocr(source="csv", data_home=tmp_path)


def test_data_home_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FRANKWOLFE_DATA", str(tmp_path))
    assert get_data_home() == tmp_path
    assert get_data_home(tmp_path / "x") == tmp_path / "x"
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "conll2000")):
        load_conll2000()


# -- CoNLL-2000 -------------------------------------------------------------------


def test_conll_counts_and_dimension(shared_data):
    X_tr, y_tr, X_te, y_te, info = _conll(shared_data)
    assert (len(X_tr), len(X_te)) == (8936, 2012)
    assert sum(len(y) for y in y_tr) == 211727 and sum(len(y) for y in y_te) == 47377
    np.testing.assert_array_equal(info["feature_sizes"], [1] + CONLL_SIZES)
    assert info["n_states"] == 22
    assert info["labels"][:7] == ["B-NP", "B-PP", "I-NP", "B-VP", "I-VP", "B-SBAR", "O"]
    assert info["labels"][22] == "I-LST"
    model = ChainModel(info["n_states"], info["feature_sizes"])
    assert model.size_joint_feature == 1_643_026
    assert all(x.shape == (len(y), 20) and (x[:, 0] == 1).all() for x, y in zip(X_tr, y_tr))
    # per column, the largest train id is the dictionary size (gapBCFW's max(Xtrain))
    np.testing.assert_array_equal(np.concatenate(X_tr).max(axis=0), info["feature_sizes"])


def test_conll_ids_match_schmidt_reference(shared_data):
    _, _, X_te, y_te, _ = _conll(shared_data)
    ref = scipy.io.loadmat(shared_data / "conll2000" / "reference" / "coNLL_test.mat")
    tokens = ref["y"].ravel() != 0  # separator rows have y == 0
    ref_X = ref["X"][tokens].astype(np.int64)
    ours = np.concatenate(X_te)[:, 1:]
    assert ours.shape == ref_X.shape == (47377, 19)
    assert (ours == ref_X).all(axis=1).mean() == 1.0
    np.testing.assert_array_equal(np.concatenate(y_te) + 1, ref["y"].ravel()[tokens])
    # sentence boundaries: one separator row after each sentence
    sep = np.flatnonzero(~tokens)
    np.testing.assert_array_equal(np.diff(np.concatenate([[-1], sep])) - 1, [len(y) for y in y_te])


def test_conll_features_on_real_sentences(shared_data):
    """Sparse joint features of real sentences against the reference formula."""
    X_tr, y_tr, X_te, y_te, info = _conll(shared_data)
    model = ChainModel(info["n_states"], info["feature_sizes"])
    K, F = model.n_states, model.n_unary
    start = np.concatenate([[0], np.cumsum(info["feature_sizes"])[:-1]])
    rng = np.random.default_rng(0)
    w = rng.normal(size=model.size_joint_feature)
    for i in (0, 1, 4000, 8935):
        x, y = X_tr[i], y_tr[i]
        phi = {}
        for t in range(len(y)):
            for j in range(20):
                if x[t, j]:
                    key = int(y[t]) * F + int(start[j] + x[t, j] - 1)
                    phi[key] = phi.get(key, 0.0) + 1.0
        for key in (K * F + y[0], K * F + K + y[-1],
                    *(K * F + 2 * K + y[t] + K * y[t + 1] for t in range(len(y) - 1))):
            phi[int(key)] = phi.get(int(key), 0.0) + 1.0
        idx, val = model.joint_feature_sparse(x, y)
        assert dict(zip(idx.tolist(), val.tolist())) == phi
        assert model.score(x, y, w) == pytest.approx(sum(w[k] * v for k, v in phi.items()))
        assert set(idx) <= set(model.feature_support(x))
    # the test-only tag is accepted by the loss-augmented oracle
    i = next(i for i, y in enumerate(y_te) if (y == 22).any())
    y_aug = model.loss_augmented_decode(X_te[i], y_te[i], w)
    assert y_aug.max() < 22 and model.loss(y_te[i], y_aug) > 0


def test_conll_missing_file_is_named(tmp_path):
    (tmp_path / "conll2000").mkdir()
    (tmp_path / "conll2000" / "train.txt").write_text("Confidence NN B-NP\n\n")
    with pytest.raises(FileNotFoundError, match=r"\['test\.txt'\] missing"):
        load_conll2000(data_home=tmp_path)

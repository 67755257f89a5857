"""The synthetic CoNLL-2000-like corpus: shards that need no other shard, CoNLL's
templates and sizes, IOB2 tag chains, and data a chain SSVM learns from."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import (
    ChainModel,
    ConllLike,
    load_conll2000,
    make_conll_like,
)


def _same(a, b):
    assert len(a[0]) == len(b[0])
    for xa, xb in zip(a[0], b[0]):
        np.testing.assert_array_equal(xa, xb)
    for ya, yb in zip(a[1], b[1]):
        np.testing.assert_array_equal(ya, yb)


def test_shards_make_the_whole_and_need_no_other_block(monkeypatch):
    corpus = ConllLike(700, random_state=3)  # 2 whole blocks of 256 and a part
    whole = corpus.examples(0, 700)
    parts = [corpus.shard(k, 3) for k in range(3)]
    assert [corpus.shard_range(k, 3) for k in range(3)] == [(0, 233), (233, 466), (466, 700)]
    _same(whole, (sum((p[0] for p in parts), []), sum((p[1] for p in parts), [])))
    drawn = []
    block = ConllLike._block
    monkeypatch.setattr(ConllLike, "_block", lambda self, b: drawn.append(b) or block(self, b))
    X, y = corpus.examples(300, 520)
    assert drawn == [1, 2] and len(X) == len(y) == 220  # the blocks of 256..767 alone
    _same((X, y), (whole[0][300:520], whole[1][300:520]))


def test_a_bigger_corpus_starts_with_the_smaller_and_seeds_differ():
    _same(ConllLike(300, random_state=5).examples(0, 300),
          ConllLike(3000, random_state=5).examples(0, 300))
    a = np.concatenate(ConllLike(50, random_state=5).examples(0, 50)[1])
    b = np.concatenate(ConllLike(50, random_state=6).examples(0, 50)[1])
    assert a.size != b.size or (a != b).any()
    # a Generator is drawn from once: the instance then repeats itself
    corpus = ConllLike(40, random_state=np.random.default_rng(0))
    _same(corpus.examples(0, 40), corpus.examples(0, 40))


def test_a_pickled_corpus_is_small_and_draws_the_same_shard():
    corpus = ConllLike(100_000, random_state=9)
    blob = pickle.dumps(corpus)
    assert len(blob) < 1000  # the seed: not the sentences, nor the language drawn from it
    _same(pickle.loads(blob).shard(5, 64), corpus.shard(5, 64))


def test_conll_templates_sizes_and_iob2_tags():
    X, y, info = make_conll_like(600, random_state=0, return_info=True)
    assert info["n_states"] == 22 and len(info["labels"]) == 22
    assert info["templates"][0] == "bias" and len(info["templates"]) == 20
    model = ChainModel(info["n_states"], info["feature_sizes"])
    assert model.size_joint_feature == 1_643_026  # CoNLL-2000's d (load_conll2000's doc)
    sizes = np.asarray(info["feature_sizes"])
    lengths = np.array([len(s) for s in y])
    assert lengths.min() >= 1 and lengths.max() <= 78
    assert 19.0 < lengths.mean() < 28.0  # CoNLL-2000 train: 23.7
    ids = np.concatenate(X)
    assert ids.dtype == np.int32 and ids.shape == (lengths.sum(), 20)
    assert (ids[:, 0] == 1).all() and (ids >= 0).all() and (ids <= sizes).all()
    absent = (ids == 0).mean(axis=0)
    assert absent[[8, 9, 10, 11, 12]].max() == 0.0  # POS tags are never absent
    assert 0.02 < absent[1:6].mean() < 0.15  # rare words (CoNLL-2000 train: 6%)
    assert 0.25 < absent[6:8].mean() < 0.65  # rare word bigrams (48%)
    # IOB2: I-X only after B-X or I-X, never first
    labels = info["labels"]
    for s in y:
        for t, tag in enumerate(s):
            name = labels[tag]
            if name.startswith("I-"):
                assert t > 0 and labels[s[t - 1]][2:] == name[2:], [labels[v] for v in s]


def test_equal_contexts_get_equal_ids_across_shards():
    """A template's id is a function of the values it reads: tokens whose POS unigram ids
    agree at offsets -2, -1, 0 (one id per tag or marker there) have equal POS-trigram
    ids, wherever their shards are."""
    corpus = ConllLike(1200, random_state=2)
    ids = np.concatenate([np.concatenate(corpus.shard(k, 4)[0]) for k in range(4)])
    ctx = ids[:, [8, 9, 10]]  # p[-2], p[-1], p[0]
    tri = ids[:, 17]  # p[-2]|p[-1]|p[0]
    keep = tri > 0
    _, first = np.unique(ctx[keep], axis=0, return_inverse=True)
    first = first.ravel()
    order = np.argsort(first, kind="stable")
    by = np.split(tri[keep][order], np.flatnonzero(np.diff(first[order])) + 1)
    assert len(by) > 100 and all((g == g[0]).all() for g in by)


def test_sizes_are_those_of_the_real_corpus(shared_data):
    *_, info = load_conll2000(data_home=shared_data, return_info=True)
    np.testing.assert_array_equal(ConllLike(1).feature_sizes, info["feature_sizes"])
    assert ConllLike(1).labels == info["labels"][:22]


def test_the_real_corpus_as_an_example_source(shared_data):
    """Conll2000Source: the loader's sentences by range, pickled as its folder (a few
    hundred bytes) and read again where it is unpickled."""
    from frankwolfe.applications.structured_svm import Conll2000Source

    X, y, _, _, info = load_conll2000(data_home=shared_data, return_info=True)
    src = Conll2000Source(shared_data)
    assert len(src) == len(X) == 8936 and src.n_states == info["n_states"] == 22
    np.testing.assert_array_equal(src.feature_sizes, info["feature_sizes"])
    blob = pickle.dumps(src)
    assert len(blob) < 1000
    Xs, ys = pickle.loads(blob).examples(5, 8)
    assert len(Xs) == len(ys) == 3
    for a, b in zip(Xs + ys, X[5:8] + y[5:8]):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="start=7, stop=9000"):
        src.examples(7, 9000)


def test_a_chain_ssvm_learns_the_tags():
    """The tags follow from the POS tags around a token and from their own order: a
    chain SSVM on the five POS-unigram columns alone (a small model, quick to fit)
    beats the majority tag by far."""
    from frankwolfe.applications.structured_svm import StructuredSVM

    corpus = ConllLike(500, random_state=1)
    cols = [8, 9, 10, 11, 12]  # p[-2] .. p[2]
    X, y = corpus.examples(0, 400)
    Xt, yt = corpus.examples(400, 500)
    X, Xt = [x[:, cols] for x in X], [x[:, cols] for x in Xt]
    est = StructuredSVM(ChainModel(corpus.n_states, corpus.feature_sizes[cols]), max_passes=10,
                        random_state=0).fit(X, y)
    majority = np.bincount(np.concatenate(y)).max() / sum(len(s) for s in y)
    assert majority < 0.35
    assert est.score(Xt, yt) > 0.75


@pytest.mark.parametrize("call, message", [
    (lambda: ConllLike(0), "`n_samples` must be a positive integer, got 0"),
    (lambda: ConllLike(5, random_state=-1), "BitGenerator or RandomState, got -1"),
    (lambda: ConllLike(5).examples(3, 2), "start=3, stop=2"),
    (lambda: ConllLike(5).examples(0, 6), "n_samples = 5"),
    (lambda: ConllLike(5).shard(4, 4), "`k` must be < n_shards = 4, got 4"),
    (lambda: ConllLike(5).shard(0, 0), "`n_shards` must be a positive integer, got 0"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        call()
    with pytest.raises(TypeError, match="ConllLike: `random_state` must be None, a "
                                        "non-negative integer .* got '7'"):
        ConllLike(5, random_state="7")


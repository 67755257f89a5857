"""How long the chain model's flattened data sets live.

A fit converts each of its data sets once (training, and the test set of its
evaluations) and keeps nothing of them, nor the model, once it returns; outside a
fit one data set is kept, the last, while its model lives, without the caller's lists
or examples.  The module-level memo of the last four data sets held the model, the
examples and copies of their rows after every fit (+104 MB on OCR after the caller had
dropped all of it).  Data sets that read the caller's memory in place are checked for
changes without a copy of their rows, and what was derived from those rows (sparse
rows, Gram matrices, the ids' range) is still that of a fresh conversion."""

from __future__ import annotations

import gc
import threading
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM
from frankwolfe.applications.structured_svm.datasets.synthetic import make_chain
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.applications.structured_svm.models.chain import data as chain_data_module
from frankwolfe.applications.structured_svm.models.chain.data import (
    ChainData,
    chain_data,
    chain_data_scope,
)
from frankwolfe.errors import ShapeError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _fit(model, X, Y, *args, **kw):
    kw = {"max_passes": 4, "random_state": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StructuredSVM(model, **kw).fit(X, Y, *args)


def _views(rows, X):
    """``X``'s rows as consecutive views of one array (as the data loaders return them)."""
    return np.split(rows, np.cumsum([len(x) for x in X])[:-1])


@pytest.fixture
def conversions(monkeypatch):
    """The lists that ChainData converts, in order: ``(X, with labels)``."""
    seen: list[tuple[object, bool]] = []
    init = ChainData.__init__

    def spy(self, model, X, Y=None):
        seen.append((X, Y is not None))
        init(self, model, X, Y)

    monkeypatch.setattr(ChainData, "__init__", spy)
    return seen


@pytest.mark.parametrize("debug", [False, True], ids=["as_users_run", "debug"])
def test_fit_frees_model_and_examples(debug):
    # the check: the fit's memo entries (training with Y, evaluation without)
    # kept both alive, with nothing else referring to them
    X, Y = make_chain(200, 4, 6, random_state=0)
    model = ChainModel(4, 6)
    with fw.debug(debug):
        svm = _fit(model, X, Y, max_passes=2)
    wm, wx = weakref.ref(model), weakref.ref(X[0])
    del svm, model, X, Y
    gc.collect()
    assert wm() is None
    assert wx() is None


def test_fit_frees_views_of_one_array():
    # rows read in place: the fit's data set held the whole array (and a copy of it)
    X0, Y = make_chain(50, 3, 5, random_state=1)
    flat = (np.concatenate(X0) > 0.8).astype(float)
    X = _views(flat, X0)
    _fit(ChainModel(3, 5), X, Y)
    wflat = weakref.ref(flat)
    del X, flat
    gc.collect()
    assert wflat() is None


@pytest.mark.parametrize("solver", ["bcfw", "fw", "ssg"])
@pytest.mark.parametrize("time_limit", [None, 100.0], ids=["no_limit", "time_limit"])
def test_fit_with_evaluations_converts_each_data_set_once(conversions, solver, time_limit):
    # the training conversion (with labels) serves the evaluations' primal values and
    # predictions on the training set, and the time limit's estimate of an evaluation;
    # the test set is converted once for all its evaluations
    X, Y = make_chain(40, 3, 5, random_state=0)
    Xt, Yt = make_chain(15, 3, 5, random_state=1)
    with fw.debug(False):
        svm = _fit(ChainModel(3, 5), X, Y, Xt, Yt, solver=solver, max_passes=6,
                   eval_every=2, gap_every=2, time_limit=time_limit, tol=1e-12)
    assert len(svm.history_["passes"]) >= 2  # evaluations after the first reuse
    assert [(x is X, x is Xt, labelled) for x, labelled in conversions] == \
        [(True, False, True), (False, True, False)]


def test_predictions_without_labels_reuse_the_labelled_conversion(conversions):
    X, Y = make_chain(20, 3, 5, random_state=0)
    model = ChainModel(3, 5)
    with chain_data_scope():
        labelled = chain_data(model, X, Y)
        assert chain_data(model, X) is labelled
        assert chain_data(model, X, Y) is labelled
    assert len(conversions) == 1


@pytest.mark.parametrize("debug", [False, True], ids=["as_users_run", "debug"])
def test_compiled_chain_fit_never_builds_the_python_blocks(monkeypatch, debug):
    # the compiled passes need no per-example block oracles: reading every block's
    # `exact` built them all (550 MB on CoNLL-2000); with debug checks on, the
    # Python steps do build them (the spy then sees it, which shows it works)
    built = []
    monkeypatch.setattr(SSVMDual, "_build", lambda self: built.append(self) or
                        pytest.fail("SSVMDual built its Python blocks"))
    X, Y = make_chain(30, 3, 5, random_state=0)
    Xt, Yt = make_chain(10, 3, 5, random_state=1)
    kw = dict(max_passes=4, eval_every=2, gap_every=2)
    with fw.debug(debug):
        if debug:
            with pytest.raises(BaseException, match="built its Python blocks"):
                _fit(ChainModel(3, 5), X, Y, Xt, Yt, **kw)
            assert built
            return
        _fit(ChainModel(3, 5), X, Y, Xt, Yt, **kw)
        _fit(ChainModel(3, 5), X, Y, Xt, Yt, batch_size=8, **kw)
        _fit(ChainModel(3, 5), X, Y, Xt, Yt, batch_size=8, round_step="joint", **kw)
    assert not built


def test_one_data_set_is_kept_outside_a_fit(conversions):
    X1, _ = make_chain(20, 3, 5, random_state=0)
    X2, _ = make_chain(25, 3, 5, random_state=1)
    model = ChainModel(3, 5)
    first = weakref.ref(chain_data(model, X1))
    assert first() is chain_data(model, X1)  # repeated predictions convert it once
    second = chain_data(model, X2)
    gc.collect()
    assert first() is None
    assert chain_data(model, X2) is second
    assert len(conversions) == 2


def test_the_kept_data_set_holds_neither_model_nor_examples():
    X, Y = make_chain(30, 3, 5, random_state=0)
    svm = _fit(ChainModel(3, 5), X, Y)
    svm.predict(X)
    wx, wlist = weakref.ref(X[0]), weakref.ref(X[1])
    kept = weakref.ref(chain_data(svm.model, X))
    del X
    gc.collect()
    assert wx() is None and wlist() is None  # the model lives, the examples go
    wm = weakref.ref(svm.model)
    del svm
    gc.collect()
    assert wm() is None
    assert kept() is None  # and the data set goes with its model


def test_scopes_of_concurrent_fits_are_their_own():
    # each thread has its own context: one's scope neither sees nor drops another's
    X, Y = make_chain(20, 3, 5, random_state=0)
    model = ChainModel(3, 5)
    inside, ready, done = [], threading.Event(), threading.Event()

    def other():
        with chain_data_scope():
            inside.append(chain_data(model, X, Y))
            ready.set()
            done.wait(10)
            inside.append(chain_data(model, X, Y))

    t = threading.Thread(target=other)
    t.start()
    ready.wait(10)
    with chain_data_scope():
        mine = chain_data(model, X, Y)
    done.set()
    t.join()
    assert mine is not inside[0]
    assert inside[1] is inside[0]


def test_views_of_one_array_are_checked_without_a_copy():
    # rows read in place: the memo kept a copy of them to compare with, doubling the
    # data set's memory
    X0, Y = make_chain(400, 3, 5, random_state=0, length=(40, 60))
    flat = np.concatenate(X0)
    X = _views(flat, X0)
    model = ChainModel(3, 5)
    chain_data(model, X[:1])  # compiles nothing, imports nothing later on
    tracemalloc.start()
    try:
        data = chain_data(model, X, Y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.shares_memory(data.Xf, flat)
    assert peak < 0.5 * flat.nbytes, (peak, flat.nbytes)
    assert chain_data(model, X, Y) is data


def _fresh(model, X, Y=None):
    return ChainData(model, [np.array(x) for x in X], Y)


def test_views_of_ids_changed_in_place():
    X0, Y = make_chain(20, 3, 4, n_templates=2, random_state=0)
    ids = np.concatenate(X0).astype(np.int32)
    X = _views(ids, X0)
    model = ChainModel(3, [4, 4])
    svm = _fit(model, X, Y)
    data = chain_data(model, X, Y)
    assert np.shares_memory(data.If, ids)
    data.gram()
    ids[:] = np.where(ids == 0, 0, 1)  # other ids, all in range, shared by more tokens
    now = chain_data(model, X, Y)
    for a, b in zip(now.gram(), _fresh(model, X, Y).gram()):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(now.gram()[0], ChainData(model, X0, Y).gram()[0])
    expected = [model.decode(x, svm.w_) for x in X]
    assert all(np.array_equal(p, q) for p, q in zip(svm.predict(X), expected))
    ids[7, 1] = 9  # past template 1's 4 ids: the kernels index weights without checks
    with pytest.raises(ValueError, match="attribute id 9 of template 1 out of range"):
        svm.predict(X)


@pytest.mark.parametrize("sparse_after", [True, False], ids=["to_sparse", "to_dense"])
def test_views_of_dense_rows_changed_in_place(sparse_after):
    # the sparse rows and Gram matrices of the rows read in place are those of a fresh
    # conversion after a change: rows mostly nonzero (no sparse rows) made mostly zero,
    # and sparse binary rows (kept in sparse form) made dense
    X0, Y = make_chain(30, 3, 5, random_state=3)
    rows = np.concatenate(X0)
    flat = (rows != 0).astype(float) if sparse_after else (rows > 0.8).astype(float)
    X = _views(flat, X0)
    model = ChainModel(3, 5)
    data = chain_data(model, X, Y)
    data.token_csr()
    data.gram()
    flat[:] = (rows > 0.8) if sparse_after else (rows != 0)
    now = chain_data(model, X, Y)
    fresh = _fresh(model, X, Y)
    for a, b in zip(now.token_csr(), fresh.token_csr()):
        np.testing.assert_array_equal(a, b)
    assert now.token_csr()[0].size == (fresh.Xf.shape[0] + 1 if sparse_after else 0)
    for a, b in zip(now.gram(), fresh.gram()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(now.Xf, fresh.Xf)


def test_labels_regrouped_between_examples_are_refused():
    # the same labels joined, split otherwise between the examples: the memo compared
    # only the joined labels and reused the data set a fresh conversion refuses
    X, Y = make_chain(6, 3, 5, random_state=0, length=(4, 6))
    Y = [y.copy() for y in Y]
    model = ChainModel(3, 5)
    chain_data(model, X, Y)
    joined = np.concatenate(Y[:2])
    Y[0], Y[1] = joined[:len(Y[0]) + 1], joined[len(Y[0]) + 1:]
    with pytest.raises(ValueError, match="labelling of example 0 has"):
        chain_data(model, X, Y)
    X, Y = make_chain(6, 3, 5, random_state=0)
    chain_data(model, X, Y)
    Y[:] = [y[:, None] for y in Y]  # 2-D, the same lengths, the same labels
    with pytest.raises(ShapeError, match="labelling of example 0 must be 1-D"):
        chain_data(model, X, Y)


def test_nothing_kept_within_a_scope_outlives_it():
    X, Y = make_chain(20, 3, 5, random_state=0)
    model = ChainModel(3, 5)
    outside = chain_data(model, X)
    with chain_data_scope():
        inner = weakref.ref(chain_data(model, X, Y))
        assert chain_data(model, X) is inner()
    gc.collect()
    assert inner() is None
    assert chain_data(model, X) is outside  # the one kept outside, untouched
    assert chain_data_module._SCOPES.get() == ()


def test_a_scope_keeps_its_last_four_data_sets():
    model = ChainModel(3, 5)
    sets = [make_chain(5, 3, 5, random_state=i) for i in range(6)]
    with chain_data_scope():
        train = chain_data(model, *sets[0])
        refs = [weakref.ref(chain_data(model, X)) for X, _ in sets[1:]]
        assert chain_data(model, *sets[0]) is not train  # used least recently: dropped
        gc.collect()
        assert [r() is not None for r in refs] == [False, False, True, True, True]

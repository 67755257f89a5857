"""The chain model's flattened data sets are reused only while the examples are
unchanged: a fit or a prediction on a list whose arrays were changed in place, or
whose items were replaced, reads the data as they are now (a stale memo trained on the
old data and certified a gap of a problem the caller no longer had)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM
from frankwolfe.applications.structured_svm.datasets.synthetic import make_chain
from frankwolfe.applications.structured_svm.models.chain import data as chain_data_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True, params=[False, True], ids=["as_users_run", "debug"])
def debug_checks(request):
    """Both engines: debug checks off (as users run it: the compiled passes, which read
    the flattened data's sparse rows) and on (the Python steps)."""
    with fw.debug(request.param):
        yield


def _fit(model, X, Y, **kw):
    kw = {"max_passes": 20, "random_state": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StructuredSVM(model, **kw).fit(X, Y)


def _primal(model, X, Y, w, lam):
    """The primal objective by the model's own per-example Viterbi (no flattened data):
    ``lam/2 ||w||^2 + 1/n sum_i max_y [L(y_i, y) + <w, phi(x_i, y) - phi(x_i, y_i)>]``."""
    hinge = 0.0
    for x, y in zip(X, Y):
        yh = model.loss_augmented_decode(x, y, w)
        dphi = np.asarray(model.joint_feature(x, yh)) - np.asarray(model.joint_feature(x, y))
        hinge += model.loss(y, yh) + float(w @ dphi)
    return 0.5 * lam * float(w @ w) + hinge / len(X)


def test_fit_after_in_place_change_trains_on_the_changed_data():
    X, Y = make_chain(30, 3, 5, random_state=0)
    X = [x.copy() for x in X]
    model = ChainModel(3, 5)
    _fit(model, X, Y)
    for x in X:
        x *= -1.0
    a = _fit(model, X, Y)
    fresh = [x.copy() for x in X]
    b = _fit(ChainModel(3, 5), fresh, Y)
    np.testing.assert_allclose(a.w_, b.w_, rtol=0, atol=1e-12)
    # a's certificate holds for the data as they are now: the optimum lies in
    # [dual, primal] of an independent fit, and a's primal, computed without the chain
    # kernels, exceeds it by at most a's reported gap (before the fix: gap 0.085, primal
    # 3.30 against an optimum near 0.09)
    ref = _fit(ChainModel(3, 5), [x.copy() for x in X], Y, max_passes=200, tol=1e-9,
               gap_every=5)
    gap_a, gap_ref = a.history_["gap"][-1], ref.history_["gap"][-1]
    assert gap_ref < 0.1 * gap_a
    primal_a = _primal(model, fresh, Y, a.w_, a.lam_)
    assert primal_a == pytest.approx(a.history_["primal"][-1], rel=1e-9, abs=1e-12)
    assert primal_a - ref.history_["primal"][-1] <= gap_a + 1e-12
    assert a.history_["dual"][-1] <= ref.history_["primal"][-1] + 1e-12


def test_predict_after_in_place_change_reads_the_changed_data():
    X, Y = make_chain(30, 3, 5, random_state=0)
    X = [x.copy() for x in X]
    svm = _fit(ChainModel(3, 5), X, Y)
    before = svm.predict(X)
    for x in X:
        x *= -1.0
    after = svm.predict(X)
    expected = [svm.model.decode(x, svm.w_) for x in X]  # per example, no flattened data
    assert any(not np.array_equal(p, q) for p, q in zip(before, expected))
    assert all(np.array_equal(p, q) for p, q in zip(after, expected))
    assert all(np.array_equal(p, q) for p, q in zip(after, svm.predict([x.copy() for x in X])))


def test_views_of_one_array_changed_in_place():
    # consecutive views of one array: the flattened data read the caller's memory, so
    # the memo keeps its own copy of the rows to compare with; binary rows, most of
    # them zero, whose sparse form (token_csr) the data set keeps
    X0, Y = make_chain(30, 3, 5, random_state=1)
    flat = (np.concatenate(X0) > 0.8).astype(float)
    X = np.split(flat, np.cumsum([len(x) for x in X0])[:-1])
    svm = _fit(ChainModel(3, 5), X, Y)
    svm.predict(X)
    assert np.shares_memory(chain_data_module.chain_data(svm.model, X).Xf, flat)
    flat[:] = np.roll(flat, 1, axis=1)
    expected = [svm.model.decode(x, svm.w_) for x in X]
    assert all(np.array_equal(p, q) for p, q in zip(svm.predict(X), expected))
    a = _fit(svm.model, X, Y)
    b = _fit(ChainModel(3, 5), [x.copy() for x in X], Y)
    np.testing.assert_allclose(a.w_, b.w_, rtol=0, atol=1e-12)


def test_replaced_items_of_other_lengths_fit():
    X, Y = make_chain(30, 3, 5, random_state=0)
    X2, Y2 = make_chain(25, 3, 5, length=(9, 12), random_state=5)
    model = ChainModel(3, 5)
    _fit(model, X, Y)
    X[:] = X2
    Y[:] = Y2
    a = _fit(model, X, Y)
    b = _fit(ChainModel(3, 5), [x.copy() for x in X2], [y.copy() for y in Y2])
    np.testing.assert_allclose(a.w_, b.w_, rtol=0, atol=1e-12)
    assert all(np.array_equal(p, q) for p, q in zip(a.predict(X), b.predict(X2)))


def test_labels_changed_in_place():
    X, Y = make_chain(30, 3, 5, random_state=0)
    Y = [y.copy() for y in Y]
    model = ChainModel(3, 5)
    _fit(model, X, Y)
    for y in Y:
        y[:] = (y + 1) % 3
    a = _fit(model, X, Y)
    b = _fit(ChainModel(3, 5), X, [y.copy() for y in Y])
    np.testing.assert_allclose(a.w_, b.w_, rtol=0, atol=1e-12)


def test_attribute_id_changed_out_of_range_in_place_is_refused():
    X, Y = make_chain(20, 3, 4, n_templates=2, random_state=0)
    model = ChainModel(3, [4, 4])
    svm = _fit(model, X, Y)
    X[3][0, 1] = 99  # past template 1's 4 ids: the kernels index weights without checks
    with pytest.raises(ValueError, match="attribute id 99 of template 1 out of range"):
        svm.predict(X)
    with pytest.raises(ValueError, match="attribute id 99 of template 1 out of range"):
        _fit(model, X, Y)


def test_unchanged_data_is_converted_once():
    X, Y = make_chain(30, 3, 5, random_state=0)
    model = ChainModel(3, 5)
    first = chain_data_module.chain_data(model, X, Y)
    assert chain_data_module.chain_data(model, X, Y) is first
    X[4] = X[4].copy()  # an equal copy: the same values, reused
    assert chain_data_module.chain_data(model, X, Y) is first
    X[4][0, 0] += 1.0
    again = chain_data_module.chain_data(model, X, Y)
    assert again is not first
    np.testing.assert_array_equal(again.Xf, np.concatenate(X))


def test_subset_has_its_own_sparse_rows():
    # a subset taken after the whole set's sparse rows were computed kept them: their
    # ptr counts the whole set's tokens, not the subset's
    X, Y = make_chain(6, 3, 5, random_state=2)
    X = [(x > 0.8).astype(float) for x in X]
    whole = chain_data_module.ChainData(ChainModel(3, 5), X, Y)
    whole.token_csr()
    part = whole.subset(2, 4)
    ptr, col, _ = part.token_csr()
    rows, cols = np.nonzero(np.concatenate(X[2:4]))
    np.testing.assert_array_equal(ptr, np.concatenate(([0], np.cumsum(np.bincount(
        rows, minlength=part.Xf.shape[0])))))
    np.testing.assert_array_equal(col, cols)

"""StructuredSVM records the column names of a pandas DataFrame and refuses other or
reordered columns at prediction (examples are read by position: reordered columns
predicted with the wrong weights, silently); its tags and random_state forms."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MulticlassModel,
    StructuredSVM,
    make_chain,
)

pd = pytest.importorskip("pandas")


@pytest.fixture
def nodebug():
    with fw.debug(False):
        yield


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(90, 4)), columns=list("abcd"))
    y = (X["a"] > 0).astype(int).to_numpy()
    return X, y


def _fit(X, y, **kw):
    svm = StructuredSVM(MulticlassModel(2, 4), lam=1e-2, max_passes=10, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return svm.fit(X, y)


def _sklearn_message(X, y, X_other):
    """What scikit-learn's own estimator says to the same mismatch (the reference)."""
    with pytest.raises(ValueError) as info:
        LogisticRegression().fit(X, y).predict(X_other)
    return str(info.value)


def test_reordered_columns_refused_as_scikit_learn_does(nodebug, frame):
    X, y = frame
    svm = _fit(X, y)
    assert list(svm.feature_names_in_) == list("abcd")
    assert svm.score(X, y) > 0.9
    shuffled = X[list("dcba")]
    want = _sklearn_message(X, y, shuffled).replace("LogisticRegression", "StructuredSVM")
    for call in (svm.predict, lambda Z: svm.score(Z, y), lambda Z: svm.error(Z, y),
                 lambda Z: svm.primal(Z, y)):
        with pytest.raises(ValueError, match="The feature names should match") as info:
            call(shuffled)
        assert str(info.value) == want
    renamed = X.set_axis(list("abcz"), axis=1)
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- z"):
        svm.predict(renamed)


def test_same_columns_predict_as_the_array(nodebug, frame):
    X, y = frame
    svm = _fit(X, y)
    on_array = _fit(X.to_numpy(), y)
    assert np.array_equal(svm.w_, on_array.w_)
    assert not hasattr(on_array, "feature_names_in_")
    assert [int(p) for p in svm.predict(X)] == [int(p) for p in on_array.predict(X.to_numpy())]
    # an array for a model fitted on names: scikit-learn's warning, and the same answer
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        assert svm.score(X.to_numpy(), y) == svm.score(X, y)


def test_refit_on_an_array_forgets_the_names(nodebug, frame):
    X, y = frame
    svm = _fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X.to_numpy(), y)
    assert not hasattr(svm, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but StructuredSVM was fitted "
                                         "without feature names"):
        svm.predict(X[list("dcba")])


def test_test_set_columns_checked_and_failed_fit_keeps_the_names(nodebug, frame):
    X, y = frame
    svm = _fit(X, y)
    w = svm.w_.copy()
    other = X.set_axis(list("wxyz"), axis=1)
    with pytest.raises(ValueError, match="The feature names should match"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm.fit(other, y, X_test=X, Y_test=y)
    # the failed fit left the previous one whole: its names beside its weights
    assert list(svm.feature_names_in_) == list("abcd")
    assert np.array_equal(svm.w_, w)


def test_names_survive_save_and_load(nodebug, frame, tmp_path):
    X, y = frame
    svm = _fit(X, y)
    svm.save(tmp_path / "m.npz")
    loaded = StructuredSVM.load(tmp_path / "m.npz")
    assert list(loaded.feature_names_in_) == list("abcd")
    assert loaded.score(X, y) == svm.score(X, y)
    with pytest.raises(ValueError, match="The feature names should match"):
        loaded.predict(X[list("dcba")])
    plain = _fit(X.to_numpy(), y)
    plain.save(tmp_path / "p.npz")
    assert not hasattr(StructuredSVM.load(tmp_path / "p.npz"), "feature_names_in_")


def test_lock_free_is_tagged_non_deterministic():
    model = ChainModel(3, 4)
    assert get_tags(StructuredSVM(model, round_step="lock_free")).non_deterministic
    for step in ("sequential", "joint"):
        assert not get_tags(StructuredSVM(model, round_step=step)).non_deterministic


@pytest.mark.parametrize("seed", [lambda: np.random.RandomState(3),
                                  lambda: np.random.SeedSequence(3), lambda: [3, 4]],
                         ids=["RandomState", "SeedSequence", "sequence"])
def test_documented_seed_forms_are_reproducible(nodebug, seed):
    X, Y = make_chain(30, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), max_passes=4, gap_every=2, random_state=seed())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = svm.fit(X, Y).w_.copy()
        b = clone(svm).set_params(random_state=seed()).fit(X, Y).w_
        other = clone(svm).set_params(random_state=0).fit(X, Y).w_
    assert np.array_equal(a, b)
    assert not np.array_equal(a, other)  # the seed was used, not ignored


def test_kernel_estimator_checks_the_columns_too(nodebug, frame):
    from frankwolfe.applications.structured_svm.kernel_bcfw import KernelStructuredSVM

    X, y = frame
    X, y = X.iloc[:30], y[:30]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = KernelStructuredSVM(MulticlassModel(2, 4), "linear", max_passes=5,
                                  random_state=0).fit(X, y)
    assert list(svm.feature_names_in_) == list("abcd")
    want = _sklearn_message(X, y, X[list("dcba")]).replace("LogisticRegression",
                                                           "KernelStructuredSVM")
    for call in (svm.predict, svm.decision_function, lambda Z: svm.score(Z, y),
                 lambda Z: svm.error(Z, y)):
        with pytest.raises(ValueError, match="The feature names should match") as info:
            call(X[list("dcba")])
        assert str(info.value) == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right columns: no warning on any path
        predicted = svm.predict(X)
        score = svm.score(X, y)
    assert score == pytest.approx(np.mean(np.asarray(predicted) == y), abs=1e-12)

"""Model files of StructuredSVM: pickle-free .npz + JSON header, versioned, checked on load."""

import hashlib
import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MatchingModel,
    MulticlassModel,
    StructuredModel,
    StructuredSVM,
    make_chain,
)
from frankwolfe.applications.structured_svm.model_io import FORMAT_VERSION, ModelFileError


@pytest.fixture(autouse=True)
def quiet():
    with fw.debug(False), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


@pytest.fixture(scope="module")
def data():
    X, Y = make_chain(80, n_states=3, n_features=5, noise=1.0, random_state=2)
    return X[:60], Y[:60], X[60:], Y[60:]


def _fit(X, Y, **kw):
    kw = {"lam": 0.05, "tol": 1e-3, "max_passes": 40, "gap_every": 4, "averaging": False,
          "random_state": 0, "warm_start": True, **kw}
    return StructuredSVM(ChainModel(3, 5), **kw).fit(X, Y)


def _members(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _rewrite(path, members, header=None):
    if header is not None:
        head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        members["header"] = head
        members["header_sha256"] = np.frombuffer(hashlib.sha256(head.tobytes()).digest(),
                                                 dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **members)


def test_round_trip_is_bit_identical(data, tmp_path):
    X, Y, Xt, _ = data
    a = _fit(X, Y)
    path = tmp_path / "m.npz"
    a.save(path)
    b = StructuredSVM.load(path)
    assert b.w_.tobytes() == a.w_.tobytes() and b.lam_ == a.lam_
    assert [p.tobytes() for p in b.predict(Xt)] == [p.tobytes() for p in a.predict(Xt)]
    assert b.get_params(deep=False).keys() == a.get_params(deep=False).keys()
    assert {k: v for k, v in b.get_params().items() if k != "model"} == \
        {k: v for k, v in a.get_params().items() if k != "model"}
    assert repr(b.model) == repr(a.model)
    for c in a.history_.columns:
        np.testing.assert_array_equal(b.history_[c], a.history_[c])
        assert b.history_[c].dtype == a.history_[c].dtype, c  # passes stay integers
    assert a.history_["passes"].dtype.kind == "i"
    header = json.loads(_members(path)["header"].tobytes())
    assert header["format_version"] == FORMAT_VERSION
    assert header["library_version"] == fw.__version__
    assert header["model"] == {"class": "ChainModel", "params": {"n_states": 3, "n_features": 5}}
    assert header["state"] is None  # weights only by default


@pytest.mark.parametrize("solver,compiled", [("bcfw", True), ("bcfw", False), ("fw", True)])
def test_state_file_warm_starts_like_the_live_estimator(data, tmp_path, solver, compiled):
    X, Y, _, _ = data
    a = _fit(X, Y, solver=solver, compiled=compiled)
    a.save(tmp_path / "light.npz")
    a.save(tmp_path / "full.npz", include_state=True)
    b = StructuredSVM.load(tmp_path / "full.npz")
    light = StructuredSVM.load(tmp_path / "light.npz")
    a.set_params(lam=0.04).fit(X, Y)
    b.set_params(lam=0.04).fit(X, Y)
    light.set_params(lam=0.04).fit(X, Y)
    # the state round trip is exact: the same passes and the same weights, bit for bit
    assert b.result_.nit == a.result_.nit
    assert b.w_.tobytes() == a.w_.tobytes()
    # without the state the refit starts cold: a different run
    assert light.result_.nit != a.result_.nit or light.w_.tobytes() != a.w_.tobytes()
    assert (tmp_path / "full.npz").stat().st_size > (tmp_path / "light.npz").stat().st_size


def test_tampered_truncated_and_newer_files_are_refused(data, tmp_path):
    X, Y, _, _ = data
    path = tmp_path / "m.npz"
    _fit(X, Y).save(path)
    raw = path.read_bytes()

    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFileError, match="truncated, corrupted"):
        StructuredSVM.load(trunc)

    m = _members(path)
    m["w_"] = m["w_"].copy()
    m["w_"][3] += 1.0
    tampered = tmp_path / "tampered.npz"
    _rewrite(tampered, m)
    with pytest.raises(ModelFileError, match="'w_' does not match its sha256"):
        StructuredSVM.load(tampered)

    m = _members(path)
    header = json.loads(m["header"].tobytes())
    header["fitted"]["lam_"] = 1.0
    m["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    _rewrite(tampered, m)  # header edited, its checksum left as it was
    with pytest.raises(ModelFileError, match="header does not match its checksum"):
        StructuredSVM.load(tampered)

    header["format_version"] = FORMAT_VERSION + 1
    header["library_version"] = "9.0"
    newer = tmp_path / "newer.npz"
    _rewrite(newer, _members(path), header)
    with pytest.raises(ModelFileError, match=r"format version 2 written by frankwolfe 9.0.*"
                                             r"reads format versions <= 1: upgrade"):
        StructuredSVM.load(newer)

    m = _members(path)
    m["evil"] = np.array([object()], dtype=object)
    evil = tmp_path / "evil.npz"
    with open(evil, "wb") as fh:
        np.savez(fh, **m)  # an object array can only be read by unpickling: refused
    with pytest.raises(ModelFileError, match="not a readable model file"):
        StructuredSVM.load(evil)


class _Tiny(StructuredModel):
    """A user model: multiclass with a scale parameter."""

    def __init__(self, scale: float = 1.0):
        self.scale = scale
        self.inner = MulticlassModel(2, 2)
        self.size_joint_feature = self.inner.size_joint_feature

    def joint_feature(self, x, y):
        return self.scale * np.asarray(self.inner.joint_feature(x, y))

    def loss(self, y_true, y):
        return self.inner.loss(y_true, y)

    def loss_augmented_decode(self, x, y_true, w):
        return self.inner.loss_augmented_decode(x, y_true, self.scale * w)

    def decode(self, x, w):
        return self.inner.decode(x, self.scale * w)


class _Described(_Tiny):
    def model_params(self):
        return {"scale": self.scale}


def test_user_models_need_a_description(tmp_path):
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(20, 2)))
    Y = [int(x[0] > 0) for x in X]
    svm = StructuredSVM(_Tiny(2.0), lam=0.1, max_passes=5, random_state=0).fit(X, Y)
    with pytest.raises(TypeError, match=r"implement _Tiny.model_params\(\).*models=\[_Tiny\]"):
        svm.save(tmp_path / "t.npz")
    svm = StructuredSVM(_Described(2.0), lam=0.1, max_passes=5, random_state=0).fit(X, Y)
    svm.save(tmp_path / "d.npz")
    with pytest.raises(ModelFileError, match=r"'_Described' is not a built-in model.*"
                                             r"models=\[_Described\]"):
        StructuredSVM.load(tmp_path / "d.npz")
    back = StructuredSVM.load(tmp_path / "d.npz", models=[_Described])
    assert back.model.scale == 2.0 and back.predict(X) == svm.predict(X)


def test_parameters_set_after_the_fit_save_what_loads(data, tmp_path):
    X, Y = data[:2]
    svm = _fit(X, Y, max_passes=30, eval_every=1, tol=1e-12)
    rows = len(svm.history_)
    assert rows > 5
    # max_passes lowered for the next warm fit: the fit's history still loads
    svm.set_params(max_passes=1)
    svm.save(tmp_path / "m.npz")
    back = StructuredSVM.load(tmp_path / "m.npz")
    assert len(back.history_) == rows and back.max_passes == 1
    assert np.array_equal(back.w_, svm.w_)
    # a lam that does not give the fit's lam_ is refused before writing (load would refuse)
    svm.set_params(lam=0.01)
    with pytest.raises(ValueError, match=r"lam=0.01 was set after the fit: it gives "
                                         r"lam_=0.01, the fit used lam_=0.05"):
        svm.save(tmp_path / "other.npz")
    assert not (tmp_path / "other.npz").exists()


@pytest.mark.parametrize("seed", [np.random.RandomState(0), np.random.SeedSequence(0),
                                  np.random.PCG64(0), [1, 2], np.random.default_rng(0)])
def test_every_random_state_form_fits_saves_and_loads(data, tmp_path, seed):
    X, Y = data[:2]
    svm = _fit(X, Y, random_state=seed, max_passes=3)
    stored = isinstance(seed, (list, np.random.SeedSequence))
    if stored:  # written as it is
        svm.save(tmp_path / "m.npz")
    else:  # a generator's state is not written: null, with a warning
        with pytest.warns(UserWarning, match="random_state"):
            svm.save(tmp_path / "m.npz")
    back = StructuredSVM.load(tmp_path / "m.npz")
    assert np.array_equal(back.w_, svm.w_)
    if isinstance(seed, np.random.SeedSequence):  # the same draws again
        assert isinstance(back.random_state, np.random.SeedSequence)
        assert np.array_equal(back.random_state.generate_state(4), seed.generate_state(4))
    else:
        assert back.random_state == ([1, 2] if stored else None)


def test_a_missing_folder_is_named(data, tmp_path):
    svm = _fit(*data[:2], max_passes=2)
    with pytest.raises(FileNotFoundError, match=r"the folder '.*nodir' does not exist"):
        svm.save(tmp_path / "nodir" / "m.npz")


def test_matching_model_is_described():
    from frankwolfe.applications.structured_svm.model_io import model_params

    m = MatchingModel(4, precision_cost=0.5, perfect=True)
    assert MatchingModel(**model_params(m)).__dict__ == m.__dict__


def test_ocr_model_file_is_small(shared_data, tmp_path):
    from frankwolfe.applications.structured_svm import load_ocr

    X, Y, _, _ = load_ocr("ocr", data_home=shared_data)
    svm = StructuredSVM(ChainModel(26, 129), max_passes=2, random_state=0).fit(X, Y)
    svm.save(tmp_path / "ocr.npz")
    assert (tmp_path / "ocr.npz").stat().st_size <= 100_000
    back = StructuredSVM.load(tmp_path / "ocr.npz")
    assert [p.tobytes() for p in back.predict(X[:50])] == [p.tobytes() for p in svm.predict(X[:50])]


def test_client_is_no_parameter_and_a_file_listing_it_is_refused(data, tmp_path):
    """``client`` (an alias of ``executor``) went, without an alias (the package was never
    released): the estimator refuses it, and a file that lists it is refused by name."""
    from sklearn.base import clone

    X, Y = data[:2]
    svm = _fit(X, Y, max_passes=3)
    assert "client" not in svm.get_params() and "executor" in svm.get_params()
    assert clone(svm).get_params(deep=False).keys() == svm.get_params(deep=False).keys()
    with pytest.raises(TypeError, match="client"):
        StructuredSVM(ChainModel(3, 5), client=None)
    path = tmp_path / "m.npz"
    svm.save(path)
    header = json.loads(_members(path)["header"].tobytes())
    assert "client" not in header["estimator"]["params"]
    header["estimator"]["params"]["client"] = None
    old = tmp_path / "old.npz"
    _rewrite(old, _members(path), header)
    with pytest.raises(ModelFileError, match="estimator.params: TypeError: .*client"):
        StructuredSVM.load(old)


def test_a_model_fitted_with_an_executor_saves_it_as_null_and_loads(data, tmp_path):
    """``executor`` holds a live object (threads, a Dask client): the file writes null,
    as for a Generator ``random_state``, and the loaded model predicts identically."""
    X, Y, Xt, _ = data
    svm = _fit(X, Y, max_passes=4, batch_size=8, executor=fw.ThreadExecutor(2))
    path = tmp_path / "m.npz"
    svm.save(path)
    header = json.loads(_members(path)["header"].tobytes())
    assert header["estimator"]["params"]["executor"] is None
    assert header["estimator"]["params"]["batch_size"] == 8
    back = StructuredSVM.load(path)
    assert back.executor is None and back.batch_size == 8
    assert back.w_.tobytes() == svm.w_.tobytes()
    assert [p.tobytes() for p in back.predict(Xt)] == [p.tobytes() for p in svm.predict(Xt)]
    # staleness without batch_size rode on the executor: without it the parameters would
    # not load, so save refuses and says what to set, writing nothing
    stale = _fit(X, Y, max_passes=2, staleness=1, executor=fw.ThreadExecutor(2))
    with pytest.raises(ValueError, match=r"executor=.*ThreadExecutor.* is saved as null .*"
                                         r"staleness=1.*set batch_size=1"):
        stale.save(tmp_path / "stale.npz")
    assert not (tmp_path / "stale.npz").exists()
    stale.set_params(batch_size=1)
    stale.save(tmp_path / "stale.npz")
    again = StructuredSVM.load(tmp_path / "stale.npz")
    assert [p.tobytes() for p in again.predict(Xt)] == [p.tobytes() for p in stale.predict(Xt)]

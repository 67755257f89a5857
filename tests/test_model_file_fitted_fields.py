"""A model file gives back the fit's n_train_ and lam_."""
import numpy as np

from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM


def test_round_trip_keeps_n_train_and_lam(tmp_path):
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(7, 3)))
    Y = [int(v) for v in rng.integers(0, 2, size=7)]
    for lam in (None, 0.3):
        est = StructuredSVM(MulticlassModel(2, 3), lam=lam, max_passes=3, tol=0.0).fit(X, Y)
        est.save(tmp_path / "m.npz")
        back = StructuredSVM.load(tmp_path / "m.npz")
        assert back.n_train_ == len(X)
        assert back.lam_ == (1.0 / len(X) if lam is None else lam)

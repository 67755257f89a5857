"""A model file's member checksums cover each member's dtype and shape, not only its
bytes (belongs with tests/test_model_files.py).  A state member rewritten as the same
bytes read as another dtype, or in another shape, must be refused: only the header's
digests can tell (state members are read with any dtype and shape)."""

import io
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain
from frankwolfe.applications.structured_svm.model_io import ModelFileError


def _rewrite(src, dst, name, change):
    """Copy the .npz ``src`` to ``dst`` with member ``name`` replaced by ``change(a)``."""
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    a = np.load(io.BytesIO(members[name + ".npy"]), allow_pickle=False)
    buf = io.BytesIO()
    np.save(buf, change(a), allow_pickle=False)
    members[name + ".npy"] = buf.getvalue()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in members.items():
            z.writestr(n, data)


def test_a_state_member_reinterpreted_or_reshaped_is_refused(tmp_path):
    X, Y = make_chain(40, n_states=3, n_features=5, noise=1.0, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = StructuredSVM(ChainModel(3, 5), lam=0.05, max_passes=8, gap_every=4,
                            random_state=0, warm_start=True).fit(X, Y)
    path = tmp_path / "full.npz"
    est.save(path, include_state=True)
    StructuredSVM.load(path)  # the untouched file loads
    with zipfile.ZipFile(path) as z:
        state = sorted(n[:-4] for n in z.namelist() if n.startswith("state/"))
    name = next(n for n in state
                if np.load(io.BytesIO(zipfile.ZipFile(path).read(n + ".npy"))).size > 1
                and np.load(io.BytesIO(zipfile.ZipFile(path).read(n + ".npy"))).itemsize == 8)
    other = {"f": np.int64, "i": np.float64, "u": np.float64}
    for tag, change in (("dtype", lambda a: a.view(other[a.dtype.kind])),
                        ("shape", lambda a: a.reshape(-1, 1) if a.ndim == 1 else a.ravel())):
        bad = tmp_path / f"{tag}.npz"
        _rewrite(path, bad, name, change)
        with pytest.raises(ModelFileError, match="sha256"):
            StructuredSVM.load(bad)

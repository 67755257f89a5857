"""The SSVM dual's batch block oracle (chain models): the same atoms as the blocks asked
one by one, hence the same mini-batch iterates, serial or on threads."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe import block_coordinate_frank_wolfe
from frankwolfe.applications.structured_svm import ChainModel
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.errors import OracleError

from test_bcfw_fused import _chain  # 25 chains, dense features or attribute ids


class _Counted(SSVMDual):
    """Counts the examples its batch oracle answers."""

    asked = 0

    def batch_block_oracle(self):
        inner = super().batch_block_oracle()

        def oracle(which, gradient):
            type(self).asked += len(which)
            return inner(which, gradient)

        return oracle


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("gl", [-1.0, -0.3, 0.0])
def test_batch_oracle_atoms_equal_the_blocks_atoms(ids, gl):
    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    oracle = dom.batch_block_oracle()
    g = np.random.default_rng(0).normal(size=dom.dim)
    g[-1] = gl
    which = [7, 0, 24, 3, 3]
    atoms = oracle(which, g)
    assert len(atoms) == len(which)
    for i, a in zip(which, atoms):
        ref = dom.blocks[i](g[dom.block_indices[i]])
        assert a.key == ref.key and a.shape == ref.shape
        np.testing.assert_array_equal(a.indices, ref.indices)
        np.testing.assert_array_equal(a.values, ref.values)
    g[-1] = 0.5
    with pytest.raises(OracleError, match="l-component"):
        oracle([0], g)


def test_batch_oracle_only_for_the_compiled_chain_model():
    model, X, Y = _chain(True)
    assert SSVMDual(model, X, Y, 0.1, compiled=False).batch_block_oracle() is None

    class Other(ChainModel):  # overrides a decoder: the kernels do not reproduce it
        def decode(self, x, w):
            return super().decode(x, w)

    assert SSVMDual(Other(4, [5, 5, 5]), X, Y, 0.1).batch_block_oracle() is None


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_mini_batch_iterates_with_and_without_the_batch_oracle(ids, sampling):
    model, X, Y = _chain(ids)
    lam = 0.05
    kw = dict(batch_size=8, sampling=sampling, max_iter=4, tol=0.0, gap_every=2,
              random_state=2)
    runs = {}
    for name, dom, n_jobs in (("blocks", SSVMDual(model, X, Y, lam, compiled=False), 1),
                              ("serial", _Counted(model, X, Y, lam), 1),
                              ("threads", _Counted(model, X, Y, lam), 2)):
        _Counted.asked = 0
        f = dom.dual_objective()
        runs[name] = block_coordinate_frank_wolfe(f, dom, n_jobs=n_jobs, **kw)
        # every oracle of the rounds and of the certificates went through the batch oracle
        assert _Counted.asked == (0 if name == "blocks" else runs[name].n_oracle_calls)
    ref = runs["blocks"]
    assert ref.n_oracle_calls >= 4 * len(X)
    for name in ("serial", "threads"):
        np.testing.assert_array_equal(runs[name].x, ref.x)
        np.testing.assert_array_equal(runs[name].history["gap"], ref.history["gap"])
        assert runs[name].extra["rounds"] == ref.extra["rounds"]

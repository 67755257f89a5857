"""An executor reused for a second run (start again) answers with that run's blocks,
not with the batch oracle of the previous run.  Belongs in tests/test_bcfw_minibatch.py
(or tests/test_edges_inputs.py); the answer is each block's vertex in closed form
(the probability simplex: e_argmin)."""

import numpy as np
import pytest

from frankwolfe import Atom, ProbabilitySimplex
from frankwolfe.parallel.base import SerialExecutor
from frankwolfe.parallel.threads import ThreadExecutor


@pytest.mark.parametrize("make", [SerialExecutor, lambda: ThreadExecutor(2)])
def test_restart_drops_the_old_batch_oracle(make):
    ex = make()
    n_blocks, m = 3, 4
    idx = [np.arange(i * m, (i + 1) * m) for i in range(n_blocks)]
    shapes = [(m,)] * n_blocks

    def stale(which, g):  # run 1's batch oracle: answers the zero vector for every block
        return [Atom(np.zeros(m), key=("stale", i)) for i in which]

    ex.start([ProbabilitySimplex(dim=m)] * n_blocks, idx, shapes)
    ex.use_batch_oracle(stale)
    # run 2: the same executor, no batch oracle this time
    ex.start([ProbabilitySimplex(dim=m)] * n_blocks, idx, shapes)
    g = np.random.default_rng(0).standard_normal(n_blocks * m)
    atoms = ex.map_gradient([0, 1, 2], g)
    for i, a in zip([0, 1, 2], atoms):
        np.testing.assert_array_equal(a.to_dense(), np.eye(m)[int(np.argmin(g[idx[i]]))])
    ex.close()

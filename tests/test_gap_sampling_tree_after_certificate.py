"""After a certificate of the last iterate every block-gap estimate is replaced by the
exact block gap, and gap sampling's sum tree must hold those gaps (leaves = gaps ** degree,
root = their sum), else the draws after a certificate follow stale weights.  The exact
gaps are recomputed by hand on the simplices."""
import numpy as np
import pytest

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.algorithms.block_orders import GapSampling


@pytest.mark.parametrize("compiled", [False, None])
def test_sum_tree_holds_the_certified_block_gaps(compiled):
    rng = np.random.default_rng(5)
    n, m = 9, 3
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    f = QuadraticObjective(Q, -Q @ y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    order = GapSampling(degree=2.0)
    res = block_coordinate_frank_wolfe(f, dom, block_order=order, step_size="exact",
                                       tol=0.0, max_iter=3, gap_every=1, random_state=0,
                                       compiled=compiled)
    x = res.extra["x_last"]
    G = (Q @ x + f.c).reshape(n, m)
    gaps = np.maximum((G * x.reshape(n, m)).sum(axis=1) - G.min(axis=1), 0.0)
    leaves = order.tree[order.size:order.size + n]
    np.testing.assert_allclose(leaves, gaps ** 2, rtol=1e-9, atol=1e-14)
    assert order.tree[1] == pytest.approx(float((gaps ** 2).sum()), rel=1e-9, abs=1e-14)

"""Block-gap bookkeeping of BCFW on products of simplices, against gaps recomputed by hand
(gradient ``Q x + c``, block gap ``<g_i, x_i> - min_j g_ij``):

* gapBCFW's oracle cache takes a stored atom only when its block gap reaches the threshold
  max(cache_factor * estimate_i, cache_nu * G / n).  In the first pass every block's
  estimate is +inf (unvisited) and the only stored atom of each block is its start vertex,
  the block iterate itself (gap exactly 0): no step can be a cache hit.
* The history column ``gap_estimate`` is the sum of the block-gap estimates; right after a
  certificate of the last iterate they are the exact block gaps, whose sum is the
  certified gap.
* After such a certificate gap sampling's sum tree holds those gaps (leaves = gaps **
  degree, root = their sum), else the draws after a certificate follow stale weights."""
import numpy as np
import pytest

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.algorithms.block_orders import GapSampling


def _simplices_qp(seed: int, n: int, m: int):
    """A strongly convex QP over n simplices of dimension m, its optimum inside."""
    rng = np.random.default_rng(seed)
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    f = QuadraticObjective(Q, -Q @ y)
    return f, Q, ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])


def _block_gaps(Q, f, x, n, m):
    G = (Q @ x + f.c).reshape(n, m)
    return (G * x.reshape(n, m)).sum(axis=1) - G.min(axis=1)


def test_first_pass_has_no_cache_hits():
    n, m = 10, 4
    f, _, dom = _simplices_qp(0, n, m)
    x0 = np.concatenate([np.eye(m)[0]] * n)
    res = block_coordinate_frank_wolfe(f, dom, x0.copy(), cache=True, compiled=False,
                                       block_order="perm", step_size="exact", tol=0.0,
                                       max_iter=1, gap_every=1, random_state=1)
    assert res.extra["cache_hits"] == 0
    assert res.extra["cache_misses"] == n
    assert f.value(res.extra["x_last"]) < f.value(x0) - 1e-6


def test_gap_estimate_after_a_certificate_is_the_sum_of_block_gaps():
    n, m = 8, 3
    f, Q, dom = _simplices_qp(3, n, m)
    res = block_coordinate_frank_wolfe(f, dom, block_order="perm", step_size="exact",
                                       tol=0.0, max_iter=3, gap_every=1, random_state=0)
    gaps = _block_gaps(Q, f, res.extra["x_last"], n, m)
    est = res.history["gap_estimate"][-1]
    assert np.isclose(est, np.maximum(gaps, 0).sum(), rtol=1e-9, atol=1e-12)
    assert np.isclose(res.history["gap"][-1], gaps.sum(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("compiled", [False, None])
def test_sum_tree_holds_the_certified_block_gaps(compiled):
    n, m = 9, 3
    f, Q, dom = _simplices_qp(5, n, m)
    order = GapSampling(degree=2.0)
    res = block_coordinate_frank_wolfe(f, dom, block_order=order, step_size="exact",
                                       tol=0.0, max_iter=3, gap_every=1, random_state=0,
                                       compiled=compiled)
    gaps = np.maximum(_block_gaps(Q, f, res.extra["x_last"], n, m), 0.0)
    leaves = order.tree[order.size:order.size + n]
    np.testing.assert_allclose(leaves, gaps ** 2, rtol=1e-9, atol=1e-14)
    assert order.tree[1] == pytest.approx(float((gaps ** 2).sum()), rel=1e-9, abs=1e-14)

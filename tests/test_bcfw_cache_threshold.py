"""gapBCFW's oracle cache takes a stored atom only when its block gap reaches the
threshold max(cache_factor * estimate_i, cache_nu * G / n).

In the first pass every block's estimate is +inf (unvisited) and the only stored atom of
each block is its start vertex, the block iterate itself (gap exactly 0): no step can be
a cache hit, every step asks the oracle, and the pass makes progress."""
import numpy as np

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)


def test_first_pass_has_no_cache_hits():
    rng = np.random.default_rng(0)
    n, m = 10, 4
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    f = QuadraticObjective(Q, -Q @ y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    x0 = np.concatenate([np.eye(m)[0]] * n)
    res = block_coordinate_frank_wolfe(f, dom, x0.copy(), cache=True, compiled=False,
                                       block_order="perm", step_size="exact", tol=0.0,
                                       max_iter=1, gap_every=1, random_state=1)
    assert res.extra["cache_hits"] == 0
    assert res.extra["cache_misses"] == n
    assert f.value(res.extra["x_last"]) < f.value(x0) - 1e-6

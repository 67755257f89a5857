"""``block_order="perm"`` visits every block exactly once per pass (a fresh random
permutation).  From a start vertex that is no
block's minimizer, one pass of exact block steps must move every block; uniform sampling
with replacement would leave about n/e blocks unvisited."""
import numpy as np
import pytest

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)


@pytest.mark.parametrize("compiled", [False, None])
def test_one_perm_pass_moves_every_block(compiled):
    n, m = 40, 3
    # separable: block i's minimizer is y_i, in the simplex's interior
    y = np.tile([0.2, 0.3, 0.5], n)
    f = QuadraticObjective(np.eye(n * m), -y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    x0 = np.tile([1.0, 0.0, 0.0], n)
    res = block_coordinate_frank_wolfe(f, dom, x0.copy(), block_order="perm",
                                       step_size="exact", tol=0.0, max_iter=1,
                                       compiled=compiled, random_state=7)
    moved = np.abs(res.extra["x_last"] - x0).reshape(n, m).max(axis=1) > 0
    assert moved.all(), f"blocks never visited: {np.flatnonzero(~moved)}"
    assert res.extra["n_block_steps"] == n

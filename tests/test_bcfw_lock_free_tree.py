"""Gap sampling under lock-free passes: the threads' steps write the block-gap estimates
but not the sum tree (their picks are the pass's draws, made at its start), so after each
pass the tree is rebuilt from the estimates; otherwise the next pass would draw from the
weights of the last certificate (or, before one, draw uniformly from a tree of zeros).

Checked against a sum tree built by numpy from the estimates (leaves ``max(est, 0) **
degree``, +inf for an unvisited block counting 0; each node the sum of its children),
seen by a callback after every pass, with no certificate between the passes."""
from __future__ import annotations

import numpy as np
import pytest
from test_bcfw_fused import _chain

import frankwolfe as fw
from frankwolfe.applications.structured_svm import SSVMDual


def _numpy_tree(est: np.ndarray, size: int, degree: float) -> np.ndarray:
    tree = np.zeros(2 * size)
    w = np.where(np.isfinite(est), np.maximum(est, 0.0), 0.0)
    tree[size:size + est.size] = w ** degree
    for j in range(size - 1, 0, -1):
        tree[j] = tree[2 * j] + tree[2 * j + 1]
    return tree


@pytest.mark.parametrize("n_jobs, degree", [(1, 1.0), (2, 2.0)])
def test_the_sum_tree_follows_the_estimates_after_every_lock_free_pass(n_jobs, degree):
    model, X, Y = _chain(False)
    dom = SSVMDual(model, X, Y, 0.05)
    order = fw.GapSampling(degree=degree)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def look(state):
        seen.append((order.est.copy(), order.tree.copy()))

    with fw.debug(False):
        res = fw.block_coordinate_frank_wolfe(dom.dual_objective(), dom,
                                              round_step="lock_free", n_jobs=n_jobs,
                                              block_order=order, max_iter=4, tol=0.0,
                                              gap_every=100, random_state=0, callback=look)
    assert res.extra["round_step"] == "lock_free"
    # no certificate before the closing one: the tree is the passes' own doing
    assert not np.any(np.isfinite(res.history["gap"][:-1]))
    assert len(seen) >= 4  # the start and a row after each pass
    for p, (est, tree) in enumerate(seen[1:], start=1):
        assert np.all(np.isfinite(est)) and est.max() > 0, p  # every block visited
        np.testing.assert_allclose(tree, _numpy_tree(est, order.size, degree), rtol=1e-12,
                                   atol=0, err_msg=f"after pass {p}")

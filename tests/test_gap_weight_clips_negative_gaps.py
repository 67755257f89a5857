"""Gap sampling weights max(g, 0) ** degree: a block whose gap estimate is negative (a
rounding-level certificate) is never drawn while another has weight.  Belongs in
tests/test_block_orders.py; the answer is the closed form."""

import numpy as np
import pytest

from frankwolfe.compiled.sum_tree import gap_pick, gap_weight, tree_set


@pytest.mark.parametrize("degree", [0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("g", [-1e-17, -0.5, -3.0, 0.0, 0.25, 2.0])
def test_weight_is_the_clipped_power(g, degree):
    assert gap_weight(g, degree) == pytest.approx(max(g, 0.0) ** degree, abs=0.0, rel=1e-15)


@pytest.mark.parametrize("degree", [1.0, 2.0])
def test_negative_gap_block_is_never_drawn(degree):
    est = np.array([1.0, -0.5, 2.0, -1e-3])
    n, size = est.size, 4
    tree = np.zeros(2 * size)
    for i, g in enumerate(est):
        tree_set(tree, size, i, gap_weight(g, degree))
    nextu = np.array([n], dtype=np.int64)  # every block visited
    w = np.maximum(est, 0.0) ** degree
    for u in np.linspace(0.0, 0.999999, 2001):
        i = gap_pick(tree, size, est, nextu, u, n)
        assert w[i] > 0.0

"""The block step of the core's one compiled driver is a compile-time option."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from frankwolfe import QuadraticObjective
from frankwolfe.algorithms.working_set import working_set_blocks
from frankwolfe.compiled import compiled_driver
from frankwolfe.step_size import ExactStep


def test_pairwise_steps_with_fused_directions_are_refused_by_name():
    table = (np.array([0, 1, 2], dtype=np.int64), np.array([0, 1], dtype=np.int64),
             np.ones(2))
    dk, pair = working_set_blocks(*table, np.arange(2, dtype=np.int64),
                                  np.array([0, 2], dtype=np.int64), np.array([1.0, 0.0]), 2)
    okern = QuadraticObjective(sp.eye(2, format="csr"), np.zeros(2)).compiled_block_objective()
    with pytest.raises(ValueError, match="`pairwise` only with fused=False"):
        compiled_driver(dk, okern, ExactStep().compiled()[0], fused=True, pairwise=pair)


def test_an_inner_kernel_serves_numba_code_and_refuses_python_by_name():
    """A kernel compiled without entry points for Python (inner_kernel) is called by
    compiled code; a call from Python is a TypeError naming it, not a crash."""
    from numba import njit

    from frankwolfe.compiled import inner_kernel

    @inner_kernel
    def _scaled(a, s):
        return s * a

    @njit
    def caller(x):
        return _scaled(x.sum(), 3.0)

    assert caller(np.arange(4.0)) == 18.0
    with pytest.raises(TypeError, match="_scaled is an inner kernel"):
        _scaled(1.0, 2.0)


def test_a_driver_without_gap_sampling_takes_the_same_steps_and_keeps_no_sum_tree():
    """``gap=False`` (a uniform or permutation order) compiles the driver without the sum
    tree: the same steps as the driver with it, and a round's picker of mode 2 (keep the
    tree current) leaves the tree alone; ``gap=True`` writes each block's new gap
    estimate into its leaf."""
    from frankwolfe.compiled import PASS, Picker, structured_direction

    rng = np.random.default_rng(4)
    n, k = 5, 6
    dense = rng.random((k, n))
    cols = np.tile(np.arange(n, dtype=np.int64), k)
    table = (np.arange(0, k * n + 1, n, dtype=np.int64), cols, dense.ravel().copy())
    okern = QuadraticObjective(sp.eye(n, format="csr"), -np.ones(n)).compiled_block_objective()
    rule, rparams = ExactStep().compiled()
    runs = {}
    for gap in (True, False):
        w = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
        dk, _ = working_set_blocks(*table, np.arange(k, dtype=np.int64),
                                   np.array([0, 2, 4, 6], dtype=np.int64), w, n)
        run_pass = compiled_driver(dk, okern, rule, gap=gap)
        x = dense[[0, 2, 4]].sum(axis=0)
        g = x - 1.0
        est, tree = np.zeros(3), np.zeros(8)
        picker = Picker(2, np.array([2, 0, 1], dtype=np.int64), np.zeros(0), est, tree, 4,
                        1.0, np.zeros(1, dtype=np.int64))
        run_pass(0, 3, picker, dk.state, okern.data, np.zeros(0), x, g, rparams, 0, 3, 0,
                 np.zeros(0), np.zeros(0, dtype=np.int64), 0, False,
                 np.empty(dk.max_nnz, dtype=np.int64), np.empty(dk.max_nnz),
                 structured_direction(0, 0, 0, np.zeros((0, 0))), PASS)
        runs[gap] = (x, w, est, tree)
    (x1, w1, est1, tree1), (x0, w0, est0, tree0) = runs[True], runs[False]
    np.testing.assert_array_equal(x0, x1)
    np.testing.assert_array_equal(w0, w1)
    np.testing.assert_array_equal(est0, est1)
    assert est1.sum() > 0.0  # some block had a positive gap: its leaf is set
    np.testing.assert_allclose(tree1[4:7], est1, rtol=0, atol=0)
    assert tree1[1] == tree1[2] + tree1[3] and tree1[1] > 0.0
    assert not tree0.any()

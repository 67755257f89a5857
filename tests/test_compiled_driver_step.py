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


def test_resident_kernels_name_the_kernels_a_domain_lacks():
    """The halves of a joint round for blocks kept on workers need the fused kernels
    and the round kernels' load / recall_gap / moved_at: a domain without them is
    refused by name, before anything compiles."""
    from frankwolfe.compiled import resident_kernels

    dk, _ = working_set_blocks(np.array([0, 1, 2], dtype=np.int64),
                               np.array([0, 1], dtype=np.int64), np.ones(2),
                               np.arange(2, dtype=np.int64), np.array([0, 2], dtype=np.int64),
                               np.array([1.0, 0.0]), 2)
    with pytest.raises(ValueError, match=r"resident_kernels: the domain's compiled blocks "
                                         r"lack .*CompiledBlocks\.rounds, RoundKernels\.load"):
        resident_kernels(dk)

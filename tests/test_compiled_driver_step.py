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

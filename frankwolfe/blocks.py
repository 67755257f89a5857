"""Former home of the block-coordinate machinery (kept for imports; will go).

The pieces now live in :mod:`frankwolfe.algorithms`: block orders
(:mod:`~frankwolfe.algorithms.block_orders`), block steps
(:mod:`~frankwolfe.algorithms.block_steps`), the per-block store and lazy
average (:mod:`~frankwolfe.algorithms.block_store`) and the compiled
protocol with its driver (:mod:`~frankwolfe.algorithms.compiled_blocks`);
the quadratic kernels in :mod:`frankwolfe.objectives.quadratic_kernels`.
"""

from __future__ import annotations

import numpy as np

from .algorithms.block_orders import GapSampling, MaxGap
from .algorithms.block_store import BlockAtomStore, LazyAverage
from .algorithms.compiled_blocks import (CompiledBlocks, CompiledObjective, average_touch,
                                         compiled_driver, fused_driver, simplex_blocks)
from .objectives.quadratic_kernels import (csr_block_quad, csr_rows_dot, diag_quadratic_line,
                                           diag_quadratic_update)

__all__ = ["BlockAtomStore", "GapSampler", "LazyAverage", "CompiledBlocks", "CompiledObjective",
           "compiled_driver", "fused_driver", "average_touch", "diag_quadratic_line",
           "diag_quadratic_update", "csr_block_quad", "csr_rows_dot", "simplex_blocks"]


def GapSampler(estimates: np.ndarray, degree: float = 1.0,
               greedy: bool = False) -> GapSampling | MaxGap:
    """A started :class:`~frankwolfe.algorithms.block_orders.GapSampling` (or
    :class:`~frankwolfe.algorithms.block_orders.MaxGap` when ``greedy``) over
    ``estimates``."""
    order = MaxGap() if greedy else GapSampling(degree)
    order.start(estimates)
    return order

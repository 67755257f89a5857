"""The ground floor of compiled block passes: what extensions implement, and the driver.

Small blocks spend more time in the Python of a block step (oracle call, Atom, a dozen
small numpy calls) than in its O(|block|) arithmetic, so whole passes can run in numba.
The algorithm stays in the core: a domain and an objective that opt in describe
themselves through the protocol records of :mod:`.protocol` (:class:`CompiledBlocks`,
:class:`PairwiseKernels`, :class:`RoundKernels`, :class:`CompiledObjective`,
:class:`BlockDomainHooks`; a separable objective gives one per-coordinate kernel and
:mod:`.separable` builds the rest, its exact line search included), and the one driver
of :mod:`.driver` (the pass loop of ``_pass_template``) compiles them into a pass; for
blocks kept on cluster workers it compiles the halves of its joint round
(:func:`.driver.resident_kernels`).  The typed records the driver hands to
numba live beside the kernels that read them: the lazy average (:mod:`.average`), the
structured direction (:mod:`.structured`) and the block picker with the sum tree of gap
sampling (:mod:`.sum_tree`), and the record of the coordinates the steps of mini-batch
rounds touch (:mod:`.touched`); lock-free passes add an atomic add (:mod:`.atomic`) and
the fold of their threads' shares of ``x`` (:mod:`.shares`); the driver's own state
crosses in the records of :mod:`.pass_state`.  :mod:`.simplex` holds the
built-in blocks of a product of simplices; kernels that only other kernels call take
:func:`~.inner.inner_kernel` (no entry points for Python: a first call compiles less),
and records that kernels take by reference have types based on
:class:`~.records.RecordRefType`.

This package imports nothing from the rest of :mod:`frankwolfe`: objectives, domains and
methods build on it.
"""

from .average import Average, AverageState, average_touch
from .driver import (
    CERTIFY,
    CERTIFY_REFRESH,
    PASS,
    ResidentKernels,
    compiled_driver,
    fused_driver,
    resident_kernels,
)
from .inner import inner_kernel
from .pass_state import PassData, PassExtras, PassVectors, StepScratch
from .protocol import (
    BlockDomainHooks,
    CompiledBlocks,
    CompiledObjective,
    PairwiseKernels,
    RoundKernels,
)
from .records import RecordRefType
from .separable import SeparableKernels, separable_kernels, separable_objective, separable_step
from .simplex import SimplexState, simplex_blocks
from .structured import StructuredDirection, apply_direction, structured_direction
from .sum_tree import Picker, gap_pick, gap_weight, order_picker, tree_set
from .touched import Delta, Snapshots, Touched, TouchLog

__all__ = ["CompiledBlocks", "CompiledObjective", "BlockDomainHooks", "PairwiseKernels",
           "RoundKernels", "Average", "Picker", "order_picker",
           "StructuredDirection", "SimplexState",
           "structured_direction", "apply_direction", "average_touch", "compiled_driver",
           "PASS", "CERTIFY", "CERTIFY_REFRESH", "fused_driver", "simplex_blocks", "gap_pick",
           "gap_weight", "tree_set", "inner_kernel", "RecordRefType",
           "SeparableKernels", "separable_kernels", "separable_objective", "separable_step",
           "Delta", "Snapshots", "TouchLog", "Touched", "ResidentKernels", "resident_kernels",
           "AverageState", "PassData", "PassVectors", "StepScratch", "PassExtras"]

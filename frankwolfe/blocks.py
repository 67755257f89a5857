"""Former home of the block-coordinate machinery (deprecated; will go next release).

The pieces now live in :mod:`frankwolfe.algorithms`: block orders
(:mod:`~frankwolfe.algorithms.block_orders`), block steps
(:mod:`~frankwolfe.algorithms.block_steps`), the per-block store and lazy
average (:mod:`~frankwolfe.algorithms.bcfw.store`) and the compiled
protocol with its driver (:mod:`~frankwolfe.algorithms.compiled_blocks`);
the quadratic kernels in :mod:`frankwolfe.objectives.quadratic_kernels`.
Importing a name from here still works for one release, with a
:class:`DeprecationWarning` naming its new module.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np

__all__ = ["BlockAtomStore", "GapSampler", "LazyAverage", "CompiledBlocks", "CompiledObjective",
           "compiled_driver", "fused_driver", "average_touch", "diag_quadratic_line",
           "diag_quadratic_update", "csr_block_quad", "csr_rows_dot", "simplex_blocks"]

#: Where each name lives now (the modules are imported on first use of a name).
_MOVED = {
    "BlockAtomStore": "frankwolfe.algorithms.bcfw.store",
    "LazyAverage": "frankwolfe.algorithms.bcfw.store",
    "CompiledBlocks": "frankwolfe.algorithms.compiled_blocks",
    "CompiledObjective": "frankwolfe.algorithms.compiled_blocks",
    "compiled_driver": "frankwolfe.algorithms.compiled_blocks",
    "fused_driver": "frankwolfe.algorithms.compiled_blocks",
    "average_touch": "frankwolfe.algorithms.compiled_blocks",
    "simplex_blocks": "frankwolfe.algorithms.compiled_blocks",
    "diag_quadratic_line": "frankwolfe.objectives.quadratic_kernels",
    "diag_quadratic_update": "frankwolfe.objectives.quadratic_kernels",
    "csr_block_quad": "frankwolfe.objectives.quadratic_kernels",
    "csr_rows_dot": "frankwolfe.objectives.quadratic_kernels",
    "GapSampler": "frankwolfe.algorithms.block_orders",
}


def _gap_sampler(estimates: np.ndarray, degree: float = 1.0, greedy: bool = False) -> Any:
    """A started ``GapSampling(degree)`` (``MaxGap()`` when ``greedy``) over ``estimates``."""
    from .algorithms.block_orders import GapSampling, MaxGap

    order = MaxGap() if greedy else GapSampling(degree)
    order.start(estimates)
    return order


def __getattr__(name: str) -> Any:
    try:
        module = _MOVED[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    hint = (f"use {module}.GapSampling(degree) (or MaxGap()) and its start(estimates)"
            if name == "GapSampler" else f"import {name} from {module}")
    warnings.warn(f"frankwolfe.blocks is deprecated and will be removed in the next release; "
                  f"{hint}", DeprecationWarning, stacklevel=2)
    if name == "GapSampler":
        return _gap_sampler
    return getattr(importlib.import_module(module), name)

"""The typed records a call of the core's pass driver (``run_pass`` of
``_pass_template``, :func:`~frankwolfe.compiled.driver.compiled_driver`) takes, by what
its state is: the records its kernels read (:class:`PassData`), the vectors its steps
move (:class:`PassVectors`), the scratch of a block step (:class:`StepScratch`), the
lazy average (:class:`~frankwolfe.compiled.average.AverageState`) and what the
driver's options add (:class:`PassExtras`).

Named tuples, as the picker (:class:`~frankwolfe.compiled.Picker`) and the records of
:mod:`.touched`: they cross into numba by value (the driver loads their fields into
locals once, at the top of the call), so a run builds the ones that do not change once
and hands the same ones to every call.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["PassData", "PassVectors", "StepScratch", "PassExtras", "NO_EXTRAS"]


class PassData(NamedTuple):
    """What the kernels of a run read and the steps do not replace: the domain's state
    record ``dstate`` (``CompiledBlocks.state``), the objective's ``odata``
    (``CompiledObjective.data``), the step rule's parameters ``rparams`` (of
    ``StepSize.compiled``) and the number of blocks ``n`` (the step count of a pass)."""

    dstate: Any
    odata: Any
    rparams: Any
    n: int


class PassVectors(NamedTuple):
    """The vectors a pass moves and reads: the iterate ``x`` (or a thread's share of it),
    the tracked gradient ``g`` and the objective's Hessian diagonal ``h`` (fused steps;
    empty otherwise)."""

    x: np.ndarray
    g: np.ndarray
    h: np.ndarray


class StepScratch(NamedTuple):
    """A block step's scratch: the materialized direction's indices ``idx`` and values
    ``val`` (``CompiledBlocks.max_nnz`` long), and the domain's structured direction
    ``sd`` (``CompiledBlocks.layout``, fused steps)."""

    idx: np.ndarray
    val: np.ndarray
    sd: Any


class PassExtras(NamedTuple):
    """What the driver's options add (``None`` where the driver was compiled without
    them): the domain's round ``table`` (``rounds``), the cache's ``cparams``
    (``cache``: ``[cache_factor, cache_nu, G, hits]``, the hits counted by the driver),
    the record ``touched`` of the coordinates the steps write (``rounds``, a
    :class:`~frankwolfe.compiled.touched.Touched`) and the scratch ``joint`` of a joint
    round (``joint``, a :class:`~frankwolfe.compiled.touched.JointScratch`)."""

    table: Any = None
    cparams: np.ndarray | None = None
    touched: Any = None
    joint: Any = None


#: the extras of a driver compiled without rounds or a cache
NO_EXTRAS = PassExtras()

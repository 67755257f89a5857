"""Which pass a BCFW run uses, chosen once, with the one reason ``extra["engine_reason"]``
reports.

The compiled pass runs when the options, the objective and the domain allow it
(see the solver's ``compiled``); mini-batch rounds run compiled when the
domain's compiled kernels offer round kernels and the executor can feed them
(:class:`~frankwolfe.parallel.InProcessRounds`, or
:class:`~frankwolfe.parallel.RowRounds` with a batch oracle that computes table
rows); everything else runs the Python block steps.  This module is the only
place that decides, and it starts the state accordingly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._config import debug_enabled
from ...compiled import (
    BlockDomainHooks,
    CompiledBlocks,
    CompiledObjective,
    RoundKernels,
    fused_driver,
    simplex_blocks,
)
from ...lmo.simplex import ProbabilitySimplex
from ...parallel import InProcessRounds, RowRounds
from ...step_size import ExactStep, StepSize
from ..block_orders import is_stepwise
from ..block_steps import BlockStep, FWStep
from .compiled_pass import CompiledPass, CompiledSteps
from .lock_free import LockFreePass, threads_of
from .passes import Pass
from .python_pass import PythonPass, PythonSteps
from .resident import ResidentRounds
from .resident_lock_free import ResidentLockFree
from .rounds import CompiledRounds, PythonRounds, Schedule
from .state import BlockState

__all__ = ["make_pass"]


@dataclass(frozen=True)
class _Compiled:
    """The kernels of a compiled run (``dkern`` None: the simplex blocks of the Python
    start; ``rounds``: the round kernels of compiled mini-batch rounds)."""

    dkern: CompiledBlocks | None
    okern: CompiledObjective
    rounds: RoundKernels | None = None


def _choose(state: BlockState, x0: Any, *, step: BlockStep, rule: StepSize, cache: bool,
            schedule: Schedule | None, compiled: bool | None) -> tuple[_Compiled | None, str]:
    """The compiled kernels to run on (``None``: the Python steps) and why."""
    if compiled is False:
        return None, "compiled=False"
    dom, order = state.dom, state.order
    hooks = isinstance(dom, BlockDomainHooks)
    ex = schedule.executor if schedule is not None and schedule.wants_rounds else None
    joint = schedule is not None and schedule.joint
    if joint and ex is None:
        return None, ("round_step='joint' with rounds of one block in this process runs "
                      "the Python rounds (the compiled pass takes serial steps)")
    if ex is not None:
        if not isinstance(ex, InProcessRounds) and not (isinstance(ex, RowRounds) and callable(
                getattr(state.batch_oracle(), "rows", None))):
            return None, (f"mini-batch rounds on {ex!r} run in Python (compiled rounds keep "
                          "the vertices in this process, or take them as table rows from "
                          "executors that serve them, for batch block oracles with `rows`)")
        if not hooks:
            return None, ("mini-batch rounds run in Python unless the domain's compiled "
                          "kernels offer round kernels (CompiledBlocks.rounds)")
    if is_stepwise(order) and order.compiled_tree() is None:
        return None, (f"the block order {order!r} picks block by block in Python "
                      "(orders drawing whole passes and gap sampling are compiled)")
    pairwise = bool(step.matches_compiled_pairwise)
    fw = type(step).direction is FWStep.direction
    features = dom.compiled_features if isinstance(dom, BlockDomainHooks) else frozenset()
    if not (fw or (pairwise and "pairwise" in features)) or (cache and "cache" not in features):
        return None, ("away / pairwise (or user) block steps and the cache run in Python "
                      "(unless the domain's compiled kernels serve them: "
                      "BlockDomainHooks.compiled_features)")
    if (cache or not fw) and ex is not None:
        return None, "mini-batch rounds run pairwise block steps and the cache in Python"
    if rule.compiled() is None:
        return None, f"step_size={rule!r} has no compiled form (ExactStep and Agnostic do)"
    if debug_enabled():
        return None, "debug mode checks every oracle answer in Python"
    okern = state.f.compiled_block_objective()
    if okern is None:
        return None, "the objective offers no compiled kernels (compiled_block_objective)"
    if not isinstance(dom, BlockDomainHooks):
        b = state.blocks()
        if not all(type(lmo) is ProbabilitySimplex for lmo in b.lmos):
            return None, ("the domain offers no compiled kernels (BlockDomainHooks) and not "
                          "every block is a ProbabilitySimplex")
        if not all(a.size < 2 or np.all(np.diff(a) > 0) for a in b.idx):
            return None, "block indices are not sorted"
        return _Compiled(None, okern), "compiled pass over probability-simplex blocks"
    dkern = _domain_kernels(dom, x0, state, cache)
    if dkern is None:
        return None, "the domain's compiled_blocks() declined this start point"
    if (pairwise and not fw and dkern.pairwise is None) or (cache and dkern.lookup is None):
        return None, ("the domain's compiled_blocks() gave no kernels for pairwise steps "
                      "or the cache")
    if ex is None:
        return _Compiled(dkern, okern), "compiled pass over the domain's compiled kernels"
    if dkern.rounds is None:
        return None, ("mini-batch rounds run in Python unless the domain's compiled kernels "
                      "offer round kernels (CompiledBlocks.rounds)")
    if not isinstance(ex, InProcessRounds) and dkern.rounds.store is None:
        return None, ("mini-batch rounds outside this process run in Python unless the "
                      "domain's round kernels can store table rows (RoundKernels.store)")
    if joint and (dkern.rounds.load is None or fused_driver(dkern, okern) is None
                  or is_stepwise(order)):
        return None, ("joint round steps run compiled with the domain's round kernel "
                      "`load` (RoundKernels.load), its fused kernels and an order that "
                      "draws whole passes (not gap sampling); else in the Python engine")
    where = "in this process" if isinstance(ex, InProcessRounds) else "from table rows"
    kind = "joint" if joint else "mini-batch"
    return _Compiled(dkern, okern, dkern.rounds), f"compiled {kind} rounds {where}"


def _domain_kernels(dom: BlockDomainHooks, x0: Any, state: BlockState, cache: bool) -> Any:
    """The domain's compiled kernels at ``x0``; a domain that declares features (its
    kernels keep atoms) is told how many inactive ones per block and whether to cache."""
    kernels_for: Any = dom.compiled_blocks
    if dom.compiled_features:
        return kernels_for(x0, cache_size=state.cache_size, cache=cache)
    return dom.compiled_blocks(x0)


def _resident(state: BlockState, pieces: Any, x0: Any, *, step: BlockStep, rule: StepSize,
              cache: bool, schedule: Schedule | None) -> ResidentRounds:
    """Resident joint or local rounds or lock-free passes, the only ways to run a domain
    whose blocks live on the workers; a ValueError naming what the run asks for that
    they do not do."""
    where = f"{type(state.dom).__name__}'s blocks live on the workers (resident_blocks)"
    if schedule is None or not (schedule.joint or schedule.local or schedule.lock_free):
        raise ValueError(f"{where}: runs take joint or local rounds or lock-free passes; "
                         "pass round_step='joint' or 'local' and a batch_size > 1, or "
                         "round_step='lock_free'")
    if not callable(getattr(schedule.executor, "resident", None)):
        raise ValueError(f"{where}: they need an executor that reaches them "
                         f"(DaskExecutor), got {schedule.executor!r}")
    if schedule.staleness:
        raise ValueError(f"{where}: their rounds are synchronous; pass staleness=0, got "
                         f"{schedule.staleness}")
    if x0 is not None:
        raise ValueError(f"{where}: they start at the domain's initial block points; x0 "
                         "must be None")
    if type(step).direction is not FWStep.direction or cache:
        raise ValueError(f"{where}: they take Frank-Wolfe block steps without the cache")
    if is_stepwise(state.order) and not (schedule.lock_free and
                                         state.order.compiled_tree() is not None):
        raise ValueError(f"{where}: they need a block order that draws whole passes (or "
                         f"gap sampling, for lock-free passes), not {state.order!r}")
    if state.avg is not None:
        raise ValueError(f"{where}: averaging is not available (the certificate of an "
                         "average needs the averaged block iterates); pass averaging=None")
    if rule.compiled() is None:
        raise ValueError(f"{where}: step_size={rule!r} has no compiled form")
    if schedule.local and not isinstance(rule, ExactStep):
        # a rule that ignores f would scale a sum of moves that each were scaled by it
        # already: on CoNLL-like sentences with the agnostic rule f rose far above its
        # start and optimum in the first pass, and stayed far above
        # (benchmarks/README.md, "Measurements behind code choices")
        raise ValueError(f"{where}: local rounds combine the workers' moves by exact line "
                         f"search; pass step_size='exact', not {rule!r}")
    okern = state.f.compiled_block_objective()
    if okern is None or okern.hessian_diag is None:
        raise ValueError(f"{where}: the objective must be a quadratic with a diagonal "
                         "Hessian (compiled_block_objective().hessian_diag)")
    if schedule.lock_free:
        if debug_enabled():
            raise ValueError(f"{where}: lock-free passes run compiled; debug mode checks "
                             "every oracle answer in Python (frankwolfe.debug(False))")
        return ResidentLockFree(state, pieces, rule, okern, schedule)
    return ResidentRounds(state, pieces, rule, okern, schedule)


def _lock_free(state: BlockState, x0: Any, *, rule: StepSize, schedule: Schedule,
               compiled: bool | None) -> LockFreePass:
    """Lock-free passes (:mod:`.lock_free`), which run compiled only; a ValueError naming
    what the run asks for that they do not do."""
    why = "round_step='lock_free' runs compiled block steps on threads"
    dom = state.dom
    if compiled is False:
        raise ValueError(f"{why}: compiled=False excludes it")
    if debug_enabled():
        raise ValueError(f"{why}: debug mode checks every oracle answer in Python; turn it "
                         "off (frankwolfe.debug(False)) or use round_step='sequential'")
    if state.avg is not None:
        raise ValueError(f"{why}: averaging is not available; pass averaging=None")
    if is_stepwise(state.order) and state.order.compiled_tree() is None:
        raise ValueError(f"{why}: it needs a block order that draws whole passes or gap "
                         f"sampling, not {state.order!r}")
    if rule.compiled() is None:
        raise ValueError(f"{why}: step_size={rule!r} has no compiled form")
    okern = state.f.compiled_block_objective()
    dkern = _domain_kernels(dom, x0, state, False) if isinstance(dom, BlockDomainHooks) \
        else None
    if okern is None or dkern is None or dkern.fork is None or \
            fused_driver(dkern, okern) is None:
        raise ValueError(f"{why}: it needs a quadratic objective with a diagonal Hessian "
                         "and a domain whose compiled kernels are fused and give `fork` "
                         f"(CompiledBlocks.fork); {type(dom).__name__} with "
                         f"{type(state.f).__name__} does not")
    state.start_owned(dkern)
    # one thread has g to itself: the serial pass's driver (no atomic adds, the oracle's
    # gap as the slope), no compilation of its own
    alone = threads_of(schedule.executor) == 1
    return LockFreePass(state, CompiledSteps(state, dkern, okern, rule, shared=not alone),
                        schedule.executor)


def make_pass(state: BlockState, x0: Any, *, step: BlockStep, rule: StepSize, cache: bool,
              cache_factor: float, cache_nu: float, schedule: Schedule | None,
              compiled: bool | None) -> tuple[Pass, str]:
    """The pass of this run and why it was chosen; starts ``state`` (at ``x0``) and the
    executor of ``schedule`` as that pass needs."""
    pieces = state.dom.resident_blocks() if isinstance(state.dom, BlockDomainHooks) else None
    if pieces is None and schedule is not None and schedule.local:
        raise ValueError(f"round_step='local' runs on blocks kept on the workers (a domain "
                         f"with resident_blocks(), e.g. SSVMDual.from_source(..., "
                         f"resident=True)); {type(state.dom).__name__} keeps its blocks "
                         "here: use round_step='joint' or 'lock_free'")
    if pieces is not None:
        resident = _resident(state, pieces, x0, step=step, rule=rule, cache=cache,
                             schedule=schedule)
        if isinstance(resident, ResidentLockFree):
            return resident, ("resident lock-free passes (the domain's blocks live on the "
                              "workers, their gradient in shared memory)")
        kind = "local" if resident.local else "joint"
        return resident, f"resident {kind} rounds (the domain's blocks live on the workers)"
    if schedule is not None and schedule.lock_free:
        lock_free = _lock_free(state, x0, rule=rule, schedule=schedule, compiled=compiled)
        return lock_free, f"lock-free passes on {lock_free.n_jobs} thread(s)"
    kernels, reason = _choose(state, x0, step=step, rule=rule, cache=cache,
                              schedule=schedule, compiled=compiled)
    if kernels is None:
        state.start(x0)
        steps = PythonSteps(state, step, rule, cache=cache, cache_factor=cache_factor,
                            cache_nu=cache_nu)
        if schedule is None:
            return PythonPass(steps), reason
        return PythonRounds(state, state.blocks(), steps.step, steps.certificate,
                            schedule, joint=steps.joint), reason
    if kernels.dkern is None:
        Z = state.start(x0)
        b = state.blocks()
        idx_flat = np.concatenate(b.idx) if b.idx else np.zeros(0, np.int64)
        dkern = simplex_blocks(Z, idx_flat, b.off, np.array([lmo.radius for lmo in b.lmos
                                                       if isinstance(lmo, ProbabilitySimplex)]))
    else:
        dkern = kernels.dkern
        state.start_owned(dkern)
    csteps = CompiledSteps(state, dkern, kernels.okern, rule, kernels.rounds,
                           pairwise=type(step).direction is not FWStep.direction,
                           cache=(cache_factor, cache_nu) if cache else None,
                           joint=kernels.rounds is not None and schedule is not None
                           and schedule.joint)
    if kernels.rounds is None or schedule is None:
        return CompiledPass(csteps), reason
    return CompiledRounds(state, csteps, kernels.rounds, schedule), reason

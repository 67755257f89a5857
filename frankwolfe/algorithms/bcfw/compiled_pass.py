"""The compiled pass: block steps in numba, many per call of the core's driver.

The domain and the objective supply the kernels (:mod:`frankwolfe.compiled`);
the driver performs the same updates as the Python steps (equal up to
rounding) and consumes the random stream identically (see
:mod:`..block_orders`).  Under a time limit a pass runs in chunks of about
10 ms, so a clock read costs nothing next to them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...compiled import (
    CERTIFY,
    CERTIFY_REFRESH,
    PASS,
    CompiledBlocks,
    CompiledObjective,
    Picker,
    RoundKernels,
    StructuredDirection,
    TouchLog,
    compiled_driver,
    fused_driver,
    order_picker,
    structured_direction,
)
from ...compiled.average import NO_AVERAGE, AverageState
from ...compiled.pass_state import NO_EXTRAS, PassData, PassExtras, PassVectors, StepScratch
from ...compiled.touched import joint_scratch, no_touched
from ...lmo.product import check_block_gaps
from ...step_size import ExactStep, StepSize
from ..averages import WEIGHTED
from .passes import Budget, Pass, full_gradient, value_and_full_gradient
from .state import BlockState

__all__ = ["CompiledSteps", "CompiledPass", "Fork"]

_FIRST_CHUNK = 256  # block steps of the first chunk under a time limit
_CHUNK_SECONDS = 0.01  # later chunks last about this long


class Fork(NamedTuple):
    """The kernels' state of another thread (the domain's ``fork``), its scratch, and the
    vector its steps move (a private share of ``x``)."""

    state: Any
    sd: StructuredDirection
    idx: np.ndarray
    val: np.ndarray
    x: np.ndarray


class CompiledSteps:
    """The kernels of a run and the calls of the compiled driver on its state
    (``rounds``: the domain's round kernels, when mini-batch rounds run compiled)."""

    def __init__(self, state: BlockState, dkern: CompiledBlocks, okern: CompiledObjective,
                 rule: StepSize, rounds: RoundKernels | None = None, *,
                 pairwise: bool = False, cache: tuple[float, float] | None = None,
                 joint: bool = False, shared: bool = False) -> None:
        self.state = state
        self.dkern = dkern
        self.okern = okern
        self.rounds = rounds
        self.g = full_gradient(state.f, state.x, copy=True)
        self._bufs = (np.empty(dkern.max_nnz, dtype=np.int64), np.empty(dkern.max_nnz))
        # fused steps (no direction materialized) when both sides support them
        self._fused = fused_driver(dkern, okern) is not None
        h = okern.hessian_diag  # not None when fused (fused_driver)
        self._h = h if self._fused and h is not None else np.zeros(0)
        self._sd = dkern.layout if self._fused else structured_direction(0, 0, 0, np.zeros((0, 0)))
        compiled_rule = rule.compiled()
        if compiled_rule is None:
            raise ValueError(f"step_size={rule!r} has no compiled form")
        kernel, self._rparams = compiled_rule
        if pairwise and dkern.pairwise is None:
            raise ValueError("pairwise block steps need the domain's PairwiseKernels "
                             "(CompiledBlocks.pairwise)")
        # a domain that keeps atoms is asked (its lookup) before every step; the cache's
        # thresholds are infinite when the run has no cache
        lookup = dkern.lookup is not None
        self._driver = compiled_driver(dkern, okern, kernel, fused=self._fused,
                                       pairwise=dkern.pairwise if pairwise else None,
                                       rounds=rounds is not None,
                                       exact=isinstance(rule, ExactStep), cache=lookup,
                                       joint=joint, shared=shared)
        # joint rounds: the round's summed direction (over x) and a mark per block
        self._joint = joint_scratch(state.x.size, state.n) if joint else joint_scratch(0, 0)
        self.joint = joint
        # the cache's thresholds and the certified gap G, and the hits the driver counts
        factors = (np.inf, np.inf) if cache is None else cache
        self._cparams = np.array([*factors, np.inf, 0.0]) if lookup else None
        self._cache = cache is not None
        # the driver's records that stay the same from call to call (.compiled.pass_state)
        self._data = PassData(dkern.state, okern.data, self._rparams, state.n)
        self._scratch = StepScratch(*self._bufs, self._sd)
        self._extras = NO_EXTRAS if self._cparams is None else PassExtras(cparams=self._cparams)
        self._need_sync = True
        # rounds: the coordinates the steps touch, when the objective moves g only where
        # they move x (a diagonal Hessian or separable) and someone reads them (track)
        self.touch_log: TouchLog | None = None
        self._local = rounds is not None and (
            self._fused or okern.hessian_diag is not None or okern.search is not None)
        self._no_record = no_touched()
        self._scratch_est: np.ndarray | None = None  # a certificate's gaps without refresh

    def track(self) -> TouchLog | None:
        """Keep the record of the coordinates the round steps touch (:mod:`~frankwolfe.
        compiled.touched`): its log, or None when the steps cannot list them (no rounds,
        or an objective whose update moves all of ``g``)."""
        if self.touch_log is None and self._local:
            self.touch_log = TouchLog(self.g.size)
        return self.touch_log

    def steps(self, picker: Picker, t0: int, t1: int) -> float:
        """Block steps ``t0 .. t1 - 1`` of ``picker`` in calls of the compiled driver (one,
        unless the domain's ``prepare`` makes room for fewer; with round kernels: at the
        vertices stored by the round's oracles); the change of f."""
        df = 0.0
        while t0 < t1:
            room = t1 - t0 if self.dkern.prepare is None else \
                max(1, min(t1 - t0, int(self.dkern.prepare(t1 - t0))))
            df += self._call(picker, t0, t0 + room)
            t0 += room
        return df

    def _call(self, picker: Picker, t0: int, t1: int) -> float:
        st = self.state
        cp = self._cparams
        if cp is not None:
            cp[2], cp[3] = st.G, 0.0
        k, st.last_gamma, df = self._run(picker, t0, t1, self.g, self._need_sync, PASS)
        self._need_sync = False
        hits = 0 if cp is None else int(cp[3])
        st.n_oracle += int(k) - st.k - hits
        if self._cache:
            st.hits += hits
            st.misses += int(k) - st.k - hits
        st.k = int(k)
        return float(df)

    def _run(self, picker: Picker, t0: int, t1: int, g: np.ndarray, resync: bool,
             task: int, fork: Fork | None = None, k: int | None = None
             ) -> tuple[int, float, float]:
        """One call of the driver's ``run_pass``, always with the argument types of this
        run (passes and certificates then share one compilation); ``fork``: on another
        thread's kernel state, moving its share of ``x`` (steps counted from ``k``)."""
        st = self.state
        avg = st.avg
        if avg is None:
            average = NO_AVERAGE
        else:
            average = AverageState(1 if avg.kind == WEIGHTED else 2, avg.acc, avg.since,
                                   avg.start)
        if fork is None:
            data, scratch, x = self._data, self._scratch, st.x
            if data.dstate is not self.dkern.state:  # the domain's prepare replaced it
                data = self._data = data._replace(dstate=self.dkern.state)
        else:
            data = self._data._replace(dstate=fork.state)
            scratch, x = StepScratch(fork.idx, fork.val, fork.sd), fork.x
        if self.rounds is None:
            extras = self._extras
        else:
            log = self.touch_log
            extras = PassExtras(self.rounds.table, None,
                                self._no_record if log is None else log.record, self._joint)
        return self._driver(t0, t1, st.k if k is None else k, task, resync, picker, data,
                            PassVectors(x, g, self._h), scratch, average, extras)

    def joint_round(self, picker: Picker, m: int) -> float:
        """One joint round of the ``m`` blocks of ``picker`` (mode 0) in one call of the
        driver (compiled with ``joint``); the change of f.  The block-gap estimates keep
        the last certificate's."""
        if not self.joint:
            raise ValueError("CompiledSteps: joint_round needs a driver compiled for joint "
                             "rounds (joint=True)")
        return self._call(picker, 0, m)

    def synced_gradient(self) -> np.ndarray:
        """The tracked gradient, with what the domain's fused kernels derive from it
        brought up to date (before a round's oracles read it)."""
        if self._fused and self._need_sync:
            self.dkern.sync(self.dkern.state, self.g)
            self._need_sync = False
            if self.touch_log is not None:  # what the domain derives was rebuilt whole
                self.touch_log.forget()
        return self.g

    def check_blocks(self, g: np.ndarray, fx: float, total: float, est: np.ndarray) -> None:
        """Raise :class:`~frankwolfe.OracleError` when a block's gap at ``g`` is negative
        beyond rounding (:func:`~frankwolfe.lmo.product.check_block_gaps`).  The kernels
        return the summed gap ``total`` and each block's gap clipped at 0 in ``est``: the
        difference is the blocks' negative part, which the other blocks' gaps hide in the
        sum.  Only when it exceeds the smallest allowance a block has (``1e-12`` of the
        run's values of f) are the blocks whose estimate is 0 asked again, one at a time,
        for their gap and value: one comparison per certificate otherwise."""
        st = self.state
        f_top = st.note_value(fx)
        if not st.exact or not float(est.sum()) - total > 1e-12 * (abs(fx) + f_top):
            return  # an inexact oracle's block gaps are estimates (LMO.exact)
        which = np.flatnonzero(est == 0.0)
        dots, scores = np.empty(which.size), np.empty(which.size)
        unused = np.empty(st.n)
        for a in range(which.size):
            picker = order_picker(which[a:a + 1], unused)
            _, gap, score = self._run(picker, 0, 1, g, False, CERTIFY)
            dots[a], scores[a] = gap + score, score
        st.n_oracle += which.size
        check_block_gaps(st.dom, dots, scores, fx, f_top,
                         f"the certificate after {st.k} block steps", blocks=which)

    def run_fork(self, fork: Fork, picker: Picker, t0: int, t1: int, g: np.ndarray, k: int,
                 task: int) -> tuple[int, float, float]:
        """The driver's steps (or certificate, ``task``) ``t0 .. t1 - 1`` of ``picker`` on
        another thread's kernel state ``fork``, from the step count ``k``; what the
        driver returns.  The caller counts the steps into the run's state."""
        return self._run(picker, t0, t1, g, False, task, fork=fork, k=k)

    def fork(self, x: np.ndarray) -> Fork:
        """The kernels' state for another thread (the domain's ``fork``), moving ``x``."""
        fork = self.dkern.fork
        if fork is None or not self._fused:
            raise ValueError("CompiledSteps.fork: needs the domain's `fork` and the fused "
                             "kernels")
        state, sd = fork()
        return Fork(state, sd, np.empty_like(self._bufs[0]), np.empty_like(self._bufs[1]), x)

    def certificate(self, x: np.ndarray, refresh: bool,
                    store_vertices: Callable[[np.ndarray], None] | None = None,
                    sweep: Callable[[np.ndarray, int, np.ndarray], tuple[float, float]]
                    | None = None
                    ) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` through the block kernels (one oracle call per block;
        with round kernels ``store_vertices(g)`` has the round machinery store every
        block's vertex first; ``sweep(g, task, est) -> (sum_gap, sum_score)`` asks them
        instead of one driver call, e.g. on threads)."""
        st, dkern = self.state, self.dkern
        fx, g = value_and_full_gradient(st.f, x, copy=True)
        if self._fused:
            dkern.sync(dkern.state, g)  # the certificate's gradient; the next pass resyncs
            self._need_sync = True
        if self.rounds is not None:  # the oracles through the round machinery first
            if store_vertices is None:
                raise ValueError("CompiledSteps.certificate: with round kernels, "
                                 "store_vertices is needed (the round table's vertices)")
            store_vertices(g)
        # every block's gap lands in an estimate (clipped at 0): the estimates of the run's
        # blocks with refresh, else a scratch array (the kernels' gaps are then about the
        # last block iterates, at the certified point's gradient: still >= 0 for any point
        # of a block domain), which check_blocks reads
        if refresh:
            est = st.est
        else:
            if self._scratch_est is None:
                self._scratch_est = np.empty(st.n)
            est = self._scratch_est
        if sweep is None:
            # the picker of a certificate only carries the block-gap estimates
            picker = order_picker(np.zeros(0, dtype=np.int64), est)
            _, total, scores = self._run(picker, 0, 0, g, False, CERTIFY_REFRESH)
        else:
            total, scores = sweep(g, CERTIFY_REFRESH, est)
        st.n_oracle += st.n
        self.check_blocks(g, float(fx), float(total), est)
        if refresh:
            self.g = g  # also clears the rounding drift of the tracked gradient
            if self.touch_log is not None:
                self.touch_log.forget()
            st.order.refresh()
            st.G = max(total, 0.0)
        # <g, x> - sum_i <g, s_i> (as the Python certificate of blocks of sparse atoms)
        return float(fx), float(g @ x) - float(scores)


class CompiledPass(Pass):
    """A whole pass in one call of the compiled driver (in chunks under a time limit)."""

    name = "compiled"
    exact_df = True

    def __init__(self, steps: CompiledSteps) -> None:
        self.steps = steps

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st = self.steps.state
        n = st.n
        if order is None:  # gap sampling: the tree of the order, one uniform per step
            tree = st.order.compiled_tree()
            assert tree is not None  # the plan runs stepwise orders compiled only with one
            steps = n
            picker = Picker(1, np.zeros(0, dtype=np.int64), st.rng.random(n), st.est, *tree)
        else:
            steps = order.size
            picker = order_picker(order, st.est)
        df = 0.0
        t0, chunk = 0, (min(steps, _FIRST_CHUNK) if budget.limited else steps)
        while t0 < steps:
            t1 = min(steps, t0 + chunk)
            tic = time.perf_counter()
            df += self.steps.steps(picker, t0, t1)
            t0 = t1
            if budget.limited and t0 < steps:
                seconds = max(time.perf_counter() - tic, 1e-9)
                if budget.spent(chunk, seconds):
                    break
                # chunks of about _CHUNK_SECONDS: a clock read costs nothing next to them
                chunk = int(min(steps, max(_FIRST_CHUNK, chunk / seconds * _CHUNK_SECONDS)))
        return float(df)

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        return self.steps.certificate(x, refresh)

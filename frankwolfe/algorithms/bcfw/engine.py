"""The BCFW engine: an outer iteration is one pass of the pass strategy chosen for the
run (:mod:`.plan`); certificates every ``gap_every`` passes; the run's outputs.

Stopping, history, callbacks and the result are the shared driver's
(:func:`~..engine.drive`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...monitor import INTERRUPTS, Monitor
from ...objectives.base import NonFiniteGradientError, checked_value
from ..engine import Engine, Observation
from .passes import Budget, Pass
from .state import BlockState

__all__ = ["BlockEngine"]


class BlockEngine(Engine):
    """One BCFW run as the driver sees it.

    Parameters
    ----------
    state : BlockState
        The started state.
    run_pass : Pass
        The pass strategy, chosen once.
    reason : str
        Why that pass (``extra["engine_reason"]``).
    labels : dict
        The configuration as ``extra`` names it (``block_order``, ``block_step``,
        ``step_size``).
    certify : {"last", "average"}
        Which iterate the certificates are about.
    gap_every : int
        Passes between certificates.
    cache : bool
        Whether the gapBCFW cache runs (its threshold needs a global gap).
    """

    times_itself = True  # the time limit is kept mid-pass (see .passes.Budget)

    def __init__(self, state: BlockState, run_pass: Pass, reason: str, *,
                 labels: dict[str, str], certify: str, gap_every: int, cache: bool) -> None:
        self.state = state
        self.run_pass = run_pass
        self.reason = reason
        self.labels = labels
        self.certify_kind = certify
        self.gap_every = gap_every
        self.cache = cache
        self.passes = 0
        # certificates not scheduled (asked for by the estimates, or the first under a
        # time limit): each a pass of oracle calls, counted against max_iter with the
        # passes of block steps
        self.asked = 0
        self._max_iter: float = np.inf
        # passes before the estimates may ask again: after one that did not confirm, the
        # wait doubles (the estimates are about the last iterate's steps, so with an
        # average certified they meet tol pass after pass, each asking a whole pass)
        self._wait = 0
        self._next_wait = 1
        # time limit: a pass stops early enough for the closing certificate, whose cost is
        # the last certificate's (before one, n block steps at the measured rate)
        self.time_up = False
        self._reserve: float | None = None
        self._pass_seconds: float | None = None  # the last whole pass
        # no certificate before the first pass (it would cost a pass and would replace the
        # "unvisited" estimates that gap sampling sweeps first)
        self.fx = checked_value(state.f.value(self.certified_point()), state.f)
        self.gap = np.inf
        self.certified = False
        # the point at the start of the current pass, (x, f, gap, certified): what an
        # error returns when the pass left a non-finite value or was cut short
        self.good: tuple[np.ndarray, float, float, bool] | None = None
        self._good_x: np.ndarray | None = None  # good's iterate, written over each pass
        self.bad = False  # observe() found a non-finite value
        self._bad_message = ""  # what a pass found non-finite, where it stopped the pass

    def certified_point(self) -> np.ndarray:
        """The iterate the certificates are about (the last one or the average)."""
        st = self.state
        if self.certify_kind == "average" and st.avg is not None:
            return st.avg.value(st.x, st.k)
        return st.x

    def certificate(self, closing: bool = False) -> tuple[float, float]:
        """``(f, gap)`` certified at :meth:`certified_point` (timed: the time budget keeps
        that long for the closing one)."""
        tic = time.perf_counter()
        out = self.run_pass.certificate(self.certified_point(),
                                        refresh=(self.certify_kind == "last"), closing=closing)
        self._reserve = time.perf_counter() - tic
        return out

    # -- the engine interface --------------------------------------------------------
    def info(self) -> dict[str, Any]:
        st = self.state
        calls = st.hits + st.misses
        return {"effective_passes": st.n_oracle / st.n, "oracle_calls": st.n_oracle,
                "gap_estimate": float(st.est.sum()),
                "cache_hit_rate": (st.hits / calls) if calls else np.nan,
                **self.run_pass.info()}

    def observe(self, p: int) -> Observation | str:
        fx, gap, certified = self.fx, self.gap, self.certified
        if not (np.isfinite(fx) and (np.isfinite(gap) or not certified)):
            self.bad = True
            return self._bad_message or \
                f"the objective or the oracle returned a non-finite value at pass {p}"
        st = self.state
        return Observation(fx, gap, certified, self.certified_point(), None, st.last_gamma,
                           self.info(), {"n_block_steps": st.k, "oracle_calls": st.n_oracle,
                                         **self.run_pass.info()},
                           self.time_up,
                           budget_spent=self.asked > 0 and
                           self.passes + self.asked >= self._max_iter)

    def advance(self, p: int, monitor: Monitor) -> None:
        st = self.state
        # O(d) per pass of n oracle calls, into one buffer: a fresh copy of a large
        # iterate faults its pages in every pass, a visible share of the pass
        # (benchmarks/README.md, "Measurements behind code choices")
        point, buf = self.certified_point(), self._good_x
        if buf is None or buf.shape != point.shape or buf.dtype != point.dtype:
            buf = self._good_x = np.empty_like(point)
        np.copyto(buf, point)
        self.good = (buf, self.fx, self.gap, self.certified)
        # the closing certificate's time: the last certificate's, else the last whole
        # pass's (n block steps: the rate of a pass's first steps overstates it), else
        # the start's oracle calls, one per block (serial: at most the certificate's
        # time through an executor)
        reserve = self._reserve
        if reserve is None and not self.run_pass.estimates_certificate:
            reserve = self._pass_seconds if self._pass_seconds is not None \
                else st.start_seconds
        budget = Budget(monitor, st.n, reserve)
        tic = time.perf_counter()
        try:
            df = self.run_pass.run(st.pass_order(), budget)
        except NonFiniteGradientError as err:
            # a block gradient, or the full one a default exact_step_block reads, not
            # finite: observe() ends the run; the error's result is the pass's start
            # (self.good)
            self.bad, self.fx, self._bad_message = True, np.nan, f"{err} at pass {p}"
            return
        if df != 0.0 and st.last_gamma == 0.0:
            # the pass moved x though its last block step (a lock-free pass: the last
            # thread's) was 0: not a zero step for the stall check, which otherwise
            # ended runs still descending as "stalled"
            st.last_gamma = np.nan
        if not (budget.up or INTERRUPTS.hits):
            self._pass_seconds = time.perf_counter() - tic
        self.time_up = self.time_up or budget.up
        self.passes = p + 1
        if st.avg is not None:  # before the certificate: it is about the reported average
            st.avg.end_pass(st.x, st.k, self.passes)
        if self.cache and not np.isfinite(st.G):
            # before any exact pass, the summed estimates serve as the global gap
            s = float(st.est.sum())
            if np.isfinite(s):
                st.G = s
        self._max_iter = monitor.max_iter
        scheduled = (p + 1) % self.gap_every == 0
        self._wait = max(0, self._wait - 1)
        # a cheap sign of convergence, not asked again at once when it was wrong
        heuristic = self._wait == 0 and monitor.converged(float(st.est.sum()), self.fx)
        # under a time limit the first whole pass ends with a certificate: its time is
        # then what the passes keep for the closing one (estimates from block steps are
        # far off: cache hits, rounds' dispatch)
        # (benchmarks/README.md, "Measurements behind code choices")
        first = (self._reserve is None and monitor.time_limit is not None and not budget.up)
        if scheduled or heuristic or first:
            self.fx, self.gap = self.certificate()
            self.certified = True
            if not scheduled:
                self.asked += 1
                if heuristic and not monitor.converged(self.gap, self.fx):
                    self._wait, self._next_wait = self._next_wait, 2 * self._next_wait
        else:
            # the compiled passes report the exact change of f at the last iterate
            self.fx = (self.fx + df if self.run_pass.exact_df and self.certify_kind == "last"
                       else checked_value(st.f.value(self.certified_point()), st.f))
            self.certified = False

    def certify(self, last: Observation) -> tuple[float, float]:
        return self.certificate(closing=True)

    def outputs(self, error: bool) -> dict[str, Any]:
        st = self.state
        n, store, avg = st.n, st.store, st.avg
        x_last = st.x.copy()
        extra: dict[str, Any] = {
            "x_last": x_last,
            "block_iterates": st.block_iterates(),
            "engine": self.run_pass.name,
            "engine_reason": self.reason,
            **self.labels,
            "block_gaps": st.est.copy(),
            "n_block_steps": st.k,
            "effective_passes": st.n_oracle / n,
            "cache_hits": st.hits,
            "cache_misses": st.misses,
            "n_drop_steps": st.n_drop,
            **self.run_pass.outputs(),
        }
        if store is not None:
            extra["active_set_size"] = store.total_active()
            extra["active_sets"] = [store.active(i) for i in range(n)]
            extra["atom_store_bytes"] = store.nbytes
        elif st.outputs is not None:  # what the domain's compiled kernels keep
            extra.update(st.outputs())
        if avg is not None:
            extra["x_average"] = avg.value(st.x, st.k)
            extra["average_window"] = avg.window(st.k)
        x_ret = extra["x_average"] if self.certify_kind == "average" else x_last
        x_out = x_ret.copy()
        out: dict[str, Any] = dict(x=x_out, n_oracle_calls=st.n_oracle, n_gradient_calls=st.k,
                                   n_function_calls=self.passes, extra=extra)
        if error:
            out.update(self._last_good(x_out))
            out["n_oracle_calls"] = st.n_oracle  # with the certificate's
        return out

    def _last_good(self, x: np.ndarray) -> dict[str, Any]:
        """``x``, ``fun`` and ``gap`` of the point an error returns: the one from before
        the pass when the pass ended on a non-finite value or was cut short (its gap
        certified with one oracle call per block if it was not), else the current one
        (its gap not certified: the oracles may be what failed; certified where a
        ``KeyboardInterrupt`` stopped the run, as the other methods' are).  Each read
        here is guarded against a ``KeyboardInterrupt`` too (an objective or an oracle
        raising it again, also on the driver's hurried retry): ``fun`` or ``gap`` is then
        NaN rather than no result."""
        good = self.good
        if good is None or not (self.bad or self.cut_short):
            if good is not None and np.array_equal(good[0], x) and good[3]:
                return dict(fun=good[1], gap=good[2])
            if self.interrupted and not self.hurried:
                try:
                    fun, gap = self.run_pass.certificate(x, refresh=False)
                except (Exception, KeyboardInterrupt):
                    fun = gap = np.nan
                if np.isfinite(fun) and np.isfinite(gap):
                    return dict(fun=fun, gap=gap)
            if good is not None and np.array_equal(good[0], x):
                return dict(fun=good[1], gap=np.nan)
            try:
                fun = checked_value(self.state.f.value(x), self.state.f)
            except (Exception, KeyboardInterrupt):
                fun = np.nan
            return dict(fun=fun, gap=np.nan)
        x, fun, gap, certified = good
        if not certified and self.hurried:
            fun, gap = good[1], np.nan
        elif not certified:
            try:
                fun, gap = self.run_pass.certificate(x, refresh=False)
            except (Exception, KeyboardInterrupt):
                gap = np.nan
            if not (np.isfinite(fun) and np.isfinite(gap)):
                fun, gap = good[1], np.nan
        return dict(x=x.copy(), fun=fun, gap=gap)

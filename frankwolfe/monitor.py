"""Stopping rules, callbacks, history, verbose output and progress bars.

One :class:`Monitor` serves every algorithm, so stopping, logging and the
result object behave the same whichever method runs.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._numbers import as_real, brief
from ._run_checks import check_run_options
from .errors import NonConvexError
from .interrupts import INTERRUPTS
from .result import History, Result, Status

__all__ = ["Monitor", "IterationState", "INTERRUPTS", "ClockReads", "says_stop", "BudgetWords",
           "budget_words", "gives_bounds"]

#: a verbose run prints a row at least this often (seconds), whatever its period
_PRINT_SECONDS = 10.0

#: the history's columns of every run (a method's own follow)
_COLUMNS = ("iteration", "time", "fun", "gap", "step_size")


class _NoticeEcho:
    """While verbose runs are open, the INFO notices of the ``frankwolfe`` logger (a
    numba compilation about to start, see ``frankwolfe._numba_hooks``) are printed to
    stdout with the table.  Only when logging is not configured: otherwise its handlers
    and levels decide, and nothing is printed twice."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0
        self._handler: logging.Handler | None = None
        self._level = logging.NOTSET

    def open(self) -> Callable[[], None]:
        """Start echoing; the function that stops (idempotent)."""
        log = logging.getLogger("frankwolfe")
        with self._lock:
            if self._open == 0 and not log.hasHandlers():
                self._handler = logging.StreamHandler(sys.stdout)
                self._handler.setFormatter(logging.Formatter("%(message)s"))
                log.addHandler(self._handler)
                self._level = log.level
                if log.getEffectiveLevel() > logging.INFO:
                    log.setLevel(logging.INFO)
            self._open += 1
        done = [False]

        def close() -> None:
            with self._lock:
                if done[0]:
                    return
                done[0] = True
                self._open -= 1
                if self._open == 0 and self._handler is not None:
                    log.removeHandler(self._handler)
                    log.setLevel(self._level)
                    self._handler = None

        return close


_ECHO = _NoticeEcho()




class ClockReads:
    """When a pass of steps reads the clock: about every ``seconds`` of steps (the
    interval follows the measured step time), at most ``most`` steps apart, the first
    after ``first`` steps.  A read costs little, a pass of slow steps read too rarely
    overruns a time limit by the steps between two reads.

    ``due(done)`` says whether ``done`` steps into the pass the clock is to be read;
    ``read(done)`` notes the read (and sets the next); ``start()`` begins a pass (the
    interval learnt so far is kept)."""

    def __init__(self, first: int, most: int, seconds: float = 0.01) -> None:
        self.every, self.most, self.seconds = first, most, seconds
        self.next, self._last, self._tic = first, 0, time.perf_counter()

    def start(self) -> None:
        self.next, self._last, self._tic = self.every, 0, time.perf_counter()

    def due(self, done: int) -> bool:
        return done >= self.next

    def read(self, done: int) -> None:
        now = time.perf_counter()
        per_step = max(now - self._tic, 1e-9) / max(done - self._last, 1)
        self.every = int(max(1, min(self.most, self.seconds / per_step)))
        self.next, self._last, self._tic = done + self.every, done, now


@dataclass(frozen=True)
class IterationState:
    """What a callback sees after each iteration (read-only views).

    Attributes
    ----------
    k : int
        Iteration counter.
    x : ndarray
        Current iterate (read-only view; copy it to keep it).
    fun : float
        ``f(x)``.
    gap : float
        Certified Frank-Wolfe gap at ``x`` (NaN when not computed this iteration).
    gradient : ndarray or None
        ``grad f(x)`` (read-only view) when available.
    step_size : float
        The previous step size.
    time : float
        Seconds since the start.
    info : dict
        Method-specific values (active-set size, ...).
    """

    k: int
    x: np.ndarray
    fun: float
    gap: float
    gradient: np.ndarray | None
    step_size: float
    time: float
    info: dict[str, Any]

    def __repr__(self) -> str:
        # the arrays by shape: a callback printing its state printed them in full
        return (f"IterationState(k={self.k}, fun={self.fun:.10g}, gap={self.gap:.3e}, "
                f"step_size={self.step_size:.3e}, time={self.time:.3g}s, x={brief(self.x)}, "
                f"gradient={brief(self.gradient)}, info={brief(self.info)})")


def gives_bounds(objective: Any, domain: Any) -> bool:
    """Whether a run's ``f_k - gap_k`` bound ``f*`` below (:attr:`Monitor.bounds`).

    Parameters
    ----------
    objective : Objective
        Its ``convex`` declaration (default True) is read.
    domain : LMO
        Its :attr:`LMO.exact <frankwolfe.LMO.exact>` is read (a product's is its
        blocks').

    Returns
    -------
    bool
        A convex objective and an oracle that minimizes: an inexact oracle's gaps are
        estimates, and its bounds may exceed ``f*``.
    """
    return bool(getattr(objective, "convex", True)) and bool(getattr(domain, "exact", True))


@dataclass(frozen=True)
class BudgetWords:
    """How a caller that sets a run's ``max_iter`` from a budget of its own (an
    estimator's ``max_passes``) has the run speak of it: the message of a run that
    spent it, the counts of the other messages, the verbose closing line and the
    progress bar's total say the caller's budget, not the iterations it maps to.

    Attributes
    ----------
    name : str
        The caller's parameter (``"max_passes"``).
    total : float
        Its value: the progress bar's total.
    unit : str
        What it counts (``"passes"``).
    done : callable
        ``done(k, extra) -> float``: the units spent after iteration ``k``, from the
        extra columns of that iteration's history row (a ``KeyError`` when they do not
        tell: the message then counts iterations).
    closing : callable, optional
        Given the verbose closing line instead of printing it (a caller that prints rows
        of its own after the run prints it after them); None: printed.
    """

    name: str
    total: float
    unit: str
    done: Callable[[int, dict[str, Any]], float]
    closing: Callable[[str], None] | None = None


#: the words of the next monitor made in this context (see :func:`budget_words`)
_BUDGET_WORDS: ContextVar[list[BudgetWords] | None] = ContextVar("frankwolfe_budget_words",
                                                                 default=None)


@contextmanager
def budget_words(words: BudgetWords) -> Iterator[None]:
    """The next :class:`Monitor` made in this context (this thread) speaks of its
    iteration budget in ``words``: the run the caller starts inside the block, whose
    monitor is made first; the runs that one starts in turn (corrective subproblems)
    keep their own words.

    Parameters
    ----------
    words : BudgetWords
        The caller's budget, its unit and how to count it.

    Yields
    ------
    None
        Inside the block, the next monitor made takes ``words``.
    """
    token = _BUDGET_WORDS.set([words])
    try:
        yield
    finally:
        _BUDGET_WORDS.reset(token)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v



def says_stop(answer: Any) -> bool:
    """Whether a callback's answer stops the run: ``False``, also numpy's (a comparison
    of numpy values, ``s.fun > 30``, gives ``np.False_``, which ``is False`` missed)."""
    return answer is False or (isinstance(answer, np.bool_) and not answer)

class Monitor:
    """Shared run bookkeeping.

    Parameters
    ----------
    method : str
        Name shown in messages and the result.
    tol : float
        Stop when the certified gap is at most ``tol``.
    rtol : float
        Relative tolerance: also stop when the certified gap satisfies
        ``gap <= rtol * (|f| - gap)``.  The optimal value ``f*`` lies in
        ``[f - gap, f]`` for a minimization (in ``[f - gap_x, f + gap_y]``
        for a saddle problem), so ``|f*| >= |f| - gap`` and the rule
        certifies ``f - f* <= gap <= rtol * |f*|``: a relative error of at
        most ``rtol`` in the optimal value.  Meant for objectives whose
        values are large (``f ~ 1e6``), where an absolute ``tol`` below the
        rounding of ``f`` cannot be met.
    max_iter : int
        Iteration budget.
    time_limit : float or None
        Wall-time budget in seconds.
    callback : callable, optional
        ``callback(state: IterationState) -> bool | None``; returning ``False`` (also
        numpy's) or raising ``StopIteration`` (scipy's convention) stops.
    verbose : bool or int
        Print a table; an int sets the printing period (``True``: about 20 rows).
    history_every : int
        Record a history row every this many iterations (and at the end).
    progress : bool
        Show a tqdm progress bar.
    """

    def __init__(
        self,
        method: str,
        *,
        tol: float = 1e-6,
        rtol: float = 0.0,
        max_iter: int = 1000,
        time_limit: float | None = None,
        callback: Callable[[IterationState], Any] | None = None,
        verbose: bool | int = False,
        history_every: int = 1,
        progress: bool = False,
    ) -> None:
        check_run_options(tol=tol, rtol=rtol, max_iter=max_iter, time_limit=time_limit,
                          callback=callback, verbose=verbose, history_every=history_every,
                          progress=progress)
        self.method = method
        self.tol = as_real(tol)
        self.rtol = as_real(rtol)
        self.last_fun = np.nan
        self.max_iter = int(max_iter)
        self.time_limit = None if time_limit is None else as_real(time_limit)
        self.callback = callback
        #: whether the callback stopped the run by raising StopIteration (the message says so)
        self.stopped_by_raise = False
        self.history_every = int(history_every)
        # numpy's bools are bools (int(np.True_) is 1: a row per iteration)
        if isinstance(verbose, (bool, np.bool_)):
            self.print_every = max(1, self.max_iter // 20) if verbose else 0
        else:
            self.print_every = int(verbose)
        self.history = History(_COLUMNS)
        # the rows' appender, and the extra columns its rows carry
        self._append_row = self.history.row_appender()
        self._row_extra: tuple[str, ...] = ()
        self.dual_bound = -np.inf
        self._printed: tuple[int, float, float] | None = None  # the last row printed
        #: whether ``fun - gap`` bounds the optimum (a convex objective): else the result
        #: reports no dual bound
        self.bounds = True
        self.last_gap = np.inf
        self._t0 = time.perf_counter()
        self._progress = bool(progress)
        self._bar: Any = None  # a tqdm bar, opened by start()
        self._header_done = False
        self._last_recorded = -1
        self._last_print = self._t0
        self._close_echo: Callable[[], None] | None = None
        slot = _BUDGET_WORDS.get()
        #: how the caller names the iteration budget (:func:`budget_words`), or None
        self.budget: BudgetWords | None = slot.pop() if slot else None
        self._last_extra: dict[str, Any] = {}  # the last row's extra columns

    def _spent(self, k: int) -> float | None:
        """The caller's budget units spent after iteration ``k`` (None: no words, or
        they do not tell)."""
        if self.budget is None:
            return None
        try:
            return float(self.budget.done(k, self._last_extra))
        except KeyError:
            return None

    def _after(self, k: int) -> str:
        """``after 12 iterations``, or in the caller's units (``after 6 passes``)."""
        spent = self._spent(k)
        if spent is None or self.budget is None:
            return f"after {k} iterations"
        return f"after {spent:g} {self.budget.unit}"

    def start(self) -> None:
        """Open the progress bar and the echo of compile notices (a verbose run also
        shows that a first call waits for numba), when the driver starts the run: a run
        refused in its set-up (a bad start) leaves neither open behind its exception.
        Both are closed by :meth:`finish`, or when the monitor is collected."""
        if self._progress and self._bar is None:
            from tqdm.auto import tqdm

            if self.budget is None:
                self._bar = tqdm(total=self.max_iter, desc=self.method, leave=False)
            else:
                self._bar = tqdm(total=self.budget.total, desc=self.method, leave=False,
                                 unit=self.budget.unit)
        if self.print_every and self._close_echo is None:
            self._close_echo = _ECHO.open()
            weakref.finalize(self, self._close_echo)

    # -- time ---------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since the monitor was created."""
        return time.perf_counter() - self._t0

    def out_of_time(self) -> bool:
        """Whether the time budget is spent."""
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    def time_left(self) -> float | None:
        """Seconds left of the time budget (``None`` without one; may be negative)."""
        if self.time_limit is None:
            return None
        return self.time_limit - self.elapsed()

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C asked the run to stop (at the end of the current iteration or
        block step)."""
        return INTERRUPTS.hits > 0

    def time_up(self, reserve: float) -> bool:
        """Whether to stop now to keep ``reserve`` more seconds of closing work (a final
        certificate) within the time budget: it is spent, or would be by then (always
        False without a budget)."""
        return self.out_of_time() or (self.time_limit is not None and
                                      self.elapsed() + reserve >= self.time_limit)

    # -- recording ----------------------------------------------------------
    def record(self, k: int, fun: float, gap: float, step_size: float = np.nan,
               force: bool = False, **extra: Any) -> None:
        """Note iteration ``k``: update bounds, history, printing and progress."""
        self.record_row(k, fun, gap, step_size, extra, force)

    def settle_dual_bound(self, bound: float) -> None:
        """Replace the dual bound gathered from the history's rows (the largest
        ``fun - gap``) by ``bound``: for an engine whose rows carry incrementally updated
        values that may drift above the exact ones (compiled pairwise), its largest
        ``f - gap`` over exact values."""
        self.dual_bound = float(bound)

    def check_dual_bound(self, fun: float, gap: float) -> None:
        """Refuse a dual bound above ``fun``, the value at the point returned, beyond
        rounding (``gap``: the closing certificate's, counted in the bound).

        For a convex ``f`` every row's ``f_k - gap_k`` is at most ``f* <= fun``: a larger
        one proves the objective is not convex (or its gradient or the oracle is wrong),
        and the result's clamp of ``fun - dual_bound`` at 0 would have made it a
        certificate of 0.  The allowance, ``1e-6`` of ``|fun| + |dual|`` and ``1e-12`` of
        the run's largest ``|f|``, covers an LP's or an eigensolver's tolerance in the
        gaps.

        Raises
        ------
        NonConvexError
            Naming the bound and the value.
        """
        dual = self.dual_bound
        if math.isfinite(gap) and math.isfinite(fun) and fun - gap > dual:
            dual = fun - gap
        if not (self.bounds and math.isfinite(dual) and math.isfinite(fun)):
            return
        top = max(abs(fun), abs(dual))
        if len(self.history):
            top = max(top, float(np.nanmax(np.abs(self.history["fun"]), initial=0.0)))
        if dual - fun <= 1e-6 * (abs(fun) + abs(dual)) + 1e-12 * top:
            return
        raise NonConvexError(
            f"the run's lower bound max_k (f_k - gap_k) = {dual:.10g} is above f = "
            f"{fun:.10g} at the point returned: for a convex objective every f_k - gap_k "
            "<= f* <= f, so the objective is not convex (or its gradient or the oracle is "
            "wrong) and its gaps certify nothing.  Declare it convex=False (a plain "
            "function given to minimize: FunctionObjective(fun, jac, convex=False)), and "
            "the gap measures stationarity")

    def record_row(self, k: int, fun: float, gap: float, step_size: float,
                   extra: dict[str, Any], force: bool = False) -> None:
        """:meth:`record` with the extra columns as a dict (the driver's call, once per
        iteration: no keyword packing)."""
        self.last_fun = fun
        self._last_extra = extra
        if math.isfinite(gap):
            self.last_gap = gap
            if math.isfinite(fun):
                bound = fun - gap
                if bound > self.dual_bound:  # max() without the call
                    self.dual_bound = bound
        row = force or k % self.history_every == 0
        if row and k == self._last_recorded:
            if force:  # the closing certificate at the last iteration's point: its row
                self.history.pop()  # replaces that iteration's (a certified gap, info)
            else:
                row = False
        if row:
            t = time.perf_counter() - self._t0
            if extra:
                names = tuple(extra)
                if names != self._row_extra:
                    self._append_row = self.history.row_appender(_COLUMNS + names)
                    self._row_extra = names
                self._append_row((k, t, fun, gap, step_size, *extra.values()))
            else:
                if self._row_extra:
                    self._append_row = self.history.row_appender()
                    self._row_extra = ()
                self._append_row((k, t, fun, gap, step_size))
            self._last_recorded = k
        if self.print_every and (k % self.print_every == 0 or force or
                                 time.perf_counter() - self._last_print >= _PRINT_SECONDS) \
                and (k, fun, gap) != self._printed:
            # the closing row of a run repeats its last iteration's, unless the closing
            # certificate changed it
            self._printed = (k, fun, gap)
            self._print_row(k, fun, gap, step_size, extra)
        if self._bar is not None:
            self._update_bar(k, gap)

    def _update_bar(self, k: int, gap: float) -> None:
        """The bar at iteration ``k``: its count (in the caller's units where it names
        them), and the gap, or on an iteration without a certificate the last one, said
        to be so (a gap of NaN said nothing)."""
        bar = self._bar
        spent = self._spent(k)
        if spent is None:
            bar.n = min(k, self.max_iter)
        else:
            spent = min(spent, bar.total)
            bar.n = int(spent) if float(spent).is_integer() else spent
        if math.isfinite(gap):
            bar.set_postfix(gap=f"{gap:.2e}", refresh=False)
        elif math.isfinite(self.last_gap):
            bar.set_postfix(last_gap=f"{self.last_gap:.2e}", refresh=False)
        else:
            bar.set_postfix(gap="none yet", refresh=False)
        bar.update(0)

    def _print_row(self, k: int, fun: float, gap: float, step: float,
                   extra: dict[str, Any]) -> None:
        if not self._header_done:
            cols = f"{'iter':>8} {'time(s)':>9} {'f(x)':>16} {'gap':>10} {'step':>10}"
            # a column as wide as its name (active_set_size, effective_passes, ...)
            extra_cols = "".join(f" {name:>{max(10, len(name))}}" for name in extra)
            print(f"{self.method}\n{cols}{extra_cols}", file=sys.stdout)
            self._header_done = True
        extras = "".join(f" {v:>{max(10, len(name))}.4g}" if isinstance(v, float)
                         else f" {v!s:>{max(10, len(name))}}" for name, v in extra.items())
        print(f"{k:>8d} {self.elapsed():>9.3f} {fun:>16.9g} {gap:>10.3e} {step:>10.3e}{extras}",
              file=sys.stdout, flush=True)
        self._last_print = time.perf_counter()

    # -- stopping -------------------------------------------------------------
    def converged(self, gap: float, fun: float) -> bool:
        """Whether the certified ``gap`` at a point of value ``fun`` meets ``tol`` or ``rtol``."""
        if gap <= self.tol:
            return True
        return bool(self.rtol > 0 and gap <= self.rtol * (abs(fun) - gap))

    def stop_reason(self, k: int, gap: float, state: IterationState | None = None,
                    fun: float | None = None) -> Status | None:
        """The reason to stop now, or ``None`` to continue.

        Checked in order: tolerance on the certified gap (``tol``, then
        ``rtol`` relative to ``fun``, by default the last recorded value),
        callback, iteration budget, time budget.
        """
        # converged() inline where it answers without rtol: one call less per iteration
        if gap <= self.tol or (self.rtol > 0 and
                               self.converged(gap, self.last_fun if fun is None else fun)):
            return Status.CONVERGED
        if self.callback is not None and state is not None:
            try:
                stop = says_stop(self.callback(state))
            except StopIteration:  # scipy's convention (since 1.11) for a callback's stop
                stop = self.stopped_by_raise = True
            if stop:
                return Status.CALLBACK_STOP
        if k >= self.max_iter:
            return Status.MAX_ITER
        if self.time_limit is not None and self.out_of_time():
            return Status.TIME_LIMIT
        return None

    def state(self, k: int, x: np.ndarray, fun: float, gap: float, gradient: np.ndarray | None,
              step_size: float, **info: Any) -> IterationState | None:
        """Build the callback's view, or ``None`` when there is no callback."""
        if self.callback is None:
            return None
        return IterationState(k, _readonly(x), fun, gap,
                              None if gradient is None else _readonly(gradient), step_size,
                              self.elapsed(), info)

    def message(self, status: Status, k: int, gap: float, detail: str = "") -> str:
        """Default wording of the stopping reason."""
        if status == Status.CONVERGED:
            # on an objective declared non-convex the gap bounds no f - f*: a stationarity
            # measure, which the message must not call a certificate
            what = "certified gap" if self.bounds else \
                "Frank-Wolfe gap (stationarity: f is not convex, no certificate)"
            if gap <= self.tol:
                return f"{what} {gap:.3e} <= tol {self.tol:.3e} {self._after(k)}"
            return (f"{what} {gap:.3e} <= rtol {self.rtol:.3e} x (|f| - gap) "
                    f"{self._after(k)}")
        if status == Status.MAX_ITER:
            if self.budget is not None:
                words = self.budget
                spent = self._spent(k)
                done = f" ({spent:g} {words.unit} done)" if spent is not None else ""
                return (f"budget {words.name}={words.total:g} spent{done}; "
                        f"{self._against_tol(gap)}")
            return f"iteration budget max_iter={self.max_iter} spent; {self._against_tol(gap)}"
        if status == Status.TIME_LIMIT:
            return (f"time_limit={self.time_limit}s reached {self._after(k)}; "
                    f"{self._against_tol(gap)}")
        if status == Status.CALLBACK_STOP:
            how = "raised StopIteration" if self.stopped_by_raise else "returned False"
            return f"callback {how} at iteration {k}"
        if status == Status.INTERRUPTED:
            told = f"gap {gap:.3e}" if math.isfinite(gap) else "gap not certified"
            return (f"interrupted (Ctrl-C) {self._after(k)}; returning the iterate, {told}")
        return detail or "error"

    def _against_tol(self, gap: float) -> str:
        """The gap of a run that a budget ended, compared with ``tol`` as it compares (a
        gap that meets tol ends a run as converged in the driver; a monitor used on its
        own may still meet it here)."""
        if math.isnan(gap):
            return "the gap at the point returned is not certified"
        relation = ">" if gap > self.tol else "<="
        return f"gap {gap:.3e} {relation} tol {self.tol:.3e}"

    def finish(self, *, x: np.ndarray, fun: float, gap: float, status: Status, nit: int,
               n_oracle_calls: int, n_gradient_calls: int, n_function_calls: int,
               message: str | None = None, active_set: Any = None,
               extra: dict[str, Any] | None = None) -> Result:
        """Close the progress bar and build the :class:`Result`."""
        if self._bar is not None:
            self._bar.close()
        if self._close_echo is not None:
            self._close_echo()
        if gap < 0.0:
            # rounding (a gap is >= 0): the result's gap >= 0 and best_gap <= gap, as
            # documented.  The engines pass no gap below 0 beyond rounding, which this
            # would make a certificate of 0: the loop refuses an exact oracle's
            # (OracleError), and its result after an error takes NaN for one
            gap = 0.0
        if extra and self.budget is not None:
            # the budget's units spent: the closing row's counters, else the result's
            self._last_extra = {**extra, **self._last_extra}
        if message is None:
            message = self.message(status, nit, gap)
        elif math.isnan(gap) and "certif" not in message:
            message += "; the gap at the point returned is not certified"
        if self.print_every:
            # the status as the caller names it: its budget, not the iterations' max_iter
            said = self.budget.name if self.budget is not None and \
                status == Status.MAX_ITER else status
            line = f"{self.method}: {said}: {message}"
            if self.budget is not None and self.budget.closing is not None:
                self.budget.closing(line)
            else:
                print(line, file=sys.stdout)
        dual = self.dual_bound if self.bounds else -np.inf
        # fmin: an uncertified gap (NaN) leaves fun - dual, itself a certificate for x
        best_gap = float(np.fmin(gap, fun - dual)) if np.isfinite(dual) and np.isfinite(fun) \
            else gap
        return Result(
            x=x, fun=fun, gap=gap,
            best_gap=max(best_gap, 0.0) if np.isfinite(best_gap) else best_gap,
            dual_bound=dual, status=status, message=message, nit=nit,
            n_oracle_calls=n_oracle_calls, n_gradient_calls=n_gradient_calls,
            n_function_calls=n_function_calls, time=self.elapsed(), history=self.history,
            method=self.method, active_set=active_set, extra=extra or {},
        )

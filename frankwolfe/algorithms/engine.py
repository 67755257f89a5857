"""The driver every method runs on: outer iterations, stopping, certificates, result.

A method is an :class:`Engine`: it reports the state at the top of each
outer iteration (:meth:`Engine.observe`) and performs one outer iteration
(:meth:`Engine.advance`): one Frank-Wolfe step for the single-domain
variants (:mod:`.loop`), one pass of block steps for block-coordinate FW
(:mod:`.bcfw`).  :func:`drive` does the rest once for all of them: history,
printing and progress, the callback, the stopping rules, non-finite values,
the closing certificate and the :class:`~frankwolfe.Result`.
"""

from __future__ import annotations

import math
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ExecutorError, NonConvexError
from ..monitor import INTERRUPTS, Monitor
from ..result import Result, Status

__all__ = ["Engine", "Observation", "drive", "name_role"]


@dataclass(slots=True)
class Observation:
    """What an engine reports at the top of outer iteration ``k``.

    ``gap`` is a certificate only when ``certified``; otherwise the history
    shows NaN and the stopping rule ignores it.  ``info`` becomes history
    columns (and the callback's ``info`` unless ``state_info`` is given).
    ``time_up``: the engine stopped its last outer iteration early for the
    time limit (keeping time for the closing certificate).  ``budget_spent``: the
    engine's own budget, counted in a unit finer than outer iterations (e.g. oracle
    calls, when an iteration costs a varying number of passes over the data), has no
    room for another outer iteration; the run stops with ``Status.MAX_ITER`` (or
    ``Status.CONVERGED`` when the certificate that closes the run meets tol).
    """

    fun: float
    gap: float
    certified: bool
    x: np.ndarray
    gradient: np.ndarray | None = None
    step_size: float = np.nan
    info: dict[str, Any] = field(default_factory=dict)
    state_info: dict[str, Any] | None = None
    time_up: bool = False
    budget_spent: bool = False


class Engine(ABC):
    """One run of a method, as the driver sees it."""

    #: the engine keeps the time limit itself, mid-iteration (a BCFW pass, compiled
    #: chunks); otherwise the driver starts no outer iteration that the last one's
    #: duration says would end past the limit
    times_itself: bool = False

    #: set by the driver when a ``KeyboardInterrupt`` cut an outer iteration short:
    #: ``outputs(error=True)`` then returns the point from before that iteration
    cut_short: bool = False

    #: set by the driver when a ``KeyboardInterrupt`` stopped the run: the oracles did
    #: not fail, so ``outputs(error=True)`` may certify the point it returns
    interrupted: bool = False

    #: set by the driver when an exception came after ``observe(k)`` returned and before
    #: ``advance(k)`` began (the callback's, a stop test's): the engine's point is whole and
    #: observed, and ``outputs(error=True)`` may return it rather than the one before
    observed: bool = False

    #: set by the driver on a second Ctrl-C: ``outputs(error=True)`` then calls no oracle
    #: (the user asked twice not to wait; the point returned is left uncertified)
    hurried: bool = False

    @abstractmethod
    def observe(self, k: int) -> Observation | str:
        """The state at the top of outer iteration ``k``, or a message when a value is
        not finite (the run then stops with ``Status.ERROR``)."""

    @abstractmethod
    def advance(self, k: int, monitor: Monitor) -> int | None:
        """Outer iteration ``k`` (the monitor answers ``out_of_time()`` mid-way).

        Returns how many iterations it counts for (``None``: one); an engine
        running a chunk of compiled steps per outer iteration counts its steps."""

    @abstractmethod
    def certify(self, last: Observation) -> tuple[float, float]:
        """``(f, gap)`` certified at the point to return, when ``last`` was not certified."""

    @abstractmethod
    def outputs(self, error: bool) -> dict[str, Any]:
        """Keywords of :meth:`Monitor.finish`: ``x``, ``fun`` and ``gap`` (only when
        ``error``: the last good point, and ``nit``, its iterations, when it is an
        earlier iterate), the counters, ``active_set``, ``extra``."""

    def info(self) -> dict[str, Any]:
        """History columns of the closing row."""
        return {}

    def closing(self, fun: float, gap: float) -> tuple[float, float]:
        """``(f, gap)`` of the point a run returns, given the loop's own: an engine whose
        values drift from exact ones (incremental trackers) checks them here.  Default:
        as they are."""
        return fun, gap

    def closing_seconds(self) -> float:
        """Seconds the closing certificate (:meth:`certify`) is expected to take when the
        run stops after the next outer iteration.  Under a time limit the driver starts no
        outer iteration that would end past the budget less this reserve (an engine that
        :attr:`times_itself` keeps its own).  Default 0: every observation is certified,
        or a certificate costs no more than what an iteration already does."""
        return 0.0


#: the stops that a closing certificate meeting tol turns into convergence: those of a
#: budget or a stall, not the user's (a callback's stop, Ctrl-C)
_MET_AT_CLOSE = frozenset({Status.STALLED, Status.MAX_ITER, Status.TIME_LIMIT})

#: outer iterations of zero steps, without a smaller certified gap, that end a run as
#: stalled (a deterministic method then repeats itself; a randomized one has had its
#: chances)
STALL_WINDOW = 50


class _Stall:
    """Zero steps while the certified gap does not decrease, over :data:`STALL_WINDOW`
    outer iterations in a row (the driver calls :meth:`stalled` on zero steps only, and
    clears :attr:`zeros` on the others: a float comparison per iteration)."""

    __slots__ = ("zeros", "before", "best")

    def __init__(self) -> None:
        self.zeros = 0
        self.before = np.inf  # the last certified gap before the zero steps began
        self.best = np.inf  # the smallest certified gap since

    def stalled(self, obs: Observation, last_gap: float) -> bool:
        if self.zeros == 0:
            self.before, self.best = last_gap, np.inf
        self.zeros += 1
        if obs.certified and obs.gap < self.best:
            self.best = obs.gap
        return self.zeros >= STALL_WINDOW and not self.best < self.before

    def message(self, k: int) -> str:
        return (f"stalled at iteration {k}: the last {self.zeros} steps were of size 0 and "
                f"the certified gap stayed at {min(self.best, self.before):.3e} (the iterate "
                "no longer moves; the gap is likely at the rounding floor of the method's "
                "subproblem, while f - f* may be far smaller); raise tol, or try another "
                "method")


#: the user-facing classes, beyond LMO and Objective, whose methods an error is named
#: after (:func:`name_role`): the applications' extension points, which the core does
#: not import
_ROLES: dict[type, str] = {}


def name_role(cls: type, role: str) -> None:
    """Name an error raised inside a method of ``cls`` (or of a subclass) as ``the <role>
    (ClassName)`` in the note the driver adds to it, as it names the LMO, the objective
    and the callback: for an application's extension point, e.g. the structured SVM's
    models (``name_role(StructuredModel, "model")``)."""
    _ROLES[cls] = role


def _culprit(err: BaseException) -> str:
    """Which user-facing call raised ``err``: the innermost LMO, objective, model or
    callback among the frames the traceback went through."""
    from ..lmo.base import LMO
    from ..objectives.base import Objective, Tracker

    who = ""
    for frame, _ in traceback.walk_tb(err.__traceback__):
        code = frame.f_code
        if code is Monitor.stop_reason.__code__:
            who = "the callback"
            continue
        owner = frame.f_locals.get("self")
        if owner is None:
            continue
        if isinstance(owner, LMO):
            who = f"the LMO ({type(owner).__name__})"
        elif isinstance(owner, (Objective, Tracker)):
            obj = owner.objective if isinstance(owner, Tracker) else owner
            who = f"the objective ({type(obj).__name__})"
        else:
            role = next((word for cls, word in _ROLES.items() if isinstance(owner, cls)), None)
            if role is not None:
                who = f"the {role} ({type(owner).__name__})"
    return who


def _stopped(engine: Engine, monitor: Monitor, status: Status, k: int,
             message: str | None = None) -> Result:
    """The result of a run that an error or a raised ``KeyboardInterrupt`` stopped in
    iteration ``k``: the engine's last good point, ``nit`` its iterations (the engine's
    ``nit`` when it returns an earlier iterate)."""
    out = _error_outputs(engine)
    return monitor.finish(status=status, nit=out.pop("nit", k), message=message, **out)


def _error_outputs(engine: Engine) -> dict[str, Any]:
    """``engine.outputs(error=True)``; where a ``KeyboardInterrupt`` lands in the oracle
    calls that certify the point returned (an oracle or a handler of the user's raising
    it again), the outputs as after a second Ctrl-C (:attr:`Engine.hurried`: no oracle
    called, the point's gap NaN unless certified before), rather than no result."""
    try:
        return engine.outputs(error=True)
    except KeyboardInterrupt:
        if engine.hurried:
            raise
        engine.hurried = True
        return engine.outputs(error=True)


def _hurried_result(err: KeyboardInterrupt, engine: Engine, monitor: Monitor,
                    k: int) -> None:
    """``err.result``: the run so far, where a second Ctrl-C stopped it (see
    :attr:`Engine.hurried`); nothing when the engine's state cannot be read or a third
    Ctrl-C lands while it is read."""
    try:
        result = _stopped(engine, monitor, Status.INTERRUPTED, k)
    except (Exception, KeyboardInterrupt):
        return
    told = f"gap {result.gap:.3e}" if math.isfinite(result.gap) else "its gap not certified"
    result.message = (f"stopped by a second Ctrl-C during iteration {k}: the last good "
                      f"iterate, after {result.nit} iterations, {told}")
    err.result = result  # type: ignore[attr-defined]
    err.add_note(f"frankwolfe: a second Ctrl-C stopped {monitor.method!r} during iteration "
                 f"{k}; err.result holds the run so far (the last good iterate, {told})")


def _attach(err: BaseException, method: str, k: int, result: Result | None) -> None:
    """A note naming the method, the iteration and the call (PEP 678), and the run so far
    as ``err.result``."""
    who = _culprit(err)
    where = f" in {who}" if who else ""
    err.add_note(f"frankwolfe: raised{where} at iteration {k} of {method!r}; "
                 "err.result holds the run so far (its last good iterate)")
    if result is not None:
        try:
            err.result = result  # type: ignore[attr-defined]
        except AttributeError:  # an exception type without a __dict__
            pass


def drive(engine: Engine, monitor: Monitor) -> Result:
    """Run ``engine`` until the monitor says stop; the :class:`~frankwolfe.Result`.

    A :class:`~frankwolfe.errors.NonConvexError` or
    :class:`~frankwolfe.errors.ExecutorError` raised by the engine leaves with the
    result so far (``err.result``: the last good point).  Any other exception (from
    the objective, the LMO, the callback, a model) leaves with a note naming the method,
    the iteration and the call (``err.__notes__``), and the result so far as
    ``err.result`` too.

    Ctrl-C (SIGINT, in the main thread) ends the run at the end of the current
    iteration with ``Status.INTERRUPTED`` and the certified iterate; a second Ctrl-C
    raises ``KeyboardInterrupt`` at once, with the last good iterate as ``err.result``
    (its gap NaN unless certified earlier: certifying it now would call the oracles the
    user chose not to wait for).  Zero steps without a smaller certified gap for
    :data:`STALL_WINDOW` iterations end it with ``Status.STALLED``.
    """
    k = 0
    # without a callback no IterationState is built (the loop's cost on small problems)
    watched = monitor.callback is not None
    state = None
    stall = _Stall()
    limit = monitor.time_limit
    timed = limit is not None and not engine.times_itself
    cycle = 0.0  # seconds of the last outer iteration (advance, observe, bookkeeping)
    tick = 0.0
    # bound once: on a small problem the loop's own lookups count
    observe, advance = engine.observe, engine.advance
    record_row, stop_reason = monitor.record_row, monitor.stop_reason
    nan, inf = np.nan, np.inf
    monitor.start()  # before the Ctrl-C handler: a bar that cannot open leaves none behind
    INTERRUPTS.open()
    stepping = observed = False
    try:
        try:
            while True:
                obs = observe(k)
                if isinstance(obs, str):
                    return _stopped(engine, monitor, Status.ERROR, k, message=obs)
                observed = True
                certified = obs.certified
                gap = obs.gap if certified else nan
                record_row(k, obs.fun, gap, obs.step_size, obs.info)
                if watched:
                    state = monitor.state(k, obs.x, obs.fun, gap, obs.gradient, obs.step_size,
                                          **(obs.info if obs.state_info is None
                                             else obs.state_info))
                status = stop_reason(k, gap if certified else inf, state)
                if status is None:
                    if obs.time_up:
                        status = Status.TIME_LIMIT
                    elif obs.budget_spent:
                        status = Status.MAX_ITER
                    elif INTERRUPTS.hits:
                        status = Status.INTERRUPTED
                if obs.step_size == 0.0:
                    if status is None and stall.stalled(obs, monitor.last_gap):
                        status = Status.STALLED
                elif stall.zeros:
                    stall.zeros = 0
                if timed and status is None:
                    now = monitor.elapsed()
                    if k:
                        cycle = now - tick
                    tick = now
                    # the next iteration, and the certificate that closes the run after
                    # it, would end past the budget: stop now, before it
                    if limit is not None and now + cycle + engine.closing_seconds() > limit:
                        status = Status.TIME_LIMIT
                if status is not None:
                    break
                stepping, observed = True, False
                ran = advance(k, monitor)
                stepping = False
                k += 1 if ran is None else ran
            stopped = monitor.elapsed()
            fun, gap = (obs.fun, obs.gap) if obs.certified else engine.certify(obs)
            drifted = None
            closed = engine.closing(fun, gap)
            if closed != (fun, gap):
                fun, gap = closed
                if status == Status.CONVERGED and not monitor.converged(gap, fun):
                    # the loop's values met tol, the exact ones at the point do not: the
                    # run is at the rounding floor of this problem's scale
                    status = Status.STALLED
                    drifted = (f"the loop's incremental values met tol, but the exact gap at "
                               f"the point returned is {gap:.3e} after {k} iterations: "
                               "rounding at this problem's scale")
            monitor.check_dual_bound(fun, gap)
            if status in _MET_AT_CLOSE and monitor.converged(gap, fun):
                # the certificate that closes the run (taken there: steps of size 0 or a
                # budget between certificates; or the exact one after drifted values)
                # meets tol: converged, whichever rule ended the loop (FCFW with
                # blocks_per_step certifies only there)
                status = Status.CONVERGED
        except (NonConvexError, ExecutorError) as err:
            err.result = _stopped(engine, monitor, Status.ERROR, k, message=str(err))
            raise
        except KeyboardInterrupt as err:
            # a KeyboardInterrupt not from the flag (a handler of the user's, or one raised
            # by hand) may have cut a step short: the last good iterate, before that step;
            # one in observe(k) left x_k whole (its k iterations are the result's nit)
            engine.cut_short, engine.observed = stepping, observed
            engine.interrupted = True
            if INTERRUPTS.hits < 2:
                return _stopped(engine, monitor, Status.INTERRUPTED, k)
            # the second Ctrl-C: abort at once, the last good iterate (uncertified, no
            # oracle called) riding on the exception
            engine.hurried = True
            _hurried_result(err, engine, monitor, k)
            raise
        except Exception as err:
            engine.cut_short, engine.observed = stepping, observed
            try:
                result: Result | None = _stopped(engine, monitor, Status.ERROR, k,
                                                 message=f"{type(err).__name__}: {err}")
            except Exception:  # the engine's state is past reading: the note alone
                result = None
            _attach(err, monitor.method, k, result)
            raise
        monitor.record(k, fun, gap, obs.step_size, force=True, **engine.info())
        message = drifted or (stall.message(k) if status == Status.STALLED else None)
        res = monitor.finish(status=status, nit=k, fun=fun, gap=gap, message=message,
                             **engine.outputs(error=False))
        # the iterations' time, without the closing certificate and the result's assembly
        res.extra.setdefault("loop_time", stopped)
        return res
    finally:
        INTERRUPTS.close()

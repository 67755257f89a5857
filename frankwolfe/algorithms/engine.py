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

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ExecutorError, NonConvexError
from ..monitor import Monitor
from ..result import Result, Status

__all__ = ["Engine", "Observation", "drive"]


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
    room for another outer iteration; the run stops with ``Status.MAX_ITER``.
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
        ``error``: the last good point), the counters, ``active_set``, ``extra``."""

    def info(self) -> dict[str, Any]:
        """History columns of the closing row."""
        return {}


def drive(engine: Engine, monitor: Monitor) -> Result:
    """Run ``engine`` until the monitor says stop; the :class:`~frankwolfe.Result`.

    A :class:`~frankwolfe.errors.NonConvexError` or
    :class:`~frankwolfe.errors.ExecutorError` raised by the engine leaves with the
    result so far (``err.result``: the last good point).
    """
    k = 0
    # without a callback no IterationState is built (the loop's cost on small problems)
    watched = monitor.callback is not None
    state = None
    try:
        while True:
            obs = engine.observe(k)
            if isinstance(obs, str):
                return monitor.finish(status=Status.ERROR, nit=k, message=obs,
                                      **engine.outputs(error=True))
            gap = obs.gap if obs.certified else np.nan
            monitor.record_row(k, obs.fun, gap, obs.step_size, obs.info)
            if watched:
                state = monitor.state(k, obs.x, obs.fun, gap, obs.gradient, obs.step_size,
                                      **(obs.info if obs.state_info is None else obs.state_info))
            status = monitor.stop_reason(k, obs.gap if obs.certified else np.inf, state)
            if status is None and obs.time_up:
                status = Status.TIME_LIMIT
            if status is None and obs.budget_spent:
                status = Status.MAX_ITER
            if status is not None:
                break
            ran = engine.advance(k, monitor)
            k += 1 if ran is None else ran
    except (NonConvexError, ExecutorError) as err:
        err.result = monitor.finish(
            status=Status.ERROR, nit=k, message=str(err), **engine.outputs(error=True))
        raise
    fun, gap = (obs.fun, obs.gap) if obs.certified else engine.certify(obs)
    monitor.record(k, fun, gap, obs.step_size, force=True, **engine.info())
    return monitor.finish(status=status, nit=k, fun=fun, gap=gap, **engine.outputs(error=False))

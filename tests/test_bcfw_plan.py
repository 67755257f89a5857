"""One place chooses a BCFW run's pass and says why (extra["engine_reason"]); executors
declare compiled-round capabilities by class, and the pass budget asks the monitor."""

from __future__ import annotations

import pytest
from test_bcfw import simplices_problem

from frankwolfe import (
    DaskExecutor,
    Executor,
    SerialExecutor,
    ThreadExecutor,
    block_coordinate_frank_wolfe,
    debug,
)
from frankwolfe.monitor import Monitor
from frankwolfe.parallel import InProcessRounds, RowRounds


@pytest.fixture(scope="module")
def problem():
    return simplices_problem(12, 3, seed=2)


class _MapOnly(Executor):
    """A user's executor: atoms only, no compiled-round capability."""

    def map(self, which, directions):
        return [self.blocks[i](d) for i, d in zip(which, directions)]


def test_the_reason_names_the_choice(problem):
    f, dom = problem
    kw = dict(max_iter=2, tol=0.0, random_state=0)
    off = block_coordinate_frank_wolfe(f, dom, compiled=False, **kw)
    assert off.extra["engine"] == "python" and off.extra["engine_reason"] == "compiled=False"
    with debug(False):
        on = block_coordinate_frank_wolfe(f, dom, **kw)
        user = block_coordinate_frank_wolfe(f, dom, batch_size=4, executor=_MapOnly(), **kw)
    assert on.extra["engine"] == "compiled" and "compiled pass" in on.extra["engine_reason"]
    assert user.extra["engine"] == "python"
    assert user.extra["engine_reason"].startswith("mini-batch rounds on _MapOnly()")


def test_capabilities_are_mixins_not_flags():
    assert isinstance(SerialExecutor(), InProcessRounds)
    assert isinstance(ThreadExecutor(2), InProcessRounds)
    assert issubclass(DaskExecutor, RowRounds) and not issubclass(DaskExecutor, InProcessRounds)
    assert not isinstance(_MapOnly(), (InProcessRounds, RowRounds))
    assert not any(hasattr(Executor, a) for a in ("in_process", "serves_rows", "chunks", "rows"))


def test_monitor_time_up_keeps_the_reserve():
    assert not Monitor("m").time_up(1e9)  # no time limit: never
    m = Monitor("m", time_limit=60.0)
    assert not m.time_up(0.0) and m.time_up(60.0)

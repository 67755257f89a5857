"""The monitor's progress bar and compile-notice echo open when the driver starts a run
and close when it ends: a run refused in its set-up leaves neither behind its exception
(in a notebook the traceback keeps them alive)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import frankwolfe as fw


def _open_bars() -> int:
    tqdm = pytest.importorskip("tqdm")
    return len(getattr(tqdm.tqdm, "_instances", ()))


def _echo_handlers() -> list[logging.Handler]:
    return list(logging.getLogger("frankwolfe").handlers)


@pytest.mark.parametrize("method", ["fw", "away", "fcfw", "compiled_pairwise"])
def test_a_refused_start_opens_no_bar_and_no_echo(method):
    before_bars, before_echo = _open_bars(), _echo_handlers()
    with pytest.raises(fw.InfeasibleError) as info:
        fw.minimize(fw.LeastSquares(np.eye(3), np.ones(3)), fw.ProbabilitySimplex(dim=3),
                    method, x0=np.array([5.0, 0, 0]), progress=True, verbose=True)
    assert info.value is not None  # the exception (and its frames) still alive here
    assert _open_bars() == before_bars
    assert _echo_handlers() == before_echo


def test_a_run_opens_its_bar_and_closes_it():
    before = _open_bars()
    seen = []
    res = fw.frank_wolfe(fw.LeastSquares(np.eye(3), np.array([1.0, 0.5, 0.2])),
                         fw.ProbabilitySimplex(dim=3), progress=True, max_iter=5, tol=0.0,
                         step_size="agnostic", callback=lambda s: seen.append(_open_bars()))
    assert res.nit == 5 and seen and all(n == before + 1 for n in seen)
    assert _open_bars() == before

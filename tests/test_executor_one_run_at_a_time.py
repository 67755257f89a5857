"""An executor serves one run at a time: a second run that starts while a run holds it
raises ExecutorError (the runs stored their blocks, pool and shards on the one object: the
first run's oracles were answered by the other run's blocks, or its pool was shut down
under it); runs one after the other still share it, and the refused run leaves the
holding run alone."""

from __future__ import annotations

import copy
import pickle
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.errors import ExecutorError
from frankwolfe.parallel import Executor

NB, DIM = 10, 4


def _run(radius: float, ex, callback=None) -> float:
    """A run whose blocks each sum to ``radius`` at every iterate: ``x.sum()`` is
    ``NB * radius`` whatever the iterate, unless the oracles answer from other blocks."""
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=DIM, radius=radius) for _ in range(NB)])
    f = fw.QuadraticObjective(np.eye(NB * DIM), -np.ones(NB * DIM))
    kw = {} if callback is None else {"callback": callback}
    res = fw.block_coordinate_frank_wolfe(f, dom, batch_size=5, executor=ex, compiled=False,
                                          max_iter=30, tol=0.0, random_state=0, **kw)
    return float(res.x.sum())


class _Gate:
    """A callback that holds its run (between the executor's start and close) until told
    to go on."""

    def __init__(self) -> None:
        self.inside = threading.Event()
        self.go_on = threading.Event()

    def __call__(self, state) -> None:
        self.inside.set()
        assert self.go_on.wait(30)


@pytest.mark.parametrize("make", [fw.SerialExecutor, lambda: fw.ThreadExecutor(2)],
                         ids=["serial", "threads"])
def test_a_second_run_while_one_holds_the_executor_raises(make):
    ex = make()
    gate = _Gate()
    with ThreadPoolExecutor(1) as tp:
        first = tp.submit(_run, 1.0, ex, gate)
        assert gate.inside.wait(30)
        try:
            with pytest.raises(ExecutorError, match="in use by another run") as info:
                _run(3.0, ex)
        finally:
            gate.go_on.set()
        # the refused run's clean-up (the solver aborts its schedule) left the pool and
        # blocks of the run that holds the executor alone
        assert first.result(30) == pytest.approx(NB * 1.0, abs=1e-9)
    assert "own executor" in str(info.value) and "n_jobs" in str(info.value)
    # given back at close: the next runs share it again (a closed pool is rebuilt)
    assert _run(3.0, ex) == pytest.approx(NB * 3.0, abs=1e-9)
    assert _run(1.0, ex) == pytest.approx(NB * 1.0, abs=1e-9)


def test_concurrent_runs_on_one_executor_never_mix_their_blocks():
    """The race of the report: each run is right, or refused."""
    import sys

    ex = fw.ThreadExecutor(2)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(2) as tp:
            for _ in range(5):
                futures = [(r, tp.submit(_run, r, ex)) for r in (1.0, 3.0)]
                for r, fut in futures:
                    try:
                        assert fut.result(60) == pytest.approx(NB * r, abs=1e-9)
                    except ExecutorError as err:
                        assert "in use by another run" in str(err)
    finally:
        sys.setswitchinterval(switch)
    assert _run(3.0, ex) == pytest.approx(NB * 3.0, abs=1e-9)


def test_a_run_that_fails_gives_the_executor_back():
    ex = fw.SerialExecutor()

    def boom(state):
        raise RuntimeError("the user's callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        _run(1.0, ex, boom)
    assert _run(2.0, ex) == pytest.approx(NB * 2.0, abs=1e-9)


def test_a_users_close_without_super_still_gives_it_back():
    class Own(Executor):
        closed = 0

        def map(self, which, directions):
            return [self.blocks[i](d) for i, d in zip(which, directions)]

        def close(self) -> None:  # no super().close()
            self.closed += 1

    ex = Own()
    assert _run(1.0, ex) == pytest.approx(NB * 1.0, abs=1e-9)
    assert _run(2.0, ex) == pytest.approx(NB * 2.0, abs=1e-9)
    assert ex.closed == 2


def test_a_claim_by_hand_then_a_second_claim_then_release():
    ex = fw.SerialExecutor()
    ex.claim()
    with pytest.raises(ExecutorError, match=r"SerialExecutor\(\) is in use"):
        ex.claim()
    with pytest.raises(ExecutorError, match="in use by another run"):
        _run(1.0, ex)  # a run refused before its start: the holder keeps the executor
    with pytest.raises(ExecutorError):
        ex.claim()
    ex.release()
    ex.claim()
    ex.release()
    assert _run(1.0, ex) == pytest.approx(NB * 1.0, abs=1e-9)


def test_a_copy_of_an_executor_in_use_is_free():
    """sklearn's clone deep-copies an estimator's executor; pickle ships one."""
    ex = fw.SerialExecutor()
    ex.claim()
    try:
        for other in (copy.deepcopy(ex), pickle.loads(pickle.dumps(ex))):
            other.claim()
            other.release()
    finally:
        ex.release()


def test_grid_search_on_threads_clones_the_executor():
    """GridSearchCV on threads fits clones at once: each has its own copy of the
    executor, so none is refused."""
    from joblib import parallel_backend
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

    X, Y = make_chain(30, n_states=3, n_features=4, random_state=1)
    svm = StructuredSVM(ChainModel(3, 4), max_passes=3, batch_size=4, random_state=0,
                        executor=fw.ThreadExecutor(2))
    assert clone(svm).executor is not svm.executor
    search = GridSearchCV(svm, {"lam": [1e-2, 1e-3]}, cv=2, n_jobs=2, error_score="raise")
    with parallel_backend("threading", n_jobs=2), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, Y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))

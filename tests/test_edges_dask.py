"""Every way a Dask cluster can fail during a run ends in ``ExecutorError`` carrying the
run's last good iterate, within a deadline: the scheduler killed, the client closed from
another thread, every worker killed, a worker that never answers.  The clusters are real
(a `dask scheduler` and `dask worker` processes on 127.0.0.1, or an in-process
``LocalCluster``); the iterates are checked against serial runs of the same seed."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from types import SimpleNamespace

import numpy as np
import pytest
from dask_processes import dask_processes, live_workers

import frankwolfe as fw
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.parallel import dask as fw_dask

distributed = pytest.importorskip("distributed")

N_EX = 60


class _Cluster:
    """The module's `dask scheduler` and single `dask worker` process on 127.0.0.1
    (workers without nannies: a killed worker stays dead; every wait within 30 s): each
    test loses a part of it, and the next test gets the parts it needs, started again
    (a worker, or the whole cluster after a killed scheduler) instead of a cluster of
    its own."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.procs = None

    def __call__(self):
        """``(client, scheduler process, [the live worker])``"""
        if self.procs is not None and self.procs[1].poll() is not None:  # scheduler killed
            self.close()
        if self.procs is None:
            self.procs = self.stack.enter_context(dask_processes(1, timeout=30))
        client, scheduler, workers = self.procs
        return client, scheduler, live_workers(client, workers, 1, timeout=30)

    def close(self) -> None:
        self.procs = None
        self.stack.close()


@pytest.fixture(scope="module")
def _processes():
    cluster = _Cluster()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster(_processes):
    return _processes()


@pytest.fixture(scope="module")
def chain():
    return make_chain(N_EX, n_states=3, n_features=4, random_state=0)


class _FailingAt(StructuredSVM):
    """A StructuredSVM whose ``fail`` runs at its ``at``-th history evaluation (one per
    pass with ``eval_every=1``): the cluster is lost between rounds of the fit."""

    def _evaluate(self, *args, **kwargs):
        self._n_eval = getattr(self, "_n_eval", 0) + 1
        if self._n_eval == self.at:
            self.fail()
        return super()._evaluate(*args, **kwargs)


def _svm(client, **kw) -> _FailingAt:
    # the Python block engine: no numba compilation on the workers (each test < 30 s)
    return _FailingAt(ChainModel(3, 4), lam=1.0 / N_EX, batch_size=20, executor=client,
                      compiled=False, max_passes=40, tol=0.0, gap_every=1, eval_every=1,
                      random_state=0, **kw)


def _check_last_good(svm, err, chain, passes):
    """``err.result`` is the serial run's iterate after ``passes`` passes, and the
    estimator kept it (``w_``, ``result_``)."""
    X, Y = chain
    res = err.result
    assert res is not None and not res.success and res.status == fw.Status.ERROR
    assert res.nit == passes
    dom = SSVMDual(ChainModel(3, 4), X, Y, 1.0 / N_EX, compiled=False)
    ref = fw.block_coordinate_frank_wolfe(dom.dual_objective(), dom, batch_size=20,
                                          executor=fw.SerialExecutor(), max_iter=passes,
                                          tol=0.0, gap_every=1, random_state=0,
                                          averaging="weighted", certify="average")
    np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-12)
    assert svm.result_ is res
    np.testing.assert_array_equal(svm.w_, res.x[:-1])


def test_client_closed_from_another_thread_during_a_fit_is_an_executor_error(cluster, chain):
    """The client closed while a round is under way (no FuturesCancelledError, no
    "IOLoop is closed")."""
    X, Y = chain
    # the client's loss: one worker will do; a client of its own (the cluster lives on)
    with distributed.Client(cluster[0].scheduler.address, timeout="30s") as client:
        svm = _svm(client)
        svm.at = 2
        svm.fail = lambda: threading.Timer(0.01, client.close).start()
        with pytest.raises(fw.ExecutorError, match="lost") as info:
            svm.fit(X, Y)
    res = info.value.result
    assert res is not None and res.nit >= 2
    np.testing.assert_array_equal(svm.w_, res.x[:-1])


def _fit_losing(chain, client, at, kill, match):
    """A fit through ``client`` whose pass ``at`` runs ``kill()`` (the cluster's processes
    killed): an ExecutorError matching ``match`` within 20 s of the loss, with the last
    good iterate."""
    X, Y = chain
    svm = _svm(client)
    svm.at = at
    lost = []  # when the cluster was lost: the deadline counts from there

    def fail():
        kill()
        lost.append(time.perf_counter())

    svm.fail = fail
    with pytest.raises(fw.ExecutorError, match=match) as info:
        svm.fit(X, Y)
    assert time.perf_counter() - lost[0] < 20.0
    _check_last_good(svm, info.value, chain, at)


def test_every_worker_killed_is_an_executor_error(cluster, chain):
    client, _, workers = cluster  # every worker: the cluster's one

    def kill():
        for w in workers:
            w.kill()
            w.wait(timeout=10)

    _fit_losing(chain, client, 2, kill, "no workers left")


def test_scheduler_killed_during_a_cluster_fit_is_an_executor_error(cluster, chain):
    """Killing the scheduler used to hang the fit (a wait without a deadline)."""
    client, scheduler, _ = cluster  # the scheduler's loss: one worker will do

    def kill():
        scheduler.kill()
        scheduler.wait(timeout=10)

    _fit_losing(chain, client, 3, kill, "lost")


_RELEASE = threading.Event()  # set: the hanging oracle returns
_HANG = threading.Event()  # set: the oracle hangs (until _RELEASE, at most 20 s)


class _Hanging(fw.ProbabilitySimplex):
    """A block whose oracle stops answering once ``_HANG`` is set (an in-process worker
    sees this module's events)."""

    def __call__(self, direction):
        if _HANG.is_set():
            _RELEASE.wait(20)
        return super().__call__(direction)


def test_a_worker_that_never_answers_meets_the_deadline():
    f = fw.QuadraticObjective(np.eye(20), -0.3 * np.ones(20))
    dom = fw.ProductDomain([_Hanging(dim=2) for _ in range(10)])
    kw = dict(batch_size=5, tol=0.0, random_state=0)
    ref = fw.block_coordinate_frank_wolfe(f, dom, max_iter=2, **kw)  # 2 passes, serial
    _HANG.clear()
    _RELEASE.clear()
    try:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cl, \
                distributed.Client(cl) as client:
            ex = fw.DaskExecutor(client, timeout=1.5)

            def hang(state):
                if state.k == 2:
                    _HANG.set()

            tic = time.perf_counter()
            with pytest.raises(fw.ExecutorError, match=r"did not finish within 1\.5 s") as info:
                fw.block_coordinate_frank_wolfe(f, dom, executor=ex, max_iter=5,
                                                callback=hang, **kw)
            assert 1.4 < time.perf_counter() - tic < 15.0
            _RELEASE.set()
    finally:
        _RELEASE.set()
    res = info.value.result
    assert not res.success and res.nit == 2
    np.testing.assert_array_equal(res.x, ref.x)


def test_a_round_waiting_for_the_round_under_way_meets_the_deadline():
    """Asynchronous rounds may ask from two threads; the second waits for the first, and
    that wait has the round's deadline too (never a hang)."""
    client = SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")
    ex = fw.DaskExecutor(client, timeout=0.3)
    assert ex._one_round.acquire(timeout=1)  # a round under way on another thread
    try:
        tic = time.perf_counter()
        with pytest.raises(fw.ExecutorError, match=r"another thread did not finish within 0\.3 s"):
            ex._ask(np.array([0]), np.zeros(3), True)
        assert 0.25 < time.perf_counter() - tic < 5.0
    finally:
        ex._one_round.release()


def test_the_default_deadline_follows_the_slowest_round():
    client = SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")
    ex = fw.DaskExecutor(client)
    assert ex._limit() == fw_dask.FIRST_WAIT  # set-up and first round: compilation
    ex.slowest_round = 0.5
    assert ex._limit() == fw_dask.MIN_WAIT and ex._limit(first=True) == fw_dask.FIRST_WAIT
    ex.slowest_round = 20.0
    assert ex._limit() == pytest.approx(fw_dask.SLOW_FACTOR * 20.0, rel=1e-12)
    assert fw.DaskExecutor(client, timeout=7)._limit() == 7.0
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"timeout must be a positive number of seconds"):
            fw.DaskExecutor(client, timeout=bad)
    for bad in ("1 s", "5", True):  # no number
        with pytest.raises(TypeError, match=r"timeout must be a positive number of seconds"):
            fw.DaskExecutor(client, timeout=bad)


class _LateFuture:
    """A Dask-like future that becomes ``status`` just as the first poll times out."""

    def __init__(self, status, outcome):
        self.status, self._then, self._outcome, self.calls = "pending", status, outcome, 0

    def done(self):
        return self.status != "pending"

    def result(self, timeout):
        self.calls += 1
        if self.calls == 1:
            self.status = self._then
            raise TimeoutError("the poll's own timeout")
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        return self._outcome


def test_an_answer_done_just_after_a_poll_times_out_is_its_own_outcome():
    """A round task that finishes (or that Dask cancels with its dying worker) just as a
    poll times out: the wait returns its answer (or raises the cancellation, which the
    round asks again), not the poll's timeout, which read as a lost cluster (a CI flake of
    the killed-worker test); a task's own TimeoutError still passes through."""
    import concurrent.futures

    client = SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")
    ex = fw.DaskExecutor(client)
    fut = _LateFuture("finished", "the answer")
    assert ex._wait(fut.result, time.monotonic() + 5.0, "a test", fut) == "the answer"
    assert fut.calls == 2
    fut = _LateFuture("cancelled", concurrent.futures.CancelledError("dropped"))
    with pytest.raises(concurrent.futures.CancelledError, match="dropped"):
        ex._wait(fut.result, time.monotonic() + 5.0, "a test", fut)
    fut = _LateFuture("error", TimeoutError("the task's own"))
    with pytest.raises(TimeoutError, match="poll's own"):  # raised at once, as before
        ex._wait(fut.result, time.monotonic() + 5.0, "a test", fut)
    assert fut.calls == 1


class _LateActorFuture(_LateFuture):
    """An actor call's future (Dask's ``ActorFuture``: ``done`` and ``result``, no
    ``status``) done just as the first poll times out."""

    def __init__(self, outcome):
        super().__init__("done", outcome)

    def __getattribute__(self, name):
        if name == "status":
            raise AttributeError(name)
        return super().__getattribute__(name)

    def done(self):
        return self.calls > 0


def test_an_actor_answer_done_just_after_a_poll_times_out_is_its_own_outcome():
    """The same race for a shard's actor call: the wait returns its answer, or raises
    the remote code's own error, not the poll's timeout (which read as a lost worker and
    rebuilt a live shard: ``resident_restarts == 1``, seen once under load)."""
    client = SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")
    ex = fw.DaskExecutor(client)
    fut = _LateActorFuture("the answer")
    assert not hasattr(fut, "status")
    assert ex._wait(fut.result, time.monotonic() + 5.0, "a test", fut) == "the answer"
    assert fut.calls == 2
    fut = _LateActorFuture(TimeoutError("the actor's own"))
    with pytest.raises(TimeoutError, match="actor's own"):
        ex._wait(fut.result, time.monotonic() + 5.0, "a test", fut)
    assert fut.calls == 2


def test_a_client_reconnecting_to_its_scheduler_ends_a_wait(monkeypatch):
    """A wait that gets no answer gives up when the client has been reconnecting for the
    grace period (its scheduler, and with it the shards, are gone)."""
    monkeypatch.setattr(fw_dask, "_RECONNECT_GRACE", 0.3)
    monkeypatch.setattr(fw_dask, "_POLL", 0.05)
    client = SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")
    ex = fw.DaskExecutor(client)

    def never(timeout):
        time.sleep(timeout)
        raise TimeoutError

    threading.Timer(0.2, lambda: setattr(client, "status", "connecting")).start()
    tic = time.monotonic()
    with pytest.raises(OSError, match="lost its scheduler"):
        ex._wait(never, tic + 10.0, "a test")
    assert 0.45 < time.monotonic() - tic < 3.0
    assert ex._lost(RuntimeError("IOLoop is closed"))
    client.status = "running"
    ex._unsteady = None
    assert not ex._lost(RuntimeError("an oracle's own error"))
    with pytest.raises(fw_dask._Deadline):
        ex._wait(never, time.monotonic() + 0.2, "a test")


class _Unreadable(fw.ProbabilitySimplex):
    """A block oracle whose own code fails with an OSError (a file it reads is missing)."""

    def __call__(self, direction):
        raise FileNotFoundError("the block's model file is missing")


@pytest.mark.parametrize("actors", [True, False])
def test_an_oracles_own_os_error_is_raised_as_itself(actors):
    """docs/cluster.md: an oracle's own error on a worker reaches the caller as raised
    there.  An OSError (or TimeoutError) of the user's code was taken for a lost cluster:
    the healthy shards were rebuilt twice, then ExecutorError("the cluster or the client
    was lost"), the FileNotFoundError in neither the message nor (with actors) the cause."""
    f = fw.QuadraticObjective(np.eye(12), np.ones(12))
    dom = fw.ProductDomain([_Unreadable(dim=3) for _ in range(4)])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        with pytest.raises(FileNotFoundError, match="model file is missing") as info:
            fw.block_coordinate_frank_wolfe(f, dom, x0=[np.ones(3) / 3] * 4, batch_size=2,
                                            max_iter=3, executor=fw.DaskExecutor(
                                                client, actors=actors, retries=0))
    res = info.value.result
    assert res is not None and res.status == fw.Status.ERROR
    np.testing.assert_allclose(res.x, np.ones(12) / 3)

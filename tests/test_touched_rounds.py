"""The coordinates the compiled round steps touch (frankwolfe.compiled.touched): the
record is a superset of what changed, bit for bit; the point updates shipped from it
rebuild the client's vector exactly; asynchronous rounds' copies kept current from it
are the vector; and runs with the record are the runs without it (a diff of all d
coordinates, a whole copy per round), iterate for iterate."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.bcfw.compiled_pass import CompiledSteps
from frankwolfe.applications.structured_svm import ChainModel, make_chain
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.compiled.touched import Snapshots, TouchLog, touch
from frankwolfe.parallel import Executor, RowRounds
from frankwolfe.parallel.point_log import _PointLog


class _Rows(Executor, RowRounds):
    """Rows from the batch oracle in this process, through what a Dask worker does with
    its copy of the point: the client's log ships updates, a shard applies them and its
    copy (checked against the vector handed over) is what the oracle reads."""

    whole_gradient = True

    def __init__(self) -> None:
        self.log = _PointLog(keep=4)
        self.shard = SimpleNamespace(point=None, version=None)
        self.seen: list[tuple[np.ndarray, object]] = []
        # with gap sampling a round's blocks still in flight are asked late, from the
        # steps' thread while the helper thread may be asking: one call at a time
        self.lock = threading.Lock()

    def map(self, which, directions):  # pragma: no cover - compiled rounds ask rows
        raise AssertionError("rows only")

    def use_batch_oracle(self, oracle) -> bool:
        self.oracle = oracle
        return True

    def rows(self, which, gradient, delta=None):
        with self.lock:
            self.log.advance(gradient, delta)
            assert self.log.update(self.shard.version).apply(self.shard)
            assert self.shard.point.tobytes() == gradient.tobytes()
            self.seen.append((gradient.copy(), delta))
            point = self.shard.point.copy()
        return [(np.asarray(which), self.oracle.rows(which, point))]


def _problem(ids: bool):
    if ids:
        # many attribute values: a round touches a part of d
        X, Y = make_chain(40, n_states=4, n_features=40, n_templates=3, random_state=5)
        model = ChainModel(4, [40, 40, 40])
    else:
        X, Y = make_chain(40, n_states=4, n_features=5, random_state=5)
        model = ChainModel(4, 5)
    dom = SSVMDual(model, X, Y, 1.0 / 40)
    return dom.dual_objective(), dom


def _fit(f, dom, ex, **kw):
    with fw.debug(False):  # the compiled engine does not run in debug mode
        res = fw.block_coordinate_frank_wolfe(f, dom, executor=ex, batch_size=7, max_iter=5,
                                              tol=0.0, gap_every=2, random_state=3, **kw)
    assert res.extra["engine"] == "compiled"
    return res


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("staleness, order, round_step",
                         [(0, "uniform", "sequential"), (1, "uniform", "sequential"),
                          (2, "gap", "sequential"), (0, "uniform", "joint"),
                          (1, "perm", "joint")])
def test_touched_record_is_a_superset_and_the_runs_are_unchanged(monkeypatch, ids, staleness,
                                                                  order, round_step):
    f, dom = _problem(ids)
    ex = _Rows()
    res = _fit(f, dom, ex, staleness=staleness, block_order=order, round_step=round_step)
    assert res.extra["round_step"] == round_step
    deltas = 0
    for (prev, d0), (g, d1) in zip(ex.seen, ex.seen[1:]):
        if d0 is None or d1 is None or d1.base != d0.token:
            continue
        deltas += 1
        changed = np.flatnonzero(g.view(np.int64) != prev.view(np.int64))
        assert np.isin(changed, d1.index).all()
        assert np.unique(d1.index).size == d1.index.size  # each coordinate listed once
        assert d1.index.size <= g.size
    assert deltas >= len(ex.seen) // 2  # most rounds were shipped from the record
    # dense features: every step touches all of d; a joint round moves all its blocks
    # (sequential steps of gamma 0 touch nothing): over these 505 coordinates its record
    # is about half of d, the superset checks above are what holds for both
    if ids and round_step == "sequential":
        assert ex.log.diffed < len(ex.seen) * ex.seen[0][0].size / 2

    # the same run with no record: the bitwise diff of all d, a whole copy per round
    monkeypatch.setattr(CompiledSteps, "track", lambda self: None)
    plain = _Rows()
    ref = _fit(f, dom, plain, staleness=staleness, block_order=order, round_step=round_step)
    assert all(d is None for _, d in plain.seen)
    assert len(plain.seen) == len(ex.seen)
    # every round's point, bit for bit (late asks may come in another order)
    assert sorted(a.tobytes() for a, _ in ex.seen) == sorted(b.tobytes() for b, _ in plain.seen)
    assert res.x.tobytes() == ref.x.tobytes()
    for key in ("gap", "fun"):
        np.testing.assert_array_equal(res.history[key], ref.history[key])
    if staleness:
        np.testing.assert_array_equal(res.extra["delays"], ref.extra["delays"])


def test_point_log_from_deltas_ships_what_the_full_diff_ships():
    """Random vectors changed at random coordinates (a zero's sign, a NaN, a value written
    back unchanged among them): the log given the touched supersets keeps the same
    versions and ships updates that rebuild the vector bit for bit, as the full diff."""
    rng = np.random.default_rng(7)
    d = 500
    g = rng.standard_normal(d)
    g[3] = 0.0
    full, fast = _PointLog(keep=3), _PointLog(keep=3)
    log = TouchLog(d)
    shards = {name: [SimpleNamespace(point=None, version=None) for _ in range(2)]
              for name in ("full", "fast")}
    delta = log.take()
    full.advance(g)
    fast.advance(g, delta)
    for r in range(40):
        g = g.copy()
        which = rng.choice(d, int(rng.integers(0, 40)), replace=False)
        for p in which:  # what the steps list: every coordinate written
            touch(log.record, p)
        g[which] += rng.standard_normal(which.size) * (rng.random(which.size) < 0.7)
        if r == 5:
            touch(log.record, 3)
            g[3] = -0.0  # equal as floats, not as bits
        if r == 9:
            touch(log.record, 8)
            g[8] = np.nan
        delta = log.take()
        full.advance(g)
        fast.advance(g, delta)
        assert fast.version == full.version
        assert fast.last.tobytes() == full.last.tobytes() == g.tobytes()
        for name, lg in (("full", full), ("fast", fast)):
            for k, shard in enumerate(shards[name]):
                if k == 1 and r % 4:  # a shard that sits out rounds gets the union
                    continue
                up = lg.update(shard.version)
                assert up.apply(shard) or (lg.update(None).apply(shard))
                assert shard.point.tobytes() == g.tobytes()
    assert fast.diffed < full.diffed / 5


def test_snapshots_are_the_vector_with_rounds_in_flight():
    """Copies taken while up to three are in use (released out of order, from another
    thread's point of view), the vector moved at touched coordinates between takes, or
    replaced (forget): each copy is the vector at its take, bit for bit."""
    rng = np.random.default_rng(11)
    d = 300
    g = rng.standard_normal(d)
    log, snaps = TouchLog(d, keep=3), Snapshots()
    held: list[tuple[np.ndarray, bytes]] = []
    for r in range(60):
        which = rng.choice(d, int(rng.integers(0, 25)), replace=False)
        for p in which:
            touch(log.record, p)
        g[which] = rng.standard_normal(which.size)
        if r == 30:
            g[:] = rng.standard_normal(d)  # a certificate's gradient replaces it
            log.forget()
        log.take()
        buf = snaps.take(g, log)
        assert buf is not g and buf.tobytes() == g.tobytes()
        held.append((buf, buf.tobytes()))
        while len(held) > int(rng.integers(0, 4)):
            b, want = held.pop(int(rng.integers(0, len(held))))
            assert b.tobytes() == want  # nobody wrote a copy in use
            snaps.release(b)
    assert len(snaps._free) <= 4  # copies are reused, not one per round


@pytest.mark.parametrize("staleness, jobs, order", [(1, 1, "uniform"), (2, 2, "gap")])
def test_in_process_asynchronous_rounds_from_kept_copies_are_the_whole_copy_runs(
        monkeypatch, staleness, jobs, order):
    """Threads: the chain kernels' feature-major gradient copy (attribute ids) that a
    round's oracles decode at, kept current from the touched coordinates, against a
    whole copy per round: the same run to the last bit."""
    f, dom = _problem(True)
    kw = dict(n_jobs=jobs, staleness=staleness, block_order=order)
    takes = []
    real = Snapshots.take

    def spy(self, a, log, where=None):
        takes.append((log is not None, where is not None))
        return real(self, a, log, where)

    monkeypatch.setattr(Snapshots, "take", spy)
    res = _fit(f, dom, None, **kw)
    assert takes and all(t == (True, True) for t in takes)  # gT, from the record
    monkeypatch.setattr(CompiledSteps, "track", lambda self: None)
    takes.clear()
    ref = _fit(f, dom, None, **kw)
    assert takes and not any(t[0] for t in takes)  # whole copies
    assert res.x.tobytes() == ref.x.tobytes()
    np.testing.assert_array_equal(res.history["gap"], ref.history["gap"])
    np.testing.assert_array_equal(res.extra["delays"], ref.extra["delays"])


@pytest.mark.parametrize("staleness", [0, 1])
def test_dask_rounds_from_the_record_are_the_full_diff_rounds(monkeypatch, staleness):
    """A DaskExecutor on an in-process cluster of 2 workers: the client compares only the
    touched coordinates (a fraction of the full diff's), and the run is the run with
    the full diff, bit for bit."""
    distributed = pytest.importorskip("distributed")
    f, dom = _problem(True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        ex = fw.DaskExecutor(client)
        res = _fit(f, dom, ex, staleness=staleness)
        d = res.x.size
        diffed, rounds = ex._log.diffed, ex._rounds
        monkeypatch.setattr(CompiledSteps, "track", lambda self: None)
        plain = fw.DaskExecutor(client)
        ref = _fit(f, dom, plain, staleness=staleness)
    assert plain._log.diffed == d * (plain._rounds - 1)  # every round but the first
    # about half here (a round of 7 of 40 chains touches much of this small d, and the
    # certificates every 2 passes start the chain of points again)
    assert diffed < 0.6 * plain._log.diffed and rounds == plain._rounds
    assert res.x.tobytes() == ref.x.tobytes()
    np.testing.assert_array_equal(res.history["gap"], ref.history["gap"])

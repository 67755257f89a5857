"""Arrays that the processes of one machine map together
(:mod:`frankwolfe.parallel.shared_arrays`), and the atomic fold of a share into them
from several processes at once (what lock-free passes on resident blocks rely on)."""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest

from frankwolfe.compiled.shares import fold_share_atomic
from frankwolfe.parallel.shared_arrays import SharedArrays, SharedSpec, attach

ADDS = 300  # folds per process, each of SIZE adds: lost updates would show in a few
SIZE = 4096


def _fold_many(spec: SharedSpec, j: int) -> None:  # a spawned process
    import time

    arrays = attach(spec)
    x, flags = arrays["x"], arrays["flags"]
    share = np.zeros(x.size)
    fold_share_atomic(x[:0], share[:0])  # compiled (or loaded) before the start line
    flags[j] = 1
    deadline = time.monotonic() + 120
    while flags[2] == 0:  # both start together: their folds overlap
        if time.monotonic() > deadline:
            raise TimeoutError("no start signal")
    for _ in range(ADDS):
        share[:] = 1.0
        fold_share_atomic(x, share)
    flags[3 + j] = 1


def test_processes_folding_at_once_lose_no_add():
    """Two spawned processes, started together, each fold a share of ones into the same
    coordinates ADDS times: every coordinate ends at exactly 2 ADDS (sums of small
    integers are exact)."""
    import time

    shared = SharedArrays({"x": ((SIZE,), np.float64), "flags": ((5,), np.int64)})
    flags = shared.arrays["flags"]
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_fold_many, args=(shared.spec(), j)) for j in range(2)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + 120
    while not (flags[0] and flags[1]) and time.monotonic() < deadline:
        time.sleep(0.01)
    flags[2] = 1
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    np.testing.assert_array_equal(flags[3:], [1, 1])
    np.testing.assert_array_equal(shared.arrays["x"], np.full(SIZE, 2.0 * ADDS))
    shared.close()


def test_attached_arrays_are_the_owners_and_close_removes_them():
    shared = SharedArrays({"g": ((5,), np.float64), "mode": ((1,), np.int64)})
    spec = shared.spec()
    assert set(spec.names) == {"g", "mode"}
    np.testing.assert_array_equal(shared.arrays["g"], 0.0)  # zero-filled
    other = attach(spec)
    assert other["g"].dtype == np.float64 and other["mode"].dtype == np.int64
    assert other["g"].shape == (5,) and type(other["g"]) is np.ndarray
    other["g"][2] = 7.5
    assert shared.arrays["g"][2] == 7.5  # one memory, not a copy
    shared.close()
    assert not os.path.exists(spec.directory)
    assert other["g"][2] == 7.5  # a mapping outlives the files
    with pytest.raises(ValueError, match="not reachable from this process"):
        attach(spec)


def test_attach_refuses_arrays_of_another_owner():
    """A worker on another machine finds no such directory, or one with another token:
    a clear error, never arrays nobody else writes."""
    shared = SharedArrays({"g": ((3,), np.float64)})
    forged = shared.spec()._replace(token="0" * 32)
    with pytest.raises(ValueError, match="on the machine of the process that made them"):
        attach(forged)
    missing = shared.spec()._replace(directory=shared.directory + "-elsewhere")
    with pytest.raises(ValueError, match="not reachable"):
        attach(missing)
    shared.close()


def test_collected_arrays_remove_their_files():
    shared = SharedArrays({"g": ((3,), np.float64)})
    where = shared.directory
    del shared
    import gc

    gc.collect()
    assert not os.path.exists(where)


def _own_and_die(conn) -> None:  # a spawned process, killed by its parent
    import time

    shared = SharedArrays({"x": ((1000,), np.float64)})
    conn.send(shared.directory)
    time.sleep(120)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_the_arrays_of_a_killed_owner_are_removed_by_the_next_owner():
    """An owner killed outright (SIGKILL) removes nothing; the next SharedArrays of this
    user removes its directory, and leaves those of owners that still run."""
    import signal

    ctx = mp.get_context("spawn")
    mine, theirs = ctx.Pipe()
    proc = ctx.Process(target=_own_and_die, args=(theirs,))
    proc.start()
    try:
        assert mine.poll(120), "the owner process made no arrays"
        orphan = mine.recv()
        alive = SharedArrays({"y": ((3,), np.float64)})  # its owner (this process) runs
        assert os.path.isdir(orphan)  # the other owner still runs: left alone
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=60)
    assert os.path.isdir(orphan)  # SIGKILL: no finalizer ran
    later = SharedArrays({"z": ((3,), np.float64)})
    assert not os.path.exists(orphan)
    assert os.path.isdir(alive.directory) and os.path.isdir(later.directory)
    alive.close()
    later.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"),
                    reason="process start times are read from /proc")
def test_sweep_removes_only_this_machines_directories_of_owners_gone(tmp_path):
    from frankwolfe.parallel.shared_arrays import _machine, sweep_orphans

    here = _machine()
    if "?" in here.split():
        pytest.skip("this machine's boot id or process namespace cannot be read")

    def owned(name: str, text: str):
        d = tmp_path / name
        d.mkdir()
        if text is not None:
            (d / "owner").write_text(text)
        return d

    making = owned("frankwolfe-shared-making", None)  # no owner file yet
    with open(f"/proc/{os.getpid()}/stat", "rb") as fh:
        stat = fh.read()
    start = stat[stat.rindex(b")") + 2:].split()[19].decode()
    running = owned("frankwolfe-shared-running", f"{os.getpid()} {start} {here}")
    other = owned("unrelated", f"999999999 1 {here}")
    gone = owned("frankwolfe-shared-gone", f"999999999 1 {here}")  # no such process
    reused = owned("frankwolfe-shared-reused", f"{os.getpid()} 1 {here}")  # another start
    # another machine's (a network file system) or container's: its pids are not ours
    elsewhere = owned("frankwolfe-shared-elsewhere", "999999999 1 otherhost boot 4026531836")
    unmarked = owned("frankwolfe-shared-unmarked", "999999999 1")  # no machine recorded
    removed = sweep_orphans(str(tmp_path))
    assert sorted(removed) == sorted([str(gone), str(reused)])
    for kept in (making, running, other, elsewhere, unmarked):
        assert kept.is_dir()

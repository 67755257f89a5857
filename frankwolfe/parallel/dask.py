"""The oracles of a round on a ``dask.distributed`` cluster.

The blocks are sharded over the workers once (each worker keeps its shard, a
Dask actor, and whatever the blocks compile or cache, between rounds, and its
own copy of the point the oracles read); per round only what changed in that
point goes out and the oracles' atoms (sparse vertices, packed) come back.
Compiled rounds run here too (:class:`~.base.RowRounds`): the workers return
their blocks' table rows (for the chain SSVM, labellings and losses), which the
domain's round kernels store in this process before the core's compiled block
steps.  Dask itself is imported only when a cluster is used.

This module is the client's side (the executor, its waits and its recovery from lost
workers); what runs on the workers (the shards, their actors, the round's task and the
packing of its answer) is in :mod:`.dask_shards`.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._numbers import check_flag, check_whole, is_real
from .._warnings import FILTERS
from ..atoms import Atom
from ..errors import ExecutorError
from .base import Executor, RowRounds
from .dask_shards import (
    _dumps,
    _load_shard,
    _picklable,
    _shard_round,
    _ShardActor,
    _unpack,
    _unwrapped,
    _UserError,
    _users,
)
from .point_log import _PointLog, _Update

__all__ = ["DaskExecutor"]

#: with ``timeout=None``, how long the set-up (building the shards) and the first round may
#: take: the workers may compile the oracles' kernels then
FIRST_WAIT = 300.0
#: with ``timeout=None``, a later round may take ``max(MIN_WAIT, SLOW_FACTOR x`` the slowest
#: round so far``)``
MIN_WAIT = 60.0
SLOW_FACTOR = 10.0
# a wait checks the client's state this often (a round that answers sooner waits once)
_POLL = 0.5
# a client that keeps reconnecting to its scheduler this long has lost it (its actors and
# shards went with it)
_RECONNECT_GRACE = 5.0


@contextlib.contextmanager
def _large_task(nbytes: int) -> Iterator[None]:
    """Around a task that carries ``nbytes`` on purpose (a shard's bytes, a whole point):
    Dask's "Sending large graph" advice does not apply to it.  The warnings filters are
    the process's (Python 3.11 has no thread-local ones), so they are touched only for a
    task that Dask warns of (above its ``distributed.admin.large-graph-warning-threshold``,
    10 MB by default), under a lock."""
    import dask
    from dask.utils import parse_bytes

    key = "distributed.admin.large-graph-warning-threshold"
    if nbytes <= parse_bytes(dask.config.get(key, "10MB")):
        yield
        return
    with FILTERS, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
        yield


class _Deadline(TimeoutError):
    """No answer within a wait's deadline (final: no shard is rebuilt for it)."""



def _is_client(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("submit", "gather", "scheduler_info"))


class DaskExecutor(Executor, RowRounds):
    """The oracles on a ``dask.distributed`` cluster, blocks sharded over its workers.

    The blocks (they must be picklable) go in one contiguous shard per worker, each
    built once on its worker and kept there with whatever its oracles compile or
    cache; when the domain's batch block oracle can be cut into shards (a ``shard(range)``
    method, as the chain SSVM dual's), a shard holds only that piece and answers its
    blocks of a round in one call.  The shards are built when the solver hands over the
    batch oracle (set-up time), else before the first round.

    Each shard keeps its own copy of the point the oracles read (the gradient).  A
    round sends each shard involved only what changed since the version it holds:
    the new values at the changed coordinates, or a dense slice when that is
    smaller; the whole vector the first time and to a shard rebuilt or moved since
    (it answers that it needs it, and gets it in the same round).  A batch
    oracle's shard with a ``follow(point, changed)`` method is told of each
    change (``changed``: the coordinates written, an index array or a slice;
    None: the whole vector), so that what it derives from the point (the chain
    SSVM's feature-major weights) costs the change per round, not the whole
    vector.  The oracles' atoms come back packed, a few arrays per shard.  For
    the cost model,
    :attr:`bytes_out` and :attr:`bytes_in` count the arrays shipped,
    :attr:`whole_updates` the whole vectors sent and :attr:`worker_seconds` the
    rounds' critical path on the workers (per round, the slowest shard's task).
    What changed is found from the coordinates the compiled round steps touched
    when the rounds hand them over (``rows(..., delta)``), else by comparing all
    coordinates with the last point sent; :attr:`diff_seconds` counts that time.

    Each shard is a Dask actor (``actors=True``, the default): a round is one
    method call per shard, straight to its worker.  With ``actors=False`` each
    round submits one task per shard through the scheduler (slower per round:
    benchmarks/README.md, "Measurements behind code choices"), and Dask itself
    re-runs lost tasks.

    Faults: when a worker dies, its shard is rebuilt on another worker (an
    actor is created again from the shard's bytes; a task carries them, so the
    scheduler rebuilds it and re-runs the round's task), gets the whole point
    and answers the round again; no block update is lost since the steps are
    applied only once all answers are in.  ``retries`` bounds the rebuilds per
    round (and is Dask's retries of a failed task).  When the cluster or the
    client is gone, :meth:`map` raises :class:`~frankwolfe.errors.ExecutorError`
    (the solver attaches the result so far, its last good iterate, as
    ``err.result``).

    Deadlines: every wait (the shards' set-up, a round's answers, a rebuild, the
    scheduler's list of workers) has one, so a lost scheduler or a hung worker
    ends in :class:`~frankwolfe.errors.ExecutorError`, never in a hang.  While
    waiting, the client's state is checked every 0.5 s: a closed client, or one
    that has been reconnecting to its scheduler for 5 s, ends the wait at once.

    Parameters
    ----------
    client : dask.distributed.Client
    n_shards : int, optional
        Number of shards (default: the number of workers at :meth:`start`).
    retries : int, default 2
        Rebuilds of lost shards per round; Dask retries of a failed task.
    actors : bool, default True
        Shards as Dask actors (rounds as direct calls) or as data that round
        tasks read (rounds through the scheduler).
    timeout : float, optional
        Seconds any one wait may take (a round's answers, the set-up).  Default
        (None): 300 s for the set-up and the first round (the workers may compile
        their kernels then), afterwards ``max(60 s, 10 x`` the slowest round so
        far``)``.
    """

    name = "dask"
    whole_gradient = True

    def __init__(self, client: Any, n_shards: int | None = None, retries: int = 2,
                 actors: bool = True, timeout: float | None = None) -> None:
        if not _is_client(client):
            raise TypeError(f"client must be a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        if n_shards is not None:
            n_shards = check_whole(n_shards, "n_shards", 1)
        actors = check_flag(actors, "actors")  # bool("no") is True
        self.client = client
        self.n_shards = n_shards
        self.retries = check_whole(retries, "retries", 0)
        self.actors = actors
        if timeout is not None:
            wanted = f"timeout must be a positive number of seconds or None, got {timeout!r}"
            if not is_real(timeout):
                raise TypeError(f"{wanted} ({type(timeout).__name__})")
            if not 0 < timeout < math.inf:
                raise ValueError(wanted)
            timeout = float(timeout)
        self.timeout = timeout
        self.slowest_round = 0.0  # seconds (wall) of the slowest round after the first
        self._rounds = 0
        self._unsteady: float | None = None  # when the client was first seen reconnecting
        self.bytes_out = 0  # point updates sent (arrays' bytes), for the cost model
        self.bytes_in = 0  # and packed atoms received
        self.whole_updates = 0  # updates that were the whole vector (first, rebuilt shards)
        self.worker_seconds = 0.0  # per round the slowest shard's task, on its worker
        self.diff_seconds = 0.0  # finding what changed in the point (client bookkeeping)
        self.shards: list[Any] = []  # per shard its future (a task's data, or an actor)
        self._payloads: list[bytes] = []  # per shard its bytes (to rebuild an actor)
        self._proxies: list[Any] = []  # per shard its actor (actors=True)
        self._oracle: Any = None  # the batch oracle whose shards the workers hold
        self._log = _PointLog()
        self._one_round = threading.Lock()

    def start(self, blocks: Sequence[Any], indices: Sequence[np.ndarray] | None = None,
              shapes: Sequence[tuple[int, ...]] | None = None) -> None:
        # without indices and shapes only a batch oracle with `shard` can answer (checked
        # when the shards are built)
        super().start(blocks, indices, shapes)
        self._drop_shards()  # those of a run that was not closed
        self._oracle = None
        n = len(blocks)
        self._unsteady = None
        try:
            self._check_client(strict=True)
            self._workers = self._worker_list(self._limit(first=True))
        except Exception as err:
            raise ExecutorError(f"DaskExecutor: the cluster does not answer ({err!r})") from err
        if not self._workers:
            raise ExecutorError("DaskExecutor: the cluster has no workers")
        m = max(1, min(n, self.n_shards or len(self._workers)))
        self._cuts = np.linspace(0, n, m + 1).astype(np.int64)
        self.owner = np.repeat(np.arange(m), np.diff(self._cuts))
        self.local = np.arange(n) - self._cuts[self.owner]
        self._seen: list[int | None] = [None] * m  # the point's version each shard holds

    def use_batch_oracle(self, oracle: Any) -> bool:
        if oracle is None or not callable(getattr(oracle, "shard", None)):
            return False  # the blocks one by one on the workers
        self._oracle = oracle
        self._build(oracle)
        return True

    def _build(self, batch: Any = None) -> None:
        """Pickle the shards and have each built on its worker (waits for them, at most
        the set-up's deadline); a lost cluster or client is an ExecutorError."""
        try:
            self._build_shards(batch)
        except Exception as err:
            if isinstance(err, _UserError):
                raise _unwrapped(err) from None
            if not self._lost(err):
                raise  # an unpicklable block, a batch oracle's own error
            raise ExecutorError(f"DaskExecutor: the cluster or the client was lost while the "
                                f"shards were built ({err!r})") from err

    def _build_shards(self, batch: Any) -> None:
        cuts, workers = self._cuts, self._workers
        for s in range(cuts.size - 1):
            a, b = int(cuts[s]), int(cuts[s + 1])
            if batch is not None:
                payload = _dumps((None, None, None, batch.shard(range(a, b))))
            elif self.indices is None or self.shapes is None:
                raise ValueError("DaskExecutor: the blocks' indices and shapes are needed "
                                 "(start) unless a batch oracle with `shard` answers")
            else:
                part = list(self.blocks[a:b])
                try:
                    payload = _dumps((part, list(self.indices[a:b]), list(self.shapes[a:b]),
                                      None))
                except Exception as err:
                    bad = next((a + j for j, blk in enumerate(part) if not _picklable(blk)), a)
                    raise TypeError(
                        f"DaskExecutor: the block LMOs must be picklable to run on a cluster; "
                        f"block {bad} ({type(self.blocks[bad]).__name__}) is not: {err}") from err
            self._payloads.append(payload)
            self.shards.append(self._place(payload, workers[s % len(workers)]))
        from distributed import wait

        # the shards are in place before the first round
        deadline = time.monotonic() + self._limit(first=True)
        shards = self.shards
        self._wait(lambda t: wait(shards, timeout=t), deadline, "building the shards")
        if self.actors:
            self._proxies = [self._wait(f.result, deadline, "building the shards", f)
                             for f in shards]

    def _place(self, payload: bytes, worker: str | None) -> Any:
        """The future of a shard built from ``payload`` on ``worker`` (None: anywhere)."""
        with _large_task(len(payload)):  # the bytes travel in the task on purpose
            where = dict(workers=[worker], allow_other_workers=True) if worker else {}
            if self.actors:
                return self.client.submit(_ShardActor, payload, actor=True, pure=False, **where)
            return self.client.submit(_load_shard, payload, pure=False, retries=self.retries,
                                      **where)

    def _rebuild(self, s: int) -> None:
        """Shard ``s``'s actor again, on a worker alive (its own was lost)."""
        self._check_client(strict=True)
        limit = self._limit(first=True)
        if not self._worker_list(limit):
            raise OSError("the cluster has no workers left")
        self._seen[s] = None
        deadline = time.monotonic() + limit
        for attempt in range(self.retries + 1):
            # the scheduler may place it on the dead worker before it notices: again
            self.shards[s] = self._place(self._payloads[s], None)
            try:
                fut = self.shards[s]
                self._proxies[s] = self._wait(fut.result, deadline, f"rebuilding shard {s}",
                                              fut)
                return
            except _Deadline:
                raise
            except Exception as err:
                if attempt == self.retries or not (_cluster_lost(err) or _actor_lost(err)):
                    raise

    def map(self, which: Sequence[int], directions: Sequence[np.ndarray]) -> list[Atom]:
        # block slices of one gradient are what the engine hands out; a user calling map
        # directly gets the same answers through a gradient assembled from them
        indices = self.indices
        if indices is None:
            raise ValueError("DaskExecutor.map needs the blocks' indices (start)")
        g = np.zeros(1 + max((int(indices[i].max(initial=-1)) for i in which), default=0))
        for i, d in zip(which, directions):
            g[indices[i]] = np.asarray(d, dtype=float).reshape(-1)
        return self.map_gradient(which, g)

    def map_gradient(self, which: Sequence[int], gradient: np.ndarray) -> list[Atom]:
        if not self.shards:
            self._build()
        out: list[Any] = [None] * len(which)
        for pos, (packed, _) in self._ask(which, gradient, False):
            self.bytes_in += sum(a.nbytes for a in packed if isinstance(a, np.ndarray))
            for p, a in zip(pos, _unpack(packed)):
                out[p] = a
        return out

    def rows(self, which: Sequence[int], gradient: np.ndarray, delta: Any = None
             ) -> list[tuple[np.ndarray, Any]]:
        if not self.shards or not callable(getattr(self._oracle, "rows", None)):
            raise NotImplementedError("DaskExecutor.rows needs a batch oracle with `rows` "
                                      "and `shard` (use_batch_oracle)")
        blocks = np.asarray(which, dtype=np.int64)
        out = []
        for pos, (rows, _) in self._ask(blocks, gradient, True, delta):
            self.bytes_in += sum(a.nbytes for a in rows if isinstance(a, np.ndarray))
            out.append((blocks[pos], rows))
        return out

    def resident(self, which: Sequence[int], gradient: np.ndarray, call: tuple,
                 delta: Any = None) -> list[tuple[int, np.ndarray, Any]]:
        """A call to resident blocks (:mod:`frankwolfe.algorithms.bcfw.resident`: block
        iterates kept on the workers) on the shards owning blocks ``which``, each brought
        to the point ``gradient`` first (``delta`` as in :meth:`rows`): per shard, its
        number, the positions of its blocks in ``which`` and its answer.  The shards are
        the pieces of the object handed to :meth:`use_batch_oracle` (its ``shard(range)``),
        answering ``resident(call, local, point)``.  A shard rebuilt after a fault
        holds fresh blocks; its answer says so, and the caller restarts it."""
        if not self.shards or not callable(getattr(self._oracle, "shard", None)):
            raise NotImplementedError("DaskExecutor.resident needs pieces with `shard` "
                                      "(use_batch_oracle)")
        if not self.actors:  # Dask may copy a task's data to another worker: two states
            raise ValueError("DaskExecutor.resident: blocks kept on the workers need "
                             "actors=True (a shard held as task data may be copied)")
        blocks = np.asarray(which, dtype=np.int64)
        out = []
        for pos, (answer, _) in self._ask(blocks, gradient, call, delta):
            s = int(self.owner[blocks[pos[0]]])
            if isinstance(answer, tuple):
                self.bytes_in += sum(a.nbytes for a in answer if isinstance(a, np.ndarray))
            out.append((s, pos, answer))
        return out

    def shard_blocks(self, s: int) -> np.ndarray:
        """The blocks of shard ``s``."""
        return np.arange(self._cuts[s], self._cuts[s + 1], dtype=np.int64)

    def shard_cuts(self) -> np.ndarray:
        """Where the shards' block ranges start, then the number of blocks: shard ``s``
        holds blocks ``cuts[s] .. cuts[s + 1] - 1``."""
        return self._cuts.copy()

    def _ask(self, which, gradient, rows: bool | tuple, delta: Any = None
             ) -> list[tuple[np.ndarray, tuple]]:
        """One round on the shards owning blocks ``which``: per shard, the positions of its
        blocks in ``which`` and its answer.  One round at a time: asynchronous rounds ask
        a round's blocks still in flight late, from the steps' thread, while the helper
        thread may be asking (the point log and the shards' versions are shared).  The
        wait for the round under way has the deadline of a round (it ends by its own)."""
        limit = self._limit()
        if not self._one_round.acquire(timeout=limit):
            raise ExecutorError(f"DaskExecutor: the round under way on another thread did not "
                                f"finish within {limit:.3g} s; DaskExecutor(timeout=...) sets "
                                "the deadline")
        try:
            return self._ask_now(which, gradient, rows, delta)
        finally:
            self._one_round.release()

    def _ask_now(self, which, gradient, rows: bool | tuple, delta: Any
                 ) -> list[tuple[np.ndarray, tuple]]:
        which = np.asarray(which, dtype=np.int64)
        owner = self.owner[which]
        shards = np.unique(owner).tolist()
        positions = [np.flatnonzero(owner == s) for s in shards]
        tic = time.perf_counter()
        self._log.advance(np.ascontiguousarray(gradient, dtype=float).reshape(-1), delta)
        self.diff_seconds += time.perf_counter() - tic
        tic, limit = time.monotonic(), self._limit()
        try:
            self._check_client(strict=True)
            # int arrays, not lists: Dask walks a list argument element by element
            local = [self.local[which[p]] for p in positions]
            answers = self._round(shards, local, rows, tic + limit)
        except _Deadline as err:
            raise ExecutorError(f"DaskExecutor: a round of {which.size} block oracles did not "
                                f"finish within {limit:.3g} s ({err}); DaskExecutor(timeout="
                                f"...) sets the deadline") from err
        except Exception as err:
            if isinstance(err, _UserError):  # an oracle's OSError / TimeoutError
                raise _unwrapped(err) from None
            if not self._lost(err):
                raise  # an oracle's own error, as raised on the worker
            raise ExecutorError(f"DaskExecutor: the cluster or the client was lost during a "
                                f"round of {which.size} block oracles ({err!r})") from err
        self._rounds += 1
        if self._rounds > 1:  # the first round may compile the workers' kernels
            self.slowest_round = max(self.slowest_round, time.monotonic() - tic)
        self.worker_seconds += max(sec for _, sec in answers)
        return list(zip(positions, answers))

    def _send(self, s: int, up: _Update, local: np.ndarray, rows: bool | tuple) -> Any:
        """Shard ``s``'s part of a round, under way: a call to its actor or a task."""
        if self.actors:
            return self._proxies[s].round(up, local, rows)
        with _large_task(up.nbytes):  # a whole vector travels in its task
            return self.client.submit(_users, _shard_round, self.shards[s], up, local, rows,
                                      pure=False, retries=self.retries)

    def _round(self, shards: list[int], local: list[np.ndarray], rows: bool | tuple,
               deadline: float) -> list[tuple]:
        """Each shard's packed answers.  A shard that no longer holds the version its
        update builds on (rebuilt or moved) answers None and is asked again with the
        whole vector.  An actor whose worker was lost is rebuilt on another worker (at
        most ``retries`` times per round) and asked again; a lost task Dask re-runs
        itself."""
        answers: list[Any] = [None] * len(shards)
        todo = list(range(len(shards)))
        rebuilt = 0
        for _ in range(self.retries + 2):
            calls = []
            for k in todo:
                s = shards[k]
                up = self._log.update(self._seen[s])
                self.bytes_out += up.nbytes
                self.whole_updates += up.base is None
                try:  # an actor whose worker is known lost raises here already
                    calls.append(self._send(s, up, local[k], rows))
                except Exception as err:
                    calls.append(err)
            lost = []
            for k, call in zip(todo, calls):
                try:
                    if isinstance(call, Exception):
                        raise call
                    got = self._wait(call.result, deadline, f"shard {shards[k]}", call,
                                     self._holder_lost(shards[k]))
                except _Deadline:
                    raise
                except Exception as err:
                    if self.actors and (_cluster_lost(err) or _actor_lost(err)):
                        lost.append(k)
                        continue
                    if not self.actors and _cancelled(call):
                        # Dask dropped the task with its worker (seen under load when a
                        # worker dies mid-round): ask again, on a shard still alive
                        lost.append(k)
                        continue
                    raise  # an oracle's own error as raised on the worker, or the cluster's
                answers[k] = got
                self._seen[shards[k]] = None if got is None else self._log.version
            for k in lost:
                rebuilt += 1
                if rebuilt > self.retries:
                    raise OSError(f"shard {shards[k]} was lost more than retries="
                                  f"{self.retries} times in one round")
                if self.actors:
                    self._rebuild(shards[k])
                else:  # the shard's task again where Dask lost it too; the whole point
                    if _cancelled(self.shards[shards[k]]):
                        self.shards[shards[k]] = self._place(self._payloads[shards[k]], None)
                    self._seen[shards[k]] = None
                # the rebuilt shard answers the round again: a round's time from here
                deadline = max(deadline, time.monotonic() + self._limit())
            todo = [k for k in todo if answers[k] is None]
            if not todo:
                return answers
        raise ExecutorError("DaskExecutor: a shard refused the whole point vector")

    # -- deadlines and the client's state ----------------------------------------------
    def _limit(self, first: bool = False) -> float:
        """Seconds a wait may take (see ``timeout``)."""
        if self.timeout is not None:
            return self.timeout
        if first or self.slowest_round == 0.0:
            return FIRST_WAIT
        return max(MIN_WAIT, SLOW_FACTOR * self.slowest_round)

    def _check_client(self, strict: bool = False) -> None:
        """Raise ``OSError`` when the client is closed, or has been reconnecting to its
        scheduler for ``_RECONNECT_GRACE`` seconds (``strict``: at all)."""
        status = str(getattr(self.client, "status", "running"))
        if status in ("closing", "closed"):
            raise OSError("the client is closed")
        if status == "running":
            self._unsteady = None
            return
        now = time.monotonic()
        if self._unsteady is None:
            self._unsteady = now
        if strict or now - self._unsteady >= _RECONNECT_GRACE:
            raise OSError(f"the client lost its scheduler (status {status!r})")

    def _lost(self, err: BaseException) -> bool:
        """Whether ``err`` says the cluster or the client (not an oracle) failed."""
        if _cluster_lost(err) or "IOLoop is closed" in str(err):
            return True
        try:
            self._check_client(strict=True)
        except OSError:
            return True
        return False

    def _holder_lost(self, s: int) -> Any:
        """A check that raises when shard ``s``'s actor is known lost with its worker (the
        call to it would wait for a connection timeout first); None for tasks."""
        if not self.actors:
            return None
        fut = self.shards[s]

        def check() -> None:
            if fut.status not in ("finished", "pending"):
                raise RuntimeError(f"Actor was lost (its worker: status {fut.status!r})")
        return check

    def _wait(self, get: Any, deadline: float, what: str, call: Any = None,
              check: Any = None) -> Any:
        """``get(timeout)`` (a result, or Dask's ``wait``) by ``deadline`` (a
        ``time.monotonic()``), checking the client (and ``check()``) every ``_POLL``
        seconds; ``call``: the future whose own ``TimeoutError`` (raised by the remote
        code) passes through."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Deadline(f"{what}: no answer within the deadline")
            try:
                return get(min(left, _POLL))
            except TimeoutError:
                if call is not None and call.done():
                    if not hasattr(call, "status"):
                        # an actor's call (Dask's ActorFuture has no status) done just
                        # after the poll timed out: its outcome is there now, the remote
                        # code's own error included (raising the poll's timeout read as a
                        # lost worker and rebuilt a live shard, a CI flake)
                        return get(max(left, _POLL))
                    if getattr(call, "status", None) in ("finished", "cancelled"):
                        # done just after the poll timed out: the next get returns its
                        # answer, or raises the cancellation the caller handles (raising
                        # the poll's timeout made a task Dask cancelled with its dying
                        # worker a lost cluster, seen in CI)
                        continue
                    raise  # the remote code's own TimeoutError
            self._check_client()
            if check is not None:
                check()

    def _worker_list(self, seconds: float) -> list[str]:
        """The addresses of the cluster's workers, asked of the scheduler (at most
        ``seconds``: ``scheduler_info`` waits for an answer without a deadline)."""
        client = self.client
        sync, scheduler = getattr(client, "sync", None), getattr(client, "scheduler", None)
        if sync is None or scheduler is None:  # a client-like object of the user's
            return sorted(client.scheduler_info()["workers"])
        try:
            info = sync(scheduler.identity, callback_timeout=seconds)
        except TimeoutError as err:
            raise _Deadline(f"the scheduler did not answer within {seconds:.3g} s") from err
        return sorted(info["workers"])

    def close(self) -> None:
        self._drop_shards()

    def _drop_shards(self) -> None:
        for f in self.shards:
            try:
                f.release()
            except Exception:  # the client may be gone already
                pass
        self.shards, self._proxies, self._payloads = [], [], []

    def __repr__(self) -> str:
        return (f"DaskExecutor(n_shards={self.n_shards}, retries={self.retries}, "
                f"actors={self.actors}, timeout={self.timeout})")


_LOST = {"ClosedClientError", "CancelledError", "FutureCancelledError", "CommClosedError",
         "KilledWorker"}


def _cluster_lost(err: BaseException) -> bool:
    """Whether ``err`` says the cluster (not an oracle) failed."""
    return isinstance(err, (OSError, TimeoutError)) or any(
        c.__name__ in _LOST for c in type(err).__mro__)


def _cancelled(fut: Any) -> bool:
    """Whether a Dask future was cancelled (not finished, not failed by its own code)."""
    try:
        return bool(fut.cancelled())
    except Exception:  # not a future (an error already), or a client gone
        return False


def _actor_lost(err: BaseException) -> bool:
    """Whether ``err`` says a shard's actor went with its worker (a ValueError in older
    distributed releases, a RuntimeError in newer ones)."""
    return isinstance(err, (RuntimeError, ValueError)) and "Actor was lost" in str(err)

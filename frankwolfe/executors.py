"""Executors: where the block oracles of a mini-batch run.

Mini-batch block-coordinate Frank-Wolfe (Wang et al., ICML 2016) asks the
oracles of ``tau`` blocks at one point; those calls are independent, so an
executor may run them anywhere.  An executor is a small strategy object:

* :class:`SerialExecutor` calls them one after the other (the default);
* :class:`ThreadExecutor` splits them over ``n_jobs`` threads of this
  process (useful when the oracles release the GIL, as numba ``nogil``
  kernels do; the blocks must tolerate concurrent calls);
* :class:`DaskExecutor` runs them on a ``dask.distributed`` cluster: the
  blocks are sharded over the workers once (each worker keeps its shard,
  and whatever the blocks compile or cache, between rounds); per round only
  the blocks' gradients go out and the oracles' atoms (sparse vertices) come
  back.

A user's executor implements :meth:`Executor.start` and :meth:`Executor.map`.
The executors of this process (serial, threads) also run compiled rounds: the
domain's round kernels store the vertices of a chunk of blocks per call
(:meth:`Executor.chunks`), one call per thread.
"""

from __future__ import annotations

import pickle
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .atoms import Atom
from .errors import ExecutorError

__all__ = ["Executor", "SerialExecutor", "ThreadExecutor", "DaskExecutor", "make_executor"]


class Executor(ABC):
    """Runs batches of block oracle calls (see the module docstring)."""

    name: str = "custom"

    #: asks for the whole gradient once per round (:meth:`map_gradient`) instead of the
    #: blocks' slices: cheaper to ship when the blocks' coordinates overlap
    whole_gradient: bool = False

    #: runs its calls in this process (:meth:`chunks`): compiled mini-batch rounds, whose
    #: oracles write the vertices into the domain's memory, need that
    in_process: bool = False

    def start(self, blocks: Sequence[Any], indices: Sequence[np.ndarray] | None = None,
              shapes: Sequence[tuple[int, ...]] | None = None) -> None:
        """Once per run, before any :meth:`map`: the block oracles (``blocks[i]`` is the
        LMO of block ``i``), their coordinates ``indices[i]`` in the gradient and the
        shapes of their directions."""
        self.blocks = blocks
        self.indices = indices
        self.shapes = shapes

    @abstractmethod
    def map(self, which: Sequence[int], directions: Sequence[np.ndarray]) -> list[Atom]:
        """``[blocks[i](d) for i, d in zip(which, directions)]``, in that order (the
        directions are the block gradients, already shaped as the blocks expect)."""

    def map_gradient(self, which: Sequence[int], gradient: np.ndarray) -> list[Atom]:
        """As :meth:`map` with the directions ``gradient[indices[i]]`` (reshaped), for
        executors with :attr:`whole_gradient`."""
        return self.map(which, [gradient[self.indices[i]].reshape(self.shapes[i])
                                for i in which])

    def use_batch_oracle(self, oracle: Any) -> bool:
        """Offered after :meth:`start`: the domain's batch block oracle (see
        :meth:`~frankwolfe.ProductDomain.batch_block_oracle`), a callable ``(which,
        gradient) -> atoms``.  Returns whether this executor uses it (default: no);
        an executor that does sets :attr:`whole_gradient` for this run."""
        return False

    def chunks(self, call: Any, which: Sequence[int], arg: Any) -> list[Any]:
        """``[call(chunk, arg) for chunk in ...]`` over contiguous chunks of ``which`` that
        cover it in order, run by this executor (for executors :attr:`in_process`)."""
        raise NotImplementedError(f"{type(self).__name__} runs no calls in this process")

    def close(self) -> None:
        """Release what :meth:`start` acquired (called at the end of the run)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _InProcess(Executor):
    """Executors of this process: they take the domain's batch block oracle."""

    _batch: Any = None
    in_process = True

    def start(self, blocks, indices=None, shapes=None):
        super().start(blocks, indices, shapes)
        self._batch = None
        self.whole_gradient = False

    def use_batch_oracle(self, oracle):
        self._batch = oracle
        self.whole_gradient = oracle is not None
        return self.whole_gradient

    def map(self, which, directions):
        blocks = self.blocks
        return [blocks[i](d) for i, d in zip(which, directions)]

    def map_gradient(self, which, gradient):
        if self._batch is None:
            return super().map_gradient(which, gradient)
        return [atom for part in self.chunks(self._batch, which, gradient) for atom in part]

    def chunks(self, call, which, arg):
        return [call(which, arg)]


class SerialExecutor(_InProcess):
    """The oracles one after the other, in this thread (in one call of the domain's
    batch block oracle when it offers one)."""

    name = "serial"


def _n_threads(n_jobs: int) -> int:
    import os

    if isinstance(n_jobs, bool) or int(n_jobs) != n_jobs or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


class ThreadExecutor(_InProcess):
    """The oracles split into ``n_jobs`` contiguous chunks, one thread each (one call of
    the domain's batch block oracle per chunk when it offers one).

    Parameters
    ----------
    n_jobs : int, default -1
        Threads (``-1``: one per core).
    """

    name = "threads"

    def __init__(self, n_jobs: int = -1) -> None:
        self.n_jobs = _n_threads(n_jobs)
        self._pool: ThreadPoolExecutor | None = None

    def start(self, blocks, indices=None, shapes=None):
        super().start(blocks, indices, shapes)
        if self._pool is None and self.n_jobs > 1:
            self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="frankwolfe-oracle")

    def _cuts(self, m: int) -> list[tuple[int, int]]:
        cuts = np.linspace(0, m, min(self.n_jobs, m) + 1).astype(int)
        return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))

    def map(self, which, directions):
        if self._pool is None or len(which) < 2:
            return super().map(which, directions)
        serial = super().map
        futures = [self._pool.submit(serial, which[a:b], directions[a:b])
                   for a, b in self._cuts(len(which))]
        return [atom for f in futures for atom in f.result()]

    def chunks(self, call, which, arg):
        """``call`` on ``n_jobs`` contiguous chunks of ``which`` in the pool, in order (the
        last chunk in the calling thread, which would otherwise wait idle)."""
        if self._pool is None or len(which) < 2:
            return [call(which, arg)]
        cuts = self._cuts(len(which))
        futures = [self._pool.submit(call, which[a:b], arg) for a, b in cuts[:-1]]
        a, b = cuts[-1]
        last = call(which[a:b], arg)
        return [f.result() for f in futures] + [last]

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __repr__(self) -> str:
        return f"ThreadExecutor(n_jobs={self.n_jobs})"


# -- Dask ---------------------------------------------------------------------------

def _dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        import cloudpickle  # dask's own fallback (lambdas, local classes)

        return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


class _Shard:
    """A worker's blocks (built once on the worker from the pickled shard; rebuilt by the
    scheduler on another worker when this one dies, since the bytes travel in the task)."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.blocks, self.indices, self.shapes = pickle.loads(payload)
        self.lock = threading.Lock()  # one round at a time per shard: blocks share scratch

    def __reduce__(self):  # when Dask moves a shard to another worker
        return _Shard, (self.payload,)


def _load_shard(payload: bytes) -> _Shard:
    return _Shard(payload)


def _shard_map(shard: _Shard, local: list[int], gradient: np.ndarray) -> list[Atom]:
    with shard.lock:
        return [shard.blocks[j](gradient[shard.indices[j]].reshape(shard.shapes[j]))
                for j in local]


def _is_client(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("submit", "gather", "scheduler_info"))


class DaskExecutor(Executor):
    """The oracles on a ``dask.distributed`` cluster, blocks sharded over its workers.

    :meth:`start` pickles the blocks (they must be picklable) into one
    contiguous shard per worker and has each worker build its shard once, and waits
    until they are built.  Per round the gradient goes once to each worker involved
    (``dask.distributed.Client.scatter``), and each shard reads its blocks' slices
    (kept in the worker's memory between rounds).  A round sends each shard
    the gradients of its requested blocks and gathers the atoms.

    Faults: the shard tasks carry their bytes, so when a worker dies the
    scheduler rebuilds its shard elsewhere and re-runs the round's tasks
    (``retries`` more for tasks that raise); no block update is lost since the
    steps are applied only once all answers are in.  When the cluster or the
    client is gone, :meth:`map` raises :class:`~frankwolfe.errors.ExecutorError`
    (the solver attaches the result so far, its last good iterate, as
    ``err.result``).

    Parameters
    ----------
    client : dask.distributed.Client
    n_shards : int, optional
        Number of shards (default: the number of workers at :meth:`start`).
    retries : int, default 2
        Dask retries of a failed oracle task.
    """

    name = "dask"

    def __init__(self, client: Any, n_shards: int | None = None, retries: int = 2) -> None:
        if not _is_client(client):
            raise TypeError(f"client must be a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        if n_shards is not None and (int(n_shards) != n_shards or n_shards < 1):
            raise ValueError(f"n_shards must be a positive integer, got {n_shards!r}")
        self.client = client
        self.n_shards = n_shards
        self.retries = int(retries)
        self.bytes_out = 0  # gradients sent, for the cost model

    whole_gradient = True

    def start(self, blocks, indices=None, shapes=None):
        if indices is None or shapes is None:
            raise ValueError("DaskExecutor.start needs the blocks' indices and shapes")
        super().start(blocks, indices, shapes)
        n = len(blocks)
        try:
            workers = sorted(self.client.scheduler_info()["workers"])
        except Exception as err:
            raise ExecutorError(f"DaskExecutor: the cluster does not answer ({err!r})") from err
        if not workers:
            raise ExecutorError("DaskExecutor: the cluster has no workers")
        m = max(1, min(n, self.n_shards or len(workers)))
        cuts = np.linspace(0, n, m + 1).astype(np.int64)
        self.owner = np.repeat(np.arange(m), np.diff(cuts))
        self.local = np.arange(n) - cuts[self.owner]
        self.shards = []
        for s in range(m):
            a, b = int(cuts[s]), int(cuts[s + 1])
            part = list(blocks[a:b])
            try:
                payload = _dumps((part, list(indices[a:b]), list(shapes[a:b])))
            except Exception as err:
                bad = next((int(cuts[s]) + j for j, b in enumerate(part) if not _picklable(b)),
                           int(cuts[s]))
                raise TypeError(
                    f"DaskExecutor: the block LMOs must be picklable to run on a cluster; "
                    f"block {bad} ({type(blocks[bad]).__name__}) is not: {err}") from err
            with warnings.catch_warnings():  # the bytes travel in the task on purpose
                warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
                self.shards.append(self.client.submit(
                    _load_shard, payload, pure=False, workers=[workers[s % len(workers)]],
                    allow_other_workers=True, retries=self.retries))
        from distributed import wait

        wait(self.shards)  # the shards are in place before the first round (set-up time)

    def map(self, which, directions):
        # block slices of one gradient are what the engine hands out; a user calling map
        # directly gets the same answers through a gradient assembled from them
        g = np.zeros(1 + max((int(self.indices[i].max(initial=-1)) for i in which), default=0))
        for i, d in zip(which, directions):
            g[self.indices[i]] = np.asarray(d, dtype=float).reshape(-1)
        return self.map_gradient(which, g)

    def map_gradient(self, which, gradient):
        which = np.asarray(which, dtype=np.int64)
        owner = self.owner[which]
        futures, positions = [], []
        shards = np.unique(owner)
        try:
            if getattr(self.client, "status", "running") in ("closing", "closed"):
                raise OSError("the client is closed")
            g = self.client.scatter(np.ascontiguousarray(gradient, dtype=float),
                                    broadcast=shards.size > 1, hash=False)
            self.bytes_out += gradient.nbytes * shards.size
            for s in shards:
                pos = np.flatnonzero(owner == s)
                futures.append(self.client.submit(_shard_map, self.shards[s],
                                                  self.local[which[pos]].tolist(), g,
                                                  pure=False, retries=self.retries))
                positions.append(pos)
            answers = self.client.gather(futures)
        except Exception as err:
            if not _cluster_lost(err):
                raise  # an oracle's own error, as raised on the worker
            raise ExecutorError(f"DaskExecutor: the cluster or the client was lost during a "
                                f"round of {which.size} block oracles ({err!r})") from err
        out: list[Any] = [None] * which.size
        for pos, atoms in zip(positions, answers):
            for p, a in zip(pos, atoms):
                out[p] = a
        return out

    def close(self):
        for f in getattr(self, "shards", []):
            try:
                f.release()
            except Exception:  # the client may be gone already
                pass
        self.shards = []

    def __repr__(self) -> str:
        return f"DaskExecutor(n_shards={self.n_shards}, retries={self.retries})"


_LOST = {"ClosedClientError", "CancelledError", "FutureCancelledError", "CommClosedError",
         "KilledWorker"}


def _cluster_lost(err: BaseException) -> bool:
    """Whether ``err`` says the cluster (not an oracle) failed."""
    return isinstance(err, (OSError, TimeoutError)) or any(
        c.__name__ in _LOST for c in type(err).__mro__)


def _picklable(obj: Any) -> bool:
    try:
        _dumps(obj)
        return True
    except Exception:
        return False


def make_executor(executor: Any = None, n_jobs: int | None = None) -> Executor:
    """An :class:`Executor` from ``executor`` (an instance, a ``dask.distributed.Client``
    or ``None``) and ``n_jobs`` (threads when ``executor`` is ``None``; 1 or ``None``:
    serial)."""
    if isinstance(executor, Executor):
        return executor
    if executor is not None:
        if _is_client(executor):
            return DaskExecutor(executor)
        raise TypeError(f"executor must be an Executor, a dask.distributed.Client or None, "
                        f"got {type(executor).__name__}")
    if n_jobs is None or _n_threads(n_jobs) == 1:
        return SerialExecutor()
    return ThreadExecutor(n_jobs)

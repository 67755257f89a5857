"""What runs on the workers of :class:`~frankwolfe.parallel.dask.DaskExecutor`.

A worker's shard of the blocks (:class:`_Shard`, built once from its pickled bytes and
kept with its own copy of the round's point), the Dask actor that holds it
(:class:`_ShardActor`), the round's task on it (:func:`_shard_round`), the packing of
the oracles' atoms for the way back (:func:`_pack`, :func:`_unpack`), the pickling of a
shard's bytes (:func:`_dumps`), and the wrapper that carries an ``OSError`` or
``TimeoutError`` of the user's code to the client apart from the cluster's own
(:class:`_UserError`).  Dask itself is never imported here.
"""

from __future__ import annotations

import math
import pickle
import threading
import time
from typing import Any

import numpy as np

from ..atoms import Atom
from .point_log import _Update

__all__ = ["_Shard", "_ShardActor", "_UserError", "_dumps", "_load_shard", "_pack",
           "_picklable", "_shard_round", "_unpack", "_unwrapped", "_users"]


def _dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        import cloudpickle  # dask's own fallback (lambdas, local classes)

        return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


class _Shard:
    """A worker's blocks (built once on the worker from the pickled shard; rebuilt by the
    scheduler on another worker when this one dies, since the bytes travel in the task)
    and its copy of the round's point (``version`` says which: see :class:`_Update`).

    The payload holds either the shard's batch oracle (``batch``: one call per round) or
    its block LMOs with their coordinates and shapes (one call per block)."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.blocks, self.indices, self.shapes, self.batch = pickle.loads(payload)
        self.point: np.ndarray | None = None
        self.version: int | None = None
        self.lock = threading.Lock()  # one round at a time per shard: blocks share scratch

    def __reduce__(self):  # when Dask moves a shard to another worker: without its point
        return _Shard, (self.payload,)

    def __sizeof__(self) -> int:  # what the scheduler weighs before moving a shard
        return len(self.payload) + (0 if self.point is None else self.point.nbytes)


class _UserError(Exception):
    """An ``OSError`` or ``TimeoutError`` of the user's code on a worker (an oracle, a
    shard's ``__setstate__`` reading its files), carried to the client apart from the
    cluster's own (a lost connection, a deadline), which share those types: the client
    raises the original, as it raises every other error of the user's code."""

    def __init__(self, err: BaseException) -> None:
        super().__init__(repr(err))
        self.err = err

    def __reduce__(self) -> tuple:
        return (_UserError, (self.err,))


def _users(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on a worker, its OSError / TimeoutError as :class:`_UserError`."""
    try:
        return fn(*args)
    except (OSError, TimeoutError) as err:
        raise _UserError(err) from None


def _unwrapped(err: BaseException) -> BaseException:
    """The user's own error that :class:`_UserError` carried, else ``err``."""
    return err.err if isinstance(err, _UserError) else err


def _load_shard(payload: bytes) -> _Shard:
    return _users(_Shard, payload)


class _ShardActor:
    """A shard held by a Dask actor on its worker: a round is a method call sent straight
    to that worker, several times faster than a task, which goes through the scheduler
    and back (benchmarks/README.md, "Measurements behind code choices")."""

    def __init__(self, payload: bytes) -> None:
        self.shard = _users(_Shard, payload)

    def round(self, update: _Update, local: np.ndarray, rows: bool | tuple = False
              ) -> tuple | None:
        return _users(_shard_round, self.shard, update, local, rows)


def _shard_round(shard: _Shard, update: _Update, local: np.ndarray,
                 rows: bool | tuple = False) -> tuple | None:
    """A round's task on a worker: bring the shard's point up to date, then the oracles of
    its blocks ``local``: their atoms packed (:func:`_pack`), or with ``rows`` the batch
    oracle's table rows, and the seconds it took; None when the shard needs the whole
    vector first.  A batch oracle with a ``follow(point, changed)`` method is told of
    every change of the point (it may keep quantities derived from it up to date at the
    cost of the change, not of the whole vector).  ``rows`` a tuple: a call of resident
    blocks (:meth:`DaskExecutor.resident`), answered by the shard's
    ``resident(call, local, point)``."""
    with shard.lock:
        tic = time.perf_counter()
        fresh = shard.version != update.version or update.base is None
        if not update.apply(shard) or shard.point is None:
            return None
        x = shard.point
        follow = getattr(shard.batch, "follow", None)
        if fresh and follow is not None:
            follow(x, update.changed())
        if isinstance(rows, tuple):
            return shard.batch.resident(rows, local, x), time.perf_counter() - tic
        if rows:
            return shard.batch.rows(local, x), time.perf_counter() - tic
        if shard.batch is not None:
            atoms = shard.batch(local, x)
        else:
            atoms = [shard.blocks[j](x[shard.indices[j]].reshape(shard.shapes[j]))
                     for j in local]
        return _pack(atoms), time.perf_counter() - tic


def _pack(atoms: list[Atom]) -> tuple:
    """Sparse atoms as a few arrays (a handful of message parts, not two per atom), their
    indices in 32 bits when they fit."""
    if not atoms or not all(a.is_sparse for a in atoms):
        return ("atoms", atoms)
    sizes = np.fromiter((a.nnz for a in atoms), dtype=np.int64, count=len(atoms))
    off = np.concatenate(([0], np.cumsum(sizes)))
    shapes = [a.shape for a in atoms]
    small = max(math.prod(sh) for sh in shapes) < 2**31
    idx = np.concatenate([a.indices for a in atoms]).astype(np.int32 if small else np.int64)
    return ("sparse", off, idx, np.concatenate([a.values for a in atoms]), shapes,
            [a._key for a in atoms])


def _unpack(packed: tuple) -> list[Atom]:
    if packed[0] == "atoms":
        return packed[1]
    _, off, idx, val, shapes, keys = packed
    idx = idx.astype(np.int64)
    # the atoms were checked where they were made: rebuilt without Atom's checks
    return [Atom.from_checked(shape, idx[off[k]:off[k + 1]], val[off[k]:off[k + 1]], key)
            for k, (shape, key) in enumerate(zip(shapes, keys))]


def _picklable(obj: Any) -> bool:
    try:
        _dumps(obj)
        return True
    except Exception:
        return False

"""The client's copy of the last point a :class:`~.dask.DaskExecutor` shipped, and the
updates that bring a worker's copy to it: what changed since the version the worker
holds, found from the coordinates the compiled round steps touched
(:class:`~frankwolfe.compiled.Delta`, O(touched)) or, without them, from a bitwise diff
of all ``d`` coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled.touched import Delta, settle

__all__ = ["_PointLog", "_Update"]


class _Update:
    """What brings a shard's copy of the round's point to ``version``: the whole vector
    (``base`` None), or, on top of version ``base``, the new values at ``indices`` or a
    dense slice of them from ``start``.  New values, not differences, so the shard's copy
    is the client's vector bit for bit."""

    __slots__ = ("base", "version", "indices", "start", "values")

    def __init__(self, base: int | None, version: int, values: np.ndarray,
                 indices: np.ndarray | None = None, start: int = 0) -> None:
        self.base, self.version, self.values = base, version, values
        self.indices, self.start = indices, start

    @property
    def nbytes(self) -> int:
        return self.values.nbytes + (0 if self.indices is None else self.indices.nbytes)

    def changed(self) -> np.ndarray | slice | None:
        """The coordinates this update writes (None: all of them)."""
        if self.base is None:
            return None
        if self.indices is None:
            return slice(self.start, self.start + self.values.size)
        return self.indices

    def apply(self, shard: Any) -> bool:
        """Update ``shard.point``; False when the shard does not hold version ``base`` (a
        shard rebuilt or copied since: it needs the whole vector)."""
        point = shard.point
        if self.base is None:
            shard.point = np.array(self.values, dtype=float)  # writable, its own memory
        elif shard.version == self.version:
            return True  # a re-run of this round's task: applied already
        elif point is None or shard.version != self.base:
            return False
        elif self.indices is None:
            point[self.start:self.start + self.values.size] = self.values
        else:
            point[self.indices] = self.values
        shard.version = self.version
        return True


class _PointLog:
    """The client's side of the shipping: the last vector sent (one copy), its version, and
    the coordinates that changed at each of the latest versions, from which a shard that
    sat out rounds gets the union."""

    def __init__(self, keep: int = 64) -> None:
        self.keep = keep
        self.last = np.empty(0)  # version 0: nothing sent yet
        self.version = 0
        self.changed: dict[int, np.ndarray] = {}
        self.token: int | None = None  # the compiled steps' token of ``last`` (a Delta's)
        self.diffed = 0  # coordinates compared, for the bookkeeping's cost

    def advance(self, g: np.ndarray, delta: Delta | None = None) -> None:
        """Record ``g`` (contiguous float64) as the round's point; ``delta``: the
        coordinates it may differ in from the point of an earlier token (compared
        alone when ``last`` is that point, else all ``d``)."""
        base, self.token = self.token, (None if delta is None else delta.token)
        if self.version == 0 or self.last.shape != g.shape:
            self.last = g.copy()
            self.changed.clear()
            self.version += 1
            return
        if delta is not None and base is not None and delta.base == base:
            out = np.empty(delta.index.size, dtype=np.int64)
            # copied into last
            changed = out[:settle(delta.index, g.view(np.int64), self.last.view(np.int64),
                                  out)]
            self.diffed += delta.index.size
        else:
            # bit patterns: a sign of zero or a NaN payload changes as the float does
            changed = np.flatnonzero(g.view(np.int64) != self.last.view(np.int64))
            self.diffed += g.size
            self.last[changed] = g[changed]
        if changed.size == 0:
            return
        self.version += 1
        self.changed[self.version] = changed
        total = sum(c.size for c in self.changed.values())
        while len(self.changed) > self.keep or total > g.size:  # older shards: whole vector
            total -= self.changed.pop(min(self.changed)).size

    def update(self, base: int | None) -> _Update:
        """The update from version ``base`` (None: none held) to the current one: sparse
        (new values at the changed coordinates) or a dense slice, whichever is smaller,
        or the whole vector."""
        v, last = self.version, self.last
        if base == v:
            return _Update(base, v, last[:0].copy(), start=0)
        if base is None or any(u not in self.changed for u in range(base + 1, v + 1)):
            return _Update(None, v, last.copy())
        parts = [self.changed[u] for u in range(base + 1, v + 1)]
        # one part may be in the order the steps touched it (a Delta's): min and max
        idx = parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))
        lo, hi = int(idx.min()), int(idx.max()) + 1
        itype = np.int32 if last.size < 2**31 else np.int64
        if (hi - lo) * last.itemsize <= idx.size * (last.itemsize + np.dtype(itype).itemsize):
            return _Update(base, v, last[lo:hi].copy(), start=lo)
        return _Update(base, v, last[idx], indices=idx.astype(itype))

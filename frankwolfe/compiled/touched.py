"""The coordinates the compiled block steps touched: a record the driver keeps while it
moves ``x`` and ``grad f`` (a mark per coordinate and a list, O(touched) work), and what
the rounds do with it: ship a point's change and keep copies of a vector current at
the cost of what changed, not of its length.

The driver (``_pass_template``, mini-batch rounds) lists every coordinate its steps
write into a :class:`Touched` record; :class:`TouchLog` closes that list at each point a
round takes (its *token*) and keeps the last few, so that

* an executor that keeps a copy of the last point it shipped (a
  :class:`~frankwolfe.DaskExecutor`) is handed a :class:`Delta` (the coordinates that may
  differ from the point of an earlier token) and compares those alone
  (:func:`settle`), not all ``d``;
* asynchronous rounds take their launch points from :class:`Snapshots`, copies of the
  gradient brought up to date at the coordinates touched since each was last used,
  instead of a whole copy per round.

The record is a superset of what changed (a step may write a value back unchanged), so
whatever is derived from it is the same, bit for bit, as from a diff of all ``d``
coordinates or a whole copy.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["Touched", "Delta", "TouchLog", "Snapshots", "JointScratch", "no_touched",
           "joint_scratch", "touch", "settle"]


class Touched(NamedTuple):
    """The driver's record: coordinate ``p`` is listed in ``coords[:ncoords[0]]`` when
    ``mark[p]`` is 1 (bytes: the marks of a 1.6 M-vector stay in cache); closing the
    list clears the marks of its coordinates alone.  Empty arrays: no record kept."""

    mark: np.ndarray
    coords: np.ndarray
    ncoords: np.ndarray


def no_touched() -> Touched:
    """The record of a driver that keeps none (the steps test ``mark.size`` once)."""
    return Touched(np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64),
                   np.zeros(1, dtype=np.int64))


class JointScratch(NamedTuple):
    """The driver's scratch for a joint round (``round_step="joint"``): the round's summed
    direction ``dx``, zero outside the coordinates listed in ``tr``, and a mark per block
    (``blocks``: a block drawn twice in a round moves once).  Cleared by the driver after
    each round.  Empty arrays: no joint rounds."""

    dx: np.ndarray
    tr: Touched
    blocks: np.ndarray


def joint_scratch(d: int, n: int) -> JointScratch:
    """Scratch for joint rounds over ``x`` of length ``d`` and ``n`` blocks (``d = n = 0``:
    the empty one of a run without them)."""
    return JointScratch(np.zeros(d),
                        Touched(np.zeros(d, dtype=np.uint8), np.empty(d, dtype=np.int64),
                                np.zeros(1, dtype=np.int64)),
                        np.zeros(n, dtype=np.uint8))


@njit(cache=True, nogil=True, inline="always")
def touch(tr, p):  # pragma: no cover - compiled
    """List coordinate ``p`` in the record ``tr`` (once until the list is closed)."""
    if tr.mark[p] == 0:
        tr.mark[p] = 1
        c = tr.ncoords[0]
        tr.coords[c] = p
        tr.ncoords[0] = c + 1


@njit(cache=True, nogil=True)
def settle(index, src, dst, out):  # pragma: no cover - compiled
    """``dst[p] = src[p]`` where they differ, for ``p`` in ``index``; the coordinates
    copied are written to ``out`` (in ``index``'s order); their number.  ``src`` and
    ``dst`` are the int64 views of float arrays (``a.view(np.int64)``, taken by the
    caller: a view inside compiles numba's layout checks): their bit patterns, so a
    zero's sign or a NaN's payload changes as the float does."""
    m = 0
    for a in range(index.size):
        p = index[a]
        if src[p] != dst[p]:
            dst[p] = src[p]
            out[m] = p
            m += 1
    return m


class Delta:
    """What a point (of token ``token``) may differ in from the point of token ``base``:
    the coordinates ``index`` (a superset of those that changed, each once).  Tokens
    are unique per process (a point of another run never matches)."""

    __slots__ = ("base", "token", "index")

    def __init__(self, base: int, token: int, index: np.ndarray) -> None:
        self.base, self.token, self.index = base, token, index


_TOKENS = itertools.count(1)  # next() is atomic in CPython: unique per process


class TouchLog:
    """The record of a run's tracked gradient (length ``d``) and the chain of the points
    taken from it: each point's token and the coordinates touched since the point before
    (the last ``keep`` points)."""

    def __init__(self, d: int, keep: int = 16) -> None:
        self.record = Touched(np.zeros(d, dtype=np.uint8), np.empty(d, dtype=np.int64),
                              np.zeros(1, dtype=np.int64))
        self.keep = max(int(keep), 2)
        # (token, touched since the point before; None: no point before it is known)
        self.chain: deque[tuple[int, np.ndarray | None]] = deque([(next(_TOKENS), None)])

    @property
    def token(self) -> int:
        """The token of the last point taken."""
        return self.chain[-1][0]

    def take(self) -> Delta:
        """Close the record at the vector as it is now: its :class:`Delta` from the point
        taken before (the same token when no step touched it since)."""
        rec = self.record
        prev = self.token
        if rec.ncoords[0] == 0:
            return Delta(prev, prev, rec.coords[:0].copy())
        index = rec.coords[:rec.ncoords[0]].copy()
        self._clear(index)
        token = next(_TOKENS)
        self.chain.append((token, index))
        while len(self.chain) > self.keep:
            self.chain.popleft()
        return Delta(prev, token, index)

    def forget(self) -> None:
        """The vector was replaced (not moved by the steps): no point taken before it
        leads to it."""
        rec = self.record
        self._clear(rec.coords[:rec.ncoords[0]])
        self.chain = deque([(next(_TOKENS), None)])

    def _clear(self, index: np.ndarray) -> None:
        """An empty list: the marks of ``index`` (what it listed) cleared, O(touched)."""
        self.record.mark[index] = 0
        self.record.ncoords[0] = 0

    def since(self, token: int | None) -> list[np.ndarray] | None:
        """The touched lists from the point of ``token`` to the last one taken (None when
        that point is no longer in the chain)."""
        parts: list[np.ndarray] = []
        for t, index in reversed(self.chain):
            if t == token:
                return parts[::-1]
            if index is None:
                return None
            parts.append(index)
        return None


class Snapshots:
    """Copies of vectors the steps keep current, for points that must outlive the steps
    (asynchronous rounds: a round's oracles read its launch point while later rounds'
    steps move the vector): a copy not in use is brought up to date at the coordinates
    touched since it was last taken (:meth:`TouchLog.since`; a whole copy when those are
    no longer kept), so a point costs what changed, not ``d``.  :meth:`release` returns
    a copy (from any thread)."""

    def __init__(self) -> None:
        # (source, token of the copy's content, copy); the source is held so that its id
        # is not another array's
        self._free: list[tuple[np.ndarray, int, np.ndarray]] = []
        self._held: dict[int, tuple[np.ndarray, int]] = {}  # id of a copy in use
        self._lock = threading.Lock()

    def take(self, a: np.ndarray, log: TouchLog | None,
             where: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
        """A copy of ``a``, bit for bit: ``a`` is the tracked vector (``where`` None) or
        an array the steps keep current from it, whose coordinates that change are
        ``where(touched)`` for the tracked vector's touched coordinates.  ``log``: the
        record, the last point just taken (None: a whole copy)."""
        with self._lock:
            fits = [k for k, (src, _, _) in enumerate(self._free) if src is a]
            # the latest point's copy (tokens grow): the fewest coordinates to bring over
            pick = max(fits, key=lambda k: self._free[k][1], default=None)
            _, token, buf = self._free.pop(pick) if pick is not None else (a, 0, None)
        parts = None if log is None or buf is None else log.since(token)
        if buf is None:
            buf = a.copy()
        elif parts is None:
            np.copyto(buf, a)
        else:
            for index in parts:
                if where is not None:
                    index = where(index)
                buf[index] = a[index]
        with self._lock:
            self._held[id(buf)] = (a, 0 if log is None else log.token)
        return buf

    def release(self, buf: np.ndarray) -> None:
        """``buf`` (from :meth:`take`) is no longer read."""
        with self._lock:
            held = self._held.pop(id(buf), None)
            if held is not None:
                self._free.append((held[0], held[1], buf))

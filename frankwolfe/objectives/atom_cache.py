"""A byte-bounded LRU cache of per-atom products.

Structured trackers (:class:`~frankwolfe.LeastSquares`,
:class:`~frankwolfe.QuadraticObjective`) store, for each atom ``a`` the
algorithm has met, the products they need (``A a``, ``A^T A a``, ``Q a``).
Frank-Wolfe meets the same vertices again and again, so a cached product
turns an O(mn) matrix-vector product into an O(m + n) update.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

__all__ = ["AtomCache", "DEFAULT_CACHE_BYTES"]

#: Default memory budget of one tracker's cache (256 MB).
DEFAULT_CACHE_BYTES = 256 * 2**20


#: what an entry holds: a tuple of arrays (or of objects with ``nbytes``, such as
#: sparse products), as the cache's user types it
_Entry = TypeVar("_Entry", bound=tuple[Any, ...])


class AtomCache(Generic[_Entry]):
    """Least-recently-used map ``atom key -> tuple of arrays``, bounded in bytes.

    Parameters
    ----------
    max_bytes : int
        Budget for the arrays held; the least recently used entries are
        evicted to stay within it.  An entry larger than the whole budget
        is not stored (the caller still gets its products, uncached).

    Notes
    -----
    Entries are keyed by :attr:`Atom.key`, which identifies a vertex within
    one domain only, so a cache must not be shared between runs on
    different domains; trackers own one cache each.
    """

    __slots__ = ("max_bytes", "nbytes", "hits", "misses", "evictions", "_data")

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        max_bytes = int(max_bytes)
        if max_bytes < 0:
            raise ValueError(f"AtomCache: `max_bytes` must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self._data: OrderedDict[Hashable, tuple[_Entry, int]] = OrderedDict()

    def get(self, key: Hashable) -> _Entry | None:
        """The stored arrays for ``key`` (marked most recently used), or ``None``."""
        entry = self._data.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return entry[0]

    def put(self, key: Hashable, arrays: _Entry) -> None:
        """Store ``arrays`` under ``key``, evicting old entries to fit the budget."""
        # Entries may share an array (Q a serves as both products): count it once.
        size = sum(a.nbytes for a in {id(a): a for a in arrays}.values())
        if size > self.max_bytes:
            return
        old = self._data.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        while self._data and self.nbytes + size > self.max_bytes:
            _, (_, freed) = self._data.popitem(last=False)
            self.nbytes -= freed
            self.evictions += 1
        self._data[key] = (arrays, size)
        self.nbytes += size

    def clear(self) -> None:
        """Drop every entry (statistics are kept)."""
        self._data.clear()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return (f"AtomCache(entries={len(self)}, nbytes={self.nbytes}, max_bytes={self.max_bytes}, "
                f"hits={self.hits}, misses={self.misses})")

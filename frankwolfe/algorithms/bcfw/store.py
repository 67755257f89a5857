"""Per-block bookkeeping of block-coordinate Frank-Wolfe, O(|block|) per step.

* :class:`BlockAtomStore` - per-block atoms (dense rows over the block's
  coordinates, or a CSR pool of their nonzeros when they are sparse),
  active-set weights and last-use stamps: the oracle cache and the active set
  of away / pairwise block steps (gapBCFW keeps both in one table of
  labellings).
* :class:`LazyAverage` - the weighted / uniform / tail average of the
  iterates, updated lazily per coordinate so a block step never touches the
  whole vector.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numba import njit

from ..averages import WEIGHTED

__all__ = ["BlockAtomStore", "LazyAverage", "SparseRows"]


@njit(cache=True, nogil=True)
def _rows_dot(ptr, idx, val, rows, g):
    """``<a_r, g>`` for the rows ``r`` in ``rows`` of a CSR pool."""
    out = np.empty(rows.size)
    for k in range(rows.size):
        r = rows[k]
        s = 0.0
        for j in range(ptr[r], ptr[r + 1]):
            s += val[j] * g[idx[j]]
        out[k] = s
    return out


@njit(cache=True, nogil=True)
def _increasing_nonzero(idx, val):  # pragma: no cover - compiled
    """Whether ``idx`` increases strictly and ``val`` has no zero."""
    for j in range(idx.size):
        if val[j] == 0.0 or (j and idx[j] <= idx[j - 1]):
            return False
    return True


class SparseRows:
    """Rows of a block's sparse atom pool with the two operations block steps use
    on a dense ``(rows, m)`` array: ``rows @ g`` (scores) and ``rows[r]`` (a dense
    row, a new array); ``rows[sel]`` with an index array or mask selects rows."""

    __slots__ = ("ptr", "idx", "val", "m", "sel")

    def __init__(self, ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, m: int,
                 sel: np.ndarray) -> None:
        self.ptr, self.idx, self.val, self.m, self.sel = ptr, idx, val, m, sel

    @property
    def shape(self) -> tuple[int, int]:
        return (self.sel.size, self.m)

    def __len__(self) -> int:
        return self.sel.size

    def __matmul__(self, g: np.ndarray) -> np.ndarray:
        return _rows_dot(self.ptr, self.idx, self.val, self.sel, g)

    def __getitem__(self, key: Any) -> np.ndarray | SparseRows:
        if isinstance(key, (int, np.integer)):
            r = int(self.sel[key])
            a, b = self.ptr[r], self.ptr[r + 1]
            v = np.zeros(self.m)
            v[self.idx[a:b]] = self.val[a:b]
            return v
        return SparseRows(self.ptr, self.idx, self.val, self.m,
                          np.ascontiguousarray(self.sel[key], dtype=np.int64))

    def toarray(self) -> np.ndarray:
        """The rows as a dense array."""
        return np.array([self[k] for k in range(len(self))]).reshape(len(self), self.m)


_UNSET = np.empty(0)
_UNSET.flags.writeable = False

#: storage names of :class:`BlockAtomStore`
STORAGES = ("auto", "dense", "sparse")


class BlockAtomStore:
    """Atoms, weights and use stamps of every block.

    Block ``i`` holds up to ``max_size`` inactive atoms; atoms with positive
    weight (the block's active set) are never evicted, so a block may exceed
    ``max_size`` while they are needed.  Eviction removes the least recently
    used inactive atom.  The atoms of a block are stored either as rows of a
    dense ``(rows, m_i)`` array or, for sparse atoms (a shortest-path tree
    over all links of a network), as a CSR pool: row offsets, int32 / int64
    indices and values of the nonzeros, kept compact and in row order.
    :meth:`rows` hands out a dense array or a :class:`SparseRows`; both give
    the same scores ``rows @ g`` and dense rows ``rows[r]`` up to the order
    of summation.

    Parameters
    ----------
    sizes : sequence of int
        Number of coordinates ``m_i`` of each block.
    max_size : int
        Bound on the number of stored inactive atoms per block.
    storage : {"auto", "dense", "sparse"}, default "auto"
        ``"auto"`` decides per block from its first stored atom: sparse when
        the block has at least :attr:`SPARSE_MIN_SIZE` coordinates and the
        atom at most half of them nonzero (a sparse entry costs 12 bytes
        against 8 per coordinate: at half density 6 against 8).
    """

    #: smallest block stored sparsely by ``storage="auto"``: below, a dense atom costs
    #: at most 8 KB and BLAS scores it fastest (and small networks keep their
    #: established rounding: the iterates of dense and sparse differ in the last bits)
    SPARSE_MIN_SIZE = 1024

    def __init__(self, sizes: np.ndarray, max_size: int, storage: str = "auto") -> None:
        if storage not in STORAGES:
            raise ValueError(f"atom_storage must be one of {STORAGES}, got {storage!r}")
        n = len(sizes)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.max_size = int(max_size)
        self.storage = storage
        # _UNSET until a block's first atom: one shared empty array, never written
        self.mats: list[np.ndarray] = [_UNSET] * n
        self.weights: list[np.ndarray] = [_UNSET] * n
        self.stamps: list[np.ndarray] = [_UNSET] * n
        self.keys: list[dict[Hashable, int]] = [{} for _ in range(n)]
        self.count = np.zeros(n, dtype=np.int64)
        self.sparse = np.zeros(n, dtype=bool)
        # sparse blocks: row offsets (capacity + 1), nonzero indices and values
        self.ptr: list[np.ndarray] = [_UNSET] * n
        self.idx: list[np.ndarray] = [_UNSET] * n
        self.val: list[np.ndarray] = [_UNSET] * n

    def _allocate(self, i: int, vec: np.ndarray) -> None:
        """First atom of block ``i``: choose its storage and allocate."""
        cap, m = 4, int(self.sizes[i])
        nnz = int(np.count_nonzero(vec))
        if self.storage == "auto":
            sparse = m >= self.SPARSE_MIN_SIZE and 2 * nnz <= m
        else:
            sparse = self.storage == "sparse"
        self.sparse[i] = sparse
        if sparse:
            self.ptr[i] = np.zeros(cap + 1, dtype=np.int64)
            self.idx[i] = np.empty(max(cap * nnz, 16),
                                   dtype=np.int32 if m < 2**31 else np.int64)
            self.val[i] = np.empty(self.idx[i].size)
        else:
            self.mats[i] = np.empty((cap, m))
        self.weights[i] = np.zeros(cap)
        self.stamps[i] = np.zeros(cap, dtype=np.int64)

    def add_sparse(self, i: int, key: Hashable, indices: np.ndarray, values: np.ndarray,
                   weight: float, stamp: int) -> int:
        """:meth:`add` of the vector with ``values`` at ``indices`` (a sparse atom): into a
        sparse block's pool without the dense vector when the indices are increasing and
        the values nonzero (what the dense vector's nonzeros would be); else as
        :meth:`add`.  (A certificate stores a new atom per block: on CoNLL-2000 their
        dense vectors took a large share of it; benchmarks/README.md, "Measurements
        behind code choices".)"""
        if self.sparse[i] and self.weights[i] is not _UNSET:
            idx = np.asarray(indices, dtype=np.int64)
            val = np.asarray(values, dtype=float)
            if _increasing_nonzero(idx, val):
                return self.add(i, key, _UNSET, weight, stamp, (idx, val))
        vec = np.zeros(int(self.sizes[i]))
        vec[indices] = values
        return self.add(i, key, vec, weight, stamp)

    def add(self, i: int, key: Hashable, vec: np.ndarray, weight: float, stamp: int,
            nonzeros: tuple[np.ndarray, np.ndarray] | None = None) -> int:
        """Store ``vec`` under ``key`` in block ``i`` (or find it); return its row
        (``nonzeros``: ``vec``'s nonzero indices and values instead of ``vec``, for an
        allocated sparse block, see :meth:`add_sparse`)."""
        keys = self.keys[i]
        row = keys.get(key)
        if row is not None:
            self.stamps[i][row] = stamp
            return row
        c = int(self.count[i])
        if self.weights[i] is _UNSET:
            self._allocate(i, vec)
        w = self.weights[i]
        if c >= self.max_size:
            inactive = np.flatnonzero(w[:c] <= 0.0)
            if inactive.size:  # reuse the least recently used inactive row
                row = int(inactive[np.argmin(self.stamps[i][inactive])])
                old = next(k for k, r in keys.items() if r == row)
                del keys[old]
                self._write(i, row, key, vec, weight, stamp, nonzeros)
                return row
        if c == w.shape[0]:
            names = ("weights", "stamps") + (("ptr",) if self.sparse[i] else ("mats",))
            for name in names:
                arr = getattr(self, name)[i]
                new = np.zeros((2 * arr.shape[0],) + arr.shape[1:], dtype=arr.dtype)
                new[:arr.shape[0]] = arr
                getattr(self, name)[i] = new
        if self.sparse[i]:
            self.ptr[i][c + 1] = self.ptr[i][c]  # an empty row to write into
        self.count[i] = c + 1
        self._write(i, c, key, vec, weight, stamp, nonzeros)
        return c

    def _write(self, i: int, row: int, key: Hashable, vec: np.ndarray, weight: float,
               stamp: int, nonzeros: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        if self.sparse[i]:
            self._write_sparse(i, row, vec, nonzeros)
        else:
            self.mats[i][row] = vec
        self.weights[i][row] = weight
        self.stamps[i][row] = stamp
        self.keys[i][key] = row

    def _write_sparse(self, i: int, row: int, vec: np.ndarray,
                      nonzeros: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Row ``row`` of block ``i``'s pool becomes ``vec``'s nonzeros (or ``nonzeros``);
        the rows after it shift when the length changes (the pool stays compact, in row
        order)."""
        if nonzeros is None:
            nz = np.flatnonzero(vec)
            nzv = vec[nz]
        else:
            nz, nzv = nonzeros
        ptr, c = self.ptr[i], int(self.count[i])
        a, b, end = int(ptr[row]), int(ptr[row + 1]), int(ptr[c])
        delta = nz.size - (b - a)
        if delta:
            if end + delta > self.idx[i].size:
                cap = max(2 * self.idx[i].size, end + delta)
                for name in ("idx", "val"):
                    arr = getattr(self, name)[i]
                    new = np.empty(cap, dtype=arr.dtype)
                    new[:end] = arr[:end]
                    getattr(self, name)[i] = new
            idx, val = self.idx[i], self.val[i]
            idx[b + delta:end + delta] = idx[b:end].copy()
            val[b + delta:end + delta] = val[b:end].copy()
            ptr[row + 1:c + 1] += delta
        self.idx[i][a:a + nz.size] = nz
        self.val[i][a:a + nz.size] = nzv

    def stamp(self, i: int, row: int, stamp: int) -> None:
        """Mark row ``row`` of block ``i`` as used at step ``stamp``."""
        self.stamps[i][row] = stamp

    def add_weight(self, i: int, row: int, weight: float) -> None:
        """Add ``weight`` to the weight of row ``row`` of block ``i``."""
        self.weights[i][row] += weight

    def rows(self, i: int) -> tuple[np.ndarray | SparseRows, np.ndarray]:
        """Views ``(atoms, weights)`` of the stored rows of block ``i`` (atoms: a dense
        array or, for a sparse block, a :class:`SparseRows`)."""
        c = int(self.count[i])
        if self.sparse[i]:
            return (SparseRows(self.ptr[i], self.idx[i], self.val[i], int(self.sizes[i]),
                               np.arange(c)), self.weights[i][:c])
        return self.mats[i][:c], self.weights[i][:c]

    @property
    def nbytes(self) -> int:
        """Bytes of the stored arrays (allocated capacity; the key dicts not counted)."""
        total = 0
        for name in ("mats", "weights", "stamps", "ptr", "idx", "val"):
            total += sum(a.nbytes for a in getattr(self, name))
        return total

    def active_size(self, i: int) -> int:
        """Number of atoms with positive weight in block ``i``."""
        c = int(self.count[i])
        return 0 if c == 0 else int(np.count_nonzero(self.weights[i][:c] > 0.0))

    def active(self, i: int) -> list[tuple[Hashable, float]]:
        """``(key, weight)`` of the atoms with positive weight in block ``i``."""
        c = int(self.count[i])
        if c == 0:
            return []
        w = self.weights[i][:c]
        return [(k, float(w[r])) for k, r in self.keys[i].items() if w[r] > 0.0]

    def total_active(self) -> int:
        """Sum of the active-set sizes over the blocks."""
        return sum(self.active_size(i) for i in range(len(self.keys)))

    def move(self, i: int, kind: str, s_row: int, a_row: int, gamma: float,
             gamma_max: float) -> bool:
        """Weights of block ``i`` after a step of size ``gamma`` (``kind``: ``"fw"`` toward
        row ``s_row``, ``"away"`` from row ``a_row``, ``"pairwise"`` from ``a_row`` to
        ``s_row``); returns whether an atom dropped out."""
        W = self.weights[i][:self.count[i]]
        dropped = False
        if kind == "fw":
            W *= 1.0 - gamma
            W[s_row] += gamma
            if gamma >= gamma_max:  # full step: every other atom drops
                W[:] = 0.0
                W[s_row] = 1.0
        else:
            if kind == "pairwise":
                W[s_row] += gamma
            else:
                W *= 1.0 + gamma
            W[a_row] -= gamma
            if gamma >= gamma_max:
                W[a_row] = 0.0
                dropped = True
        W[W < 1e-15] = 0.0  # rounding residue of dropped atoms
        # zeroing residues (and long runs of scalings) moves the sum off 1; an away step
        # that drops the last atom of a drifted table would leave no active atom at all
        total = W.sum()
        if total > 0.0 and total != 1.0:
            W /= total
        return dropped


class LazyAverage:
    """Running average of the iterates ``x_0, x_1, ...`` in O(|block|) per step.

    ``x_k`` is the iterate after ``k`` block steps.  ``kind``:

    * ``"weighted"`` - ``xbar <- k/(k+2) xbar + 2/(k+2) x`` after step ``k``
      (BCFW-wavg); iterate ``x_j`` gets weight proportional to ``j``;
    * ``"uniform"`` - the plain mean of ``x_0..x_K``;
    * ``"tail"`` - the 0.5-suffix average by the doubling trick (BCFW-tavg):
      two epochs are kept, the previous one and the current one, and the
      caller ends an epoch with :meth:`end_pass` after passes 1, 2, 4, 8, ...
      After ``P`` passes of ``n`` steps, ``2^j <= P < 2^(j+1)``, the average is
      the plain mean of the iterates of passes ``2^(j-1) + 1 .. P``, i.e. of
      ``x_k`` for ``2^(j-1) n < k <= P n`` (after pass 1: of ``x_0 .. x_n``):
      for ``P >= 2`` between the last half and the last three quarters of the run.

    Each coordinate keeps the accumulated weighted sum up to the step where
    it last changed; :meth:`touch` settles coordinates before they change
    and :meth:`value` settles everything.  Ending an epoch settles everything
    too (O(dim), once per doubling).
    """

    def __init__(self, x: np.ndarray, kind: str) -> None:
        self.kind = kind
        self.acc = np.zeros(x.size)
        self.since = np.zeros(x.size, dtype=np.int64)  # first iterate holding today's value
        self.start = 0  # first iterate of the current epoch ("tail" / restarts move it)
        self.prev: np.ndarray | None = None  # sum of the previous epoch's iterates ("tail")
        self.n_prev = 0  # and their number

    def _cum(self, t: np.ndarray | int) -> np.ndarray | float:
        """Sum of the weights of iterates ``start .. t-1``."""
        if self.kind == WEIGHTED:
            return t * (t - 1) / 2.0  # weights j for j < t (x_0 gets weight 0)
        return t - self.start

    def touch(self, x: np.ndarray, idx: np.ndarray | slice, k: int) -> None:
        """Settle ``idx`` before step ``k`` changes them (``x`` holds ``x_k``)."""
        since = self.since[idx]
        self.acc[idx] += x[idx] * (self._cum(k + 1) - self._cum(since))
        self.since[idx] = k + 1

    def restart(self, x: np.ndarray, k: int) -> None:
        """Start a new average at iterate ``x_k``, forgetting all before (O(dim))."""
        self.acc[:] = 0.0
        self.since[:] = k
        self.start = k
        self.prev, self.n_prev = None, 0

    def end_epoch(self, x: np.ndarray, k: int) -> None:
        """End the current epoch with iterate ``x_k`` (``x`` holds it): it becomes the
        previous epoch (the one before is dropped) and a new one starts at ``x_{k+1}``
        (O(dim))."""
        total = self._cum(k + 1)
        self.prev = self.acc + x * (total - self._cum(self.since))
        self.n_prev = int(total)
        self.acc[:] = 0.0
        self.since[:] = k + 1
        self.start = k + 1

    def end_pass(self, x: np.ndarray, k: int, passes: int) -> None:
        """The doubling trick of ``"tail"``: end the epoch after pass 1, 2, 4, 8, ...
        (``passes`` passes done, ``x`` holds ``x_k``); other kinds do nothing."""
        if self.kind == "tail" and passes > 0 and passes & (passes - 1) == 0:
            self.end_epoch(x, k)

    def window(self, k: int) -> tuple[int, int]:
        """``(first, last)``: the iterates ``x_first .. x_last`` the average at ``x_k``
        is over (for ``"weighted"`` with weights proportional to ``j``)."""
        return self.start - self.n_prev, k

    def value(self, x: np.ndarray, k: int) -> np.ndarray:
        """The average up to and including ``x_k`` (a new array)."""
        total = self._cum(k + 1)
        if total + self.n_prev <= 0:
            return x.copy()
        s = self.acc + x * (total - self._cum(self.since))
        if self.prev is not None:
            s += self.prev
        return s / (total + self.n_prev)

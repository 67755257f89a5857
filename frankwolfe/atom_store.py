"""The atom store: atoms kept by key in slots, with their weights, stacked for products.

:class:`AtomStore` is the storage shared by every active-set structure:
:class:`~frankwolfe.active_set.ActiveSet` adds the convex-combination steps on top
of it, and the fully corrective saddle-point players add per-atom products and
drop/pin bookkeeping.  A dict look-up answers "is this atom present?", and the
atoms' entries are stacked so that the products with all of them are one
operation.

Storage
-------
Atoms live in slots ``0..k-1``; a dropped atom's slot is refilled by the
last one (swap-remove), so the weights stay one contiguous array.  The
atoms' entries are stacked for the away query:

* dense atoms: rows of a ``(capacity, n)`` buffer grown geometrically, and
  the scores ``<g, a_i>`` are one mat-vec;
* sparse atoms: flat (index, value, slot) arrays, the scores are one
  ``bincount``; entries of dropped atoms are zeroed and compacted away once
  they outnumber the live ones.

The storage mode is chosen by the first atom; later atoms of the other kind
are converted (a dense atom's non-zeros, or a densified sparse atom).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from .atoms import Atom
from .errors import ShapeError

__all__ = ["AtomStore", "row_room"]

# Sparse storage is compacted when dead entries exceed both this and the live count.
_MIN_COMPACT = 1024

_FLOAT = np.dtype(float)


class AtomStore:
    """Atoms stored by key in slots ``0..k-1``, each with a weight ``>= 0``.

    The shared store of every active-set structure: a dict look-up answers
    "is this atom present?", the atoms' entries are stacked (dense rows or
    flat sparse arrays) so that :meth:`scores` is one product and
    :meth:`stacked` one matrix, and removal is a swap with the last slot.
    The weights carry no constraint here; subclasses give them a meaning
    (:class:`~frankwolfe.active_set.ActiveSet`: a convex combination).  A
    subclass that keeps data aligned with the slots overrides
    :meth:`_slot_moved` and :meth:`_slot_popped`.
    """

    def __init__(self) -> None:
        self._atoms: list[Atom] = []
        self._keys: dict[Hashable, int] = {}
        self._w = np.zeros(8)
        self._k = 0
        self.shape: tuple[int, ...] | None = None
        self._n = 0
        self._mode: str | None = None
        # dense store
        self._rows = np.zeros((0, 0))  # allocated by the first dense atom
        # sparse store
        self._idx = np.zeros(0, dtype=np.int64)
        self._val = np.zeros(0)
        self._own = np.zeros(0, dtype=np.int64)
        self._live = np.zeros(0, dtype=bool)
        self._used = 0
        self._dead = 0
        self._start = np.zeros(8, dtype=np.int64)
        self._stop = np.zeros(8, dtype=np.int64)
        # a warm start's keys -> the keys its atoms are held under here (see mark_foreign)
        self._foreign: dict[Hashable, Hashable] = {}

    def mark_foreign(self) -> None:
        """Hold the current atoms under keys of their own: they came from another run,
        whose domain may give a key to another vertex than this one does (the l1 ball's
        ``("e", i, s)`` at another radius), and a key names one vector for every cache
        keyed on it (the objectives' per-atom products).  An atom added later under an
        original key takes the stored atom's place when it is the same vector, and
        comes in beside it when not.  (Before, the new vertex's weight went to the old
        vector: ``x`` left the domain and the gaps went negative.)"""
        for i in range(self._k):
            held = self._atoms[i]
            key: Hashable = ("x0", held.key)
            while key in self._keys:
                key = ("x0", key)
            self._foreign[held.key] = key
            del self._keys[held.key]
            self._atoms[i] = _rekeyed(held, key)
            self._keys[key] = i

    def restore_foreign_keys(self) -> None:
        """Give the atoms still held under keys of their own (:meth:`mark_foreign`) their
        original keys back where no atom of this run holds that key: what a result shows
        and what the next warm start (which marks them again) starts from."""
        for key, alias in list(self._foreign.items()):
            j = self._keys.get(alias)
            if j is None or key in self._keys:
                continue
            self._atoms[j] = _rekeyed(self._atoms[j], key)
            del self._keys[alias]
            self._keys[key] = j
        self._foreign = {}

    def _merge_foreign(self, atom: Atom) -> int | None:
        """The slot of the foreign atom that is ``atom``'s vector, now held under
        ``atom.key``; None when there is none."""
        alias = self._foreign.get(atom.key)
        j = None if alias is None else self._keys.get(alias)
        if j is None or not _same_vector(self._atoms[j], atom):
            return None
        del self._foreign[atom.key], self._keys[alias]
        self._atoms[j] = atom
        self._keys[atom.key] = j
        return j

    def __len__(self) -> int:
        return self._k

    def __contains__(self, item: Atom | Hashable) -> bool:
        key = item.key if isinstance(item, Atom) else item
        return key in self._keys

    def __iter__(self) -> Iterator[tuple[Atom, float]]:
        for i in range(self._k):
            yield self._atoms[i], float(self._w[i])

    @property
    def atoms(self) -> list[Atom]:
        """The active atoms, in slot order (a new list)."""
        return list(self._atoms)

    @property
    def weights(self) -> np.ndarray:
        """The weights aligned with :attr:`atoms` (a copy)."""
        return self._w[: self._k].copy()

    @property
    def keys(self) -> list[Hashable]:
        """The atoms' keys in slot order."""
        return [a.key for a in self._atoms]

    def weight(self, item: Atom | Hashable) -> float:
        """Weight of an atom (0 when it is not active)."""
        key = item.key if isinstance(item, Atom) else item
        i = self._keys.get(key)
        return 0.0 if i is None else float(self._w[i])

    def slot(self, item: Atom | Hashable) -> int:
        """Slot index of an active atom."""
        key = item.key if isinstance(item, Atom) else item
        try:
            return self._keys[key]
        except KeyError:
            raise KeyError(f"atom {key!r} is not in the active set") from None

    def atom_at(self, i: int) -> Atom:
        """The atom in slot ``i``."""
        return self._atoms[i]

    def weight_at(self, i: int) -> float:
        """The weight in slot ``i``."""
        return float(self._w[i])

    def scores(self, gradient: np.ndarray) -> np.ndarray:
        """``<gradient, a_i>`` for every active atom, in slot order (one product)."""
        g = gradient if type(gradient) is np.ndarray and gradient.dtype == _FLOAT else \
            np.asarray(gradient, dtype=float)
        if self.shape is not None and g.shape != self.shape:
            raise ShapeError(
                f"ActiveSet.scores: `gradient` has shape {g.shape}, expected {self.shape}"
            )
        gf = g.reshape(-1)
        k = self._k
        if self._mode == "dense":
            return self._rows[:k] @ gf
        m = self._used
        s = np.bincount(self._own[:m], weights=gf[self._idx[:m]] * self._val[:m], minlength=k)
        return s[:k]

    def _sum(self) -> np.ndarray:
        k = self._k
        if k == 0:
            return np.zeros(self.shape if self.shape is not None else (0,))
        w = self._w[:k]
        flat: np.ndarray
        if self._mode == "dense":
            flat = w @ self._rows[:k]
        else:
            m = self._used
            # dead entries hold value 0 and slot 0, so they add nothing
            flat = np.bincount(self._idx[:m], weights=self._val[:m] * w[self._own[:m]],
                               minlength=self._n)
        return np.ascontiguousarray(flat.reshape(self.shape), dtype=float)

    def _add_weight(self, atom: Atom, w: float) -> None:
        i = self._keys.get(atom.key)
        if i is None and self._foreign:
            i = self._merge_foreign(atom)
        if i is not None:
            self._w[i] += w
            return
        if self.shape is None:
            self.shape = tuple(atom.shape)
            self._n = int(np.prod(self.shape))
            self._mode = "sparse" if atom.is_sparse else "dense"
        elif atom.shape != self.shape:
            raise ShapeError(
                f"ActiveSet: atom of shape {atom.shape} added to a set of shape {self.shape}"
            )
        k = self._k
        if k == self._w.size:
            self._w = _grow(self._w, 2 * k)
            self._start = _grow(self._start, 2 * k)
            self._stop = _grow(self._stop, 2 * k)
        if self._mode == "dense":
            self._rows = row_room(self._rows, k, self._n)
            self._rows[k] = atom.to_dense().reshape(-1)
        else:
            idx, val = atom.nonzeros()
            m, nnz = self._used, idx.size
            if m + nnz > self._idx.size:
                cap = max(2 * (m + nnz), 64)
                self._idx = _grow(self._idx, cap)
                self._val = _grow(self._val, cap)
                self._own = _grow(self._own, cap)
                self._live = _grow(self._live, cap)
            self._idx[m:m + nnz] = idx
            self._val[m:m + nnz] = val
            self._own[m:m + nnz] = k
            self._live[m:m + nnz] = True
            self._start[k], self._stop[k] = m, m + nnz
            self._used = m + nnz
        self._atoms.append(atom)
        self._keys[atom.key] = k
        self._w[k] = w
        self._k = k + 1

    def _remove_slot(self, i: int) -> None:
        last = self._k - 1
        del self._keys[self._atoms[i].key]
        if self._mode == "sparse":
            s, e = self._start[i], self._stop[i]
            self._val[s:e] = 0.0
            self._own[s:e] = 0
            self._live[s:e] = False
            self._dead += int(e - s)
        if i != last:
            moved = self._atoms[last]
            self._atoms[i] = moved
            self._keys[moved.key] = i
            self._w[i] = self._w[last]
            if self._mode == "dense":
                self._rows[i] = self._rows[last]
            else:
                s, e = self._start[last], self._stop[last]
                self._own[s:e] = i
                self._start[i], self._stop[i] = s, e
            self._slot_moved(last, i)
        self._atoms.pop()
        self._w[last] = 0.0
        self._k = last
        self._slot_popped()
        if self._mode == "sparse" and self._dead > max(_MIN_COMPACT, self._used - self._dead):
            self._compact()

    def _compact(self) -> None:
        m, k = self._used, self._k
        keep = self._live[:m]
        pos = np.concatenate(([0], np.cumsum(keep)))  # new position of each old entry
        live = int(pos[-1])
        self._idx[:live] = self._idx[:m][keep]
        self._val[:live] = self._val[:m][keep]
        self._own[:live] = self._own[:m][keep]
        self._live[:live] = True
        self._live[live:m] = False
        self._start[:k] = pos[self._start[:k]]
        self._stop[:k] = pos[self._stop[:k]]
        self._used = live
        self._dead = 0

    def stacked(self) -> Any:
        """The atoms as the rows of a ``(k, n)`` matrix, in slot order.

        A view of the dense store (valid until the next change) or a CSR
        array built from the sparse store, O(nnz).
        """
        k = self._k
        if self._mode == "dense":
            return self._rows[:k]
        m = self._used
        live = self._live[:m]
        return sp.csr_array((self._val[:m][live], (self._own[:m][live], self._idx[:m][live])),
                            shape=(k, self._n))

    def _slot_moved(self, src: int, dst: int) -> None:
        """Hook: the atom in slot ``src`` (the last) now lives in slot ``dst``."""

    def _slot_popped(self) -> None:
        """Hook: the last slot was removed."""


def row_room(rows: np.ndarray, k: int, width: int) -> np.ndarray:
    """``rows`` (its first ``k`` rows in use) with room for row ``k``: 8 rows of
    ``width`` at first, twice as many as in use when full (the first ``k`` copied)."""
    if rows.shape[0] == 0:
        return np.zeros((8, width))
    if k < rows.shape[0]:
        return rows
    grown = np.zeros((2 * k, width))
    grown[:k] = rows[:k]
    return grown


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros(max(cap, 8), dtype=a.dtype)
    out[: a.size] = a
    return out


def _same_vector(a: Atom, b: Atom) -> bool:
    """Whether two atoms are one vector (to rounding: an oracle may build its vertex
    again in another order of operations)."""
    if a.shape != b.shape:
        return False
    if a.is_sparse and b.is_sparse and a.indices.size == b.indices.size:
        if np.array_equal(a.indices, b.indices):
            return bool(np.allclose(a.values, b.values, rtol=1e-12, atol=0.0))
    return bool(np.allclose(a.to_dense(), b.to_dense(), rtol=1e-12, atol=0.0))


def _rekeyed(atom: Atom, key: Hashable) -> Atom:
    """``atom``'s vector under ``key`` (sparse stays sparse)."""
    if atom.is_sparse:
        return Atom(indices=atom.indices, values=atom.values, shape=atom.shape, key=key)
    return Atom(atom.to_dense(), key)

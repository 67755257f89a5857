"""Active sets: a point stored as a convex combination of atoms.

Away-step, pairwise and other active-set methods keep the iterate as
``x = sum_a w_a a`` over a small set of atoms.  :class:`ActiveSet` stores the
atoms by key (so "is this vertex active?" is a dict look-up) with their
weights, answers the away-vertex query for all active atoms with one
vectorized product, and updates weights (and, optionally, ``x``) in
O(#atoms + nnz) per step instead of rebuilding the combination.

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

:class:`AtomStore` is that keyed, stacked store of weighted atoms, shared by
every active-set structure: :class:`ActiveSet` adds the convex-combination
steps, and the fully corrective saddle-point players add per-atom products
and drop/pin bookkeeping on top of it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._numbers import check_flag
from .atoms import Atom, as_atom
from .errors import ShapeError

__all__ = ["AtomStore", "ActiveSet"]

# Sparse storage is compacted when dead entries exceed both this and the live count.
_MIN_COMPACT = 1024
# Away steps longer than this re-sum x: the update (1 + gamma) x - gamma a
# magnifies rounding errors by gamma.
_AMPLIFY = 1e3
# Weights at or below this count as zero (subnormal arithmetic has lost its precision).
_ZERO = 1e-300

_add = np.add.reduce  # ndarray.sum without its Python-level wrapper (the same sum)
_FLOAT = np.dtype(float)


class AtomStore:
    """Atoms stored by key in slots ``0..k-1``, each with a weight ``>= 0``.

    The shared store of every active-set structure: a dict look-up answers
    "is this atom present?", the atoms' entries are stacked (dense rows or
    flat sparse arrays) so that :meth:`scores` is one product and
    :meth:`stacked` one matrix, and removal is a swap with the last slot.
    The weights carry no constraint here; subclasses give them a meaning
    (:class:`ActiveSet`: a convex combination).  A subclass that keeps data
    aligned with the slots overrides :meth:`_slot_moved` and
    :meth:`_slot_popped`.
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
            if self._rows.shape[0] == 0:
                self._rows = np.zeros((8, self._n))
            if k == self._rows.shape[0]:
                rows = np.zeros((2 * k, self._n))
                rows[:k] = self._rows[:k]
                self._rows = rows
            self._rows[k] = atom.to_dense().reshape(-1)
        else:
            if atom.is_sparse:
                idx, val = atom.indices, atom.values
            else:
                dense = atom.to_dense().reshape(-1)
                idx = np.flatnonzero(dense)
                val = dense[idx]
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


class ActiveSet(AtomStore):
    """A convex combination ``x = sum_a w_a a`` of atoms, with ``w >= 0``, ``sum w = 1``.

    Parameters
    ----------
    atoms : iterable of Atom or array_like, optional
        The atoms; atoms with equal keys are merged (weights added).
    weights : array_like, optional
        Their weights (non-negative, summing to 1 within 1e-8; they are
        renormalized).  Uniform by default.
    keep_x : bool, default True
        Maintain ``x`` incrementally with every update.  Solvers whose
        tracker already moves the iterate set this to ``False``; ``x`` is
        then recomputed from the weights on request.

    Notes
    -----
    Cost per update: O(k) for the weights (k active atoms) plus O(nnz) for
    the atoms touched, plus O(n) for ``x`` when ``keep_x``.  The away query
    :meth:`scores` costs one product with the stacked atoms, O(k * nnz).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import ActiveSet, Atom
    >>> S = ActiveSet([Atom(np.array([1.0, 0.0])), Atom(np.array([0.0, 1.0]))], [0.25, 0.75])
    >>> S.x
    array([0.25, 0.75])
    >>> i, a, score = S.away_atom(np.array([1.0, 3.0]))
    >>> a.to_dense(), score
    (array([0., 1.]), 3.0)
    """

    def __init__(
        self,
        atoms: Iterable[Atom | Any] = (),
        weights: Any = None,
        *,
        keep_x: bool = True,
    ) -> None:
        atoms = list(atoms)
        super().__init__()
        self.keep_x = check_flag(keep_x, "keep_x", where="ActiveSet")
        self._x: np.ndarray | None = None

        if not atoms:
            if weights is not None and np.size(weights) != 0:
                raise ShapeError(
                    f"ActiveSet: `weights` has {np.size(weights)} entries but no atoms were given"
                )
            return
        first = atoms[0]
        shape = first.shape if isinstance(first, Atom) else np.shape(first)
        atoms = [as_atom(a, shape, source="ActiveSet atom") for a in atoms]
        if weights is None:
            w = np.full(len(atoms), 1.0 / len(atoms))
        else:
            w = np.asarray(weights, dtype=float)
            if w.shape != (len(atoms),):
                raise ShapeError(
                    f"ActiveSet: `weights` must have shape ({len(atoms)},) like `atoms`, "
                    f"got {w.shape}"
                )
            if not np.all(np.isfinite(w)) or w.min() < 0:
                raise ValueError(
                    f"ActiveSet: `weights` must be finite and >= 0, got min {w.min()!r}"
                )
            s = float(w.sum())
            if abs(s - 1.0) > 1e-8:
                raise ValueError(f"ActiveSet: `weights` must sum to 1, got sum {s!r}")
            w = w / s
        for a, wa in zip(atoms, w):
            if wa > 0:
                self._add_weight(a, float(wa))
        if self._k == 0:
            raise ValueError("ActiveSet: all `weights` are zero")
        if self.keep_x:
            self._x = self._sum()

    # -- construction helpers ---------------------------------------------
    @classmethod
    def from_vertex(cls, atom: Atom, *, keep_x: bool = True) -> ActiveSet:
        """The active set ``{atom: 1}``."""
        return cls([atom], [1.0], keep_x=keep_x)

    def copy(self, *, keep_x: bool | None = None) -> ActiveSet:
        """An independent copy (atoms are shared: they are immutable)."""
        keep = self.keep_x if keep_x is None else keep_x
        new = ActiveSet(self.atoms, self.weights, keep_x=keep)
        return new

    # -- queries -------------------------------------------------------------
    def __repr__(self) -> str:
        return f"ActiveSet({self._k} atoms, shape={self.shape}, storage={self._mode})"

    @property
    def x(self) -> np.ndarray:
        """The point ``sum_a w_a a`` (kept incrementally when ``keep_x``; do not modify)."""
        if self._x is not None:
            return self._x
        if self._k == 0:
            raise ValueError("ActiveSet: an empty active set has no point")
        x = self._sum()
        if self.keep_x:
            self._x = x
        return x

    def away_atom(self, gradient: np.ndarray) -> tuple[int, Atom, float]:
        """The active atom maximizing ``<gradient, a>``: ``(slot, atom, score)``."""
        if self._k == 0:
            raise ValueError("ActiveSet.away_atom: the active set is empty")
        s = self.scores(gradient)
        i = int(s.argmax())  # the method: np.argmax adds a Python-level wrapper
        return i, self._atoms[i], float(s[i])

    def local_vertex(self, gradient: np.ndarray) -> tuple[int, Atom, float]:
        """The active atom minimizing ``<gradient, a>``: ``(slot, atom, score)``."""
        if self._k == 0:
            raise ValueError("ActiveSet.local_vertex: the active set is empty")
        s = self.scores(gradient)
        i = int(np.argmin(s))
        return i, self._atoms[i], float(s[i])

    # -- steps -----------------------------------------------------------------
    def frank_wolfe_step(self, v: Atom, gamma: float) -> None:
        """``x <- (1 - gamma) x + gamma v``; ``gamma = 1`` leaves ``{v}`` only."""
        self._check_gamma(gamma)
        if gamma >= 1.0:
            self._clear()
            self._add_weight(v, 1.0)
            if self.keep_x:
                self._x = np.array(v.to_dense(), dtype=float, order="C", copy=True)
            return
        w = self._w[: self._k]
        w *= 1.0 - gamma
        if gamma > _ZERO:
            self._add_weight(v, gamma)
            # underflow of tiny weights (nonzero(): flatnonzero's Python wrappers cost more
            # than a small set's update)
            zero = (self._w[: self._k] <= _ZERO).nonzero()[0]
            for i in zero[::-1]:
                self._remove_slot(int(i))
        if self._x is not None:
            self._x *= 1.0 - gamma
            v.add_to(self._x, gamma)

    def away_step(self, a: Atom | Hashable, gamma: float, drop: bool = False) -> bool:
        """``x <- (1 + gamma) x - gamma a`` for an active atom ``a``.

        The atom is removed when ``drop`` (the step was ``gamma_max =
        w_a / (1 - w_a)``) or when its weight reaches zero or below through
        rounding.  Returns whether it was removed.
        """
        self._check_gamma(gamma)
        i = self.slot(a)
        atom = self._atoms[i]
        k = self._k
        if k == 1:  # x = a: the away direction is zero, nothing moves
            return False
        w = self._w[:k]
        wa = float(w[i])
        rest = float(_add(w[:i]) + _add(w[i + 1:]))  # not sum - w_a: tiny weights would cancel
        w *= 1.0 + gamma
        # w_a (1 + gamma) - gamma equals w_a - gamma (1 - w_a) = w_a - gamma * rest; the
        # latter has no cancellation of size gamma * eps, which matters for long steps
        w[i] = wa - gamma * rest
        removed = drop or w[i] <= _ZERO
        if removed:
            self._remove_slot(i)
            # the others were scaled by 1 + gamma ~ 1 / (1 - w_a): make their sum exact
            self._w[: self._k] /= self._w[: self._k].sum()
        if self._x is not None:
            if gamma > _AMPLIFY:
                # (1 + gamma) x - gamma a magnifies rounding by gamma: re-sum instead
                self._x = self._sum()
            else:
                self._x *= 1.0 + gamma
                atom.add_to(self._x, -gamma)
        return removed

    def shift_weights(self, delta: np.ndarray, drop: int | None = None) -> int:
        """``w <- w + delta`` (slot order) for a move inside the active set's hull,
        ``x <- x + sum_i delta_i a_i``; ``sum(delta)`` must be 0.

        The slot ``drop`` (the step went as far as it could) and every weight reaching
        zero or below through rounding are removed.  Returns how many were removed.
        """
        k = self._k
        delta = np.asarray(delta, dtype=float)
        if delta.shape != (k,):
            raise ShapeError(f"ActiveSet.shift_weights: `delta` has shape {delta.shape}, "
                             f"expected ({k},)")
        w = self._w[:k]
        w += delta
        if drop is not None:
            w[drop] = 0.0
        if self._x is not None:
            for i in np.flatnonzero(delta):
                self._atoms[int(i)].add_to(self._x, float(delta[i]))
        gone = np.flatnonzero(w <= _ZERO)
        for i in gone[::-1]:
            self._remove_slot(int(i))
        return int(gone.size)

    def away_gamma_max(self, i: int) -> float:
        """Largest away step from slot ``i``: ``w_i / (1 - w_i)`` (inf for a lone atom).

        ``1 - w_i`` is computed as the sum of the other weights, which stays
        accurate when ``w_i`` is close to 1.
        """
        k = self._k
        w = self._w
        # np.add.reduce is what ndarray.sum calls, without its Python-level wrapper
        rest = float(_add(w[:i]) + _add(w[i + 1:k]))
        return float(w[i]) / rest if rest > 0 else np.inf

    def pairwise_step(self, v: Atom, a: Atom | Hashable, gamma: float, drop: bool = False) -> bool:
        """Move mass ``gamma`` from the active atom ``a`` to ``v``: ``x <- x + gamma (v - a)``.

        ``a`` is removed when ``drop`` (``gamma = w_a``) or when its weight
        reaches zero or below.  Returns whether it was removed.
        """
        self._check_gamma(gamma)
        i = self.slot(a)
        atom = self._atoms[i]
        if atom.key == v.key or gamma == 0.0:
            return False
        if gamma > self._w[i] * (1 + 1e-12):
            raise ValueError(
                f"ActiveSet.pairwise_step: `gamma`={gamma!r} exceeds the weight "
                f"{self._w[i]!r} of the away atom"
            )
        self._add_weight(v, gamma)
        i = self._keys[atom.key]  # slots are stable under insertion, but be explicit
        self._w[i] -= gamma
        if self._x is not None:
            v.add_to(self._x, gamma)
            atom.add_to(self._x, -gamma)
        if drop or self._w[i] <= _ZERO:
            self._remove_slot(i)
            return True
        return False

    def add(self, atom: Atom, weight: float) -> None:
        """Add ``weight`` to ``atom`` (inserted if new) without renormalizing.

        A low-level operation: the caller restores ``sum w = 1``.  A zero
        weight does not make an atom active.
        """
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"ActiveSet.add: `weight` must be finite and >= 0, got {weight!r}")
        if weight <= _ZERO:
            return
        self._add_weight(atom, float(weight))
        if self._x is not None:
            atom.add_to(self._x, weight)

    def remove(self, item: Atom | Hashable) -> float:
        """Remove an atom without renormalizing the others; returns its weight.  An atom
        left alone carries all the mass (weight 1), and ``x`` is then that atom."""
        i = self.slot(item)
        w = float(self._w[i])
        atom = self._atoms[i]
        self._remove_slot(i)
        if self._x is not None:
            if self._k == 1:  # the lone atom's weight became 1: x follows it
                self._x = np.array(self._atoms[0].to_dense(), dtype=float, order="C",
                                   copy=True)
            else:
                atom.add_to(self._x, -w)
        return w

    # -- maintenance -------------------------------------------------------
    def renormalize(self) -> float:
        """Rescale the weights to sum to 1; returns the relative change of the sum."""
        k = self._k
        s = float(self._w[:k].sum())
        if not s > 0:
            raise ValueError(f"ActiveSet.renormalize: the weights sum to {s!r}")
        if s != 1.0:
            self._w[:k] /= s
            if self._x is not None:
                self._x /= s
            # A subnormal weight divided by s > 1 can underflow to 0; an atom
            # with weight 0 is no longer in the combination, so it leaves.
            zero = np.flatnonzero(self._w[:k] <= _ZERO)
            for i in zero[::-1]:
                self._remove_slot(int(i))
        return abs(s - 1.0)

    def resum(self) -> np.ndarray:
        """Renormalize the weights and recompute ``x = sum w_a a`` from scratch (stops drift).

        Returns the new point (also stored when ``keep_x``).
        """
        self.renormalize()
        x = self._sum()
        if self.keep_x:
            self._x = x
        return x

    def sparsify(self, tol: float = 1e-15) -> int:
        """Remove atoms with weight below ``tol``, renormalize; returns how many were removed.

        The largest weight is always kept.  ``x`` is recomputed when
        anything was removed.
        """
        if not tol >= 0:
            raise ValueError(f"ActiveSet.sparsify: `tol` must be >= 0, got {tol!r}")
        k = self._k
        if k <= 1:
            return 0
        w = self._w[:k]
        small = np.flatnonzero(w < tol)
        if small.size == k:
            small = small[small != int(np.argmax(w))]
        for i in small[::-1]:  # descending: the swapped-in last slot is never a pending one
            self._remove_slot(int(i))
        if small.size:
            self.renormalize()
            if self.keep_x:
                self._x = self._sum()
        return int(small.size)

    def terms_scale(self) -> float:
        """``sum_a |w_a| ||a||``: the size of the terms of ``x = sum w_a a``, to which the
        rounding of that sum is relative.

        Rounding allowances for ``x`` (the drift between a tracked point and the
        re-summed one, a start's decomposition) are relative to it, not to ``||x||``,
        which vanishes by cancellation (``e_i`` and ``-e_i`` of the l1 ball with equal
        weights) while the terms' rounding does not.  O(k) in the number of atoms.

        Returns
        -------
        float
            ``sum_a |w_a| ||a||`` (0 for an empty set).
        """
        return float(sum(abs(w) * math.sqrt(a.sq_norm())
                         for a, w in zip(self._atoms, self._w[:self._k].tolist())))

    def check(self, lmo: Any = None, x: np.ndarray | None = None) -> dict[str, float]:
        """Measured invariants: ``min_weight``, ``sum_error``, ``x_error``, ``max_violation``.

        ``x_error`` is ``||x - sum w_a a||`` relative to ``sum w_a ||a||``, the size of the
        terms summed (their sum's own norm may vanish by cancellation, as for ``e_i`` and
        ``-e_i``; inf when every atom is 0 and ``x`` is not): the same at any scale of
        the atoms.  Costs a full re-summation, O(k * nnz); meant for tests and debugging.

        Parameters
        ----------
        lmo : LMO, optional
            When given, the largest ``lmo.violation`` over the atoms.
        x : ndarray, optional
            Point to compare with ``sum w_a a`` (default: the kept ``x``).
        """
        k = self._k
        w = self._w[:k]
        ref = self._sum()
        cmp = x if x is not None else (self._x if self._x is not None else ref)
        # no floor of 1: at atoms of size 2**-30 it read an x wrong by its own size as
        # an error of 1e-9
        scale = self.terms_scale()
        err = float(np.linalg.norm(np.asarray(cmp) - ref))
        out = {
            "min_weight": float(w.min()) if k else np.nan,
            "sum_error": abs(float(w.sum()) - 1.0),
            "x_error": err / scale if scale > 0.0 else (0.0 if err == 0.0 else np.inf),
            "max_violation": 0.0,
        }
        if lmo is not None:
            out["max_violation"] = max(float(lmo.violation(a.to_dense())) for a in self._atoms)
        return out

    # -- internals -----------------------------------------------------------
    @staticmethod
    def _check_gamma(gamma: float) -> None:
        if not (math.isfinite(gamma) and gamma >= 0):
            raise ValueError(f"ActiveSet: the step `gamma` must be finite and >= 0, got {gamma!r}")

    def _clear(self) -> None:
        self._atoms.clear()
        self._keys.clear()
        self._k = 0
        self._used = 0
        self._dead = 0
        self._x = None if not self.keep_x else self._x

    def _slot_popped(self) -> None:
        if self._k == 1:
            self._w[0] = 1.0  # a lone atom carries all the mass by definition


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

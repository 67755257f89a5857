"""Active sets: a point stored as a convex combination of atoms.

Away-step, pairwise and other active-set methods keep the iterate as
``x = sum_a w_a a`` over a small set of atoms.  :class:`ActiveSet` stores the
atoms by key (so "is this vertex active?" is a dict look-up) with their
weights, answers the away-vertex query for all active atoms with one
vectorized product, and updates weights (and, optionally, ``x``) in
O(#atoms + nnz) per step instead of rebuilding the combination.

The storage (slots, swap-remove, dense rows or flat sparse arrays) is
:class:`~frankwolfe.atom_store.AtomStore`'s, shared by every active-set
structure; this module holds the convex-combination steps and queries on top
of it: the away and local vertices, the Frank-Wolfe, away, pairwise and
in-hull steps, and the drift control (renormalizing, re-summing, sparsifying).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ._numbers import check_flag
from .atom_store import AtomStore
from .atoms import Atom, as_atom
from .errors import ShapeError

__all__ = ["AtomStore", "ActiveSet"]

# Away steps longer than this re-sum x: the update (1 + gamma) x - gamma a
# magnifies rounding errors by gamma.
_AMPLIFY = 1e3
# Weights at or below this count as zero (subnormal arithmetic has lost its precision).
_ZERO = 1e-300

_add = np.add.reduce  # ndarray.sum without its Python-level wrapper (the same sum)


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

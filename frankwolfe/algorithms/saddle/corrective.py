"""Fully corrective saddle-point Frank-Wolfe: after each joint oracle call the iterate
jumps to the exact equilibrium of the game restricted to the active vertices (the
double-oracle method)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ...active_set import ActiveSet, AtomStore
from ...atoms import Atom
from ...direction import Direction
from ...lmo.base import LMO
from ...objectives.base import Tracker
from ...step_size import StepSize
from ..restricted_game import (
    gram_factor,
    polish_quadratic_game,
    solve_matrix_game,
    solve_quadratic_game,
)
from .adapter import _BilinearTracker, _row_combination, _SaddleAdapter
from .variants import _SaddleVariant

# Corrective weights at or below this fraction of the largest are zero (solver residue).
_CORRECTIVE_ZERO = 1e-13


class _FullStep(StepSize):
    """``gamma = gamma_max``: the corrective point is taken whole."""

    def __call__(self, k, tracker, direction, slope, gamma_max):
        return float(gamma_max)


class _Player(AtomStore):
    """One player's active atoms, weights and products with ``M`` (corrective mode).

    The atoms live in an :class:`~frankwolfe.active_set.AtomStore` (keyed
    slots, stacked entries); each slot also holds the atom embedded in the
    joint space and its product with ``M``.  Weights may be zero (an atom is
    added before the restricted game gives it a weight).  Atoms whose weight
    falls to zero are dropped; an atom that comes back after a drop is
    pinned (never dropped again), so each vertex leaves at most once and the
    double-oracle iteration stays finite on polytopes.
    """

    def __init__(self, offset: int, n: int) -> None:
        super().__init__()
        self.offset = offset
        self.n = n
        self.joint: list[Atom] = []
        self.products: list[np.ndarray] = []
        self.dropped: set[Any] = set()
        self.pinned: set[Any] = set()

    def add(self, atom: Atom, product: np.ndarray, weight: float = 0.0) -> bool:
        """Add ``atom`` (with ``M``-product ``product``) unless present; True if added."""
        if atom.key in self:
            self._add_weight(atom, weight)
            return False
        if atom.key in self.dropped:
            self.pinned.add(atom.key)
        self._add_weight(atom, weight)
        self.joint.append(_embed(atom, self.offset, self.n))
        self.products.append(product)
        return True

    def prune(self, w: np.ndarray) -> int:
        """Set the weights to ``w``; drop unpinned atoms of zero weight; return the count."""
        self._w[: len(self)] = w
        drop = [i for i in np.flatnonzero(w <= 0).tolist() if self._atoms[i].key not in self.pinned]
        for i in reversed(drop):  # descending: the slot swapped in is never a pending one
            self.dropped.add(self._atoms[i].key)
            self._remove_slot(i)
        return len(drop)

    def active_set(self) -> ActiveSet:
        w = self.weights
        live = np.flatnonzero(w > 0)
        return ActiveSet([self._atoms[i] for i in live], w[live] / w[live].sum())

    def _slot_moved(self, src: int, dst: int) -> None:
        self.joint[dst] = self.joint[src]
        self.products[dst] = self.products[src]

    def _slot_popped(self) -> None:
        self.joint.pop()
        self.products.pop()


def _gram(A: Any) -> np.ndarray:
    """``A A^T`` as a dense array, for a dense or sparse ``A``."""
    sparse = sp.issparse(A)  # a plain bool: A stays Any for the type checker
    G = A @ A.T
    return np.asarray(G.todense() if sparse else G, dtype=float)


def _embed(atom: Atom, offset: int, n: int) -> Atom:
    """A player's atom as an atom of the joint space (the other block zero)."""
    key = ("side", offset, atom.key)
    idx, val = atom.indices, atom.values
    if atom.is_sparse:
        return Atom.sparse(idx + offset, val, n, key=key, copy=False)
    z = np.zeros(n)
    a = atom.to_dense().reshape(-1)
    z[offset: offset + a.size] = a
    return Atom(z, key=key, copy=False)


class _SaddleCorrective(_SaddleVariant):
    """Fully corrective SP-FW: after each joint oracle call, solve the restricted game.

    The restricted game over the convex hulls of each player's active atoms
    is solved exactly (:mod:`.restricted_game`) and the iterate jumps to its
    equilibrium: the double-oracle method, seen as a fully corrective
    Frank-Wolfe step ``d = z_c - z`` with ``gamma = 1`` on the shared loop.
    When the oracle answers only active atoms, the restricted equilibrium is
    already a saddle point of the full problem (each player's best reply lies
    in its hull), so the gap is zero up to the solver's accuracy.
    """

    kind = "corrective"

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter,
                 starts: tuple[Any, Any], cvxpy_solver: str | None) -> None:
        super().__init__(domain_x, domain_y, adapter)
        self.starts = starts
        self.cvxpy_solver = cvxpy_solver
        self.counts = {"n_corrective_lp": 0, "n_corrective_qp": 0, "n_polished": 0,
                       "n_atoms_added": 0, "n_drops": 0, "corrective_time": 0.0}

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        if not isinstance(tracker, _BilinearTracker):
            raise TypeError("corrective SP-FW keeps the products of a BilinearObjective: "
                            f"needs its tracker, got {type(tracker).__name__}")
        self.tracker = tracker
        self.L = tracker.L
        for key in self.counts:
            self.counts[key] = 0
        n = self.n
        self.players = (_Player(0, n), _Player(self.nx, n))
        for P, start in zip(self.players, self.starts):
            if isinstance(start, ActiveSet):
                for a, w in start:
                    P.add(a, self._product(P, a), w)
            elif isinstance(start, Atom):
                P.add(start, self._product(P, start), 1.0)
            # any other start is left behind by the first corrective step

    def _product(self, P: _Player, atom: Atom) -> np.ndarray:
        """``M^T a`` for an x atom, ``M a`` for a y atom."""
        tr = self.tracker
        R = tr._rows if P.offset == 0 else tr._cols
        idx, val = atom.indices, atom.values
        if atom.is_sparse:
            return _row_combination(R, idx, val)
        a = atom.to_dense().reshape(-1)
        return np.asarray(R.T @ a, dtype=float)

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        Px, Py = self.players
        added = 0
        for P, s in ((Px, self.sx), (Py, self.sy)):
            if P.add(s, self._product(P, s)):
                added += 1
        self.counts["n_atoms_added"] += added
        if not added and k > 0:
            # both best replies are active: the restricted equilibrium is already a saddle
            # point, and solving again would return it; stay (the gap is the solver's floor)
            return Direction(0.0, ()), 1.0, None
        u, w = self._solve()
        terms = tuple((float(c), a) for P, ws in ((Px, u), (Py, w))
                      for c, a in zip(ws, P.joint) if c > 0)
        return Direction(-1.0, terms), 1.0, (u, w)

    def _solve(self) -> tuple[np.ndarray, np.ndarray]:
        t0 = time.perf_counter()
        Px, Py = self.players
        L = self.L
        Ax, Ay = Px.stacked(), Py.stacked()
        # H_ij = a_i^T M b_j = (M^T a_i) . b_j, plus the folded linear terms
        H = np.asarray(Ay @ np.stack(Px.products).T, dtype=float).T
        if L.a is not None:
            H = H + np.asarray(Ax @ L.a, dtype=float)[:, None]
        if L.b is not None:
            H = H + np.asarray(Ay @ L.b, dtype=float)[None, :]
        if L.mu_x == 0 and L.mu_y == 0:
            u, w, _ = solve_matrix_game(H)
            self.counts["n_corrective_lp"] += 1
        else:
            Kx, Ky = (_gram(A) for A in (Ax, Ay))
            u, w, _ = solve_quadratic_game(H, gram_factor(Kx) if L.mu_x else None,
                                           gram_factor(Ky) if L.mu_y else None, L.mu_x, L.mu_y,
                                           solver=self.cvxpy_solver)
            self.counts["n_corrective_qp"] += 1
            exact = polish_quadratic_game(H, Kx, Ky, L.mu_x, L.mu_y, u, w)
            if exact is not None:
                u, w = exact
                self.counts["n_polished"] += 1
        # weights at rounding level are zero: dropping them moves z by less than that
        for ws in (u, w):
            ws[ws <= _CORRECTIVE_ZERO * ws.max()] = 0.0
            ws /= ws.sum()
        self.counts["corrective_time"] += time.perf_counter() - t0
        return u, w

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if info is None:
            return
        u, w = info
        for P, ws in zip(self.players, (u, w)):
            self.counts["n_drops"] += P.prune(ws)

    def info(self) -> dict[str, Any]:
        out = super().info()
        out["active_set_size"] = (sum(len(P) for P in self.players)
                                  if hasattr(self, "players") else 0)
        return out

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        extra = {**self._bracket(), **self.counts}
        if not hasattr(self, "players") or not all(P.weights.sum() > 0 for P in self.players):
            return None, extra
        extra["n_pinned"] = sum(len(P.pinned) for P in self.players)
        return tuple(P.active_set() for P in self.players), extra

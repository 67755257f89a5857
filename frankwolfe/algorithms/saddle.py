"""Saddle-point Frank-Wolfe (SP-FW) and its away-step variant (SP-AFW).

``min_{x in X} max_{y in Y} L(x, y)`` for ``L`` convex-concave is Frank-Wolfe
on the joint domain ``Z = X x Y`` with the operator
``r(z) = (grad_x L, -grad_y L)`` in place of a gradient (Gidel, Jebara and
Lacoste-Julien, AISTATS 2017).  Both methods run on the shared loop of
:mod:`.loop`: an adapter presents ``r`` as the "gradient" of an objective
whose value is ``L``, the joint domain is a
:class:`~frankwolfe.ProductDomain`, and the loop's Frank-Wolfe gap
``<r, z - s>`` is exactly the saddle gap
``max_y' L(x, y') - min_x' L(x', y)`` for a bilinear ``L`` (an upper bound on
it in general).  The variant calls the two oracles itself, so each side's
gap is known and the run brackets the saddle value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import time
import warnings

import numpy as np
import scipy.sparse as sp

from ..active_set import ActiveSet, AtomStore
from ..atoms import Atom
from ..direction import Direction
from ..errors import ShapeError
from ..lmo.base import LMO
from ..lmo.product import ProductDomain
from ..objectives.base import Objective, Tracker
from ..objectives.saddle import BilinearObjective, SaddleObjective
from ..options import RunOptions, solver
from ..result import Result
from ..step_size import Agnostic, StepSize
from .active_variant import drift_options
from .loop import Variant, run_frank_wolfe
from .restricted_game import (gram_factor, polish_quadratic_game, solve_matrix_game,
                              solve_quadratic_game)

__all__ = ["saddle_point_frank_wolfe", "SaddleStep", "SaddleBacktracking"]

# Relative distance between the tracked z and the active sets' sum above which z is reset.
_DRIFT_TOL = 1e-12
# Away steps longer than this re-sum at once (they magnify rounding by gamma).
_AMPLIFY = 1e3
# The bilinear tracker recomputes M y and M^T x from scratch every this many moves.
_REFRESH = 1000
# Cached products of dense atoms with M (the cache is emptied when full).
_CACHE_SIZE = 256
# Corrective weights at or below this fraction of the largest are zero (solver residue).
_CORRECTIVE_ZERO = 1e-13


class SaddleStep(StepSize):
    """The curvature saddle rule ``gamma = min(gamma_max, nu * g / (2 C))``.

    ``g = -<r, d>`` is the gap of the chosen direction (the saddle gap for a
    Frank-Wolfe step, the away gap for an away step) and ``C`` the saddle
    curvature constant; this is the step of Gidel et al. (2017), whose
    linear rate for SP-AFW needs ``nu > 0`` (strong convex-concavity
    dominating the coupling).

    With ``C=None`` the rule is local: ``C`` is replaced at each step by the
    curvature of ``L`` along the direction taken,
    ``objective.curvature_along(d_x, d_y)`` (``mu_x ||d_x||^2 + mu_y ||d_y||^2``
    for a :class:`~frankwolfe.BilinearObjective`).  That number bounds the
    curvature term of the step's progress exactly where the global ``C``
    bounds it over the whole domain, and it is never larger, so each step
    makes at least the progress of the global rule and the linear rate is
    kept; the steps are longer (about 2.4x fewer iterations to a gap of 1e-9
    on random 30x40 games with ``mu = 1``, ``benchmarks/saddle.py``).

    Parameters
    ----------
    C : float or None
        Curvature constant, positive, or None for the local rule.  For
        ``L`` with ``L_x``- and ``L_y``-smooth sides over domains of
        diameters ``D_x, D_y`` a valid choice is ``L_x D_x^2 + L_y D_y^2``;
        a pure bilinear game has ``C = 0`` in theory, so any positive value
        is a tuning choice there.
    nu : float, default 1.0
        Damping factor in ``(0, 1]``.
    """

    def __init__(self, C: float | None, nu: float = 1.0) -> None:
        if C is not None and not (np.isfinite(C) and C > 0):
            raise ValueError(f"SaddleStep: `C` must be positive and finite, got {C!r}")
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"SaddleStep: `nu` must be in (0, 1], got {nu!r}")
        self.C = None if C is None else float(C)
        self.nu = float(nu)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        C = self.C
        if C is None:
            adapter = tracker.objective
            C = adapter.saddle.curvature_along(*adapter.split(direction.dense(tracker.x)))
            if C is None:
                raise TypeError(
                    f"SaddleStep(C=None) needs {type(adapter.saddle).__name__}.curvature_along; "
                    "pass C or use step_size='backtracking'"
                )
            if not C > 0:  # no curvature along d bounds the step: nu g / (2C) is infinite
                return float(gamma_max)
        return float(min(gamma_max, self.nu * (-slope) / (2.0 * C)))

    def __repr__(self) -> str:
        C = "None" if self.C is None else f"{self.C:g}"
        return f"SaddleStep(C={C}, nu={self.nu:g})"


class SaddleBacktracking(StepSize):
    """The curvature saddle rule with ``C`` estimated by backtracking.

    For a direction ``d = (d_x, d_y)`` and a step ``gamma`` the local
    curvature of ``L`` is

    ``q(gamma) = [L(x + gamma d_x, y) - L(x, y) - gamma <grad_x L, d_x>]
    - [L(x, y + gamma d_y) - L(x, y) - gamma <grad_y L, d_y>]``,

    non-negative for a convex-concave ``L`` and at most ``gamma^2 C / 2``
    for the curvature constant ``C`` of Gidel et al. (2017).  Each step
    starts from the previous estimate times ``shrink``, takes
    ``gamma = min(gamma_max, nu * g / (2 C))`` (as :class:`SaddleStep`) and
    doubles ``C`` until ``q(gamma) <= gamma^2 C / 2`` holds, so the step
    taken satisfies the curvature bound of the SP-AFW analysis of Gidel et
    al. with a constant within a factor 2 of the curvature met along the
    directions taken (and, after the first step, at most twice the global
    constant).  The first estimate is ``2 q(1)`` on the first direction.
    Each trial costs two evaluations of ``L``.  For objectives that know
    their curvature along a direction, ``SaddleStep(C=None)`` needs no trials.

    Parameters
    ----------
    nu : float, default 1.0
        Damping factor in ``(0, 1]``.
    shrink : float, default 0.9
        Factor in ``(0, 1]`` applied to the estimate at the start of each step.
    """

    uses_trials = True

    def __init__(self, nu: float = 1.0, shrink: float = 0.9) -> None:
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"SaddleBacktracking: `nu` must be in (0, 1], got {nu!r}")
        if not (np.isfinite(shrink) and 0 < shrink <= 1):
            raise ValueError(f"SaddleBacktracking: `shrink` must be in (0, 1], got {shrink!r}")
        self.nu = float(nu)
        self.shrink = float(shrink)
        self.C: float | None = None

    def reset(self) -> None:
        self.C = None

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        adapter = tracker.objective
        L = adapter.saddle
        x, y = adapter.split(tracker.x)
        dx, dy = adapter.split(direction.dense(tracker.x))
        f0 = tracker.value()
        rx, ry = adapter.split(tracker.gradient())  # (grad_x L, -grad_y L)
        sx, sy = float(np.vdot(rx, dx)), -float(np.vdot(ry, dy))
        slack = 64.0 * np.finfo(float).eps * (abs(f0) + 1.0)

        def curvature(gamma: float) -> float:
            tracker.n_function_calls += 2
            qx = float(L.value(x + gamma * dx, y)) - f0 - gamma * sx
            qy = float(L.value(x, y + gamma * dy)) - f0 - gamma * sy
            return qx - qy

        if self.C is None:
            self.C = max(2.0 * curvature(1.0), 1e-12 * abs(slope))
        C = max(self.C * self.shrink, np.finfo(float).tiny)
        while True:
            gamma = float(min(gamma_max, self.nu * (-slope) / (2.0 * C)))
            if gamma <= 0.0 or curvature(gamma) <= 0.5 * gamma * gamma * C + slack:
                break
            C *= 2.0
        self.C = C
        return gamma

    def __repr__(self) -> str:
        return f"SaddleBacktracking(nu={self.nu:g}, C={self.C})"


class _SaddleAdapter(Objective):
    """``L`` seen as an objective of ``z = (x, y)`` whose "gradient" is ``r(z)``.

    Not a gradient field, so the loop's tangent-plane convexity check is off.
    """

    convex = False

    def __init__(self, saddle: SaddleObjective, shape_x: tuple[int, ...],
                 shape_y: tuple[int, ...]) -> None:
        self.saddle = saddle
        self.shape_x = shape_x
        self.shape_y = shape_y
        self.nx = int(np.prod(shape_x))
        self.shape = (self.nx + int(np.prod(shape_y)),)

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[: self.nx].reshape(self.shape_x), z[self.nx:].reshape(self.shape_y)

    def value_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        x, y = self.split(z)
        val, gx, gy = self.saddle.value_and_gradients(x, y)
        gx = np.asarray(gx, dtype=float)
        gy = np.asarray(gy, dtype=float)
        if gx.shape != self.shape_x or gy.shape != self.shape_y:
            raise ShapeError(
                f"{type(self.saddle).__name__}: gradients have shapes {gx.shape} and {gy.shape}, "
                f"expected {self.shape_x} and {self.shape_y}"
            )
        r = np.empty(self.shape)
        r[: self.nx] = gx.reshape(-1)
        np.negative(gy.reshape(-1), out=r[self.nx:])
        return float(val), r

    def value(self, z: np.ndarray) -> float:
        x, y = self.split(z)
        return float(self.saddle.value(x, y))

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self.value_and_gradient(z)[1]

    def tracker(self, z: np.ndarray) -> Tracker:
        if isinstance(self.saddle, BilinearObjective):
            return _BilinearTracker(self, z)
        return Tracker(self, z)


class _BilinearTracker(Tracker):
    """Keeps ``M y`` and ``M^T x`` up to date from per-atom products.

    A step ``z <- (1 + gamma c0) z + gamma sum_i c_i a_i`` changes ``M y`` by
    ``M`` times the atoms' ``y`` parts, which for a simplex vertex ``e_j`` is
    one column of ``M``: O(m + n) per Frank-Wolfe step instead of two full
    products, O(nnz(M)).  The products are recomputed from scratch every
    ``_REFRESH`` moves (and on :meth:`set_point`), bounding the drift.
    """

    def __init__(self, adapter: _SaddleAdapter, z: np.ndarray) -> None:
        super().__init__(adapter, z)
        L = adapter.saddle
        self.L = L
        self.nx = adapter.nx
        if sp.issparse(L.M):
            self._rows = sp.csr_array(L.M)          # rows of M: M^T e_i
            self._cols = sp.csr_array(L.M.T)        # rows of M^T: M e_j
        else:
            self._rows = L.M
            self._cols = np.ascontiguousarray(L.M.T)  # columns read as contiguous rows
        self._cache: dict[Any, tuple[np.ndarray | None, np.ndarray | None]] = {}
        self._moves = 0
        self.n_refreshes = 0
        self._refresh()

    def _refresh(self) -> None:
        x, y = self.objective.split(self.x)
        self.My = np.asarray(self.L.M @ y.reshape(-1), dtype=float)
        self.MTx = np.asarray(self.L.M.T @ x.reshape(-1), dtype=float)
        self.n_refreshes += 1

    def _products(self, atom: Atom) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(M^T a_x, M a_y)`` of a joint atom (None for a side it does not touch)."""
        nx = self.nx
        if atom.is_sparse:
            idx, val = atom.indices, atom.values
            cut = int(np.searchsorted(idx, nx)) if idx.size and idx[-1] >= nx else idx.size
            px = py = None
            if cut:
                px = _row_combination(self._rows, idx[:cut], val[:cut])
            if cut < idx.size:
                py = _row_combination(self._cols, idx[cut:] - nx, val[cut:])
            return px, py
        key = atom.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        a = atom.to_dense().reshape(-1)
        ax, ay = a[:nx], a[nx:]
        out = (np.asarray(self.L.M.T @ ax, dtype=float) if np.any(ax) else None,
               np.asarray(self.L.M @ ay, dtype=float) if np.any(ay) else None)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = out
        return out

    def move(self, direction: Direction, gamma: float) -> None:
        super().move(direction, gamma)
        self._moves += 1
        if self._moves % _REFRESH == 0:
            self._refresh()
            return
        scale = 1.0 + gamma * direction.x_coef
        if scale != 1.0:
            self.My *= scale
            self.MTx *= scale
        for c, a in direction.terms:
            px, py = self._products(a)
            if px is not None:
                self.MTx += (gamma * c) * px
            if py is not None:
                self.My += (gamma * c) * py

    def set_point(self, x: np.ndarray) -> None:
        super().set_point(x)
        self._refresh()

    def _evaluate(self) -> tuple[float, np.ndarray]:
        x, y = self.objective.split(self.x)
        val, gx, gy = self.L.from_products(x.reshape(-1), y.reshape(-1), self.My, self.MTx)
        r = np.empty(self.x.shape)
        r[:self.nx] = gx
        np.negative(gy, out=r[self.nx:])
        self.n_function_calls += 1
        self.n_gradient_calls += 1
        return val, r


def _row_combination(R: Any, rows: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``sum_k coef_k R[rows_k]`` for a dense or CSR matrix ``R``."""
    if not sp.issparse(R):
        if rows.size == 1:
            return coef[0] * R[int(rows[0])]
        return coef @ R[rows]
    if rows.size > 8:
        return np.asarray(R[rows].T @ coef, dtype=float).reshape(-1)
    # a few CSR rows straight from the arrays: scipy's row indexing costs ~100 us per call
    out = np.zeros(R.shape[1])
    for i, c in zip(rows.tolist(), coef.tolist()):
        lo, hi = R.indptr[i], R.indptr[i + 1]
        out[R.indices[lo:hi]] += c * R.data[lo:hi]
    return out


def _pair(sx: Atom, sy: Atom, nx: int, n: int) -> Atom:
    """The vertex ``(sx, sy)`` of ``X x Y`` as one atom of the joint space, O(nnz)."""
    key = ("pair", sx.key, sy.key)
    if sx.is_sparse and sy.is_sparse:
        return Atom.sparse(np.concatenate([sx.indices, sy.indices + nx]),
                           np.concatenate([sx.values, sy.values]), n, key=key)
    return Atom(np.concatenate([sx.to_dense().reshape(-1), sy.to_dense().reshape(-1)]), key=key)


class _SaddleVariant(Variant):
    """Per-side oracle calls and the value bracket; subclasses choose the direction."""

    name = "saddle"
    kind = "fw"  # the configuration, reported in ``Result.extra["variant"]``

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter) -> None:
        self.domain_x = domain_x
        self.domain_y = domain_y
        self.adapter = adapter
        self.nx = adapter.nx
        self.n = adapter.shape[0]

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.lower = -np.inf  # max_k L_k - gap_x,k <= min_x L(x, y_k) <= saddle value
        self.upper = np.inf   # min_k L_k + gap_y,k >= max_y L(x_k, y) >= saddle value
        self.gap_x = self.gap_y = np.nan

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        nx = self.nx
        rx = gradient[:nx]
        ry = gradient[nx:]
        sx = self.domain_x(rx.reshape(self.adapter.shape_x))
        sy = self.domain_y(ry.reshape(self.adapter.shape_y))
        self.n_oracle_calls += 1
        z = tracker.x
        self.gap_x = float(rx @ z[:nx]) - sx.dot(rx.reshape(sx.shape))
        self.gap_y = float(ry @ z[nx:]) - sy.dot(ry.reshape(sy.shape))
        f = tracker.value()
        if np.isfinite(self.gap_x) and np.isfinite(self.gap_y):
            self.lower = max(self.lower, f - self.gap_x)
            self.upper = min(self.upper, f + self.gap_y)
        self.sx, self.sy = sx, sy
        return _pair(sx, sy, nx, self.n), self.gap_x + self.gap_y, True

    def info(self) -> dict[str, Any]:
        return {"gap_x": self.gap_x, "gap_y": self.gap_y}

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        return None, self._bracket()

    def _bracket(self) -> dict[str, Any]:
        return {"variant": self.kind, "gap_x": self.gap_x, "gap_y": self.gap_y,
                "value_lower": self.lower, "value_upper": self.upper}


class _SaddleFW(_SaddleVariant):
    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None


class _SaddleAway(_SaddleVariant):
    """SP-AFW with one active set per player.

    The away vertex of ``X x Y`` over the product of the two active sets is
    the pair of the players' away vertices (a linear function separates),
    and the away step ``z + gamma (z - (a_x, a_y))`` may go as far as the
    first side's drop step, ``min(w_ax / (1 - w_ax), w_ay / (1 - w_ay))``.
    Keeping the sides apart, rather than one active set of pairs, leaves
    every combination of active vertices available to the away step and
    keeps the sets as small as the players' supports.
    """

    kind = "away"

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter,
                 starts: tuple[Any, Any], resum_every: int, sparsify_tol: float) -> None:
        super().__init__(domain_x, domain_y, adapter)
        self.resum_every, self.sparsify_tol = drift_options(resum_every, sparsify_tol)
        self.starts = starts
        self.counts = {"n_fw_steps": 0, "n_away_steps": 0, "n_drop_steps": 0, "n_resyncs": 0}

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.tracker = tracker
        self.n_steps = 0
        for key in self.counts:
            self.counts[key] = 0
        parts = self.adapter.split(tracker.x)
        self.active = tuple(
            self._active_set(start, part, dom, name)
            for start, part, dom, name in zip(self.starts, parts, (self.domain_x, self.domain_y),
                                              ("x0", "y0"))
        )

    def _active_set(self, start: Any, part: np.ndarray, domain: LMO, name: str) -> ActiveSet:
        if isinstance(start, ActiveSet):
            S = start.copy(keep_x=False)
            if S.shape != part.shape:
                raise ShapeError(f"{name}: the warm-start ActiveSet has shape {S.shape}, "
                                 f"expected {part.shape}")
            return S
        if isinstance(start, Atom):
            return ActiveSet.from_vertex(start, keep_x=False)
        # a vertex of a simplex or norm ball is the oracle's answer for -x
        v = domain(-part)
        self.n_oracle_calls += 1
        if np.linalg.norm(v.to_dense() - part) <= 1e-12 * max(1.0, float(np.linalg.norm(part))):
            return ActiveSet.from_vertex(v, keep_x=False)
        raise ValueError(
            f"{name}: the away-step variant needs each start as a convex combination of "
            "vertices; the given array is not recognised as a vertex of its domain.  Pass None, "
            "an Atom (a vertex) or an ActiveSet (vertices with weights)"
        )

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        Sx, Sy = self.active
        if len(Sx) == 1 and len(Sy) == 1:  # z is a vertex: no away direction
            return Direction.frank_wolfe(v), 1.0, ("fw",)
        nx = self.nx
        z = tracker.x
        sides = []
        away_gap = 0.0
        for S, r, part in ((Sx, gradient[:nx], z[:nx]), (Sy, gradient[nx:], z[nx:])):
            r = r.reshape(S.shape)
            i, a, score = S.away_atom(r)
            gmax = S.away_gamma_max(i)  # inf for a lone atom, whose away direction is ~0
            sides.append((a, gmax))
            if len(S) > 1:
                away_gap += score - float(np.vdot(r, part.reshape(S.shape)))
        gamma_max = min(sides[0][1], sides[1][1])
        if gap >= away_gap or not np.isfinite(gamma_max):
            return Direction.frank_wolfe(v), 1.0, ("fw",)
        (ax, gx), (ay, gy) = sides
        return Direction.away(_pair(ax, ay, nx, self.n)), gamma_max, ("away", ax, gx, ay, gy)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        Sx, Sy = self.active
        if info[0] == "fw":
            Sx.frank_wolfe_step(self.sx, gamma)
            Sy.frank_wolfe_step(self.sy, gamma)
            self.counts["n_fw_steps"] += 1
        else:
            _, ax, gx, ay, gy = info
            for S, a, gmax in ((Sx, ax, gx), (Sy, ay, gy)):
                if len(S) > 1 and S.away_step(a.key, gamma, drop=gamma >= gmax):
                    self.counts["n_drop_steps"] += 1
            self.counts["n_away_steps"] += 1
        self.n_steps += 1
        if self.n_steps % self.resum_every == 0 or (info[0] == "away" and gamma > _AMPLIFY):
            self.maintain()

    def maintain(self) -> None:
        """Renormalize, drop tiny weights, and re-sync the tracker if ``z`` drifted."""
        parts = []
        for S in self.active:
            S.sparsify(self.sparsify_tol)
            parts.append(S.resum().reshape(-1))
        zs = np.concatenate(parts)
        z = self.tracker.x
        if float(np.linalg.norm(z - zs)) > _DRIFT_TOL * max(1.0, float(np.linalg.norm(zs))):
            self.tracker.set_point(zs)
            self.counts["n_resyncs"] += 1

    def info(self) -> dict[str, Any]:
        out = super().info()
        out["active_set_size"] = sum(len(S) for S in self.active) if hasattr(self, "active") else 0
        return out

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        extra = {**self._bracket(), **self.counts}
        if not hasattr(self, "active"):
            return None, extra
        final = []
        for S in self.active:
            F = S.copy(keep_x=True)
            F.resum()
            final.append(F)
        return tuple(final), extra


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


def _embed(atom: Atom, offset: int, n: int) -> Atom:
    """A player's atom as an atom of the joint space (the other block zero)."""
    key = ("side", offset, atom.key)
    if atom.is_sparse:
        return Atom.sparse(atom.indices + offset, atom.values, n, key=key)
    z = np.zeros(n)
    a = atom.to_dense().reshape(-1)
    z[offset: offset + a.size] = a
    return Atom(z, key=key)


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
                 starts: tuple[Any, Any], qp_solver: str | None) -> None:
        super().__init__(domain_x, domain_y, adapter)
        self.starts = starts
        self.qp_solver = qp_solver
        self.counts = {"n_corrective_lp": 0, "n_corrective_qp": 0, "n_polished": 0,
                       "n_atoms_added": 0, "n_drops": 0, "corrective_time": 0.0}

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.tracker = tracker
        self.L = self.adapter.saddle
        for key in self.counts:
            self.counts[key] = 0
        n = self.n
        self.players = (_Player(0, n), _Player(self.nx, n))
        parts = self.adapter.split(tracker.x)
        for P, start, part, dom in zip(self.players, self.starts, parts,
                                       (self.domain_x, self.domain_y)):
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
        if atom.is_sparse:
            return _row_combination(R, atom.indices, atom.values)
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
            Kx, Ky = (np.asarray((A @ A.T).todense() if sp.issparse(A) else A @ A.T, dtype=float)
                      for A in (Ax, Ay))
            u, w, _ = solve_quadratic_game(H, gram_factor(Kx) if L.mu_x else None,
                                           gram_factor(Ky) if L.mu_y else None, L.mu_x, L.mu_y,
                                           solver=self.qp_solver)
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


def _side(obj_shape: tuple[int, ...] | None, domain: LMO, start: Any, name: str,
          dname: str) -> tuple[tuple[int, ...], np.ndarray | None]:
    """Shape of one player's point and its dense start (None: a vertex of the domain)."""
    if not isinstance(domain, LMO):
        raise TypeError(f"`{dname}` must be an LMO, got {type(domain).__name__}")
    dense = None
    if isinstance(start, ActiveSet):
        if len(start) == 0:
            raise ValueError(f"`{name}`: the warm-start ActiveSet is empty")
        dense = np.array(start.copy(keep_x=False).resum(), dtype=float)
    elif isinstance(start, Atom):
        dense = np.array(start.to_dense(), dtype=float)
    elif start is not None:
        dense = np.array(start, dtype=float)
    shape = obj_shape
    for who, s in ((dname, domain.shape), (f"`{name}`", None if dense is None else dense.shape)):
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
        elif int(np.prod(s)) != int(np.prod(shape)) or (who.startswith("`") and tuple(s) != shape):
            raise ShapeError(f"{who} has shape {tuple(s)} but the objective expects {shape}")
    if shape is None:
        raise ShapeError(
            f"cannot tell the shape of the `{name[0]}` player: neither the objective, `{dname}` "
            f"nor `{name}` gives it; pass `{name}` or give the LMO a `dim`"
        )
    if dense is None:
        dense = np.array(domain.initial_point(shape).to_dense(), dtype=float).reshape(shape)
    return shape, dense


@solver()
def saddle_point_frank_wolfe(
    objective: SaddleObjective,
    domain_x: LMO,
    domain_y: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    y0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    away: bool = False,
    corrective: bool = False,
    qp_solver: str | None = None,
    step_size: str | StepSize | None = None,
    C: float | None = None,
    nu: float = 1.0,
    options: RunOptions,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
) -> Result:
    """Solve ``min_{x in X} max_{y in Y} L(x, y)`` with saddle-point Frank-Wolfe.

    Each iteration evaluates ``r = (grad_x L, -grad_y L)`` at ``z = (x, y)``,
    calls each player's oracle once, ``s = (LMO_X(grad_x L), LMO_Y(-grad_y L))``,
    certifies the saddle gap ``g = <r, z - s>`` and moves to
    ``z + gamma (s - z)`` (SP-FW).  With ``away=True`` (SP-AFW) each player
    also keeps an active set and the step may instead move away from the
    pair of away vertices, which removes vertices outside the equilibrium's
    support (Gidel, Jebara and Lacoste-Julien, AISTATS 2017).  With
    ``corrective=True`` (fully corrective SP-FW) each player keeps its
    active vertices and, after every joint oracle call, the iterate jumps to
    the exact saddle point of ``L`` restricted to the convex hulls of the
    active vertices: the double-oracle method of game theory, which ends
    after finitely many oracle calls on polytopes.

    Parameters
    ----------
    objective : SaddleObjective
        ``L``, convex in ``x`` and concave in ``y``.
    domain_x, domain_y : LMO
        Oracles of the minimizing player's domain ``X`` and the maximizing
        player's domain ``Y`` (polytopes for SP-AFW).
    x0, y0 : ndarray, Atom or ActiveSet, optional
        Feasible starts; by default a vertex of each domain.  SP-AFW needs a
        vertex (Atom, or an array the oracle returns for ``-x0``) or an
        ActiveSet.
    away : bool, default False
        Use away steps (SP-AFW).
    corrective : bool, default False
        Fully corrective SP-FW, for a :class:`~frankwolfe.BilinearObjective`
        (any polytope oracles).  The restricted game over ``p`` and ``q``
        active vertices is solved exactly: one linear program
        (:func:`scipy.optimize.linprog`, HiGHS; ``u`` primal, ``v`` dual)
        without the ``mu`` terms, else one small convex QP (cvxpy) whose
        solution is then polished on its support by one linear KKT solve.
        Vertices of zero weight are dropped; a vertex that comes back after
        a drop is kept for good, so each iteration either adds a vertex or
        certifies a zero gap (up to the solver's accuracy, about 1e-12 for
        the LP), and the run ends after at most twice the number of
        vertices of ``X`` and ``Y`` iterations.  Cost per iteration: the two
        oracles, ``O(m q + n p)`` for the products, and the restricted solve.
        ``step_size`` must be left None (the step is ``gamma = 1``).
    qp_solver : str, optional
        cvxpy solver of the quadratic restricted game (default Clarabel).
    step_size : str or StepSize, optional
        One of ``"agnostic"``, ``"fictitious"``, ``"curvature"``, ``"local"``,
        ``"backtracking"``, or a :class:`~frankwolfe.step_size.StepSize`.
        ``"agnostic"``: ``gamma = 2/(k+2)``.  ``"fictitious"``:
        ``gamma = 1/(k+1)``, which makes ``(x_k, y_k)`` the plain averages of
        the best replies so far (fictitious play).  ``"curvature"``:
        ``gamma = min(gamma_max, nu * g / (2 C))``, :class:`SaddleStep`, with
        the curvature constant ``C``.  ``"local"``: the same with ``C``
        replaced by the curvature of ``L`` along the direction taken,
        ``objective.curvature_along(d_x, d_y)`` (never larger, so never a
        shorter step).  ``"backtracking"``: ``C`` estimated along the
        directions taken from values of ``L``, :class:`SaddleBacktracking`.
        Line-search rules of minimization (``"exact"``, ``"short"``,
        ``"armijo"``) do not apply: ``L`` is not minimized along ``d``.  The
        default is chosen so that SP-AFW reaches its linear rate on strongly
        convex-concave problems without a user-supplied constant:

        1. ``"curvature"`` when ``C`` is passed or ``objective.curvature`` is set;
        2. else, when ``objective.strongly_convex_concave`` (a
           :class:`~frankwolfe.BilinearObjective` with ``mu_x, mu_y > 0``):
           ``"local"`` when the objective implements ``curvature_along`` (a
           :class:`~frankwolfe.BilinearObjective` does:
           ``mu_x ||d_x||^2 + mu_y ||d_y||^2``); else ``"curvature"`` with
           ``C = objective.curvature_constant(domain_x, domain_y)``, that is
           ``smoothness_x D_x^2 + smoothness_y D_y^2`` for the domains'
           Euclidean diameters (``D^2 = 2 r^2`` for a simplex of radius
           ``r``, ``4 r^2`` for an l1 or l2 ball; :meth:`~frankwolfe.LMO.diameter`);
           and ``"backtracking"`` when a piece is unknown;
        3. else ``"agnostic"`` (a pure bilinear game has ``C = 0``, and no
           step rule gives SP-FW a linear rate there).
    C : float, optional
        Curvature constant of the curvature rule (default:
        ``objective.curvature_constant(domain_x, domain_y)``).
    nu : float, default 1.0
        Damping of the curvature rules (``"curvature"``, ``"local"``,
        ``"backtracking"``).
    resum_every, sparsify_tol
        Drift control of the SP-AFW active sets, as in
        :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``x`` is the minimizing player's point, ``extra["y"]`` the
        maximizing player's, ``fun = L(x, y)``, ``gap`` the saddle gap
        ``<r, z - s>`` (equal to ``max_y' L(x, y') - min_x' L(x', y)`` for
        bilinear ``L``, an upper bound on it otherwise).  ``extra`` also
        holds the per-player gaps ``gap_x, gap_y`` and a certified bracket
        ``value_lower <= min max L <= value_upper`` (best over the run);
        ``dual_bound`` is ``value_lower`` and ``best_gap`` equals ``gap``.
        For SP-AFW ``active_set`` is the pair of final active sets and
        ``extra`` counts the steps; the history has ``gap_x`` and ``gap_y``
        columns.  With ``corrective=True``, ``active_set`` is the pair of
        supports (positive weights) and ``extra`` has ``n_corrective_lp``,
        ``n_corrective_qp``, ``n_polished``, ``n_atoms_added``, ``n_drops``,
        ``n_pinned`` and ``corrective_time`` (seconds in restricted solves).

    Notes
    -----
    ``tol`` and ``rtol`` bound the certified saddle gap.  The callback's
    ``x`` is the joint point ``z = (x.ravel(), y.ravel())`` and its
    ``gradient`` is ``r``.  ``Result.method`` is ``"saddle"`` and
    ``extra["variant"]`` is ``"fw"``, ``"away"`` or ``"corrective"``.

    For a bilinear ``L`` (matrix games) no open-loop rule has a linear
    rate: with ``2/(k+2)`` or ``1/(k+1)`` the gap falls like ``k^-0.45``
    (about 0.1 after 1e4 iterations on random 200x300 games; see
    ``docs/saddle.md``).  Use ``corrective=True`` for accurate equilibria of
    matrix games.  The linear rate of SP-AFW holds for strongly
    convex-concave ``L`` whose strong convexity dominates the coupling
    (``nu > 0`` in Gidel et al.).  For a :class:`~frankwolfe.BilinearObjective`
    ``M y`` and ``M^T x`` are kept from per-vertex columns and rows of ``M``
    (O(m + n) per step for simplex vertices) rather than two full products.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import BilinearObjective, ProbabilitySimplex, saddle_point_frank_wolfe
    >>> M = np.array([[1.0, -1.0], [-1.0, 1.0]])          # matching pennies
    >>> L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    >>> res = saddle_point_frank_wolfe(L, ProbabilitySimplex(), ProbabilitySimplex(),
    ...                                away=True, C=4.0, tol=1e-10)
    >>> np.round(res.x, 6), np.round(res.extra["y"], 6), res.gap <= 1e-10
    (array([0.5, 0.5]), array([0.5, 0.5]), True)
    >>> rps = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
    >>> res = saddle_point_frank_wolfe(BilinearObjective(rps), ProbabilitySimplex(),
    ...                                ProbabilitySimplex(), corrective=True, tol=1e-12)
    >>> bool(np.allclose(res.x, 1 / 3, atol=1e-12)), res.gap <= 1e-12, res.extra["n_corrective_lp"]
    (True, True, 5)
    """
    if not isinstance(objective, SaddleObjective):
        raise TypeError(f"objective must be a SaddleObjective, got {type(objective).__name__}")
    shape_x, x_start = _side(objective.shape_x, domain_x, x0, "x0", "domain_x")
    shape_y, y_start = _side(objective.shape_y, domain_y, y0, "y0", "domain_y")
    adapter = _SaddleAdapter(objective, shape_x, shape_y)
    nx = adapter.nx
    joint = ProductDomain([domain_x, domain_y],
                          indices=[range(nx), range(nx, adapter.shape[0])])
    z0 = np.concatenate([x_start.reshape(-1), y_start.reshape(-1)])
    domain_x.check_feasible(x_start, "`x0`")
    domain_y.check_feasible(y_start, "`y0`")

    if corrective:
        if away:
            raise ValueError("`corrective=True` and `away=True` exclude each other: the "
                             "corrective step already removes every inactive vertex")
        if not isinstance(objective, BilinearObjective):
            raise TypeError(
                "corrective=True solves the restricted game exactly and needs a "
                f"BilinearObjective, got {type(objective).__name__}"
            )
        if step_size is not None:
            raise ValueError(
                f"corrective=True takes the corrective point whole (gamma = 1); got "
                f"step_size={step_size!r}, leave it None"
            )
        rule: StepSize = _FullStep()
        variant: _SaddleVariant = _SaddleCorrective(
            domain_x, domain_y, adapter,
            (_start_kind(x0, domain_x, shape_x), _start_kind(y0, domain_y, shape_y)), qp_solver)
    elif away:
        rule = _step_rule(step_size, C, nu, objective, domain_x, domain_y)
        variant = _SaddleAway(domain_x, domain_y, adapter,
                              (_start_kind(x0, domain_x, shape_x),
                               _start_kind(y0, domain_y, shape_y)),
                              resum_every, sparsify_tol)
    else:
        rule = _step_rule(step_size, C, nu, objective, domain_x, domain_y)
        variant = _SaddleFW(domain_x, domain_y, adapter)
    res = run_frank_wolfe(adapter, joint, variant, z0, step_size=rule, options=options)
    x, y = adapter.split(np.asarray(res.x))
    res.x = np.array(x)
    res.extra["y"] = np.array(y)
    res.dual_bound = float(res.extra.get("value_lower", -np.inf))
    res.best_gap = res.gap
    return res


def _start_kind(start: Any, domain: LMO, shape: tuple[int, ...]) -> Any:
    """What the away variant builds its active set from (an Atom for the default vertex)."""
    if start is None:
        return domain.initial_point(shape)
    return start


def _step_rule(spec: str | StepSize | None, C: float | None, nu: float,
               objective: SaddleObjective, domain_x: LMO, domain_y: LMO) -> StepSize:
    curvature = C if C is not None else objective.curvature_constant(domain_x, domain_y)
    if curvature is not None and not curvature > 0:
        curvature = None  # a zero constant (a pure bilinear game) sets no step length
    local = type(objective).curvature_along is not SaddleObjective.curvature_along
    if spec is None:
        if C is not None or objective.curvature is not None:
            spec = "curvature"
        elif objective.strongly_convex_concave:
            spec = "local" if local else "curvature" if curvature is not None else "backtracking"
        else:
            spec = "agnostic"
    if isinstance(spec, StepSize):
        return spec
    if isinstance(spec, str):
        name = spec.lower()
        if name == "agnostic":
            return Agnostic()
        if name == "fictitious":  # 1/(k+1): z_k is the plain average of the best replies
            return Agnostic(1.0)
        if name == "adaptive":
            warnings.warn(
                "saddle_point_frank_wolfe(): step_size='adaptive' is deprecated and will be "
                "removed in the next release; use step_size='curvature' (the same rule: "
                "'adaptive' names the backtracking rule of minimization elsewhere)",
                DeprecationWarning, stacklevel=4,
            )
            name = "curvature"
        if name == "curvature":
            if curvature is None:
                raise ValueError(
                    f"step_size={spec!r} needs the curvature constant: pass C=... "
                    f"(or set `curvature` on {type(objective).__name__}), or use "
                    "step_size='backtracking'"
                )
            return SaddleStep(curvature, nu)
        if name == "local":
            if not local:
                raise ValueError(
                    f"step_size='local' needs {type(objective).__name__}.curvature_along; "
                    "use step_size='backtracking'"
                )
            return SaddleStep(None, nu)
        if name == "backtracking":
            return SaddleBacktracking(nu)
        raise ValueError(
            f"unknown saddle step_size {spec!r}; choose 'agnostic', 'fictitious', 'curvature', "
            "'local' or 'backtracking' or pass a StepSize (line searches on L do not apply to "
            "a saddle problem)"
        )
    raise TypeError(f"step_size must be a string, a StepSize or None, got {type(spec).__name__}")


def _minimize_saddle(objective: SaddleObjective, domain: Sequence[LMO] | ProductDomain,
                     **options: Any) -> Result:
    """``minimize(objective, (domain_x, domain_y), method="saddle", **options)``."""
    if isinstance(domain, ProductDomain):
        if domain.n_blocks != 2 or not domain.disjoint:
            raise ValueError(
                f"method='saddle': `domain` must be a Cartesian ProductDomain of 2 blocks, "
                f"got {domain!r}"
            )
        blocks = domain.blocks
    elif isinstance(domain, (tuple, list)) and len(domain) == 2:
        blocks = tuple(domain)
    else:
        raise TypeError(
            "method='saddle': `domain` must be a pair (domain_x, domain_y) of LMOs or a "
            f"2-block ProductDomain, got {type(domain).__name__}"
        )
    return saddle_point_frank_wolfe(objective, blocks[0], blocks[1], **options)

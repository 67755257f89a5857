"""The variants of saddle-point Frank-Wolfe on the shared loop: the joint oracle call
with the value bracket, SP-FW and SP-AFW (away steps on both players' active sets)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...active_set import ActiveSet
from ...atoms import Atom
from ...direction import Direction
from ...errors import ShapeError
from ...lmo.base import LMO, as_given
from ...objectives.base import Tracker
from ..active_variant import DECOMPOSE_HINT, decomposed_start, drift_options
from ..loop import Variant
from .adapter import _SaddleAdapter

# Relative distance between the tracked z and the active sets' sum above which z is reset,
# and within which a start is its domain's vertex: relative to the size of the terms
# summed (ActiveSet.terms_scale), not to ||z||, which vanishes when e_i and -e_i of an l1
# ball cancel (every re-sum then reset z); no absolute floor (a start near a vertex of a
# small domain is no vertex).
_DRIFT_TOL = 1e-12
# Away steps longer than this re-sum at once (they magnify rounding by gamma).
_AMPLIFY = 1e3


def _pair(sx: Atom, sy: Atom, nx: int, n: int) -> Atom:
    """The vertex ``(sx, sy)`` of ``X x Y`` as one atom of the joint space, O(nnz)."""
    key = ("pair", sx.key, sy.key)
    xi, xv, yi, yv = sx.indices, sx.values, sy.indices, sy.values
    if sx.is_sparse and sy.is_sparse:
        return Atom.sparse(np.concatenate([xi, yi + nx]), np.concatenate([xv, yv]), n, key=key,
                           copy=False)
    return Atom(np.concatenate([sx.to_dense().reshape(-1), sy.to_dense().reshape(-1)]), key=key,
                copy=False)


class _SaddleVariant(Variant):
    """Per-side oracle calls and the value bracket; subclasses choose the direction."""

    name = "saddle"
    kind = "fw"  # the configuration, reported in ``Result.extra["variant"]``

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter) -> None:
        self.domain_x = domain_x
        self.domain_y = domain_y
        self.adapter = adapter
        self.nx = adapter.nx
        self.n = adapter.n

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
        # a decomposed start is the combination's point (x0 up to rounding, or brought
        # into the domain when it was outside within the tolerance)
        zs = np.concatenate([S.x.reshape(-1) for S in self.active])
        if float(np.linalg.norm(tracker.x - zs)) > _DRIFT_TOL * self._terms_scale():
            tracker.set_point(zs)

    def _active_set(self, start: Any, part: np.ndarray, domain: LMO, name: str) -> ActiveSet:
        if isinstance(start, ActiveSet):
            S = start.copy(keep_x=False)
            if S.shape != part.shape:
                raise ShapeError(f"{name}: the warm-start ActiveSet has shape {S.shape}, "
                                 f"expected {part.shape}")
            S.mark_foreign()  # its keys may name other vertices here (another radius)
            return S
        if isinstance(start, Atom):
            S = ActiveSet.from_vertex(start, keep_x=False)
            S.mark_foreign()
            return S
        # a vertex of a simplex or norm ball is the oracle's answer for -x
        v = domain(-part)
        self.n_oracle_calls += 1
        # relative to the vertex, the one term of its combination
        if np.linalg.norm(v.to_dense() - part) <= _DRIFT_TOL * math.sqrt(v.sq_norm()):
            return ActiveSet.from_vertex(v, keep_x=False)
        # a float32 start is decomposed as given: its own rounding is allowed
        decomposed = decomposed_start(as_given(start, part), domain, name)
        if decomposed is None:
            raise ValueError(
                f"{name}: the away-step variant needs each start as a convex combination of "
                "vertices; the given array is not recognised as a vertex of its domain.  Pass "
                f"None, an Atom (a vertex) or an ActiveSet (vertices with weights).  "
                f"{DECOMPOSE_HINT}"
            )
        return decomposed

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
        if float(np.linalg.norm(z - zs)) > _DRIFT_TOL * self._terms_scale():
            self.tracker.set_point(zs)
            self.counts["n_resyncs"] += 1

    def _terms_scale(self) -> float:
        """The size of the terms of ``z`` = both players' sums (``ActiveSet.terms_scale``),
        to which their rounding is relative."""
        return sum(S.terms_scale() for S in self.active)

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

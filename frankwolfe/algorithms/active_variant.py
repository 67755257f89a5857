"""Shared bookkeeping of active-set variants (away-step, pairwise, ...).

The tracker owns the iterate during a run (it moves ``x`` along each
:class:`~frankwolfe.Direction`, updating its cached products); the
:class:`~frankwolfe.ActiveSet` owns the weights.  Every ``resum_every``
steps the weights are renormalized, tiny weights are removed and the
tracker is re-synchronised with ``sum w_a a`` if the two drifted apart.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numbers import check_flag, check_real, check_whole
from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..errors import OracleError, ShapeError
from ..lmo.base import FEASIBILITY_TOL, LMO
from ..objectives.base import Tracker
from .loop import Variant

__all__ = ["ActiveSetVariant", "split_start", "decomposed_start", "drift_options",
           "lazy_options", "DECOMPOSE_HINT"]

# Relative distance between tracker.x and sum w_a a above which the tracker is reset, and
# within which an array start is its domain's vertex.  Relative to the terms of the sum
# (or to the start) with no absolute floor: on a domain of radius 2**-30 a floor of 1
# took a start 1e-5 (relative) from a vertex for the vertex, and the returned active
# set then disagreed with the returned x.
_DRIFT_TOL = 1e-12
# sum_a w_a ||a|| >= ||sum_a w_a a||: the drift control's scale is at least the norm of
# the re-summed point, up to rounding of both sides (relative (k + n) eps for k atoms in
# n dimensions), far below this margin
_NORM_MARGIN = 1.0 - 1e-6
# Away steps longer than this trigger the drift control at once.
_AMPLIFY = 1e3
# A decomposition of a start may move it by up to the feasibility tolerance (a point
# just outside the domain is decomposed as the nearby point inside): that tolerance
# holds per coordinate, relative to the domain's scale, so the move may reach
# n * FEASIBILITY_TOL * scale in norm.  Far beyond, the LMO's decompose is wrong, and
# starting from its point would silently change x0.
_DECOMPOSE_TOL = 1e-6

#: the last sentence of the errors for an array start that is not a vertex
DECOMPOSE_HINT = ("Domains with a `decompose` method (ProbabilitySimplex, UnitSimplex, "
                  "L1Ball, Box, LinfBall, Hypercube) also accept any point of the domain, "
                  "e.g. an interior one")


def drift_options(resum_every: Any, sparsify_tol: Any) -> tuple[int, float]:
    """Validate the drift-control options ``resum_every`` and ``sparsify_tol``."""
    every = check_whole(resum_every, "resum_every", 1)
    # check_real: np.isfinite(10**30) raised numpy's TypeError
    return every, check_real(sparsify_tol, "sparsify_tol", low=0)


def lazy_options(lazy: Any, lazy_tolerance: Any) -> tuple[bool, float]:
    """Validate ``lazy`` and ``lazy_tolerance`` (the factor ``K >= 1`` of the lazy test)."""
    check_flag(lazy, "lazy")
    # no bool (True passed for 1), no 10**30 TypeError
    return bool(lazy), check_real(lazy_tolerance, "lazy_tolerance", low=1)


def decomposed_start(x: np.ndarray, lmo: LMO, name: str = "x0") -> ActiveSet | None:
    """``lmo.decompose(x)``, checked: None when the domain has no decomposition.

    Parameters
    ----------
    x : ndarray
        The start, already found feasible.
    lmo : LMO
        Its domain.
    name : str, default "x0"
        How the errors name the start.

    Returns
    -------
    ActiveSet or None
        An active set of ``x``'s shape whose point is ``x`` up to the feasibility
        tolerance (a copy without ``keep_x``).

    Raises
    ------
    OracleError
        When ``decompose`` answers something else than an ActiveSet or None, an
        active set of another shape, or one whose point is not ``x``.
    """
    decompose = getattr(lmo, "decompose", None)
    S = decompose(x) if callable(decompose) else None
    if S is None:
        return None
    if not isinstance(S, ActiveSet) or len(S) == 0:
        raise OracleError(f"{lmo!r}.decompose({name}) must return a non-empty ActiveSet or "
                          f"None, got {S!r}")
    if S.shape != x.shape:
        raise OracleError(f"{lmo!r}.decompose({name}) returned an ActiveSet of shape "
                          f"{S.shape}, expected {x.shape}")
    S = S.copy(keep_x=False)
    dist = float(np.linalg.norm(S.x - x))
    if not dist <= _decompose_tolerance(x, lmo):
        raise OracleError(f"{lmo!r}.decompose({name}) returned an ActiveSet whose point is "
                          f"{dist:.3g} away from {name}")
    return S


def _decompose_tolerance(x: np.ndarray, lmo: LMO) -> float:
    """How far a decomposition's point may be from a start found feasible (see
    ``_DECOMPOSE_TOL``): the domain's scale is its diameter where it has one.

    Relative throughout (no absolute floor): on a domain of radius ``2**-30`` a floor
    of 1 let a decomposition land anywhere in the domain and beyond.
    """
    scale = float(np.abs(x).max(initial=0.0))
    try:
        d = lmo.diameter(x.shape)
    except Exception:  # a user's LMO without one: the point's own scale
        d = None
    diameter = float(d) if d is not None else 0.0
    if math.isfinite(diameter):
        scale = max(scale, diameter)
    return (_DECOMPOSE_TOL * float(np.linalg.norm(x))
            + x.size * FEASIBILITY_TOL * scale)


def split_start(x0: Any) -> tuple[ActiveSet | None, Any]:
    """Separate a warm-start :class:`ActiveSet` from the ``x0`` the loop validates."""
    if isinstance(x0, ActiveSet):
        if len(x0) == 0:
            raise ValueError("x0: the warm-start ActiveSet is empty")
        return x0, np.array(x0.copy(keep_x=False).resum(), dtype=float)
    return None, x0


class ActiveSetVariant(Variant):
    """Base of variants that keep the iterate as a convex combination of atoms.

    Parameters
    ----------
    warm : ActiveSet, optional
        Warm start (copied, never modified).
    resum_every : int
        Period of the drift control (renormalize, sparsify, re-sum).
    sparsify_tol : float
        Weights below this are removed by the drift control.
    lazy : bool
        Call the oracle only when no active atom gives enough progress (see
        :meth:`frank_wolfe_vertex`).
    lazy_tolerance : float
        The factor ``K >= 1`` of the lazy test.
    """

    def __init__(self, warm: ActiveSet | None = None, resum_every: int = 100,
                 sparsify_tol: float = 1e-15, lazy: bool = False,
                 lazy_tolerance: float = 2.0) -> None:
        self.resum_every, self.sparsify_tol = drift_options(resum_every, sparsify_tol)
        self.lazy, self.lazy_tolerance = lazy_options(lazy, lazy_tolerance)
        self.phi = np.inf  # the lazy test's estimate of the Frank-Wolfe gap
        # the last step was zero (rounding ate its slope): ask the oracle next time
        self.force_oracle = False
        self._scored: tuple[int, np.ndarray] | None = None  # (iteration, <g, a_i>)
        self.warm = warm
        # empty until start() puts the run's first vertex (or the warm start) in it
        self.active = ActiveSet(keep_x=False)
        self.counts = {"n_fw_steps": 0, "n_away_steps": 0, "n_pairwise_steps": 0,
                       "n_drop_steps": 0, "n_resyncs": 0, "n_lazy_steps": 0}

    # -- start ---------------------------------------------------------------
    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.tracker = tracker
        self.n_steps = 0
        self.phi = np.inf
        self._scored = None
        for key in self.counts:
            self.counts[key] = 0
        if self.warm is not None:
            active = self.warm.copy(keep_x=False)
            if active.shape != tracker.x.shape:
                raise ShapeError(
                    f"x0: the warm-start ActiveSet has shape {active.shape}, "
                    f"expected {tracker.x.shape}"
                )
            for atom in active.atoms:  # once per run, not on a hot path
                lmo.check_feasible(atom.to_dense(),
                                   f"x0: atom {atom.key!r} of the warm-start ActiveSet")
            # its keys may name other vertices here (another radius): checked on first use
            active.mark_foreign()
        elif x0_atom is not None:
            active = ActiveSet.from_vertex(x0_atom, keep_x=False)
            if not self.own_start:
                # a vertex of another run's domain may carry the key of another vertex
                # here (the l1 ball's ("e", i, s) at another radius), as a warm
                # ActiveSet's may; the domain's own start keeps its key, which a subset
                # oracle's candidate_ids reads (and the sampler then skips it)
                active.mark_foreign()
        else:
            active = self._start_of(tracker, lmo)
        self.active = active

    def _start_of(self, tracker: Tracker, lmo: LMO) -> ActiveSet:
        """The active set of an array start: its vertex, or the domain's decomposition."""
        x = tracker.x
        # A vertex of a norm ball or simplex is the oracle's answer for -x (one call,
        # counted); another point needs the domain's decompose.
        v = lmo(-x)
        self.n_oracle_calls += 1
        # relative to the vertex, the one term of its combination (S.terms_scale())
        if np.linalg.norm(v.to_dense() - x) <= _DRIFT_TOL * math.sqrt(v.sq_norm()):
            return ActiveSet.from_vertex(v, keep_x=False)
        S = decomposed_start(x, lmo)
        if S is None:
            raise ValueError(
                "x0: an active-set method needs its start as a convex combination of "
                "vertices; the given array is not recognised as a vertex of the domain, and "
                f"{type(lmo).__name__} has no decomposition of its points (decompose "
                "returned None).  Pass x0=None, an Atom (a vertex) or an ActiveSet "
                f"(vertices with weights).  {DECOMPOSE_HINT}"
            )
        xs = S.x
        # the iterate is the combination's point (x0 up to rounding, or x0 brought
        # into the domain when it was outside within the tolerance)
        if float(np.linalg.norm(x - xs)) > _DRIFT_TOL * S.terms_scale():
            tracker.set_point(xs)
        return S

    # -- the oracle, lazily ------------------------------------------------------
    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        """The Frank-Wolfe vertex; with ``lazy``, the best active atom when it will do.

        The lazy rule of Braun, Pokutta and Zink (ICML 2017) as in lazy blended
        pairwise CG (Tsuji, Pokutta, Tanaka, ICML 2022): with ``phi`` an estimate of
        the Frank-Wolfe gap, when the active set's own pairwise gap
        ``max_a <g, a> - min_s <g, s>`` is at least ``phi / K`` the best active atom
        ``s`` is returned without calling the oracle (its gap ``<g, x - s>`` is a
        lower bound of the true gap, so it is not a certificate); otherwise the
        oracle is called, its gap certified, and ``phi`` is halved (or set to the
        gap when smaller) when even the oracle's vertex falls short of ``phi / K``.
        """
        if not self.lazy:  # Variant.frank_wolfe_vertex inline
            v = self.oracle(gradient)
            self.n_oracle_calls += 1
            return v, g_dot_x - v.dot(gradient), True
        S = self.active
        if len(S) > 1 and np.isfinite(self.phi) and not self.force_oracle:
            scores = self.active_scores(k, gradient)
            j = int(np.argmin(scores))
            if float(scores.max() - scores[j]) >= self.phi / self.lazy_tolerance:
                self.counts["n_lazy_steps"] += 1
                return S.atom_at(j), g_dot_x - float(scores[j]), False
        self.force_oracle = False
        v = self.oracle(gradient)
        self.n_oracle_calls += 1
        gap = g_dot_x - v.dot(gradient)
        if not np.isfinite(self.phi):
            self.phi = gap
        elif gap < self.phi / self.lazy_tolerance:
            self.phi = min(gap, 0.5 * self.phi)
        return v, gap, True

    def active_scores(self, k: int, gradient: np.ndarray) -> np.ndarray:
        """``<gradient, a_i>`` over the active set at iteration ``k``, computed once per
        iteration (the lazy test and the direction both read them; the set does not
        change between the two)."""
        if self._scored is None or self._scored[0] != k:
            self._scored = (k, self.active.scores(gradient))
        return self._scored[1]

    # -- per-step bookkeeping -------------------------------------------------
    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if gamma == 0.0:
            self.force_oracle = True
        kind = info[0]
        S = self.active
        if kind == "fw":
            _, v, gamma_max = info
            S.frank_wolfe_step(v, gamma)
            self.counts["n_fw_steps"] += 1
        elif kind == "away":
            _, a_key, gamma_max = info
            if S.away_step(a_key, gamma, drop=gamma >= gamma_max):
                self.counts["n_drop_steps"] += 1
            self.counts["n_away_steps"] += 1
        elif kind == "pairwise":
            _, v, a_key, gamma_max = info
            if S.pairwise_step(v, a_key, gamma, drop=gamma >= gamma_max):
                self.counts["n_drop_steps"] += 1
            self.counts["n_pairwise_steps"] += 1
        else:  # pragma: no cover - programming error
            raise AssertionError(f"unknown step kind {kind!r}")
        self.n_steps += 1
        # a long away step magnifies the tracker's rounding errors by gamma
        if self.n_steps % self.resum_every == 0 or (kind == "away" and gamma > _AMPLIFY):
            self.maintain()

    def maintain(self) -> None:
        """Renormalize, drop tiny weights, and re-sync the tracker if ``x`` drifted."""
        S = self.active
        S.sparsify(self.sparsify_tol)
        xs = S.resum()
        drift = float(np.linalg.norm(self.tracker.x - xs))
        # the usual drift is far within the tolerance of ||xs||, a lower bound of the
        # scale: the pass over the atoms is for drifts that the bound cannot decide
        if drift > _DRIFT_TOL * (_NORM_MARGIN * float(np.linalg.norm(xs))) and \
                drift > _DRIFT_TOL * S.terms_scale():
            self.tracker.set_point(xs)
            self.counts["n_resyncs"] += 1

    # -- helpers for subclasses -------------------------------------------
    def fw_step(self, v: Atom) -> tuple[Direction, float, Any]:
        """The Frank-Wolfe direction ``v - x`` with its bookkeeping info."""
        return Direction.frank_wolfe(v), 1.0, ("fw", v, 1.0)

    # -- reporting -------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        return {"active_set_size": len(self.active)}

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        if len(self.active) == 0:  # not started: a started run always holds a vertex
            return None, dict(self.counts)
        self.active.restore_foreign_keys()  # the run is over: a warm start's keys back
        final = self.active.copy(keep_x=True)
        final.resum()
        return final, dict(self.counts)

"""Decomposition-invariant conditional gradient (DICG) and its blended, lazy version."""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from .._numbers import check_flag
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..lmo.in_face import supports_in_face
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import lazy_options
from .loop import Variant, run_frank_wolfe

__all__ = ["decomposition_invariant_conditional_gradient"]


class _DICG(Variant):
    """Pairwise steps ``v - a`` with the away vertex ``a`` from the in-face oracle: an
    active set's work without an active set."""

    name = "dicg"

    def __init__(self, blended: bool, lazy: bool, lazy_tolerance: float) -> None:
        self.blended, self.lazy, self.K = blended, lazy, lazy_tolerance
        self.phi = np.inf
        self.counts = {"n_fw_steps": 0, "n_local_steps": 0, "n_drop_steps": 0,
                       "n_in_face_calls": 0}
        self._away: Atom | None = None

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        if not supports_in_face(lmo):
            raise TypeError(
                f"decomposition_invariant_conditional_gradient needs a domain with an in-face "
                f"oracle (an LMO with the methods in_face_extreme_point(x, direction) and "
                f"max_step(x, direction); built in: ProbabilitySimplex, UnitSimplex, "
                f"Box/Hypercube, HyperSimplex, UnitHyperSimplex, Birkhoff), got {lmo!r}")
        super().start(tracker, x0_atom, lmo)
        self.phi = np.inf
        for key in self.counts:
            self.counts[key] = 0

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        lmo: Any = self.lmo
        self._away = a = lmo.in_face_extreme_point(tracker.x, -gradient)
        self.counts["n_in_face_calls"] += 1
        if self.blended:
            s = lmo.in_face_extreme_point(tracker.x, gradient)
            self.counts["n_in_face_calls"] += 1
            local = a.dot(gradient) - s.dot(gradient)
            # lazy: a local step while it promises phi / K; eager: while it beats the gap
            if self.lazy and np.isfinite(self.phi) and local >= self.phi / self.K:
                self.counts["n_local_steps"] += 1
                return s, g_dot_x - s.dot(gradient), False
        v = lmo(gradient)
        self.n_oracle_calls += 1
        gap = g_dot_x - v.dot(gradient)
        if self.blended and not self.lazy and local >= gap:
            self.counts["n_local_steps"] += 1
            return s, gap, True  # the certificate stands; the step is the local one
        if self.lazy:
            if not np.isfinite(self.phi):
                self.phi = gap
            elif gap < self.phi / self.K:
                self.phi = min(gap, 0.5 * self.phi)
        self.counts["n_fw_steps"] += 1
        return v, gap, True

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        a = self._away
        if a is None or a.key == v.key:  # x is the vertex v, or the face is a point
            return Direction.frank_wolfe(v), 1.0, None
        d = Direction.pairwise(v, a)
        gamma_max = float(self.lmo.max_step(tracker.x, d.dense(tracker.x)))  # type: ignore[attr-defined]
        return d, gamma_max, gamma_max

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if info is not None and gamma >= info:
            self.counts["n_drop_steps"] += 1  # a coordinate reached its bound: a smaller face

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        return None, dict(self.counts, blended=self.blended, lazy=self.lazy)


@register("dicg", "decomposition_invariant")
@solver()
def decomposition_invariant_conditional_gradient(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | None = None,
    *,
    blended: bool = False,
    lazy: bool = False,
    lazy_tolerance: float = 2.0,
    step_size: str | StepSize | None = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a 0/1-type polytope with decomposition-
    invariant conditional gradient.

    Garber and Meshi (NeurIPS 2016): each iteration moves along ``v - a`` from the away
    vertex ``a``, the worst vertex of the smallest face containing ``x`` (one call of
    the domain's in-face oracle, :mod:`~frankwolfe.lmo.in_face`), to the Frank-Wolfe
    vertex ``v``, as far as the face allows.  The linear rate of away-step and
    pairwise FW on strongly convex objectives, with no active set to store (its size
    does not grow with the iterations, and ``x`` need not be kept as a combination of
    vertices).  Domains: any :class:`~frankwolfe.LMO` with the in-face protocol of
    :mod:`~frankwolfe.lmo.in_face`, the two methods
    ``in_face_extreme_point(x, direction)`` (the best vertex of the smallest face
    containing ``x``, an :class:`~frankwolfe.Atom`) and ``max_step(x, direction)``
    (the largest step that stays in the domain), a user's domain included; built in:
    :class:`~frankwolfe.ProbabilitySimplex`,
    :class:`~frankwolfe.UnitSimplex`, :class:`~frankwolfe.Box` /
    :class:`~frankwolfe.Hypercube`, :class:`~frankwolfe.HyperSimplex`,
    :class:`~frankwolfe.UnitHyperSimplex`, :class:`~frankwolfe.Birkhoff`.

    With ``blended=True`` (blended DICG, as in FrankWolfe.jl) a local step from ``a``
    to the best vertex ``s`` of the same face replaces the Frank-Wolfe step while its
    gap ``<g, a - s>`` is at least the Frank-Wolfe gap (or, with ``lazy=True``, at
    least ``phi / lazy_tolerance``, and then the oracle is not called: those
    iterations report no certified gap).

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        A domain with the in-face protocol (``in_face_extreme_point`` and
        ``max_step``; see above).
    x0 : ndarray or Atom, optional
        Feasible start (any point of the domain: no decomposition is needed); by
        default a vertex.
    blended : bool, default False
        Blend local in-face steps with Frank-Wolfe steps.
    lazy : bool, default False
        With ``blended``: skip the oracle while local steps promise enough.
    lazy_tolerance : float, default 2.0
        The factor ``K >= 1`` of the lazy test.
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe`; clipped to the face's largest step.

    Returns
    -------
    Result
        ``extra`` counts ``n_fw_steps``, ``n_local_steps``, ``n_drop_steps`` (steps
        that reached a smaller face) and ``n_in_face_calls`` (calls of the in-face
        oracle, which cost about an oracle call each; ``n_oracle_calls`` counts the
        others); ``active_set`` is ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Birkhoff, QuadraticObjective
    >>> from frankwolfe import decomposition_invariant_conditional_gradient as dicg
    >>> rng = np.random.default_rng(0)
    >>> M = rng.standard_normal((25, 25))
    >>> f = QuadraticObjective(M.T @ M / 25 + np.eye(25), rng.standard_normal(25))
    >>> res = dicg(f, Birkhoff(5), tol=1e-9)
    >>> str(res.status), bool(res.gap <= 1e-9)
    ('converged', True)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    lazy, lazy_tolerance = lazy_options(lazy, lazy_tolerance)
    check_flag(blended, "blended")
    if lazy and not blended:
        raise ValueError("lazy=True needs blended=True: plain DICG calls the oracle every step")
    variant = _DICG(bool(blended), lazy, lazy_tolerance)
    return run_frank_wolfe(objective, domain, variant, x0, step_size=step_size,
                           options=options)

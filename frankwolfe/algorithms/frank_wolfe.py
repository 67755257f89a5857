"""Vanilla (classic) Frank-Wolfe."""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from .._numbers import as_real, check_whole
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..lmo.cached import CachedLMO
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import lazy_options
from .loop import Variant, run_frank_wolfe

__all__ = ["frank_wolfe"]


class _Vanilla(Variant):
    name = "fw"
    plain = True  # the engine inlines the methods below

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None


class _LazyVanilla(Variant):
    """Lazified conditional gradient (Braun, Pokutta, Zink, ICML 2017): a cached
    vertex whose gap is at least ``phi / K`` serves instead of an oracle call."""

    name = "fw"

    def __init__(self, lazy_tolerance: float, cache_size: int | None) -> None:
        self.K = lazy_tolerance
        self.cache_size = cache_size
        self.phi = np.inf
        self.n_lazy_steps = 0

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        cache = lmo if isinstance(lmo, CachedLMO) else CachedLMO(lmo, self.cache_size)
        super().start(tracker, x0_atom, cache)
        self.cache = cache
        self.phi = np.inf
        self.n_lazy_steps = 0

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        if np.isfinite(self.phi):
            a, value = self.cache.best_cached(gradient)
            if a is not None and g_dot_x - value >= self.phi / self.K:
                self.n_lazy_steps += 1
                return a, g_dot_x - value, False  # a lower bound of the gap: no certificate
        v = self.cache(gradient)
        self.n_oracle_calls += 1
        gap = g_dot_x - v.dot(gradient)
        if not np.isfinite(self.phi):
            self.phi = gap
        elif gap < self.phi / self.K:
            self.phi = min(gap, 0.5 * self.phi)
        return v, gap, True

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        return None, {"n_lazy_steps": self.n_lazy_steps, "n_cached_vertices": len(self.cache)}


class _MomentumVanilla(Variant):
    """Frank-Wolfe on an averaged gradient ``d_k = m d_{k-1} + (1 - m) g_k`` (FrankWolfe.jl's
    ``momentum``); every ``gap_every`` iterations the step and the certificate use the
    true gradient's vertex."""

    name = "fw"

    def __init__(self, momentum: float, gap_every: int) -> None:
        self.m, self.gap_every = momentum, gap_every
        self.d: np.ndarray | None = None

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.d = None

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        if self.d is None:
            self.d = np.array(gradient, dtype=float)
        else:
            self.d *= self.m
            self.d += (1.0 - self.m) * gradient
        exact = k % self.gap_every == 0
        v = self.lmo(gradient if exact else self.d)
        self.n_oracle_calls += 1
        # off the certified iterations <g, x - v> only bounds the gap from below
        return v, g_dot_x - v.dot(gradient), exact

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None


@register("fw", "frank_wolfe")
@solver()
def frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | None = None,
    *,
    step_size: str | StepSize | None = None,
    lazy: bool = False,
    lazy_tolerance: float = 2.0,
    cache_size: int | None = None,
    momentum: float | None = None,
    gap_every: int | None = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a compact convex set with Frank-Wolfe.

    Each iteration calls the oracle once on the gradient, ``v = LMO(grad f(x))``,
    certifies ``f(x) - f* <= <grad f(x), x - v>`` (the Frank-Wolfe gap) and
    moves to ``x + gamma (v - x)``.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    domain : LMO
        The domain, given by its linear minimization oracle.
    x0 : ndarray or Atom, optional
        Feasible start; by default a vertex of the domain.
    step_size : str or StepSize, optional
        ``"agnostic"``, ``"short"``, ``"exact"``, ``"adaptive"``, ``"armijo"``
        or a :class:`~frankwolfe.step_size.StepSize`.  Default: ``"exact"``
        when the objective has a closed-form line search, else ``"adaptive"``.
    lazy : bool, default False
        Lazified conditional gradient (Braun, Pokutta, Zink, ICML 2017): the
        vertices the oracle returned are kept (a :class:`~frankwolfe.CachedLMO`;
        pass one as ``domain`` to share or size it) and a cached vertex with gap at
        least ``phi / lazy_tolerance`` is used without calling the oracle; ``phi``,
        an estimate of the gap, is halved when even the oracle's vertex falls short.
        Lazy iterations report no certified gap; the returned gap is certified.
    lazy_tolerance : float, default 2.0
        The factor ``K >= 1`` of the lazy test.
    cache_size : int, optional
        With ``lazy``: how many vertices the cache keeps (default: all).
    momentum : float, optional
        Gradient momentum ``m`` in ``[0, 1)``: the oracle is called on
        ``d_k = m d_{k-1} + (1 - m) grad f(x_k)`` (FrankWolfe.jl's ``momentum``;
        smooths noisy or oscillating gradients).  Those iterations report no
        certified gap.
    gap_every : int, optional
        With ``momentum`` (default 10 then; an error without it): every ``gap_every``
        iterations the oracle is called on the true gradient, for the step and a
        certified gap (the run stops on ``tol`` only there; the returned gap is always
        certified).

    Returns
    -------
    Result
        ``x``, ``fun``, ``gap`` (certified), ``status``, counters and history.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import frank_wolfe, QuadraticObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = QuadraticObjective(np.eye(3), -y)    # 1/2 ||x - y||^2 + const
    >>> res = frank_wolfe(f, ProbabilitySimplex(), tol=1e-9)
    >>> np.round(res.x, 6)
    array([0.6, 0.4, 0. ])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    lazy, lazy_tolerance = lazy_options(lazy, lazy_tolerance)
    if cache_size is not None and not lazy:
        raise ValueError("cache_size applies to lazy=True only")
    # (int() raised its own errors on inf, NaN and text, and truncated 2.5)
    every = check_whole(gap_every, "gap_every", 1, "frank_wolfe", optional=True)
    if every is not None and momentum is None:  # as cache_size without lazy: not ignored
        raise ValueError(f"frank_wolfe: `gap_every` applies to `momentum` only, got "
                         f"gap_every={gap_every!r} without momentum")
    variant: Variant = _LazyVanilla(lazy_tolerance, cache_size) if lazy else _Vanilla()
    if momentum is not None:
        if lazy:
            raise ValueError("momentum and lazy=True do not combine; choose one")
        if not 0.0 <= as_real(momentum) < 1.0:  # no bool, no text
            raise ValueError(f"frank_wolfe: `momentum` must be in [0, 1), got {momentum!r}")
        variant = _MomentumVanilla(as_real(momentum), 10 if every is None else every)
    return run_frank_wolfe(objective, domain, variant, x0, step_size=step_size,
                           options=options)

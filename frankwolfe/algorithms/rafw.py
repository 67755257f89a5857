"""Randomized away-step Frank-Wolfe (RAFW).

Kerdreux, Pedregosa and d'Aspremont, "Frank-Wolfe with subsampling oracle",
ICML 2018.  Each iteration calls the oracle on a random sample of the
domain's vertex candidates plus the active atoms, instead of on all of them;
the away step keeps the linear rate of away-step Frank-Wolfe on polytopes.
The sampled gap is no certificate, so every ``gap_every`` iterations a full
oracle call certifies the gap (and its vertex is used for the step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..lmo.subset import supports_subsets
from ..monitor import IterationState
from ..objectives.base import Objective, Tracker
from ..result import Result
from ..step_size import StepSize
from .active_variant import ActiveSetVariant, split_start
from .loop import run_frank_wolfe

__all__ = ["randomized_away_step_frank_wolfe"]


def _sample_size(subsample: Any, n: int) -> int:
    """Number of candidates drawn per iteration from ``subsample`` (count or fraction)."""
    if isinstance(subsample, (bool, np.bool_)) or not np.isscalar(subsample):
        raise ValueError(
            f"`subsample` must be a count (int >= 1) or a fraction in (0, 1], got {subsample!r}"
        )
    if isinstance(subsample, (int, np.integer)):
        if subsample < 1:
            raise ValueError(f"`subsample` must be a count >= 1 or a fraction in (0, 1], "
                             f"got {subsample!r}")
        return int(min(subsample, n))
    s = float(subsample)
    if not (0.0 < s <= 1.0):
        raise ValueError(
            f"`subsample` as a float is a fraction and must lie in (0, 1], got {subsample!r}"
        )
    return max(1, min(n, int(np.ceil(s * n))))


class _RandomizedAway(ActiveSetVariant):
    name = "randomized_away_step_frank_wolfe"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 subsample: Any, gap_every: int, rng: np.random.Generator) -> None:
        super().__init__(warm, resum_every, sparsify_tol)
        if int(gap_every) != gap_every or gap_every < 1:
            raise ValueError(f"`gap_every` must be a positive integer, got {gap_every!r}")
        self.subsample = subsample
        self.gap_every = int(gap_every)
        self.rng = rng
        self.counts.update({"n_atom_products": 0, "n_full_oracle_calls": 0,
                            "n_subset_oracle_calls": 0})

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        if not supports_subsets(lmo):
            raise TypeError(
                f"randomized_away_step_frank_wolfe needs an LMO that can minimize over a subset "
                f"of its vertices (a frankwolfe.lmo.subset.SubsetOracle such as "
                f"ProbabilitySimplex, UnitSimplex or L1Ball), got {lmo!r}"
            )
        super().start(tracker, x0_atom, lmo)
        self._calls_seen = self.n_oracle_calls  # a start from an array costs one full call
        self.counts["n_full_oracle_calls"] += self._calls_seen
        self.counts["n_atom_products"] += self._calls_seen * int(lmo.n_candidates(tracker.x.shape))
        self.n_cand = int(lmo.n_candidates(tracker.x.shape))
        self.size = _sample_size(self.subsample, self.n_cand)
        self._scores: np.ndarray | None = None

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        S = self.active
        # the away query needs <g, a> for every active atom anyway: score them once
        scores = S.scores(gradient)
        self._scores = scores
        self.counts["n_atom_products"] += scores.size
        if k % self.gap_every == 0:
            v = self.lmo(gradient)
            self.n_oracle_calls += 1
            self._calls_seen += 1
            self.counts["n_full_oracle_calls"] += 1
            self.counts["n_atom_products"] += self.n_cand
            return v, g_dot_x - v.dot(gradient), True
        active_ids = self.lmo.candidate_ids(S.atoms)
        draw = self.rng.choice(self.n_cand, size=min(self.n_cand, self.size + active_ids.size),
                               replace=False, shuffle=False)
        if active_ids.size:
            draw = draw[~np.isin(draw, active_ids, assume_unique=False)]
        ids = draw[: self.size]
        self.counts["n_subset_oracle_calls"] += 1
        j = int(np.argmin(scores))
        if ids.size:
            v = self.lmo.extreme_point_among(gradient, ids)
            self.counts["n_atom_products"] += ids.size
            sv = v.dot(gradient)
            if scores[j] < sv:
                v, sv = S.atom_at(j), float(scores[j])
        else:  # every candidate is active
            v, sv = S.atom_at(j), float(scores[j])
        return v, g_dot_x - sv, False

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        if len(S) == 1:
            return self.fw_step(v)
        scores = self._scores if self._scores is not None else S.scores(gradient)
        i = int(np.argmax(scores))
        away_gap = float(scores[i]) - g_dot_x
        gamma_max = S.away_gamma_max(i)
        if gap >= away_gap or not np.isfinite(gamma_max):
            return self.fw_step(v)
        a = S.atom_at(i)
        return Direction.away(a), gamma_max, ("away", a.key, gamma_max)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        self._scores = None
        super().after_step(direction, gamma, info)

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        active, extra = super().outputs()
        # the loop certifies a run stopped between full calls with one more full call
        late = self.n_oracle_calls - getattr(self, "_calls_seen", self.n_oracle_calls)
        if late > 0:
            extra["n_full_oracle_calls"] += late
            extra["n_atom_products"] += late * self.n_cand
        return active, extra


def randomized_away_step_frank_wolfe(
    objective: Objective,
    lmo: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    subsample: int | float = 0.1,
    gap_every: int = 20,
    seed: int | np.random.Generator | None = 0,
    step_size: str | StepSize | None = None,
    tol: float = 1e-6,
    max_iter: int = 1000,
    time_limit: float | None = None,
    callback: Callable[[IterationState], Any] | None = None,
    verbose: bool | int = False,
    history_every: int = 1,
    progress: bool = False,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
) -> Result:
    """Minimize a smooth convex function over a polytope with randomized away-step Frank-Wolfe.

    Like :func:`~frankwolfe.away_step_frank_wolfe`, but the Frank-Wolfe
    vertex is searched among ``subsample`` randomly drawn vertex candidates
    outside the active set plus the active atoms (Kerdreux, Pedregosa and
    d'Aspremont, ICML 2018); the better of the Frank-Wolfe and away
    directions is taken.  The linear rate of away steps is kept in
    expectation, while an iteration evaluates ``<g, a>`` for only
    ``subsample + |active set|`` atoms instead of all of them.

    Parameters
    ----------
    objective : Objective
        The function to minimize.
    lmo : LMO
        The domain; it must implement :class:`~frankwolfe.lmo.subset.SubsetOracle`
        (:class:`~frankwolfe.ProbabilitySimplex`, :class:`~frankwolfe.UnitSimplex`,
        :class:`~frankwolfe.L1Ball`).
    x0 : Atom, ActiveSet or ndarray, optional
        As in :func:`~frankwolfe.away_step_frank_wolfe`.
    subsample : int or float, default 0.1
        Candidates drawn per iteration: a count (int) or a fraction of the
        candidates (float in (0, 1]).
    gap_every : int, default 20
        Period of the full oracle call.  Only those iterations report a
        (certified) gap, so the run can stop only there; the other rows of
        the history have ``gap = nan``.  A run stopped in between (iteration
        or time budget) is certified by one more full call.
    seed : int or numpy Generator, default 0
        Randomness of the sampling.
    step_size, tol, max_iter, time_limit, callback, verbose, history_every, progress
        As in :func:`~frankwolfe.frank_wolfe`.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        As for :func:`~frankwolfe.away_step_frank_wolfe`; ``extra`` also has
        ``n_atom_products`` (inner products ``<g, a>`` evaluated: sampled and
        active atoms, plus ``n`` candidates per full call),
        ``n_full_oracle_calls`` and ``n_subset_oracle_calls``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import randomized_away_step_frank_wolfe, QuadraticObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2, -0.5])
    >>> f = QuadraticObjective(np.eye(4), -y)
    >>> res = randomized_away_step_frank_wolfe(f, ProbabilitySimplex(dim=4), subsample=2,
    ...                                        tol=1e-12, gap_every=5)
    >>> np.round(res.x, 6)
    array([0.6, 0.4, 0. , 0. ])
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    _sample_size(subsample, 1 << 62)  # validate before any work
    warm, start = split_start(x0)
    variant = _RandomizedAway(warm, resum_every, sparsify_tol, subsample, gap_every, rng)
    return run_frank_wolfe(
        objective, lmo, variant, start,
        step_size=step_size, tol=tol, max_iter=max_iter, time_limit=time_limit,
        callback=callback, verbose=verbose, history_every=history_every, progress=progress,
    )

"""Randomized away-step Frank-Wolfe (RAFW).

Kerdreux, Pedregosa and d'Aspremont, "Frank-Wolfe with subsampling oracle",
ICML 2018.  Each iteration calls the oracle on a random sample of the
domain's vertex candidates plus the active atoms, instead of on all of them;
the away step keeps the linear rate of away-step Frank-Wolfe on polytopes.
The sampled gap is no certificate, so every ``gap_every`` iterations a full
oracle call certifies the gap (and its vertex is used for the step).
"""

from __future__ import annotations

import numbers
from typing import Any, Unpack

import numpy as np

from .._numbers import check_whole
from .._random import as_generator
from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..lmo.subset import SubsetOracle
from ..objectives.base import Objective, Tracker
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import ActiveSetVariant, split_start
from .loop import run_frank_wolfe

__all__ = ["randomized_away_step_frank_wolfe"]


#: a fraction's sample may cost at most this many full oracle calls an iteration
_MAX_SAMPLE_CALLS = 64

#: the default ``subsample``: a tenth of the candidates, or of a full call's work
_DEFAULT_FRACTION = 0.1


def _check_subsample(subsample: Any) -> None:
    """Refuse a ``subsample`` that is neither None, a count >= 1 nor a fraction in (0, 1]."""
    if subsample is None:
        return
    if isinstance(subsample, (bool, np.bool_)) or not isinstance(subsample, numbers.Real):
        raise ValueError(
            f"`subsample` must be a count (int >= 1) or a fraction in (0, 1], got {subsample!r}"
        )
    if isinstance(subsample, (int, np.integer)):
        if subsample < 1:
            raise ValueError(f"`subsample` must be a count >= 1 or a fraction in (0, 1], "
                             f"got {subsample!r}")
        return
    if not (0.0 < float(subsample) <= 1.0):
        raise ValueError(
            f"`subsample` as a float is a fraction and must lie in (0, 1], got {subsample!r}"
        )


def _fraction_size(s: float, n: int, cand_cost: int, full_cost: int | None) -> int | None:
    """Candidates in a fraction ``s`` of the ``n``, or None where that sample would cost
    more than :data:`_MAX_SAMPLE_CALLS` full oracle calls."""
    size = max(1, min(n, int(np.ceil(s * n)))) if n <= 1 << 40 else None
    # a box's 2^k vertices (sampled candidates, each as dear as a full call): a fraction
    # of them made 1e5 full calls' work an iteration at k = 20, 27 GiB of draws at 30
    if size is None or (full_cost is not None
                        and size * cand_cost > _MAX_SAMPLE_CALLS * max(1, full_cost)):
        return None
    return size


def _sample_size(subsample: Any, n: int, cand_cost: int = 1, full_cost: int | None = None
                 ) -> int:
    """Number of candidates drawn per iteration from ``subsample`` (count, fraction of
    the ``n`` candidates, or None for the default; ``n`` may be a huge Python int for
    sampled vertex sets, each candidate costing ``cand_cost`` coordinates against
    ``full_cost`` for a full call)."""
    _check_subsample(subsample)
    if subsample is None:
        size = _fraction_size(_DEFAULT_FRACTION, n, cand_cost, full_cost)
        if size is not None:
            return size
        # the default must run on every domain, where a tenth of the vertices is refused
        # (a box past 9 coordinates, most k-sparse polytopes): a tenth of a full call's
        # work is what the default costs on the simplex, and keeps the draw small where
        # a vertex costs O(n) to draw (the k-sparse polytope with k^2 > n)
        per_call = max(1, full_cost if full_cost is not None else n)
        return int(min(n, max(1, -(-per_call // (10 * max(1, cand_cost))))))
    if isinstance(subsample, (int, np.integer)):
        return int(min(subsample, n))
    size = _fraction_size(float(subsample), n, cand_cost, full_cost)
    if size is None:
        raise ValueError(
            f"`subsample`={subsample!r} is a fraction of the {n:.3g} vertices of this domain, "
            f"far too many to sample a fraction of (more work an iteration than "
            f"{_MAX_SAMPLE_CALLS} full oracle calls); give a count (int) instead"
        )
    return size


class _RandomizedAway(ActiveSetVariant):
    name = "rafw"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 subsample: Any, gap_every: int, rng: np.random.Generator) -> None:
        super().__init__(warm, resum_every, sparsify_tol)
        self.gap_every = check_whole(gap_every, "gap_every", 1,
                                     "randomized_away_step_frank_wolfe")
        self.subsample = subsample
        self.rng = rng
        self.counts.update({"n_atom_products": 0, "n_coordinate_ops": 0,
                            "n_full_oracle_calls": 0, "n_subset_oracle_calls": 0})

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        if not isinstance(lmo, SubsetOracle):
            raise TypeError(
                f"randomized_away_step_frank_wolfe needs an LMO that can minimize over a subset "
                f"of its vertices (a frankwolfe.lmo.subset.SubsetOracle such as "
                f"ProbabilitySimplex, UnitSimplex, L1Ball, Box, LinfBall, Hypercube or "
                f"KSparsePolytope), got {lmo!r}"
            )
        super().start(tracker, x0_atom, lmo)
        self.subsets = lmo  # the same oracle, through its subset capability
        shape = tracker.x.shape
        self.n_cand = lmo.n_candidates(shape)
        # work is counted in coordinates read; a full call counts as the number of
        # candidate products it is worth (n for the simplex, 1 for the box's O(n) sign
        # pass, n/k for the k-sparse polytope's O(n) selection)
        self.cand_cost = int(lmo.candidate_cost(shape))
        self.full_cost = int(lmo.oracle_cost(shape))
        self.size = _sample_size(self.subsample, self.n_cand, self.cand_cost, self.full_cost)
        self.full_products = -(-self.full_cost // self.cand_cost)
        self._calls_seen = self.n_oracle_calls  # a start from an array costs one full call
        self._charge_full(self._calls_seen)
        self._scores: np.ndarray | None = None

    def _charge_full(self, calls: int) -> None:
        self.counts["n_full_oracle_calls"] += calls
        self.counts["n_atom_products"] += calls * self.full_products
        self.counts["n_coordinate_ops"] += calls * self.full_cost

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        S = self.active
        # the away query needs <g, a> for every active atom anyway: score them once
        scores = S.scores(gradient)
        self._scores = scores
        self.counts["n_atom_products"] += scores.size
        self.counts["n_coordinate_ops"] += scores.size * self.cand_cost
        if k % self.gap_every == 0:
            v = self.lmo(gradient)
            self.n_oracle_calls += 1
            self._calls_seen += 1
            self._charge_full(1)
            return v, g_dot_x - v.dot(gradient), True
        # candidates outside the active set (the sampling of the RAFW analysis); the
        # active atoms join through their scores
        cands = self.subsets.sample_candidates(tracker.x.shape, self.size, self.rng, S.atoms)
        m = self.subsets.count_candidates(cands)
        self.counts["n_subset_oracle_calls"] += 1
        j = int(np.argmin(scores))
        if m:
            v = self.subsets.extreme_point_among(gradient, cands)
            self.counts["n_atom_products"] += m
            self.counts["n_coordinate_ops"] += m * self.cand_cost
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
            extra["n_atom_products"] += late * self.full_products
            extra["n_coordinate_ops"] += late * self.full_cost
        return active, extra


@register("rafw")
@solver()
def randomized_away_step_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    subsample: int | float | None = None,
    gap_every: int = 20,
    random_state: int | np.random.Generator | None = None,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
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
    domain : LMO
        The domain; it must implement :class:`~frankwolfe.lmo.subset.SubsetOracle`
        (:class:`~frankwolfe.ProbabilitySimplex`, :class:`~frankwolfe.UnitSimplex`,
        :class:`~frankwolfe.L1Ball`; and with uniformly sampled vertices
        :class:`~frankwolfe.Box`, ``LinfBall``, ``Hypercube`` and
        ``KSparsePolytope``).
    x0 : Atom, ActiveSet or ndarray, optional
        As in :func:`~frankwolfe.away_step_frank_wolfe`.
    subsample : int, float or None, default None
        Candidates drawn per iteration: a count (int) or a fraction of the
        candidates (float in (0, 1]; for domains with indexable candidates, not
        for the ``2^n`` vertices of a box: a fraction whose sample would cost more
        than 64 full oracle calls an iteration is refused).  None, the default,
        is the fraction 0.1 where that is not refused (the simplices, the l1
        ball, boxes of at most 9 free coordinates, small k-sparse polytopes; the
        same draws as ``subsample=0.1``), and elsewhere the count worth a tenth
        of a full oracle call, at least 1: one vertex of a box,
        ``ceil(n / (10 k))`` vertices of the k-sparse polytope in ``R^n``.
    gap_every : int, default 20
        Period of the full oracle call.  Only those iterations report a
        (certified) gap, so the run can stop only there; the other rows of
        the history have ``gap = nan``.  A run stopped in between (iteration
        or time budget) is certified by one more full call.
    random_state : int, numpy.random.Generator or None, default None
        Randomness of the sampling (scikit-learn's convention): a seed for a
        reproducible run, a Generator to share, or None for fresh entropy.
    step_size : str or StepSize, optional
        As in :func:`~frankwolfe.frank_wolfe`.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        As for :func:`~frankwolfe.away_step_frank_wolfe`; ``extra`` also has
        ``n_atom_products`` (inner products ``<g, a>`` evaluated: sampled and
        active atoms, plus per full call the number of candidate products it
        is worth: ``n`` on the simplex and the l1 ball, 1 on a box, whose
        vertices are dense, ``ceil(n / k)`` on the k-sparse polytope),
        ``n_coordinate_ops`` (the same work in coordinates read: 1 per simplex
        candidate, ``n`` per box vertex, ``k`` per k-sparse vertex, ``n`` per
        full call), ``n_full_oracle_calls`` and ``n_subset_oracle_calls``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import (randomized_away_step_frank_wolfe, QuadraticObjective,
    ...                         ProbabilitySimplex)
    >>> y = np.array([0.8, 0.6, -0.2, -0.5])
    >>> f = QuadraticObjective(np.eye(4), -y)
    >>> res = randomized_away_step_frank_wolfe(f, ProbabilitySimplex(dim=4), subsample=2,
    ...                                        tol=1e-12, gap_every=5, random_state=0)
    >>> np.round(res.x, 6)
    array([0.6, 0.4, 0. , 0. ])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    rng = as_generator(random_state)
    _check_subsample(subsample)  # before any work
    warm, start = split_start(x0)
    variant = _RandomizedAway(warm, resum_every, sparsify_tol, subsample, gap_every, rng)
    return run_frank_wolfe(objective, domain, variant, start, step_size=step_size,
                           options=options)

"""Pairwise Frank-Wolfe with corrective rounds, compiled end to end, for least squares
over coordinate polytopes.

For ``f(x) = 1/2 ||A x - b||^2`` over the l1 ball (vertices ``+-r e_j``) or the
scaled probability simplex (vertices ``r e_j``), a vertex is one coordinate: a
pairwise step moves weight between two coordinates (its slope is two entries of
the gradient, its curvature two column norms and one inner product of columns of
``A``; the gradient follows by two Gram columns ``A^T A e_j``, sparse when ``A``
is), and the Gram matrix of the active face is small.  In Python, the
interpreter's overhead per step dominates such steps, so they run in numba, in
chunks: each outer iteration of the shared driver (:func:`~.engine.drive`, so
stopping, history, callback, budgets, the certificate and the result work as for
every method) runs up to ``chunk`` iterations, chosen so that a chunk takes a
few milliseconds; ``nit`` counts iterations.

An iteration (with ``corrective=True``, the default) is a corrective round: the
Frank-Wolfe vertex and the best inactive vertices (up to half the active set's
size) join the active set at weight 0, and the weights are then solved for
exactly on that face (a primal active-set method on the small quadratic over the
simplex of weights, Cholesky factors of its Gram matrix, vertices leaving when
their weight reaches 0; as fully corrective Frank-Wolfe, Lacoste-Julien and
Jaggi 2015, with several vertices per round).  When a round cannot decrease
``f`` it falls back to a pairwise step (away vertex to Frank-Wolfe vertex, exact
line search), which is also the iteration with ``corrective=False``.  The inner
products of columns are computed once per pair and kept; for a sparse ``A`` a new
column's products come from the rows it touches or from its image, whichever
reads fewer entries.

The active set is kept as weights over vertex indices; Gram columns of heavy
coordinates (whose product reads more than ``n / 8`` entries of ``A``, e.g.
every column of a dense ``A``) are cached as dense rows within
``cache_bytes``.  ``A x`` and the gradient follow the steps incrementally; they are
recomputed exactly every ``refresh_every`` iterations, after a round that moves many
heavy coordinates, before a stop on ``tol`` or ``rtol`` (a gap of the drifted gradient
there is a claim: the run goes on when the exact one misses) and once at the end, so
that ``fun``, ``gap`` and the dual bound of the result are exact at the point
returned.  The numba kernels are in :mod:`.compiled_pairwise_kernels`; this module
holds the engine the shared driver runs and the public function.
"""

from __future__ import annotations

import math
import time
from typing import Any, Unpack

import numpy as np

from .._numbers import check_whole
from ..active_set import ActiveSet
from ..atoms import Atom
from ..lmo.base import LMO
from ..lmo.norms import L1Ball
from ..lmo.simplex import ProbabilitySimplex
from ..monitor import Monitor
from ..objectives.atom_cache import DEFAULT_CACHE_BYTES
from ..objectives.base import Objective
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from .active_variant import DECOMPOSE_HINT, decomposed_start, split_start
from .compiled_pairwise_kernels import _FV, _IV, _run_chunk, _State, make_refs
from .engine import Engine, Observation, drive
from .loop import prepare_start

__all__ = ["compiled_pairwise_frank_wolfe", "supports_compiled_pairwise", "FACE_LIMIT"]

#: a chunk of steps aims at this many seconds, long next to the Python work between
#: chunks (benchmarks/README.md, "Measurements behind code choices")
_CHUNK_SECONDS = 2e-3
_CHUNK_MAX = 1 << 16
#: coordinates whose inner products are kept for the corrective steps (8 MB): a face
#: of more active vertices takes plain pairwise steps until it shrinks below it
FACE_LIMIT = 1024
_INT64_MAX = int(np.iinfo(np.int64).max)
# what a chunk recomputes before its steps (the kernel's `refresh`)
_NONE, _FROM_WEIGHTS, _AT_X = 0, 1, 2


def supports_compiled_pairwise(objective: Objective, domain: LMO) -> bool:
    """Whether :func:`compiled_pairwise_frank_wolfe` runs ``objective`` over ``domain``.

    Parameters
    ----------
    objective : Objective
        Supported when it has a compiled design (a ``compiled_design()`` method, e.g.
        :class:`~frankwolfe.LeastSquares`) and points of one dimension (``shape`` of
        length 1).
    domain : LMO
        Supported when it is an :class:`~frankwolfe.L1Ball` or a
        :class:`~frankwolfe.ProbabilitySimplex` whose shape is unset or the
        objective's.

    Returns
    -------
    bool
        True when both are supported; no error either way (a caller picks another
        method on False).
    """
    design = getattr(objective, "compiled_design", None)
    shape = getattr(objective, "shape", None)
    return (callable(design) and isinstance(domain, (L1Ball, ProbabilitySimplex))
            and shape is not None and len(shape) == 1
            and (domain.shape is None or tuple(domain.shape) == tuple(shape)))


class _CompiledPairwiseEngine(Engine):
    """An outer iteration is one chunk of compiled iterations."""

    times_itself = True  # chunks sized to the time left

    def __init__(self, DR: Any, S: _State, R: Any, signed: bool, radius: float,
                 monitor: Monitor, refresh_every: int, shape: tuple[int, ...],
                 corrective: bool) -> None:
        # Python reads the record S; the kernels take the references DR (the design) and R
        self.S, self.DR, self.R = S, DR, R
        self.signed, self.r = signed, radius
        # the monitor's tol is a float (an int tol=10**30 failed numba's typing)
        self.monitor, self.tol, self.max_iter = monitor, monitor.tol, monitor.max_iter
        self.refresh_every = refresh_every
        self.shape = shape
        self.chunk = 8
        self.per_step = 0.0  # seconds per step in the last chunk
        self.time_up = False  # the next step would end past the time budget
        self.since = 0
        self.gamma = np.nan
        self.stalled = False
        if not isinstance(corrective, (bool, np.bool_)):  # bool("no") is True
            raise ValueError(f"`corrective` must be True or False, got {corrective!r}")
        self.corrective = bool(corrective)
        self.counts = {"n_pairwise_steps": 0, "n_corrective_steps": 0, "n_refreshes": 0}
        self.step_seconds = 0.0  # wall time inside the chunks (the rest: the loop's)
        self.last: tuple[float, float] = (np.nan, np.inf)
        self.last_x: np.ndarray | None = None  # the last point with finite f and gap
        self.now = (np.nan, np.inf)  # f and the gap at the current point
        # whether self.now is exact at S.x (A x and g recomputed since the last move),
        # not from the incrementally updated A x and gradient
        self.exact = False
        # the largest f - gap over exact values: the dual bound (the drifted values of
        # the history's rows can overshoot f*)
        self.bound = -np.inf
        self.refresh_seconds = 0.0  # the last exact recomputation's wall time
        self._run(0, _FROM_WEIGHTS)  # x, A x and g from the weights
        if monitor.time_limit is not None:
            # timed without the first call's loading of the compiled kernels: the chunks
            # leave this much of the budget to the exact values at the end
            self._exact()
        self.counts["n_refreshes"] = 0  # counted from the first step on

    def _run(self, steps: int, refresh: int) -> tuple[int, int, float, int]:
        """Up to ``steps`` compiled iterations, after recomputing ``x``, ``A x`` and ``g``
        from the weights (``refresh`` :data:`_FROM_WEIGHTS`) or ``A x`` and ``g`` at ``x``
        (:data:`_AT_X`): ``(done, status, last step size, corrective rounds)``;
        ``self.now`` holds ``f`` and the gap at the point reached, ``self.exact`` whether
        they are exact there."""
        if refresh == _FROM_WEIGHTS:
            self.since = 0
        done, status, gamma, self.since, n_corr, n_ref, exact, f, gap = _run_chunk(
            self.DR, self.R, self.signed, self.r, self.tol, steps, self.refresh_every,
            self.since, self.corrective, refresh)
        self.counts["n_refreshes"] += int(n_ref)
        self.now = (float(f), float(gap))
        self.exact = bool(exact)
        if self.exact and f - gap > self.bound:
            self.bound = float(f - gap)
        return int(done), int(status), float(gamma), int(n_corr)

    def _exact(self) -> None:
        """Recompute ``A x`` and ``g`` at ``x``: ``self.now`` exact there (``x`` kept: the
        one rebuilt from the weights lies on a grid of the radius times the rounding
        unit)."""
        t0 = time.perf_counter()
        self._run(0, _AT_X)
        self.refresh_seconds = time.perf_counter() - t0

    def observe(self, k: int) -> Observation | str:
        S = self.S
        f, gap = self.now
        if not self.exact and np.isfinite(f) and np.isfinite(gap) \
                and self.monitor.converged(gap, f):
            # a stop on tol (the kernel checks that itself) or rtol is certified by exact
            # values; when they miss it the run goes on
            self._exact()
            f, gap = self.now
        if not (np.isfinite(f) and np.isfinite(gap)):
            keep = "no good iterate exists" if self.last_x is None else \
                "returning the last good iterate"
            return f"the objective's value or gradient is not finite at iteration {k}; {keep}"
        self.last = (f, gap)
        self.last_x = S.x
        if self.stalled and gap > self.tol:
            return (f"no pairwise direction descends at iteration {k} while the gap "
                    f"{gap:.3e} > tol {self.tol:.3e}: the gap is at the rounding floor of "
                    "<g, x>; a smaller tol cannot be certified")
        return Observation(f, gap, True, S.x, S.g, self.gamma, self.info(),
                           time_up=self.time_up)

    def advance(self, k: int, monitor: Monitor) -> int:
        self.last_x = self.S.x.copy()  # kept for the error path (O(n) per chunk)
        steps = int(min(self.chunk, max(self.max_iter - k, 1)))
        left = monitor.time_left()
        if left is not None and self.per_step > 0.0:
            left -= self.refresh_seconds  # the exact values at the end (closing)
            # the clock is read between chunks only: a chunk fits in the time left (a
            # step's cost grows with the active set, so its last measure is used); no
            # step starts that would end past the budget
            if left < self.per_step:
                self.time_up = True
                return 0
            steps = int(max(1, min(steps, left / self.per_step)))
        t0 = time.perf_counter()
        done, status, gamma, n_corr = self._run(steps, _NONE)
        self.counts["n_corrective_steps"] += n_corr
        elapsed = time.perf_counter() - t0
        self.step_seconds += elapsed
        self.counts["n_pairwise_steps"] += done - n_corr
        if done:
            self.gamma = gamma
        if status == 2 and not self.stalled:
            # the incremental gradient may have drifted: recompute once before giving up
            self._run(0, _FROM_WEIGHTS)
            self.stalled = done == 0
        elif status == 2:
            self.stalled = True
        if done:
            self.per_step = elapsed / done
            # chunks of about _CHUNK_SECONDS, growing at most twofold per chunk; a step
            # can cost far more than the last (corrective rounds on a growing face), so
            # they also shrink at once
            want = _CHUNK_SECONDS / max(self.per_step, 1e-9)
            self.chunk = int(max(1, min(_CHUNK_MAX, 2 * steps, want)))
        return max(done, 1) if status != 1 else done

    def certify(self, last: Observation) -> tuple[float, float]:
        return self.last

    def closing(self, fun: float, gap: float) -> tuple[float, float]:
        """Exact ``f`` and gap at the point returned: the chunks' values come from the
        incrementally updated ``A x`` and gradient (exact every ``refresh_every`` steps),
        whose drift the radius multiplies in the gap.  One recomputation of ``A x`` and
        ``g`` at ``x`` (``O(nnz(A))``, about one gradient) unless nothing moved since the
        last; the dual bound is set to the exact values' (the history's rows keep the
        loop's values)."""
        if not self.exact:
            self._exact()
            f, g = self.now
            if not (np.isfinite(f) and np.isfinite(g)):
                return fun, gap
            self.last = (f, g)
            fun, gap = f, g
        # the monitor's bound is the largest f - gap over the history's rows, drifted ones
        # included; the closing row (exact) is added to this one by the driver
        self.monitor.settle_dual_bound(self.bound)
        return fun, gap

    def info(self) -> dict[str, Any]:
        return {"active_set_size": int(self.S.n_active[0])}

    def active_set(self) -> ActiveSet:
        S, r = self.S, self.r
        k = int(S.n_active[0])
        atoms, weights = [], []
        for t in range(k):
            v = int(S.vid[t])
            if self.signed:
                j, s = v >> 1, 1 - 2 * (v & 1)
                atoms.append(Atom.sparse([j], [s * r], self.shape, key=("e", j, s)))
            else:
                atoms.append(Atom.sparse([v], [r], self.shape, key=("e", v)))
            weights.append(float(S.w[t]))
        w = np.asarray(weights)
        return ActiveSet(atoms, w / w.sum(), keep_x=False)

    def outputs(self, error: bool) -> dict[str, Any]:
        f, gap = self.now
        # stopped between chunks at an observed point (a callback raised, Ctrl-C by a
        # handler of the user's, a stall): its exact values, as closing()
        whole = error and not (self.cut_short or self.hurried) \
            and bool(np.isfinite(f) and np.isfinite(gap))
        if whole and not self.exact:
            self._exact()
        c = self.counts
        out: dict[str, Any] = dict(
            n_oracle_calls=c["n_pairwise_steps"] + c["n_corrective_steps"] + 1,
            n_gradient_calls=0, n_function_calls=0, active_set=self.active_set(),
            extra=dict(c, step_seconds=self.step_seconds),
            x=self.S.x.reshape(self.shape).copy())
        if error:
            out["fun"], out["gap"] = self.now if whole else self.last
            if not whole and self.last_x is not None:
                out["x"] = self.last_x.reshape(self.shape).copy()
            self.monitor.settle_dual_bound(self.bound)
        return out


def _vertex_id(atom: Atom, signed: bool, radius: float, n: int, where: str) -> int:
    idx, vals = atom.indices, atom.values
    if idx is not None and vals is not None and len(idx) == 1:
        j = int(idx[0])
        val = float(vals[0])
        if 0 <= j < n and abs(abs(val) - radius) <= 1e-12 * radius and (signed or val > 0):
            return 2 * j + (1 if val < 0 else 0) if signed else j
    raise ValueError(f"{where}: {atom.key!r} is not a vertex of the domain (a single "
                     f"coordinate of size radius={radius})")


def _radius(domain: LMO) -> float:
    """The radius of the coordinate polytope (what :func:`supports_compiled_pairwise`
    admits)."""
    if not isinstance(domain, (L1Ball, ProbabilitySimplex)):
        raise TypeError(f"compiled pairwise: needs an L1Ball or a ProbabilitySimplex, got "
                        f"{type(domain).__name__}")
    return float(domain.radius)


def _initial_state(objective: Any, domain: LMO, x0: Any, cache_bytes: int
                   ) -> tuple[Any, _State, Any]:
    """``(design reference, run state, its reference)`` with the start's weights (``x``,
    ``A x`` and ``g`` are computed by the engine's first call)."""
    n = int(objective.shape[0])
    signed = isinstance(domain, L1Ball)
    r = _radius(domain)
    warm, start = split_start(x0)
    x, atom = prepare_start(objective, domain, start)
    if warm is not None:
        pairs = [(_vertex_id(a, signed, r, n, "x0"), float(w))
                 for a, w in zip(warm.atoms, warm.weights)]
    elif atom is not None:
        pairs = [(_vertex_id(atom, signed, r, n, "x0"), 1.0)]
    else:
        v = domain(-x)
        # relative to the vertex (the one term of its combination), as the active-set
        # methods' drift checks are relative to their terms (ActiveSet.terms_scale)
        if np.linalg.norm(v.to_dense() - x) <= 1e-12 * math.sqrt(v.sq_norm()):
            pairs = [(_vertex_id(v, signed, r, n, "x0"), 1.0)]
        else:
            # the engine computes x from the weights: the decomposition's point is the start
            parts = decomposed_start(x, domain)
            if parts is None:
                raise ValueError("x0: the compiled pairwise method needs its start as a "
                                 "vertex or an ActiveSet of vertices; pass x0=None, an Atom "
                                 f"or an ActiveSet.  {DECOMPOSE_HINT}")
            pairs = [(_vertex_id(a, signed, r, n, "x0"), float(w)) for a, w in parts]
    D = objective.compiled_design()
    nv = 2 * n if signed else n
    cap = int(min(n, max(0, cache_bytes) // (8 * n)))
    kmax = int(min(nv, FACE_LIMIT))
    S = _State(np.zeros(n), np.zeros(n), np.zeros(D.m), np.zeros(nv, dtype=np.int64),
               np.zeros(nv), np.full(nv, -1, dtype=np.int64), np.zeros(1, dtype=np.int64),
               np.full(n, -1, dtype=np.int64), np.empty((cap, n)), np.zeros(1, dtype=np.int64),
               max(1, n // 8), np.full(n, -1, dtype=np.int64), np.zeros(kmax, dtype=np.int64),
               np.zeros(1, dtype=np.int64), np.empty((kmax, kmax)),
               np.empty((_FV, kmax)), np.empty((_IV, kmax), dtype=np.int64),
               np.empty((2, kmax, kmax)), np.empty(nv, dtype=np.int64),
               np.empty(n, dtype=np.bool_), np.empty(D.m))
    for vid, w in pairs:  # as the kernels' _activate (once per run: no kernel for it)
        t = int(S.slot[vid])
        if t < 0:
            t = int(S.n_active[0])
            S.vid[t], S.w[t], S.slot[vid] = vid, 0.0, t
            S.n_active[0] = t + 1
        S.w[t] += w
    DR, R = make_refs(D, S)
    return DR, S, R


@register("compiled_pairwise")
@solver()
def compiled_pairwise_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    corrective: bool = True,
    refresh_every: int = 1000,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
    **run: Unpack[RunKeywords],
) -> Result:
    """Pairwise Frank-Wolfe with corrective rounds, compiled end to end.

    Each iteration brings the Frank-Wolfe vertex and the next best inactive
    vertices into the active set and solves for the weights exactly on that face
    (fully corrective, several vertices per round), falling back to a pairwise
    step of :func:`~frankwolfe.pairwise_frank_wolfe` (away vertex to Frank-Wolfe
    vertex, exact line search) when a round cannot decrease ``f``; for a
    least-squares objective with a compiled design (:class:`~frankwolfe.LeastSquares`,
    dense or scipy.sparse ``A``, vector points) over an :class:`~frankwolfe.L1Ball`
    or a :class:`~frankwolfe.ProbabilitySimplex`: the steps run in numba, a chunk
    of them per outer iteration, so a step costs the rows of ``A`` its two
    coordinates touch instead of the interpreter's overhead.  Stopping,
    budgets, history and callback are the shared driver's, checked between
    chunks; the gap is certified at each check.

    Parameters
    ----------
    objective : Objective
        An objective with ``compiled_design()`` (see
        :func:`supports_compiled_pairwise`).
    domain : L1Ball or ProbabilitySimplex
    x0 : Atom, ActiveSet or ndarray, optional
        A vertex, any point of the domain (decomposed into vertices by
        :meth:`~frankwolfe.LMO.decompose`), or an ActiveSet of vertices (a warm start,
        copied).  Default: the domain's initial vertex.
    corrective : bool, default True
        Iterate by corrective rounds (see below); ``False``: plain pairwise steps.
    refresh_every : int, default 1000
        Recompute ``x`` (from the weights), ``A x`` and the gradient exactly after this
        many iterations; they are also recomputed (at ``x``) before a stop on the gap
        and at the end, so the certificate never rests on the drifted ones.
    cache_bytes : int, default 256 MB
        Memory for cached Gram columns ``A^T A e_j`` (``8 n`` bytes each).

    Returns
    -------
    Result
        ``nit`` counts iterations (rounds and pairwise steps); ``active_set`` the
        final signed support; ``extra`` has ``n_corrective_steps``,
        ``n_pairwise_steps``, ``n_refreshes`` (the exact recomputations of ``A x`` and
        the gradient after the start: every ``refresh_every`` iterations, after rounds
        that move many heavy coordinates, before a stop on the gap, on a stall and at
        the end) and ``step_seconds`` (wall time inside the chunks of compiled
        iterations); ``fun``, ``gap`` and ``dual_bound`` come from exact values at the
        points they name (a run cut short inside a chunk, by a second Ctrl-C or an
        error, returns the point before that chunk with the values the loop had for it;
        its ``dual_bound`` is still exact); the history has one row per chunk, with
        ``active_set_size``, and the loop's values (``A x`` and the gradient as updated
        step by step).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import LeastSquares, L1Ball, compiled_pairwise_frank_wolfe
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> f = LeastSquares(A, A @ [1.0, -0.5])
    >>> res = compiled_pairwise_frank_wolfe(f, L1Ball(1.5, dim=2), tol=1e-12)
    >>> np.round(res.x, 6)
    array([ 1. , -0.5])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    if not supports_compiled_pairwise(objective, domain):
        raise TypeError(
            f"compiled_pairwise_frank_wolfe: needs an objective with compiled_design() on "
            f"vector points over an L1Ball or ProbabilitySimplex of the same dimension, got "
            f"{type(objective).__name__} over {domain!r}")
    where = "compiled_pairwise_frank_wolfe"
    # the kernels take int64: 10**30 (never) is the int64 maximum, as numba cannot type it
    refresh = min(check_whole(refresh_every, "refresh_every", 1, where), _INT64_MAX)
    cache = check_whole(cache_bytes, "cache_bytes", 0, where)
    monitor = options.monitor("compiled_pairwise")  # checks the run keywords
    DR, S, R = _initial_state(objective, domain, x0, cache)
    engine = _CompiledPairwiseEngine(DR, S, R, isinstance(domain, L1Ball), _radius(domain),
                                     monitor, refresh, (int(S.x.size),), corrective)
    return drive(engine, monitor)

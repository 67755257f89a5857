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
``cache_bytes``.  ``A x`` and the gradient are recomputed exactly every
``refresh_every`` pairwise steps and after a round that moves many heavy
coordinates.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ..active_set import ActiveSet
from ..atoms import Atom
from ..errors import ShapeError
from ..lmo.base import LMO
from ..lmo.norms import L1Ball
from ..lmo.simplex import ProbabilitySimplex
from ..monitor import Monitor
from ..objectives.atom_cache import DEFAULT_CACHE_BYTES
from ..objectives.base import Objective
from ..objectives.design_kernels import (
    add_column,
    add_gram_column,
    column_dot,
    column_sq_norm,
    column_work,
    exact_products,
    extend_gram,
    gram_column,
    half_sq_residual,
)
from ..options import RunOptions, solver
from ..registry import register
from ..result import Result
from .active_variant import split_start
from .engine import Engine, Observation, drive
from .loop import prepare_start

__all__ = ["compiled_pairwise_frank_wolfe", "supports_compiled_pairwise"]

#: a chunk of steps aims at this many seconds (the Python work between chunks is ~50 us)
_CHUNK_SECONDS = 2e-3
_CHUNK_MAX = 1 << 16
#: coordinates whose inner products are kept for the corrective steps (8 MB)
_TRACK_MAX = 1024
#: a corrective round brings in up to ``1 / _GROW`` of the active set as new vertices
_GROW = 2


class _State(NamedTuple):
    """The run's arrays in numba.  Vertex ``v``: coordinate ``v >> 1`` with sign
    ``1 - 2 (v & 1)`` on the l1 ball, coordinate ``v`` with sign ``+1`` on the simplex."""

    x: np.ndarray  # (n,)
    g: np.ndarray  # (n,) gradient
    p: np.ndarray  # (m,) A x
    vid: np.ndarray  # (nv,) active vertices in slots [0, count)
    w: np.ndarray  # (nv,) their weights
    slot: np.ndarray  # (nv,) slot of a vertex, -1 when inactive
    count: np.ndarray  # (1,)
    gslot: np.ndarray  # (n,) row of `pool` holding A^T A e_j, -1 when not cached
    pool: np.ndarray  # (cap, n)
    pcount: np.ndarray  # (1,)
    heavy: int  # cache Gram columns whose product reads at least this many entries
    gpos: np.ndarray  # (n,) row of `gmat` of coordinate j, -1 when not tracked
    gj: np.ndarray  # (kmax,) tracked coordinates
    gcount: np.ndarray  # (1,)
    gmat: np.ndarray  # (kmax, kmax) <A e_i, A e_j> of tracked coordinates


@njit(cache=True, nogil=True)
def _coord(signed, v):  # pragma: no cover - compiled
    if signed:
        return v >> 1, 1.0 - 2.0 * (v & 1)
    return v, 1.0


@njit(cache=True, nogil=True)
def _scan(S, signed, r):  # pragma: no cover - compiled
    """``(<g, x>, slot of the away vertex, its score)`` over the active set."""
    gx = 0.0
    best = -np.inf
    ia = 0
    for t in range(S.count[0]):
        j, s = _coord(signed, S.vid[t])
        score = r * s * S.g[j]
        gx += S.w[t] * score
        if score > best:
            best = score
            ia = t
    return gx, ia, best


@njit(cache=True, nogil=True)
def _fw_vertex(g, signed, r):  # pragma: no cover - compiled
    """``(vertex, score)`` minimizing ``<g, v>`` (the linear oracle)."""
    n = g.shape[0]
    if signed:
        # the largest |g_j| first (a reduction numba vectorizes), then its first index
        best = 0.0
        for j in range(n):
            best = max(best, abs(g[j]))
        jb = 0
        for j in range(n):
            if abs(g[j]) == best:
                jb = j
                break
        # -sign(g_j) r e_j; +r e_j for g_j = 0 (as L1Ball)
        return 2 * jb + (1 if g[jb] > 0.0 else 0), -r * best
    best = np.inf
    for j in range(n):
        best = min(best, g[j])
    jb = 0
    for j in range(n):
        if g[j] == best:
            jb = j
            break
    return jb, r * best


@njit(cache=True, nogil=True)
def _gap(S, signed, r):  # pragma: no cover - compiled
    gx, ia, sa = _scan(S, signed, r)
    v, sv = _fw_vertex(S.g, signed, r)
    return gx - sv


@njit(cache=True, nogil=True)
def _cached_gram(D, S, j):  # pragma: no cover - compiled
    """The pool row of ``A^T A e_j``, computed now if the column is heavy and room is
    left; -1 when the column is not cached."""
    t = S.gslot[j]
    if t >= 0:
        return t
    if S.pcount[0] >= S.pool.shape[0] or column_work(D, j) < S.heavy:
        return -1
    t = S.pcount[0]
    gram_column(D, j, S.pool[t])
    S.gslot[j] = t
    S.pcount[0] = t + 1
    return t


@njit(cache=True, nogil=True)
def _add_hess(D, S, j, c):  # pragma: no cover - compiled
    """``g += c A^T A e_j``."""
    t = _cached_gram(D, S, j)
    if t < 0:
        add_gram_column(D, j, c, S.g)
        return
    row = S.pool[t]
    g = S.g
    for k in range(g.shape[0]):
        g[k] += c * row[k]


@njit(cache=True, nogil=True)
def _sq_norm(D, S, j):  # pragma: no cover - compiled
    t = S.gslot[j]
    return S.pool[t, j] if t >= 0 else column_sq_norm(D, j)


@njit(cache=True, nogil=True)
def _cross(D, S, i, j):  # pragma: no cover - compiled
    t = S.gslot[i]
    if t >= 0:
        return S.pool[t, j]
    t = S.gslot[j]
    if t >= 0:
        return S.pool[t, i]
    return column_dot(D, i, j)


@njit(cache=True, nogil=True)
def _activate(S, v):  # pragma: no cover - compiled
    t = S.slot[v]
    if t < 0:
        t = S.count[0]
        S.vid[t] = v
        S.w[t] = 0.0
        S.slot[v] = t
        S.count[0] = t + 1
    return t


@njit(cache=True, nogil=True)
def _drop(S, t):  # pragma: no cover - compiled
    last = S.count[0] - 1
    v = S.vid[t]
    lv = S.vid[last]
    S.vid[t] = lv
    S.w[t] = S.w[last]
    S.slot[lv] = t
    S.slot[v] = -1
    S.count[0] = last


@njit(cache=True, nogil=True)
def _drop_zeros(S):  # pragma: no cover - compiled
    for t in range(S.count[0] - 1, -1, -1):
        if S.w[t] <= 0.0:
            _drop(S, t)


@njit(cache=True, nogil=True)
def _refresh(D, S, signed, r):  # pragma: no cover - compiled
    """Renormalize the weights and recompute ``x``, ``A x`` and ``g`` from them."""
    k = S.count[0]
    total = 0.0
    for t in range(k):
        total += S.w[t]
    support = np.empty(k, dtype=np.int64)
    S.x[:] = 0.0
    for t in range(k):
        S.w[t] /= total
        j, s = _coord(signed, S.vid[t])
        support[t] = j
        S.x[j] += r * s * S.w[t]
    exact_products(D, S.x, support, k, S.p, S.g)


@njit(cache=True, nogil=True)
def _cholesky_solve(L, k, rhs):  # pragma: no cover - compiled
    """Solve ``L L^T y = rhs`` (``L`` lower triangular, ``k x k``)."""
    y = rhs.copy()
    for i in range(k):
        t = y[i]
        for j in range(i):
            t -= L[i, j] * y[j]
        y[i] = t / L[i, i]
    for i in range(k - 1, -1, -1):
        t = y[i]
        for j in range(i + 1, k):
            t -= L[j, i] * y[j]
        y[i] = t / L[i, i]
    return y


@njit(cache=True, nogil=True)
def _cholesky(M, k, ridge):  # pragma: no cover - compiled
    """Lower factor of ``M + ridge I`` (LAPACK); ``ok`` false when it is not positive
    definite."""
    for i in range(k):
        M[i, i] += ridge
    try:
        return np.linalg.cholesky(M), True
    except Exception:  # not positive definite: the caller keeps its weights
        return M, False


@njit(cache=True, nogil=True)
def _face_minimizer(Q, s, w):  # pragma: no cover - compiled
    """Weights ``w + delta`` minimizing ``s.delta + 1/2 delta^T Q delta`` over the face of the
    simplex spanned by ``w``'s support (a primal active-set method: each round solves
    the equality-constrained problem on the current support, moves towards its solution
    as far as the weights stay non-negative and drops the weight that hits 0).
    ``s`` (the scores ``<g, v>``) is updated to the new point.  Returns the change of
    the model (<= 0)."""
    k = w.shape[0]
    alive = np.ones(k, dtype=np.bool_)
    change = 0.0
    scale = 0.0
    for i in range(k):
        scale = max(scale, Q[i, i])
    ridge = 1e-12 * scale + 1e-300
    for _ in range(2 * k):
        sub = np.flatnonzero(alive)
        kk = sub.shape[0]
        if kk < 2:
            break
        M = np.empty((kk, kk))
        for a in range(kk):
            for b in range(kk):
                M[a, b] = Q[sub[a], sub[b]]
        L, ok = _cholesky(M, kk, ridge)
        if not ok:
            break
        ss = np.empty(kk)
        for a in range(kk):
            ss[a] = s[sub[a]]
        z1 = _cholesky_solve(L, kk, ss)
        z2 = _cholesky_solve(L, kk, np.ones(kk))
        mu = -z1.sum() / z2.sum()
        delta = -(z1 + mu * z2)
        # vertices that came in at weight 0 and would go negative leave at once
        blocked = False
        for a in range(kk):
            if delta[a] < 0.0 and w[sub[a]] == 0.0:
                alive[sub[a]] = False
                blocked = True
        if blocked:
            continue
        t = 1.0
        hit = -1
        for a in range(kk):
            if delta[a] < 0.0 and w[sub[a]] < -t * delta[a]:
                t = w[sub[a]] / -delta[a]
                hit = a
        # model change along t delta, from the scores before the move
        slope = 0.0
        for a in range(kk):
            slope += ss[a] * delta[a]
        Qd = np.zeros(k)
        for a in range(kk):
            da = delta[a]
            if da != 0.0:
                for i in range(k):
                    Qd[i] += Q[i, sub[a]] * da
        curv = 0.0
        for a in range(kk):
            curv += delta[a] * Qd[sub[a]]
        step = t * slope + 0.5 * t * t * curv
        if not step < 0.0:
            break
        change += step
        for a in range(kk):
            w[sub[a]] += t * delta[a]
        for i in range(k):
            s[i] += t * Qd[i]
        if hit < 0:
            break
        w[sub[hit]] = 0.0
        alive[sub[hit]] = False
    return change


@njit(cache=True, nogil=True)
def _track(D, S, js):  # pragma: no cover - compiled
    """Rows of ``gmat`` of the coordinates ``js``: coordinates met for the first time get
    their inner products with every tracked one (so a face's Gram matrix costs each pair
    once per run): from their cached Gram columns for a dense ``A``, from the rows their
    columns touch for a sparse ``A``.  When ``gmat`` is full the tracking starts over."""
    k = js.shape[0]
    new = 0
    for u in range(k):
        if S.gpos[js[u]] < 0:
            new += 1
    if S.gcount[0] + new > S.gj.shape[0]:
        for t in range(S.gcount[0]):
            S.gpos[S.gj[t]] = -1
        S.gcount[0] = 0
    first_new = S.gcount[0]
    pos = np.empty(k, dtype=np.int64)
    for u in range(k):
        j = js[u]
        t = S.gpos[j]
        if t < 0:
            t = S.gcount[0]
            S.gj[t] = j
            S.gpos[j] = t
            S.gcount[0] = t + 1
            if D.dense:  # from the cached Gram column
                h = _cached_gram(D, S, j)
                for q in range(t):
                    jq = S.gj[q]
                    val = S.pool[h, jq] if h >= 0 else column_dot(D, j, jq)
                    S.gmat[t, q] = S.gmat[q, t] = val
                S.gmat[t, t] = S.pool[h, j] if h >= 0 else column_sq_norm(D, j)
        pos[u] = t
    if not D.dense:  # from the rows the new columns touch
        extend_gram(D, S.gj, S.gpos, first_new, S.gcount[0], S.gmat)
    return pos


@njit(cache=True, nogil=True)
def _face_gram(D, S, js):  # pragma: no cover - compiled
    """``<A e_i, A e_j>`` over the coordinates ``js`` (repeats allowed), from the tracked
    products (see ``_track``)."""
    k = js.shape[0]
    Q = np.empty((k, k))
    pos = _track(D, S, js)
    for u in range(k):
        for v in range(k):
            Q[u, v] = S.gmat[pos[u], pos[v]]
    return Q


@njit(cache=True, nogil=True)
def _bring_in(S, signed, r, v, gx, q):  # pragma: no cover - compiled
    """Activate ``v`` and the ``q - 1`` inactive vertices of lowest score below ``<g, x>``
    (at weight 0: ``x`` does not move)."""
    _activate(S, v)
    if q <= 1:
        return
    # the q - 1 best in one pass, kept in a small sorted buffer (scores ascending)
    top = np.full(q - 1, np.inf)
    ids = np.full(q - 1, -1, dtype=np.int64)
    g = S.g
    for j in range(g.shape[0]):
        if signed:
            u = 2 * j + (1 if g[j] > 0.0 else 0)
            sc = -r * abs(g[j])
        else:
            u = j
            sc = r * g[j]
        if sc < top[q - 2] and sc < gx and S.slot[u] < 0:
            t = q - 2
            while t > 0 and top[t - 1] > sc:
                top[t] = top[t - 1]
                ids[t] = ids[t - 1]
                t -= 1
            top[t] = sc
            ids[t] = u
    for t in range(q - 1):
        if ids[t] >= 0:
            _activate(S, ids[t])


@njit(cache=True, nogil=True)
def _corrective(D, S, signed, r):  # pragma: no cover - compiled
    """Minimize exactly over the face of the active vertices (see ``_face_minimizer``) and
    move ``x``, ``A x`` and ``g`` there; returns the change of ``f``."""
    k = S.count[0]
    if k > S.gj.shape[0]:  # a face larger than the tracked products: no round
        _drop_zeros(S)
        return 0.0
    js = np.empty(k, dtype=np.int64)
    sg = np.empty(k)
    for u in range(k):
        js[u], sg[u] = _coord(signed, S.vid[u])
    Q = _face_gram(D, S, js)
    for u in range(k):
        for v in range(k):
            Q[u, v] *= r * r * sg[u] * sg[v]
    s = np.empty(k)
    for u in range(k):
        s[u] = r * sg[u] * S.g[js[u]]
    w = S.w[:k].copy()
    change = _face_minimizer(Q, s, w)
    if not change < 0.0:  # the vertices brought in at weight 0 leave again
        _drop_zeros(S)
        return 0.0
    # x, A x and g follow the change of the weights: by Gram columns when that reads
    # fewer entries than recomputing A^T (A x - b)
    full = D.m * D.n if D.dense else D.cp[D.n] + D.n
    cost = 0
    for u in range(k):
        if w[u] != S.w[u]:
            cost += D.n if S.gslot[js[u]] >= 0 else column_work(D, js[u])
    for u in range(k):
        dw = w[u] - S.w[u]
        S.w[u] = w[u]
        if dw != 0.0 and cost < full:
            c = r * sg[u] * dw
            S.x[js[u]] += c
            add_column(D, js[u], c, S.p)
            _add_hess(D, S, js[u], c)
    _drop_zeros(S)
    if cost >= full:
        _refresh(D, S, signed, r)
    return change


@njit(cache=True, nogil=True)
def _run_chunk(D, S, signed, r, tol, steps, refresh_every, since, corrective):  # pragma: no cover
    """Up to ``steps`` iterations: corrective rounds (``corrective``) or pairwise steps
    with exact line search.

    Returns ``(iterations done, status, last step size, steps since the last refresh,
    corrective rounds)``;
    status 0: all steps done, 1: the Frank-Wolfe gap reached ``tol``, 2: no pair
    with a negative slope while the gap is above ``tol`` (rounding floor).
    """
    done = 0
    status = 0
    n_corr = 0
    gamma = np.nan
    while done < steps:
        gx, ia, sa = _scan(S, signed, r)
        v, sv = _fw_vertex(S.g, signed, r)
        if gx - sv <= tol:
            status = 1
            break
        if corrective:
            # a corrective round: the oracle's vertex and the next best inactive ones come
            # in at weight 0, then the weights are solved for exactly on the face
            room = S.gj.shape[0] - S.count[0]  # the face must fit the tracked products
            _bring_in(S, signed, r, v, gx, max(1, min(S.count[0] // _GROW, room)))
            if _corrective(D, S, signed, r) < 0.0:
                done += 1
                n_corr += 1
                since += 1
                continue
            # no progress on the face: a pairwise step (v may have left, bring it back)
            _activate(S, v)
            gx, ia, sa = _scan(S, signed, r)
        a = S.vid[ia]
        # the slope of d = v - a from the two entries of g it touches (no <g, x>)
        slope = sv - sa
        if a == v or not slope < 0.0:
            status = 2
            break
        jv, s_v = _coord(signed, v)
        ja, s_a = _coord(signed, a)
        cv = r * s_v
        ca = -r * s_a
        if jv == ja:  # mass between +r e_j and -r e_j
            curv = (cv + ca) ** 2 * _sq_norm(D, S, jv)
        else:
            curv = (cv * cv * _sq_norm(D, S, jv) + ca * ca * _sq_norm(D, S, ja)
                    + 2.0 * cv * ca * _cross(D, S, jv, ja))
        gmax = S.w[ia]
        gamma = gmax
        if curv > 0.0 and -slope < gmax * curv:
            gamma = -slope / curv
        # move x, A x and g
        if jv == ja:
            S.x[jv] += gamma * (cv + ca)
            add_column(D, jv, gamma * (cv + ca), S.p)
            _add_hess(D, S, jv, gamma * (cv + ca))
        else:
            S.x[jv] += gamma * cv
            S.x[ja] += gamma * ca
            add_column(D, jv, gamma * cv, S.p)
            add_column(D, ja, gamma * ca, S.p)
            _add_hess(D, S, jv, gamma * cv)
            _add_hess(D, S, ja, gamma * ca)
        # move the weight
        tv = _activate(S, v)
        S.w[tv] += gamma
        if gamma >= gmax:
            _drop(S, S.slot[a])
        else:
            S.w[S.slot[a]] -= gamma
        done += 1
        since += 1
        if since >= refresh_every:
            _refresh(D, S, signed, r)
            since = 0
    return done, status, gamma, since, n_corr


def supports_compiled_pairwise(objective: Objective, domain: LMO) -> bool:
    """Whether :func:`compiled_pairwise_frank_wolfe` runs ``objective`` over ``domain``:
    an objective with a compiled design (``compiled_design()``, e.g.
    :class:`~frankwolfe.LeastSquares` on vector points) over an
    :class:`~frankwolfe.L1Ball` or a :class:`~frankwolfe.ProbabilitySimplex`."""
    design = getattr(objective, "compiled_design", None)
    shape = getattr(objective, "shape", None)
    return (callable(design) and isinstance(domain, (L1Ball, ProbabilitySimplex))
            and shape is not None and len(shape) == 1
            and (domain.shape is None or tuple(domain.shape) == tuple(shape)))


class _CompiledPairwiseEngine(Engine):
    """An outer iteration is one chunk of compiled iterations."""

    def __init__(self, D: Any, S: _State, signed: bool, radius: float, tol: float,
                 refresh_every: int, max_iter: int, shape: tuple[int, ...],
                 corrective: bool) -> None:
        self.D, self.S = D, S
        self.signed, self.r = signed, radius
        self.tol, self.refresh_every, self.max_iter = tol, refresh_every, max_iter
        self.shape = shape
        self.chunk = 8
        self.since = 0
        self.gamma = np.nan
        self.stalled = False
        self.corrective = bool(corrective)
        self.counts = {"n_pairwise_steps": 0, "n_corrective_steps": 0, "n_refreshes": 0}
        self.last: tuple[float, float] = (np.nan, np.inf)
        self.last_x: np.ndarray | None = None  # the last point with finite f and gap

    def observe(self, k: int) -> Observation | str:
        S = self.S
        f = float(half_sq_residual(self.D, S.p))
        gap = float(_gap(S, self.signed, self.r))
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
        return Observation(f, gap, True, S.x, S.g, self.gamma, self.info())

    def advance(self, k: int, monitor: Monitor) -> int:
        self.last_x = self.S.x.copy()  # kept for the error path (O(n) per chunk)
        steps = int(min(self.chunk, max(self.max_iter - k, 1)))
        t0 = time.perf_counter()
        done, status, gamma, self.since, n_corr = _run_chunk(
            self.D, self.S, self.signed, self.r, self.tol, steps, self.refresh_every,
            self.since, self.corrective)
        self.counts["n_corrective_steps"] += int(n_corr)
        elapsed = time.perf_counter() - t0
        self.counts["n_pairwise_steps"] += int(done - n_corr)
        if done:
            self.gamma = float(gamma)
        if status == 2 and not self.stalled:
            # the incremental gradient may have drifted: recompute once before giving up
            _refresh(self.D, self.S, self.signed, self.r)
            self.since = 0
            self.counts["n_refreshes"] += 1
            self.stalled = done == 0
        elif status == 2:
            self.stalled = True
        if status == 0 and done == steps and elapsed < _CHUNK_SECONDS and self.chunk < _CHUNK_MAX:
            self.chunk *= 2
        return max(int(done), 1) if status != 1 else int(done)

    def certify(self, last: Observation) -> tuple[float, float]:
        return self.last

    def info(self) -> dict[str, Any]:
        return {"active_set_size": int(self.S.count[0])}

    def active_set(self) -> ActiveSet:
        S, r = self.S, self.r
        k = int(S.count[0])
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
        c = self.counts
        out: dict[str, Any] = dict(
            n_oracle_calls=c["n_pairwise_steps"] + c["n_corrective_steps"] + 1,
            n_gradient_calls=0, n_function_calls=0, active_set=self.active_set(),
            extra=dict(c), x=self.S.x.reshape(self.shape).copy())
        if error:
            out["fun"], out["gap"] = self.last
            if self.last_x is not None:
                out["x"] = self.last_x.reshape(self.shape).copy()
        return out


def _vertex_id(atom: Atom, signed: bool, radius: float, n: int, where: str) -> int:
    if atom.is_sparse and len(atom.indices) == 1:
        j = int(atom.indices[0])
        val = float(atom.values[0])
        if 0 <= j < n and abs(abs(val) - radius) <= 1e-12 * radius and (signed or val > 0):
            return 2 * j + (1 if val < 0 else 0) if signed else j
    raise ValueError(f"{where}: {atom.key!r} is not a vertex of the domain (a single "
                     f"coordinate of size radius={radius})")


def _initial_state(objective: Any, domain: LMO, x0: Any, cache_bytes: int) -> tuple[Any, _State]:
    n = int(objective.shape[0])
    signed = isinstance(domain, L1Ball)
    r = float(domain.radius)
    warm, start = split_start(x0)
    x, atom = prepare_start(objective, domain, start)
    if warm is not None:
        pairs = [(_vertex_id(a, signed, r, n, "x0"), float(w))
                 for a, w in zip(warm.atoms, warm.weights)]
    elif atom is not None:
        pairs = [(_vertex_id(atom, signed, r, n, "x0"), 1.0)]
    else:
        v = domain(-x)
        if np.linalg.norm(v.to_dense() - x) > 1e-12 * max(1.0, float(np.linalg.norm(x))):
            raise ValueError("x0: the compiled pairwise method needs its start as a vertex or "
                             "an ActiveSet of vertices; pass x0=None, an Atom or an ActiveSet")
        pairs = [(_vertex_id(v, signed, r, n, "x0"), 1.0)]
    D = objective.compiled_design()
    nv = 2 * n if signed else n
    cap = int(min(n, max(0, cache_bytes) // (8 * n)))
    kmax = int(min(nv, _TRACK_MAX))
    S = _State(np.zeros(n), np.zeros(n), np.zeros(D.m), np.zeros(nv, dtype=np.int64),
               np.zeros(nv), np.full(nv, -1, dtype=np.int64), np.zeros(1, dtype=np.int64),
               np.full(n, -1, dtype=np.int64), np.empty((cap, n)), np.zeros(1, dtype=np.int64),
               max(1, n // 8), np.full(n, -1, dtype=np.int64), np.zeros(kmax, dtype=np.int64),
               np.zeros(1, dtype=np.int64), np.empty((kmax, kmax)))
    for v, w in pairs:
        S.w[_activate(S, v)] += w
    _refresh(D, S, signed, r)
    return D, S


@register("compiled_pairwise")
@solver()
def compiled_pairwise_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    options: RunOptions,
    corrective: bool = True,
    refresh_every: int = 1000,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
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
        A vertex, or an ActiveSet of vertices (a warm start, copied).
        Default: the domain's initial vertex.
    corrective : bool, default True
        Iterate by corrective rounds (see below); ``False``: plain pairwise steps.
    refresh_every : int, default 1000
        Recompute ``A x`` and the gradient exactly after this many steps.
    cache_bytes : int, default 256 MB
        Memory for cached Gram columns ``A^T A e_j`` (``8 n`` bytes each).

    Returns
    -------
    Result
        ``nit`` counts iterations (rounds and pairwise steps); ``active_set`` the final signed support;
        ``extra`` has ``n_corrective_steps``, ``n_pairwise_steps`` and
        ``n_refreshes``; the history has
        one row per chunk, with ``active_set_size``.

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
    if not supports_compiled_pairwise(objective, domain):
        raise TypeError(
            f"compiled_pairwise_frank_wolfe: needs an objective with compiled_design() on "
            f"vector points over an L1Ball or ProbabilitySimplex of the same dimension, got "
            f"{type(objective).__name__} over {domain!r}")
    if int(refresh_every) != refresh_every or refresh_every < 1:
        raise ValueError(f"`refresh_every` must be a positive integer, got {refresh_every!r}")
    if not (int(cache_bytes) == cache_bytes and cache_bytes >= 0):
        raise ValueError(f"`cache_bytes` must be a non-negative integer, got {cache_bytes!r}")
    monitor = options.monitor("compiled_pairwise")
    D, S = _initial_state(objective, domain, x0, int(cache_bytes))
    engine = _CompiledPairwiseEngine(D, S, isinstance(domain, L1Ball), float(domain.radius),
                                     options.tol, int(refresh_every), options.max_iter,
                                     tuple(objective.shape), corrective)
    return drive(engine, monitor)

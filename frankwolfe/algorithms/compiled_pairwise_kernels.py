"""The numba kernels of compiled pairwise Frank-Wolfe (:mod:`.compiled_pairwise`): the
run's typed state, the oracle and gap over coordinate vertices, the Gram columns and
products of the active coordinates, the exact minimum over the active face (primal
active-set method with Cholesky factors) and the chunk of iterations the engine runs.
Python calls two of them, ``make_refs`` and ``_run_chunk``; the others are compiled
without a Python entry (``inner_kernel``: each entry costs compile time), for kernels
only.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.experimental import structref

from ..compiled.inner import inner_kernel
from ..compiled.records import RecordRefType
from ..objectives.design_kernels import (
    add_column,
    add_gram_column,
    column_dot,
    column_work,
    design_ref,
    exact_products,
    extend_gram,
    full_work,
    half_sq_residual,
)

#: a corrective round brings in up to ``1 / _GROW`` of the active set as new vertices
_GROW = 2
# rows of the workspace _State.fv: signs and scores of the face's vertices, their
# weights, the scores and the two solutions of a round of the face minimizer, the
# change of the scores, the best inactive scores
_SG, _SC, _WT, _SS, _Z1, _Z2, _QD, _TOP, _FV = range(9)
# rows of _State.iv: coordinates of the face, their rows of gmat, the face minimizer's
# support (positions into the face, in order), the best inactive vertices
_JS, _POS, _SUB, _IDS, _IV = range(5)


class _State(NamedTuple):
    """The run's arrays in numba.  Vertex ``v``: coordinate ``v >> 1`` with sign
    ``1 - 2 (v & 1)`` on the l1 ball, coordinate ``v`` with sign ``+1`` on the simplex."""

    x: np.ndarray  # (n,)
    g: np.ndarray  # (n,) gradient
    p: np.ndarray  # (m,) A x
    vid: np.ndarray  # (nv,) active vertices in slots [0, count)
    w: np.ndarray  # (nv,) their weights
    slot: np.ndarray  # (nv,) slot of a vertex, -1 when inactive
    n_active: np.ndarray  # (1,) number of active vertices (`count` would shadow tuple.count)
    gslot: np.ndarray  # (n,) row of `pool` holding A^T A e_j, -1 when not cached
    pool: np.ndarray  # (cap, n)
    pcount: np.ndarray  # (1,)
    heavy: int  # cache Gram columns whose product reads at least this many entries
    gpos: np.ndarray  # (n,) row of `gmat` of coordinate j, -1 when not tracked
    gj: np.ndarray  # (kmax,) tracked coordinates
    gcount: np.ndarray  # (1,)
    gmat: np.ndarray  # (kmax, kmax) <A e_i, A e_j> of tracked coordinates
    # workspace of the kernels, so that they allocate nothing: each numpy allocation
    # and array expression compiles helpers of its own on a cold start
    # (benchmarks/README.md, "First call")
    fv: np.ndarray  # (_FV, kmax) vectors of a face (rows named _SG, _SC, ...)
    iv: np.ndarray  # (_IV, kmax) integer vectors of a face
    fq: np.ndarray  # (2, kmax, kmax) the face's Gram matrix and its Cholesky factor
    supp: np.ndarray  # (nv,) coordinates of the active vertices
    seen: np.ndarray  # (n,) booleans
    fm: np.ndarray  # (m,)


@structref.register
class _StateType(RecordRefType):
    """The run state by reference (see :mod:`frankwolfe.compiled.records`)."""


class StateRef(structref.StructRefProxy):
    """A :class:`_State` as the kernels see it (its arrays shared, not copied); Python
    reads the record itself."""


structref.define_proxy(StateRef, _StateType, list(_State._fields))


@njit(cache=True)
def make_refs(D, S):  # pragma: no cover - compiled
    """The references (a :class:`~frankwolfe.objectives.design_kernels.DenseDesignRef`
    or :class:`~frankwolfe.objectives.design_kernels.SparseDesignRef`, and a
    :class:`StateRef`) of the records ``D`` (a ``Design``) and ``S``."""
    return design_ref(D), StateRef(*S)


@inner_kernel
def _coord(signed, v):  # pragma: no cover - compiled
    if signed:
        return v >> 1, 1.0 - 2.0 * (v & 1)
    return v, 1.0


@inner_kernel
def _scan(S, signed, r):  # pragma: no cover - compiled
    """``(<g, x>, slot of the away vertex, its score)`` over the active set."""
    gx = 0.0
    best = -np.inf
    ia = 0
    for t in range(S.n_active[0]):
        j, s = _coord(signed, S.vid[t])
        score = r * s * S.g[j]
        gx += S.w[t] * score
        if score > best:
            best = score
            ia = t
    return gx, ia, best


@inner_kernel
def _fw_vertex(g, signed, r):  # pragma: no cover - compiled
    """``(vertex, score)`` minimizing ``<g, v>`` (the linear oracle)."""
    # comparisons, not max()/min(): those are functions numba compiles on a cold start,
    # for the same machine code (a select) as these
    n = g.shape[0]
    if signed:
        # the largest |g_j| first, then its first index
        best = 0.0
        for j in range(n):
            a = abs(g[j])
            if a > best:
                best = a
        jb = 0
        for j in range(n):
            if abs(g[j]) == best:
                jb = j
                break
        # -sign(g_j) r e_j; +r e_j for g_j = 0 (as L1Ball)
        return 2 * jb + (1 if g[jb] > 0.0 else 0), -r * best
    best = np.inf
    for j in range(n):
        if g[j] < best:
            best = g[j]
    jb = 0
    for j in range(n):
        if g[j] == best:
            jb = j
            break
    return jb, r * best


@inner_kernel
def _cached_gram(D, S, j):  # pragma: no cover - compiled
    """The pool row of ``A^T A e_j``, computed now if the column is heavy and room is
    left; -1 when the column is not cached."""
    t = S.gslot[j]
    if t >= 0:
        return t
    if S.pcount[0] >= S.pool.shape[0] or column_work(D, j) < S.heavy:
        return -1
    t = S.pcount[0]
    row = S.pool[t]
    for k in range(row.shape[0]):
        row[k] = 0.0
    add_gram_column(D, j, 1.0, row)
    S.gslot[j] = t
    S.pcount[0] = t + 1
    return t


@inner_kernel
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


@inner_kernel
def _cross(D, S, i, j):  # pragma: no cover - compiled
    """``<A e_i, A e_j>`` (``||A e_j||^2`` for ``i == j``), from a cached Gram column
    when there is one."""
    t = S.gslot[i]
    if t >= 0:
        return S.pool[t, j]
    t = S.gslot[j]
    if t >= 0:
        return S.pool[t, i]
    return column_dot(D, i, j)


@inner_kernel
def _activate(S, v):  # pragma: no cover - compiled
    t = S.slot[v]
    if t < 0:
        t = S.n_active[0]
        S.vid[t] = v
        S.w[t] = 0.0
        S.slot[v] = t
        S.n_active[0] = t + 1
    return t


@inner_kernel
def _drop(S, t):  # pragma: no cover - compiled
    last = S.n_active[0] - 1
    v = S.vid[t]
    lv = S.vid[last]
    S.vid[t] = lv
    S.w[t] = S.w[last]
    S.slot[lv] = t
    S.slot[v] = -1
    S.n_active[0] = last


@inner_kernel
def _drop_zeros(S):  # pragma: no cover - compiled
    for t in range(S.n_active[0] - 1, -1, -1):
        if S.w[t] <= 0.0:
            _drop(S, t)


@inner_kernel
def _refresh(D, S, signed, r):  # pragma: no cover - compiled
    """Renormalize the weights and recompute ``x``, ``A x`` and ``g`` from them."""
    k = S.n_active[0]
    total = 0.0
    for t in range(k):
        total += S.w[t]
    support = S.supp
    x = S.x
    for j in range(x.shape[0]):
        x[j] = 0.0
    for t in range(k):
        S.w[t] /= total
        j, s = _coord(signed, S.vid[t])
        support[t] = j
        x[j] += r * s * S.w[t]
    exact_products(D, x, support, k, S.p, S.g, S.seen, S.fm)


@inner_kernel
def _exact_at_x(D, S):  # pragma: no cover - compiled
    """Recompute ``A x`` and ``g`` exactly at ``x`` as it is.  Unlike ``_refresh``, ``x``
    is not rebuilt from the weights: at a radius far beyond ``||x*||_1`` (``+-r e_j`` at
    weights near 1/2) the weights' spacing puts ``x`` on a grid of ``r`` times the
    rounding unit, and the gap at a point of that grid stayed 40 times above a tol the
    point ``x`` itself meets (r = 1e4, tol = 1e-9)."""
    x = S.x
    k = 0
    for j in range(x.shape[0]):
        # the active coordinates, and the rounding residues of vertices that left
        if x[j] != 0.0:
            S.supp[k] = j
            k += 1
    exact_products(D, x, S.supp, k, S.p, S.g, S.seen, S.fm)


# no fastmath here or in the solves: its vectorized loops (with their alias checks,
# optimized again in every caller) add compilation time to a first sparse lasso and
# save no measurable time warm (benchmarks/README.md, "Measurements behind code choices")
@inner_kernel
def _cholesky(Q, sub, k, ridge, L):  # pragma: no cover - compiled
    """Factor ``Q[sub, sub] + ridge I = L L^T`` (``k x k``: the rows and columns
    ``sub[:k]`` of ``Q``; ``L`` lower triangular, written in place); false when the
    matrix is not positive definite or not finite.

    Loops, not LAPACK: LAPACK's factorization runs on OpenBLAS's threads, which on faces
    of tens to hundreds of vertices spent three times the CPU of one thread (and far
    more on a busy machine), and numba's ``np.linalg.cholesky`` compiled twelve more
    functions.  The active-set rounds factor once per face and then delete a vertex at
    a time (``_cholesky_delete``), so the factorization is not what costs."""
    for i in range(k):
        Li = L[i]
        qi = Q[sub[i]]
        for j in range(i + 1):
            Lj = L[j]
            t = qi[sub[j]] + ridge if j == i else qi[sub[j]]
            for c in range(j):
                t -= Li[c] * Lj[c]
            if j < i:
                Li[j] = t / Lj[j]
            elif t > 0.0 and t < np.inf:
                Li[i] = math.sqrt(t)  # math, not numpy: no ufunc machinery to compile
            else:
                return False
    return True


@inner_kernel
def _cholesky_delete(L, sub, k, p):  # pragma: no cover - compiled
    """Remove position ``p`` of the support ``sub[:k]`` and its row and column of the
    factor ``L`` (``k x k``, in place).  ``L`` without row ``p`` is lower triangular but
    for one entry above the diagonal in rows ``p..k-2``, which Givens rotations of
    adjacent columns remove: ``O((k - p)^2)``, against ``O(k^3)`` for a new
    factorization.  False when a rotation degenerates (the caller keeps its weights)."""
    for i in range(p, k - 1):
        sub[i] = sub[i + 1]
        Li, Ln = L[i], L[i + 1]
        for c in range(i + 2):
            Li[c] = Ln[c]
    for j in range(p, k - 1):
        a = L[j, j]
        b = L[j, j + 1]
        r = math.hypot(a, b)
        if not r > 0.0:
            return False
        c = a / r
        s = b / r
        for i in range(j, k - 1):
            x = L[i, j]
            y = L[i, j + 1]
            L[i, j] = c * x + s * y
            L[i, j + 1] = c * y - s * x
    return True


@inner_kernel
def _cholesky_solve(L, k, y, z):  # pragma: no cover - compiled
    """Solve ``L L^T a = y`` and ``L L^T b = z`` in place (``L`` lower triangular,
    ``k x k``)."""
    for i in range(k):
        t = y[i]
        u = z[i]
        for j in range(i):
            t -= L[i, j] * y[j]
            u -= L[i, j] * z[j]
        y[i] = t / L[i, i]
        z[i] = u / L[i, i]
    for i in range(k - 1, -1, -1):
        t = y[i]
        u = z[i]
        for j in range(i + 1, k):
            t -= L[j, i] * y[j]
            u -= L[j, i] * z[j]
        y[i] = t / L[i, i]
        z[i] = u / L[i, i]


@inner_kernel
def _face_minimizer(S, k):  # pragma: no cover - compiled
    """Weights ``w + delta`` minimizing ``s.delta + 1/2 delta^T Q delta`` over the face of the
    simplex spanned by ``w``'s support (a primal active-set method: each round solves
    the equality-constrained problem on the current support, moves towards its solution
    as far as the weights stay non-negative and drops the weight that hits 0, deleting
    it from the Cholesky factor of the support's ``Q``); ``Q``, ``s`` and ``w`` are the
    first ``k`` rows and columns of the workspace ``S.fq[0]``, ``S.fv[_SC]`` and
    ``S.fv[_WT]`` (the factor lives in ``S.fq[1]``).  ``w`` is moved and ``s`` (the
    scores ``<g, v>``) updated to the new point.  Returns the change of the model
    (<= 0)."""
    Q, L = S.fq[0], S.fq[1]
    s, w = S.fv[_SC], S.fv[_WT]
    ss, z1, z2, Qd = S.fv[_SS], S.fv[_Z1], S.fv[_Z2], S.fv[_QD]
    sub = S.iv[_SUB]
    change = 0.0
    scale = 0.0
    for i in range(k):
        sub[i] = i
        if Q[i, i] > scale:
            scale = Q[i, i]
    ridge = 1e-12 * scale + 1e-300
    kk = k
    if kk < 2 or not _cholesky(Q, sub, kk, ridge, L):
        return change  # nothing to move, or not positive definite: the weights stay
    for _ in range(2 * k):
        if kk < 2:
            break
        for a in range(kk):
            ss[a] = s[sub[a]]
            z1[a] = ss[a]
            z2[a] = 1.0
        _cholesky_solve(L, kk, z1, z2)
        t1 = 0.0
        t2 = 0.0
        for a in range(kk):
            t1 += z1[a]
            t2 += z2[a]
        mu = -t1 / t2
        delta = z1  # -(z1 + mu z2), in place
        for a in range(kk):
            delta[a] = -(z1[a] + mu * z2[a])
        # vertices that came in at weight 0 and would go negative leave at once (from the
        # last position down: a deletion moves only the positions after it)
        blocked = False
        for a in range(kk - 1, -1, -1):
            if delta[a] < 0.0 and w[sub[a]] == 0.0:
                blocked = True
                if not _cholesky_delete(L, sub, kk, a):
                    return change
                kk -= 1
        if blocked:
            continue
        t = 1.0
        # no weight hits 0 while hit == kk (not -1: numba would type the call below for
        # the literal -1 first and compile _cholesky_delete twice)
        hit = kk
        for a in range(kk):
            if delta[a] < 0.0 and w[sub[a]] < -t * delta[a]:
                t = w[sub[a]] / -delta[a]
                hit = a
        # model change along t delta, from the scores before the move
        slope = 0.0
        for a in range(kk):
            slope += ss[a] * delta[a]
        for i in range(k):
            Qd[i] = 0.0
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
        if hit == kk:
            break
        w[sub[hit]] = 0.0
        if not _cholesky_delete(L, sub, kk, hit):
            break
        kk -= 1
    return change


@inner_kernel
def _face_gram(D, S, k):  # pragma: no cover - compiled
    """``Q[u, v] = <A e_i, A e_j>`` over the coordinates ``js[:k]`` (repeats allowed;
    ``js``, ``Q``: the workspace ``S.iv[_JS]``, ``S.fq[0]``), from the tracked products
    in ``gmat``: coordinates met for the first time get their inner products with every
    tracked one (so a face's Gram matrix costs each pair once per run): from their
    cached Gram columns for a dense ``A``, from the rows their columns touch for a
    sparse ``A``.  When ``gmat`` is full the tracking starts over."""
    js, pos = S.iv[_JS], S.iv[_POS]
    new = 0
    for u in range(k):
        if S.gpos[js[u]] < 0:
            new += 1
    if S.gcount[0] + new > S.gj.shape[0]:
        for t in range(S.gcount[0]):
            S.gpos[S.gj[t]] = -1
        S.gcount[0] = 0
    first_new = S.gcount[0]
    for u in range(k):
        j = js[u]
        t = S.gpos[j]
        if t < 0:
            t = S.gcount[0]
            S.gj[t] = j
            S.gpos[j] = t
            S.gcount[0] = t + 1
        pos[u] = t
    if hasattr(D, "A"):  # from the cached Gram columns
        for t in range(first_new, S.gcount[0]):
            j = S.gj[t]
            h = _cached_gram(D, S, j)
            for q in range(t):
                jq = S.gj[q]
                val = S.pool[h, jq] if h >= 0 else column_dot(D, j, jq)
                S.gmat[t, q] = S.gmat[q, t] = val
            S.gmat[t, t] = S.pool[h, j] if h >= 0 else column_dot(D, j, j)
    else:  # from the rows the new columns touch
        extend_gram(D, S.gj, S.gpos, first_new, S.gcount[0], S.gmat, S.fm)
    Q = S.fq[0]
    for u in range(k):
        for v in range(k):
            Q[u, v] = S.gmat[pos[u], pos[v]]


@inner_kernel
def _bring_in(S, signed, r, v, gx, q):  # pragma: no cover - compiled
    """Activate ``v`` and the ``q - 1`` inactive vertices of lowest score below ``<g, x>``
    (at weight 0: ``x`` does not move)."""
    _activate(S, v)
    if q <= 1:
        return
    # the q - 1 best in one pass, kept in a small sorted buffer (scores ascending)
    top, ids = S.fv[_TOP], S.iv[_IDS]
    for t in range(q - 1):
        top[t] = np.inf
        ids[t] = -1
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
def _run_chunk(D, S, signed, r, tol, steps, refresh_every, since, corrective,
               refresh):  # pragma: no cover - compiled
    """Up to ``steps`` iterations: corrective rounds (``corrective``) or pairwise steps
    with exact line search, after recomputing ``x``, ``A x`` and ``g`` from the
    weights when ``refresh`` is 1 (see ``_refresh``), ``A x`` and ``g`` at ``x`` when it
    is 2 (see ``_exact_at_x``).

    A corrective round minimizes exactly over the face of the active vertices (see
    ``_face_minimizer``) and moves ``x``, ``A x`` and ``g`` there.  (It is written
    here, not as a kernel of its own: numba optimizes a kernel's callees again in each
    caller, so a level less in the call tree compiles faster: benchmarks/README.md,
    "Measurements behind code choices".)

    A gap at ``tol`` from the incrementally updated gradient is a claim, not a
    certificate: unless nothing moved since the last refresh, ``A x`` and ``g`` are
    recomputed at ``x`` and the iterations go on when the exact gap misses ``tol`` (at a
    large radius the drifted gradient reached gaps of 1e-11 where the exact one was
    1e-3).

    Returns ``(iterations done, status, last step size, steps since the last refresh,
    corrective rounds, refreshes, exact, f, Frank-Wolfe gap)``, the last two at the
    point reached; ``refreshes`` counts the exact recomputations of ``A x`` and ``g``
    (``refresh``, every ``refresh_every`` steps, after a round that moved many heavy
    coordinates, before a status 1); ``exact``: nothing moved since the last one, so
    ``f`` and the gap are exact at ``x``.  Status 0: all steps done, 1: the exact
    Frank-Wolfe gap reached ``tol``, 2: no pair with a negative slope while the gap is
    above ``tol`` (rounding floor).
    """
    n_ref = 0
    fresh = False  # nothing moved since A x and g were last recomputed
    if refresh == 1:
        _refresh(D, S, signed, r)
    elif refresh == 2:
        _exact_at_x(D, S)
    if refresh:
        n_ref += 1
        fresh = True
    done = 0
    status = 0
    n_corr = 0
    gamma = np.nan
    # the Frank-Wolfe gap before the last corrective round (inf: none to compare)
    before = np.inf
    while done < steps:
        gx, ia, sa = _scan(S, signed, r)
        v, sv = _fw_vertex(S.g, signed, r)
        if gx - sv <= tol:
            if fresh:
                status = 1
                break
            _exact_at_x(D, S)
            n_ref += 1
            fresh = True
            continue
        # a round that left the gap where it was takes a pairwise step next: on a nearly
        # singular face (an l1 ball of radius 1e6 around an optimum of norm 4, +-r e_j
        # both in the face at weights near 1/2, whose spacing bounds how finely x moves)
        # rounds "decreased" f by rounding alone for ever, at a gap of 2.5e-4
        stuck = gx - sv >= before
        before = np.inf
        if corrective and not stuck:
            # a corrective round: the oracle's vertex and the next best inactive ones come
            # in at weight 0, then the weights are solved for exactly on the face
            # at most 1 / _GROW new, and the face must fit the tracked products (no
            # min/max: numba would compile them for integers as well as floats)
            q = S.n_active[0] // _GROW
            room = S.gj.shape[0] - S.n_active[0]
            if q > room:
                q = room
            _bring_in(S, signed, r, v, gx, q if q > 1 else 1)
            k = S.n_active[0]
            change = 0.0
            js, sg, s, w = S.iv[_JS], S.fv[_SG], S.fv[_SC], S.fv[_WT]
            if k <= S.gj.shape[0]:  # else a face larger than the tracked products: no round
                for u in range(k):
                    js[u], sg[u] = _coord(signed, S.vid[u])
                _face_gram(D, S, k)
                Q = S.fq[0]
                for u in range(k):
                    for t in range(k):
                        Q[u, t] *= r * r * sg[u] * sg[t]
                for u in range(k):
                    s[u] = r * sg[u] * S.g[js[u]]
                    w[u] = S.w[u]
                change = _face_minimizer(S, k)
            if change < 0.0:
                # x, A x and g follow the change of the weights: by Gram columns when
                # that reads fewer entries than recomputing A^T (A x - b)
                full = full_work(D)
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
                fresh = False
                if cost >= full:
                    _refresh(D, S, signed, r)
                    n_ref += 1
                    fresh = True
                done += 1
                n_corr += 1
                since += 1
                before = gx - sv
                continue
            _drop_zeros(S)  # the vertices brought in at weight 0 leave again
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
            curv = (cv + ca) ** 2 * _cross(D, S, jv, jv)
        else:
            curv = (cv * cv * _cross(D, S, jv, jv) + ca * ca * _cross(D, S, ja, ja)
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
        fresh = False
        if since >= refresh_every:
            _refresh(D, S, signed, r)
            n_ref += 1
            fresh = True
            since = 0
    gx, ia, sa = _scan(S, signed, r)
    v, sv = _fw_vertex(S.g, signed, r)
    return (done, status, gamma, since, n_corr, n_ref, fresh, half_sq_residual(D, S.p),
            gx - sv)

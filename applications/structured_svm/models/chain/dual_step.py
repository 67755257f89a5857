"""The step kernels of the chain-model SSVM dual: what a block step needs after its oracle.

The direction's curvature, written on the way as the driver's
:class:`~frankwolfe.compiled.StructuredDirection` (:func:`chain_curvature`,
:func:`chain_describe`), the feature-major copy of the unary gradient and how it
follows the driver's moves (:func:`chain_sync`, :func:`chain_moved`,
:func:`chain_moved_at`), and the commit of a step to the block's marginals
(:func:`chain_commit`).  They read and write the record of :mod:`.dual_state`;
:func:`.dual_kernels.chain_blocks` hands them to the driver.
"""

from __future__ import annotations

from numba import njit

from frankwolfe.compiled import inner_kernel

__all__ = ["chain_commit", "chain_curvature", "chain_describe", "chain_moved", "chain_moved_at",
           "chain_sync"]


@njit(cache=True, nogil=True)
def chain_sync(state, g):  # pragma: no cover - compiled
    """Feature-major copy ``gT[f K + k] = g[k F + f]`` of the unary gradient (id features
    and sparse rows: the oracle then reads the ``K`` weights of a feature contiguously)."""
    gT, mode = state.gT, state.mode
    K, F, uses_ids = state.K, state.F, state.uses_ids
    if uses_ids or state.xptr.size > 0:
        for k in range(K):
            src = k * F
            for f in range(F):
                gT[f * K + k] = g[src + f]
        mode[0] = 1


@njit(cache=True, nogil=True, inline="always")  # one caller: no LLVM level of its own
def _transitions(state, i):  # pragma: no cover - compiled
    """Distinct transition codes ``b K + a`` of the last oracle labelling in ``ytr``
    (their counts in ``cntf``, to be cleared by the caller); returns their number."""
    ys, ytr, cntf = state.ys, state.ytr, state.cntf
    K = state.K
    L = state.off[i + 1] - state.off[i]
    ny = 0
    for t in range(L - 1):
        code = ys[t + 1] * K + ys[t]
        if cntf[code] == 0.0:
            ytr[ny] = code
            ny += 1
        cntf[code] += 1.0
    return ny


@njit(cache=True, nogil=True, inline="always")
def _entry(sd, ne, p, v):  # pragma: no cover - compiled
    sd.idx[ne] = p
    sd.val[ne] = v
    return ne + 1


@inner_kernel
def chain_curvature(state, i, h):  # pragma: no cover - compiled
    """``d^T diag(h) d`` for the direction ``d = A_i (s_i - z_i)`` of the last oracle call
    (see :class:`frankwolfe.compiled.CompiledBlocks`; ``h`` is
    constant on ``w``, checked by :func:`.dual_kernels.chain_blocks`).

    ``d`` has unary part ``sum_t x_t (x) c_t`` with ``c_t = mu_t - e(y*_t)`` (scaled by
    ``1/(lam n)``), so its squared norm is ``sum_{t,t'} G_{tt'} <c_t, c_t'>`` with the
    example's token Gram matrix ``G`` (precomputed): O(L * |supp c| * L) instead of a
    pass over the direction.  The terms of ``d`` are met on the way, so they are written
    into the domain's :class:`~frankwolfe.compiled.StructuredDirection`
    (``state.sd``, the layout the driver hands to :func:`chain_describe`) here: the
    unary part as one row term per token and nonzero ``c_t[k]`` (tokens whose marginal
    already sits on ``y*`` cost nothing), the start / end biases, the transitions and the
    loss coordinate as entries.
    """
    off, mu, lbar = state.off, state.mu, state.lbar
    ys, coef, info = state.ys, state.coef, state.info
    gram, goff = state.gram, state.goff
    supp, nsupp, kmark = state.supp, state.nsupp, state.kmark
    Tf, tlist, tcnt = state.Tf, state.tlist, state.tcnt
    tin, ytr, cntf = state.tin, state.ytr, state.cntf
    sd = state.sd
    n = state.n
    K, F, d = state.K, state.F, state.d
    lo = off[i]
    L = off[i + 1] - lo
    sc = state.scale
    # c_t = mu_t - e(y*_t), its support and the row terms
    nr = 0
    ns = 0
    for t in range(L):
        yt = ys[t]
        m = 0
        for kk in range(K):
            v = mu[lo + t, kk]
            if kk == yt:
                v -= 1.0
            coef[t, kk] = v
            if v != 0.0:
                supp[t, m] = kk
                m += 1
                sd.row[nr] = lo + t
                sd.base[nr] = kk * F
                sd.coef[nr] = sc * v
                nr += 1
                if not kmark[kk]:
                    kmark[kk] = True
                    sd.seg[ns] = kk * F
                    ns += 1
        nsupp[t] = m
    for q in range(ns):
        kmark[sd.seg[q] // F] = False
    # squared norm of the direction: unary part through the Gram matrix, then pairs
    G0 = goff[i]
    cu = 0.0
    for t in range(L):
        row = G0 + t * L
        for a in range(nsupp[t]):
            kk = supp[t, a]
            s2 = 0.0
            for t2 in range(L):
                s2 += gram[row + t2] * coef[t2, kk]
            cu += coef[t, kk] * s2
    last = lo + L - 1
    o = K * F
    ne = 0
    cp = 0.0
    for kk in range(K):
        v = mu[lo, kk] - (1.0 if ys[0] == kk else 0.0)
        cp += v * v
        if v != 0.0:
            ne = _entry(sd, ne, o + kk, sc * v)
        v = mu[last, kk] - (1.0 if ys[L - 1] == kk else 0.0)
        cp += v * v
        if v != 0.0:
            ne = _entry(sd, ne, o + K + kk, sc * v)
    # entries of T_i - counts of y*'s transitions: the nonzero marginals and the new ones
    o2 = o + 2 * K
    ny = _transitions(state, i)
    for q in range(tcnt[i]):
        code = tlist[i, q]
        v = Tf[i, code] - cntf[code]
        cp += v * v
        if v != 0.0:
            ne = _entry(sd, ne, o2 + code, sc * v)
    for q in range(ny):
        code = ytr[q]
        if not tin[i, code]:
            cp += cntf[code] * cntf[code]
            ne = _entry(sd, ne, o2 + code, -sc * cntf[code])
        cntf[code] = 0.0
    dl = (info[0] - lbar[i]) / n
    if dl != 0.0:
        ne = _entry(sd, ne, d, dl)
    sd.counts[0] = ne
    sd.counts[1] = nr
    sd.counts[2] = ns
    return h[0] * sc * sc * (cu + cp) + h[d] * dl * dl


@inner_kernel
def chain_describe(state, i, sd):  # pragma: no cover - compiled
    """The direction ``d = A_i (s_i - z_i)`` of the last :func:`chain_curvature` call as a
    :class:`~frankwolfe.compiled.StructuredDirection`: already written
    by :func:`chain_curvature` into the layout ``state.sd``, which is ``sd`` (the layout
    :func:`.dual_kernels.chain_blocks` gives the driver); nothing is left to do."""
    return None


@inner_kernel
def chain_moved(state, sd, g):  # pragma: no cover - compiled
    """After the driver's move along ``sd``: the feature-major gradient copy follows
    ``g`` on the unary row terms (when the copy is in use): the ids of the rows, or
    the nonzeros of sparse dense rows (the only entries a row term changes)."""
    if state.mode[0] != 1:
        return
    gT, If, offsets = state.gT, state.If, state.offsets
    K, F = state.K, state.F
    if not state.uses_ids:
        xptr, xcol = state.xptr, state.xcol
        for r in range(sd.counts[1]):
            b, row = sd.base[r], sd.row[r]
            kk = b // F
            for p in range(xptr[row], xptr[row + 1]):
                f = xcol[p]
                gT[f * K + kk] = g[b + f]
        return
    m = If.shape[1]
    for r in range(sd.counts[1]):
        b, row = sd.base[r], sd.row[r]
        kk = b // F
        for j in range(m):
            v = If[row, j]
            if v != 0:
                f = offsets[j] + v - 1
                gT[f * K + kk] = g[b + f]


@inner_kernel
def chain_moved_at(state, coords, count, g):  # pragma: no cover - compiled
    """The round kernel ``moved_at`` (see :class:`frankwolfe.compiled.RoundKernels`):
    :func:`chain_moved` once for a joint round, the feature-major gradient copy following
    ``g`` at the unary coordinates among ``coords[:count]`` (when the copy is in use)."""
    if state.mode[0] != 1:
        return
    gT = state.gT
    K, F = state.K, state.F
    o = K * F
    for a in range(count):
        p = coords[a]
        if p < o:
            kk = p // F
            gT[(p - kk * F) * K + kk] = g[p]


@inner_kernel
def chain_commit(state, i, gamma):  # pragma: no cover - compiled
    """``z_i <- (1 - gamma) z_i + gamma s_i`` on the marginals."""
    off, mu, lbar = state.off, state.mu, state.lbar
    ys, info = state.ys, state.info
    Tf, tlist, tcnt = state.Tf, state.tlist, state.tcnt
    tin = state.tin
    K = state.K
    lo = off[i]
    L = off[i + 1] - lo
    keep = 1.0 - gamma
    for t in range(L):
        for k in range(K):
            mu[lo + t, k] *= keep
        mu[lo + t, ys[t]] += gamma
    if keep == 0.0:  # a full step: the block becomes the vertex
        for q in range(tcnt[i]):
            code = tlist[i, q]
            Tf[i, code] = 0.0
            tin[i, code] = False
        tcnt[i] = 0
    else:
        for q in range(tcnt[i]):
            Tf[i, tlist[i, q]] *= keep
    for t in range(L - 1):
        code = ys[t + 1] * K + ys[t]
        Tf[i, code] += gamma
        if not tin[i, code]:  # keep the list of nonzero transition marginals
            tin[i, code] = True
            tlist[i, tcnt[i]] = code
            tcnt[i] += 1
    lbar[i] = keep * lbar[i] + gamma * info[0]

"""The oracle kernels of the chain-model SSVM dual: loss-augmented Viterbi of a block.

The unary scores (one oracle per data kind: dense rows, sparse rows, attribute ids),
the decoding and the block's gap and score (:func:`_decode`), the emission of the
vertex's sparse entries (:func:`_emit`), and the direction kernel that the core's
driver calls (:func:`chain_direction`).  They read and write the record of
:mod:`.dual_state`; :func:`.dual_kernels.chain_blocks` hands them to the driver.
"""

from __future__ import annotations

from numba import njit

from frankwolfe.compiled import inner_kernel

from .viterbi import max_sum, pair_weights, unary_dense, unary_ids_fm

__all__ = ["chain_direction"]

# -- unary scores ------------------------------------------------------------------
# One oracle per data kind (dense rows, sparse rows, attribute ids), chosen in Python by
# chain_blocks: a run then compiles only the unary code its data needs (one oracle
# deciding at run time compiled all three, a large part of a first fit's compilation).
# `_oracle`, for the direction kernel, decides.
# Inlined into their caller (the pass driver): numba optimizes each function's module
# with every callee linked in, so a thin level between the driver and _decode cost
# another LLVM run over the whole decoder
# (benchmarks/README.md, "Measurements behind code choices").

@inner_kernel
def _unary_ids(If, offsets, K, F, lo, L, g, out):  # pragma: no cover - compiled
    """``out[t, k]`` of the attribute-id model read from ``g`` itself (``k``-major)."""
    m = If.shape[1]
    for t in range(L):
        for k in range(K):
            out[t, k] = 0.0
        for j in range(m):
            v = If[lo + t, j]
            if v != 0:
                f = offsets[j] + v - 1
                for k in range(K):
                    out[t, k] += g[k * F + f]


@inner_kernel(fastmath=True)
def _unary_sparse(xptr, xcol, xval, lo, L, gT, K, out):  # pragma: no cover - compiled
    """``out[t, k]`` of the dense model from the tokens' sparse rows and the feature-major
    unary gradient ``gT`` (one contiguous K-row per nonzero; no products when the
    features are binary, ``xval`` empty)."""
    binary = xval.size == 0
    W = gT.reshape((gT.size // K, K))  # 2-d indexing: faster than row slices
    for t in range(L):
        for k in range(K):
            out[t, k] = 0.0
        for p in range(xptr[lo + t], xptr[lo + t + 1]):
            f = xcol[p]
            if binary:
                for k in range(K):
                    out[t, k] += W[f, k]
            else:
                v = xval[p]
                for k in range(K):
                    out[t, k] += v * W[f, k]


@njit(cache=True, nogil=True, fastmath=True)
def _axpy(a, x, y):  # pragma: no cover - compiled
    """``y += a x`` (contiguous rows: vectorized)."""
    for f in range(x.size):
        y[f] += a * x[f]


@inner_kernel
def _emit(state, i, ystar, idx, val, scale):  # pragma: no cover - compiled
    """``scale * (phi_bar(mu_i, T_i) - phi(x_i, ystar))`` as unique sparse entries; returns nnz."""
    Xf, If, offsets = state.Xf, state.If, state.offsets
    off, mu, T = state.off, state.mu, state.T
    coef, cnt = state.coef, state.cnt
    acc, mark = state.acc, state.mark
    K, F, uses_ids = state.K, state.F, state.uses_ids
    lo = off[i]
    L = off[i + 1] - lo
    for t in range(L):
        for k in range(K):
            coef[t, k] = mu[lo + t, k]
        coef[t, ystar[t]] -= 1.0
    nnz = 0
    if uses_ids:
        m = If.shape[1]
        for t in range(L):
            for k in range(K):
                c = coef[t, k]
                if c == 0.0:
                    continue
                for j in range(m):
                    v = If[lo + t, j]
                    if v != 0:
                        p = k * F + offsets[j] + v - 1
                        if not mark[p]:
                            mark[p] = True
                            idx[nnz] = p
                            nnz += 1
                        acc[p] += c
        for a in range(nnz):
            p = idx[a]
            val[a] = scale * acc[p]
            acc[p] = 0.0
            mark[p] = False
    else:
        for k in range(K):
            active = False
            for t in range(L):
                if coef[t, k] != 0.0:
                    active = True
                    break
            if not active:
                continue
            base = k * F
            out = val[nnz:nnz + F]
            for f in range(F):
                idx[nnz + f] = base + f
                out[f] = 0.0
            for t in range(L):
                c = coef[t, k]
                if c != 0.0:
                    _axpy(scale * c, Xf[lo + t], out)
            nnz += F
    o = K * F
    for k in range(K):
        c = mu[lo, k] - (1.0 if ystar[0] == k else 0.0)
        if c != 0.0:
            idx[nnz] = o + k
            val[nnz] = scale * c
            nnz += 1
    for k in range(K):
        c = mu[lo + L - 1, k] - (1.0 if ystar[L - 1] == k else 0.0)
        if c != 0.0:
            idx[nnz] = o + K + k
            val[nnz] = scale * c
            nnz += 1
    for t in range(L - 1):
        cnt[ystar[t + 1], ystar[t]] += 1.0
    o2 = o + 2 * K
    for b in range(K):
        for a in range(K):
            c = T[i, b, a] - cnt[b, a]
            cnt[b, a] = 0.0
            if c != 0.0:
                idx[nnz] = o2 + a + K * b
                val[nnz] = scale * c
                nnz += 1
    return nnz


@njit(cache=True, nogil=True, inline="always")
def _add_pair_scores(g, Yf, ys, mu, Tf, tlist, tcnt, i, lo, L, K, o, o_tr, s_true, s_star,
                     s_bar):  # pragma: no cover - compiled
    """Adds the transition and start/end parts of ``<g, psi>`` for the truth, the labelling
    ``ys`` and the block's marginals to ``s_true``, ``s_star``, ``s_bar`` (in the one order
    both the oracle's and the rounds' gap use, so the two agree to the bit)."""
    for t in range(L - 1):
        s_true += g[o_tr + Yf[lo + t] + K * Yf[lo + t + 1]]
        s_star += g[o_tr + ys[t] + K * ys[t + 1]]
    for k in range(K):
        s_bar += mu[lo, k] * g[o + k] + mu[lo + L - 1, k] * g[o + K + k]
    for q in range(tcnt[i]):  # nonzero transition marginals only (a few of K^2)
        code = tlist[i, q]
        s_bar += Tf[i, code] * g[o_tr + code]
    return s_true, s_star, s_bar


@njit(cache=True, nogil=True, inline="always")
def _oracle_dense(state, i, g):  # pragma: no cover - compiled
    """:func:`_oracle` for dense token rows."""
    lo = state.off[i]
    L = state.off[i + 1] - lo
    unary_dense(state.Xf[lo:lo + L], g, state.K, state.u)
    return _decode(state, i, g)


@njit(cache=True, nogil=True, inline="always")
def _oracle_rows(state, i, g):  # pragma: no cover - compiled
    """:func:`_oracle` for sparse token rows (from the feature-major copy once synced)."""
    lo = state.off[i]
    L = state.off[i + 1] - lo
    if state.mode[0] == 1:
        _unary_sparse(state.xptr, state.xcol, state.xval, lo, L, state.gT, state.K, state.u)
    else:
        unary_dense(state.Xf[lo:lo + L], g, state.K, state.u)
    return _decode(state, i, g)


@njit(cache=True, nogil=True, inline="always")
def _oracle_ids(state, i, g):  # pragma: no cover - compiled
    """:func:`_oracle` for attribute ids (from the feature-major copy once synced)."""
    lo = state.off[i]
    L = state.off[i + 1] - lo
    if state.mode[0] == 1:
        unary_ids_fm(state.If[lo:lo + L], state.offsets, state.gT, state.K, state.u)
    else:
        _unary_ids(state.If, state.offsets, state.K, state.F, lo, L, g, state.u)
    return _decode(state, i, g)


@njit(cache=True, nogil=True)
def _oracle(state, i, g):  # pragma: no cover - compiled
    """Loss-augmented Viterbi of block ``i`` at the gradient ``g``; returns ``(gap, score)``
    and leaves the labelling in ``ys`` and its loss in ``info[0]``."""
    if state.uses_ids:
        return _oracle_ids(state, i, g)
    if state.xptr.size > 0:
        return _oracle_rows(state, i, g)
    return _oracle_dense(state, i, g)


@inner_kernel
def _decode(state, i, g):  # pragma: no cover - compiled
    """The oracle after its unary scores ``u = <g, phi_t>``: decoding, scores, gap."""
    off, Yf, mu = state.off, state.Yf, state.mu
    lbar = state.lbar
    u, ua, wp = state.u, state.ua, state.wp
    ys, info = state.ys, state.info
    Tf, tlist = state.Tf, state.tlist
    tcnt = state.tcnt
    lam, n = state.lam, state.n
    K, F, d = state.K, state.F, state.d
    lo = off[i]
    L = off[i + 1] - lo
    gl = g[d]
    c = 1.0 / (lam * -gl) if gl < 0.0 else 1.0 / lam
    # loss-augmented decoding at w = g_w / (lam (-g_l)), scaled as the model's oracle
    # does it (unscaled scores would break exact ties differently from the Python engine)
    inv = 1.0 / L if gl < 0.0 else 0.0
    for t in range(L):
        for k in range(K):
            ua[t, k] = c * u[t, k] + inv
        yt = Yf[lo + t]
        ua[t, yt] -= inv
    o = K * F
    pair_weights(g, o, K, c, wp)
    max_sum(ua, L, wp, K, state.vnew, ys)
    ystar = ys
    # scores of the true labelling, the vertex and the current marginals under g
    o_tr = o + 2 * K
    s_true = g[o + Yf[lo]] + g[o + K + Yf[lo + L - 1]]
    s_star = g[o + ystar[0]] + g[o + K + ystar[L - 1]]
    s_bar = 0.0
    wrong = 0
    for t in range(L):
        s_true += u[t, Yf[lo + t]]
        s_star += u[t, ystar[t]]
        if ystar[t] != Yf[lo + t]:
            wrong += 1
        for k in range(K):
            s_bar += mu[lo + t, k] * u[t, k]
    s_true, s_star, s_bar = _add_pair_scores(g, Yf, ystar, mu, Tf, tlist, tcnt, i, lo, L, K, o,
                                             o_tr, s_true, s_star, s_bar)
    loss_s = wrong / L
    info[0] = loss_s
    info[1] = L
    ln = lam * n
    score = (s_true - s_star) / ln + gl * loss_s / n
    gap = (s_star - s_bar) / ln + gl * (lbar[i] - loss_s) / n
    return gap, score


@njit(cache=True, nogil=True)
def chain_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    """Block kernel (see :class:`frankwolfe.compiled.CompiledBlocks`)."""
    gap, score = _oracle(state, i, g)
    nnz = 0
    if want:
        ys, info, lbar = state.ys, state.info, state.lbar
        n, d = state.n, state.d
        nnz = _emit(state, i, ys, idx, val, state.scale)
        idx[nnz] = d
        val[nnz] = (info[0] - lbar[i]) / n
        nnz += 1
    return nnz, gap, score

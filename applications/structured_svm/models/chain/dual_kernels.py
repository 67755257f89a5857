"""Compiled block kernels of the chain-model SSVM dual (marginal parametrization).

Block ``i`` (a sequence of length ``L``) is stored as node marginals
``mu[t, k]`` (rows of one token array shared by all blocks), aggregated
transition marginals ``T[i, b, a]`` (weight of ``y_t = a, y_{t+1} = b``, stored in
the order of the transition weights in ``w``) and the expected loss ``lbar[i]`` of its
convex combination of labellings.  Its image in ``(w, l)`` space is

    w_i = (phi(x_i, y_i) - phi_bar(mu_i, T_i)) / (lam n),   l_i = lbar_i / n,

with ``phi_bar`` the joint feature map applied to marginals (linear in them).
So the block state costs ``L K + K^2 + 1`` numbers (on CoNLL a fraction of dense
vectors over each sentence's support: benchmarks/README.md, "Measurements behind code
choices"), and the block gap needs only the unary scores the oracle computes anyway.

The kernels follow :class:`frankwolfe.compiled.CompiledBlocks`:
they answer oracle and geometry questions, the core's driver decides the step,
moves ``x`` and the gradient ``g = (lam w, -1)`` and keeps the averages.  With
the fused kernels (used when the objective's Hessian is diagonal) the direction
is never materialized: :func:`chain_curvature` computes its curvature from the
token Gram matrices and, on the way, writes it for the driver as scaled token
feature rows (sparse rows when the features are mostly zero) plus the few pair and
loss entries (:class:`~frankwolfe.compiled.StructuredDirection`,
what :func:`chain_describe` hands over); for
attribute ids and sparse dense rows (OCR's pixels) the kernels keep a feature-major
copy of the unary gradient (:func:`chain_sync`, :func:`chain_moved`).  The transition
marginals ``T_i`` are a few nonzeros of ``K^2``; a per-block list of them keeps
scores, curvature, description and commit off the full ``K x K`` table.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.experimental import structref

from frankwolfe.compiled import CompiledBlocks, inner_kernel, structured_direction
from frankwolfe.compiled.records import RecordRefType

from .data import chain_data, token_feature_sums, transition_counts
from .viterbi import max_sum, pair_weights, unary_dense, unary_ids_fm

__all__ = ["ChainState", "ChainStateRef", "chain_state", "chain_blocks", "chain_direction",
           "chain_commit", "chain_curvature", "chain_describe", "chain_moved", "chain_sync"]


class ChainState(NamedTuple):
    """The block state and scratch arrays the chain kernels share (a typed record)."""

    # data (ChainData: dense rows, their sparse form (ptr, col, val) when it pays, ids)
    # and block iterates: marginals mu (tokens x K), T (n x K x K), lbar (n)
    Xf: np.ndarray
    xptr: np.ndarray
    xcol: np.ndarray
    xval: np.ndarray
    If: np.ndarray
    offsets: np.ndarray
    off: np.ndarray
    Yf: np.ndarray
    mu: np.ndarray
    T: np.ndarray
    lbar: np.ndarray
    # the parameters by name, scalars read once per kernel call: n (the number of blocks)
    # is a float as the kernels divide by it; scale = 1 / (lam n) maps a labelling's
    # psi to its vertex; K labels, F unary features, d the dimension of w
    lam: float
    n: float
    scale: float
    K: int
    F: int
    d: int
    uses_ids: bool
    # oracle scratch: unary scores, augmented scores, pair weights (max_sum's layout),
    # labelling, a K-row for max_sum, c_t, transition counts, sparse accumulator and
    # marks, (loss, length) of the labelling
    u: np.ndarray
    ua: np.ndarray
    wp: np.ndarray
    ys: np.ndarray
    vnew: np.ndarray
    coef: np.ndarray
    cnt: np.ndarray
    acc: np.ndarray
    mark: np.ndarray
    info: np.ndarray
    # fused kernels: token Gram matrices, feature-major gradient copy (ids, sparse rows)
    # and its validity flag (set by chain_sync), supports of c_t, label marks (distinct
    # labels of the unary row terms)
    gram: np.ndarray
    goff: np.ndarray
    gT: np.ndarray
    mode: np.ndarray
    supp: np.ndarray
    nsupp: np.ndarray
    kmark: np.ndarray
    # T flat per block and the list / set of its nonzero entries (a few of K^2), so
    # scores, curvature, update and commit never sweep all K^2 transitions; the
    # labelling's distinct transitions and their counts
    Tf: np.ndarray
    tlist: np.ndarray
    tcnt: np.ndarray
    tin: np.ndarray
    ytr: np.ndarray
    cntf: np.ndarray
    # the layout the driver applies (chain_curvature writes the direction into it)
    sd: Any


@structref.register
class ChainStateType(RecordRefType):
    """numba type of :class:`ChainStateRef` (fields: those of :class:`ChainState`; by
    reference, see :mod:`frankwolfe.compiled.records`)."""


class ChainStateRef(structref.StructRefProxy):
    """A :class:`ChainState` as the kernels see it: one pointer to its fields (the
    arrays are shared with the record, not copied).  Made by :func:`chain_blocks`;
    in Python its fields read those of the record it was made from (``view``)."""

    view: ChainState

    def __getattr__(self, name: str) -> Any:
        view = self.__dict__.get("view")
        if view is None:
            raise AttributeError(name)
        return getattr(view, name)


structref.define_proxy(ChainStateRef, ChainStateType, list(ChainState._fields))


@njit(cache=True)
def _by_reference(state):  # pragma: no cover - compiled
    return ChainStateRef(*state)


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
    constant on ``w``, checked by :func:`chain_blocks`).

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
    :func:`chain_blocks` gives the driver); nothing is left to do."""
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


def _aggregate(state: ChainState, x: np.ndarray) -> None:
    """``x = sum_i A_i z_i`` for the block state: ``-(phi_bar(mu_i, T_i) - phi(x_i, y_i))
    / (lam n)`` summed over the blocks, and ``sum_i lbar_i / n`` in ``x[d]``.

    Once per run, so numpy (sums over all tokens at once) rather than a kernel: numba
    would compile it, and the vertex emitter it calls, on every cold first fit
    (benchmarks/README.md, "Measurements behind code choices").  The true labellings'
    marginals (the default start) cancel exactly."""
    K, F, d = state.K, state.F, state.d
    off, Yf, mu = state.off, state.Yf, state.mu
    N = int(off[-1])
    # only tokens whose marginals left the truth count (none on the default start), and
    # only their rows are copied: phi_bar - phi(y_i) per token, marginals minus one-hot
    rows = np.flatnonzero((mu[np.arange(N), Yf] != 1.0) | (np.count_nonzero(mu, axis=1) != 1))
    c = mu[rows]
    c[np.arange(rows.size), Yf[rows]] -= 1.0
    unary = token_feature_sums(state.Xf, state.If, state.offsets,
                               (state.xptr, state.xcol, state.xval), F, rows, c)
    scale = state.scale
    o = K * F
    x[:o] -= scale * unary.ravel()  # label-major: w[k F + f]
    first, last = off[:-1], off[1:] - 1
    for part, at in ((o, first), (o + K, last)):  # start and end biases
        x[part:part + K] -= scale * (mu[at].sum(axis=0) - np.bincount(Yf[at], minlength=K))
    x[o + 2 * K:o + 2 * K + K * K] -= scale * (state.T.sum(axis=0).ravel()
                                                - transition_counts(Yf, off, K))
    x[d] += state.lbar.sum() / state.n


def chain_state(model: Any, X: Any, Y: Any, lam: float, warm: Any = None) -> ChainState:
    """The block state and scratch arrays of the chain SSVM dual (see
    :func:`chain_blocks`).

    Parameters
    ----------
    model : ChainModel
    X, Y : training sequences and labellings
    lam : float
    warm : optional
        The block state of a previous run (what ``block_points()`` returned: its
        marginals, which do not depend on lambda); default: the true labellings
        (``w = 0``).
    """
    data = chain_data(model, X, Y)
    K, F, d = data.K, data.F, data.d
    bad = np.flatnonzero((data.Yf < 0) | (data.Yf >= K))
    if bad.size:
        i = int(np.searchsorted(data.off, bad[0], side="right")) - 1
        raise ValueError(f"ChainModel: training labels must lie in [0, {K}), got "
                         f"{int(data.Yf[bad[0]])} at position {int(bad[0] - data.off[i])} "
                         f"of example {i}")
    N, n, Lmax = int(data.off[-1]), data.n, data.Lmax
    if warm is None:
        mu = np.zeros((N, K))
        mu[np.arange(N), data.Yf] = 1.0
        T = np.zeros((n, K, K))
        blk = np.repeat(np.arange(n), np.diff(data.off))
        same = blk[:-1] == blk[1:]
        np.add.at(T, (blk[:-1][same], data.Yf[1:][same], data.Yf[:-1][same]), 1.0)
        lbar = np.zeros(n)
    else:
        mu, T, lbar = (np.array(a, dtype=float) for a in warm[1])
        if mu.shape != (N, K) or T.shape != (n, K, K) or lbar.shape != (n,):
            raise ValueError(f"chain_blocks: the warm-start marginals do not fit this data "
                             f"set: shapes {mu.shape}, {T.shape}, {lbar.shape}, expected "
                             f"{(N, K)}, {(n, K, K)}, {(n,)} ({n} sequences, {N} positions, "
                             f"{K} states)")
    gram, goff = data.gram()
    Tf = T.reshape(n, K * K)  # a view: the block state stays (mu, T, lbar)
    tin = Tf != 0.0
    tcnt = np.count_nonzero(tin, axis=1).astype(np.int64)
    # transition codes b K + a: 16 bits while K^2 fits (half the memory of the list)
    tlist = np.zeros((n, K * K), dtype=np.int16 if K * K < 2**15 else np.int32)
    rows, cols = np.nonzero(tin)
    tlist[rows, np.arange(rows.size) - np.repeat(np.cumsum(tcnt) - tcnt, tcnt)] = cols
    cnt = np.zeros((K, K))
    sized = d + 1 if data.uses_ids else 1
    xptr, xcol, xval = data.token_csr()
    offsets = data.offsets.astype(np.int64)
    # the direction the driver applies: token rows (or their ids) as row terms
    if data.uses_ids:
        layout = structured_direction(2 * K + K * K + 1, Lmax * K, K, ids=data.If,
                                      id_offsets=offsets)
    elif xptr.size:  # sparse rows (OCR's pixels): the driver moves their stored entries
        layout = structured_direction(2 * K + K * K + 1, Lmax * K, K,
                                      sparse=(xptr, xcol, xval))
    else:
        layout = structured_direction(2 * K + K * K + 1, Lmax * K, K, dense=data.Xf)
    return ChainState(
        Xf=data.Xf, xptr=xptr, xcol=xcol, xval=xval, If=data.If,
        offsets=offsets, off=data.off,
        Yf=data.Yf, mu=mu, T=T, lbar=lbar,
        lam=float(lam), n=float(n), scale=1.0 / (float(lam) * float(n)), K=int(K), F=int(F),
        d=int(d), uses_ids=bool(data.uses_ids),
        u=np.empty((Lmax, K)), ua=np.empty((Lmax, K)), wp=np.empty(2 * K + K * K),
        ys=np.empty(Lmax, dtype=np.int64), vnew=np.empty(K), coef=np.empty((Lmax, K)),
        cnt=cnt,
        acc=np.zeros(sized), mark=np.zeros(sized, dtype=np.bool_), info=np.zeros(2),
        gram=gram, goff=goff, gT=np.zeros(K * F if data.uses_ids or xptr.size else 0),
        mode=np.zeros(1, dtype=np.int64), supp=np.empty((Lmax, K), dtype=np.int64),
        nsupp=np.empty(Lmax, dtype=np.int64), kmark=np.zeros(K, dtype=np.bool_),
        Tf=Tf, tlist=tlist, tcnt=tcnt, tin=tin, ytr=np.empty(Lmax, dtype=np.int64),
        cntf=cnt.reshape(K * K), sd=layout)


def chain_blocks(state: ChainState) -> CompiledBlocks:
    """:class:`~frankwolfe.compiled.CompiledBlocks` of the chain SSVM dual over ``state``
    (from :func:`chain_state`; the kernels move its arrays in place)."""
    K, F, d = state.K, state.F, state.d
    Lmax = state.u.shape[0]
    mu, T, lbar = state.mu, state.T, state.lbar
    ref = _by_reference(state)
    ref.view = state
    # unary entries: at most K slices of F (dense) or L m K ids, plus the pair part and l
    unary_cap = K * F if not state.uses_ids else Lmax * state.If.shape[1] * K
    max_nnz = min(unary_cap, K * F) + 2 * K + K * K + 1

    def start(x: np.ndarray) -> None:
        _aggregate(state, x)

    def block_points() -> tuple:
        # the run's own arrays, no copy: these kernels serve one run (the domain builds
        # new ones per run, and a warm start copies what it is given)
        return ("marginals", (mu, T, lbar))

    def accepts(h: np.ndarray) -> bool:  # the fused kernels read one curvature for all of w
        return h.shape == (d + 1,) and bool(np.all(h[:d] == h[0]))

    def fork() -> tuple[ChainStateRef, Any]:
        # another thread's kernels: the data, the block iterates and the feature-major
        # gradient copy shared, the oracle's and the direction's scratch its own
        sd = state.sd._replace(counts=np.zeros(3, dtype=np.int64),
                               idx=np.empty_like(state.sd.idx), val=np.empty_like(state.sd.val),
                               row=np.empty_like(state.sd.row),
                               base=np.empty_like(state.sd.base),
                               coef=np.empty_like(state.sd.coef),
                               seg=np.empty_like(state.sd.seg))
        cnt = np.zeros_like(state.cnt)
        own = state._replace(
            u=np.empty_like(state.u), ua=np.empty_like(state.ua), wp=np.empty_like(state.wp),
            ys=np.empty_like(state.ys), vnew=np.empty_like(state.vnew),
            coef=np.empty_like(state.coef), cnt=cnt, acc=np.zeros_like(state.acc),
            mark=np.zeros_like(state.mark), info=np.zeros_like(state.info),
            supp=np.empty_like(state.supp), nsupp=np.empty_like(state.nsupp),
            kmark=np.zeros_like(state.kmark), ytr=np.empty_like(state.ytr),
            cntf=cnt.reshape(K * K), sd=sd)
        fref = _by_reference(own)
        fref.view = own
        return fref, sd

    oracle = (_oracle_ids if state.uses_ids
              else _oracle_rows if state.xptr.size else _oracle_dense)
    return CompiledBlocks(chain_direction, chain_commit, ref, max_nnz, start, block_points,
                          describe=chain_describe, sync=chain_sync, curvature=chain_curvature,
                          layout=state.sd, moved=chain_moved, accepts=accepts,
                          oracle=oracle, fork=fork)

"""Numba kernels of the chain model: unary scores, (loss-augmented) Viterbi,
labelling scores and sparse joint features.

Weight layout (``K`` states, ``F`` unary features, ``d = K*F + 2K + K^2``),
as in BCFWstruct's ``chain_featuremap.m`` / gapBCFW's ``chain_conll_featuremap.m``:

* unary ``w[y*F + f]`` (label-major slices ``[y*F, (y+1)*F)``; this is also
  MATLAB's column-major ``unit(:)`` of the F x K matrix);
* start bias ``w[K*F + y]``, end bias ``w[K*F + K + y]``;
* transition ``w[K*F + 2K + a + K*b]`` for ``y_t = a, y_{t+1} = b``.

The batch and training kernels for attribute ids read a feature-major copy
of the unary weights (``wt[f*K + y]``, :func:`to_feature_major`): the ``K``
weights of one attribute are then contiguous instead of ``F`` apart.

Two input forms: dense ``x`` of shape ``(L, F)``, or attribute ids ``ids`` of
shape ``(L, m)`` where column ``j`` holds ids ``1..sizes[j]`` (0 = absent) and
the flat feature is ``offsets[j] + id - 1``.

Every kernel is called once per example from Python, so each does all its
per-position work itself; none allocates more than O(L*K) scratch.
Kernels that read ids return a status: ``-1`` when all ids were in range,
otherwise the flat position ``t*m + j`` of the first bad id (numba does no
bounds checking, so a bad id must never be used as an index).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from frankwolfe.compiled import inner_kernel

_OK = -1


@njit(cache=True, nogil=True, fastmath=True)
def unary_dense(x, w, n_states, out):
    """``out[t, k] = <w[k*F:(k+1)*F], x[t]>``.

    fastmath lets the dot products vectorize (reassociated sums, ~1e-16 relative).
    """
    L, F = x.shape
    for t in range(L):
        for k in range(n_states):
            base = k * F
            s = 0.0
            for f in range(F):
                s += w[base + f] * x[t, f]
            out[t, k] = s


@njit(cache=True, nogil=True)
def unary_ids(ids, offsets, sizes, w, n_states, n_feat, out):
    """Sum of the active unary weights per position and state; returns a status."""
    L, m = ids.shape
    out[:, :] = 0.0
    for t in range(L):
        for j in range(m):
            v = ids[t, j]
            if v == 0:
                continue
            if v < 0 or v > sizes[j]:
                return t * m + j
            f = offsets[j] + v - 1
            for k in range(n_states):
                out[t, k] += w[k * n_feat + f]
    return _OK


@inner_kernel
def unary_ids_fm(ids, offsets, wt, n_states, out):
    """:func:`unary_ids` on feature-major weights ``wt[f*K + k]`` (ids assumed in range).

    The ``K`` weights of a feature are contiguous, so each active id costs one
    short vectorized read instead of ``K`` reads ``F`` apart (the label-major
    layout of ``w``, which misses the cache for large ``F``).
    """
    L, m = ids.shape
    K = n_states
    # 2-d indexing: faster than slices or flat offsets
    # (benchmarks/README.md, "Measurements behind code choices")
    W = wt.reshape((wt.size // K, K))
    for t in range(L):
        for k in range(K):
            out[t, k] = 0.0
        for j in range(m):
            v = ids[t, j]
            if v != 0:
                f = offsets[j] + v - 1
                for k in range(K):
                    out[t, k] += W[f, k]


def to_feature_major(w: np.ndarray, n_states: int, n_feat: int) -> np.ndarray:
    """The unary part ``w[:K*F]`` (label-major) as feature-major ``wt[f*K + k]``."""
    K, F = n_states, n_feat
    return np.ascontiguousarray(np.asarray(w, dtype=float)[:K * F].reshape(K, F).T).ravel()


@inner_kernel
def pair_weights(w, o_start, n_states, scale, out):
    """``out = scale * [start biases, end biases, transitions transposed]`` from the pair
    block ``w[o_start:]`` (transition ``a -> b`` at ``w[o_tr + a + K b]``, written to
    ``out[2K + a K + b]``): the layout :func:`max_sum` reads."""
    K = n_states
    for k in range(2 * K):
        out[k] = scale * w[o_start + k]
    o_tr = o_start + 2 * K
    for b in range(K):
        for a in range(K):
            out[2 * K + a * K + b] = scale * w[o_tr + a + K * b]


@inner_kernel(fastmath=True)
def max_sum(S, L, wp, n_states, new, y):
    """Max-sum over a chain of length ``L``, in place; returns the optimal value and
    leaves the labelling in ``y[:L]``.

    ``S[:L]`` holds the unary scores and is overwritten by the prefix maxima
    ``S[t, b] = max over labellings ending in b at t``; ``wp`` holds the start biases,
    end biases and transposed transitions (:func:`pair_weights`); scratch ``new`` (K).
    The forward sweep keeps no back pointers: its inner loop over the target state
    ``b`` is then a plain running maximum with unit stride (vectorized), and the
    backward sweep recomputes the one argmax per position it needs from the kept rows
    (the same sums, so the same values).  Ties go to the lowest state index (strict
    ``>``, states in increasing order).  Only additions and comparisons: fastmath
    cannot change a value here (finite scores), it lets the maxima vectorize; the
    row views spare the index arithmetic (benchmarks/README.md, "Measurements behind
    code choices").
    """
    K = n_states
    wtr = wp[2 * K:]
    for k in range(K):
        S[0, k] += wp[k]
    for t in range(1, L):
        prev = S[t - 1]
        for b in range(K):
            new[b] = prev[0] + wtr[b]
        for a in range(1, K):
            sa = prev[a]
            row = wtr[a * K:a * K + K]
            for b in range(K):
                # max() without numba's max compiled on a cold start; a select and an
                # unconditional store, so that the loop still vectorizes
                v = sa + row[b]
                new[b] = v if v > new[b] else new[b]
        cur = S[t]
        for b in range(K):
            cur[b] += new[b]
    best = S[L - 1, 0] + wp[K]
    am = 0
    for k in range(1, K):
        v = S[L - 1, k] + wp[K + k]
        if v > best:
            best = v
            am = k
    y[L - 1] = am
    for t in range(L - 1, 0, -1):
        b = y[t]
        prev = S[t - 1]
        bb = prev[0] + wtr[b]
        ab = 0
        for a in range(1, K):
            v = prev[a] + wtr[b + a * K]
            if v > bb:
                bb = v
                ab = a
        y[t - 1] = ab
    return best


@njit(cache=True, nogil=True, inline="always")
def add_hamming(S, L, n_states, y_true, lo):  # pragma: no cover - compiled
    """Loss augmentation in place: ``+1/L`` on every state of rows ``0 .. L - 1`` of
    ``S`` and ``-1/L`` at the true state ``y_true[lo + t]`` (the normalized Hamming
    loss).  True labels outside ``[0, K)`` (e.g. a test-only tag) are never matched.
    The one order of these sums that every decoder uses (the same values bit for bit)."""
    inv = 1.0 / L
    for t in range(L):
        for k in range(n_states):
            S[t, k] += inv
        yt = y_true[lo + t]
        if 0 <= yt < n_states:
            S[t, yt] -= inv


@njit(cache=True, nogil=True)
def _viterbi(unary, w, n_states, n_feat, y_true, augment):
    """Max-sum over chains with start/end biases and K x K transitions.

    ``unary`` (L, K) is scratch (overwritten): with ``augment`` it first gets ``+1/L``
    on every state and ``-1/L`` at the true one (the normalized Hamming loss).
    True labels outside ``[0, K)`` (e.g. a test-only tag) are never matched.
    Ties go to the lowest state index.
    """
    L = unary.shape[0]
    K = n_states
    if augment:
        add_hamming(unary, L, K, y_true, 0)
    y = np.empty(L, dtype=np.int64)
    wp = np.empty(2 * K + K * K)
    pair_weights(w, K * n_feat, K, 1.0, wp)
    best = max_sum(unary, L, wp, K, np.empty(K), y)
    return y, best


@njit(cache=True, nogil=True)
def decode_dense(x, w, n_states, y_true, augment):
    """(Loss-augmented) Viterbi for a dense sequence; returns (labels, score)."""
    unary = np.empty((x.shape[0], n_states))
    unary_dense(x, w, n_states, unary)
    return _viterbi(unary, w, n_states, x.shape[1], y_true, augment)


@njit(cache=True, nogil=True)
def decode_ids(ids, offsets, sizes, w, n_states, n_feat, y_true, augment):
    """(Loss-augmented) Viterbi for attribute ids; returns (labels, score, status)."""
    unary = np.empty((ids.shape[0], n_states))
    status = unary_ids(ids, offsets, sizes, w, n_states, n_feat, unary)
    if status != _OK:
        return np.zeros(0, dtype=np.int64), 0.0, status
    y, best = _viterbi(unary, w, n_states, n_feat, y_true, augment)
    return y, best, status


@njit(cache=True, nogil=True)
def decode_ids_fm(ids, offsets, wt, w, n_states, n_feat, y_true, augment):
    """:func:`decode_ids` with the unary weights given feature-major (``wt``, see
    :func:`to_feature_major`) and the pair weights read from ``w``; ids must be in
    range (checked once per data set by the caller).  Returns (labels, score)."""
    unary = np.empty((ids.shape[0], n_states))
    unary_ids_fm(ids, offsets, wt, n_states, unary)
    return _viterbi(unary, w, n_states, n_feat, y_true, augment)


@njit(cache=True, nogil=True)
def _pair_score(y, w, n_states, n_feat):
    K = n_states
    o_start = K * n_feat
    L = y.shape[0]
    s = w[o_start + y[0]] + w[o_start + K + y[L - 1]]
    o_tr = o_start + 2 * K
    for t in range(L - 1):
        s += w[o_tr + y[t] + K * y[t + 1]]
    return s


@njit(cache=True, nogil=True)
def score_dense(x, y, w, n_states):
    """``<w, phi(x, y)>`` for a dense sequence (labels assumed in range)."""
    L, F = x.shape
    s = 0.0
    for t in range(L):
        base = y[t] * F
        for f in range(F):
            s += w[base + f] * x[t, f]
    return s + _pair_score(y, w, n_states, F)


@njit(cache=True, nogil=True)
def score_ids(ids, offsets, sizes, y, w, n_states, n_feat):
    """``<w, phi(x, y)>`` for attribute ids; returns (score, status)."""
    L, m = ids.shape
    s = 0.0
    for t in range(L):
        base = y[t] * n_feat
        for j in range(m):
            v = ids[t, j]
            if v == 0:
                continue
            if v < 0 or v > sizes[j]:
                return 0.0, t * m + j
            s += w[base + offsets[j] + v - 1]
    return s + _pair_score(y, w, n_states, n_feat), _OK


@njit(cache=True, nogil=True)
def _pair_entries(ya, yb, has_b, n_states, n_feat, idx, val, n):
    """Append the start/end/transition entries of phi(ya) - phi(yb)."""
    K = n_states
    o_start = K * n_feat
    o_tr = o_start + 2 * K
    L = ya.shape[0]
    idx[n] = o_start + ya[0]
    val[n] = 1.0
    idx[n + 1] = o_start + K + ya[L - 1]
    val[n + 1] = 1.0
    n += 2
    for t in range(L - 1):
        idx[n] = o_tr + ya[t] + K * ya[t + 1]
        val[n] = 1.0
        n += 1
    if has_b:
        idx[n] = o_start + yb[0]
        val[n] = -1.0
        idx[n + 1] = o_start + K + yb[L - 1]
        val[n + 1] = -1.0
        n += 2
        for t in range(L - 1):
            idx[n] = o_tr + yb[t] + K * yb[t + 1]
            val[n] = -1.0
            n += 1
    return n


@njit(cache=True, nogil=True)
def _coalesce(idx, val, n):
    """Sort the first ``n`` entries by index, sum duplicates, drop zeros."""
    order = np.argsort(idx[:n])
    out_i = np.empty(n, dtype=np.int64)
    out_v = np.empty(n)
    m = 0
    i = 0
    while i < n:
        cur = idx[order[i]]
        s = 0.0
        while i < n and idx[order[i]] == cur:
            s += val[order[i]]
            i += 1
        if s != 0.0:
            out_i[m] = cur
            out_v[m] = s
            m += 1
    return out_i[:m].copy(), out_v[:m].copy()


@njit(cache=True, nogil=True)
def features_dense(x, ya, yb, has_b, n_states):
    """Sparse ``phi(x, ya) - phi(x, yb)`` (or ``phi(x, ya)``): sorted indices, values.

    Dense features mean a small ``d``, so entries are summed in a length-d
    scratch vector and read back in order, which is cheaper than sorting them.
    """
    L, F = x.shape
    K = n_states
    d = K * F + 2 * K + K * K
    acc = np.zeros(d)
    touched = np.zeros(K + 1, dtype=np.bool_)  # unary slices written, then "pair blocks"
    for t in range(L):
        a = ya[t]
        if has_b and yb[t] == a:
            continue  # the unary parts cancel
        touched[a] = True
        base_a = a * F
        for f in range(F):
            acc[base_a + f] += x[t, f]
        if has_b:
            touched[yb[t]] = True
            base_b = yb[t] * F
            for f in range(F):
                acc[base_b + f] -= x[t, f]
    cap = 4 * L + 4
    pidx = np.empty(cap, dtype=np.int64)
    pval = np.empty(cap)
    n = _pair_entries(ya, yb, has_b, n_states, F, pidx, pval, 0)
    for i in range(n):
        acc[pidx[i]] += pval[i]
    touched[K] = True
    count = 0
    for k in range(K):
        if touched[k]:
            for f in range(F):
                if acc[k * F + f] != 0.0:
                    count += 1
    for i in range(K * F, d):
        if acc[i] != 0.0:
            count += 1
    out_i = np.empty(count, dtype=np.int64)
    out_v = np.empty(count)
    m = 0
    for k in range(K):
        if touched[k]:
            for f in range(F):
                v = acc[k * F + f]
                if v != 0.0:
                    out_i[m] = k * F + f
                    out_v[m] = v
                    m += 1
    for i in range(K * F, d):
        if acc[i] != 0.0:
            out_i[m] = i
            out_v[m] = acc[i]
            m += 1
    return out_i, out_v


@njit(cache=True, nogil=True)
def features_ids(ids, offsets, sizes, ya, yb, has_b, n_states, n_feat):
    """Sparse joint feature (difference) for attribute ids; returns (idx, val, status)."""
    L, m = ids.shape
    cap = 2 * L * m + 4 * L + 4
    idx = np.empty(cap, dtype=np.int64)
    val = np.empty(cap)
    n = 0
    for t in range(L):
        a = ya[t]
        same = has_b and yb[t] == a
        for j in range(m):
            v = ids[t, j]
            if v == 0:
                continue
            if v < 0 or v > sizes[j]:
                return idx[:0].copy(), val[:0].copy(), t * m + j
            if same:
                continue
            f = offsets[j] + v - 1
            idx[n] = a * n_feat + f
            val[n] = 1.0
            n += 1
            if has_b:
                idx[n] = yb[t] * n_feat + f
                val[n] = -1.0
                n += 1
    n = _pair_entries(ya, yb, has_b, n_states, n_feat, idx, val, n)
    out_i, out_v = _coalesce(idx, val, n)
    return out_i, out_v, _OK

"""Sum-product (forward-backward) on a chain in log space: the expectation oracle.

The chain's distribution is ``p(y) = exp(sum_t node[t, y_t] + sum_t trans[y_t, y_{t+1}]) / Z``
with one transition table shared by every position (the chain model's
``K x K`` transition weights; start/end biases and the loss augmentation live in
``node``).  Two passes, the same result:

* the fast path works with probabilities: ``exp`` of the max-shifted
  potentials once per position and once for the transition table, then
  normalized messages by multiply-adds (no ``exp``/``log`` per ``K^2`` entry,
  several times faster);
* when a message normalizer falls below 1e-250 (scores so far apart that
  terms underflow, e.g. at +-1e3) the chain is redone in log space: messages
  shifted by their log-sum-exp, so no intermediate grows with the chain length
  or the scale of the scores; at scores of +-1e3 the marginals keep an
  absolute accuracy near 1e-13, and states whose probability underflows get
  exactly 0 instead of NaN.

Each marginal is normalized locally (per position or per edge), so node and
edge marginals sum to 1 to rounding.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["Marginals", "chain_marginals", "chain_marginals_log"]


class Marginals(NamedTuple):
    """Marginals of ``p(y) ∝ exp(<w, phi(x, y)> [+ L(y_true, y)])`` (an expectation oracle).

    Attributes
    ----------
    node : ndarray (L, K)
        ``node[t, k] = P(y_t = k)`` (a multiclass model: ``L = 1``).
    edge : ndarray (L - 1, K, K) or None
        ``edge[t, a, b] = P(y_t = a, y_{t+1} = b)`` (None without pairwise parts).
    log_partition : float
        ``log Z = log sum_y exp(<w, phi(x, y)> [+ L(y_true, y)])``.
    """

    node: np.ndarray
    edge: np.ndarray | None
    log_partition: float


# terms below the largest by more than this are skipped: each is < 4.3e-18 of the sum
# (exp(-40)), so K - 1 of them change it by less than rounding for K <= 26 and by a
# relative 1e-15 at K = 240; when scores are far apart (the log path's regime) most
# terms are, and the exp is the path's cost
_CUT = -40.0


@njit(cache=True, nogil=True)
def _lse(v):
    """``log sum exp(v)`` of a 1-D array, max-shifted (``-inf`` for an all ``-inf`` row)."""
    m = -np.inf
    for x in v:
        if x > m:
            m = x
    if m == -np.inf:
        return m
    s = 0.0
    for x in v:
        if x - m > _CUT:
            s += np.exp(x - m)
    return m + np.log(s)


_TINY = 1e-250  # below this a normalizer may have lost digits to underflow: use log space


@njit(cache=True, nogil=True)
def _marginals_prob(node, trans, node_marg, edge_marg, edge_sum):
    """The fast path of :func:`chain_marginals`; returns ``(ok, log Z)``."""
    L, K = node.shape
    E = np.empty((K, K))
    tmax = -np.inf
    for a in range(K):
        for b in range(K):
            if trans[a, b] > tmax:
                tmax = trans[a, b]
    for a in range(K):
        for b in range(K):
            E[a, b] = np.exp(trans[a, b] - tmax)
    phi = np.empty((L, K))
    logz = (L - 1) * tmax
    for t in range(L):
        m = -np.inf
        for k in range(K):
            if node[t, k] > m:
                m = node[t, k]
        logz += m
        for k in range(K):
            phi[t, k] = np.exp(node[t, k] - m)
    fa = np.empty((L, K))  # forward messages, each summing to 1
    fb = np.empty((L, K))  # backward messages, each summing to 1
    c = 0.0
    for k in range(K):
        c += phi[0, k]
    for k in range(K):
        fa[0, k] = phi[0, k] / c
    logz += np.log(c)
    for t in range(1, L):
        c = 0.0
        for b in range(K):
            s = 0.0
            for a in range(K):
                s += fa[t - 1, a] * E[a, b]
            s *= phi[t, b]
            fa[t, b] = s
            c += s
        if not c > _TINY:
            return False, 0.0
        logz += np.log(c)
        for b in range(K):
            fa[t, b] /= c
    for k in range(K):
        fb[L - 1, k] = 1.0 / K
    tmp = np.empty(K)
    for t in range(L - 2, -1, -1):
        for b in range(K):
            tmp[b] = phi[t + 1, b] * fb[t + 1, b]
        c = 0.0
        for a in range(K):
            s = 0.0
            for b in range(K):
                s += E[a, b] * tmp[b]
            fb[t, a] = s
            c += s
        if not c > _TINY:
            return False, 0.0
        for a in range(K):
            fb[t, a] /= c
    for t in range(L):
        c = 0.0
        for k in range(K):
            tmp[k] = fa[t, k] * fb[t, k]
            c += tmp[k]
        if not c > _TINY:
            return False, 0.0
        for k in range(K):
            node_marg[t, k] = tmp[k] / c
    for a in range(K):
        for b in range(K):
            edge_sum[a, b] = 0.0
    store = edge_marg.shape[0] > 0
    pair = np.empty((K, K))
    for t in range(L - 1):
        for b in range(K):
            tmp[b] = phi[t + 1, b] * fb[t + 1, b]
        c = 0.0
        for a in range(K):
            for b in range(K):
                v = fa[t, a] * E[a, b] * tmp[b]
                pair[a, b] = v
                c += v
        if not c > _TINY:
            return False, 0.0
        for a in range(K):
            for b in range(K):
                v = pair[a, b] / c
                edge_sum[a, b] += v
                if store:
                    edge_marg[t, a, b] = v
    return True, logz


@njit(cache=True, nogil=True)
def chain_marginals(node, trans, node_marg, edge_marg, edge_sum):
    """Forward-backward on one chain (probabilities, or log space when they underflow);
    returns ``log Z``.  Arguments as in :func:`chain_marginals_log`."""
    ok, logz = _marginals_prob(node, trans, node_marg, edge_marg, edge_sum)
    if ok:
        return logz
    return chain_marginals_log(node, trans, node_marg, edge_marg, edge_sum)


@njit(cache=True, nogil=True)
def chain_marginals_log(node, trans, node_marg, edge_marg, edge_sum):
    """Forward-backward on one chain in log space; returns ``log Z``.

    Parameters
    ----------
    node : (L, K) log-potentials of the positions.
    trans : (K, K) log-potentials, ``trans[a, b]`` for ``y_t = a, y_{t+1} = b``.
    node_marg : (L, K) output, ``P(y_t = k)``.
    edge_marg : (L - 1, K, K) output of ``P(y_t = a, y_{t+1} = b)``, or an array with
        0 rows to skip the per-position edge marginals.
    edge_sum : (K, K) output (overwritten), ``sum_t P(y_t = a, y_{t+1} = b)``: all that a
        shared transition table needs.
    """
    L, K = node.shape
    la = np.empty((L, K))  # log forward messages, each normalized to log-sum-exp 0
    lb = np.empty((L, K))  # log backward messages, likewise
    tmp = np.empty(K)
    pair = np.empty(K * K)
    for k in range(K):
        la[0, k] = node[0, k]
    logz = _lse(la[0])
    for k in range(K):
        la[0, k] -= logz
    for t in range(1, L):
        for b in range(K):
            for a in range(K):
                tmp[a] = la[t - 1, a] + trans[a, b]
            la[t, b] = node[t, b] + _lse(tmp)
        c = _lse(la[t])
        logz += c
        for b in range(K):
            la[t, b] -= c
    for k in range(K):
        lb[L - 1, k] = 0.0
    for t in range(L - 2, -1, -1):
        for a in range(K):
            for b in range(K):
                tmp[b] = trans[a, b] + node[t + 1, b] + lb[t + 1, b]
            lb[t, a] = _lse(tmp)
        c = _lse(lb[t])
        for a in range(K):
            lb[t, a] -= c
    for t in range(L):
        for k in range(K):
            tmp[k] = la[t, k] + lb[t, k]
        c = _lse(tmp)
        for k in range(K):
            node_marg[t, k] = np.exp(tmp[k] - c) if tmp[k] - c > _CUT else 0.0
    for a in range(K):
        for b in range(K):
            edge_sum[a, b] = 0.0
    store = edge_marg.shape[0] > 0
    for t in range(L - 1):
        for a in range(K):
            for b in range(K):
                pair[a * K + b] = la[t, a] + trans[a, b] + node[t + 1, b] + lb[t + 1, b]
        c = _lse(pair)
        for a in range(K):
            for b in range(K):
                p = np.exp(pair[a * K + b] - c) if pair[a * K + b] - c > _CUT else 0.0
                edge_sum[a, b] += p
                if store:
                    edge_marg[t, a, b] = p
    return logz

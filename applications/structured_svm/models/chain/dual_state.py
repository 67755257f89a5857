"""The block state of the chain-model SSVM dual: its record and how it is built.

:class:`ChainState` is the typed record the compiled kernels share (the data, the
block iterates, the parameters and the kernels' scratch arrays); :class:`ChainStateRef`
is the same record by reference, as the kernels take it (one pointer to its fields).
:func:`chain_state` builds the record from a data set (or from a warm start's
marginals), and :func:`_aggregate` sums the block state into the point ``x`` the
driver starts from.  The parametrization (node and transition marginals per block)
is described in :mod:`.dual_kernels`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.experimental import structref

from frankwolfe.compiled import structured_direction
from frankwolfe.compiled.records import RecordRefType

from .data import chain_data, token_feature_sums, transition_counts

__all__ = ["ChainState", "ChainStateRef", "chain_state"]


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
    arrays are shared with the record, not copied).  Made by :func:`.dual_kernels.chain_blocks`;
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
    :func:`.dual_kernels.chain_blocks`).

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

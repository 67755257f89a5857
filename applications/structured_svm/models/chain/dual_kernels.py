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

The record and its builder are in :mod:`.dual_state`, the oracle kernels in
:mod:`.dual_oracle`, the curvature, sync and commit kernels in :mod:`.dual_step`;
this module binds them to one state for the driver (:func:`chain_blocks`), with the
copies of the kernels' scratch that other threads run on (``fork``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe.compiled import CompiledBlocks

from .dual_oracle import _oracle_dense, _oracle_ids, _oracle_rows, chain_direction
from .dual_state import ChainState, ChainStateRef, _aggregate, _by_reference, chain_state
from .dual_step import chain_commit, chain_curvature, chain_describe, chain_moved, chain_sync

__all__ = ["ChainState", "ChainStateRef", "chain_state", "chain_blocks", "chain_direction",
           "chain_commit", "chain_curvature", "chain_describe", "chain_moved", "chain_sync"]


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

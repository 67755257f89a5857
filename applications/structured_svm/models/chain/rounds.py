"""The chain dual's batch block oracles: the vertices of a list of examples at one
gradient, as atoms for the Python engine (:class:`ChainBlockVertices`, also what a
cluster worker answers) and as stored labellings for compiled mini-batch rounds
(:func:`chain_rounds`)."""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from frankwolfe import Atom
from frankwolfe.compiled import CompiledBlocks, RoundKernels, inner_kernel

from ..base import dual_scale, dual_weights
from .batch import batch_dense
from .data import ChainData
from .dual_oracle import _add_pair_scores, _emit
from .dual_state import ChainState
from .dual_step import chain_moved_at
from .supports import chain_active_features
from .viterbi import (
    add_hamming,
    decode_dense,
    decode_ids,
    decode_ids_fm,
    features_dense,
    features_ids,
    max_sum,
    pair_weights,
    to_feature_major,
)

__all__ = ["ChainBlockVertices", "ChainRoundTable", "chain_rounds", "chain_recall",
           "chain_recall_gap"]


# -- block vertices of a list of examples (the dual domain's batch block oracle) ------

@njit(cache=True, nogil=True)
def _block_vertices(which, Xf, If, offsets, sizes, off, Yf, wt, fm, w, K, F, uses_ids, augment,
                    active, aoff, rest, scale, n, labels, loff, voff, g,
                    values):  # pragma: no cover - compiled
    """For each example ``which[k]``: its (loss-augmented) Viterbi labelling, written at
    ``labels[loff[k]:loff[k + 1]]``, and the block vertex ``(psi / (lam n), L / n)`` over
    the block's coordinates (``feature_support`` then ``l``), entries ``voff[k] ..
    voff[k + 1] - 1`` of the returned ``(pos, val)``.  The same decoders and feature
    maps as :class:`~.model.ChainModel` per example, so the same answers bit for bit
    (with ids the unary weights are read feature-major, ``wt``, when ``fm``: the same
    sums in the same order).

    With ``values`` (length ``which.size``) no vertex is built: ``values[k]`` gets the
    vertex's inner product with the full gradient ``g`` instead, summed over the tokens
    (building and sorting the vertices' entries was most of a certificate's time;
    benchmarks/README.md, "Measurements behind code choices")."""
    cap = 1024
    pos = np.empty(cap, dtype=np.int64)
    val = np.empty(cap)
    m = 0
    tail = K * F
    for k in range(which.size):
        i = which[k]
        lo, hi = off[i], off[i + 1]
        L = hi - lo
        yt = Yf[lo:hi] if augment else np.zeros(L, dtype=np.int64)
        if uses_ids:
            if fm:
                y, _ = decode_ids_fm(If[lo:hi], offsets, wt, w, K, F, yt, augment)
            else:
                y, _, _ = decode_ids(If[lo:hi], offsets, sizes, w, K, F, yt, augment)
        else:
            y, _ = decode_dense(Xf[lo:hi], w, K, yt, augment)
        lo_k = loff[k]
        for t in range(L):  # not a slice assignment (see the comment in batch.py)
            labels[lo_k + t] = y[t]
        wrong = 0
        for t in range(L):
            if y[t] != Yf[lo + t]:
                wrong += 1
        if values.size:
            values[k] = _vertex_value(Xf, If, offsets, lo, hi, Yf, y, K, F, uses_ids, g) * scale
            if wrong:
                values[k] += g[g.size - 1] * ((wrong / L) / n)
            continue
        if uses_ids:
            idx, v, _ = features_ids(If[lo:hi], offsets, sizes, Yf[lo:hi], y, True, K, F)
        else:
            idx, v = features_dense(Xf[lo:hi], Yf[lo:hi], y, True, K)
        need = m + idx.size + 1
        if need > cap:
            while cap < need:
                cap *= 2
            pos2 = np.empty(cap, dtype=np.int64)
            val2 = np.empty(cap)
            for e in range(m):  # element loops, not slices: see the comment in batch.py
                pos2[e] = pos[e]
                val2[e] = val[e]
            pos, val = pos2, val2
        act = active[aoff[i]:aoff[i + 1]]
        na = act.size
        for e in range(idx.size):
            c = idx[e]
            if c < tail:  # unary k * F + f sits at k * na + rank(f) in the support
                pos[m] = (c // F) * na + np.searchsorted(act, c % F)
            else:
                pos[m] = K * na + (c - tail)
            val[m] = v[e] * scale
            m += 1
        if wrong:
            pos[m] = K * na + rest  # the l coordinate, last of the block
            val[m] = (wrong / L) / n
            m += 1
        voff[k + 1] = m
    return pos[:m].copy(), val[:m].copy()


@njit(cache=True, nogil=True, inline="always")
def _vertex_value(Xf, If, offsets, lo, hi, Yf, y, K, F, uses_ids, g):  # pragma: no cover
    """``<g, phi(x_i, y_i) - phi(x_i, y)>`` over the joint feature coordinates (the
    layout of :func:`.viterbi.features_ids` / ``features_dense``), token by token."""
    s = 0.0
    for t in range(hi - lo):
        a, b = Yf[lo + t], y[t]
        if a == b:
            continue
        if uses_ids:
            for j in range(If.shape[1]):
                v = If[lo + t, j]
                if v != 0:
                    f = offsets[j] + v - 1
                    s += g[a * F + f] - g[b * F + f]
        else:
            for f in range(F):
                s += (g[a * F + f] - g[b * F + f]) * Xf[lo + t, f]
    o = K * F
    L = hi - lo
    s += g[o + Yf[lo]] - g[o + y[0]]
    s += g[o + K + Yf[hi - 1]] - g[o + K + y[L - 1]]
    for t in range(L - 1):
        s += g[o + 2 * K + Yf[lo + t] + K * Yf[lo + t + 1]] - g[o + 2 * K + y[t] + K * y[t + 1]]
    return s


_NO_VALUES = np.zeros(0)  # _block_vertices builds the vertices


class _Followed(NamedTuple):
    """The point :meth:`ChainBlockVertices.follow` keeps up with, its unary part
    feature-major (ids only) and the round's pair weights (``2K + K^2``), written in
    place."""

    point: np.ndarray
    gT: np.ndarray
    w: np.ndarray


class ChainBlockVertices:
    """The dual domain's batch block oracle for a chain model (see
    :meth:`~frankwolfe.compiled.BlockDomainHooks.batch_block_oracle`):
    the vertices of blocks ``which`` at one gradient ``(lam w, -1)`` in one numba call
    that releases the GIL, so that threads answering disjoint chunks run in parallel.
    Answers equal :meth:`~...dual.SSVMBlockOracle.extreme_point` block by block.

    Parameters
    ----------
    data : ChainData
        The training set, with its labels.
    lam : float
    source : (ChainModel, source), optional
        Where ``data`` came from: an example source (``len(source)`` examples,
        ``source.examples(start, stop)`` giving the same ``(X, Y)`` in every process,
        e.g. :class:`~...datasets.ConllLike`) and the model that flattened them.  A
        piece (:meth:`shard`) then pickles as its source and its range, and is built
        from them where it is unpickled: a cluster worker draws or reads its own
        examples, and the client ships a few kilobytes instead of the examples.
    """

    def __init__(self, data: ChainData, lam: float, source: tuple[Any, Any] | None = None
                 ) -> None:
        self.data = data
        self.rest = data.d - data.K * data.F  # the coordinates every block shares
        self.lam = float(lam)
        self.n = data.n
        self.scale = 1.0 / (self.lam * self.n)
        self._active: tuple[np.ndarray, np.ndarray] | None = None
        self._source = source
        self._range = (0, data.n)  # the examples of the source these blocks are
        self._unfollow()

    def __copy__(self) -> ChainBlockVertices:  # a shallow copy, never rebuilt from a source
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self._source is None:
            return super().__reduce_ex__(protocol)
        model, source = self._source
        return _piece_from_source, (model, source, *self._range, self.lam, self.n)

    @property
    def active(self) -> tuple[np.ndarray, np.ndarray]:
        """The blocks' active unary features, flat, and their offsets: a block's vertex
        lives on ``K`` shifted copies of them, then the shared coordinates and ``l``.
        Found on first use: the rows of compiled rounds (:meth:`rows`, what a cluster
        worker answers) read none, and the whole supports, ``K`` copies each, took
        more memory than the data (benchmarks/README.md, "Measurements behind code
        choices")."""
        if self._active is None:
            self._active = chain_active_features(self.data)
        return self._active

    def _unfollow(self) -> None:
        self._follow: _Followed | None = None

    def follow(self, gradient: np.ndarray, changed: Any = None) -> None:
        """Keep up with ``gradient``, a vector changed in place only at ``changed`` (an
        index array or a slice; None: anywhere) since the last call: with attribute
        ids the feature-major copy of its unary part is updated at the changed
        coordinates only, and :meth:`rows` at that vector reads it, divided by the
        scale where the oracles read it (as the in-process round kernels do: the same
        quotients), instead of deriving the weights from the whole vector each round
        (what a :class:`~frankwolfe.DaskExecutor` worker calls after each point
        update)."""
        data = self.data
        if not data.uses_ids:
            return
        K, F = data.K, data.F
        o = K * F
        kept = self._follow
        if changed is None or kept is None or gradient is not kept.point:
            self._follow = _Followed(gradient, to_feature_major(gradient[:o], K, F),
                                     np.zeros(data.d - o))
        else:
            idx = np.arange(changed.start, changed.stop) if isinstance(changed, slice) \
                else np.asarray(changed)
            idx = idx[idx < o]
            k, f = np.divmod(idx, F)
            kept.gT[f * K + k] = gradient[idx]

    def __call__(self, which: Any, gradient: np.ndarray) -> list[Atom]:
        which = np.asarray(which, dtype=np.int64)
        labels, loff, voff, pos, val = self._vertices(which, np.asarray(gradient, dtype=float),
                                                      _NO_VALUES)
        sizes = np.diff(self.active[1]) * self.data.K + self.rest + 1  # block dimensions
        return [Atom.sparse(pos[voff[k]:voff[k + 1]], val[voff[k]:voff[k + 1]],
                            (int(sizes[i]),), key=tuple(labels[loff[k]:loff[k + 1]].tolist()))
                for k, i in enumerate(which.tolist())]

    def values(self, which: Any, gradient: np.ndarray) -> np.ndarray:
        """The oracles' values ``<g_i, s_i>`` of blocks ``which`` at ``gradient``, without
        building their vertices (what a certificate that keeps no atoms needs: see
        :meth:`~frankwolfe.ProductDomain.batch_block_oracle`); equal to the vertices'
        inner products up to rounding (another order of summation)."""
        which = np.asarray(which, dtype=np.int64)
        out = np.zeros(which.size)
        if which.size:
            self._vertices(which, np.asarray(gradient, dtype=float), out)
        return out

    def _vertices(self, which: np.ndarray, gradient: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        from frankwolfe.errors import OracleError

        data = self.data
        gl = float(gradient[-1])
        if gl > 0:
            raise OracleError(f"SSVMBlockOracle: the l-component of the direction must be "
                              f"<= 0 (the dual gradient has -1 there), got {gl!r}")
        augment = gl < 0
        w = dual_weights(gradient, self.lam)
        lens = data.off[which + 1] - data.off[which]
        loff = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
        labels = np.empty(int(loff[-1]), dtype=np.int64)
        voff = np.zeros(which.size + 1, dtype=np.int64)
        # the feature-major copy costs K F: it pays when the blocks read about F ids
        fm = data.uses_ids and int(loff[-1]) * data.If.shape[1] >= data.F
        wt = to_feature_major(w, data.K, data.F) if fm else w
        active, aoff = self.active
        pos, val = _block_vertices(which, data.Xf, data.If, data.offsets, data.sizes, data.off,
                                   data.Yf, wt, fm, w, data.K, data.F, data.uses_ids, augment,
                                   active, aoff, self.rest, self.scale,
                                   float(self.n), labels, loff, voff, gradient, values)
        return labels, loff, voff, pos, val

    def rows(self, which: Any, gradient: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The round table rows of blocks ``which`` at ``gradient`` (what
        :func:`chain_rounds`' ``store`` takes): their labellings, concatenated in the order
        of ``which`` (the smallest integer type that holds ``K`` labels), and their
        normalized Hamming losses; decoded by the round kernels' decoders at the
        weights derived from ``gradient`` as their ``point`` does, so the same labellings
        bit for bit (what a :class:`~frankwolfe.DaskExecutor` worker answers)."""
        data = self.data
        K, F, d = data.K, data.F, data.d
        kept = self._follow
        if kept is not None and gradient is kept.point and gradient[d] <= 0:
            w, gt, s, augment = _split_weights(gradient, kept.gT, kept.w, self.lam, K * F, d)
        else:
            w, gt, augment = _round_weights(np.asarray(gradient, dtype=float), self.lam, K, F,
                                            d, data.uses_ids)
            s = 1.0
        which = np.asarray(which, dtype=np.int64)
        labels = np.empty(int(data.off[-1]), dtype=np.int64)
        loss = np.empty(data.n)
        _round_vertices(which, data.Xf, data.If, data.offsets, data.off, data.Yf, gt, s, w,
                        K, F, data.uses_ids, augment, labels, loss)
        return labels[_block_rows(data.off, which)].astype(_label_type(data.K)), loss[which]

    def shard(self, blocks: range) -> ChainBlockVertices:
        """The oracle of the contiguous blocks ``blocks`` alone, holding only their
        examples and answering them as blocks ``0, ..., len(blocks) - 1`` (what one
        cluster worker keeps: :class:`~frankwolfe.DaskExecutor`)."""
        a, b = blocks.start, blocks.stop
        if blocks.step != 1 or not 0 <= a <= b <= self.data.n:
            raise ValueError(f"ChainBlockVertices.shard: blocks must be a contiguous range "
                             f"within range(0, {self.data.n}), got {blocks!r}")
        out = copy.copy(self)  # lam, n and the 1/(lam n) scale stay the whole set's
        out._unfollow()
        out.data = self.data.subset(a, b)
        if self._active is not None:  # else found by the piece itself, if ever asked
            act, aoff = self._active
            out._active = (act[aoff[a]:aoff[b]], aoff[a:b + 1] - aoff[a])
        out._range = (self._range[0] + a, self._range[0] + b)
        return out


def _piece_from_source(model: Any, source: Any, start: int, stop: int, lam: float, n: int
                       ) -> ChainBlockVertices:
    """The batch oracle of examples ``start .. stop - 1`` of ``source`` within a set of
    ``n`` (what a pickled source-backed piece is rebuilt from: see ChainBlockVertices)."""
    X, Y = source.examples(start, stop)
    piece = ChainBlockVertices(ChainData(model, X, Y), lam, (model, source))
    piece.n = int(n)  # lam, n and the 1/(lam n) scale are the whole set's
    piece.scale = 1.0 / (piece.lam * piece.n)
    piece._range = (int(start), int(stop))
    return piece


# -- compiled mini-batch rounds: the vertices as stored labellings ------------------------

class ChainRoundTable(NamedTuple):
    """The vertex of every block from its last round oracle (a typed record): labelling
    ``labels[off[i]:off[i + 1]]`` and its normalized Hamming loss ``loss[i]``."""

    labels: np.ndarray
    loss: np.ndarray


def _round_vertices(which: np.ndarray, Xf: np.ndarray, If: np.ndarray, offsets: np.ndarray,
                    off: np.ndarray, Yf: np.ndarray, gt: np.ndarray, s: float, w: np.ndarray,
                    K: int, F: int, uses_ids: bool, augment: bool, labels: np.ndarray,
                    loss: np.ndarray) -> None:
    """The round's decodings of blocks ``which`` (threads call it on disjoint blocks): the
    labellings at their token rows of ``labels``, their normalized Hamming losses in
    ``loss[which]``.  Dense rows decode on the batch decoder
    (:func:`.batch.batch_dense`, which the evaluations compile anyway: a first
    mini-batch fit then compiles one decoder, not two); ids on :func:`_round_ids`."""
    if uses_ids:
        _round_ids(which, If, offsets, off, Yf, gt, s, w, K, augment, labels, loss)
        return
    if which.size == 0:
        return
    lens = off[which + 1] - off[which]
    Lmax = int(lens.max(initial=0))
    batch_dense(which, Xf, off, Yf, w, K, F, augment, labels, np.empty(off.size - 1),
                _NO_VALUES, np.empty((Lmax, K)), np.empty(Lmax, dtype=np.int64), np.empty(K),
                np.empty(2 * K + K * K))
    rows = _block_rows(off, which)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    wrong = np.add.reduceat(labels[rows] != Yf[rows], starts, dtype=float)
    loss[which] = wrong / lens


@njit(cache=True, nogil=True)
def _round_ids(which, If, offsets, off, Yf, gt, s, w, K, augment, labels,
               loss):  # pragma: no cover - compiled
    """:func:`_round_vertices` for ids: the unary weights are ``gt / s`` (``gt``
    feature-major), divided where they are read: each thread divides what its examples
    use, and the quotients are those of ``w = g / s`` (the same labellings as
    :class:`ChainBlockVertices`).

    The gather reads row views (``G[f]``, ``unary[t]``), as :func:`.viterbi.unary_ids_fm`
    does: with flat offsets (``gt[f K + c]``) LLVM left the loop over ``c`` scalar, and
    the kernel was much slower (benchmarks/README.md, "Measurements behind code
    choices").

    ``w`` may hold only the pair weights (``2K + K^2``, what the Viterbi reads:
    :func:`_split_weights`) or all ``d`` weights: the pair block is its tail."""
    Fw = (w.size - 2 * K - K * K) // K  # the Viterbi reads w[K Fw:]
    G = gt[:gt.size - gt.size % K].reshape((gt.size // K, K))  # gt.size = F K
    # the decoding of viterbi._viterbi (the same operations in the same order), on the
    # kernels the pass already compiled (pair_weights, max_sum) and one scratch for all
    # examples: no second decoder stack on a cold first fit
    Lmax = 0
    for k in range(which.size):
        Lmax = max(Lmax, off[which[k] + 1] - off[which[k]])
    S = np.empty((Lmax, K))
    y = np.empty(Lmax, dtype=np.int64)
    new = np.empty(K)
    wp = np.empty(2 * K + K * K)
    pair_weights(w, K * Fw, K, 1.0, wp)
    for k in range(which.size):
        i = which[k]
        lo = off[i]
        L = off[i + 1] - lo
        for t in range(L):
            u = S[t]
            for c in range(K):
                u[c] = 0.0
            for j in range(If.shape[1]):
                v = If[lo + t, j]
                if v != 0:
                    row = G[offsets[j] + v - 1]
                    for c in range(K):
                        u[c] += row[c] / s
        if augment:
            add_hamming(S, L, K, Yf, lo)
        max_sum(S, L, wp, K, new, y)
        wrong = 0
        for t in range(L):
            labels[lo + t] = y[t]
            if y[t] != Yf[lo + t]:
                wrong += 1
        loss[i] = wrong / L


@njit(cache=True, nogil=True, inline="always")
def _unary_at(Xf, If, offsets, K, F, uses_ids, row, k, g, gT, fm):  # pragma: no cover
    """``<g[k F : (k+1) F], features of token row>`` (summed as the model's kernels); with
    ``fm`` the unary part of ``g`` is read from its feature-major copy ``gT`` (the same
    numbers, the ``K`` of an attribute in one cache line or two)."""
    s = 0.0
    if uses_ids and fm:
        for j in range(If.shape[1]):
            v = If[row, j]
            if v != 0:
                s += gT[(offsets[j] + v - 1) * K + k]
    elif uses_ids:
        for j in range(If.shape[1]):
            v = If[row, j]
            if v != 0:
                s += g[k * F + offsets[j] + v - 1]
    else:
        base = k * F
        for f in range(F):
            s += g[base + f] * Xf[row, f]
    return s


@njit(cache=True, nogil=True)
def chain_recall(state, table, i, g, want, idx, val):  # pragma: no cover - compiled
    """The round kernel ``recall`` (see :class:`frankwolfe.compiled.RoundKernels`):
    :func:`chain_recall_gap`, and with ``want`` the direction."""
    gap, score = chain_recall_gap(state, table, i, g)
    nnz = 0
    if want:
        ys, lbar, d, n = state.ys, state.lbar, state.d, state.n
        nnz = _emit(state, i, ys, idx, val, state.scale)
        idx[nnz] = d
        val[nnz] = (state.info[0] - lbar[i]) / n
        nnz += 1
    return nnz, gap, score


@inner_kernel
def chain_load(state, table, i):  # pragma: no cover - compiled
    """The round kernel ``load`` (see :class:`frankwolfe.compiled.RoundKernels`): block
    ``i``'s labelling stored in ``table`` becomes the vertex that ``curvature`` /
    ``describe`` / ``commit`` read (as :func:`chain_recall_gap` leaves it), unscored."""
    lo = state.off[i]
    L = state.off[i + 1] - lo
    for t in range(L):
        state.ys[t] = table.labels[lo + t]
    state.info[0] = table.loss[i]
    state.info[1] = L


@inner_kernel
def chain_recall_gap(state, table, i, g):  # pragma: no cover - compiled
    """The round kernel ``recall_gap`` (see
    :class:`frankwolfe.compiled.RoundKernels`): block ``i``'s gap and
    vertex score at ``g`` for the labelling stored in ``table``, as the chain kernels'
    ``direction`` computes them for the labelling its oracle finds, leaving it where
    their ``curvature`` / ``describe`` / ``commit`` read it.  The unary scores are
    needed only at the labels the vertex, the truth and the marginals use (a few of
    ``K`` per token): no Viterbi, no full score table."""
    Xf, If, offsets = state.Xf, state.If, state.offsets
    off, Yf, mu, lbar = state.off, state.Yf, state.mu, state.lbar
    ys, info = state.ys, state.info
    Tf, tlist, tcnt = state.Tf, state.tlist, state.tcnt
    lam, n = state.lam, state.n
    K, F, d, uses_ids = state.K, state.F, state.d, state.uses_ids
    lo = off[i]
    L = off[i + 1] - lo
    for t in range(L):
        ys[t] = table.labels[lo + t]
    loss_s = table.loss[i]
    info[0] = loss_s
    info[1] = L
    o = K * F
    o_tr = o + 2 * K
    s_true = g[o + Yf[lo]] + g[o + K + Yf[lo + L - 1]]
    s_star = g[o + ys[0]] + g[o + K + ys[L - 1]]
    s_bar = 0.0
    fm = state.mode[0] == 1
    for t in range(L):
        yt, ya = Yf[lo + t], ys[t]
        for k in range(K):
            m = mu[lo + t, k]
            if m != 0.0 or k == yt or k == ya:
                u = _unary_at(Xf, If, offsets, K, F, uses_ids, lo + t, k, g, state.gT, fm)
                if k == yt:
                    s_true += u
                if k == ya:
                    s_star += u
                s_bar += m * u
    s_true, s_star, s_bar = _add_pair_scores(g, Yf, ys, mu, Tf, tlist, tcnt, i, lo, L, K, o,
                                             o_tr, s_true, s_star, s_bar)
    gl = g[d]
    ln = lam * n
    score = (s_true - s_star) / ln + gl * loss_s / n
    gap = (s_star - s_bar) / ln + gl * (lbar[i] - loss_s) / n
    return gap, score


def _round_weights(g: np.ndarray, lam: float, K: int, F: int, d: int, uses_ids: bool
                   ) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(w, gt, augment)``: the weights ``w = g_w / s`` (``s = lam (-g_l)``, or 1 when
    ``g_l = 0``) the round's oracles decode at and for ids their unary part
    feature-major (``gt``, else empty)."""
    gl = float(g[d])
    if gl > 0:
        from frankwolfe.errors import OracleError

        raise OracleError(f"SSVMBlockOracle: the l-component of the direction must be "
                          f"<= 0 (the dual gradient has -1 there), got {gl!r}")
    w = dual_weights(g, lam)
    return w, (to_feature_major(w, K, F) if uses_ids else np.zeros(0)), gl < 0


def _split_weights(g: np.ndarray, gT: np.ndarray, w: np.ndarray, lam: float, o: int, d: int
                   ) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """``(w, gT, s, augment)`` at ``g`` (``g_l <= 0``) for the decoders, given ``gT``, a
    feature-major copy of ``g``'s unary part kept in sync: the pair weights
    ``g[o:d] / s`` written into ``w`` (length ``d - o``), the unary ones ``gT`` left for
    the oracles to divide by ``s`` where they read them (the same quotients as
    ``w = g / s``)."""
    gl = float(g[d])
    s = dual_scale(gl, lam)
    np.divide(g[o:d], s, out=w)
    return w, gT, s, gl < 0


def _block_rows(off: np.ndarray, which: np.ndarray) -> np.ndarray:
    """The token positions of blocks ``which``, concatenated in that order."""
    lens = off[which + 1] - off[which]
    starts = np.repeat(off[which] - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return starts + np.arange(int(lens.sum()))


def _label_type(K: int) -> np.dtype:
    return np.dtype(np.int8 if K <= 127 else np.int16 if K <= 32767 else np.int32)


def chain_rounds(blocks: CompiledBlocks, state: ChainState) -> RoundKernels:
    """The :class:`~frankwolfe.compiled.RoundKernels` of the chain
    kernels ``blocks`` (:func:`.dual_kernels.chain_blocks`): a round's oracles decode
    at the weights ``w = g_w / (lam (-g_l))``, computed once per round, with the same
    decoders as :class:`ChainBlockVertices` (so the same labellings); ``state`` is the
    record ``blocks`` were made from (:func:`.dual_kernels.chain_state`)."""
    lam = state.lam
    K, F, d, uses_ids = state.K, state.F, state.d, state.uses_ids
    table = ChainRoundTable(np.zeros(state.Yf.size, dtype=np.int64),
                            np.zeros(state.off.size - 1))
    o = K * F

    def point(g: np.ndarray) -> tuple:
        if g[d] > 0 or not uses_ids or state.mode[0] != 1:
            wr, gt, augment = _round_weights(g, lam, K, F, d, uses_ids)
            return wr, gt, 1.0, augment
        # the kernels' feature-major copy of g (the fused path, synced), divided where
        # the oracles read it (in parallel); the Viterbi reads only the pair weights, a
        # round's own (asynchronous rounds' oracles run while the next point is taken).
        # Not a d-vector: np.zeros(d) every round costs a noticeable share of a pass's
        # steps (glibc serves so large a block from the heap once the first is freed,
        # and clears it) (benchmarks/README.md, "Measurements behind code choices")
        return _split_weights(g, state.gT, np.empty(d - o), lam, o, d)

    def feature_major(index: np.ndarray) -> np.ndarray:
        """Where gradient coordinates ``index`` sit in gT (the unary ones)."""
        k, f = np.divmod(index[index < o], F)
        return f * K + k

    def snapshot(p: tuple, copy: Any) -> tuple:
        # the steps keep gT current: asynchronous rounds decode at the core's copy, kept
        # current where the steps touched g (a whole copy every round costs what d
        # coordinates cost, not what the steps touched)
        # (benchmarks/README.md, "Measurements behind code choices")
        w, gt, s, augment = p
        return (w, copy(gt, feature_major), s, augment) if gt is state.gT else p

    def vertices(which: Any, p: tuple) -> None:
        w, gt, s, augment = p
        _round_vertices(np.asarray(which, dtype=np.int64), state.Xf, state.If, state.offsets,
                        state.off, state.Yf, gt, s, w, K, F, uses_ids, augment, table.labels,
                        table.loss)

    def store(which: Any, rows: tuple) -> None:
        labels, loss = rows
        which = np.asarray(which, dtype=np.int64)
        table.labels[_block_rows(state.off, which)] = labels
        table.loss[which] = loss

    return RoundKernels(point, vertices, chain_recall, table, store, snapshot,
                        recall_gap=chain_recall_gap, load=chain_load, moved_at=chain_moved_at)

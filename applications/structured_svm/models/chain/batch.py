"""Batch oracles of the chain model over a whole data set (threads over examples): what
:meth:`~.model.ChainModel.batch_oracles` returns and the decoder the rounds share."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from frankwolfe.parallel.threads import cpu_count, effective_n_jobs

from .data import ChainData
from .viterbi import (
    add_hamming,
    max_sum,
    pair_weights,
    to_feature_major,
    unary_dense,
    unary_ids_fm,
)

__all__ = ["chain_batch_decode", "chain_batch_oracle", "ChainBatchOracles", "batch_dense"]


# Sequences `which` per call, threads over chunks (_over_threads): numba's parallel=True
# would compile each kernel through its parfor pipeline, several times slower to compile
# than the loop (benchmarks/README.md, "First call").
# Built on the kernels the compiled BCFW pass already compiled (unary scores, pair
# weights, max_sum), in the order of viterbi._viterbi, so the same labellings and values
# bit for bit as ChainModel's per-example decoders; the true labelling's score comes
# from the same unary scores.  A first fit then compiles no second decoder stack
# (decode_*, _viterbi, score_*), a large part of a cold fit's compilation.
# Element loops, not ``labels[a:b] = y``: an array assigned to a slice compiles numba's
# shape-mismatch error, with its string formatting, which costs a cold fit's compile
# more than the loop (benchmarks/README.md, "Measurements behind code choices").
@njit(cache=True, nogil=True, inline="always")
def _finish(S, i, a, L, w, Yf, K, F, wp, new, y, augment, labels, best,
            true):  # pragma: no cover - compiled
    """Sequence ``i`` (tokens ``a .. a + L - 1``) from its unary scores ``S``: the true
    labelling's score (when ``true`` has room), the loss augmentation, the decoding."""
    o = K * F
    if true.size > 0:
        s = w[o + Yf[a]] + w[o + K + Yf[a + L - 1]]
        for t in range(L):
            s += S[t, Yf[a + t]]
        for t in range(L - 1):
            s += w[o + 2 * K + Yf[a + t] + K * Yf[a + t + 1]]
        true[i] = s
    if augment:
        add_hamming(S, L, K, Yf, a)
    best[i] = max_sum(S, L, wp, K, new, y)
    for t in range(L):  # not a slice assignment: see the comment above _finish
        labels[a + t] = y[t]


# One kernel per data kind, chosen in Python: a first call compiles only its own unary
# code.  Whole scratch rows, rows 0 .. L - 1 used: the argument types of the pass
# oracle's unary kernels, so these compile once for both.  The scratch comes from the
# caller: np.empty compiled in a kernel adds to a first fit's compilation
# (benchmarks/README.md, "Measurements behind code choices").
@njit(cache=True, nogil=True)
def batch_dense(which, Xf, off, Yf, w, K, F, augment, labels, best, true, S, y, new,
                wp):  # pragma: no cover - compiled
    """(Loss-augmented) Viterbi of sequences ``which`` of dense token rows: labels (flat,
    at the sequences' own token rows), optimal values in ``best[i]``; with ``true`` of
    size n also ``<w, phi(x_i, y_i)>`` (labels ``Yf`` in range, checked by ChainData).
    Scratch: ``S`` (Lmax x K), ``y`` (Lmax), ``new`` (K), ``wp`` (``2K + K^2``, the pair
    weights of ``w``: :func:`.viterbi.pair_weights`).  Also the mini-batch rounds'
    decoder for dense rows (:mod:`.rounds`)."""
    pair_weights(w, K * F, K, 1.0, wp)
    for k in range(which.size):
        i = which[k]
        a = off[i]
        L = off[i + 1] - a
        unary_dense(Xf[a:a + L], w, K, S)
        _finish(S, i, a, L, w, Yf, K, F, wp, new, y, augment, labels, best, true)


@njit(cache=True, nogil=True)
def _batch_ids(which, If, offsets, off, Yf, wt, w, K, F, augment, labels, best, true, S, y,
               new, wp):  # pragma: no cover - compiled
    """:func:`batch_dense` for attribute ids (unary weights read feature-major, ``wt``)."""
    pair_weights(w, K * F, K, 1.0, wp)
    for k in range(which.size):
        i = which[k]
        a = off[i]
        L = off[i + 1] - a
        unary_ids_fm(If[a:a + L], offsets, wt, K, S)
        _finish(S, i, a, L, w, Yf, K, F, wp, new, y, augment, labels, best, true)


@njit(cache=True, nogil=True)
def _psi_sum(Xf, If, offsets, off, Yf, labels, K, F, uses_ids, out):  # pragma: no cover
    """``out += sum_i phi(x_i, y_i) - phi(x_i, labels_i)`` (dense ``out`` of length d)."""
    n = off.size - 1
    o = K * F
    for i in range(n):
        lo, hi = off[i], off[i + 1]
        for t in range(lo, hi):
            a, b = Yf[t], labels[t]
            if a == b:
                continue
            if uses_ids:
                for j in range(If.shape[1]):
                    v = If[t, j]
                    if v != 0:
                        f = offsets[j] + v - 1
                        out[a * F + f] += 1.0
                        out[b * F + f] -= 1.0
            else:
                for f in range(F):
                    out[a * F + f] += Xf[t, f]
                    out[b * F + f] -= Xf[t, f]
        out[o + Yf[lo]] += 1.0
        out[o + labels[lo]] -= 1.0
        out[o + K + Yf[hi - 1]] += 1.0
        out[o + K + labels[hi - 1]] -= 1.0
        for t in range(lo, hi - 1):
            out[o + 2 * K + Yf[t] + K * Yf[t + 1]] += 1.0
            out[o + 2 * K + labels[t] + K * labels[t + 1]] -= 1.0


def _threads(n_jobs: int | None) -> int:
    if n_jobs is None or n_jobs == 1:
        return 1
    return min(effective_n_jobs(n_jobs), cpu_count())  # no more threads than cores


def _over_threads(kernel: Any, n: int, n_jobs: int | None, *args: Any) -> None:
    """``kernel(lo, hi, *args)`` over ``[0, n)``: in one call, or in a few chunks per
    thread of ``n_jobs`` (the kernels release the GIL; chunks balance uneven lengths)."""
    t = _threads(n_jobs)
    if t == 1 or n < 2:
        kernel(0, n, *args)
        return
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, n, min(n, 4 * t) + 1).astype(np.int64)
    with ThreadPoolExecutor(t) as pool:
        for f in [pool.submit(kernel, int(a), int(b), *args)
                  for a, b in zip(bounds[:-1], bounds[1:]) if b > a]:
            f.result()


def chain_batch_decode(data: ChainData, w: np.ndarray, augment: bool, n_jobs: int | None = 1,
                       true: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Loss-augmented) Viterbi on every sequence: flat labels and the optimal values;
    with ``true`` (length n) also the scores of the true labellings, written there."""
    labels = np.empty(int(data.off[-1]), dtype=np.int64)
    best = np.empty(data.n)
    if (augment or true is not None) and data.Yf.size == 0:
        raise ValueError("loss-augmented decoding needs the true labellings")
    Yf = data.Yf if data.Yf.size else np.zeros(labels.size, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=float)
    K, F, Lmax = data.K, data.F, data.Lmax
    tail = (K, F, augment, labels, best, np.zeros(0) if true is None else true)
    kernel: Any  # one of two numba kernels, each with its own arguments
    if data.uses_ids:
        head: tuple = (data.If, data.offsets, data.off, Yf,
                       to_feature_major(w, K, F), w)
        kernel = _batch_ids
    else:
        head, kernel = (data.Xf, data.off, Yf, w), batch_dense

    def chunk(lo: int, hi: int) -> None:  # its own scratch per thread
        kernel(np.arange(lo, hi), *head, *tail, np.empty((Lmax, K)),
               np.empty(Lmax, dtype=np.int64), np.empty(K), np.empty(2 * K + K * K))

    _over_threads(chunk, data.n, n_jobs)
    return labels, best


def chain_batch_oracle(data: ChainData, w: np.ndarray, n_jobs: int | None = 1,
                       psi: bool = True) -> dict[str, Any]:
    """One loss-augmented pass: per-example hinge terms, losses, ``sum psi`` and labels.

    Returns a dict with ``labels`` (flat), ``hinge`` (``max_y L + <w, phi(y)> - <w,
    phi(y_i)>`` per example), ``loss`` (per example) and, with ``psi``, ``psi_sum``
    (dense length d).
    """
    true = np.empty(data.n)
    labels, best = chain_batch_decode(data, w, True, n_jobs, true)
    batch = ChainBatchOracles(data)
    out = {"labels": labels, "hinge": best - true, "loss": batch._losses(labels)}
    if psi:
        out["psi_sum"] = batch._psi(labels)
    return out


class ChainBatchOracles:
    """The chain model's batch oracles over one data set (what
    :meth:`~..base.StructuredModel.batch_oracles` returns; see :mod:`...oracles`).

    Parameters
    ----------
    data : ChainData
        The flattened data set (labels may be absent: then only :meth:`predict`).
    """

    def __init__(self, data: ChainData) -> None:
        self.data = data

    def _psi(self, labels: np.ndarray) -> np.ndarray:
        data = self.data
        psi = np.zeros(data.d)
        _psi_sum(data.Xf, data.If, data.offsets, data.off, data.Yf, labels, data.K, data.F,
                 data.uses_ids, psi)
        return psi

    def _losses(self, labels: np.ndarray) -> np.ndarray:
        data = self.data
        wrong = (labels != data.Yf).astype(float)
        return np.add.reduceat(wrong, data.off[:-1]) / np.diff(data.off)

    def psi_loss(self, w: np.ndarray, augment: bool, n_jobs: int | None
                 ) -> tuple[np.ndarray, float, list[np.ndarray]]:
        """``(sum_i psi_i(y*_i), sum_i L_i(y*_i), [y*_i])``."""
        labels, _ = chain_batch_decode(self.data, w, augment, n_jobs)
        return (self._psi(labels), float(np.sum(self._losses(labels))),
                np.split(labels, self.data.off[1:-1]))

    def primal_terms(self, w: np.ndarray, n_jobs: int | None
                     ) -> tuple[np.ndarray, float]:
        """``(hinge per example, sum_i L_i(y*_i))`` of the loss-augmented labellings
        ``y*`` (no ``sum psi``: a primal value needs none, and a first fit then compiles
        no kernel for it)."""
        out = chain_batch_oracle(self.data, w, n_jobs, psi=False)
        return out["hinge"], float(out["loss"].sum())

    def subset(self, start: int, stop: int) -> ChainBatchOracles:
        """The batch oracles of sequences ``start, ..., stop - 1`` alone (views of this
        data set's rows: what timing a sample of an evaluation asks, see
        :func:`...oracles.evaluation_seconds`)."""
        return ChainBatchOracles(self.data.subset(start, stop))

    def predict(self, w: np.ndarray, n_jobs: int | None) -> list[np.ndarray]:
        """The decoding of every sequence."""
        labels, _ = chain_batch_decode(self.data, w, False, n_jobs)
        return np.split(labels, self.data.off[1:-1])

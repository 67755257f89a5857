"""The feature supports of a whole chain data set in two passes.

Block ``i`` of the SSVM dual lives on ``feature_support(x_i)``: on CoNLL-2000
8936 supports of about 7800 coordinates.  One ``np.unique`` per sentence took
seconds of a short ``time_limit`` (benchmarks/README.md, "Measurements behind code
choices"); here the active features of every sentence are found with a stamp array
and the supports are written into one array, the blocks' supports being views of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .data import ChainData

__all__ = ["chain_active_features", "chain_feature_supports"]


@njit(cache=True, nogil=True)
def _active_ids(If, off, offsets, F):  # pragma: no cover - compiled
    """Sorted active unary features of every sequence of attribute ids (``If``: tokens
    by templates, id 0 absent), flat, and their offsets."""
    n = off.size - 1
    act = np.empty(If.size, dtype=np.int64)
    act_off = np.zeros(n + 1, dtype=np.int64)
    stamp = np.zeros(F, dtype=np.int64)
    c = 0
    for i in range(n):
        start = c
        for t in range(off[i], off[i + 1]):
            for j in range(If.shape[1]):
                v = If[t, j]
                if v > 0:
                    f = offsets[j] + v - 1
                    if stamp[f] != i + 1:
                        stamp[f] = i + 1
                        act[c] = f
                        c += 1
        act[start:c].sort()
        act_off[i + 1] = c
    return act[:c], act_off


def _active_dense(Xf: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features nonzero at some position of every sequence of dense rows ``Xf``, flat, and
    their offsets (in increasing order).  numpy: one OR per sequence over its rows
    (a compiled loop cost half a second of a first cluster fit's compilation)."""
    n = off.size - 1
    mask = np.zeros((n, Xf.shape[1]), dtype=bool)
    full = np.flatnonzero(np.diff(off) > 0)  # empty sequences have no active feature
    if full.size:
        mask[full] = np.logical_or.reduceat(Xf != 0.0, off[full], axis=0)
    act_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=act_off[1:])
    return np.nonzero(mask)[1].astype(np.int64), act_off


@njit(cache=True, nogil=True)
def _write_supports(act, act_off, K, F, d, append):  # pragma: no cover - compiled
    """``k * F + a`` for every label ``k`` and active feature ``a``, then ``K F .. d - 1``
    (start, end and transition blocks), then ``append`` when ``>= 0``: every sequence's,
    one after the other; and their offsets."""
    n = act_off.size - 1
    rest = d - K * F + (1 if append >= 0 else 0)
    sup_off = np.empty(n + 1, dtype=np.int64)
    sup_off[0] = 0
    for i in range(n):
        sup_off[i + 1] = sup_off[i] + K * (act_off[i + 1] - act_off[i]) + rest
    out = np.empty(sup_off[n], dtype=np.int64)
    for i in range(n):
        p = sup_off[i]
        for k in range(K):
            for q in range(act_off[i], act_off[i + 1]):
                out[p] = k * F + act[q]
                p += 1
        for c in range(K * F, d):
            out[p] = c
            p += 1
        if append >= 0:
            out[p] = append
    return out, sup_off


def chain_active_features(data: ChainData) -> tuple[np.ndarray, np.ndarray]:
    """The sorted active unary features of every sequence of ``data``, flat, and their
    offsets: a block's support is ``K`` shifted copies of its active features, then the
    shared coordinates, so this is the support in less than ``1 / K`` of its memory
    (benchmarks/README.md, "Measurements behind code choices")."""
    if data.uses_ids:
        return _active_ids(data.If, data.off, data.offsets, data.F)
    return _active_dense(data.Xf, data.off)


def chain_feature_supports(model: Any, X: Any, append: int | None = None) -> list[np.ndarray]:
    """``model.feature_support(x)`` of every ``x`` in ``X`` (followed by the coordinate
    ``append`` when given), as views of one array.

    Parameters
    ----------
    model : ChainModel
    X : sequence of sequences
        What ``feature_support`` takes, one by one (validated as there: a bad id or
        shape raises the same error).
    append : int, optional
        A coordinate to put after every support (the SSVM dual's ``l``).

    Returns
    -------
    list of ndarray (int64)
    """
    data = ChainData(model, X)
    act, act_off = chain_active_features(data)
    flat, off = _write_supports(act, act_off, data.K, data.F, data.d,
                                -1 if append is None else int(append))
    return [flat[off[i]:off[i + 1]] for i in range(off.size - 1)]

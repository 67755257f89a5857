"""Compiled block kernels of the multiclass SSVM dual (class-marginal parametrization).

Block ``i`` (one example ``x_i`` with class ``y_i``) is stored as its class marginals
``alpha[i, k]`` (the weights of the labellings in its convex combination) and the
expected loss ``lbar[i]``.  With ``psi_i(k) = phi(x_i, y_i) - phi(x_i, k)`` (``+x_i`` in
class slice ``y_i``, ``-x_i`` in slice ``k``) its image in ``(w, l)`` space is

    w_i = x_i (x) (e(y_i) - alpha_i) / (lam n),   l_i = lbar_i / n,

so the block state costs ``K + 1`` numbers, and the direction ``A_i (s_i - z_i)`` towards
the oracle's class ``k*`` is ``x_i`` placed at the class slices with the coefficients
``c_k = (alpha_ik - [k = k*]) / (lam n)``, plus the loss coordinate: rows of the data
matrix at offsets ``k F``, what :class:`~frankwolfe.compiled.StructuredDirection` holds.

The kernels follow :class:`frankwolfe.compiled.CompiledBlocks`: they answer the oracle
(loss-augmented decoding over the ``K`` classes, the block gap and the vertex score),
the direction (materialized, or written as a structured direction with its curvature
``||x_i||^2 sum_k c_k^2`` for the fused driver) and the commit of a step; the core's
driver decides the step, moves ``x`` and the gradient ``g = (lam w, -1)`` and keeps the
averages.  Dense feature rows only: a sparse ``X`` is densified (as the estimator does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from frankwolfe.compiled import CompiledBlocks, StructuredDirection, structured_direction
from frankwolfe.errors import ShapeError

__all__ = ["MulticlassState", "multiclass_state", "multiclass_blocks", "multiclass_direction",
           "multiclass_oracle", "multiclass_commit", "multiclass_curvature",
           "multiclass_describe", "multiclass_sync", "WARM_TAG"]

#: the first entry of what ``block_points()`` returns (and a warm start must carry)
WARM_TAG = "multiclass_marginals"


class MulticlassState(NamedTuple):
    """The data, the block iterates and the scratch the multiclass kernels share."""

    # data: dense rows X (n x F), true classes, squared row norms (the curvature)
    X: np.ndarray
    Yi: np.ndarray
    xsq: np.ndarray
    # block iterates: class marginals (n x K) and expected losses (n)
    alpha: np.ndarray
    lbar: np.ndarray
    # the parameters: n (a float, divided by), scale = 1 / (lam n), K classes, F features,
    # d = K F the dimension of w
    lam: float
    n: float
    scale: float
    K: int
    F: int
    d: int
    # scratch: class scores <g_k, x_i>, the coefficients c_k of the last direction, the
    # oracle's class and its loss (what commit, curvature and direction read)
    u: np.ndarray
    coef: np.ndarray
    ys: np.ndarray
    info: np.ndarray
    # the layout the driver applies (multiclass_curvature writes the direction into it)
    sd: StructuredDirection


@njit(cache=True, nogil=True, inline="always")
def _oracle(state, i, g):  # pragma: no cover - compiled
    """Loss-augmented decoding of block ``i`` at the gradient ``g``; returns ``(gap,
    score)`` and leaves the class in ``ys[0]`` and its loss in ``info[0]``."""
    X, Yi, alpha, lbar, u = state.X, state.Yi, state.alpha, state.lbar, state.u
    K, F, d = state.K, state.F, state.d
    lam, n = state.lam, state.n
    x = X[i]
    for k in range(K):
        s = 0.0
        b = k * F
        for f in range(F):
            s += g[b + f] * x[f]
        u[k] = s
    gl = g[d]
    # the model's decoder at w = g_w / (lam (-g_l)) (plain decoding, scaled, when g_l = 0),
    # its +1 / -1 in the same order, so that exact ties break as in the Python engine
    c = 1.0 / (lam * -gl) if gl < 0.0 else 1.0 / lam
    aug = 1.0 if gl < 0.0 else 0.0
    yi = Yi[i]
    best = -np.inf
    ys = 0
    for k in range(K):
        v = c * u[k] + aug
        if k == yi:
            v -= aug
        if v > best or k == 0:
            best = v
            ys = k
    s_bar = 0.0
    for k in range(K):
        s_bar += alpha[i, k] * u[k]
    loss = 1.0 if ys != yi else 0.0
    state.ys[0] = ys
    state.info[0] = loss
    ln = lam * n
    score = (u[yi] - u[ys]) / ln + gl * loss / n
    gap = (u[ys] - s_bar) / ln + gl * (lbar[i] - loss) / n
    return gap, score


@njit(cache=True, nogil=True)
def multiclass_oracle(state, i, g):  # pragma: no cover - compiled
    """The block oracle without the direction: ``(gap, score)`` (see
    :attr:`frankwolfe.compiled.CompiledBlocks.oracle`)."""
    return _oracle(state, i, g)


@njit(cache=True, nogil=True)
def multiclass_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    """Block kernel (see :class:`frankwolfe.compiled.CompiledBlocks`): the oracle, and with
    ``want`` the direction ``A_i (s_i - z_i)`` as unique sparse entries."""
    gap, score = _oracle(state, i, g)
    nnz = 0
    if want:
        X, alpha = state.X, state.alpha
        K, F, d = state.K, state.F, state.d
        sc = state.scale
        ys = state.ys[0]
        x = X[i]
        for k in range(K):
            c = alpha[i, k] - (1.0 if k == ys else 0.0)
            if c == 0.0:
                continue
            a = sc * c
            b = k * F
            for f in range(F):
                idx[nnz] = b + f
                val[nnz] = a * x[f]
                nnz += 1
        idx[nnz] = d
        val[nnz] = (state.info[0] - state.lbar[i]) / state.n
        nnz += 1
    return nnz, gap, score


@njit(cache=True, nogil=True)
def multiclass_curvature(state, i, h):  # pragma: no cover - compiled
    """``d^T diag(h) d`` of the direction ``d = A_i (s_i - z_i)`` of the last oracle call
    (``h`` constant on ``w``: ``multiclass_blocks`` accepts no other), from the squared
    row norm: ``h_w ||x_i||^2 scale^2 sum_k c_k^2 + h_l dl^2``.

    The terms of ``d`` are met on the way, so they are written into the layout
    ``state.sd`` (which the driver hands to :func:`multiclass_describe`): one row term
    ``scale c_k x_i`` at offset ``k F`` per nonzero ``c_k``, the loss coordinate as an
    entry."""
    alpha, coef, sd = state.alpha, state.coef, state.sd
    K, F, d = state.K, state.F, state.d
    sc = state.scale
    ys = state.ys[0]
    nr = 0
    c2 = 0.0
    for k in range(K):
        c = alpha[i, k] - (1.0 if k == ys else 0.0)
        coef[k] = c
        if c != 0.0:
            c2 += c * c
            sd.row[nr] = i
            sd.base[nr] = k * F
            sd.coef[nr] = sc * c
            sd.seg[nr] = k * F
            nr += 1
    dl = (state.info[0] - state.lbar[i]) / state.n
    ne = 0
    if dl != 0.0:
        sd.idx[0] = d
        sd.val[0] = dl
        ne = 1
    sd.counts[0] = ne
    sd.counts[1] = nr
    sd.counts[2] = nr  # one row term per class: the offsets are distinct
    return h[0] * sc * sc * state.xsq[i] * c2 + h[d] * dl * dl


@njit(cache=True, nogil=True)
def multiclass_describe(state, i, sd):  # pragma: no cover - compiled
    """The direction of the last :func:`multiclass_curvature` call as a
    :class:`~frankwolfe.compiled.StructuredDirection`: already written there into
    ``state.sd``, which is ``sd``; nothing is left to do."""
    return None


@njit(cache=True, nogil=True)
def multiclass_sync(state, g):  # pragma: no cover - compiled
    """Nothing derives from the gradient: the oracle reads ``g`` itself."""
    return None


@njit(cache=True, nogil=True)
def multiclass_commit(state, i, gamma):  # pragma: no cover - compiled
    """``z_i <- (1 - gamma) z_i + gamma s_i`` on the class marginals and the loss."""
    alpha, lbar = state.alpha, state.lbar
    keep = 1.0 - gamma
    for k in range(state.K):
        alpha[i, k] *= keep
    alpha[i, state.ys[0]] += gamma
    lbar[i] = keep * lbar[i] + gamma * state.info[0]


def _scratch(K: int, X: np.ndarray) -> dict[str, Any]:
    """The fields of a state that one thread's kernel calls write."""
    return {"u": np.empty(K), "coef": np.empty(K), "ys": np.zeros(1, dtype=np.int64),
            "info": np.zeros(1),
            "sd": structured_direction(1, K, K, dense=X)}


def multiclass_state(X: np.ndarray, Yi: np.ndarray, K: int, lam: float,
                     warm: Any = None) -> MulticlassState:
    """The block state of the multiclass SSVM dual over the dense rows ``X`` (n x F, float64)
    and the classes ``Yi`` (int64 in ``[0, K)``), started from ``warm`` (what
    ``block_points()`` returned in an earlier run: the class marginals, which do not
    depend on lambda) or the true classes (``w = 0``)."""
    n, F = X.shape
    if warm is None:
        alpha = np.zeros((n, K))
        alpha[np.arange(n), Yi] = 1.0
        lbar = np.zeros(n)
    else:
        if (not isinstance(warm, (tuple, list)) or len(warm) != 2 or warm[0] != WARM_TAG
                or not isinstance(warm[1], (tuple, list)) or len(warm[1]) != 2):
            raise ValueError(f"MulticlassModel: the warm-start state must be what a "
                             f"compiled run's block_points() returned, ({WARM_TAG!r}, "
                             f"(alpha, lbar)); got {type(warm).__name__}")
        alpha, lbar = (np.array(a, dtype=float) for a in warm[1])
        if alpha.shape != (n, K) or lbar.shape != (n,):
            raise ValueError(f"MulticlassModel: the warm-start marginals do not fit this "
                             f"data set: shapes {alpha.shape}, {lbar.shape}, expected "
                             f"{(n, K)}, {(n,)} ({n} examples, {K} classes)")
    return MulticlassState(
        X=X, Yi=Yi, xsq=np.einsum("ij,ij->i", X, X), alpha=alpha, lbar=lbar,
        lam=float(lam), n=float(n), scale=1.0 / (float(lam) * float(n)), K=int(K),
        F=int(F), d=int(K * F), **_scratch(K, X))


def _aggregate(state: MulticlassState, x: np.ndarray) -> None:
    """``x += sum_i A_i z_i``: ``-scale sum_i x_i (x) (alpha_i - e(y_i))`` on ``w`` and
    ``sum_i lbar_i / n`` on ``l`` (once per run: numpy; zero at the default start)."""
    n, d = state.X.shape[0], state.d
    C = state.alpha.copy()
    C[np.arange(n), state.Yi] -= 1.0
    rows = np.flatnonzero(np.any(C != 0.0, axis=1))
    if rows.size:
        x[:d] -= state.scale * (C[rows].T @ state.X[rows]).ravel()
    x[d] += state.lbar.sum() / state.n


def multiclass_blocks(state: MulticlassState) -> CompiledBlocks:
    """:class:`~frankwolfe.compiled.CompiledBlocks` of the multiclass SSVM dual over
    ``state`` (from :func:`multiclass_state`; the kernels move its arrays in place):
    Frank-Wolfe block steps, materialized or fused, and lock-free passes (``fork``)."""
    K, F, d = state.K, state.F, state.d
    alpha, lbar = state.alpha, state.lbar

    def start(x: np.ndarray) -> None:
        _aggregate(state, x)

    def block_points() -> tuple:
        # the run's own arrays, no copy: these kernels serve one run (a warm start
        # copies what it is given)
        return (WARM_TAG, (alpha, lbar))

    def accepts(h: np.ndarray) -> bool:  # the curvature reads one value for all of w
        return h.shape == (d + 1,) and bool(np.all(h[:d] == h[0]))

    def fork() -> tuple[MulticlassState, StructuredDirection]:
        # another thread's kernels: data and block iterates shared, scratch its own
        own = state._replace(**_scratch(K, state.X))
        return own, own.sd

    return CompiledBlocks(multiclass_direction, multiclass_commit, state, K * F + 1, start,
                          block_points, describe=multiclass_describe, sync=multiclass_sync,
                          curvature=multiclass_curvature, layout=state.sd, accepts=accepts,
                          oracle=multiclass_oracle, fork=fork)


def dense_rows(model: Any, X: Sequence[Any]) -> np.ndarray:
    """The examples ``X`` as one C-contiguous float64 array ``(n, F)``, checked as the
    model's ``_check_x`` checks each (a 2-D real array at once, else row by row: lists
    of vectors, the 1 x F rows of a sparse matrix)."""
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "biuf":
        if X.shape[1] != model.n_features:
            raise ShapeError(f"{type(model).__name__}: `X` must have {model.n_features} "
                             f"features (columns), got shape {X.shape}")
        return np.ascontiguousarray(X, dtype=np.float64)
    rows = [model._check_x(x) for x in X]
    return np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(len(rows),
                                                                         model.n_features))

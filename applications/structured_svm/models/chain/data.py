"""A chain data set flattened into token arrays: what the chain kernels read."""

from __future__ import annotations

import copy
import operator
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from frankwolfe.errors import ShapeError

__all__ = ["ChainData", "chain_data", "token_feature_sums", "transition_counts"]


class ChainData:
    """A chain data set flattened into token arrays (what the kernels read).

    Attributes
    ----------
    Xf : ndarray (N, F) float64 or (0, 0)
        Dense features of all tokens (dense models).
    If : ndarray (N, m) int64 or (0, 0)
        Attribute ids of all tokens (id models).
    off : ndarray (n + 1,) int64
        Token offsets of the sequences.
    Yf : ndarray (N,) int64
        True labels of all tokens (empty when no labels were given).
    """

    def __init__(self, model: Any, X: Any, Y: Any = None) -> None:
        lengths = np.fromiter((len(x) for x in X), dtype=np.int64, count=len(X))
        if lengths.size == 0 or lengths.min() < 1:
            raise ValueError("ChainData: every sequence needs at least one position")
        self.off = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self.n = lengths.size
        self.Lmax = int(lengths.max())
        if model.uses_ids:
            If = _rows(model, X)
            bad = (If < 0) | (If > model.template_sizes)
            if bad.any():
                t, j = np.argwhere(bad)[0]
                raise ValueError(
                    f"ChainModel: attribute id {int(If[t, j])} of template {j} out of "
                    f"range 0..{int(model.template_sizes[j])}")
            # ids in range fit 32 bits: half the memory of the token table
            small = model.template_sizes.max(initial=0) < np.iinfo(np.int32).max
            self.If = np.ascontiguousarray(If, dtype=np.int32 if small else np.int64)
            self.Xf = np.zeros((0, 0))
            self.offsets = model.offsets
            self.sizes = model.template_sizes
        else:
            self.Xf = np.ascontiguousarray(_rows(model, X))
            self.If = np.zeros((0, 0), dtype=np.int32)  # the ids' type: one compiled variant
            self.offsets = np.zeros(0, dtype=np.int64)
            self.sizes = np.zeros(0, dtype=np.int64)
        if Y is not None:
            if len(Y) != len(X):
                raise ValueError(f"ChainData: {len(X)} sequences but {len(Y)} labellings")
            for i, y in enumerate(Y):  # one rule with the Python paths (ChainModel.loss)
                if np.ndim(y) != 1:
                    raise ShapeError(f"ChainModel: the labelling of example {i} must be 1-D "
                                     f"(one label per position), got shape {np.shape(y)}")
            sizes = np.fromiter((np.size(y) for y in Y), dtype=np.int64, count=len(Y))
            if not np.array_equal(sizes, lengths):
                i = int(np.flatnonzero(sizes != lengths)[0])
                raise ValueError(f"ChainData: the labelling of example {i} has {int(sizes[i])} "
                                 f"labels but its sequence {int(lengths[i])} positions")
            Yf = np.concatenate([np.asarray(y, dtype=np.int64).ravel() for y in Y])
            bad = np.flatnonzero((Yf < 0) | (Yf >= model.n_states))
            if bad.size:
                # the kernels index the true labels' features without bounds checks (a test
                # set's tag outside the model's states only serves decodings and losses)
                i = int(np.searchsorted(self.off, bad[0], side="right")) - 1
                raise ValueError(f"ChainModel: the true labelling of example {i} has label "
                                 f"{int(Yf[bad[0]])} at position {int(bad[0] - self.off[i])}; "
                                 f"training (and primal) labels must lie in "
                                 f"[0, {model.n_states})")
            self.Yf = Yf
        else:
            self.Yf = np.zeros(0, dtype=np.int64)
        self.uses_ids = bool(model.uses_ids)
        self.K = model.n_states
        self.F = model.n_unary
        self.d = model.size_joint_feature
        self._gram: tuple[np.ndarray, np.ndarray] | None = None
        self._csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def token_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dense token rows as sparse rows ``(ptr, col, val)`` (computed once), or
        empty arrays when they would not pay: attribute ids, or rows more than half
        full.  ``val`` is empty when every nonzero is 1 (binary features, as OCR's
        pixels): the oracle then sums weight rows without multiplying.

        A token's unary scores are then ``sum_p val[p] * Wt[col[p]]`` over its few
        nonzeros, with ``Wt`` the feature-major ``(F, K)`` weights: a fraction of the dot
        products' time on rows as sparse as OCR's (benchmarks/README.md, "Measurements
        behind code choices").
        """
        if self._csr is None:
            nnz = np.count_nonzero(self.Xf) if self.Xf.size else 0
            if self.uses_ids or nnz > self.Xf.size // 2:
                empty = np.zeros(0, dtype=np.int64)
                self._csr = (empty, empty.astype(np.int32), np.zeros(0))
            else:
                # numpy, row-major order (once per data set: not worth a compiled kernel
                # on a cold first fit); int32 columns as the ids: dense, sparse and id data
                # share one compiled variant of the kernels
                rows, cols = np.nonzero(self.Xf)
                ptr = np.zeros(self.Xf.shape[0] + 1, dtype=np.int64)
                np.cumsum(np.bincount(rows, minlength=self.Xf.shape[0]), out=ptr[1:])
                val = np.ascontiguousarray(self.Xf[rows, cols], dtype=float)
                binary = bool(np.all(val == 1.0))
                self._csr = (ptr, cols.astype(np.int32), np.zeros(0) if binary else val)
        return self._csr

    def subset(self, start: int, stop: int) -> ChainData:
        """The sequences ``start, ..., stop - 1`` alone (views of their rows), e.g. the shard
        of the data set that one cluster worker keeps."""
        out = copy.copy(self)
        lo, hi = int(self.off[start]), int(self.off[stop])
        out.off = self.off[start:stop + 1] - lo
        out.n = int(stop - start)
        out.Lmax = int(np.diff(out.off).max(initial=0))
        out.If = self.If[lo:hi] if self.If.size else self.If
        out.Xf = self.Xf[lo:hi] if self.Xf.size else self.Xf
        out.Yf = self.Yf[lo:hi] if self.Yf.size else self.Yf
        out._gram = None
        out._csr = None  # the whole set's rows (ptr counts from its first token)
        return out

    def gram(self) -> tuple[np.ndarray, np.ndarray]:
        """Token Gram matrices of all sequences, flat, and their offsets (computed once)."""
        if self._gram is None:
            L = np.diff(self.off)
            goff = np.concatenate(([0], np.cumsum(L * L))).astype(np.int64)
            out = np.empty(int(goff[-1]))
            if self.uses_ids:
                _token_gram_ids(self.If, self.off, goff, out)
            else:
                _token_gram_dense(self.Xf, self.off, goff, out)
            self._gram = (out, goff)
        return self._gram


def _rows(model: Any, X: Any) -> np.ndarray:
    """The token rows of all sequences as one array: the sequences' own memory when they
    are consecutive views of one C-contiguous array (as the data loaders return them),
    else a concatenated copy."""
    xs = [model._check_x(x) for x in X]
    first = xs[0]
    base = first.base
    if base is not None and all(x.base is base and x.flags.c_contiguous for x in xs):
        row = first.strides[0]
        start = first.__array_interface__["data"][0]
        pos = start
        for x in xs:
            if x.__array_interface__["data"][0] != pos or x.dtype != first.dtype:
                break
            pos += x.shape[0] * row
        else:
            n = (pos - start) // row
            if isinstance(base, np.ndarray) and base.flags.c_contiguous:
                try:
                    whole = np.ndarray((n,) + first.shape[1:], dtype=first.dtype, buffer=base,
                                       offset=start - base.__array_interface__["data"][0])
                except (TypeError, ValueError):  # not inside the base's buffer after all
                    whole = None
                if whole is not None and all(np.array_equal(a, whole[b:b + len(a)]) for a, b in
                                             ((xs[0], 0), (xs[-1], n - xs[-1].shape[0]))):
                    return whole
    return np.concatenate(xs)


def token_feature_sums(Xf: np.ndarray, If: np.ndarray, offsets: np.ndarray,
                       csr: tuple[np.ndarray, np.ndarray, np.ndarray], F: int,
                       rows: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``U[k] = sum_r coef[r, k] x_{rows[r]}``, shape ``(K, F)``: the unary part of a sum
    of joint features weighted per token and label (label-major, as ``w[k F + f]``).

    Reads attribute ids (``If``, ``offsets``), the sparse token rows (``csr``: ``(ptr,
    col, val)`` of :meth:`ChainData.token_csr`, ``val`` empty for binary rows) or the
    dense rows ``Xf``, whichever the data has.  numpy and scipy, for the sums taken once
    per run or per evaluation (no compiled kernel to wait for on a first call)."""
    ptr, col, val = csr
    if If.size:
        ids = If[rows]
        on = ids != 0
        cols = (offsets[None, :] + ids - 1)[on]
        at = np.repeat(np.arange(rows.size), ids.shape[1])[on.ravel()]
        tokens = sp.csr_matrix((np.ones(cols.size), (at, cols)), shape=(rows.size, F))
    elif ptr.size:
        vals = val if val.size else np.ones(col.size)
        tokens = sp.csr_matrix((vals, col, ptr), shape=(ptr.size - 1, F))[rows]
    else:
        return coef.T @ Xf[rows]
    return np.asarray(tokens.T @ coef).T


def transition_counts(labels: np.ndarray, off: np.ndarray, K: int) -> np.ndarray:
    """Counts of the transitions ``y_t = a -> y_{t+1} = b`` within the sequences of the
    flat ``labels`` (offsets ``off``), at ``b K + a``: the order of the transition
    weights in ``w``."""
    seq = np.repeat(np.arange(off.size - 1), np.diff(off))
    inner = np.flatnonzero(seq[:-1] == seq[1:])  # tokens followed by one of their chain
    return np.bincount(labels[inner + 1] * K + labels[inner], minlength=K * K)


class _Memo(NamedTuple):
    """A converted data set and what :func:`_unchanged` compares it with."""

    model: Any
    X: Any
    Y: Any
    data: ChainData
    #: the token rows as ``data`` read them: its own array, or a copy where that array
    #: is the caller's memory (consecutive views, :func:`_rows`)
    tokens: np.ndarray
    #: the examples of ``X`` then, and whether ``data`` reads their memory
    items: list[Any]
    aliased: bool


#: the last few data sets, newest first
_CACHE: list[_Memo] = []


def _unchanged(memo: _Memo, X: Any, Y: Any) -> bool:
    """Whether ``(X, Y)`` still hold the values ``memo.data`` was built from.

    The same list may hold other or changed examples by now (``x *= -1``, ``X[:] =
    X2``): reused, the kernels read the old data set, and a fit certified a gap of a
    problem the caller no longer has.  Compared value by value with the rows kept: an
    exact test (a digest could collide, and hashing costs more than comparing), and
    one pass over the rows, where converting them again checks and copies every
    example and recomputes what was derived from them (sparse rows, Gram matrices).
    """
    data = memo.data
    try:
        lengths = np.fromiter((len(x) for x in X), dtype=np.int64, count=len(X))
        if not np.array_equal(lengths, np.diff(data.off)):
            return False
        if memo.aliased and all(map(operator.is_, X, memo.items)):
            # the same views as then: the rows data reads are the examples' rows now
            same = np.array_equal(data.If if data.uses_ids else data.Xf, memo.tokens)
        else:
            same = _same_rows(X, memo.tokens, data.off)
        return same and (Y is None or np.array_equal(np.concatenate(Y), data.Yf))
    except (TypeError, ValueError):  # ragged or odd items: a new ChainData says what is wrong
        return False


#: bytes of the examples' rows that :func:`_same_rows` joins and compares at a time
_PIECE_BYTES = 1 << 18


def _same_rows(X: Any, tokens: np.ndarray, off: np.ndarray) -> bool:
    """Whether example ``i`` of ``X`` has the rows ``tokens[off[i]:off[i + 1]]``, for
    every ``i``.

    Compared a few hundred kilobytes of rows at a time: each piece, joined, is still
    in the cache when it is compared (the whole data set joined at once is written to
    memory and read back), and the first difference ends the comparison.
    """
    n = len(X)
    step = max(1, _PIECE_BYTES * n // max(tokens.nbytes, 1))
    for a in range(0, n, step):
        b = min(a + step, n)
        if not np.array_equal(np.concatenate(X[a:b]), tokens[off[a]:off[b]]):
            return False
    return True


def chain_data(model: Any, X: Any, Y: Any = None) -> ChainData:
    """:class:`ChainData` of ``(X, Y)``, memoized for the last few data sets.

    A data set is found again by the identity of ``model``, ``X`` and ``Y`` and reused
    while its values are unchanged (:func:`_unchanged`): a fit's evaluations and
    repeated predictions convert it once, and examples changed in place or replaced
    are converted anew.
    """
    for at, memo in enumerate(_CACHE):
        if memo.model is model and memo.X is X and memo.Y is Y:
            if _unchanged(memo, X, Y):
                return memo.data
            del _CACHE[at]
            break
    data = ChainData(model, X, Y)
    tokens = data.If if data.uses_ids else data.Xf
    aliased = bool(np.may_share_memory(tokens, X[0]))
    _CACHE.insert(0, _Memo(model, X, Y, data, tokens.copy() if aliased else tokens, list(X),
                           aliased))
    del _CACHE[4:]
    return data


def _token_gram_dense(Xf: np.ndarray, off: np.ndarray, goff: np.ndarray, out: np.ndarray
                      ) -> None:
    """Per example, the Gram matrix ``<x_t, x_t'>`` of its tokens' feature rows (row-major
    ``L x L`` at ``goff[i]``): one batched product per sequence length (numpy, once per
    run: a compiled loop cost half a second of a first fit's compilation)."""
    L = np.diff(off)
    for length in np.unique(L):
        ids = np.flatnonzero(L == length)
        rows = Xf[off[ids][:, None] + np.arange(length)]  # (sequences, L, F)
        g = np.matmul(rows, rows.transpose(0, 2, 1))
        at = goff[ids][:, None] + np.arange(length * length)
        out[at] = g.reshape(ids.size, -1)


@njit(cache=True, nogil=True)
def _token_gram_ids(If, off, goff, out):  # pragma: no cover - compiled
    """:func:`_token_gram_dense` for attribute ids: the number of ids two tokens share (one
    column per template, disjoint feature ranges)."""
    n = off.size - 1
    for i in range(n):
        lo = off[i]
        L = off[i + 1] - lo
        base = goff[i]
        for t in range(L):
            for t2 in range(t, L):
                s = 0.0
                for j in range(If.shape[1]):
                    v = If[lo + t, j]
                    if v != 0 and v == If[lo + t2, j]:
                        s += 1.0
                out[base + t * L + t2] = s
                out[base + t2 * L + t] = s

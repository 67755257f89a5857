"""A chain data set flattened into token arrays: what the chain kernels read."""

from __future__ import annotations

import contextlib
import copy
import weakref
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from frankwolfe.errors import ShapeError

__all__ = ["ChainData", "chain_data", "chain_data_scope", "token_feature_sums",
           "transition_counts"]


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
        # set when the rows, read in place from the caller's examples, may have changed
        # since the sparse rows and Gram matrices were derived from them (see _recheck)
        self._stale = False

    def _recheck(self) -> None:
        """Keep the sparse rows and Gram matrices only where the rows are still those
        they came from: the sparse rows say so exactly (:func:`_csr_holds`: one pass
        over the rows, where a copy of them to compare with doubled the data set's
        memory); without them nothing does, and both are computed again.  Checked when
        they are asked for, not at every reuse of the data set (an evaluation's
        decodings read the dense rows alone)."""
        csr = self._csr
        if csr is None or not csr[0].size or not _csr_holds(self.Xf, csr):
            self._csr = None
            self._gram = None
        self._stale = False

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
        if self._stale:
            self._recheck()
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
        out._stale = False  # nothing derived yet
        return out

    def gram(self) -> tuple[np.ndarray, np.ndarray]:
        """Token Gram matrices of all sequences, flat, and their offsets (computed once)."""
        if self._stale:
            self._recheck()
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
    """A converted data set and what :func:`_unchanged` compares it with.

    No strong reference to the caller's objects: the model by a weak reference, the
    lists ``X`` and ``Y`` by their ids (a list cannot be referenced weakly; an id
    reused by another list is harmless, as the values decide), the examples (where
    ``data`` reads their memory) by weak references.  Once the caller drops them,
    nothing here keeps them alive but ``data`` itself (the caller's rows, where it
    reads them in place).
    """

    model: Any
    x_id: int
    y_id: int
    data: ChainData
    #: whether ``data`` reads the examples' memory (else it has rows of its own)
    aliased: bool
    #: weak references to the examples of ``X`` then, where ``data`` reads their memory
    #: (empty otherwise, or where an example cannot be referenced weakly)
    items: tuple[Any, ...]


#: the memos of the open scopes (:func:`chain_data_scope`), innermost last: each a list
#: of this context's data sets since the scope opened (each thread, each task has its
#: own context, so concurrent fits keep theirs apart)
_SCOPES: ContextVar[tuple[list[_Memo], ...]] = ContextVar("chain_data_scopes", default=())

#: the most data sets a scope keeps (the most recently used)
_SCOPE_SIZE = 4

#: the one data set kept outside every scope (the last converted there), dropped when
#: its model is freed
_LAST: list[_Memo] = []


@contextlib.contextmanager
def chain_data_scope() -> Iterator[None]:
    """Keep the data sets that :func:`chain_data` converts within the block, and drop
    them at its end.

    A fit opens one (:func:`~...fitting.fit_and_notice`): its training, its per-pass
    evaluations on the training and test sets and its time estimates convert each data
    set once, and nothing of the fit's data (nor the model) outlives it.  Outside every
    scope :func:`chain_data` keeps one data set, the last.
    """
    token = _SCOPES.set((*_SCOPES.get(), []))
    try:
        yield
    finally:
        _SCOPES.reset(token)


def _forget(ref: Any) -> None:
    """Drop the data set kept outside the scopes when its model is freed (the callback
    of the memo's weak reference)."""
    if _LAST and _LAST[0].model is ref:
        _LAST.clear()


def _model_ref(model: Any) -> Any:
    """A weak reference to ``model`` that forgets its data set when it is freed; a
    strong one (a function returning it) for a model that cannot be referenced weakly
    (``__slots__`` without ``__weakref__``)."""
    try:
        return weakref.ref(model, _forget)
    except TypeError:
        return lambda: model


def _unchanged(memo: _Memo, X: Any, Y: Any) -> bool:
    """Whether ``(X, Y)`` hold the values ``memo.data`` was built from (``Y`` None: the
    examples alone), and everything ``memo.data`` derived from its rows is still theirs.

    The same list may hold other or changed examples by now (``x *= -1``, ``X[:] =
    X2``): reused, the kernels read the old data set, and a fit certified a gap of a
    problem the caller no longer has.  Exact tests throughout (a digest could collide):

    * ``data`` with rows of its own: compared value by value with the examples (one
      pass over the rows, where converting them again checks and copies every example
      and recomputes what was derived from them);
    * ``data`` reading the examples' memory (consecutive views of one array, as the
      data loaders return them): the same views as then hold the rows ``data`` reads,
      so only what was checked or derived from them can be stale: the attribute ids'
      range is checked again, and the sparse rows and Gram matrices are checked when
      next asked for (:meth:`ChainData._recheck`).  A copy of the rows to compare with
      doubled the memory of every such data set.
    """
    data = memo.data
    try:
        lengths = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
        if not np.array_equal(lengths, np.diff(data.off)):
            return False
        if Y is not None:
            if data.Yf.size == 0:
                return False  # converted without labels
            # each labelling as long as its sequence (the same labels joined may be split
            # otherwise) and 1-D (2-D ones join to another shape than Yf's)
            if not np.array_equal(np.fromiter(map(len, Y), dtype=np.int64, count=len(Y)),
                                  lengths):
                return False  # a new ChainData says what is wrong
            if not np.array_equal(np.concatenate(Y), data.Yf):
                return False
        rows = data.If if data.uses_ids else data.Xf
        if not memo.aliased:
            return _same_rows(X, rows, data.off)
        same_views = len(memo.items) == len(X) and all(
            ref() is x for ref, x in zip(memo.items, X))
        if not same_views and not _same_rows(X, rows, data.off):
            return False
    except (TypeError, ValueError):  # ragged or odd items: a new ChainData says what is wrong
        return False
    # the kernels index the weights by id without bounds checks: checked now (sizes in
    # the ids' type, which holds them: no conversion of every id to compare)
    if data.uses_ids and (np.min(data.If) < 0 or np.greater(
            data.If, data.sizes.astype(data.If.dtype)).any()):
        return False  # a new ChainData names the id out of range
    data._stale = True
    return True


def _csr_holds(Xf: np.ndarray, csr: tuple[np.ndarray, np.ndarray, np.ndarray]) -> bool:
    """Whether the dense rows ``Xf`` are exactly the sparse rows ``csr`` (``(ptr, col,
    val)`` of :meth:`ChainData.token_csr`, ``val`` empty for ones): as many nonzeros,
    each at a listed position with its listed value (the positions are distinct, so no
    other entry is nonzero)."""
    ptr, col, val = csr
    if np.count_nonzero(Xf) != col.size:
        return False
    at = np.repeat(np.arange(Xf.shape[0], dtype=np.int64), np.diff(ptr)) * Xf.shape[1]
    at += col
    now = Xf.ravel().take(at)
    return bool(np.all(now == 1.0) if val.size == 0 else np.array_equal(now, val))


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
    """:class:`ChainData` of ``(X, Y)``, memoized within a scope and for the last data set
    outside them.

    A data set is found again by the identity of ``model``, ``X`` and ``Y`` (without
    ``Y``: a conversion of ``X`` with or without labels) and reused while its values are
    unchanged (:func:`_unchanged`): a fit's evaluations and repeated predictions convert
    it once, and examples changed in place or replaced are converted anew.

    Within a :func:`chain_data_scope` (a fit) the data sets of the scope (the last four
    used) are kept until it closes; outside every scope only the last one, and only
    while its model lives.
    No memo keeps the caller's model, lists or examples alive.
    """
    scopes = _SCOPES.get()
    memos = scopes[-1] if scopes else _LAST
    x_id, y_id = id(X), id(Y)
    for memo in list(memos):
        if memo.model() is model and memo.x_id == x_id and (Y is None or memo.y_id == y_id):
            if _unchanged(memo, X, Y):
                if scopes and memos[-1] is not memo:  # the most recently used last
                    memos[:] = [m for m in memos if m is not memo] + [memo]
                return memo.data
            break
    data = ChainData(model, X, Y)
    tokens = data.If if data.uses_ids else data.Xf
    aliased = bool(np.may_share_memory(tokens, X[0]))
    try:
        items = tuple(weakref.ref(x) for x in X) if aliased else ()
    except TypeError:  # never the same views then: compared value by value
        items = ()
    memo = _Memo(_model_ref(model), x_id, y_id, data, aliased, items)
    if scopes:
        # this data set's earlier conversion (changed since, or without the labels
        # that this one has) goes
        memos[:] = [m for m in memos if not (m.model() is model and m.x_id == x_id)]
        memos.append(memo)
        # a fit has two data sets (training, test); more are lists made within it (a
        # callback's predictions), which would otherwise pile up until the scope closes
        del memos[:-_SCOPE_SIZE]
    else:
        _LAST[:] = [memo]
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

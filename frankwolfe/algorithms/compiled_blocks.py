"""The compiled block protocol and the core's compiled pass driver.

The Python cost of a block step (oracle call, Atom, a dozen small numpy
calls) would dominate the O(|block|) arithmetic of small blocks, so whole
passes can run in numba.  The algorithm stays in the core: a domain that
opts in (:class:`BlockDomainHooks`) answers its own questions through
numba kernels bundled in :class:`CompiledBlocks` (the block oracle and
direction, the commit of a step, and for a fused fast path the curvature of
its direction and the direction in a structured form, :class:`StructuredDirection`,
instead of materialized); an objective answers its own through
:class:`CompiledObjective` (slope and curvature along a sparse direction,
the update of ``x`` and ``grad f``).  The driver of this module (one pass
loop, ``_pass_template``; the block step - Frank-Wolfe, or pairwise with a domain's
:class:`PairwiseKernels` - chosen when it is compiled) owns the
order of the blocks, the step size (the numba form of the
:class:`~frankwolfe.step_size.StepSize`, see ``StepSize.compiled``), the
averaging, the updates of ``x`` and ``grad f`` and the block-gap estimates.

Kernels are numba functions; the driver is compiled once per process for
each combination of kernels (numba cannot cache functions that take other
jitted functions as arguments, so it is built by a memoized factory; the
kernels themselves are cached).  State crosses into numba as typed records
(named tuples), never as positional tuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from .block_orders import gap_pick, gap_weight, tree_set

__all__ = ["CompiledBlocks", "CompiledObjective", "BlockDomainHooks", "PairwiseKernels",
           "RoundKernels", "Average",
           "StructuredDirection", "structured_direction", "apply_direction", "average_touch",
           "compiled_driver", "fused_driver", "simplex_blocks"]


class CompiledBlocks:
    """What a product domain supplies to run BCFW passes in numba.

    Parameters
    ----------
    direction : numba function
        ``direction(state, i, g, want, idx, val) -> (nnz, gap, score)``:
        calls block ``i``'s oracle on the gradient ``g`` (the full shared-space
        gradient, kept up to date by the driver) and returns the block gap
        ``<g, A_i (z_i - s_i)>`` and the vertex score ``<g, A_i s_i>``; when
        ``want`` is true it also writes the direction ``A_i (s_i - z_i)`` as
        ``nnz`` unique indices / values into ``idx`` / ``val``.  It remembers
        ``s_i`` for :attr:`commit` (and :attr:`curvature` / :attr:`step`).
    commit : numba function
        ``commit(state, i, gamma)``: ``z_i <- z_i + gamma (s_i - z_i)`` for
        the vertex of the last ``direction`` call.
    state : NamedTuple
        The domain's typed record of arrays, handed to its kernels.
    max_nnz : int
        Upper bound on ``nnz`` (size of the scratch buffers).
    start : callable
        ``start(x)``: add the aggregate ``sum_i A_i z_i`` of the start point
        to the zero vector ``x`` (Python, once).
    block_points : callable, optional
        ``block_points()``: the block iterates for ``Result.extra`` (any
        object the domain understands again as a warm start).
    describe : numba function, optional
        The fused path, for objectives with a diagonal Hessian ``diag(h)``
        (``CompiledObjective.hessian_diag``): ``describe(state, i, sd)`` writes
        the direction ``d = A_i (s_i - z_i)`` of the last ``direction`` call
        into the :class:`StructuredDirection` ``sd`` (scaled rows of a data
        matrix plus explicit entries: what the domain's structure makes cheap)
        without materializing it; the driver then moves ``x`` and ``g`` along
        it (:func:`apply_direction`).  Goes with ``sync``, ``curvature`` and
        ``layout``.
    sync : numba function, optional
        ``sync(state, g)``: rebuild whatever the domain derives from the
        gradient (e.g. a transposed copy its oracle reads contiguously); called
        by the fused driver whenever ``g`` was replaced.
    curvature : numba function, optional
        ``curvature(state, i, h) -> d^T diag(h) d`` for the direction of the
        last ``direction`` call (computed from the domain's structure).
    layout : StructuredDirection, optional
        The scratch record ``describe`` writes into (from
        :func:`structured_direction`, sized by the domain).
    moved : numba function, optional
        ``moved(state, sd, g)``: after the driver moved along ``sd``, refresh what
        the domain derives from ``g`` on the direction's support (default: nothing).
    accepts : callable, optional
        ``accepts(h) -> bool``: whether the fused kernels handle this
        Hessian diagonal (Python, once; default: any).
    rounds : RoundKernels, optional
        What mini-batch rounds need to run compiled (the oracles of a round asked
        at one point, in parallel, their block steps then taken by the driver).
    """

    def __init__(self, direction, commit, state, max_nnz, start, block_points=None,
                 describe=None, sync=None, curvature=None, accepts=None, layout=None,
                 moved=None, rounds=None) -> None:
        if (describe is None) != (sync is None):
            raise ValueError("CompiledBlocks: `describe` and `sync` go together (give both or "
                             "neither), with `curvature` and `layout`")
        if (describe is None) != (curvature is None) or (describe is None) != (layout is None):
            raise ValueError("CompiledBlocks: `describe`, `sync`, `curvature` and `layout` "
                             "go together")
        if layout is not None and not isinstance(layout, StructuredDirection):
            raise TypeError(f"CompiledBlocks: `layout` must be a StructuredDirection, got "
                            f"{type(layout).__name__}")
        self.direction = direction
        self.commit = commit
        self.state = state
        self.max_nnz = int(max_nnz)
        self.start = start
        self.block_points = block_points
        self.describe = describe
        self.sync = sync
        self.curvature = curvature
        self.layout = layout
        self.moved = moved
        self.accepts = accepts
        self.rounds = rounds

    @property
    def fused(self) -> bool:
        """Whether the domain offers the fused kernels."""
        return self.describe is not None


class PairwiseKernels:
    """What a domain adds to its :class:`CompiledBlocks` for compiled pairwise block
    steps (``compiled_driver(..., pairwise=...)``): a domain whose blocks keep their
    points as weights on stored atoms also answers which active atom ``a`` of block
    ``i`` has the largest score ``<g, a>`` and what ``s_i - a`` is.

    Parameters
    ----------
    away : numba function
        ``away(state, i, g, idx, val) -> (nnz, gamma_max)``: for the vertex ``s_i``
        of the last ``direction`` call, the active atom ``a`` of block ``i`` with the
        largest ``<g, a>``; writes ``s_i - a`` as ``nnz`` sorted unique indices /
        values into ``idx`` / ``val`` and returns the weight of ``a`` (``nnz = 0``:
        no pairwise move, e.g. ``a = s_i``).
    move : numba function
        ``move(state, i, gamma)``: weight ``gamma`` from ``a`` to ``s_i`` (``a`` is
        dropped, its weight exactly 0, when ``gamma`` is ``gamma_max``).
    """

    def __init__(self, away, move) -> None:
        self.away = away
        self.move = move


class RoundKernels:
    """What a domain adds to its :class:`CompiledBlocks` for compiled mini-batch rounds
    (:mod:`~frankwolfe.algorithms.minibatch`): the oracles of a round's blocks answered
    at the round's point, each block's vertex kept in a table, then the block steps
    taken by the core's driver (``compiled_driver(..., rounds=True)``), each with its
    line search at the current iterate, as in a compiled pass.

    Parameters
    ----------
    point : callable
        ``point(g) -> p``: what the oracles of a round read from the gradient ``g``
        (Python, once per round: e.g. the weights ``g`` stands for), handed to every
        chunk of :attr:`vertices`.
    vertices : callable
        ``vertices(which, p)``: the oracle answers of blocks ``which`` at ``p``, written
        into ``table`` (Python; one numba call that releases the GIL: several threads
        call it at once on disjoint lists).
    recall : numba function
        ``recall(state, table, i, g, want, idx, val) -> (nnz, gap, score)``: as
        :attr:`CompiledBlocks.direction` for the vertex of block ``i`` stored in
        ``table`` (no oracle call): the block gap and vertex score at ``g``, and the
        direction when ``want``; what ``commit`` (and the fused kernels) then read.
    table : NamedTuple
        The typed record of the stored vertices, handed to ``recall``.
    store : callable, optional
        ``store(which, rows)``: write into ``table`` the rows of blocks ``which``
        computed elsewhere (opaque to the core: what the domain's batch block
        oracle's ``rows(which, gradient)`` returns, e.g. on the workers of a
        :class:`~frankwolfe.DaskExecutor`).  With it, rounds run compiled on
        executors outside this process too.
    """

    def __init__(self, point, vertices, recall, table, store=None) -> None:
        self.point = point
        self.vertices = vertices
        self.recall = recall
        self.table = table
        self.store = store


class CompiledObjective:
    """What an objective supplies to run BCFW passes in numba.

    The objective must be quadratic along lines (``f(x + gamma d) = f(x) +
    gamma slope + gamma^2 curv / 2``), which is what makes the exact step and
    the exact change of ``f`` available from two numbers.

    Parameters
    ----------
    line : numba function
        ``line(data, x, g, idx, val, nnz) -> (slope, curv)`` for the sparse
        direction ``(idx[:nnz], val[:nnz])``.
    update : numba function
        ``update(data, x, g, idx, val, nnz, gamma)``: ``x += gamma d`` and the
        gradient ``g`` updated to match.
    data : tuple
        Arrays handed to both kernels.
    hessian_diag : ndarray, optional
        The Hessian's diagonal ``h`` when the Hessian is diagonal: a domain's
        fused kernels (:class:`CompiledBlocks` ``curvature`` / ``step``) then
        compute the curvature from their own structure and move ``x`` and ``g``
        without materializing the direction.
    """

    def __init__(self, line, update, data, hessian_diag: np.ndarray | None = None) -> None:
        self.line = line
        self.update = update
        self.data = data
        self.hessian_diag = (None if hessian_diag is None
                             else np.ascontiguousarray(hessian_diag, dtype=float))


class BlockDomainHooks:
    """Mixin of a product domain with hooks for block-coordinate methods (opt-in):
    its natural start and its compiled block kernels."""

    def initial_block_points(self) -> list[np.ndarray] | None:
        """Block points to start from when the caller gives none (``None``: each
        block's oracle answer for the all-ones direction)."""
        return None

    def compiled_blocks(self, x0: Any) -> CompiledBlocks | None:
        """The kernels for a run from ``x0`` (``None``: the domain's own start), or
        ``None`` when they do not apply to this run."""
        return None


# -- typed records ------------------------------------------------------------------

class Average(NamedTuple):
    """The lazy average (see :class:`~.block_store.LazyAverage`) inside a compiled step:
    ``kind`` 0 (none), 1 (weighted), 2 (uniform, or the current epoch of tail: the plain
    sum since iterate ``start``; the doubling trick ends epochs between passes, in
    Python); ``ck1`` the cumulative weight up to step ``k``."""

    kind: int
    acc: np.ndarray
    since: np.ndarray
    start: int
    ck1: float
    k: int


class Picker(NamedTuple):
    """How a compiled pass picks its blocks: ``order`` (mode 0), gap sampling from the
    sum tree (mode 1, one uniform number per step from ``unif``) or ``order`` with the
    sum tree kept up to date (mode 2: the blocks of a round, picked by gap sampling)."""

    mode: int
    order: np.ndarray
    unif: np.ndarray
    est: np.ndarray
    tree: np.ndarray
    tsize: int
    degree: float
    nextu: np.ndarray


class StructuredDirection(NamedTuple):
    """A block direction in a form the core's driver applies without materializing it:

    ``d = sum_a val[a] e_{idx[a]} + sum_r coef[r] P_{base[r]} R[row[r]]``

    with ``R`` a data matrix of the domain and ``P_b`` the placement of a row at
    offset ``b``: for dense rows (``dense``, ``(N, F)``) the coordinates ``b .. b + F -
    1``; for sparse rows (CSR ``rptr``, ``rcol``, ``rval``; ``rval`` empty when every
    stored value is 1) the coordinates ``b + rcol[p]`` of the row's stored entries; for
    categorical rows (``ids``, ``(N, m)``: value ``v > 0`` of column ``j`` is the
    one-hot coordinate ``id_offsets[j] + v - 1``, ``0`` absent) the coordinates ``b +
    id_offsets[j] + ids[r, j] - 1``.  ``counts = (entries, row terms, segments)``;
    ``seg`` lists the distinct offsets of the dense row terms (each range is settled
    in the average once).  One of ``dense`` / ``rptr`` / ``ids`` is nonempty.
    """

    counts: np.ndarray
    idx: np.ndarray
    val: np.ndarray
    row: np.ndarray
    base: np.ndarray
    coef: np.ndarray
    seg: np.ndarray
    dense: np.ndarray
    ids: np.ndarray
    id_offsets: np.ndarray
    rptr: np.ndarray
    rcol: np.ndarray
    rval: np.ndarray


def structured_direction(max_entries: int, max_rows: int, max_segments: int,
                         dense: np.ndarray | None = None, ids: np.ndarray | None = None,
                         id_offsets: np.ndarray | None = None,
                         sparse: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                         ) -> StructuredDirection:
    """Scratch :class:`StructuredDirection` over the rows ``dense``, ``ids`` or ``sparse``
    (CSR ``(ptr, col, val)`` of the rows; ``val`` empty for all-ones values)."""
    if (dense is not None) + (ids is not None) + (sparse is not None) != 1:
        raise ValueError("structured_direction: give exactly one of `dense`, `ids` and "
                         "`sparse`")
    if ids is not None and (id_offsets is None or len(id_offsets) != ids.shape[1]):
        raise ValueError("structured_direction: `ids` needs `id_offsets`, one per column")
    if sparse is not None:
        ptr, col, rval = sparse
        if ptr.size < 2 or (rval.size and rval.size != col.size):
            raise ValueError(f"structured_direction: `sparse` must be CSR rows (ptr, col, "
                             f"val) with at least one row and val empty or of col's size; "
                             f"got {ptr.size} pointers, {col.size} columns, {rval.size} "
                             f"values")
    return StructuredDirection(
        counts=np.zeros(3, dtype=np.int64), idx=np.empty(max_entries, dtype=np.int64),
        val=np.empty(max_entries), row=np.empty(max_rows, dtype=np.int64),
        base=np.empty(max_rows, dtype=np.int64), coef=np.empty(max_rows),
        seg=np.empty(max_segments, dtype=np.int64),
        dense=np.zeros((0, 0)) if dense is None else dense,
        ids=np.zeros((0, 0), dtype=np.int64) if ids is None else ids,
        id_offsets=(np.zeros(0, dtype=np.int64) if id_offsets is None
                    else np.asarray(id_offsets, dtype=np.int64)),
        rptr=np.zeros(0, dtype=np.int64) if sparse is None else sparse[0],
        rcol=np.zeros(0, dtype=np.int64) if sparse is None else sparse[1],
        rval=np.zeros(0) if sparse is None else sparse[2])


@njit(cache=True, nogil=True)
def _avg_cum(kind, t, start):  # pragma: no cover - compiled
    if kind == 1:  # weighted: weights j for j < t
        return t * (t - 1) / 2.0
    return float(t - start)


@njit(cache=True, nogil=True, inline="always")
def average_touch(avg, x, j):  # pragma: no cover - compiled
    """Settle coordinate ``j`` of the lazy average before step ``avg.k`` moves it
    (touching a coordinate twice in one step adds zero the second time); call it only
    when averaging is on (``avg.kind > 0``)."""
    avg.acc[j] += x[j] * (avg.ck1 - _avg_cum(avg.kind, avg.since[j], avg.start))
    avg.since[j] = avg.k + 1


@njit(cache=True, nogil=True, fastmath=True)
def _axpy2(a, xrow, h, x, g, base):  # pragma: no cover - compiled
    """``x[base + f] += a xrow[f]``, ``g[base + f] += a h[base + f] xrow[f]`` (contiguous:
    vectorized)."""
    for f in range(xrow.size):
        v = a * xrow[f]
        x[base + f] += v
        g[base + f] += h[base + f] * v


@njit(cache=True, nogil=True, inline="always")
def apply_direction(sd, gamma, h, x, g, avg):  # pragma: no cover - compiled
    """``x += gamma d``, ``g += gamma diag(h) d`` for the :class:`StructuredDirection`
    ``sd``, settling every coordinate of ``d``'s support in the lazy average ``avg``
    (when on) before any moves."""
    ne, nr, ns = sd.counts[0], sd.counts[1], sd.counts[2]
    dense = sd.dense.shape[0] > 0
    rptr, rcol, rval = sd.rptr, sd.rcol, sd.rval
    sparse = rptr.size > 0
    ids, ioff = sd.ids, sd.id_offsets
    m = ids.shape[1]
    if avg.kind > 0:
        for a in range(ne):
            average_touch(avg, x, sd.idx[a])
        if dense:
            F = sd.dense.shape[1]
            for q in range(ns):
                b = sd.seg[q]
                for f in range(F):
                    average_touch(avg, x, b + f)
        else:
            for r in range(nr):
                b, row = sd.base[r], sd.row[r]
                if sparse:
                    for p in range(rptr[row], rptr[row + 1]):
                        average_touch(avg, x, b + rcol[p])
                    continue
                for j in range(m):
                    v = ids[row, j]
                    if v != 0:
                        average_touch(avg, x, b + ioff[j] + v - 1)
    for a in range(ne):
        p = sd.idx[a]
        v = gamma * sd.val[a]
        x[p] += v
        g[p] += h[p] * v
    ones = rval.size == 0
    for r in range(nr):
        c = gamma * sd.coef[r]
        b, row = sd.base[r], sd.row[r]
        if dense:
            _axpy2(c, sd.dense[row], h, x, g, b)
        elif sparse:  # a row's few stored entries: scattered, but a fraction of F
            for q in range(rptr[row], rptr[row + 1]):
                p = b + rcol[q]
                v = c if ones else c * rval[q]
                x[p] += v
                g[p] += h[p] * v
        else:
            for j in range(m):
                v = ids[row, j]
                if v != 0:
                    p = b + ioff[j] + v - 1
                    x[p] += c
                    g[p] += h[p] * c


# -- the driver ---------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _no_curvature(state, i, h):  # pragma: no cover - compiled
    return 0.0


@njit(cache=True, nogil=True)
def _no_describe(state, i, sd):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_moved(state, sd, g):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_sync(state, g):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_away(state, i, g, idx, val):  # pragma: no cover - compiled
    return 0, 0.0


@njit(cache=True, nogil=True)
def _no_move(state, i, gamma):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_recall(state, table, i, g, want, idx, val):  # pragma: no cover - compiled
    return 0, 0.0, 0.0


_DRIVERS: dict = {}


def compiled_driver(blocks: CompiledBlocks, objective: CompiledObjective, rule: Callable,
                    fused: bool = False, pairwise: PairwiseKernels | None = None,
                    rounds: bool = False) -> tuple[Callable, Callable]:
    """The (memoized) numba pass and certificate functions for these kernels.

    The block step is a compile-time choice: Frank-Wolfe steps ``d = s_i - z_i``
    (``gamma <= 1``, fused or materialized) by default; with ``pairwise`` the
    pairwise steps ``d = s_i - a`` of the domain's :class:`PairwiseKernels`
    (``gamma <= w_a``, materialized; not with ``fused``).  With ``rounds`` the
    blocks' vertices are not asked but read from the domain's :class:`RoundKernels`
    table (its ``recall`` kernel serves for ``direction``): the step phase of
    mini-batch rounds, whose oracles were answered beforehand at the round's point.

    Returns ``(run_pass, certify)``:

    * ``run_pass(t0, t1, picker, dstate, odata, h, x, g, rparams, k, n, avg_kind,
      acc, since, avg_start, resync, idx, val, sd, table=None) -> (k, last_gamma,
      df)`` runs the
      block steps ``t0 .. t1 - 1`` of a pass (blocks from the :class:`Picker`),
      ``df`` the exact change of ``f``.  ``fused``: each step asks the domain for
      the curvature and the structured direction ``sd`` and moves along it itself
      (:func:`apply_direction`, ``h`` the Hessian diagonal; ``resync`` first
      calls ``sync(dstate, g)``); otherwise the direction is materialized into
      ``idx`` / ``val`` and the objective's ``line`` / ``update`` kernels serve.
      Either way the step size is ``rule(rparams, k / n, slope, curv, gamma_max)``
      (``gamma_max`` 1, or the away weight for pairwise steps) and the average is
      settled here.
    * ``certify(dstate, g, est, refresh, idx, val, table=None) -> (sum_gap,
      sum_score)``: one oracle call (or stored vertex) per block; with ``refresh``
      the block-gap estimates are replaced by the exact block gaps.
    """
    if fused and pairwise is not None:
        raise ValueError("compiled_driver: pairwise steps materialize their direction; "
                         "give `pairwise` only with fused=False")
    if rounds and (blocks.rounds is None or pairwise is not None):
        raise ValueError("compiled_driver: rounds=True needs the domain's RoundKernels "
                         "(CompiledBlocks.rounds) and Frank-Wolfe block steps")
    curvature = blocks.curvature if fused else _no_curvature
    describe = blocks.describe if fused else _no_describe
    moved = (blocks.moved or _no_moved) if fused else _no_moved
    sync = blocks.sync if fused else _no_sync
    kernels = {"direction": blocks.direction, "commit": blocks.commit, "curvature": curvature,
               "describe": describe, "moved": moved, "sync": sync, "line": objective.line,
               "update": objective.update, "rule": rule,
               "away": _no_away if pairwise is None else pairwise.away,
               "move": _no_move if pairwise is None else pairwise.move,
               "recall": blocks.rounds.recall if rounds else _no_recall}
    flags = {"FUSED": bool(fused), "PAIRWISE": pairwise is not None, "ROUNDS": bool(rounds)}
    key = (tuple(kernels.values()), tuple(flags.values()))
    hit = _DRIVERS.get(key)
    if hit is None:
        hit = _build_driver(kernels, flags)
        _DRIVERS[key] = hit
    return hit


# -- building the driver: numba cannot cache a closure over kernels, so when every
# kernel is an importable module-level function the pass template is written out as a
# small module that imports them, and numba caches that (no LLVM compilation, and none
# of its memory, after the first run of a kernel combination)

_HELPERS = ("Average", "_avg_cum", "average_touch", "apply_direction", "gap_pick",
            "gap_weight", "tree_set")


def _import_path(fn: Any) -> tuple[str, str] | None:
    """``(module, name)`` under which ``fn`` can be imported again, else ``None``."""
    import sys

    py = getattr(fn, "py_func", None)
    mod = getattr(py, "__module__", None)
    name = getattr(py, "__qualname__", "")
    if mod is None or "." in name or "<" in name:
        return None
    if getattr(sys.modules.get(mod), name, None) is not fn:
        return None
    return mod, name


def _sources_stamp(modules: list[str]) -> str:
    """Hash of the size and mtime of every source file of the packages of ``modules``
    (numba's cache does not see changes of the functions a cached function calls)."""
    import hashlib
    import sys
    from pathlib import Path

    files = set()
    for mod in modules:
        file = Path(getattr(sys.modules[mod], "__file__", "") or "").resolve()
        path = file.parent
        if not (path / "__init__.py").exists():  # a top-level module or script
            files.add(file)
            continue
        while (path.parent / "__init__.py").exists():
            path = path.parent
        files.update(path.rglob("*.py"))
    h = hashlib.sha1()
    for f in sorted(files):
        st = f.stat()
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def _cache_dir() -> Any:
    import os
    from pathlib import Path

    base = os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or \
        str(Path.home() / ".cache")
    return Path(base) / "frankwolfe" / "drivers"


def _build_driver(kernels: dict[str, Any], flags: dict[str, bool]
                  ) -> tuple[Callable, Callable]:
    import importlib.util
    import inspect
    import os
    import sys
    import tempfile

    from . import _pass_template

    source = inspect.getsource(_pass_template)
    paths = {name: _import_path(fn) for name, fn in kernels.items()}
    if all(p is not None for p in paths.values()):
        mods = sorted({p[0] for p in paths.values()} | {__name__})
        stamp = _sources_stamp(mods)
        ident = ";".join(f"{k}={m}:{q}" for k, (m, q) in sorted(paths.items()))
        import hashlib

        tag = hashlib.sha1(f"{ident};{flags};{stamp}".encode()).hexdigest()[:20]
        head = ["from numba import njit",
                f"from {__name__} import {', '.join(_HELPERS)}"]
        head += [f"from {m} import {q} as {k}" for k, (m, q) in sorted(paths.items())]
        head += [f"{k} = {v}" for k, v in flags.items()] + [""]
        tail = ["", "run_pass = njit(nogil=True, cache=True)(run_pass)",
                "certify = njit(nogil=True, cache=True)(certify)", ""]
        text = "\n".join(head) + "\n" + source + "\n".join(tail)
        try:
            folder = _cache_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"_fw_pass_{tag}.py"
            if not path.exists() or path.read_text() != text:
                fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
                os.replace(tmp, path)  # atomic: concurrent processes see whole files
            name = f"_fw_pass_{tag}"
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            return module.run_pass, module.certify
        except OSError:
            pass  # no writable cache folder: compile in memory
    ns: dict[str, Any] = {name: globals()[name] for name in _HELPERS}
    ns.update(kernels, **flags)
    exec(compile(source, inspect.getsourcefile(_pass_template), "exec"), ns)
    return njit(nogil=True)(ns["run_pass"]), njit(nogil=True)(ns["certify"])


def fused_driver(blocks: CompiledBlocks, objective: CompiledObjective) -> bool | None:
    """``True`` when the fused kernels apply to this domain and objective, else ``None``
    (the driver then materializes the direction)."""
    h = objective.hessian_diag
    if not blocks.fused or h is None:
        return None
    if blocks.accepts is not None and not blocks.accepts(h):
        return None
    return True


# -- built in: a product of scaled probability simplices ------------------------------

class SimplexState(NamedTuple):
    """Dense block iterates ``Z[off[i]:off[i+1]]`` over ``idx_flat[off[i]:off[i+1]]``."""

    Z: np.ndarray
    idx_flat: np.ndarray
    off: np.ndarray
    radius: np.ndarray
    last: np.ndarray  # vertex of the last oracle call


@njit(cache=True, nogil=True)
def _simplex_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    Z, idx_flat, off = state.Z, state.idx_flat, state.off
    lo = off[i]
    hi = off[i + 1]
    m = hi - lo
    jmin = 0
    gz = 0.0
    for a in range(m):
        ga = g[idx_flat[lo + a]]
        gz += ga * Z[lo + a]
        if ga < g[idx_flat[lo + jmin]]:
            jmin = a
    score = state.radius[i] * g[idx_flat[lo + jmin]]
    state.last[0] = jmin
    if want:
        for a in range(m):
            idx[a] = idx_flat[lo + a]
            val[a] = -Z[lo + a]
        val[jmin] += state.radius[i]
    return m, gz - score, score


@njit(cache=True, nogil=True)
def _simplex_commit(state, i, gamma):  # pragma: no cover - compiled
    Z, off = state.Z, state.off
    lo = off[i]
    for a in range(off[i + 1] - lo):
        Z[lo + a] *= 1.0 - gamma
    Z[lo + state.last[0]] += gamma * state.radius[i]


def simplex_blocks(Z: np.ndarray, idx_flat: np.ndarray, off: np.ndarray,
                   radius: np.ndarray) -> CompiledBlocks:
    """:class:`CompiledBlocks` of a product of probability simplices whose block
    iterates are the dense rows ``Z[off[i]:off[i+1]]`` over ``idx_flat[off[i]:off[i+1]]``
    (updated in place)."""
    state = SimplexState(Z, idx_flat, off, radius, np.zeros(1, dtype=np.int64))
    sizes = np.diff(off)
    return CompiledBlocks(_simplex_direction, _simplex_commit, state,
                          int(sizes.max(initial=1)), start=None)

"""Compiled kernels of the origin blocks: BCFW's block steps on traffic in numba.

The core's compiled pass driver (:func:`frankwolfe.compiled.compiled_driver`) runs the
block steps; what it asks of the domain is answered here, for
:class:`~.blocks.AssignmentBlocks` with ``by="origin"``: the block oracle (one origin's
shortest-path tree, :func:`~.assignment._origin_tree`), the block's stored trees with
their weights (its active set, for pairwise steps; and gapBCFW's cache: the best stored
tree when it is good enough), and the moves of the weights.  The step size, the line
search (the core's, on the Beckmann objective's link-cost kernel) and the updates of the
flows and costs are the driver's.

The trees live in one arena (a tree's loaded links, increasing, and their loads), rows
of a table of trees (offset, length, weight, stamp of last use, hash of the links), and
each block lists its rows; the arrays grow between calls of the driver
(``CompiledBlocks.prepare``), by the room the call may need.  A block point is the
weighted sum of its trees and is never stored densely (a result's ``block_iterates``
are a sparse array, one row per block: :meth:`_Tables.block_points`).  The bookkeeping
follows the core's :class:`~frankwolfe.algorithms.bcfw.store.BlockAtomStore` (the Python
steps' table): at most ``cache_size`` inactive trees per block, the least recently used
one replaced first, weights below 1e-15 dropped and renormalized to sum 1, so both take
the same steps.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from frankwolfe.atoms import Atom
from frankwolfe.compiled import CompiledBlocks, PairwiseKernels

from .assignment import _origin_tree
from .sparse_rows import csr_rows

__all__ = ["OriginTables", "origin_kernels", "start_trees"]

# the slots of OriginTables.conf (_STEP: a block step's oracle call, not a certificate's)
_S, _A, _CLOCK, _MAX, _ROWS, _END, _GARBAGE, _THRU, _STEP, _CACHE, _DROPS = range(11)


class OriginTables(NamedTuple):
    """The typed record of the origin blocks' kernels (arrays only: a call from Python
    then costs microseconds).

    Graph (CSR by tail node), each block's demand row and origin; the scratch arrays of
    the shortest-path kernel; the rows of trees (``start``, ``length`` into the arena
    ``links`` / ``loads``, ``weight``, ``stamp`` of last use, ``key``: a hash of the
    links); each block's rows ``brows[i, :bcount[i]]``; ``conf``: the vertex row and
    the away row of the last step, the clock (step count), the bound of inactive trees
    per block, the rows and the arena in use, the arena's garbage, the first through
    node; ``work`` / ``mark``: zeroed scratch of the link length.
    """

    indptr: np.ndarray
    out_link: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    demand: np.ndarray
    origin: np.ndarray
    flow: np.ndarray
    used: np.ndarray
    dist: np.ndarray
    pred: np.ndarray
    order: np.ndarray
    done: np.ndarray
    load: np.ndarray
    hk: np.ndarray
    hv: np.ndarray
    start: np.ndarray
    length: np.ndarray
    weight: np.ndarray
    stamp: np.ndarray
    key: np.ndarray
    brows: np.ndarray
    bcount: np.ndarray
    links: np.ndarray  # int32
    loads: np.ndarray
    conf: np.ndarray
    work: np.ndarray
    mark: np.ndarray


@njit(cache=True, nogil=True)
def _hash(links, n):  # pragma: no cover - compiled
    h = np.uint64(14695981039346656037)
    for j in range(n):
        h = (h ^ np.uint64(links[j])) * np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def _sort(a):  # pragma: no cover - compiled
    """Heap sort of ``a`` in place (numba's own sort compiles for seconds)."""
    start, end = a.size // 2, a.size
    while end > 1:
        if start > 0:  # building the heap
            start -= 1
            root = start
        else:  # the largest to the end
            end -= 1
            a[0], a[end] = a[end], a[0]
            root = 0
        while True:  # sift down
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and a[child] < a[child + 1]:
                child += 1
            if a[root] >= a[child]:
                break
            a[root], a[child] = a[child], a[root]
            root = child


@njit(cache=True, nogil=True)
def _keep(st, i, stamp, n):  # pragma: no cover - compiled
    """Row of the tree ``used[:n]`` (increasing, loads in ``flow``) of block ``i``: the
    stored one, else a new row of weight 0 (the least recently used inactive row once
    the block holds ``conf[_MAX]`` rows)."""
    conf, used = st.conf, st.used
    h = _hash(used, n)
    c = st.bcount[i]
    for r in range(c):
        q = st.brows[i, r]
        if st.key[q] == h and st.length[q] == n:
            a = st.start[q]
            same = True
            for j in range(n):
                if st.links[a + j] != used[j]:
                    same = False
                    break
            if same:
                st.stamp[q] = stamp
                return q
    step = conf[_STEP] != 0
    q = -1
    if c >= conf[_MAX]:
        oldest = 0
        for r in range(c):
            p = st.brows[i, r]
            if st.weight[p] <= 0.0 and (q < 0 or st.stamp[p] < oldest):
                q = p
                oldest = st.stamp[p]
    end = conf[_END]
    full = end + n > st.links.size or (q < 0 and (conf[_ROWS] >= st.weight.size
                                                   or c >= st.brows.shape[1]))
    if full:  # prepare() made room for the steps; a certificate's tree waits
        if step:
            raise ValueError("origin blocks: the table of trees is full (prepare not called)")
        return -1
    if q >= 0:
        conf[_GARBAGE] += st.length[q]
    else:
        q = conf[_ROWS]
        conf[_ROWS] = q + 1
        st.brows[i, c] = q
        st.bcount[i] = c + 1
    for j in range(n):
        st.links[end + j] = used[j]
        st.loads[end + j] = st.flow[used[j]]
    conf[_END] = end + n
    st.start[q] = end
    st.length[q] = n
    st.weight[q] = 0.0
    st.stamp[q] = stamp
    st.key[q] = h
    return q


@njit(cache=True, nogil=True)
def _stats(st, i, g, everyone):  # pragma: no cover - compiled
    """One pass over block ``i``'s trees at costs ``g``: ``<g, z_i>`` (the weighted
    scores of the active trees), the tree of lowest score (of all trees when
    ``everyone``, else none) and the active tree of highest score, with their scores
    (rows -1 when none; first rows win ties)."""
    gz = 0.0
    low, low_row = np.inf, -1
    high, high_row = -np.inf, -1
    for r in range(st.bcount[i]):
        q = st.brows[i, r]
        w = st.weight[q]
        if not (everyone or w > 0.0):
            continue
        sc = 0.0
        for j in range(st.start[q], st.start[q] + st.length[q]):
            sc += g[st.links[j]] * st.loads[j]
        if w > 0.0:
            gz += w * sc
            if sc > high:
                high, high_row = sc, q
        if everyone and sc < low:
            low, low_row = sc, q
    return gz, low, low_row, high, high_row


@njit(cache=True, nogil=True)
def _fw_direction(st, i, s, idx, val):  # pragma: no cover - compiled
    """``d = a_s - z_i`` as sorted indices / values; its length."""
    work, mark = st.work, st.mark
    nnz = 0
    for r in range(st.bcount[i]):
        q = st.brows[i, r]
        c = (1.0 if q == s else 0.0) - st.weight[q]
        if c == 0.0:
            continue
        for p in range(st.start[q], st.start[q] + st.length[q]):
            j = st.links[p]
            if mark[j] == 0:
                mark[j] = 1
                idx[nnz] = j
                nnz += 1
            work[j] += c * st.loads[p]
    _sort(idx[:nnz])
    for p in range(nnz):
        j = idx[p]
        val[p] = work[j]
        work[j] = 0.0
        mark[j] = 0
    return nnz


@njit(cache=True, nogil=True)
def _direction(st, i, g, want, idx, val):  # pragma: no cover - compiled
    """The block oracle: origin ``i``'s shortest-path tree at costs ``g``, kept in the
    block's table; ``(nnz, gap, score)`` (the direction toward it when ``want``)."""
    conf = st.conf
    _, n, bad = _origin_tree(g, st.indptr, st.out_link, st.head, st.tail, st.demand[i],
                             st.origin[i], conf[_THRU], st.flow, st.used, st.dist, st.pred,
                             st.order, st.done, st.load, st.hk, st.hv)
    if bad >= 0:
        # the zones 1-based, as the Python blocks name them (numba has no f-strings)
        raise ValueError("origin blocks: zone " + str(bad + 1) + " cannot be reached from "
                         "zone " + str(st.origin[i] + 1) + " (1-based), which has demand "
                         "to it (links of infinite or NaN cost count as closed)")
    _sort(st.used[:n])
    score = 0.0
    for j in range(n):
        score += g[st.used[j]] * st.flow[st.used[j]]
    # a step's answer joins the table (the vertex of the step); a certificate's only for
    # the cache (as the Python steps); stamped with the step count
    if conf[_STEP] or conf[_CACHE]:
        s = _keep(st, i, conf[_CLOCK], n)
    else:
        s = -1
    if conf[_STEP]:
        conf[_STEP] = 0
        conf[_CLOCK] += 1  # a certificate after the step stamps with the next count
    for j in range(n):
        st.flow[st.used[j]] = 0.0  # the scratch flows stay zero between calls
    conf[_S] = s
    gz = _stats(st, i, g, i < 0)[0]  # (a bool, not a literal: one compilation)
    nnz = _fw_direction(st, i, conf[_S], idx, val) if want else 0
    return nnz, gz - score, score


@njit(cache=True, nogil=True)
def _lookup(st, i, g, threshold, k, want, idx, val):  # pragma: no cover - compiled
    """gapBCFW's cache: the stored tree of block ``i`` with the lowest score when its gap
    is at least ``threshold`` (called before every block step: it tells ``_direction``
    the step count)."""
    st.conf[_CLOCK] = k
    st.conf[_STEP] = 1
    if not threshold < np.inf:  # nothing can serve (no cache, or an unvisited block)
        return 0, 0.0, 0.0, False
    gz, low, best, _, _ = _stats(st, i, g, i >= 0)
    if best < 0 or not gz - low >= threshold:
        return 0, 0.0, 0.0, False
    st.stamp[best] = k
    st.conf[_S] = best
    st.conf[_STEP] = 0
    st.conf[_CLOCK] = k + 1
    nnz = _fw_direction(st, i, st.conf[_S], idx, val) if want else 0
    return nnz, gz - low, low, True


@njit(cache=True, nogil=True)
def _settle(st, i):  # pragma: no cover - compiled
    """Rounding residue of dropped trees to 0, the weights back to sum 1, as the Python
    table's ``move``; their sum is numpy's to the last bit: blocks of at most 128
    numbers (sequential below 8, else 8 accumulators combined pairwise), halved above
    (the halving unrolled on a stack: numba's cache and recursion do not mix well)."""
    W, rows = st.weight, st.brows[i]
    c = st.bcount[i]
    for r in range(c):
        if W[rows[r]] < 1e-15:
            W[rows[r]] = 0.0
    sa = np.zeros(64, np.int64)  # the pending halves: start, length, left sum
    sn = np.zeros(64, np.int64)
    phase = np.zeros(64, np.int64)
    left = np.zeros(64)
    acc = np.zeros(8)
    top = 0
    sn[0] = c
    total = 0.0
    while top >= 0:
        m = sn[top]
        if m > 128:  # split: the left half first
            phase[top] = 1
            h = m // 2 - (m // 2) % 8
            top += 1
            sa[top], sn[top], phase[top] = sa[top - 1], h, 0
            continue
        a = sa[top]
        if m < 8:
            v = 0.0
            for j in range(a, a + m):
                v += W[rows[j]]
        else:
            for t in range(8):
                acc[t] = W[rows[a + t]]
            j = 8
            while j < m - m % 8:
                for t in range(8):
                    acc[t] += W[rows[a + j + t]]
                j += 8
            v = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
            while j < m:
                v += W[rows[a + j]]
                j += 1
        top -= 1
        while top >= 0:  # hand v up: a left half waits for its right one
            if phase[top] == 1:
                left[top] = v
                phase[top] = 2
                h = sn[top] // 2 - (sn[top] // 2) % 8
                top += 1
                sa[top], sn[top], phase[top] = sa[top - 1] + h, sn[top - 1] - h, 0
                break
            v = left[top] + v
            top -= 1
        if top < 0:
            total = v
    if total > 0.0 and total != 1.0:
        for r in range(c):
            W[rows[r]] = W[rows[r]] / total


@njit(cache=True, nogil=True)
def _commit(st, i, gamma):  # pragma: no cover - compiled
    W = st.weight
    s = st.conf[_S]
    for r in range(st.bcount[i]):
        q = st.brows[i, r]
        W[q] = W[q] * (1.0 - gamma) if gamma < 1.0 else 0.0
    W[s] = W[s] + gamma if gamma < 1.0 else 1.0
    _settle(st, i)


@njit(cache=True, nogil=True)
def _away(st, i, g, idx, val):  # pragma: no cover - compiled
    """The active tree with the largest score; ``s - a`` (sorted, exact zeros left out)
    and its weight."""
    s = st.conf[_S]
    a = _stats(st, i, g, i < 0)[4]
    st.conf[_A] = a
    if a < 0 or a == s:
        return 0, 0.0
    links, loads = st.links, st.loads
    p, pe = st.start[s], st.start[s] + st.length[s]
    q, qe = st.start[a], st.start[a] + st.length[a]
    nnz = 0
    while p < pe or q < qe:
        if q >= qe or (p < pe and links[p] < links[q]):
            j, v = links[p], loads[p]
            p += 1
        elif p >= pe or links[q] < links[p]:
            j, v = links[q], -loads[q]
            q += 1
        else:
            j, v = links[p], loads[p] - loads[q]
            p += 1
            q += 1
        if v != 0.0:
            idx[nnz] = j
            val[nnz] = v
            nnz += 1
    return nnz, st.weight[a]


@njit(cache=True, nogil=True)
def _move(st, i, gamma):  # pragma: no cover - compiled
    W = st.weight
    s, a = st.conf[_S], st.conf[_A]
    wa = W[a]
    W[s] = W[s] + gamma
    W[a] = W[a] - gamma
    if gamma >= wa:  # a drop step
        W[a] = 0.0
        st.conf[_DROPS] += 1
    _settle(st, i)


def _grown(a: np.ndarray, size: int, fill: Any = 0) -> np.ndarray:
    out = np.full((size,) + a.shape[1:], fill, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


class _Tables:
    """The Python side of the kernels' record: the room each call of the driver needs,
    and what a result reports (block points, active sets)."""

    def __init__(self, blocks: Any, start: list[list[tuple[np.ndarray, np.ndarray, float]]],
                 cache_size: int, cache: bool) -> None:
        net, graph = blocks.network, blocks.aon.graph
        self.blocks = blocks
        self.n, self.m = n, m = blocks.n_blocks, net.n_links
        #: a tree loads at most one link into each node
        self.max_tree = max(1, min(m, net.n_nodes - 1))
        trees = [t for s in start for t in s]
        rows = max(2 * len(trees), 16)
        starts = np.zeros(rows, dtype=np.int64)
        lengths = np.zeros(rows, dtype=np.int64)
        sizes = [t[0].size for t in trees]
        starts[:len(trees)] = np.concatenate(([0], np.cumsum(sizes)[:-1])) if trees else 0
        lengths[:len(trees)] = sizes
        end = int(sum(sizes))
        # int32 link ids: a tree costs 12 bytes a link
        links = np.zeros(max(2 * end, 16), dtype=np.int32)
        loads = np.zeros(links.size)
        weight = np.zeros(rows)
        key = np.zeros(rows, dtype=np.uint64)
        cols = max(4, max(len(s) for s in start))
        brows = np.full((n, cols), -1, dtype=np.int64)
        bcount = np.array([len(s) for s in start], dtype=np.int64)
        q = 0
        for i, s in enumerate(start):
            for r, (li, lo, w) in enumerate(s):
                a = starts[q]
                links[a:a + li.size] = li
                loads[a:a + li.size] = lo
                weight[q] = w
                key[q] = _hash(li, li.size)
                brows[i, r] = q
                q += 1
        nn = net.n_nodes
        conf = np.array([-1, -1, 0, int(cache_size), len(trees), end, 0,
                         int(net.first_thru_node), 0, int(bool(cache)), 0], dtype=np.int64)
        self.state = OriginTables(
            graph.indptr, graph.out_link, graph.head, graph.tail,
            np.ascontiguousarray(np.stack([b.demand for b in blocks.blocks])),
            np.array([b.origin for b in blocks.blocks], dtype=np.int64),
            np.zeros(m), np.empty(max(nn, 1), dtype=np.int64), np.empty(nn),
            np.empty(nn, dtype=np.int64), np.empty(nn, dtype=np.int64),
            np.zeros(nn, dtype=np.bool_), np.zeros(nn), np.empty(m + 1),
            np.empty(m + 1, dtype=np.int64), starts, lengths, weight,
            np.zeros(rows, dtype=np.int64), key, brows, bcount, links, loads, conf,
            np.zeros(m), np.zeros(m, dtype=np.int8))
        self.start_trees = start
        self.kernels: CompiledBlocks | None = None

    def prepare(self, steps: int) -> int:
        """Room for the next block steps (each adds at most one tree): more rows, block
        columns and arena when short (the arena compacted first when it holds garbage);
        returns how many of ``steps`` fit (the arena grows by at most about its live
        size, at least 2**20 links, per call; a certificate stores what fits)."""
        st = self.state
        conf = st.conf
        budget = max(int(conf[_END]) - int(conf[_GARBAGE]), 1 << 20)
        steps = max(1, min(steps, budget // self.max_tree))
        new: dict[str, np.ndarray] = {}
        rows = int(conf[_ROWS]) + steps
        if rows > st.weight.size:
            size = max(2 * st.weight.size, rows)
            new.update(start=_grown(st.start, size), length=_grown(st.length, size),
                       weight=_grown(st.weight, size), stamp=_grown(st.stamp, size),
                       key=_grown(st.key, size))
        cols = int(st.bcount.max(initial=0)) + steps
        if cols > st.brows.shape[1]:
            size = max(2 * st.brows.shape[1], cols)
            grown = np.full((self.n, size), -1, dtype=np.int64)
            grown[:, :st.brows.shape[1]] = st.brows
            new["brows"] = grown
        need = int(conf[_END]) + steps * self.max_tree
        if need > st.links.size:
            if conf[_GARBAGE] > 0:
                self._compact(new)
                need = int(conf[_END]) + steps * self.max_tree
            if need > st.links.size:
                size = max(2 * st.links.size, need)
                live = int(conf[_END])
                new["links"] = _grown(new.get("links", st.links)[:live], size)
                new["loads"] = _grown(new.get("loads", st.loads)[:live], size)
        if new:
            self.state = st._replace(**new)
            assert self.kernels is not None
            self.kernels.state = self.state
        return steps

    def _compact(self, new: dict[str, np.ndarray]) -> None:
        """The live trees moved to the front of the arena (row order), garbage dropped."""
        st = self.state
        conf = st.conf
        nrows = int(conf[_ROWS])
        start = new.get("start", st.start)
        length = new.get("length", st.length)
        order = np.argsort(start[:nrows], kind="stable")
        lens = length[:nrows][order]
        fresh = np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64) if nrows else \
            np.zeros(0, np.int64)
        src = np.concatenate([np.arange(start[q], start[q] + length[q]) for q in order]) \
            if nrows else np.zeros(0, np.int64)
        links, loads = st.links[src], st.loads[src]
        end = links.size
        st.links[:end] = links
        st.loads[:end] = loads
        start[:nrows][order] = fresh
        conf[_END] = end
        conf[_GARBAGE] = 0

    def add_start(self, x: np.ndarray) -> None:
        """``x += sum_i z_i`` as the Python start sums it: each block's point densely,
        then added."""
        for s in self.start_trees:
            v = np.zeros(self.m)
            for links, loads, w in s:
                v[links] += w * loads
            x += v

    def _active(self, i: int) -> list[int]:
        st = self.state
        return [int(q) for q in st.brows[i, :st.bcount[i]] if st.weight[q] > 0.0]

    def _tree(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        st = self.state
        a, n = int(st.start[q]), int(st.length[q])
        return st.links[a:a + n], st.loads[a:a + n]

    def block_points(self) -> sp.csr_array:
        """Each block's point: row ``i`` of a sparse ``(n_blocks, n_links)`` CSR array,
        the link flows of block ``i`` (its active trees' weighted loads, summed as a dense
        row would sum them; stored on the links of those trees only: a dense row costs
        ``8 n_links`` bytes a block, 1.2 GB for 4,000 origins of a 40,000-link grid)."""
        st = self.state
        work = np.zeros(self.m)  # one dense row of scratch, zero between blocks
        sizes = np.zeros(self.n + 1, dtype=np.int64)
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for i in range(self.n):
            active = self._active(i)
            trees = [self._tree(q) for q in active]
            for q, (links, loads) in zip(active, trees):
                work[links] += st.weight[q] * loads
            j = np.unique(np.concatenate([links for links, _ in trees])) if trees else \
                np.zeros(0, dtype=np.int32)
            cols.append(j)
            vals.append(work[j])
            work[j] = 0.0
            sizes[i + 1] = j.size
        return csr_rows(cols, vals, sizes, (self.n, self.m))

    def outputs(self) -> dict[str, Any]:
        """``Result.extra`` entries: each block's ``(key, weight)`` pairs (keys as the
        Python blocks make them), their number, the bytes of the tables, the drop steps."""
        sets = [[(b.key(self._tree(q)[0].astype(np.int64)), float(self.state.weight[q]))
                 for q in self._active(i)] for i, b in enumerate(self.blocks.blocks)]
        st = self.state
        tables = (st.start, st.length, st.weight, st.stamp, st.key, st.brows, st.bcount,
                  st.links, st.loads)
        return {"active_sets": sets, "active_set_size": sum(len(a) for a in sets),
                "atom_store_bytes": int(sum(a.nbytes for a in tables)),
                "n_drop_steps": int(st.conf[_DROPS])}


def origin_kernels(blocks: Any, start: list[list[tuple[np.ndarray, np.ndarray, float]]],
                   cache_size: int, cache: bool) -> CompiledBlocks:
    """The compiled kernels of origin blocks (an :class:`~.blocks.AssignmentBlocks`
    with ``by="origin"``) from each block's start trees ``(links, loads, weight)``;
    ``cache_size`` inactive trees kept per block, and with ``cache`` the certificates'
    trees too."""
    tables = _Tables(blocks, start, cache_size, cache)
    kernels = CompiledBlocks(_direction, _commit, tables.state, blocks.network.n_links,
                             tables.add_start, block_points=tables.block_points,
                             pairwise=PairwiseKernels(_away, _move), lookup=_lookup,
                             outputs=tables.outputs, prepare=tables.prepare)
    tables.kernels = kernels
    return kernels


def start_trees(blocks: Any, x0: Any) -> list[list[tuple[np.ndarray, np.ndarray, float]]] | None:
    """Each block's start trees ``(links, loads, weight)``: the free-flow trees (``x0``
    None) or the active sets of a warm start (``(Atom, weight)`` pairs); ``None`` for
    any other start (the Python steps take it)."""
    net = blocks.network
    if x0 is None:
        costs = net.link_costs(np.zeros(net.n_links))
        out = []
        for b in blocks.blocks:
            links, flows, _ = b.tree(costs)
            out.append([(links, flows, 1.0)])
        return out
    if not isinstance(x0, (list, tuple)) or len(x0) != blocks.n_blocks:
        return None
    out = []
    for i, p in enumerate(x0):
        if not (isinstance(p, (list, tuple)) and p and all(
                isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], Atom)
                and e[0].is_sparse for e in p)):
            return None
        w = np.array([float(wa) for _, wa in p])
        if not (np.all(np.isfinite(w)) and w.min() >= 0.0 and abs(w.sum() - 1.0) <= 1e-9):
            raise ValueError(
                f"x0: block {i}'s active set must have non-negative weights summing to 1, got "
                f"sum {w.sum()!r} and minimum {w.min()!r}")
        w /= w.sum()
        seen: dict[Any, int] = {}
        trees: list[tuple[np.ndarray, np.ndarray, float]] = []
        for (atom, _), wa in zip(p, w):
            if atom.key in seen:  # the same tree twice: its weights add up
                links, loads, w0 = trees[seen[atom.key]]
                trees[seen[atom.key]] = (links, loads, w0 + wa)
                continue
            order = np.argsort(atom.indices, kind="stable")
            seen[atom.key] = len(trees)
            trees.append((np.asarray(atom.indices, dtype=np.int64)[order],
                          np.asarray(atom.values, dtype=float)[order], float(wa)))
        out.append(trees)
    return out

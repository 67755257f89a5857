"""Exact MAP inference on pairwise graphs: max-product on forests, variable elimination
and enumeration for small graphs (the reference the approximate methods are tested
against).  Scores are maximized; see :mod:`.energy` for the conventions."""

from __future__ import annotations

import numba as nb
import numpy as np

from frankwolfe._numbers import check_whole

from .energy import check_energy, is_forest, labelling_score

_INT64_MAX = int(np.iinfo(np.int64).max)

__all__ = ["tree_max_product", "exact_enumeration", "exact_elimination"]


@nb.njit(cache=True, nogil=True)
def _tree_kernel(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray
                 ) -> tuple[np.ndarray, float]:  # pragma: no cover - compiled
    n, K = unary.shape
    E = edges.shape[0]
    # allocations of one kind (np.empty of int64 / float64, set by loops): each other
    # kind (np.full, zeros of bools, copies of slices) compiles an implementation of
    # its own, each a cost on a cold cache
    # (benchmarks/README.md, "Measurements behind code choices")
    deg = np.empty(n + 1, dtype=np.int64)
    for i in range(n + 1):
        deg[i] = 0
    for e in range(E):
        deg[edges[e, 0] + 1] += 1
        deg[edges[e, 1] + 1] += 1
    for i in range(n):
        deg[i + 1] += deg[i]
    nbr = np.empty(2 * E, dtype=np.int64)
    via = np.empty(2 * E, dtype=np.int64)
    fill = np.empty(n, dtype=np.int64)
    for i in range(n):
        fill[i] = deg[i]
    for e in range(E):
        for s in range(2):
            a, b = edges[e, s], edges[e, 1 - s]
            nbr[fill[a]] = b
            via[fill[a]] = e
            fill[a] += 1
    # breadth-first order of every tree of the forest
    order = np.empty(n, dtype=np.int64)
    parent = np.empty(n, dtype=np.int64)
    pedge = np.empty(n, dtype=np.int64)
    seen = np.empty(n, dtype=np.int64)
    for i in range(n):
        parent[i] = -1
        pedge[i] = -1
        seen[i] = 0
    head = 0
    tail = 0
    for r in range(n):
        if seen[r]:
            continue
        seen[r] = 1
        order[tail] = r
        tail += 1
        while head < tail:
            a = order[head]
            head += 1
            for k in range(deg[a], deg[a + 1]):
                b = nbr[k]
                if not seen[b]:
                    seen[b] = 1
                    parent[b] = a
                    pedge[b] = via[k]
                    order[tail] = b
                    tail += 1
    acc = np.empty((n, K))
    arg = np.empty((n, K), dtype=np.int64)  # best own state given the parent's
    for i in range(n):
        for k in range(K):
            acc[i, k] = unary[i, k]
            arg[i, k] = 0
    for t in range(n - 1, -1, -1):
        v = order[t]
        p = parent[v]
        if p < 0:
            continue
        e = pedge[v]
        v_first = edges[e, 0] == v
        for yp in range(K):
            best = -np.inf
            bi = 0
            for yv in range(K):
                s = acc[v, yv] + (pairwise[e, yv, yp] if v_first else pairwise[e, yp, yv])
                if s > best:
                    best = s
                    bi = yv
            acc[p, yp] += best
            arg[v, yp] = bi
    y = np.empty(n, dtype=np.int64)
    total = 0.0
    for t in range(n):
        v = order[t]
        if parent[v] < 0:
            bi = 0
            for k in range(1, K):
                if acc[v, k] > acc[v, bi]:
                    bi = k
            y[v] = bi
            total += acc[v, bi]
        else:
            y[v] = arg[v, y[parent[v]]]
    return y, total


def tree_max_product(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray
                     ) -> tuple[np.ndarray, float]:
    """Exact MAP on a forest by max-product (max-sum) dynamic programming, compiled.

    Cost O(n + E K^2) time, O(n K) memory.  Guarantee: the returned labelling
    maximizes the score (ties to the lowest state) when the graph has no cycle.

    Parameters
    ----------
    unary, pairwise, edges
        As in :mod:`.energy` (pairwise shared or one per edge).

    Returns
    -------
    labels : ndarray of int64, shape (n_nodes,)
    score : float
        The maximum score.

    Raises
    ------
    ValueError
        When the graph has a cycle (parallel edges included).
    """
    u, p, e = check_energy(unary, pairwise, edges, "tree_max_product")
    if not is_forest(u.shape[0], e):
        raise ValueError("tree_max_product: the graph has a cycle; use inference='lp', 'trws' "
                         "or exact_elimination")
    y, s = _tree_kernel(u, p, e)
    return y, float(s)


def exact_enumeration(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
                      max_labellings: int = 1 << 22) -> tuple[np.ndarray, float]:
    """Exact MAP by scoring every labelling (the test reference for tiny graphs).

    Cost O(K^n (n + E)) time in chunks of 65,536 labellings, no structure used.
    Guarantee: exact (ties to the lexicographically first labelling).

    Raises
    ------
    ValueError
        When ``K^n`` exceeds ``max_labellings``.
    """
    max_labellings = check_whole(max_labellings, "max_labellings", 1, "exact_enumeration")
    u, p, e = check_energy(unary, pairwise, edges, "exact_enumeration")
    n, K = u.shape
    if K ** n > _INT64_MAX:  # the labellings' indices (int64) would overflow
        raise ValueError(f"exact_enumeration: {K}^{n} labellings exceed the int64 range; use "
                         "exact_elimination or a relaxation")
    if K ** n > max_labellings:
        raise ValueError(f"exact_enumeration: {K}^{n} labellings exceed max_labellings="
                         f"{max_labellings}; use exact_elimination or a relaxation")
    best_s, best_y = -np.inf, np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    # digit j of a labelling's index in base K is node j's state (the last node fastest)
    powers = K ** np.arange(n - 1, -1, -1, dtype=np.int64)
    total = K ** n
    for lo in range(0, total, 65536):
        idx = np.arange(lo, min(total, lo + 65536), dtype=np.int64)
        chunk = (idx[:, None] // powers[None, :]) % K
        s = u[rows, chunk].sum(axis=1)
        if e.shape[0]:
            s += p[np.arange(e.shape[0]), chunk[:, e[:, 0]], chunk[:, e[:, 1]]].sum(axis=1)
        k = int(np.argmax(s))
        if s[k] > best_s:
            best_s, best_y = float(s[k]), chunk[k].copy()
    return best_y, best_s


def exact_elimination(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
                      max_table: int = 1 << 22) -> tuple[np.ndarray, float]:
    """Exact MAP by max-sum variable elimination in a greedy min-degree order.

    Cost O(n K^(w+1)) time and memory for an elimination width ``w`` (3 on a 3x3
    grid, 4 on a 4x4 grid; the graph's treewidth at best).  Guarantee: exact.

    Raises
    ------
    ValueError
        When an intermediate table would exceed ``max_table`` entries.
    """
    max_table = check_whole(max_table, "max_table", 1, "exact_elimination")
    u, p, e = check_energy(unary, pairwise, edges, "exact_elimination")
    n, K = u.shape
    factors: list[tuple[tuple[int, ...], np.ndarray]] = [((i,), u[i]) for i in range(n)]
    for k, (a, b) in enumerate(e.tolist()):
        factors.append(((a, b), p[k]) if a < b else ((b, a), p[k].T))
    nbrs: list[set[int]] = [set() for _ in range(n)]
    for a, b in e.tolist():
        nbrs[a].add(b)
        nbrs[b].add(a)
    left = set(range(n))
    trace: list[tuple[int, tuple[int, ...], np.ndarray]] = []
    while left:
        x = min(left, key=lambda v: (len(nbrs[v]), v))
        scope = tuple(sorted(nbrs[x] | {x}))
        if K ** len(scope) > min(max_table, _INT64_MAX):
            raise ValueError(f"exact_elimination: a table of {K}^{len(scope)} entries exceeds "
                             f"max_table={max_table}; the graph is too wide for exact inference")
        table = np.zeros((K,) * len(scope))
        keep = []
        for vs, t in factors:
            if x not in vs:
                keep.append((vs, t))
                continue
            shape = [K if v in vs else 1 for v in scope]
            table = table + t.reshape(shape)
        ax = scope.index(x)
        rest = scope[:ax] + scope[ax + 1:]
        trace.append((x, rest, np.argmax(table, axis=ax)))
        keep.append((rest, np.max(table, axis=ax)))
        factors = keep
        for v in nbrs[x]:
            nbrs[v].discard(x)
            nbrs[v] |= nbrs[x] - {v}
        left.discard(x)
    y = np.zeros(n, dtype=np.int64)
    for x, rest, arg in reversed(trace):
        y[x] = arg[tuple(int(y[v]) for v in rest)] if rest else int(arg)
    return y, labelling_score(u, p, e, y)

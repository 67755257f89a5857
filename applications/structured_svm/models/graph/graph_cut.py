"""Graph cuts: a compiled max-flow and alpha-expansion for pairwise energies.

No maintained max-flow package fits: PyMaxflow (1.3.2, wheels for CPython 3.11 and
later) is GPL, which a BSD-3 library cannot depend on, and
``scipy.sparse.csgraph.maximum_flow`` takes integer capacities only (scaling float
potentials to integers changes near-ties of the optimum).  So the max-flow here is
a compiled Dinic (blocking flows on breadth-first level graphs) on float capacities.

Scores are maximized (:mod:`.energy`); a cut minimizes the energy ``-score``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from frankwolfe._numbers import check_whole

from .energy import check_energy, is_submodular_binary, labelling_score
from .message_passing import _potential_scale

__all__ = ["GraphCutResult", "min_cut_binary", "alpha_expansion"]


@nb.njit(cache=True, nogil=True)
def _min_cut(n: int, cost1: np.ndarray, edges: np.ndarray, weight: np.ndarray
             ) -> np.ndarray:  # pragma: no cover - compiled
    # Nodes 0..n-1, source n, sink n + 1.  Node i pays cost1[i] when z_i = 1 (sink side);
    # arc (a, b) of capacity weight[e] is cut when z_a = 0 and z_b = 1.
    src = n
    snk = n + 1
    m = 0
    for i in range(n):
        if cost1[i] != 0.0:
            m += 1
    for e in range(edges.shape[0]):
        if weight[e] > 0.0:
            m += 1
    tail = np.empty(2 * m, dtype=np.int64)
    head = np.empty(2 * m, dtype=np.int64)
    cap = np.empty(2 * m)
    k = 0
    scale = 0.0
    for i in range(n):
        c = cost1[i]
        if c == 0.0:
            continue
        a, b = (src, i) if c > 0 else (i, snk)
        tail[k], head[k], cap[k] = a, b, abs(c)
        tail[k + 1], head[k + 1], cap[k + 1] = b, a, 0.0
        scale = max(scale, abs(c))
        k += 2
    for e in range(edges.shape[0]):
        if weight[e] <= 0.0:
            continue
        tail[k], head[k], cap[k] = edges[e, 0], edges[e, 1], weight[e]
        tail[k + 1], head[k + 1], cap[k + 1] = edges[e, 1], edges[e, 0], 0.0
        scale = max(scale, weight[e])
        k += 2
    # residuals below this are rounding: relative to the largest capacity, as an
    # absolute floor (1e-12) ignored arcs of capacities of order 2^-36 and below and
    # returned wrong cuts
    eps = 1e-12 * scale
    # arcs grouped by tail, pos[j] being arc j's slot: a counting sort, as np.argsort
    # compiled a merge sort, costly on a cold cache
    # (benchmarks/README.md, "Measurements behind code choices")
    start = np.empty(n + 3, dtype=np.int64)
    for i in range(n + 3):
        start[i] = 0
    for j in range(2 * m):
        start[tail[j] + 1] += 1
    for i in range(n + 2):
        start[i + 1] += start[i]
    pos = np.empty(2 * m, dtype=np.int64)
    fill = np.empty(n + 2, dtype=np.int64)
    for i in range(n + 2):
        fill[i] = start[i]
    for j in range(2 * m):
        pos[j] = fill[tail[j]]
        fill[tail[j]] += 1
    to = np.empty(2 * m, dtype=np.int64)
    res = np.empty(2 * m)
    rev = np.empty(2 * m, dtype=np.int64)
    for j in range(2 * m):
        p = pos[j]
        to[p] = head[j]
        res[p] = cap[j]
        rev[p] = pos[j ^ 1]
    # Dinic: a breadth-first level graph, then blocking flows along it by depth-first
    # search with a current-arc pointer per node
    level = np.empty(n + 2, dtype=np.int64)
    queue = np.empty(n + 2, dtype=np.int64)
    cur = np.empty(n + 2, dtype=np.int64)
    path = np.empty(n + 2, dtype=np.int64)  # arcs of the path being grown
    while True:
        for i in range(n + 2):
            level[i] = -1
        level[src] = 0
        queue[0] = src
        qh, qt = 0, 1
        while qh < qt:
            a = queue[qh]
            qh += 1
            for j in range(start[a], start[a + 1]):
                b = to[j]
                if level[b] < 0 and res[j] > eps:
                    level[b] = level[a] + 1
                    queue[qt] = b
                    qt += 1
        if level[snk] < 0:
            break  # level >= 0 now marks the source side of a minimum cut
        for i in range(n + 2):
            cur[i] = start[i]
        depth = 0
        a = src
        while True:
            if a == snk:
                f = np.inf
                for k in range(depth):
                    f = min(f, res[path[k]])
                for k in range(depth):
                    res[path[k]] -= f
                    res[rev[path[k]]] += f
                depth = 0
                a = src
                continue
            moved = False
            while cur[a] < start[a + 1]:
                j = cur[a]
                b = to[j]
                if res[j] > eps and level[b] == level[a] + 1:
                    path[depth] = j
                    depth += 1
                    a = b
                    moved = True
                    break
                cur[a] += 1
            if moved:
                continue
            if a == src:
                break
            level[a] = -1  # a dead end for this level graph
            depth -= 1
            a = to[rev[path[depth]]]
            cur[a] += 1
    z = np.empty(n, dtype=np.int64)  # not reached from the source: the sink side, z = 1
    for i in range(n):
        z[i] = 0 if level[i] >= 0 else 1
    return z


def _binary_move(e0: np.ndarray, e1: np.ndarray, pe: np.ndarray, edges: np.ndarray
                 ) -> tuple[np.ndarray, bool]:
    """Minimize ``sum_i e_i(z_i) + sum_e pe[e, z_a, z_b]`` (energies) by one cut; the
    non-submodular edge terms are truncated (their ``E(1,1)`` lowered, Rother et al.
    2005); returns ``z`` and whether any was."""
    A, B, C, D = pe[:, 0, 0], pe[:, 0, 1], pe[:, 1, 0], pe[:, 1, 1]
    w = B + C - A - D
    truncated = bool(np.any(w < 0))
    w = np.maximum(w, 0.0)
    cost1 = (e1 - e0).astype(np.float64)
    # E(z_a, z_b) = A + (C - A) z_a + (D' - C) z_b + w (1 - z_a) z_b with D' = B + C - A - w
    np.add.at(cost1, edges[:, 0], C - A)
    np.add.at(cost1, edges[:, 1], (B - A - w))
    return _min_cut(e0.shape[0], cost1, edges, w), truncated


@dataclass(frozen=True)
class GraphCutResult:
    """What :func:`min_cut_binary` and :func:`alpha_expansion` return.

    Attributes
    ----------
    labels : ndarray of int64
    score : float
    exact : bool
        Whether ``labels`` is a certified optimum (a binary submodular energy).
    n_sweeps : int
        Sweeps over the labels (0 for a single binary cut).
    """

    labels: np.ndarray
    score: float
    exact: bool
    n_sweeps: int


def min_cut_binary(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray
                   ) -> GraphCutResult:
    """Exact MAP of a 2-state submodular energy by one minimum s-t cut.

    Cost: one max-flow on ``n + 2`` nodes and at most ``n + E`` arcs (Dinic,
    O(n^2 E) worst case; a 64x64 grid takes milliseconds).  Guarantee:
    exact when every edge has ``s(0,0) + s(1,1) >= s(0,1) + s(1,0)``.

    Raises
    ------
    ValueError
        When there are not 2 states or an edge is not submodular (naming it).
    """
    u, p, e = check_energy(unary, pairwise, edges, "min_cut_binary")
    if u.shape[1] != 2:
        raise ValueError(f"min_cut_binary: needs 2 states, got {u.shape[1]}; use "
                         "alpha_expansion")
    if not is_submodular_binary(p):
        w = p[:, 0, 0] + p[:, 1, 1] - p[:, 0, 1] - p[:, 1, 0]
        k = int(np.argmin(w))
        raise ValueError(f"min_cut_binary: edge {k} = {e[k].tolist()} is not submodular "
                         f"(s(0,0) + s(1,1) - s(0,1) - s(1,0) = {w[k]:.6g} < 0); use "
                         "inference='lp' or 'trws'")
    z, _ = _binary_move(-u[:, 0], -u[:, 1], -p, e)
    return GraphCutResult(z, labelling_score(u, p, e, z), True, 0)


def alpha_expansion(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
                    max_sweeps: int = 20) -> GraphCutResult:
    """Alpha-expansion (Boykov, Veksler & Zabih 2001) by minimum cuts.

    Starting from the unary argmax, each move lets every node switch to one label
    ``alpha`` or keep its own, chosen by one cut; sweeps over all labels go on
    until a sweep changes nothing (or ``max_sweeps``).  Cost: ``K`` max-flows per
    sweep.  Guarantee: the score never decreases; with 2 states and a submodular
    energy the result is exact (``exact``); for a metric pairwise energy (Potts)
    every move is solved exactly and the result is within a factor 2 (Potts) of the
    optimal energy when energies are non-negative; otherwise the non-submodular parts
    of a move are truncated and a move is kept only when it raises the score.
    """
    u, p, e = check_energy(unary, pairwise, edges, "alpha_expansion")
    n, K = u.shape
    max_sweeps = check_whole(max_sweeps, "max_sweeps", 1, "alpha_expansion")
    if K == 2 and is_submodular_binary(p):
        return min_cut_binary(u, p, e)
    y = np.argmax(u, axis=1).astype(np.int64)
    best = labelling_score(u, p, e, y)
    rows = np.arange(n)
    er = np.arange(e.shape[0])
    # a move must beat rounding, in units of the largest |potential| (not of 1, which
    # refused every move of potentials of order 2^-40)
    unit = _potential_scale(u, p)
    sweeps = 0
    changed = True
    while changed and sweeps < max_sweeps:
        sweeps += 1
        changed = False
        for alpha in range(K):
            ya, yb = y[e[:, 0]], y[e[:, 1]]
            pe = np.empty((e.shape[0], 2, 2))
            pe[:, 0, 0] = -p[er, ya, yb]
            pe[:, 0, 1] = -p[er, ya, alpha]
            pe[:, 1, 0] = -p[er, alpha, yb]
            pe[:, 1, 1] = -p[er, alpha, alpha]
            z, _ = _binary_move(-u[rows, y], -u[:, alpha], pe, e)
            cand = np.where(z == 1, alpha, y)
            s = labelling_score(u, p, e, cand)
            if s > best + 1e-12 * (unit + abs(best)):
                y, best, changed = cand, s, True
    return GraphCutResult(y, best, False, sweeps)

"""All-or-nothing assignment: the linear minimization oracle of the flow polytope."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from frankwolfe.atoms import Atom
from frankwolfe.errors import InfeasibleError, OracleError, ShapeError
from frankwolfe.lmo.base import LMO
from frankwolfe.parallel.threads import effective_n_jobs

from .network import Network

__all__ = ["AllOrNothing", "Graph"]


class Graph(NamedTuple):
    """The graph an :class:`AllOrNothing` searches, as its shortest-path kernels read it.

    The links leaving each node, in compressed-sparse-row form by tail node: the links
    out of node ``u`` are ``out_link[indptr[u]:indptr[u + 1]]``.  The arrays are the
    oracle's own, shared and not copied (a city's graph and demand are large): read
    them, never write to them.  They stay writable because the compiled kernels that
    read them (the blocks', :mod:`.blocks` and :mod:`.origin_kernels`, and the skims',
    :mod:`.outputs`) compile once per array type, and a read-only array is another one.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n_nodes + 1,)
        Offsets into ``out_link`` of each node's outgoing links.
    out_link : ndarray of int64, shape (n_allowed_links,)
        Link indices grouped by tail node (links banned from the oracle left out).
    head : ndarray of int64, shape (n_links,)
        Head node of every link (the network's ``term_node``).
    tail : ndarray of int64, shape (n_links,)
        Tail node of every link (the network's ``init_node``).
    demand : ndarray of float, shape (n_zones, n_zones)
        The OD demand the oracle loads (the network's ``demand``).
    """

    indptr: np.ndarray
    out_link: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    demand: np.ndarray


@njit(cache=True, nogil=True)
def _heap_push(hk, hv, n, key, val):
    i = n
    hk[i] = key
    hv[i] = val
    while i > 0:
        parent = (i - 1) >> 1
        if hk[parent] <= hk[i]:
            break
        hk[i], hk[parent] = hk[parent], hk[i]
        hv[i], hv[parent] = hv[parent], hv[i]
        i = parent
    return n + 1


@njit(cache=True, nogil=True)
def _heap_pop(hk, hv, n):
    key = hk[0]
    val = hv[0]
    n -= 1
    hk[0] = hk[n]
    hv[0] = hv[n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        c = left
        if left + 1 < n and hk[left + 1] < hk[left]:
            c = left + 1
        if hk[i] <= hk[c]:
            break
        hk[i], hk[c] = hk[c], hk[i]
        hv[i], hv[c] = hv[c], hv[i]
        i = c
    return key, val, n


@njit(cache=True, nogil=True)
def _origin_tree(cost, indptr, out_link, head, tail, demand_row, o, first_thru, flow, used,
                 dist, pred, order, done, load, hk, hv):
    """Load origin ``o``'s demand on its shortest-path tree.

    One Dijkstra (binary heap, lazy deletion), then the demand is pushed down
    the tree in reverse settling order (O(nodes)).  Adds the loads to
    ``flow`` and writes the loaded links to ``used`` (in no particular
    order); returns ``(sum_d d * SP, n_used, unreachable destination or -1)``.
    """
    n_zones = demand_row.size
    dist[:] = np.inf
    pred[:] = -1
    done[:] = False
    dist[o] = 0.0
    # np.int64(0), not 0: numba would compile _heap_push once more for the literal 0
    nh = _heap_push(hk, hv, np.int64(0), 0.0, o)
    n_settled = 0
    while nh > 0:
        du, u, nh = _heap_pop(hk, hv, nh)
        if done[u]:
            continue
        done[u] = True
        order[n_settled] = u
        n_settled += 1
        # zones below the first through node end routes, they do not carry them
        if u != o and u < first_thru:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            a = out_link[e]
            w = head[a]
            nd = du + cost[a]
            if nd < dist[w]:
                dist[w] = nd
                pred[w] = a
                nh = _heap_push(hk, hv, nh, nd, w)
    total = 0.0
    for z in range(n_zones):
        dz = demand_row[z]
        if z != o and dz > 0.0:
            if not done[z]:
                return np.nan, 0, z
            total += dz * dist[z]
            load[z] += dz
    n_used = 0
    for i in range(n_settled - 1, 0, -1):
        v = order[i]
        q = load[v]
        if q != 0.0:
            a = pred[v]
            flow[a] += q
            used[n_used] = a
            n_used += 1
            load[tail[a]] += q
            load[v] = 0.0
    load[o] = 0.0
    return total, n_used, -1


@njit(cache=True, nogil=True)
def _all_or_nothing(cost, indptr, out_link, head, tail, demand, origins, bounds, n_nodes,
                    first_thru, flow, buf):
    """Load every OD demand of ``origins`` on a shortest path; return
    (sum_od d * SP, bad origin, bad dest).

    The origins go in the chunks ``origins[bounds[k]:bounds[k + 1]]``: each chunk's
    flows are summed in ``buf`` (the first chunk's in ``flow``) and added to ``flow``,
    its ``d * SP`` to the total, in chunk order, the order of the threaded
    :meth:`AllOrNothing.assign`, so that one thread or many give the same bits.
    """
    m = cost.size
    flow[:] = 0.0
    dist = np.empty(n_nodes)
    pred = np.empty(n_nodes, dtype=np.int64)
    order = np.empty(n_nodes, dtype=np.int64)
    done = np.zeros(n_nodes, dtype=np.bool_)
    load = np.zeros(n_nodes)
    used = np.empty(n_nodes, dtype=np.int64)
    hk = np.empty(m + 1)
    hv = np.empty(m + 1, dtype=np.int64)
    total = 0.0
    for k in range(bounds.size - 1):
        target = flow if k == 0 else buf
        if k > 0:
            buf[:] = 0.0
        part = 0.0
        for i in range(bounds[k], bounds[k + 1]):
            o = origins[i]
            sp, _, bad = _origin_tree(cost, indptr, out_link, head, tail, demand[o], o,
                                      first_thru, target, used, dist, pred, order, done, load,
                                      hk, hv)
            if bad >= 0:
                return np.nan, o, bad
            part += sp
        if k > 0:
            for a in range(m):
                flow[a] += buf[a]
        total += part
    return total, -1, -1


#: the chunks of :meth:`AllOrNothing.assign`: the chunks, not the threads, fix the order
#: of the sums, so the flows do not depend on ``n_jobs``.  A chunk costs one more pass
#: over the links (its buffer zeroed and added up), hence at least ``_MIN_CHUNK`` origins
#: (their shortest-path trees), and at most ``_MAX_CHUNKS`` chunks for the threads
_MIN_CHUNK = 16
_MAX_CHUNKS = 64


def _chunk_bounds(n_origins: int) -> np.ndarray:
    """Offsets of the fixed chunks of ``n_origins`` origins (``np.array_split``'s sizes)."""
    n_chunks = max(1, min(n_origins // _MIN_CHUNK, _MAX_CHUNKS))
    sizes = np.full(n_chunks, n_origins // n_chunks, dtype=np.int64)
    sizes[:n_origins % n_chunks] += 1
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def links_by_node(node_of_link: np.ndarray, n_nodes: int, banned: Any = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The links grouped by ``node_of_link`` (their tail node: out-links; their head
    node: in-links) in compressed-sparse-row form ``(ptr, links)``, the ``banned`` links
    left out (a class's graph), each node's links in index order."""
    order = np.argsort(node_of_link, kind="stable")
    nodes = node_of_link
    if banned is not None and len(banned):
        allowed = np.ones(node_of_link.size, dtype=bool)
        allowed[np.asarray(banned, dtype=np.int64)] = False
        order = order[allowed[order]]
        nodes = nodes[allowed]
    counts = np.bincount(nodes, minlength=n_nodes)
    return (np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            np.ascontiguousarray(order, dtype=np.int64))


class AllOrNothing(LMO):
    """The flow polytope of a :class:`Network`, through all-or-nothing assignment.

    Vertex set: the link-flow vectors obtained by sending every OD demand
    down a single path (the polytope is the Minkowski sum of the OD path
    polytopes, so each vertex routes each OD pair on one path).  The oracle
    for link costs ``c >= 0`` routes every pair on a shortest path.

    Cost: one Dijkstra per origin with demand (O(m log m) each, numba) plus
    an O(n) loading pass down the shortest-path tree.

    Parameters
    ----------
    network : Network
    n_jobs : int, default 1
        Threads over the origins (the shortest-path kernel releases the GIL); ``-1``
        all cores, ``-2`` all but one, as in scikit-learn.  The origins go in chunks
        fixed by their number (16 origins a chunk at least, 64 chunks at most: no more
        threads than chunks work), whose flows are added up in chunk order: the flows
        and the total are the same bits for every ``n_jobs``.
    banned_links : array of int, optional
        Links no route may use (a demand class's restrictions): they are left out of
        the graph the shortest paths search, so their costs are never read.

    Attributes
    ----------
    graph : Graph
        The graph and demand the oracle searches (its own arrays, not copies; a
        read-only property of an immutable record).
    origins : ndarray of int
        Zones with demand to other zones.
    last_shortest_path_cost : float
        ``sum_od d_od * SP_od`` of the last call (equal to ``<c, y>``).
    """

    #: ``(n_links,)``: the network fixes the dimension
    shape: tuple[int, ...]

    def __init__(self, network: Network, n_jobs: int = 1,
                 banned_links: np.ndarray | None = None) -> None:
        self.network = network
        self.shape = (network.n_links,)
        indptr, out_link = links_by_node(network.init_node, network.n_nodes, banned_links)
        self._graph = Graph(
            indptr=indptr,
            out_link=out_link,
            head=np.ascontiguousarray(network.term_node),
            tail=np.ascontiguousarray(network.init_node),
            demand=np.ascontiguousarray(network.demand, dtype=float))
        self._supply = network.net_supply()
        self._scale = max(float(np.abs(network.demand).sum() - np.trace(network.demand)), 1e-300)
        self.origins = network.origins()
        self._bounds = _chunk_bounds(self.origins.size)
        self.n_jobs = effective_n_jobs(n_jobs)
        self._pool: ThreadPoolExecutor | None = None
        self.last_shortest_path_cost = np.nan

    @property
    def graph(self) -> Graph:
        """The graph and demand this oracle searches (:class:`Graph`: its own arrays, not
        copies; read them, never write to them)."""
        return self._graph

    def check_costs(self, costs: np.ndarray) -> np.ndarray:
        """``costs`` as a contiguous float array, checked (shape, finite, non-negative)."""
        c = np.ascontiguousarray(costs, dtype=float)
        if c.shape != self.shape:
            raise ShapeError(f"AllOrNothing: `costs` must have shape {self.shape}, got {c.shape}")
        if c.size and not (c.min() >= 0.0 and np.isfinite(c).all()):
            raise OracleError(
                f"AllOrNothing: link costs must be finite and non-negative for shortest paths; "
                f"got minimum {c.min()!r}"
            )
        return c

    def _load(self, c: np.ndarray, lo: int, hi: int, flow: np.ndarray,
              buf: np.ndarray) -> tuple[float, int, int]:
        """Chunks ``lo:hi`` of the origins (:func:`_all_or_nothing`)."""
        g = self._graph
        return _all_or_nothing(c, g.indptr, g.out_link, g.head, g.tail, g.demand,
                               self.origins, self._bounds[lo:hi + 1], self.network.n_nodes,
                               self.network.first_thru_node, flow, buf)

    def assign(self, costs: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """All-or-nothing link flows for link ``costs``, and ``sum_od d * SP``.

        The flows and the total do not depend on ``n_jobs`` (the same bits): the
        origins go in chunks fixed by their number alone, whose sums are added in
        chunk order.

        Parameters
        ----------
        costs : ndarray, shape (n_links,)
            Non-negative link costs.
        out : ndarray, optional
            Array to write the flows into.
        """
        c = self.check_costs(costs)
        flow = np.empty(self.shape) if out is None else out
        n_chunks = self._bounds.size - 1
        jobs = min(self.n_jobs, n_chunks)
        if jobs <= 1:
            total, o, z = self._load(c, 0, n_chunks, flow, np.empty(self.shape))
        else:
            total, o, z = self._threaded(c, flow, jobs, n_chunks)
        if o >= 0:
            raise InfeasibleError(
                f"AllOrNothing: zone {z + 1} cannot be reached from zone {o + 1} (1-based), "
                f"which has demand {self._graph.demand[o, z]:g} to it"
            )
        self.last_shortest_path_cost = float(total)
        return flow, float(total)

    def _threaded(self, c: np.ndarray, flow: np.ndarray, jobs: int,
                  n_chunks: int) -> tuple[float, int, int]:
        """The chunks on threads (the kernel releases the GIL), reduced in chunk order as
        :func:`_all_or_nothing` does; at most ``2 * jobs`` chunk buffers at a time."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_jobs)
        pool = self._pool
        free = [np.empty(self.shape) for _ in range(min(2 * jobs, n_chunks))]
        pending: deque[tuple[int, np.ndarray, Future[tuple[float, int, int]]]] = deque()

        def submit(k: int) -> None:
            # the first chunk loads into flow itself, as the one-thread kernel does
            buf = free.pop()
            pending.append((k, buf, pool.submit(self._load, c, k, k + 1,
                                                flow if k == 0 else buf, buf)))

        nxt = 0
        while nxt < n_chunks and free:
            submit(nxt)
            nxt += 1
        total, bad = 0.0, (-1, -1)
        while pending:
            k, buf, fut = pending.popleft()
            part, o, z = fut.result()
            if bad[0] < 0:
                if o >= 0:
                    bad = (o, z)
                else:
                    if k > 0:
                        flow += buf
                    total += part
            free.append(buf)
            if nxt < n_chunks and bad[0] < 0:
                submit(nxt)
                nxt += 1
        return (np.nan, *bad) if bad[0] >= 0 else (total, -1, -1)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flow, _ = self.assign(direction)
        return Atom(flow)

    def violation(self, x: np.ndarray) -> float:
        """Negativity plus flow-conservation residual, relative to the total demand.

        Aggregate conservation is necessary but not sufficient for a point of
        the multi-commodity flow polytope; it catches malformed answers.
        """
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            return np.inf
        net = self.network
        outflow = np.bincount(net.init_node, weights=x, minlength=net.n_nodes)
        inflow = np.bincount(net.term_node, weights=x, minlength=net.n_nodes)
        residual = float(np.abs(outflow - inflow - self._supply).max(initial=0.0))
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(residual, neg) / self._scale

    def _repr_params(self) -> dict[str, Any]:
        return {"network": self.network.name or f"{self.network.n_links} links"}

"""The flow polytope as a Minkowski sum over origins (or OD pairs): the blocks of BCFW.

The link flows of an assignment are ``x = sum_o x_o``, where ``x_o`` routes
origin ``o``'s demand; the feasible ``x_o`` form the origin's flow polytope,
whose vertices are the loadings of its demand on one path per destination.
The oracle of a block (link costs -> vertex) loads the origin's demand on its
shortest-path tree.  A vertex is stored as a sparse atom over the loaded
links, keyed by the tree (the set of loaded links determines the path to
every destination), so the per-block active sets of pairwise / away steps
hold trees.  Finer blocks: one per OD pair, whose vertices are paths
(:class:`ODFlows`); the active sets then hold paths, as in path-based
assignment algorithms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from frankwolfe.atoms import Atom
from frankwolfe.compiled import BlockDomainHooks, CompiledBlocks
from frankwolfe.errors import InfeasibleError
from frankwolfe.lmo.base import FEASIBILITY_TOL, LMO
from frankwolfe.lmo.product import ProductDomain

from .assignment import AllOrNothing, _origin_tree, links_by_node
from .network import Network

__all__ = ["OriginFlows", "ODFlows", "AssignmentBlocks"]


@njit(cache=True, nogil=True)
def _tree_loads(links, head, tail, demand_row, origin, n_nodes):
    """Loads of ``links`` (a tree's loaded links, increasing) when every destination's
    demand follows the tree path from ``origin``, and -1; or the first destination the
    links do not lead to from ``origin`` (a tree of another network or demand: no link
    into a node on the way, a link index out of range, or a cycle)."""
    into = np.full(n_nodes, -1, dtype=np.int64)
    for j in range(links.size):
        if links[j] < 0 or links[j] >= head.size:
            return np.zeros(0), 0 if demand_row.size == 0 else int(np.argmax(demand_row))
        into[head[links[j]]] = j
    val = np.zeros(links.size)
    for d in range(demand_row.size):
        q = demand_row[d]
        if q > 0.0 and d != origin:
            v = d
            hops = 0
            while v != origin:
                j = into[v]
                hops += 1
                if j < 0 or hops > links.size:
                    return val, d
                val[j] += q
                v = tail[links[j]]
    return val, -1


@njit(cache=True, nogil=True)
def _peel_tree(r, in_ptr, in_link, tail, demand_row, origin, floor, limit, pred, state, seq,
               load):
    """Take one tree off ``r``, the remaining flows of one origin (or OD pair): the tree
    reaches every destination of ``demand_row`` by, at each node, the incoming link with
    the most remaining flow; ``lam``, at most ``limit``, is the largest weight with
    ``r - lam * loads >= 0``, and ``r`` loses ``lam * loads`` (the tightest link goes to
    zero).  A cycle met on the way back from a destination carries a circulation, which
    is cancelled (its smallest flow taken off its links).  Writes the tree's nodes to
    ``seq`` (a node's parent first) and their incoming links to ``pred``; returns
    ``(n_nodes_in_tree, lam, -1)``, or ``(0, 0.0, node)`` for a node the remaining flows
    do not reach (flows above ``floor`` count)."""
    state[:] = 0
    state[origin] = 2
    n_seq = 0
    for d in range(demand_row.size):
        if d == origin or not demand_row[d] > 0.0:
            continue
        first = n_seq
        v = d
        while state[v] != 2:
            if state[v] == 1:
                # back to a node of this walk: the links from it round to it are a cycle
                p = first
                while seq[p] != v:
                    p += 1
                low = r[pred[seq[p]]]
                for k in range(p + 1, n_seq):
                    low = min(low, r[pred[seq[k]]])
                for k in range(p, n_seq):
                    a = pred[seq[k]]
                    r[a] = r[a] - low if r[a] - low > floor else 0.0
                for k in range(first, n_seq):
                    state[seq[k]] = 0
                n_seq = first
                v = d
                continue
            state[v] = 1
            seq[n_seq] = v
            n_seq += 1
            best = -1
            most = floor
            for e in range(in_ptr[v], in_ptr[v + 1]):
                a = in_link[e]
                if r[a] > most:
                    most = r[a]
                    best = a
            if best < 0:
                return 0, 0.0, v
            pred[v] = best
            v = tail[best]
        # this walk's nodes, parents first
        i, j = first, n_seq - 1
        while i < j:
            seq[i], seq[j] = seq[j], seq[i]
            i += 1
            j -= 1
        for k in range(first, n_seq):
            state[seq[k]] = 2
    for k in range(n_seq):
        v = seq[k]
        load[v] = demand_row[v] if v < demand_row.size else 0.0
    lam = limit
    for k in range(n_seq - 1, -1, -1):  # children first: every node's load is its subtree's
        v = seq[k]
        a = pred[v]
        u = tail[a]
        if u != origin:
            load[u] += load[v]
        lam = min(lam, r[a] / load[v])
    for k in range(n_seq):
        v = seq[k]
        a = pred[v]
        r[a] = r[a] - lam * load[v]
        if r[a] <= floor:
            r[a] = 0.0
        load[v] = 0.0
    return n_seq, lam, -1


class TreesOfFlows(list):
    """A warm start of origin (or OD) blocks given as flows, turned into trees (or
    paths) and weights (:meth:`AssignmentBlocks.trees_of_flows`,
    :meth:`~.multiclass.MulticlassBlocks.trees_of_flows`): a list of block starts, each
    an active set or, where the flows did not split, the flows."""


#: a tree's weight below which a split of flows drops it (the atom tables' threshold)
_MIN_WEIGHT = 1e-15


def _split_flows(block: OriginFlows, z: np.ndarray, in_ptr: np.ndarray, in_link: np.ndarray,
                 tail: np.ndarray, work: tuple[np.ndarray, ...]
                 ) -> list[tuple[tuple, float]] | None:
    """``block``'s flows ``z`` as ``(tree key, weight)`` pairs (weights summing to 1), or
    None when they are not a flow of its demand or do not split into its trees over
    ``in_link`` (:meth:`AssignmentBlocks.trees_of_flows`).  Keys, not atoms: a block of
    several classes makes its own atoms of them."""
    if z.shape != block.shape or not np.all(np.isfinite(z)) or \
            not block.violation(z) <= FEASIBILITY_TOL:
        return None
    pred, state, seq, load = work
    r = np.maximum(z, 0.0)
    floor = 1e-12 * float(block.demand.sum())
    remaining = 1.0
    found: dict[tuple, float] = {}
    for _ in range(int(np.count_nonzero(r)) + 1):  # every tree empties a link
        if remaining <= 1e-12:
            break
        k, lam, lost = _peel_tree(r, in_ptr, in_link, tail, block.demand, block.origin,
                                  floor, remaining, pred, state, seq, load)
        if lost >= 0 or not lam > 0.0:
            break
        key = block.key(np.sort(pred[seq[:k]]))
        found[key] = found.get(key, 0.0) + lam
        remaining -= lam
    if not found or remaining > 1e-6:
        return None
    w = np.array(list(found.values()))
    w /= w.sum()
    keep = w >= _MIN_WEIGHT
    w = w[keep] / w[keep].sum()
    return [(key, float(wk)) for key, wk in zip((k for k, t in zip(found, keep) if t), w)]


def _in_links(network: Network, banned: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """The links into every node, ``banned`` ones left out, in compressed-sparse-row form
    by head node (``in_ptr``, ``in_link``): the links :func:`_peel_tree` may take (a
    class's tree must stay in its graph: demand routed over a banned link leaves the
    block unsplit, never a tree the oracle could not return)."""
    return links_by_node(network.term_node, network.n_nodes, banned)


def _split_work(n_nodes: int) -> tuple[np.ndarray, ...]:
    """The work arrays of :func:`_split_flows` (``pred, state, seq, load``)."""
    return (np.empty(n_nodes, dtype=np.int64), np.zeros(n_nodes, dtype=np.int8),
            np.empty(n_nodes, dtype=np.int64), np.zeros(n_nodes))


class _Scratch:
    """Work arrays of the per-origin shortest-path kernel and of a block's feasibility
    check (shared by the blocks of one domain: the block steps run one at a time; a
    per-block array of the node or link length costs that length times the origins)."""

    def __init__(self, n_nodes: int, n_links: int) -> None:
        self.supply = np.zeros(n_nodes)  # a block's net supply (:meth:`OriginFlows.violation`)
        self.flow = np.zeros(n_links)
        self.used = np.empty(max(n_nodes, 1), dtype=np.int64)
        self.dist = np.empty(n_nodes)
        self.pred = np.empty(n_nodes, dtype=np.int64)
        self.order = np.empty(n_nodes, dtype=np.int64)
        self.done = np.zeros(n_nodes, dtype=np.bool_)
        self.load = np.zeros(n_nodes)
        self.hk = np.empty(n_links + 1)
        self.hv = np.empty(n_links + 1, dtype=np.int64)


class OriginFlows(LMO):
    """Link flows of one origin's demand (one block of :class:`AssignmentBlocks`).

    Vertices: the origin's demand loaded on one path per destination.  The
    oracle for link costs ``c >= 0`` loads it on a shortest-path tree (one
    Dijkstra, numba) and returns a sparse atom over the loaded links, keyed
    by them.

    Parameters
    ----------
    aon : AllOrNothing
        The network's all-or-nothing oracle (graph arrays, demand).
    origin : int
        0-based zone index.
    scratch : optional
        Work arrays of the shortest-path search, shared by the blocks of one process
        (a block makes its own when omitted).
    """

    #: ``(n_links,)``: the network fixes the dimension
    shape: tuple[int, ...]

    def __init__(self, aon: AllOrNothing, origin: int, scratch: _Scratch | None = None) -> None:
        net = aon.network
        self.aon = aon
        self.origin = int(origin)
        self.shape = (net.n_links,)
        self._scratch = scratch if scratch is not None else _Scratch(net.n_nodes, net.n_links)
        row = aon.graph.demand[self.origin].copy()
        row[self.origin] = 0.0
        self.demand = row

    def tree(self, costs: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """``(links, flows, sum_d d * SP)``: the shortest-path loading of this origin
        (links increasing)."""
        a, s = self.aon, self._scratch
        c = a.check_costs(costs)
        g = a.graph
        sp, n_used, bad = _origin_tree(c, g.indptr, g.out_link, g.head, g.tail, self.demand,
                                       self.origin, a.network.first_thru_node, s.flow, s.used,
                                       s.dist, s.pred, s.order, s.done, s.load, s.hk, s.hv)
        if bad >= 0:
            raise InfeasibleError(
                f"OriginFlows: zone {bad + 1} cannot be reached from zone {self.origin + 1} "
                f"(1-based), which has demand {self.demand[bad]:g} to it"
            )
        links = np.sort(s.used[:n_used])
        flows = s.flow[links].copy()
        s.flow[links] = 0.0  # the scratch flow vector stays zero between calls
        return links, flows, float(sp)

    def key(self, links: np.ndarray) -> tuple:
        """The key of the atom loading ``links`` (a tree: ``("tree", origin, bytes)``)."""
        return ("tree", self.origin, links.tobytes())

    def extreme_point(self, direction: np.ndarray) -> Atom:
        links, flows, _ = self.tree(direction)
        return Atom.sparse(links, flows, self.shape, key=self.key(links))

    def atom(self, key: tuple) -> Atom:
        """The atom of ``key`` (as made by :meth:`extreme_point`), loaded with this
        block's demand (for warm starts: the trees of a previous run)."""
        links = np.frombuffer(key[-1], dtype=np.int64) if isinstance(key, tuple) and \
            isinstance(key[-1], bytes) else np.zeros(0, dtype=np.int64)
        if key != self.key(links):
            raise ValueError(f"{type(self).__name__}: {key!r:.60} is not a key of this block "
                             f"({self!r})")
        a = self.aon
        vals, lost = _tree_loads(links, a.graph.head, a.graph.tail, self.demand, self.origin,
                                 a.network.n_nodes)
        if lost >= 0:
            raise ValueError(f"{type(self).__name__}: the tree of {key!r:.60} does not lead "
                             f"from origin {self.origin} to destination {lost} of this "
                             f"block's demand: it belongs to another network or demand")
        return Atom.sparse(links, vals, self.shape, key=key)

    def _supply(self) -> np.ndarray:
        """This block's net supply at every node (its origin: the demand's total; a
        destination: minus its demand), written into the shared scratch."""
        s = self._scratch.supply
        s[:] = 0.0
        s[: self.demand.size] -= self.demand
        s[self.origin] += self.demand.sum()
        return s

    def violation(self, x: np.ndarray) -> float:
        """Negativity plus this origin's flow-conservation residual, relative to its demand."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != self.shape:
            return np.inf
        net = self.aon.network
        out = np.bincount(net.init_node, weights=x, minlength=net.n_nodes)
        inc = np.bincount(net.term_node, weights=x, minlength=net.n_nodes)
        residual = float(np.abs(out - inc - self._supply()).max(initial=0.0))
        neg = max(0.0, -float(x.min(initial=0.0)))
        return max(residual, neg) / max(float(self.demand.sum()), 1e-300)

    def _repr_params(self) -> dict[str, Any]:
        return {"origin": self.origin}


class ODFlows(OriginFlows):
    """Link flows of one OD pair's demand: its vertices are paths.

    Parameters
    ----------
    aon : AllOrNothing
    origin, destination : int
        0-based zones.
    scratch : optional
        As :class:`OriginFlows`'.
    """

    def __init__(self, aon: AllOrNothing, origin: int, destination: int,
                 scratch: _Scratch | None = None) -> None:
        super().__init__(aon, origin, scratch)
        self.destination = int(destination)
        keep = self.demand[self.destination]
        self.demand = np.zeros_like(self.demand)
        self.demand[self.destination] = keep

    def key(self, links: np.ndarray) -> tuple:
        """The key of the path loading ``links``: ``("path", origin, destination, bytes)``."""
        return ("path", self.origin, self.destination, links.tobytes())

    def _repr_params(self) -> dict[str, Any]:
        return {"origin": self.origin, "destination": self.destination}


class AssignmentBlocks(ProductDomain, BlockDomainHooks):
    """The flow polytope of a :class:`Network` as a Minkowski sum of blocks.

    ``by="origin"``: block ``i`` is :class:`OriginFlows` of origin
    ``origins[i]`` (zones with demand to other zones; atoms: shortest-path
    trees).  ``by="od"``: one :class:`ODFlows` block per OD pair with
    demand (atoms: paths).  Every block spans all links, so the aggregate is
    ``x = sum_i z_i``.  The natural start (:meth:`initial_block_points`) is
    the all-or-nothing loading at free-flow costs.

    Parameters
    ----------
    network : Network
    by : {"origin", "od"}, default "origin"
    n_jobs : int, default 1
        Threads of the whole-network oracle (:class:`AllOrNothing`).
    """

    #: ``(n_links,)``: the network fixes the dimension
    shape: tuple[int, ...]
    blocks: tuple[OriginFlows, ...]

    def __init__(self, network: Network, by: str = "origin", n_jobs: int = 1) -> None:
        if by not in ("origin", "od"):
            raise ValueError(f"AssignmentBlocks: `by` must be 'origin' or 'od', got {by!r}")
        self.network = network
        self.by = by
        self.aon = AllOrNothing(network, n_jobs=n_jobs)
        scratch = _Scratch(network.n_nodes, network.n_links)
        self.origins = self.aon.origins
        if by == "origin":
            blocks: list[OriginFlows] = [OriginFlows(self.aon, int(o), scratch)
                                         for o in self.origins]
        else:
            blocks = [ODFlows(self.aon, int(o), int(d), scratch) for o in self.origins
                      for d in range(network.n_zones)
                      if d != o and network.demand[o, d] > 0]
        if not blocks:
            raise ValueError("AssignmentBlocks: the network has no demand between zones")
        full = np.arange(network.n_links)
        super().__init__(blocks, [full] * len(blocks))
        self.shape = (network.n_links,)

    def block_points_at(self, costs: np.ndarray) -> list[np.ndarray]:
        """Every origin's shortest-path loading for link ``costs`` (dense block points)."""
        pts = []
        for b in self.blocks:
            links, flows, _ = b.tree(costs)
            z = np.zeros(self.network.n_links)
            z[links] = flows
            pts.append(z)
        return pts

    def initial_block_points(self) -> list[Any]:
        """Every origin on its free-flow shortest-path tree, as a one-atom active set
        (so the tree stays known to the active set and to :func:`route_flows`)."""
        costs = self.network.link_costs(np.zeros(self.network.n_links))
        return [[(b.extreme_point(costs), 1.0)] for b in self.blocks]

    def trees_of_flows(self, points: Any) -> TreesOfFlows:
        """Block starts given as flows (one link-flow vector per block, anything
        ``np.asarray`` makes one of) as trees and weights: each block's active set.

        Started from its flows as one point, a block keeps that point as a pseudo-atom
        of its active set, a mixture of trees that its pairwise steps can only shrink
        as a whole (it kept nearly all its weight, and a warm start took many times the
        passes of a cold one; CHANGELOG).  The flows split into trees greedily: at
        every node the incoming link with the most remaining flow, the largest weight
        of that tree the flows allow, and again on what remains (each tree empties a
        link; circulations are cancelled).  The start is then ``sum_t w_t tree_t``, the
        flows up to rounding and to at most ``1e-6`` of the block's demand left unsplit
        (the weights are scaled to sum to 1).  A block whose flows are not a flow of
        its demand (within the feasibility tolerance) or do not split stays as given
        (the solver checks it as before).
        """
        in_ptr, in_link = _in_links(self.network)
        tail = self.aon.graph.tail
        work = _split_work(self.network.n_nodes)
        out = TreesOfFlows()
        for b, p in zip(self.blocks, points):
            z = np.asarray(p, dtype=float).reshape(-1)
            trees = _split_flows(b, z, in_ptr, in_link, tail, work)
            out.append(p if trees is None else [(b.atom(k), w) for k, w in trees])
        return out

    #: origin blocks run pairwise block steps and the cache compiled (:mod:`.origin_kernels`)
    compiled_features = frozenset({"pairwise", "cache"})

    def compiled_blocks(self, x0: Any, cache_size: int = 100,
                        cache: bool = True) -> CompiledBlocks | None:
        """The compiled kernels of origin blocks (:mod:`.origin_kernels`) from the
        free-flow trees (``x0`` None) or a warm start's active sets, keeping
        ``cache_size`` inactive trees per block (``cache``: the run uses them as
        gapBCFW's cache); ``None`` for OD blocks and for starts given as flows (the
        Python block steps run)."""
        if self.by != "origin" or isinstance(x0, TreesOfFlows):
            return None
        from .origin_kernels import origin_kernels, start_trees

        start = start_trees(self, x0)
        return None if start is None else origin_kernels(self, start, cache_size, cache)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flow, _ = self.aon.assign(direction)
        return Atom(flow)

    def violation(self, x: np.ndarray) -> float:
        return self.aon.violation(x)

    def _repr_params(self) -> dict[str, Any]:
        return {"network": self.network.name or f"{self.network.n_links} links",
                "by": self.by, "blocks": self.n_blocks}

"""Flow polytopes of directed graphs.

A flow is a vector ``x`` indexed by the edges of a directed graph (in a
fixed order); the polytope is

    ``{x : N x = b, 0 <= x <= capacity}``

with ``N`` the node-edge incidence matrix (``(N x)_v`` = flow out of ``v``
minus flow into ``v``) and ``b`` the net supplies.  Minimizing a linear
function over it is a min-cost flow problem.  Two oracles:

* **path oracle** - one source, one sink, no capacities (the graph is then a
  DAG, see below): the minimizer is ``value`` times the indicator of a
  shortest source-sink path, found by dynamic programming in topological
  order (numba, O(n + m) per call, negative costs allowed);
* **LP oracle** - any supplies and/or capacities: the min-cost flow LP,
  solved by the HiGHS dual simplex (``scipy.optimize.linprog``, method
  ``"highs-ds"``), which returns a vertex; with integral supplies and
  capacities the vertex is integral and is rounded to exact integers.

The polytope is compact iff no directed cycle uses only uncapacitated
edges; the constructor checks that.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._finite import all_finite
from .._numbers import is_real, is_whole
from .._scaling import lp_cost_shift
from ..atoms import Atom
from ..errors import OracleError, ShapeError
from .base import LMO
from .polytope import _TOL as _LP_TOL

__all__ = ["FlowPolytope"]


@njit(cache=True, nogil=True)
def _dag_shortest_path(topo: np.ndarray, start: int, indptr: np.ndarray, heads: np.ndarray,
                       edge_ids: np.ndarray, tails: np.ndarray, cost: np.ndarray,
                       source: int, sink: int) -> np.ndarray:
    """Edge indices (sink to source) of a cheapest ``source -> sink`` path of a DAG.

    ``topo`` is a topological order of the nodes and ``start`` the position
    of ``source`` in it (earlier nodes are unreachable from it).  The
    out-edges of node ``u`` are ``edge_ids[indptr[u]:indptr[u + 1]]`` with
    heads ``heads[indptr[u]:indptr[u + 1]]``; ``tails[e]`` is the tail of
    edge ``e``.  Returns an empty array when ``sink`` is unreachable and
    ``[-1]`` when a cost is not finite.
    """
    for e in range(cost.size):  # NaN would silently never relax; inf breaks the values
        if not np.isfinite(cost[e]):
            return np.full(1, -1, dtype=np.int64)
    n = indptr.size - 1
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    dist[source] = 0.0
    for p in range(start, n):
        u = topo[p]
        if u == sink:  # nodes after the sink in topological order cannot reach it
            break
        du = dist[u]
        if du == np.inf:
            continue
        for k in range(indptr[u], indptr[u + 1]):
            w = heads[k]
            d = du + cost[edge_ids[k]]
            if d < dist[w]:
                dist[w] = d
                pred[w] = edge_ids[k]
    if pred[sink] < 0:
        return np.empty(0, dtype=np.int64)
    path = np.empty(n, dtype=np.int64)
    count = 0
    node = sink
    while node != source:
        e = pred[node]
        path[count] = e
        count += 1
        node = tails[e]
    return path[:count].copy()


@njit(cache=True)
def _topological_order(indptr: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """Kahn's algorithm; the result is shorter than ``n`` when there is a cycle."""
    n = indptr.size - 1
    indeg = np.zeros(n, dtype=np.int64)
    for k in range(heads.size):
        indeg[heads[k]] += 1
    order = np.empty(n, dtype=np.int64)
    lo = 0
    hi = 0
    for u in range(n):
        if indeg[u] == 0:
            order[hi] = u
            hi += 1
    while lo < hi:
        u = order[lo]
        lo += 1
        for k in range(indptr[u], indptr[u + 1]):
            w = heads[k]
            indeg[w] -= 1
            if indeg[w] == 0:
                order[hi] = w
                hi += 1
    return order[:hi].copy()


def _check_node_indices(pairs: np.ndarray | list[tuple[Any, ...]]) -> None:
    """A ``ValueError`` naming the first node of the edge list of numbers ``pairs`` that
    is not a whole number (``astype(int64)`` truncated ``1.5`` to 1)."""
    bad: Any = None
    if isinstance(pairs, np.ndarray):
        if pairs.dtype.kind == "f":
            wrong = ~(np.isfinite(pairs) & (pairs == np.round(pairs)))
            if wrong.any():
                k, j = (int(i) for i in np.argwhere(wrong)[0])
                bad = (float(pairs[k, j]), k)
    else:
        bad = next(((v, k) for k, e in enumerate(pairs) for v in e
                    if not is_whole(v, -sys.maxsize)), None)
    if bad is not None:
        raise ValueError(
            f"FlowPolytope: node labels that are numbers are node indices and must be whole "
            f"numbers, got {bad[0]!r} in edge {bad[1]}; give other labels as text")
    # an index is also the size of the node arrays: one past 2^53 (where floats stop
    # being whole numbers one apart) is no graph, and past 2^63 the cast wrapped around
    # (a negative index is refused by the caller's check for >= 0)
    top = max((v for e in pairs for v in e), default=0) \
        if not isinstance(pairs, np.ndarray) else pairs.max(initial=0).item()
    if top >= 2.0 ** 53:
        raise ValueError(f"FlowPolytope: node indices must be below 2**53, got {top!r}; give "
                         "other labels as text")


def _is_integral(a: np.ndarray) -> bool:
    a = a[np.isfinite(a)]
    return bool(np.all(a == np.rint(a)))


class FlowPolytope(LMO):
    """Feasible flows of a directed graph: ``{x : N x = b, 0 <= x <= capacity}``.

    ``x[e]`` is the flow on edge ``e`` (edges in the fixed order of
    :attr:`edges`), ``N`` the incidence matrix (``(N x)_v`` = outflow minus
    inflow at ``v``) and ``b`` the net supplies (positive at sources).

    Vertices: the basic feasible flows.  With one source, one sink and no
    capacities they are ``value`` times the indicators of the source-sink
    paths (key: the tuple of edge indices along the path, source first);
    otherwise they are the vertex flows (key: the tuple of
    ``(edge index, flow)`` over edges with non-zero flow).

    LMO cost:

    * one source and sink, no capacities (``method == "path"``): a shortest
      path by dynamic programming in topological order, O(n + m), compiled
      with numba; negative costs are allowed (the graph is a DAG);
    * otherwise (``method == "lp"``): a min-cost flow LP solved by the HiGHS
      dual simplex (``scipy.optimize.linprog(method="highs-ds")``), which
      returns a vertex; roughly the cost of a few network-simplex passes
      plus the LP set-up (about a millisecond on small graphs).  With integral
      supplies and capacities the answer is rounded to exact integers.

    Parameters
    ----------
    graph : networkx.DiGraph or sequence of (tail, head) pairs
        The graph.  In an edge list of numbers the nodes are the integers
        ``0 .. n_nodes - 1``: the numbers must be whole, and whole-valued
        floats (an array from ``np.loadtxt`` or pandas) count as integers.
        Other hashable labels (text, tuples) are numbered in order of first
        appearance.  Parallel edges are not supported (subdivide one of them).
    n_nodes : int, optional
        Number of nodes of an edge list of numbers (default: largest index + 1).
    source, sink : hashable, optional
        Single-commodity demand: ``value`` units from ``source`` to ``sink``.
    value : float, default 1.0
        Amount of flow from ``source`` to ``sink``.
    supplies : mapping or array_like, optional
        Net supply of each node (node -> supply; missing nodes have 0, or an
        array in the order of :attr:`nodes`: node index order for an edge list
        of numbers), summing to 0.  Give either this or
        ``source``/``sink``.
    capacity : str, float or array_like, optional
        Upper bounds on the edge flows: an array in edge order, one number
        for all edges, or (for a ``networkx.DiGraph``) the name of an edge
        attribute; ``inf`` (or a missing attribute) means uncapacitated.

    Attributes
    ----------
    edges : list of (tail, head)
        Edge order of the flow vectors.
    edge_index : dict
        ``(tail, head) -> position`` in the flow vectors.
    nodes : list
        Node order of :attr:`supplies` and of the rows of :attr:`incidence`.
    node_index : dict
        ``node -> position``.
    supplies : ndarray
        Net supply ``b`` of each node.
    capacity : ndarray
        Edge capacities (``inf`` for uncapacitated edges).
    incidence : scipy.sparse.csr_array
        The ``n_nodes x n_edges`` incidence matrix ``N``.
    method : {"path", "lp"}
        Which oracle is used.

    Raises
    ------
    ValueError
        When the polytope is unbounded (a directed cycle of uncapacitated
        edges), empty, or the arguments are inconsistent.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import FlowPolytope
    >>> P = FlowPolytope([(0, 1), (1, 3), (0, 2), (2, 3)], source=0, sink=3)
    >>> atom = P(np.array([1.0, 1.0, 0.5, 0.5]))
    >>> atom.key, atom.to_dense()
    ((2, 3), array([0., 0., 1., 1.]))
    """

    #: ``(n_edges,)``: the graph fixes the dimension
    shape: tuple[int, ...]

    def __init__(
        self,
        graph: Any,
        n_nodes: int | None = None,
        *,
        source: Hashable | None = None,
        sink: Hashable | None = None,
        value: float = 1.0,
        supplies: Mapping[Hashable, float] | Sequence[float] | np.ndarray | None = None,
        capacity: str | float | Sequence[float] | np.ndarray | None = None,
    ) -> None:
        tails, heads, cap = self._read_graph(graph, n_nodes, capacity)
        n, m = len(self.nodes), tails.size
        if m == 0:
            raise ValueError("FlowPolytope: the graph has no edges")
        self.tails, self.heads = tails, heads
        self.capacity = cap
        self._diameter: float | None = None
        self.n_nodes, self.n_edges = n, m
        self.shape = (m,)
        self.edges = [(self.nodes[t], self.nodes[h])
                      for t, h in zip(tails.tolist(), heads.tolist())]
        self.edge_index = {e: i for i, e in enumerate(self.edges)}
        if len(self.edge_index) != m:
            dup = next(e for i, e in enumerate(self.edges) if self.edge_index[e] != i)
            raise ValueError(
                f"FlowPolytope: parallel edges {dup!r} are not supported; "
                "subdivide one of them with an extra node"
            )
        self.supplies = self._read_demand(source, sink, value, supplies)
        cols = np.arange(m)
        self.incidence = sp.csr_array(
            (np.r_[np.ones(m), -np.ones(m)], (np.r_[tails, heads], np.r_[cols, cols])), shape=(n, m)
        )
        self._check_bounded()
        b = self.supplies
        self._scale = float(np.abs(b).max()) if np.any(b) else float(
            cap[np.isfinite(cap)].max(initial=0.0) or 1.0)
        self._integral = _is_integral(b) and _is_integral(cap)
        uncapacitated = bool(np.all(np.isinf(cap)))
        pos, neg = np.flatnonzero(b > 0), np.flatnonzero(b < 0)
        if uncapacitated and pos.size == 1 and neg.size == 1:
            self.method = "path"
            self._setup_path(int(pos[0]), int(neg[0]), float(b[pos[0]]))
        else:
            self.method = "lp"
            self._setup_lp()

    # -- construction -----------------------------------------------------
    def _read_graph(self, graph: Any, n_nodes: int | None,
                    capacity: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # a networkx graph means networkx is loaded: an edge list does not import it, a
        # cost of a first call (benchmarks/README.md, "Measurements behind code choices")
        nx = sys.modules.get("networkx")
        if nx is not None and isinstance(graph, nx.Graph):
            if not graph.is_directed():
                raise TypeError("FlowPolytope: `graph` must be a directed graph (networkx.DiGraph)")
            if n_nodes is not None:
                raise ValueError("FlowPolytope: `n_nodes` is only for edge lists; "
                                 "a networkx graph knows its nodes")
            self.nodes = list(graph.nodes)
            self.node_index = {v: i for i, v in enumerate(self.nodes)}
            # a MultiDiGraph's edges carry keys; real parallel edges are refused with the
            # edge lists' below
            keyed = list(graph.edges(keys=True) if graph.is_multigraph() else graph.edges)
            pairs = [(e[0], e[1]) for e in keyed]
            tails = np.array([self.node_index[u] for u, _ in pairs], dtype=np.int64)
            heads = np.array([self.node_index[v] for _, v in pairs], dtype=np.int64)
            if isinstance(capacity, str):
                cap = np.empty(len(pairs))
                for i, e in enumerate(keyed):
                    c = graph.edges[e].get(capacity, np.inf)
                    if not is_real(c):
                        raise ValueError(
                            f"FlowPolytope: capacity attribute {capacity!r} of edge {pairs[i]!r} "
                            f"must be a number (no attribute: no capacity), got {c!r}"
                        )
                    cap[i] = c
                return tails, heads, self._check_capacity(cap, len(pairs))
        else:
            if isinstance(capacity, str):
                raise TypeError(
                    "FlowPolytope: a capacity attribute name needs a networkx.DiGraph; "
                    "give an array of capacities for an edge list"
                )
            tails, heads = self._read_edge_list(graph, n_nodes)
        m = tails.size
        if capacity is None:
            cap = np.full(m, np.inf)
        else:
            cap = np.asarray(capacity, dtype=float)
            if cap.ndim == 0:
                cap = np.full(m, float(cap))
            elif cap.shape != (m,):
                raise ShapeError(
                    f"FlowPolytope: `capacity` must be a number or an array of shape ({m},) "
                    f"(one per edge), got shape {cap.shape}"
                )
        return tails, heads, self._check_capacity(cap, m)

    def _read_edge_list(self, graph: Any, n_nodes: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Integer node indices 0..n_nodes-1 (numbers, ``3.0`` too), or other labels in
        order of appearance."""
        pairs: np.ndarray | list[tuple[Any, ...]]
        if isinstance(graph, np.ndarray) and graph.dtype.kind in "iuf":
            pairs = graph
            if pairs.size == 0:
                pairs = pairs.reshape(0, 2)
            if pairs.ndim != 2 or pairs.shape[1] != 2:
                raise ShapeError(
                    "FlowPolytope: an edge array must have shape (m, 2), got shape "
                    f"{pairs.shape}"
                )
            integer = True
        else:
            try:
                pairs = [tuple(e) for e in graph]
            except TypeError:
                raise TypeError(
                    "FlowPolytope: `graph` must be a networkx.DiGraph or a sequence of "
                    f"(tail, head) pairs, got {type(graph).__name__}"
                ) from None
            bad = next((e for e in pairs if len(e) != 2), None)
            if bad is not None:
                raise ShapeError(
                    f"FlowPolytope: every edge must be a (tail, head) pair, got {bad!r}"
                )
            integer = all(is_real(v) for e in pairs for v in e)
        if integer:
            # numbers are node indices, whole-valued floats (np.loadtxt, pandas) too: as
            # labels in order of appearance they put positional supplies on other nodes
            _check_node_indices(pairs)
            arr = np.asarray(pairs).astype(np.int64).reshape(-1, 2)
            if arr.size and arr.min() < 0:
                raise ValueError(f"FlowPolytope: node indices must be >= 0, got {int(arr.min())}")
            top = int(arr.max(initial=-1)) + 1
            if n_nodes is None:
                n_nodes = top
            elif not is_whole(n_nodes, top):
                raise ValueError(
                    f"FlowPolytope: `n_nodes` must be an integer >= {top} (largest node index "
                    f"+ 1), got {n_nodes!r}"
                )
            self.nodes = list(range(int(n_nodes)))
            self.node_index = {v: v for v in self.nodes}
            return arr[:, 0].copy(), arr[:, 1].copy()
        if n_nodes is not None:
            raise ValueError("FlowPolytope: `n_nodes` is only for edge lists with integer nodes "
                             "0..n_nodes-1; other labels are numbered in order of appearance")
        self.node_index = {}
        for e in pairs:
            for v in e:
                self.node_index.setdefault(v, len(self.node_index))
        self.nodes = list(self.node_index)
        tails = np.array([self.node_index[u] for u, _ in pairs], dtype=np.int64)
        heads = np.array([self.node_index[v] for _, v in pairs], dtype=np.int64)
        return tails, heads

    @staticmethod
    def _check_capacity(cap: np.ndarray, m: int) -> np.ndarray:
        if np.any(np.isnan(cap)) or np.any(cap < 0):
            bad = int(np.flatnonzero(np.isnan(cap) | (cap < 0))[0])
            raise ValueError(
                f"FlowPolytope: capacities must be >= 0 (inf for none), got {float(cap[bad])!r} "
                f"on edge {bad}"
            )
        return cap.astype(float, copy=True)

    def _node(self, name: str, label: Hashable) -> int:
        try:
            return self.node_index[label]
        except (KeyError, TypeError):
            raise ValueError(
                f"FlowPolytope: `{name}` {label!r} is not a node of the graph") from None

    def _read_demand(self, source: Hashable | None, sink: Hashable | None, value: float,
                     supplies: Any) -> np.ndarray:
        n = len(self.nodes)
        if supplies is not None:
            if source is not None or sink is not None:
                raise ValueError(
                    "FlowPolytope: give either `supplies` or `source`/`sink`, not both")
            b = np.zeros(n)
            if isinstance(supplies, Mapping):
                for node, s in supplies.items():
                    b[self._node("supplies", node)] = float(s)
            else:
                arr = np.asarray(supplies, dtype=float)
                if arr.shape != (n,):
                    raise ShapeError(
                        f"FlowPolytope: `supplies` must be a mapping or an array of shape ({n},) "
                        f"(one per node), got shape {arr.shape}"
                    )
                b[:] = arr
            if not all_finite(b):
                k = int(np.flatnonzero(~np.isfinite(b))[0])
                at = (f"node {self.nodes[k]!r}" if isinstance(supplies, Mapping)
                      else f"index {k}")
                raise ValueError(f"FlowPolytope: `supplies` must be finite, got {b[k]} at {at}")
            total = float(b.sum())
            if abs(total) > 1e-9 * max(1.0, float(np.abs(b).sum())):
                raise ValueError(
                    f"FlowPolytope: `supplies` must sum to 0 (supply = demand), got sum {total:.6g}"
                )
            if not np.any(b) and np.all(np.isinf(self.capacity)):
                raise ValueError("FlowPolytope: all supplies are 0 and there are no capacities; "
                                 "the polytope would be {0}")
            return b
        if source is None or sink is None:
            raise ValueError("FlowPolytope: give `source` and `sink` (with `value`), or `supplies`")
        s, t = self._node("source", source), self._node("sink", sink)
        if s == t:
            raise ValueError(f"FlowPolytope: `source` and `sink` must differ, both are {source!r}")
        v = float(value) if is_real(value) else math.nan
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"FlowPolytope: `value` must be positive and finite, got {value!r}")
        b = np.zeros(n)
        b[s], b[t] = v, -v
        return b

    def _check_bounded(self) -> None:
        free = np.isinf(self.capacity)
        if not free.any():
            return
        t, h = self.tails[free], self.heads[free]
        loops = t == h
        if loops.any():
            e = int(np.flatnonzero(free)[np.flatnonzero(loops)[0]])
            raise ValueError(
                f"FlowPolytope: the polytope is unbounded: the self-loop {self.edges[e]!r} has no "
                "capacity; give it a finite capacity or remove it"
            )
        # imported here: scipy.sparse.csgraph pulls in scipy.linalg, slow to import, which
        # `import frankwolfe` should not pay for
        # (benchmarks/README.md, "Measurements behind code choices")
        from scipy.sparse.csgraph import connected_components

        n = self.n_nodes
        adj = sp.csr_array((np.ones(t.size), (t, h)), shape=(n, n))
        n_comp, labels = connected_components(adj, directed=True, connection="strong")
        if n_comp < n:  # a strongly connected component of >= 2 nodes holds a cycle
            sizes = np.bincount(labels)
            comp = int(np.flatnonzero(sizes > 1)[0])
            members = [self.nodes[i] for i in np.flatnonzero(labels == comp)[:5]]
            raise ValueError(
                "FlowPolytope: the polytope is unbounded: a directed cycle of uncapacitated edges "
                f"runs through nodes {members}{' ...' if sizes[comp] > 5 else ''}; "
                "give those edges finite capacities or use a DAG"
            )

    def _setup_path(self, s: int, t: int, value: float) -> None:
        order = np.argsort(self.tails, kind="stable")
        self._indptr = np.searchsorted(self.tails[order],
                                       np.arange(self.n_nodes + 1)).astype(np.int64)
        self._heads_csr = self.heads[order]
        self._edge_ids = order.astype(np.int64)
        self._topo = _topological_order(self._indptr, self._heads_csr)
        self._start = int(np.flatnonzero(self._topo == s)[0])
        self._source, self._sink, self._value = s, t, value
        from scipy.sparse.csgraph import breadth_first_order  # see _check_bounded

        reach = breadth_first_order(
            sp.csr_array((np.ones(self.n_edges), (self.tails, self.heads)),
                         shape=(self.n_nodes, self.n_nodes)),
            s, directed=True, return_predecessors=False)
        if not np.any(reach == t):
            raise ValueError(
                f"FlowPolytope: the polytope is empty: no directed path from {self.nodes[s]!r} "
                f"to {self.nodes[t]!r}"
            )

    def _setup_lp(self) -> None:
        self._bounds = np.column_stack([np.zeros(self.n_edges), self.capacity])
        res = self._solve_lp(np.zeros(self.n_edges))
        if res.status == 2:
            raise ValueError(
                "FlowPolytope: the polytope is empty: no flow meets the supplies within the "
                "capacities"
            )

    def _solve_lp(self, cost: np.ndarray) -> Any:
        # presolve is skipped: on network LPs it costs more than it saves
        # (benchmarks/README.md, "Measurements behind code choices"), and without
        # it the answer is the simplex basis itself, i.e. a vertex
        # scipy.optimize is slow to import: only LP-solved flow polytopes pay for it
        # (benchmarks/README.md, "Measurements behind code choices")
        from scipy.optimize import linprog

        # scipy-stubs type A_eq and bounds as dense only; HiGHS takes the sparse incidence
        # matrix and an (m, 2) bounds array (both documented by scipy)
        # HiGHS's tightest feasibility tolerances, as Polytope's (defaults 1e-7): a vertex
        # optimal only to 1e-7 gave Frank-Wolfe gaps of -6e-8 near the optimum, and a
        # run "converged" at tol=1e-8 with a true gap of 3e-7
        tight = {"primal_feasibility_tolerance": _LP_TOL, "dual_feasibility_tolerance": _LP_TOL}
        # HiGHS's tolerances are absolute (below max|cost| ~ 1e-11 every cost counts as
        # 0 and any vertex passes), and it refuses costs from 1e20 on: the costs go to it
        # scaled by a power of two into the range Polytope's go in (polytope.py,
        # frankwolfe._scaling); the flows are the same, the value and the duals scaled back
        shift = lp_cost_shift(cost)
        scaled = np.ldexp(cost, shift)
        # HiGHS's simplex without presolve can stop "Unknown" at these tolerances on a
        # well-posed network LP (a 7-node instance found by an audit): with presolve the
        # same LP solves (scipy 1.17's HiGHS), or at HiGHS's own tolerances (1.15's); a
        # basic solution comes back either way
        for options in ({"presolve": False, **tight}, {"presolve": True, **tight},
                        {"presolve": False}):
            res = linprog(scaled, A_eq=self.incidence, b_eq=self.supplies,  # type: ignore[call-overload]
                          bounds=self._bounds, method="highs-ds", options=options)
            if res.status != 4:
                break
        if shift:
            if res.fun is not None:
                res.fun = math.ldexp(float(res.fun), -shift)
            for block in ("eqlin", "ineqlin", "lower", "upper"):
                part = res.get(block)
                if part is not None:
                    part.marginals = np.ldexp(part.marginals, -shift)
        return res

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """An upper bound on ``max ||u - v||_2`` over feasible flows.

        * One source and sink, no capacities: the vertices are ``value`` times
          path indicators, so ``||u - v||^2 = value^2 |P xor Q| <= 2 value^2 L``
          with ``L`` the largest number of edges on a source-sink path (one
          longest-path oracle call, computed once).
        * Otherwise: a feasible flow splits into source-sink paths, carrying at
          most the total supply ``S`` in all, and cycles, each through a
          capacitated edge, carrying at most the sum ``C`` of the finite
          capacities in all; so ``0 <= x_e <= min(capacity_e, S + C)`` and the
          bound is the norm of that vector.
        """
        if self._diameter is None:
            if self.method == "path":
                longest = int(np.count_nonzero(self.extreme_point(-np.ones(self.n_edges))
                                               .to_dense()))
                self._diameter = self._value * float(np.sqrt(2.0 * longest))
            else:
                cap = self.capacity
                total = float(self.supplies[self.supplies > 0].sum())
                total += float(cap[np.isfinite(cap)].sum())
                self._diameter = float(np.linalg.norm(np.minimum(cap, total)))
        return self._diameter

    # -- oracle -------------------------------------------------------------
    def extreme_point(self, direction: np.ndarray) -> Atom:
        c = np.asarray(direction, dtype=float)
        if c.shape != self.shape:
            raise ShapeError(
                f"FlowPolytope: `direction` must have shape {self.shape} (one entry per edge), "
                f"got {c.shape}"
            )
        if self.method == "path":
            path = _dag_shortest_path(self._topo, self._start, self._indptr, self._heads_csr,
                                      self._edge_ids, self.tails, c, self._source, self._sink)
            if path.size == 0 or path[0] < 0:  # the sink is reachable (checked at construction)
                raise ValueError("FlowPolytope: `direction` contains NaN or inf")
            path = path[::-1]
            return Atom.sparse(path, np.full(path.size, self._value), self.shape,
                               key=tuple(path.tolist()))
        return self._lp_vertex(c)  # a finite direction: LMO.__call__ checked it

    def _lp_vertex(self, c: np.ndarray) -> Atom:
        res = self._solve_lp(c)
        if res.status != 0:
            raise OracleError(f"FlowPolytope: the min-cost flow LP failed: {res.message}")
        x = np.clip(res.x, 0.0, self.capacity)
        if self._integral:
            r = np.rint(x)
            if np.abs(x - r).max(initial=0.0) <= 1e-6 * max(1.0, self._scale):
                x = r
        x[np.abs(x) <= 1e-12 * self._scale] = 0.0
        idx = np.flatnonzero(x)
        vals = x[idx]
        if self._integral:
            key = tuple(zip(idx.tolist(), np.rint(vals).astype(np.int64).tolist()))
        else:  # round so a vertex met twice gets the same key despite LP rounding
            key = tuple((i, float(f"{v:.12g}")) for i, v in zip(idx.tolist(), vals.tolist()))
        return Atom.sparse(idx, vals, self.shape, key=key, copy=False)

    # -- membership and helpers ---------------------------------------------
    def violation(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            return np.inf
        neg = max(0.0, -float(x.min(initial=0.0)))
        over = max(0.0, float((x - self.capacity).max(initial=-np.inf)))
        n = self.n_nodes
        balance = np.bincount(self.tails, x, n) - np.bincount(self.heads, x, n)
        bal = float(np.abs(balance - self.supplies).max(initial=0.0))
        return max(neg, over, bal) / self._scale

    def flow_dict(self, x: np.ndarray) -> dict[tuple[Hashable, Hashable], float]:
        """``{(tail, head): flow}`` for the edges with non-zero flow in ``x``."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != self.shape:
            raise ShapeError(f"FlowPolytope: `x` must have shape {self.shape}, got {x.shape}")
        return {self.edges[i]: float(x[i]) for i in np.flatnonzero(x)}

    def _repr_params(self) -> dict[str, Any]:
        return {"n_nodes": self.n_nodes, "n_edges": self.n_edges, "method": self.method}

"""Route flows from the trees of a block-coordinate run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from frankwolfe.result import Result

from .classes import DemandClass
from .network import Network

__all__ = ["route_flows"]


def _tree_path(network: Network, links: np.ndarray, origin: int, dest: int) -> tuple[int, ...]:
    """The links of the tree path ``origin -> dest`` (the loaded links of a shortest-path
    tree enter every node at most once)."""
    into = dict(zip(network.term_node[links].tolist(), links.tolist()))
    path = []
    node = dest
    while node != origin:
        a = into[node]
        path.append(a)
        node = int(network.init_node[a])
    return tuple(reversed(path))


def route_flows(network: Network, result: Result,
                classes: Sequence[DemandClass] | None = None) -> dict[tuple, dict[tuple[int, ...],
                                                                                float]]:
    """Route flows of a ``traffic_assignment(..., method="bcfw")`` result.

    Each block's flows are a convex combination of shortest-path-tree (or,
    with OD blocks, path) loadings: the block's active set,
    ``result.extra["active_sets"]``; the route of OD pair ``(o, d)`` in a
    tree of weight ``w`` carries ``w * d_od``.

    Parameters
    ----------
    network : Network
        The network the result was computed on.
    result : Result
        A ``"bcfw"`` result with pairwise or away steps (which keep active sets).
    classes : sequence of DemandClass, optional
        The classes of a multi-class result (those of its run).

    Returns
    -------
    dict
        ``{(o, d): {route: flow}}`` with 0-based zones and routes as tuples of
        link indices; the flows of an OD pair sum to its demand and the routes'
        link loads sum to ``result.x`` (up to rounding).  With ``classes``:
        ``{(class name, o, d): {route: flow}}`` in vehicles, whose loads sum to
        ``result.extra["class_flows"]``.

    Notes
    -----
    Route flows at equilibrium are not unique: the link flows are (for
    strictly increasing costs), but many route flows load the links
    the same way.  These are the ones this run's trees produce; another
    start, order or algorithm gives others with equal link flows and equal
    (minimal) costs on every used route.
    """
    sets = result.extra.get("active_sets")
    if sets is None:
        raise ValueError(
            "route_flows: `result` keeps no active sets; run traffic_assignment(..., "
            "method='bcfw') with block_step 'pairwise' (default) or 'away'"
        )
    block_classes = result.extra.get("block_classes")
    if (block_classes is None) != (classes is None):
        raise ValueError("route_flows: pass `classes` with (and only with) a multi-class "
                         "result, those of its run")
    by_name = {c.name: c for c in classes or ()}
    if block_classes is not None and set(block_classes) - set(by_name):
        raise ValueError(f"route_flows: the result's classes {sorted(set(block_classes))} are "
                         f"not all in `classes` ({sorted(by_name)})")
    out: dict[tuple, dict[tuple[int, ...], float]] = {}
    for i, atoms in enumerate(sets):
        name = None if block_classes is None else block_classes[i]
        demand = network.demand if name is None else by_name[name].demand
        for key, w in atoms:
            if not (isinstance(key, tuple) and key[:1] in (("tree",), ("path",))):
                raise ValueError(
                    f"route_flows: a block's flows still hold a start point of weight {w:.3g} "
                    "that is no tree or path (a warm start); its routes are unknown"
                )
            o = key[1]
            links = np.frombuffer(key[-1], dtype=np.int64)
            dests = [key[2]] if key[0] == "path" else np.flatnonzero(demand[o] > 0)
            for d in dests:
                if d == o:
                    continue
                route = _tree_path(network, links, o, int(d))
                od = out.setdefault((o, int(d)) if name is None else (name, o, int(d)), {})
                od[route] = od.get(route, 0.0) + w * float(demand[o, d])
    return out

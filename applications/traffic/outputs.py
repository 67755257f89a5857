"""What planners read off an assignment, as pandas tables: skims (time, distance and
toll of the shortest route of every OD pair at the final costs) and select-link
analysis (the OD flows whose routes use given links).

pandas is an optional extra (``pip install 'frankwolfe[pandas]'``): it is imported when a
table is built, and its absence is an :class:`ImportError` that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from frankwolfe.result import Result

from .assignment import AllOrNothing, _origin_tree
from .blocks import _Scratch
from .classes import ClassSet, DemandClass
from .network import Network
from .routes import route_flows

if TYPE_CHECKING:  # pandas is optional (frankwolfe[pandas])
    import pandas as pd

__all__ = ["skims", "select_link"]


def _pandas(what: str) -> Any:
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - the test extras install pandas
        raise ImportError(f"{what} needs pandas, which is not installed: pip install "
                          "'frankwolfe[pandas]' (or pip install pandas)") from e
    return pd


@njit(cache=True, nogil=True)
def _tree_sums(order, done, pred, tail, attrs, out):  # pragma: no cover - compiled
    """``out[k, v]``: the sum of ``attrs[k]`` along the tree path to every settled node
    ``v`` (the nodes settle after their tree parent: one pass in settling order)."""
    out[:, :] = np.inf
    n_settled = 0
    for v in range(done.size):
        if done[v]:
            n_settled += 1
    if n_settled == 0:
        return
    out[:, order[0]] = 0.0
    for i in range(1, n_settled):
        v = order[i]
        a = pred[v]
        u = tail[a]
        for k in range(attrs.shape[0]):
            out[k, v] = out[k, u] + attrs[k, a]


def _flows_of(result: Result | np.ndarray, n_links: int) -> np.ndarray:
    flows = np.asarray(result.x if isinstance(result, Result) else result, dtype=float)
    if flows.shape != (n_links,):
        raise ValueError(f"skims: the link volumes must have shape ({n_links},), got "
                         f"{flows.shape}")
    return flows


def skims(network: Network, result: Result | np.ndarray,
          classes: Sequence[DemandClass] | None = None) -> pd.DataFrame:
    """Skims: cost, time, distance and toll of every OD pair's shortest route at the
    final link costs.

    Parameters
    ----------
    network : Network
    result : Result or ndarray, shape (n_links,)
        An assignment (its link volumes ``x``) or the link volumes.
    classes : sequence of DemandClass, optional
        A multi-class run's classes: one skim per class, on its graph (banned links
        left out) and its generalized cost ``t + toll / vot``.

    Returns
    -------
    pandas.DataFrame
        One row per OD pair of distinct zones (and class): ``origin``, ``destination``
        (0-based), ``class`` (with ``classes``), ``demand``, ``cost`` (the route's
        generalized cost, the quantity routes are chosen on), ``time`` (the sum of the
        volume-delay times ``t(v)``, the network's fixed cost apart), ``distance``
        (lengths) and ``toll`` (the network's ``toll`` column, or the class's
        ``toll_factor * tolls``); ``inf`` where no route exists.

    Notes
    -----
    At equilibrium the used routes of an OD pair tie in cost but not in time or
    distance: the skims follow the shortest-path tree of one Dijkstra per origin (as
    planners' tools do); route flows (:func:`route_flows`) give the others.
    """
    pd = _pandas("skims")
    m = network.n_links
    extra = getattr(result, "extra", None)
    if isinstance(extra, dict) and ("classes" in extra) != (classes is not None):
        # a multi-class result without its classes read as one class, tolls 0: wrong skims
        raise ValueError("skims: pass `classes` with (and only with) a multi-class result, "
                         "those of its run")
    flows = _flows_of(result, m)
    times = network.link_costs(flows) - network.fixed_cost
    cases: list[tuple[str | None, np.ndarray, np.ndarray, np.ndarray, AllOrNothing]]
    if classes is None:
        cases = [(None, network.link_costs(flows), network.toll, network.demand,
                  AllOrNothing(network))]
    else:
        cs = ClassSet(network, classes)
        cases = [(c.name, cs.class_costs(network.link_costs(flows), cs.toll_costs[i],
                                         cs.banned[i]),
                  c.toll_factor * (network.toll if c.tolls is None else
                                   np.broadcast_to(c.tolls, (m,))), c.demand, cs.aons[i])
                 for i, c in enumerate(cs.classes)]
    frames = []
    for name, cost, toll, demand, aon in cases:
        attrs = np.ascontiguousarray(np.vstack([cost, times, network.length, toll]))
        n_zones = demand.shape[0]
        s = _Scratch(network.n_nodes, m)
        sums = np.empty((4, network.n_nodes))
        no_demand = np.zeros(n_zones)
        graph = aon.graph
        rows = []
        for o in range(n_zones):
            _origin_tree(aon.check_costs(cost), graph.indptr, graph.out_link, graph.head,
                         graph.tail, no_demand, o, network.first_thru_node, s.flow, s.used,
                         s.dist, s.pred, s.order, s.done, s.load, s.hk, s.hv)
            _tree_sums(s.order, s.done, s.pred, graph.tail, attrs, sums)
            dests = np.array([d for d in range(n_zones) if d != o], dtype=np.int64)
            rows.append(np.column_stack([np.full(dests.size, o), dests, demand[o, dests],
                                         sums[:, dests].T]))
        table = np.vstack(rows) if rows else np.zeros((0, 7))
        frame = pd.DataFrame({"origin": table[:, 0].astype(np.int64),
                              "destination": table[:, 1].astype(np.int64),
                              "demand": table[:, 2], "cost": table[:, 3],
                              "time": table[:, 4], "distance": table[:, 5],
                              "toll": table[:, 6]})
        if name is not None:
            frame.insert(2, "class", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def select_link(network: Network, result: Result, links: Sequence[int],
                classes: Sequence[DemandClass] | None = None) -> pd.DataFrame:
    """Select-link analysis: the flow of every OD pair (and class) whose routes use
    any of ``links``.

    Parameters
    ----------
    network : Network
    result : Result
        A ``"bcfw"`` run with pairwise or away steps (its route flows,
        :func:`route_flows`: the decomposition this run's trees give; link methods
        keep no routes).
    links : sequence of int
        0-based link indices.
    classes : sequence of DemandClass, optional
        The classes of a multi-class run.

    Returns
    -------
    pandas.DataFrame
        One row per OD pair (and class) with flow on the selected links: ``origin``,
        ``destination`` (0-based), ``class`` (with ``classes``), ``demand``, ``flow``
        (vehicles on routes through any selected link) and ``share`` (``flow /
        demand``).  For one link, the flows sum to the link's flow (its class's, with
        classes).
    """
    pd = _pandas("select_link")
    sel = np.asarray(links)
    if sel.ndim != 1 or sel.size == 0 or sel.dtype.kind not in "iu" or \
            sel.min() < 0 or sel.max() >= network.n_links:
        raise ValueError(f"select_link: `links` must be a non-empty list of 0-based link "
                         f"indices in [0, {network.n_links}), got {links!r:.80}")
    chosen = set(sel.tolist())
    routes = route_flows(network, result, classes=classes)
    demand_of = {c.name: c.demand for c in classes or ()}
    rows: list[tuple] = []
    for key, by_route in routes.items():
        flow = sum(f for route, f in by_route.items() if chosen.intersection(route))
        if flow <= 0.0:
            continue
        *name, o, d = key
        dem = float((demand_of[name[0]] if name else network.demand)[o, d])
        rows.append((*name, o, d, dem, flow, flow / dem if dem > 0 else np.nan))
    cols = (["class"] if classes is not None else []) + \
        ["origin", "destination", "demand", "flow", "share"]
    frame = pd.DataFrame(rows, columns=cols)
    if classes is not None:
        frame = frame[["origin", "destination", "class", "demand", "flow", "share"]]
    return frame.sort_values(list(frame.columns[:3 if classes is not None else 2]),
                             ignore_index=True)

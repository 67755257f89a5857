"""A road network with its link costs (BPR or another volume-delay function per link)
and an origin-destination demand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from frankwolfe._numbers import check_real, check_whole, is_real, is_whole, real_array
from frankwolfe.errors import ShapeError

from .vdf import check_parameters, link_cost_data, link_costs, vdf_codes

__all__ = ["Network", "bpr_cost"]


def bpr_cost(flow: ArrayLike, free_flow_time: ArrayLike, b: ArrayLike,
             capacity: ArrayLike, power: ArrayLike) -> np.ndarray:
    """BPR travel time ``t0 * (1 + b * (x / c)^p)`` of each link (vectorized).

    The five arguments broadcast against each other (a scalar applies to every link).
    Nothing is checked here (:class:`Network` checks the link data it holds).

    Parameters
    ----------
    flow : array_like of shape (m,)
        The link volumes ``x``; negative entries count as 0.
    free_flow_time : array_like of shape (m,)
        ``t0``, the travel time of an empty link.
    b : array_like of shape (m,)
        The BPR coefficient (0.15 in the classic function).
    capacity : array_like of shape (m,)
        ``c``, the practical capacity (> 0).
    power : array_like of shape (m,)
        The BPR exponent ``p`` (4 in the classic function).

    Returns
    -------
    ndarray of float
        The travel time of each link at ``flow``.
    """
    ratio = np.maximum(np.asarray(flow, dtype=float), 0.0) / capacity
    return free_flow_time * (1.0 + b * ratio**power)


# the default of the optional link columns (length, toll): 0 on every link
_ZERO_COLUMN = np.zeros(0)
_ZERO_COLUMN.flags.writeable = False


def _zero_column() -> np.ndarray:
    return _ZERO_COLUMN


def _column(name: str, value: object, n: int, default: float | None = None) -> np.ndarray:
    if value is None or value is _ZERO_COLUMN:
        if default is None:
            raise ValueError(f"Network: `{name}` is required")
        return np.full(n, float(default))
    arr = real_array(value, "Network", name)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise ShapeError(
            f"Network: `{name}` must have shape ({n},) (one per link), got {arr.shape}")
    return arr.copy()


def _check_node_indices(name: str, nodes: np.ndarray) -> None:
    """A ``TypeError`` unless ``nodes`` holds numbers, a ``ValueError`` naming the first
    entry that is not a whole number (``astype(int64)`` truncated ``1.5`` to 1)."""
    if nodes.size == 0 or nodes.dtype.kind in "iu":
        return
    if nodes.dtype.kind != "f":
        raise TypeError(f"Network: `{name}` must hold integer node indices, got dtype "
                        f"{nodes.dtype}")
    bad = ~(np.isfinite(nodes) & (nodes == np.round(nodes)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"Network: `{name}` must hold integer node indices, got "
                         f"{float(nodes[i])!r} at position {i}")


@dataclass
class Network:
    """Directed road network, BPR costs and OD demand of a static assignment.

    The link cost seen by drivers (the generalized cost) is::

        c_a(x) = t0_a * (1 + b_a * (x / cap_a)^p_a) + toll_factor * toll_a
                 + distance_factor * length_a

    with BPR costs (the default; ``vdf`` chooses another volume-delay function per
    link, :mod:`.vdf`).

    Parameters
    ----------
    init_node, term_node : array of int, shape (m,)
        Tail and head of each link, 0-based node indices.
    free_flow_time, capacity, b, power : array of float, shape (m,)
        BPR parameters (``b = 0`` or ``power = 0`` give constant-cost links).
    demand : array, shape (n_zones, n_zones)
        Trips from zone ``o`` to zone ``d``; zones are nodes ``0..n_zones-1``.
        Intrazonal entries (the diagonal) load no link.
    n_nodes : int, default 0
        Number of nodes (0: the largest node index + 1).
    first_thru_node : int, default 0
        0-based index of the first node that routes may pass through: zone
        nodes below it are only origins or destinations (TNTP ``FIRST THRU
        NODE`` minus one); in ``[0, n_nodes)``.
    length, toll : array of float, optional
        Link lengths and tolls (default 0).
    toll_factor, distance_factor : float, default 0
        Weights of tolls and lengths in the generalized cost.
    name : str
        For display.
    metadata : dict of str to str, optional
        The file's ``<KEY> value`` header lines (TNTP metadata), kept as read.
    vdf : str or array, optional
        The volume-delay function of each link (default BPR everywhere): a kind name
        for every link, or one name or code (:data:`~.vdf.VDF_KINDS`) per link;
        ``b`` and ``power`` are its parameters alpha and beta (see :mod:`.vdf`).
        Stored as the array of codes.
    """

    init_node: np.ndarray
    term_node: np.ndarray
    free_flow_time: np.ndarray
    capacity: np.ndarray
    b: np.ndarray
    power: np.ndarray
    demand: np.ndarray
    n_nodes: int = 0
    first_thru_node: int = 0
    length: np.ndarray = field(default_factory=_zero_column)
    toll: np.ndarray = field(default_factory=_zero_column)
    toll_factor: float = 0.0
    distance_factor: float = 0.0
    name: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    vdf: Any = None

    def __post_init__(self) -> None:
        tail = np.asarray(self.init_node)
        head = np.asarray(self.term_node)
        if tail.ndim != 1 or tail.shape != head.shape:
            raise ShapeError(
                f"Network: `init_node` and `term_node` must be 1-D of equal length, got "
                f"{tail.shape} and {head.shape}"
            )
        for name, nodes in (("init_node", tail), ("term_node", head)):
            _check_node_indices(name, nodes)
        self.init_node = tail.astype(np.int64)
        self.term_node = head.astype(np.int64)
        m = self.n_links
        top = int(max(self.init_node.max(initial=-1), self.term_node.max(initial=-1))) + 1
        self.n_nodes = check_whole(self.n_nodes, "n_nodes", least=0, where="Network") or top
        if m and (min(self.init_node.min(), self.term_node.min()) < 0 or top > self.n_nodes):
            raise ValueError(
                f"Network: node indices must lie in [0, {self.n_nodes}), got range "
                f"[{min(self.init_node.min(), self.term_node.min())}, {top - 1}]"
            )
        self.free_flow_time = _column("free_flow_time", self.free_flow_time, m)
        self.capacity = _column("capacity", self.capacity, m)
        self.b = _column("b", self.b, m)
        self.power = _column("power", self.power, m)
        self.length = _column("length", self.length, m, default=0.0)
        self.toll = _column("toll", self.toll, m, default=0.0)
        for name in ("free_flow_time", "b", "power", "length", "toll"):
            col = getattr(self, name)
            if not np.all(np.isfinite(col)) or (name != "toll" and col.min(initial=0.0) < 0):
                ok = np.isfinite(col) if name == "toll" else np.isfinite(col) & (col >= 0)
                i = int(np.flatnonzero(~ok)[0])
                what = "finite" if name == "toll" else "finite and non-negative"
                raise ValueError(f"Network: `{name}` must be {what}, got {float(col[i])!r} on "
                                 f"link {i}")
        self.vdf = vdf_codes(self.vdf, m)
        check_parameters(self.vdf, self.b, self.power, self.capacity)
        # BPR with an infinite capacity costs t0 at every flow: a constant-cost link (the
        # Beckmann integral's inf * 0 gave NaN)
        variable = ((self.b > 0) & (self.power > 0) & (self.free_flow_time > 0)
                    & ((self.vdf > 1) | np.isfinite(self.capacity))) | (self.vdf > 1)
        bad = variable & ~((self.capacity > 0) & np.isfinite(self.capacity))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Network: link {i} has flow-dependent cost but capacity {self.capacity[i]!r}; "
                "capacity must be positive (and finite for a volume-delay function other "
                "than BPR)"
            )
        # a constant-cost link never divides by its capacity: any positive value will do
        # (BPR at capacity inf: b = 0 keeps its cost t0 there)
        self.b = np.where((self.vdf <= 1) & np.isinf(self.capacity), 0.0, self.b)
        self.capacity = np.where(variable, self.capacity, 1.0)
        dem = real_array(self.demand, "Network", "demand")
        if dem.ndim != 2 or dem.shape[0] != dem.shape[1]:
            raise ShapeError(
                f"Network: `demand` must be a square (zones x zones) matrix, got {dem.shape}")
        if dem.shape[0] > self.n_nodes:
            raise ShapeError(
                f"Network: `demand` has {dem.shape[0]} zones but the network has "
                f"{self.n_nodes} nodes"
            )
        if not np.all(np.isfinite(dem)) or dem.min(initial=0.0) < 0:
            o, d = (int(k) for k in np.argwhere(~(np.isfinite(dem) & (dem >= 0)))[0])
            raise ValueError(f"Network: `demand` must be finite and non-negative, got "
                             f"{float(dem[o, d])!r} at (origin, destination) ({o}, {d}) "
                             "(0-based)")
        self.demand = dem
        if not is_whole(self.first_thru_node):
            # by hand, not check_whole: the message says the node index is 0-based
            message = (f"Network: `first_thru_node` must be an integer >= 0 (0-based), "
                       f"got {self.first_thru_node!r}")
            if not is_real(self.first_thru_node):
                raise TypeError(f"{message} ({type(self.first_thru_node).__name__})")
            raise ValueError(message)
        self.first_thru_node = int(self.first_thru_node)
        if self.n_nodes and self.first_thru_node >= self.n_nodes:
            # past the last node it forbids every route through a node, a typo's doing
            # (a TNTP <FIRST THRU NODE> of 99 on 2 nodes was kept)
            raise ValueError(f"Network: `first_thru_node` must lie in [0, {self.n_nodes}) "
                             f"(0-based, the network's {self.n_nodes} nodes), got "
                             f"{self.first_thru_node}")
        for name in ("toll_factor", "distance_factor"):
            setattr(self, name, check_real(getattr(self, name), name, "Network"))
        const = self.toll_factor * self.toll + self.distance_factor * self.length
        negative = np.flatnonzero(self.free_flow_time + const < 0)
        if negative.size:
            i = int(negative[0])
            raise ValueError(
                f"Network: the generalized cost must be non-negative on every link; link {i} "
                f"costs {self.free_flow_time[i]!r} + toll_factor * {self.toll[i]!r} + "
                f"distance_factor * {self.length[i]!r} = {self.free_flow_time[i] + const[i]!r}")

    # -- sizes ---------------------------------------------------------------
    @property
    def n_links(self) -> int:
        """Number of links."""
        return int(self.init_node.size)

    @property
    def n_zones(self) -> int:
        """Number of zones (rows of the demand matrix)."""
        return int(self.demand.shape[0])

    @property
    def total_demand(self) -> float:
        """Sum of all trips, intrazonal ones included."""
        return float(self.demand.sum())

    def origins(self) -> np.ndarray:
        """Zones with demand to other zones (intrazonal trips load no link)."""
        dem = self.demand.copy()
        np.fill_diagonal(dem, 0.0)
        return np.flatnonzero(dem.sum(axis=1) > 0).astype(np.int64)

    @property
    def fixed_cost(self) -> np.ndarray:
        """The flow-independent part of the generalized cost (tolls, lengths)."""
        return self.toll_factor * self.toll + self.distance_factor * self.length

    def link_costs(self, flow: np.ndarray) -> np.ndarray:
        """Generalized link costs ``c_a(x_a)`` at link flows ``flow``."""
        flow = np.asarray(flow, dtype=float)
        if flow.shape != (self.n_links,):
            raise ShapeError(
                f"link_costs: `flow` must have shape ({self.n_links},), got {flow.shape}")
        if not self.vdf.any():  # BPR everywhere
            return (bpr_cost(flow, self.free_flow_time, self.b, self.capacity, self.power)
                    + self.fixed_cost)
        return link_costs(link_cost_data(self), np.ascontiguousarray(flow))

    def net_supply(self) -> np.ndarray:
        """Trips produced minus trips attracted at each node (intrazonal ones excluded)."""
        dem = self.demand.copy()
        np.fill_diagonal(dem, 0.0)
        out = np.zeros(self.n_nodes)
        out[: self.n_zones] = dem.sum(axis=1) - dem.sum(axis=0)
        return out

    def __repr__(self) -> str:
        return (f"Network({self.name!r}, nodes={self.n_nodes}, links={self.n_links}, "
                f"zones={self.n_zones}, demand={self.total_demand:g})")

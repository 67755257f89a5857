"""Demand classes of a multi-class assignment, and the objective they share.

A class ``c`` has its own OD matrix, passenger-car equivalent ``pce_c``, value of time
``vot_c``, per-link tolls and links it may not use.  With ``x_ac`` the class's vehicle
flow on link ``a``, the links carry ``v_a = sum_c pce_c x_ac`` and the assignment
minimizes the convex program::

    f(x) = sum_a int_0^{v_a} t_a(s) ds + sum_c pce_c sum_a (toll_ac / vot_c) x_ac

over every class's flow polytope (restricted links left out of the class's graph).
``df/dx_ac = pce_c (t_a(v_a) + toll_ac / vot_c)``: each class routes on its generalized
cost ``t + toll / vot`` (in time units, per vehicle), so the minimizers are the user
equilibria of every class at once, and the Frank-Wolfe gap certifies them.

The program lives in one vector of ``m (1 + C)`` coordinates (``m`` links, ``C``
classes): the PCE volumes ``v`` first, then each class's vehicle flows.  The objective is
separable over them: a link's volume coordinate has the link's volume-delay function, a
class's flow coordinate the constant cost ``pce_c toll_ac / vot_c`` (its integral is
linear), so the Beckmann objective's kernels and exact line search serve it unchanged.
A class atom (an all-or-nothing loading ``y`` of the class) is ``pce_c y`` on the volumes
and ``y`` on the class's own coordinates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from frankwolfe._numbers import is_real, real_array
from frankwolfe.errors import FrankWolfeError, InfeasibleError

from .assignment import AllOrNothing
from .beckmann import Beckmann
from .network import Network
from .vdf import LinkCostData, link_cost_data

__all__ = ["DemandClass", "DemandClassError", "ClassSet", "MulticlassBeckmann", "split_demand"]


class DemandClassError(FrankWolfeError, ValueError):
    """A demand class the network cannot take: bad demand, ``pce``, ``vot``, tolls or
    banned links, or an OD pair its banned links cut off."""


def _real_array(value: Any, where: str, name: str) -> np.ndarray:
    """``value`` as a float array, else a :class:`DemandClassError` naming ``where`` and
    ``name`` (``np.asarray(..., dtype=float)`` raised numpy's own error on text)."""
    try:
        return real_array(value, where, name)
    except ValueError as err:
        raise DemandClassError(str(err)) from None


@dataclass
class DemandClass:
    """One user class of a multi-class assignment (:func:`traffic_assignment`'s
    ``classes``).

    Parameters
    ----------
    name : str
        Unique among the classes (keys of the result's per-class tables).
    demand : array, shape (n_zones, n_zones)
        The class's trips (vehicles), zones as in :class:`Network`.
    pce : float, default 1
        Passenger-car equivalent: a vehicle of the class adds ``pce`` to the link
        volumes the volume-delay functions see.
    vot : float, default 1
        Value of time (money per time unit): tolls cost the class ``toll / vot``.
    tolls : float or array, shape (n_links,), optional
        The class's per-link tolls (money); default the network's ``toll`` column.
    toll_factor : float, default 1
        Multiplies ``tolls`` (e.g. trucks paying three times the car toll).  The
        network's own flow-independent cost (``Network.toll_factor * toll +
        distance_factor * length``) is part of every class's link time already: set
        the network's ``toll_factor`` to 0 when the classes carry the tolls.
    banned_links : array of int, optional
        0-based links the class may not use (left out of its shortest-path graph).
    """

    name: str
    demand: Any
    pce: float = 1.0
    vot: float = 1.0
    tolls: Any = None
    toll_factor: float = 1.0
    banned_links: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DemandClassError(f"DemandClass: `name` must be a non-empty string, got "
                                   f"{self.name!r}")
        who = f"DemandClass {self.name!r}"
        dem = _real_array(self.demand, who, "demand")
        if dem.ndim != 2 or dem.shape[0] != dem.shape[1]:
            raise DemandClassError(f"{who}: `demand` must be a square (zones x zones) matrix, "
                                   f"got shape {dem.shape}")
        if not np.all(np.isfinite(dem)) or dem.min(initial=0.0) < 0:
            bad = np.argwhere(~(dem >= 0) | ~np.isfinite(dem))[0]
            raise DemandClassError(f"{who}: `demand` must be finite and non-negative, got "
                                   f"{float(dem[tuple(bad)])!r} at (origin, destination) "
                                   f"{tuple(int(i) for i in bad)} (0-based)")
        self.demand = dem
        for field in ("pce", "vot"):
            value = getattr(self, field)
            if not (is_real(value) and np.isfinite(value) and value > 0):
                raise DemandClassError(f"{who}: `{field}` must be a positive number, got "
                                       f"{value!r}")
            setattr(self, field, float(value))
        if not (is_real(self.toll_factor) and np.isfinite(self.toll_factor)):
            raise DemandClassError(f"{who}: `toll_factor` must be a finite number, got "
                                   f"{self.toll_factor!r}")
        self.toll_factor = float(self.toll_factor)
        if self.tolls is not None:
            tolls = _real_array(self.tolls, who, "tolls")
            if tolls.ndim > 1 or not np.all(np.isfinite(tolls)):
                raise DemandClassError(f"{who}: `tolls` must be a number or one finite toll "
                                       f"per link, got shape {tolls.shape}")
            self.tolls = tolls
        if self.banned_links is not None:
            banned = np.asarray(self.banned_links)
            if banned.dtype == bool:
                banned = np.flatnonzero(banned)
            if banned.ndim != 1 or (banned.size and (
                    banned.dtype.kind not in "iuf"
                    or (banned.dtype.kind == "f" and not np.all(np.isfinite(banned)
                                                                 & (banned == np.round(banned)))))):
                raise DemandClassError(f"{who}: `banned_links` must be 0-based link indices, "
                                       f"got {self.banned_links!r:.80}")
            self.banned_links = np.unique(banned.astype(np.int64))


def split_demand(demand: np.ndarray, shares: Mapping[str, float]) -> dict[str, np.ndarray]:
    """One OD matrix per class, each a share of ``demand`` (e.g. a TNTP trips file's:
    the format has one matrix per file, so classes come from one file per class or
    from shares of one).

    Parameters
    ----------
    demand : array, shape (n_zones, n_zones)
    shares : mapping of str to float
        Class name -> share of every OD pair's trips; non-negative, summing to 1.

    Returns
    -------
    dict
        Class name -> ``share * demand``.
    """
    if not shares:
        raise DemandClassError("split_demand: `shares` is empty")
    if not all(is_real(v) for v in shares.values()):
        raise DemandClassError(f"split_demand: `shares` must map names to numbers, got "
                               f"{dict(shares)!r}")
    vals = np.array([float(v) for v in shares.values()])
    if not np.all(np.isfinite(vals)) or vals.min() < 0 or abs(vals.sum() - 1.0) > 1e-9:
        raise DemandClassError(f"split_demand: `shares` must be non-negative and sum to 1, "
                               f"got {dict(shares)!r}")
    dem = _real_array(demand, "split_demand", "demand")
    return {name: share * dem for name, share in zip(shares, vals)}


class ClassSet:
    """Demand classes bound to a network: their arrays checked against it, one
    all-or-nothing oracle per class (its own demand and graph), and the layout of the
    multi-class vector (see the module notes).

    Parameters
    ----------
    network : Network
    classes : sequence of DemandClass
    n_jobs : int, default 1
        Threads of each class's all-or-nothing oracle.

    Attributes
    ----------
    toll_costs : list of ndarray
        ``toll_factor * tolls / vot`` of each class (time units).
    aons : list of AllOrNothing
    dim : int
        ``n_links * (1 + n_classes)``.
    """

    def __init__(self, network: Network, classes: Sequence[DemandClass], n_jobs: int = 1) -> None:
        classes = list(classes)
        if not classes:
            raise DemandClassError("traffic_assignment: `classes` must hold at least one "
                                   "DemandClass")
        for i, c in enumerate(classes):
            if not isinstance(c, DemandClass):
                raise DemandClassError(f"traffic_assignment: classes[{i}] is a "
                                       f"{type(c).__name__}, expected a DemandClass")
        names = [c.name for c in classes]
        if len(set(names)) != len(names):
            raise DemandClassError(f"traffic_assignment: class names must be unique, got "
                                   f"{names}")
        m = network.n_links
        self.network = network
        self.classes = classes
        self.n_links = m
        self.dim = m * (1 + len(classes))
        self.toll_costs: list[np.ndarray] = []
        self.banned: list[np.ndarray] = []
        self.networks: list[Network] = []
        self.aons: list[AllOrNothing] = []
        free = network.link_costs(np.zeros(m))
        for c in classes:
            who = f"DemandClass {c.name!r}"
            if c.demand.shape[0] > network.n_nodes:
                raise DemandClassError(f"{who}: `demand` has {c.demand.shape[0]} zones but the "
                                       f"network has {network.n_nodes} nodes")
            tolls = network.toll if c.tolls is None else c.tolls
            if tolls.ndim == 0:
                tolls = np.full(m, float(tolls))
            if tolls.shape != (m,):
                raise DemandClassError(f"{who}: `tolls` must have one toll per link ({m},), "
                                       f"got shape {tolls.shape}")
            banned = np.zeros(0, dtype=np.int64) if c.banned_links is None else c.banned_links
            if banned.size and (banned.min() < 0 or banned.max() >= m):
                bad = banned[(banned < 0) | (banned >= m)][0]
                raise DemandClassError(f"{who}: banned link {int(bad)} is out of range; links "
                                       f"are 0..{m - 1}")
            toll_cost = c.toll_factor * tolls / c.vot
            allowed = np.ones(m, dtype=bool)
            allowed[banned] = False
            low = np.flatnonzero(allowed & (free + toll_cost < 0))
            if low.size:
                a = int(low[0])
                raise DemandClassError(f"{who}: the generalized cost t + toll / vot of link {a} "
                                       f"is negative at free flow ({free[a] + toll_cost[a]:g}); "
                                       "shortest paths need non-negative costs")
            net_c = dataclasses.replace(network, demand=c.demand,
                                        name=f"{network.name}[{c.name}]")
            aon = AllOrNothing(net_c, n_jobs=n_jobs, banned_links=banned)
            try:
                aon.assign(self.class_costs(free, toll_cost, banned))
            except InfeasibleError as err:
                what = str(err).removeprefix("AllOrNothing: ")
                raise DemandClassError(f"{who}: an OD pair with demand has no route without "
                                       f"the class's banned links: {what}") from None
            self.toll_costs.append(toll_cost)
            self.banned.append(banned)
            self.networks.append(net_c)
            self.aons.append(aon)

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    def flows_of(self, c: int) -> slice:
        """Class ``c``'s coordinates (its vehicle flows) in the multi-class vector."""
        m = self.n_links
        return slice(m * (1 + c), m * (2 + c))

    @staticmethod
    def class_costs(times: np.ndarray, toll_cost: np.ndarray, banned: np.ndarray) -> np.ndarray:
        """A class's generalized link costs ``t + toll / vot`` for its shortest paths
        (0 on its banned links, which its graph leaves out)."""
        cost = times + toll_cost
        cost[banned] = 0.0
        return cost

    def cost_data(self) -> LinkCostData:
        """The kernel arrays of the multi-class objective: the network's links, then a
        constant cost ``pce_c toll_c / vot_c`` on each class's flow coordinates."""
        base = link_cost_data(self.network)
        n = self.dim - self.n_links
        fixed = [base.fixed] + [c.pce * tc for c, tc in zip(self.classes, self.toll_costs)]
        return LinkCostData(
            np.concatenate([base.kind, np.zeros(n, dtype=np.int64)]),
            np.concatenate([base.t0, np.zeros(n)]),
            np.concatenate([base.alpha, np.zeros(n)]),
            np.concatenate([base.beta, np.ones(n)]),
            np.concatenate([base.cap, np.ones(n)]),
            np.ascontiguousarray(np.concatenate(fixed)))

    def compose(self, class_flows: Sequence[np.ndarray]) -> np.ndarray:
        """The multi-class vector of per-class vehicle flows."""
        x = np.zeros(self.dim)
        for c, flow in enumerate(class_flows):
            x[self.flows_of(c)] = flow
            x[: self.n_links] += self.classes[c].pce * np.asarray(flow, dtype=float)
        return x

    def gaps(self, x: np.ndarray) -> dict[str, Any]:
        """Per-class certificates at the multi-class vector ``x``, tables keyed by class
        name: vehicle flows, link costs ``t + toll / vot`` (``inf`` on banned links), the
        total cost ``sum_a cost_a x_a``, the Frank-Wolfe gap
        ``pce (sum_a cost_a x_a - sum_od d SP)`` (objective units: the classes' gaps sum
        to the overall one) and the relative gap ``1 - sum_od d SP / sum_a cost_a x_a``."""
        m = self.n_links
        times = self.network.link_costs(x[:m])
        out: dict[str, Any] = {"class_flows": {}, "class_costs": {}, "class_total_cost": {},
                               "class_gap": {}, "class_relative_gap": {}}
        for c, cls in enumerate(self.classes):
            flow = x[self.flows_of(c)].copy()
            cost = self.class_costs(times, self.toll_costs[c], self.banned[c])
            _, sp = self.aons[c].assign(cost)
            total = float(cost @ flow)
            cost[self.banned[c]] = np.inf
            out["class_flows"][cls.name] = flow
            out["class_costs"][cls.name] = cost
            out["class_total_cost"][cls.name] = total
            out["class_gap"][cls.name] = cls.pce * (total - sp)
            out["class_relative_gap"][cls.name] = (total - sp) / total if total > 0 else 0.0
        return out


class MulticlassBeckmann(Beckmann):
    """The multi-class objective (module notes) on the vector of :class:`ClassSet`.

    Its gradient on class ``c``'s coordinates is ``pce_c toll_c / vot_c`` and on the
    volumes ``t(v)``, so ``pce_c (t + toll_c / vot_c)`` is the class's oracle cost.

    Parameters
    ----------
    class_set : ClassSet
    """

    def __init__(self, class_set: ClassSet) -> None:
        self.network = class_set.network
        self.class_set = class_set
        self.shape = (class_set.dim,)
        self._data = class_set.cost_data()

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self.class_set.classes)
        return f"MulticlassBeckmann({self.network.name or self.network.n_links!r}: {names})"

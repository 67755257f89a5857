"""Static user-equilibrium traffic assignment on the Frank-Wolfe core.

The application supplies a domain and an objective; the solvers are the
core's generic Frank-Wolfe methods:

* :class:`Network` - links, link costs (BPR or another volume-delay function per link,
  :mod:`.vdf`; generalized with tolls and lengths), OD demand;
* :func:`read_tntp` and friends - readers for the TNTP formats;
* :class:`Beckmann` - the Beckmann objective (gradient = link costs, exact line search);
* :class:`AllOrNothing` - the flow-polytope LMO (shortest paths from every origin);
* :class:`AssignmentBlocks` - the same polytope as a Minkowski sum over origins (blocks
  of block-coordinate FW, atoms: shortest-path trees);
* :class:`DemandClass` - a user class (demand, pce, value of time, tolls, banned links)
  of a multi-class assignment (``traffic_assignment(network, classes=[...])``);
* :func:`traffic_assignment` - FW / CFW / BFW / BCFW to a target relative gap;
* :func:`route_flows` - route flows of a BCFW run (one decomposition of many);
* :func:`skims`, :func:`select_link` - skims and select-link analysis as pandas tables.
"""

from .assignment import AllOrNothing
from .beckmann import Beckmann
from .blocks import AssignmentBlocks, ODFlows, OriginFlows
from .classes import DemandClass, DemandClassError, split_demand
from .network import Network, bpr_cost
from .outputs import select_link, skims
from .routes import route_flows
from .solve import METHODS, relative_gap, traffic_assignment
from .tntp import load_siouxfalls, read_flows, read_net, read_tntp, read_trips
from .vdf import VDF_KINDS, VolumeDelayError

__all__ = [
    "Network", "bpr_cost", "Beckmann", "AllOrNothing",
    "AssignmentBlocks", "OriginFlows", "ODFlows", "route_flows", "skims", "select_link",
    "traffic_assignment", "relative_gap", "METHODS",
    "DemandClass", "DemandClassError", "split_demand",
    "read_net", "read_trips", "read_flows", "read_tntp", "load_siouxfalls",
    "VDF_KINDS", "VolumeDelayError",
]

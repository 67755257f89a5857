"""The domains of a multi-class assignment: every class's flow polytope, whole (for the
link methods) or as blocks of one class and one origin (for BCFW).

The vector is :class:`~.classes.ClassSet`'s: PCE volumes, then each class's vehicle
flows.  A class's oracle cost on link ``a`` is ``pce_c g_a + g_(c, a)`` (``g`` the
gradient on the volume and on the class coordinate), ``pce_c (t_a + toll_ac / vot_c)``
at the multi-class objective's gradient; the answer loads ``pce_c y`` on the volumes and
``y`` on the class's coordinates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe.atoms import Atom
from frankwolfe.compiled import BlockDomainHooks
from frankwolfe.lmo.base import FEASIBILITY_TOL, LMO
from frankwolfe.lmo.product import ProductDomain

from .blocks import OriginFlows, TreesOfFlows, _in_links, _Scratch, _split_flows, _split_work
from .classes import ClassSet

__all__ = ["MulticlassFlows", "ClassOriginFlows", "MulticlassBlocks"]


class MulticlassFlows(LMO):
    """Every class's flow polytope at once: the LMO of the link methods (fw, cfw, bfw)
    on the multi-class vector, one all-or-nothing assignment per class.

    Parameters
    ----------
    class_set : ClassSet
    """

    #: ``(n_links * (1 + n_classes),)``
    shape: tuple[int, ...]

    def __init__(self, class_set: ClassSet) -> None:
        self.class_set = class_set
        self.shape = (class_set.dim,)

    def class_cost(self, c: int, direction: np.ndarray) -> np.ndarray:
        """Class ``c``'s link costs for the linear function ``direction``."""
        cs = self.class_set
        m = cs.n_links
        cost = cs.classes[c].pce * direction[:m] + direction[cs.flows_of(c)]
        cost[cs.banned[c]] = 0.0  # never read: the class's graph leaves them out
        return cost

    def extreme_point(self, direction: np.ndarray) -> Atom:
        cs = self.class_set
        g = np.asarray(direction, dtype=float).reshape(-1)
        out = np.zeros(cs.dim)
        for c, aon in enumerate(cs.aons):
            flow, _ = aon.assign(self.class_cost(c, g))
            out[cs.flows_of(c)] = flow
            out[: cs.n_links] += cs.classes[c].pce * flow
        return Atom(out)

    def violation(self, x: np.ndarray) -> float:
        """The worst class's flow-conservation residual (relative to its demand), or the
        volumes' distance from ``sum_c pce_c x_c`` (relative to the total volume)."""
        cs = self.class_set
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != self.shape:
            return np.inf
        worst = max(aon.violation(x[cs.flows_of(c)]) for c, aon in enumerate(cs.aons))
        volume = cs.compose([x[cs.flows_of(c)] for c in range(cs.n_classes)])[: cs.n_links]
        scale = max(float(np.abs(volume).sum()), 1e-300)
        return max(worst, float(np.abs(volume - x[: cs.n_links]).sum()) / scale)

    def _repr_params(self) -> dict[str, Any]:
        return {"classes": [c.name for c in self.class_set.classes]}


class ClassOriginFlows(LMO):
    """One class's flows from one origin: a block of :class:`MulticlassBlocks`.

    Block coordinates: the link volumes (``m``), then the class's link flows (``m``).
    Atoms: the origin's shortest-path tree in the class's graph, sparse, keyed as
    :class:`~.blocks.OriginFlows` keys them (``("tree", origin, links)``).

    Parameters
    ----------
    class_set : ClassSet
    c : int
        The class.
    origin : int
        0-based zone.
    scratch : _Scratch
        Work arrays of the shortest-path search, shared by the blocks of one domain
        (:class:`MulticlassBlocks` makes one for all its blocks).
    """

    #: ``(2 * n_links,)``
    shape: tuple[int, ...]

    def __init__(self, class_set: ClassSet, c: int, origin: int, scratch: _Scratch) -> None:
        self.class_set = class_set
        self.c = int(c)
        self.pce = class_set.classes[c].pce
        self.origin = int(origin)
        self.tree_block = OriginFlows(class_set.aons[c], origin, scratch)
        self.shape = (2 * class_set.n_links,)

    def _atom(self, links: np.ndarray, flows: np.ndarray, key: tuple) -> Atom:
        m = self.class_set.n_links
        return Atom.sparse(np.concatenate([links, links + m]),
                           np.concatenate([self.pce * flows, flows]), self.shape, key=key)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        g = np.asarray(direction, dtype=float).reshape(-1)
        m = self.class_set.n_links
        cost = self.pce * g[:m] + g[m:]
        cost[self.class_set.banned[self.c]] = 0.0  # not in the class's graph
        links, flows, _ = self.tree_block.tree(cost)
        return self._atom(links, flows, self.tree_block.key(links))

    def atom(self, key: tuple) -> Atom:
        """The atom of ``key`` (warm starts from a previous run's trees)."""
        tree = self.tree_block.atom(key)
        return self._atom(np.asarray(tree.indices), np.asarray(tree.values), key)

    def violation(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != self.shape:
            return np.inf
        m = self.class_set.n_links
        worst = self.tree_block.violation(x[m:])
        scale = max(float(self.tree_block.demand.sum()) * self.pce, 1e-300)
        return max(worst, float(np.abs(x[:m] - self.pce * x[m:]).max(initial=0.0)) / scale)

    def _repr_params(self) -> dict[str, Any]:
        return {"class": self.class_set.classes[self.c].name, "origin": self.origin}


class MulticlassBlocks(ProductDomain, BlockDomainHooks):
    """Every class's flow polytope as a Minkowski sum of (class, origin) blocks
    (:class:`ClassOriginFlows`): the domain of a multi-class BCFW run.

    The block steps run in the core's Python engine (the compiled origin kernels know
    one class's trees on the link coordinates only).

    Parameters
    ----------
    class_set : ClassSet
    """

    #: ``(n_links * (1 + n_classes),)``
    shape: tuple[int, ...]
    blocks: tuple[ClassOriginFlows, ...]

    def __init__(self, class_set: ClassSet) -> None:
        self.class_set = class_set
        self.network = class_set.network
        self.by = "origin"
        m = class_set.n_links
        scratch = _Scratch(self.network.n_nodes, m)
        blocks, indices = [], []
        for c, aon in enumerate(class_set.aons):
            own = np.arange(m, dtype=np.int64) + class_set.flows_of(c).start
            for o in aon.origins:
                blocks.append(ClassOriginFlows(class_set, c, int(o), scratch))
                indices.append(np.concatenate([np.arange(m, dtype=np.int64), own]))
        if not blocks:
            raise ValueError("MulticlassBlocks: no class has demand between zones")
        self._whole = MulticlassFlows(class_set)
        super().__init__(blocks, indices)
        # a last class without demand has no block to reach its coordinates
        self.dim = class_set.dim
        self.shape = (class_set.dim,)
        self.block_class = np.array([b.c for b in blocks], dtype=np.int64)

    def initial_block_points(self) -> list[Any]:
        """Every (class, origin) on its free-flow generalized-cost tree, as a one-atom
        active set."""
        cs = self.class_set
        g = np.zeros(cs.dim)
        g[: cs.n_links] = self.network.link_costs(np.zeros(cs.n_links))
        for c, cls in enumerate(cs.classes):
            g[cs.flows_of(c)] = cls.pce * cs.toll_costs[c]
        return [[(b.extreme_point(g[ix]), 1.0)] for b, ix in zip(self.blocks,
                                                                  self.block_indices)]

    def trees_of_flows(self, points: Any) -> TreesOfFlows:
        """Block starts given as flows (one vector per block over its coordinates, the
        volumes then the class's flows, as ``extra["block_iterates"]`` rows; anything
        ``np.asarray`` makes one of) as trees and weights: each block's active set.

        As :meth:`.AssignmentBlocks.trees_of_flows`, whose reason holds here too (a
        block kept its flows as one pseudo-atom, which its pairwise steps could only
        shrink as a whole).  A block's class flows split into trees of its class's
        graph (its banned links left out) and demand; the atoms are the block's own
        (:meth:`ClassOriginFlows.atom`: the volumes ``pce`` times the tree's loads).
        The start is then the flows up to rounding (circulations cancelled).  A block
        whose point is not a flow of its class's demand with volumes ``pce`` times it
        (within the feasibility tolerance), or whose flows do not split into trees of
        its class's graph (demand routed over a banned link), stays as given.
        """
        cs = self.class_set
        m = cs.n_links
        in_links = [_in_links(self.network, banned) for banned in cs.banned]
        tail = cs.aons[0].graph.tail  # the network's: every class's graph has it
        work = _split_work(self.network.n_nodes)
        out = TreesOfFlows()
        for b, p in zip(self.blocks, points):
            z = np.asarray(p, dtype=float).reshape(-1)
            trees = None
            if z.shape == b.shape and np.all(np.isfinite(z)) and \
                    b.violation(z) <= FEASIBILITY_TOL:
                in_ptr, in_link = in_links[b.c]
                trees = _split_flows(b.tree_block, z[m:], in_ptr, in_link, tail, work)
            out.append(p if trees is None else [(b.atom(k), w) for k, w in trees])
        return out

    def extreme_point(self, direction: np.ndarray) -> Atom:
        return self._whole.extreme_point(direction)

    def violation(self, x: np.ndarray) -> float:
        return self._whole.violation(x)

    def _repr_params(self) -> dict[str, Any]:
        return {"network": self.network.name or f"{self.network.n_links} links",
                "classes": [c.name for c in self.class_set.classes], "blocks": self.n_blocks}

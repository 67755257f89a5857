"""Warm starts of traffic's BCFW from per-block flows (``extra["block_iterates"]``).

Started from one flow vector per origin (or per class and origin), a block used to keep
that vector as one pseudo-atom of its active set: a mixture of trees that pairwise steps
can only shrink as a whole, so a warm start took many times the passes of a cold one
(the figures are in the CHANGELOG).  The flows now split into trees and weights
(:meth:`AssignmentBlocks.trees_of_flows`, :meth:`MulticlassBlocks.trees_of_flows`; a
class's trees avoid its banned links).
"""

from __future__ import annotations

import numpy as np
import pytest
from traffic_networks import grid_network

import frankwolfe as fw
from frankwolfe.applications.traffic import (
    AssignmentBlocks,
    DemandClass,
    load_siouxfalls,
    relative_gap,
    split_demand,
    traffic_assignment,
)
from frankwolfe.applications.traffic.classes import ClassSet
from frankwolfe.applications.traffic.multiclass import MulticlassBlocks
from frankwolfe.applications.traffic.solve import _bcfw_start
from frankwolfe.errors import InfeasibleError


def _run(net, **options):
    with fw.debug(False):
        return traffic_assignment(net, "bcfw", **options)


def _start_point(active_set, m):
    z = np.zeros(m)
    for atom, w in active_set:
        z[atom.indices] += w * atom.values
    return z


def test_warm_start_from_block_iterates_needs_fewer_passes_than_cold(shared_data):
    """The docs' example: 1e-6, then 1e-8 from its block iterates (sparse, and as a list
    of dense rows); capped at the cold run's passes, so that a slow warm start fails
    fast (the figures are in the CHANGELOG)."""
    net, _ = load_siouxfalls(shared_data)
    warm_total = cold_total = 0
    for seed in range(3):
        first = _run(net, rel_gap=1e-6, random_state=seed)
        cold = _run(net, rel_gap=1e-8, random_state=seed)
        assert cold.success, cold.message
        pts = first.extra["block_iterates"]
        for x0 in (pts, list(pts.toarray())):
            warm = _run(net, rel_gap=1e-8, random_state=seed, x0=x0, max_iter=cold.nit)
            assert warm.success, (seed, warm.message)
            assert relative_gap(net, warm.x) <= 1e-8 * (1 + 1e-6)
        warm_total += warm.nit
        cold_total += cold.nit
    assert warm_total < 0.8 * cold_total, (warm_total, cold_total)


@pytest.mark.parametrize("by", ["origin", "od"])
def test_flows_split_into_the_blocks_trees_and_weights(by):
    net = grid_network(5, 5, 6, seed=3)
    res = _run(net, rel_gap=1e-6, random_state=0, blocks=by, max_iter=2000)
    dom = AssignmentBlocks(net, by=by)
    flows = res.extra["block_iterates"].toarray()
    starts = dom.trees_of_flows(list(flows))
    kind = "tree" if by == "origin" else "path"
    for block, z, start in zip(dom.blocks, flows, starts):
        assert isinstance(start, list) and start
        w = np.array([wa for _, wa in start])
        assert w.min() > 0 and w.sum() == pytest.approx(1.0, abs=1e-12)
        for atom, _ in start:
            assert atom.key[0] == kind
            # the block's own vertex: its demand loaded on the atom's links
            np.testing.assert_array_equal(atom.values, block.atom(atom.key).values)
        np.testing.assert_allclose(_start_point(start, net.n_links), z, rtol=0,
                                   atol=1e-12 * z.max())
    # at most one tree per link the flows use
    assert sum(len(s) for s in starts) <= np.count_nonzero(flows)


def test_circulations_are_cancelled_and_bad_flows_stay_as_given():
    net = grid_network(4, 4, 5, seed=2)
    res = _run(net, rel_gap=1e-6, random_state=0, max_iter=2000)
    dom = AssignmentBlocks(net)
    flows = res.extra["block_iterates"].toarray()
    block = dom.blocks[0]
    # a circulation on a destination's incoming link (not from the origin, where the way
    # back would end) and its reverse, larger than any flow of the block: the way back
    # from the destination runs into it
    d = int(np.flatnonzero(block.demand)[0])
    a = int(np.flatnonzero((net.term_node == d) & (net.init_node != block.origin))[0])
    back = int(np.flatnonzero((net.init_node == d) & (net.term_node == net.init_node[a]))[0])
    looped = flows[0].copy()
    looped[[a, back]] += 10 * block.demand.sum()
    assert block.violation(looped) < 1e-12
    start = dom.trees_of_flows([looped] + list(flows[1:]))[0]
    assert isinstance(start, list)
    z = _start_point(start, net.n_links)
    assert block.violation(z) < 1e-12
    np.testing.assert_allclose(z, flows[0], rtol=0, atol=1e-9 * flows[0].max())
    # flows that are not the block's (half its demand): kept as given, and refused as
    # before by the solver's feasibility check
    half = dom.trees_of_flows([0.5 * flows[0]] + list(flows[1:]))
    assert isinstance(half[0], np.ndarray) and isinstance(half[1], list)
    with pytest.raises(InfeasibleError, match="x0: block 0"):
        _run(net, rel_gap=1e-6, random_state=0, x0=[0.5 * flows[0]] + list(flows[1:]))


def _car_and_truck_grid():
    """A grid whose trucks may not use three links that some cars' flows take (the links
    between nodes 2, 7 and 12); the classes' demands are shares of one matrix."""
    net = grid_network(5, 5, 6, seed=3)
    banned = np.flatnonzero(((net.init_node == 2) & (net.term_node == 7))
                            | ((net.init_node == 7) & (net.term_node == 12))
                            | ((net.init_node == 12) & (net.term_node == 7)))
    parts = split_demand(net.demand, {"car": 0.8, "truck": 0.2})
    classes = [DemandClass("car", parts["car"]),
               DemandClass("truck", parts["truck"], pce=2.5, vot=2.0, banned_links=banned)]
    return net, classes, banned


def test_multiclass_flows_split_into_the_blocks_trees_and_weights():
    """Each (class, origin) block's flows, volumes then class flows, split into trees of
    its class's graph whose atoms are the block's own (its keys, its pce on the volumes);
    the split rebuilds the flows, and ``_bcfw_start`` takes it for a flow start."""
    net, classes, banned = _car_and_truck_grid()
    m = net.n_links
    res = _run(net, rel_gap=1e-6, random_state=0, max_iter=2000, classes=classes)
    assert res.success, res.message
    dom = MulticlassBlocks(ClassSet(net, classes))
    flows = res.extra["block_iterates"].toarray()
    assert flows.shape == (dom.n_blocks, 2 * m)
    starts = dom.trees_of_flows(list(flows))
    for block, z, start in zip(dom.blocks, flows, starts):
        assert isinstance(start, list) and start
        w = np.array([wa for _, wa in start])
        assert w.min() > 0 and w.sum() == pytest.approx(1.0, abs=1e-12)
        z_start = np.zeros(2 * m)
        for atom, wa in start:
            links = np.asarray(atom.indices)[: atom.indices.size // 2]
            assert atom.key == block.tree_block.key(links) == ("tree", block.origin,
                                                               links.tobytes())
            own = block.atom(atom.key)
            np.testing.assert_array_equal(atom.indices, own.indices)
            np.testing.assert_array_equal(atom.values, own.values)
            if block.c == 1:
                assert not np.isin(links, banned).any()
            z_start[atom.indices] += wa * atom.values
        np.testing.assert_allclose(z_start, z, rtol=0, atol=1e-12 * z.max())
    # the solver's start from flows is the split
    started = _bcfw_start(dom, res.extra["block_iterates"])
    assert [[(a.key, wa) for a, wa in s] for s in started] == \
        [[(a.key, wa) for a, wa in s] for s in starts]


def test_multiclass_flows_over_a_banned_link_stay_as_given():
    """A truck block given a flow of its demand that takes a link trucks may not use does
    not split (a tree over that link is none of the block's); the other blocks do."""
    net, classes, banned = _car_and_truck_grid()
    m = net.n_links
    res = _run(net, rel_gap=1e-6, random_state=0, max_iter=2000, classes=classes)
    dom = MulticlassBlocks(ClassSet(net, classes))
    flows = res.extra["block_iterates"].toarray()
    car = next(i for i, b in enumerate(dom.blocks)
               if b.c == 0 and flows[i, m + banned].max() > 1.0)
    truck = next(i for i, b in enumerate(dom.blocks)
                 if b.c == 1 and b.origin == dom.blocks[car].origin)
    # the car block's routes, scaled to the truck demand of the same origin
    y = flows[car, m:] * (0.2 / 0.8)
    given = np.concatenate([2.5 * y, y])
    assert dom.blocks[truck].violation(given) < 1e-12
    starts = dom.trees_of_flows([given if i == truck else z for i, z in enumerate(flows)])
    assert starts[truck] is given
    assert all(isinstance(s, list) for i, s in enumerate(starts) if i != truck)


def _siouxfalls_classes(net):
    """docs/traffic.md's cars and trucks: tolls on four links, three banned to trucks."""
    parts = split_demand(net.demand, {"car": 0.9, "truck": 0.1})
    tolls = np.zeros(net.n_links)
    tolls[[24, 25, 27, 42]] = 2.0
    return [DemandClass("car", parts["car"], vot=1.0, tolls=tolls),
            DemandClass("truck", parts["truck"], pce=2.5, vot=2.0, tolls=tolls,
                        toll_factor=3.0, banned_links=[26, 29, 35])]


def test_multiclass_warm_start_from_block_iterates_needs_fewer_passes_than_cold(shared_data):
    """docs/traffic.md's two classes: 1e-6, then 1e-8 from its block iterates, capped at
    the cold run's passes so that a slow warm start fails fast (the figures are in the
    CHANGELOG)."""
    net, _ = load_siouxfalls(shared_data)
    classes = _siouxfalls_classes(net)
    warm_total = cold_total = 0
    for seed in range(3):
        first = _run(net, rel_gap=1e-6, random_state=seed, classes=classes)
        cold = _run(net, rel_gap=1e-8, random_state=seed, classes=classes)
        assert cold.success, cold.message
        warm = _run(net, rel_gap=1e-8, random_state=seed, classes=classes,
                    x0=first.extra["block_iterates"], max_iter=cold.nit)
        assert warm.success, (seed, warm.message)
        assert warm.extra["relative_gap"] <= 1e-8
        warm_total += warm.nit
        cold_total += cold.nit
    assert warm_total < 0.8 * cold_total, (warm_total, cold_total)

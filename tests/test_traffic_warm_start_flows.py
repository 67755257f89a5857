"""Warm starts of traffic's BCFW from per-block flows (``extra["block_iterates"]``).

Started from one flow vector per origin, a block used to keep that vector as one
pseudo-atom of its active set: a mixture of trees that pairwise steps can only shrink as
a whole.  From a 1e-6 solution of SiouxFalls it kept ~99% of every block's weight to the
end, and 1e-8 took 3,240-9,660 passes against 290-465 from a cold start.  The flows now
split into trees and weights (:meth:`AssignmentBlocks.trees_of_flows`).
"""

from __future__ import annotations

import numpy as np
import pytest
from traffic_networks import grid_network

import frankwolfe as fw
from frankwolfe.applications.traffic import (
    AssignmentBlocks,
    load_siouxfalls,
    relative_gap,
    traffic_assignment,
)
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

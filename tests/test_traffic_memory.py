"""What traffic's BCFW keeps per origin: block iterates stored sparsely, and no per-block
arrays of the node or link length (the blocks share their scratch).

A dense row per origin costs ``8 n_links`` bytes: on a 40,000-link grid 1.2 GB for
4,000 origins, though a block point loads at most the links of its few trees.  These
tests check the types, sizes and object identities (no timings, no memory readings).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from traffic_networks import grid_network

import frankwolfe as fw
from frankwolfe.applications.traffic import (
    AssignmentBlocks,
    DemandClass,
    Network,
    traffic_assignment,
)
from frankwolfe.applications.traffic.classes import ClassSet
from frankwolfe.applications.traffic.multiclass import MulticlassBlocks


def _run(net: Network, **options):
    with fw.debug(False):
        return traffic_assignment(net, "bcfw", random_state=0, **options)


@pytest.mark.parametrize("compiled", [True, False])
def test_block_iterates_are_a_sparse_array_of_the_trees_links(compiled):
    net = grid_network(7, 7, 10, seed=1)
    res = _run(net, rel_gap=1e-8, max_iter=500, compiled=compiled)
    assert res.extra["engine"] == ("compiled" if compiled else "python")
    pts = res.extra["block_iterates"]
    n = AssignmentBlocks(net).n_blocks
    assert isinstance(pts, sparse.csr_array)
    assert pts.shape == (n, net.n_links)
    # a row stores the links of its block's trees (compiled: those of its active set;
    # the Python steps' rows also keep the rounding residue of dropped trees)
    sets = res.extra["active_sets"]
    for i in range(n):
        row = pts[[i]]
        assert np.all(row.data != 0.0)
        if compiled:
            links: set[int] = set()
            for key, _ in sets[i]:
                links |= set(np.frombuffer(key[-1], dtype=np.int64).tolist())
            assert set(row.indices.tolist()) == links
    assert pts.nnz < n * net.n_links
    # the rows add up to the link flows, and each is a flow of its origin's demand
    np.testing.assert_allclose(np.asarray(pts.sum(axis=0)).ravel(), res.x,
                               rtol=1e-12, atol=1e-9 * np.abs(res.x).max())
    for block, z in zip(AssignmentBlocks(net).blocks, pts.toarray()):
        assert block.violation(z) < 1e-12


def test_od_blocks_report_sparse_block_iterates():
    net = grid_network(3, 3, 4, seed=2)
    res = _run(net, rel_gap=1e-8, max_iter=500, blocks="od")
    pts = res.extra["block_iterates"]
    assert isinstance(pts, sparse.csr_array)
    assert pts.shape == (AssignmentBlocks(net, by="od").n_blocks, net.n_links)
    np.testing.assert_allclose(np.asarray(pts.sum(axis=0)).ravel(), res.x, rtol=1e-12,
                               atol=1e-9 * np.abs(res.x).max())


def test_warm_starts_from_sparse_block_iterates_dense_rows_and_sparse_rows():
    net = grid_network(5, 5, 8, seed=4)
    cold = _run(net, rel_gap=1e-10, max_iter=2000, compiled=True)
    assert cold.extra["relative_gap"] <= 1e-10
    pts = cold.extra["block_iterates"]
    starts = {"sparse": pts, "sparse rows": [pts[[i]] for i in range(pts.shape[0])],
              "dense rows": list(pts.toarray())}
    runs = {name: _run(net, rel_gap=1e-10, max_iter=2000, x0=x0)
            for name, x0 in starts.items()}
    for name, res in runs.items():
        assert res.extra["relative_gap"] <= 1e-10, name
        assert res.nit < cold.nit, name
        # the same start point, whatever its form: the same run
        np.testing.assert_array_equal(res.x, runs["dense rows"].x)
        assert res.nit == runs["dense rows"].nit
    with pytest.raises(fw.ShapeError):
        _run(net, rel_gap=1e-10, max_iter=5, x0=pts[:-1])
    with pytest.raises(fw.ShapeError):
        _run(net, rel_gap=1e-10, max_iter=5, x0=sparse.csr_array(pts[:, :-1]))


@pytest.mark.parametrize("by", ["origin", "od"])
def test_blocks_share_their_scratch_and_keep_no_node_or_link_arrays(by):
    net = grid_network(5, 5, 4, seed=4)
    dom = AssignmentBlocks(net, by=by)
    scratch = dom.blocks[0]._scratch
    assert scratch.supply.shape == (net.n_nodes,)
    for b in dom.blocks:
        assert b._scratch is scratch
        # a block's own arrays are its demand row (one entry per zone)
        own = [v for v in vars(b).values() if isinstance(v, np.ndarray)]
        assert all(a.size <= net.n_zones for a in own), [a.size for a in own]
    # the shared supply still checks each block's own flows
    costs = net.link_costs(np.zeros(net.n_links))
    for b in dom.blocks:
        links, flows, _ = b.tree(costs)
        z = np.zeros(net.n_links)
        z[links] = flows
        assert b.violation(z) < 1e-12
        assert b.violation(0.5 * z) > 0.1


def test_multiclass_blocks_share_their_scratch():
    net = grid_network(4, 4, 4, seed=5)
    cs = ClassSet(net, [DemandClass("car", net.demand), DemandClass("truck", 0.2 * net.demand,
                                                                    pce=2.5)])
    dom = MulticlassBlocks(cs)
    scratch = dom.blocks[0].tree_block._scratch
    assert all(b.tree_block._scratch is scratch for b in dom.blocks)
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", rel_gap=1e-6, max_iter=500, random_state=0,
                                 classes=cs.classes)
    pts = res.extra["block_iterates"]
    assert isinstance(pts, sparse.csr_array)
    assert pts.shape == (dom.n_blocks, 2 * net.n_links)

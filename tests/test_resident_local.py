"""A resident shard's local rounds (``round_step="local"``) without a cluster: the calls
of :class:`~frankwolfe.algorithms.bcfw.resident.ResidentShard` on a chain piece in this
process, checked against numpy's sums of the piece's block iterates."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.bcfw.resident import ResidentShard
from frankwolfe.applications.structured_svm import ChainModel, ConllLike, SSVMDual
from frankwolfe.step_size import ExactStep


def _shard(n=30, start=0, stop=18):
    corpus = ConllLike(n, random_state=2)
    dom = SSVMDual.from_source(ChainModel(corpus.n_states, corpus.feature_sizes), corpus,
                               1.0 / n, resident=True)
    f = dom.dual_objective()
    okern = f.compiled_block_objective()
    shard = ResidentShard(dom.resident_blocks().shard(range(start, stop)))
    size = okern.hessian_diag.size
    zero = np.zeros(size)
    shard.follow(zero)
    shard.resident(("start", okern.hessian_diag, (okern, ExactStep(), n, 1.0)), None, zero)
    g = np.array(f.gradient(zero), dtype=float)
    shard.follow(g)
    return shard, g, size


def _held(shard, size):
    """The piece's sum of its block iterates, dense (numpy's, from the iterates)."""
    coords, vals = shard.piece.total(size)
    out = np.zeros(size)
    out[coords] = vals
    return out


def test_a_local_call_asked_again_is_undone_first_and_the_step_blends_the_iterates():
    shard, g, size = _shard()
    order = np.array([5, 1, 17, 0, 9, 3], dtype=np.int64)
    before = _held(shard, size)
    c1, v1 = shard.resident(("local", 1, {}, 0), order, g)
    moved = _held(shard, size)
    assert c1.size > 0
    # the answer is the sum of the blocks' moves
    np.testing.assert_allclose(moved[c1] - before[c1], v1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.delete(moved - before, c1), 0.0, rtol=0, atol=1e-15)
    # asked again (a fault elsewhere in the round): the first steps are undone, the same
    # steps taken again from the same blocks
    c2, v2 = shard.resident(("local", 1, {}, 0), order, g)
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_allclose(v1, v2, rtol=0, atol=1e-15)
    # the core's step size for round 1 arrives with the next call: z = z0 + 0.3 (z' - z0)
    shard.resident(("gaps", {1: 0.3}, False), None, g)
    np.testing.assert_allclose(_held(shard, size), before + 0.3 * (moved - before), rtol=0,
                               atol=1e-13)
    # and every block iterate is still a point of its block: marginals are distributions
    mu = shard.piece._iterates()[0]
    assert mu.min() >= -1e-15
    np.testing.assert_allclose(mu.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_a_round_the_core_never_took_is_undone():
    shard, g, size = _shard()
    before = _held(shard, size)
    shard.resident(("local", 1, {}, 0), np.arange(18, dtype=np.int64), g)
    shard.resident(("gaps", {}, False), None, g)  # round 1 not among the steps: undone
    np.testing.assert_allclose(_held(shard, size), before, rtol=0, atol=0)


def test_local_rounds_need_the_kernels_at_the_start_and_resident_blocks():
    shard, g, size = _shard()
    shard.resident(("start", np.zeros(size), None), None, g)
    with pytest.raises(ValueError, match="local round needs the objective's kernels"):
        shard.resident(("local", 1, {}, 0), np.arange(3, dtype=np.int64), g)
    X, Y = ConllLike(8, random_state=0).examples(0, 8)
    corpus = ConllLike(8, random_state=0)
    dom = SSVMDual(ChainModel(corpus.n_states, corpus.feature_sizes), X, Y, 1.0 / 8)
    with pytest.raises(ValueError, match="round_step='local' runs on blocks kept on the "
                                         "workers"):
        fw.block_coordinate_frank_wolfe(dom.dual_objective(), dom, batch_size=4, n_jobs=2,
                                        round_step="local")

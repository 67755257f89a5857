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


def test_a_shards_certificate_by_the_driver_is_its_pieces_and_gives_every_block_gap():
    """With shared arrays a shard certifies through the pass driver (which also writes
    each block's gap for gap sampling); its sums are those of the piece's own certificate
    kernels at the same point, and each block gap is that block's alone (the sum)."""
    from frankwolfe.algorithms.bcfw.resident import LocalSteps
    from frankwolfe.parallel.shared_arrays import SharedArrays

    shard, g, size = _shard()
    shard.resident(("local", 1, {}, 0), np.arange(18, dtype=np.int64), g)
    shard.resident(("gaps", {1: 1.0}, False), None, g)  # moved blocks: nonzero gaps
    piece = shard.piece
    want = piece.gaps(g)
    shared = SharedArrays({"g": ((size,), np.float64), "x": ((size,), np.float64),
                           **piece.shared_fields()})
    arrays = shared.arrays
    piece.share({name: arrays[name] for name in piece.shared_fields()})
    okern = shard._spec[0]
    steps = LocalSteps(piece.compiled_blocks(), okern, ExactStep(), 30, piece.size,
                       shared=arrays["g"])
    arrays["g"][:] = g
    piece.follow(arrays["g"], None)
    total, scores = steps.certify(arrays["g"])
    np.testing.assert_allclose([total, scores], want, rtol=1e-12, atol=1e-15)
    assert steps.est.shape == (18,) and steps.est.min() >= 0.0 and steps.est.max() > 0.0
    np.testing.assert_allclose(steps.est.sum(), total, rtol=1e-12, atol=1e-15)
    shared.close()


def test_an_empty_point_needs_the_shared_arrays():
    """An empty point stands for the shared gradient: a shard started without shared
    arrays refuses it (its kernels would read past an empty vector), whatever the call."""
    shard, g, size = _shard()
    for call in [("sync",), ("total",), ("gaps", {}, False), ("lock_free", 0)]:
        with pytest.raises(ValueError, match="started without shared arrays"):
            shard.resident(call, np.arange(3, dtype=np.int64), np.zeros(0))
    with pytest.raises(ValueError, match="needs the shared arrays at the start"):
        shard.resident(("lock_free", 0), np.arange(3, dtype=np.int64), g)

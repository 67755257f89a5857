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


class _MixedRows:
    """An example source whose first half has sparse token rows (a quarter of the
    features on) and whose second half has dense ones: the chain's pieces lay them out
    differently (sparse rows keep a feature-major copy of the gradient, dense rows do
    not)."""

    def __init__(self, n):
        from frankwolfe.applications.structured_svm import make_chain

        self.X, self.Y = make_chain(n, n_states=3, n_features=8, random_state=4)
        rng = np.random.default_rng(5)
        for i, x in enumerate(self.X):
            x[:] = np.abs(x) + 0.5  # every feature on
            if i < n // 2:
                x *= rng.random(x.shape) < 0.25  # a quarter on

    def __len__(self):
        return len(self.X)

    def examples(self, start, stop):
        return self.X[start:stop], self.Y[start:stop]


def test_pieces_of_mixed_row_layouts_share_one_gradient_and_certify_exactly():
    """Lock-free steps of two shards in one process over shared arrays, one with sparse
    rows (which keeps the shared feature-major copy) and one with dense rows (which
    does not): after their passes, x is the sum of their block iterates and the
    certificate they give at a fresh gradient is the one this process's own LMO gives
    at x (an independent computation)."""
    from frankwolfe.parallel.shared_arrays import SharedArrays

    n = 16
    source = _MixedRows(n)
    model = ChainModel(3, 8)
    dom = SSVMDual.from_source(model, source, 1.0 / n, resident=True)
    here = SSVMDual.from_source(model, source, 1.0 / n)
    f = here.dual_objective()
    okern = f.compiled_block_objective()
    blocks = dom.resident_blocks()
    d = okern.hessian_diag.size
    shared = SharedArrays({"g": ((d,), np.float64), "x": ((d,), np.float64),
                           "held": ((d,), np.float64), **blocks.shared_fields()})
    a = shared.arrays
    start = ("start", okern.hessian_diag, None, (shared.spec(), okern, ExactStep(), n))
    shards = [ResidentShard(blocks.shard(range(0, 8))), ResidentShard(blocks.shard(range(8, 16)))]
    empty = np.zeros(0)
    for sh in shards:
        coords, vals = sh.resident(start, None, empty)
        a["x"][coords] += vals
    layouts = [sh.piece._parts()["state"].gT.size for sh in shards]
    assert layouts[0] == 3 * 8 and layouts[1] == 0  # sparse keeps the copy, dense not

    def fresh_gradient():
        a["g"][:] = f.gradient(a["x"])
        for sh in shards:
            sh.resident(("sync",), None, empty)

    rng = np.random.default_rng(0)
    for p in range(3):
        fresh_gradient()
        for sh in shards:  # each one's pass moves the shared g, the other reads it
            sh.resident(("lock_free", p * n), rng.permutation(8), empty)
    fresh_gradient()
    a["held"][:] = 0.0
    answers = [sh.resident(("gaps", {}, True), None, empty) for sh in shards]
    np.testing.assert_allclose(a["held"], a["x"], rtol=0, atol=1e-13)
    gap = float(a["g"] @ a["x"]) - sum(ans[1] for ans in answers)
    g = np.asarray(f.gradient(a["x"]), dtype=float)
    want = float(g @ a["x"]) - here.extreme_point(g).dot(g)
    assert want > 1e-6  # a point short of the optimum: the check is not 0 = 0
    np.testing.assert_allclose(gap, want, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(sum(ans[0] for ans in answers), want, rtol=1e-9, atol=1e-15)
    shared.close()

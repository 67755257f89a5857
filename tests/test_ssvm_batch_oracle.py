"""The SSVM dual's batch block oracle (chain models): the same atoms as the blocks asked
one by one, hence the same mini-batch iterates, serial or on threads; and the compiled
rounds (the chain kernels' round kernels) take the Python rounds' block steps."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from test_bcfw_fused import _chain  # 25 chains, dense features or attribute ids

from frankwolfe import block_coordinate_frank_wolfe, debug
from frankwolfe.applications.structured_svm import ChainModel
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.errors import OracleError


class _Counted(SSVMDual):
    """Counts the examples its batch oracle answers."""

    asked = 0

    def batch_block_oracle(self):
        inner = super().batch_block_oracle()

        def oracle(which, gradient):
            type(self).asked += len(which)
            return inner(which, gradient)

        return oracle


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("gl", [-1.0, -0.3, 0.0])
def test_batch_oracle_atoms_equal_the_blocks_atoms(ids, gl):
    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    oracle = dom.batch_block_oracle()
    g = np.random.default_rng(0).normal(size=dom.dim)
    g[-1] = gl
    which = [7, 0, 24, 3, 3]
    atoms = oracle(which, g)
    assert len(atoms) == len(which)
    for i, a in zip(which, atoms):
        ref = dom.blocks[i](g[dom.block_indices[i]])
        assert a.key == ref.key and a.shape == ref.shape
        np.testing.assert_array_equal(a.indices, ref.indices)
        np.testing.assert_array_equal(a.values, ref.values)
    g[-1] = 0.5
    with pytest.raises(OracleError, match="l-component"):
        oracle([0], g)


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("found_first", [False, True])
def test_shards_answer_the_whole_oracles_atoms_and_rows_need_no_supports(ids, found_first):
    """A shard (what a cluster worker holds) answers its blocks as the blocks themselves
    do, whether the supports were found before the cut (sliced) or by the shard; the
    rows of compiled rounds never find them (they took more memory than the data)."""
    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    oracle = dom.batch_block_oracle()
    g = np.random.default_rng(1).normal(size=dom.dim)
    g[-1] = -1.0
    oracle.rows([0, 5, 9], g)
    assert oracle._active is None
    if found_first:
        oracle([0], g)
    piece = oracle.shard(range(10, 20))
    assert (piece._active is None) != found_first
    for k, a in enumerate(piece(list(range(10)), g)):
        ref = dom.blocks[10 + k](g[dom.block_indices[10 + k]])
        assert a.key == ref.key and a.shape == ref.shape
        np.testing.assert_array_equal(a.indices, ref.indices)
        np.testing.assert_array_equal(a.values, ref.values)


def test_source_backed_pieces_pickle_as_their_range_and_answer_as_the_examples():
    """A dual built from an example source cuts pieces that pickle as (source, range), a
    few kilobytes, and are rebuilt from the source where unpickled: the same rows and
    atoms as the piece cut from the examples in memory."""
    import pickle

    from frankwolfe.applications.structured_svm import ConllLike

    corpus = ConllLike(90, random_state=4)
    model = ChainModel(corpus.n_states, corpus.feature_sizes)
    dom = SSVMDual.from_source(model, corpus, 0.05)
    plain = SSVMDual(model, *corpus.examples(0, 90), 0.05).batch_block_oracle()
    piece = dom.batch_block_oracle().shard(range(30, 70)).shard(range(5, 25))  # 35 .. 54
    blob = pickle.dumps(piece)
    assert len(blob) < 20_000 < len(pickle.dumps(plain.shard(range(35, 55))))
    rebuilt = pickle.loads(blob)
    assert rebuilt.data.n == 20 and (rebuilt.n, rebuilt.scale) == (plain.n, plain.scale)
    g = np.random.default_rng(2).normal(size=dom.dim) * 1e-2
    g[-1] = -1.0
    ref = plain.shard(range(35, 55))
    for a, b in zip(rebuilt.rows(range(20), g), ref.rows(range(20), g)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(rebuilt([0, 7, 19], g), ref([0, 7, 19], g)):
        assert a.key == b.key
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.values, b.values)
    with pytest.raises(TypeError, match="`source` needs __len__ and examples"):
        SSVMDual.from_source(model, [1, 2], 0.05)


@pytest.mark.parametrize("ids, wide", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("gl", [-1.0, -0.3, 0.0])
def test_batch_oracle_values_are_the_atoms_inner_products(ids, wide, gl):
    # wide: 300 ids per template, so that a few examples read far fewer ids than the
    # weights hold and the batch decodes from the label-major weights (else
    # feature-major): the atoms must equal the blocks' either way
    model, X, Y = _chain(ids)
    if wide:
        model = ChainModel(4, [300, 300, 300])
    dom = SSVMDual(model, X, Y, 0.05)
    oracle = dom.batch_block_oracle()
    g = np.random.default_rng(1).normal(size=dom.dim)
    g[-1] = gl
    for which in ([7, 0, 24, 3, 3], list(range(25))):
        vals = oracle.values(which, g)
        atoms = oracle(which, g)
        assert vals.shape == (len(which),)
        for i, a, v in zip(which, atoms, vals):
            gi = g[dom.block_indices[i]]
            ref = dom.blocks[i](gi)
            np.testing.assert_array_equal(a.indices, ref.indices)
            np.testing.assert_array_equal(a.values, ref.values)
            # another order of summation: equal up to rounding, on both sides
            assert abs(v - ref.dot(gi)) <= 1e-12 * (1.0 + np.abs(ref.values).sum()
                                                    * np.abs(gi).max())
    assert oracle.values([], g).shape == (0,)


def test_closing_certificate_from_values_is_the_primal_dual_gap(monkeypatch):
    # the pairwise solver's last certificate asks the batch oracle's values alone (no
    # atoms: none joins the cache when the run ends); its gap must still be the SSVM's
    # primal minus dual, computed independently from the primal objective
    from frankwolfe.applications.structured_svm import StructuredSVM

    model, X, Y = _chain(True)
    calls = {"values": 0}
    orig = SSVMDual.batch_block_oracle

    def counted(self):
        inner = orig(self)
        if inner is None:
            return None
        values = inner.values

        def count(which, g):
            calls["values"] += 1
            return values(which, g)

        inner.values = count
        return inner

    monkeypatch.setattr(SSVMDual, "batch_block_oracle", counted)
    svm = StructuredSVM(model, lam=0.05, solver="bcfw_pairwise", max_passes=3,
                        gap_every=10, random_state=0).fit(X, Y)
    assert calls["values"] >= 1
    gap = svm.result_.gap
    ref = svm.history_["primal"][-1] - svm.history_["dual"][-1]
    assert np.isfinite(gap) and gap > 0
    assert abs(gap - ref) <= 1e-9 * (1.0 + abs(svm.history_["primal"][-1]))


def test_batch_oracle_only_for_the_compiled_chain_model():
    model, X, Y = _chain(True)
    assert SSVMDual(model, X, Y, 0.1, compiled=False).batch_block_oracle() is None

    class Other(ChainModel):  # overrides a decoder: the kernels do not reproduce it
        def decode(self, x, w):
            return super().decode(x, w)

    assert SSVMDual(Other(4, [5, 5, 5]), X, Y, 0.1).batch_block_oracle() is None


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_mini_batch_iterates_with_and_without_the_batch_oracle(ids, sampling):
    model, X, Y = _chain(ids)
    lam = 0.05
    # the Python rounds (the compiled engine takes the round kernels, not this hook)
    kw = dict(batch_size=8, block_order=sampling, max_iter=4, tol=0.0, gap_every=2,
              random_state=2, compiled=False)
    runs = {}
    for name, dom, n_jobs in (("blocks", SSVMDual(model, X, Y, lam, compiled=False), 1),
                              ("serial", _Counted(model, X, Y, lam), 1),
                              ("threads", _Counted(model, X, Y, lam), 2)):
        _Counted.asked = 0
        f = dom.dual_objective()
        runs[name] = block_coordinate_frank_wolfe(f, dom, n_jobs=n_jobs, **kw)
        # every oracle of the rounds and of the certificates went through the batch oracle
        assert _Counted.asked == (0 if name == "blocks" else runs[name].n_oracle_calls)
    ref = runs["blocks"]
    assert ref.n_oracle_calls >= 4 * len(X)
    for name in ("serial", "threads"):
        np.testing.assert_array_equal(runs[name].x, ref.x)
        np.testing.assert_array_equal(runs[name].history["gap"], ref.history["gap"])
        assert runs[name].extra["rounds"] == ref.extra["rounds"]


@functools.cache
def serial_optimum(ids):
    """``(fun, gap)`` of a long serial BCFW run on ``_chain(ids)``'s dual at lam=0.05:
    the certified optimum the rounds' tests compare with, one run per ``ids`` and
    worker (not again for each parametrization)."""
    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    serial = block_coordinate_frank_wolfe(dom.dual_objective(), dom, max_iter=200, tol=1e-10,
                                          random_state=0)
    return float(serial.fun), float(serial.gap)


def three_engines(f, dom, **kw):
    """One run's keywords on the Python rounds, the compiled rounds and the compiled
    rounds on 2 threads (the compiled engine does not run in debug mode)."""
    python = block_coordinate_frank_wolfe(f, dom, compiled=False, **kw)
    with debug(False):
        compiled = block_coordinate_frank_wolfe(f, dom, compiled=True, **kw)
        threads = block_coordinate_frank_wolfe(f, dom, n_jobs=2, **kw)
    assert python.extra["engine"] == "python"
    assert compiled.extra["engine"] == threads.extra["engine"] == "compiled"
    return python, compiled, threads


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("tau", [4, 16])
@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_compiled_rounds_take_the_python_rounds_steps(ids, tau, sampling):
    """The compiled step phase (the core's driver at the stored vertices) against the
    Python one (the engine's step() per block at the batch oracle's atoms): the same
    picks and vertices, so the same iterates up to rounding; threads change nothing."""
    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    f = dom.dual_objective()
    kw = dict(batch_size=tau, block_order=sampling, max_iter=5, tol=0.0, gap_every=2,
              random_state=4)
    python, compiled, threads = three_engines(f, dom, **kw)
    for res in (compiled, threads):
        assert res.extra["rounds"] == python.extra["rounds"] == 5 * -(-len(X) // tau)
        assert res.n_oracle_calls == python.n_oracle_calls
        np.testing.assert_allclose(res.x, python.x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.history["gap"], python.history["gap"], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(res.extra["block_gaps"], python.extra["block_gaps"],
                                   rtol=0, atol=1e-12)
    np.testing.assert_array_equal(threads.x, compiled.x)
    # the gaps are certified: the rounds reach the optimum the serial run certifies
    f_star, serial_gap = serial_optimum(ids)
    assert -serial_gap - 1e-9 <= compiled.fun - f_star <= compiled.gap + 1e-9


@pytest.mark.parametrize("ids", [False, True])
def test_generic_compiled_rounds_take_the_python_rounds_steps(ids):
    """Compiled rounds on the generic driver (an objective without the fused kernels: the
    stored vertices' directions materialized by ``recall``, the certificates by
    ``recall_gap``) against the Python rounds."""
    from test_bcfw_fused import _NotIsotropic

    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    kw = dict(batch_size=8, block_order="gap", max_iter=4, tol=0.0, gap_every=2,
              random_state=4)
    python = block_coordinate_frank_wolfe(dom.dual_objective(), dom, compiled=False, **kw)
    with debug(False):
        generic = block_coordinate_frank_wolfe(_NotIsotropic(0.05, model.size_joint_feature),
                                               dom, compiled=True, **kw)
    assert generic.extra["engine"] == "compiled"
    assert generic.extra["rounds"] == python.extra["rounds"]
    np.testing.assert_allclose(generic.x, python.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(generic.history["gap"], python.history["gap"], rtol=1e-12,
                               atol=1e-12)

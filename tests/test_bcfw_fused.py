"""The fused compiled block step (CompiledBlocks.describe) and the chain model's
feature-major oracle: checked against the Python engine, brute-force enumeration
of labellings and numpy Gram matrices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    ChainModel,
    SSVMDual,
    SSVMDualObjective,
    make_chain,
)
from frankwolfe.applications.structured_svm.models.chain.batch import chain_batch_decode
from frankwolfe.applications.structured_svm.models.chain.data import chain_data
from frankwolfe.applications.structured_svm.models.chain.viterbi import (
    decode_ids_fm,
    to_feature_major,
)
from frankwolfe.compiled import CompiledBlocks, CompiledObjective, fused_driver
from frankwolfe.objectives.quadratic_kernels import diag_quadratic_line, diag_quadratic_update


class _NotIsotropic(SSVMDualObjective):
    """The same objective without the isotropic declaration: the core falls back to the
    generic compiled driver (direction / line / update / commit)."""

    def compiled_block_objective(self) -> CompiledObjective:
        h = np.full(self.d + 1, self.lam)
        h[-1] = 0.0
        return CompiledObjective(diag_quadratic_line, diag_quadratic_update, (h,))


def _chain(ids: bool):
    if ids:
        X, Y = make_chain(25, n_states=4, n_features=5, n_templates=3, random_state=3)
        return ChainModel(4, [5, 5, 5]), X, Y
    X, Y = make_chain(25, n_states=4, n_features=5, random_state=3)
    # mostly zeros (as OCR's pixels): the kernels then read sparse rows and keep a
    # feature-major gradient copy, which the fused moves must keep up to date
    keep = np.random.default_rng(4)
    X = [x * (keep.random(x.shape) < 0.4) for x in X]
    assert sum(np.count_nonzero(x) for x in X) < sum(x.size for x in X) / 2
    return ChainModel(4, 5), X, Y


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("kw", [{"block_order": "uniform", "averaging": "weighted"},
                                {"block_order": "gap", "averaging": "uniform"},
                                # a third pair of driver compilations (~25 s): kept for -m slow;
                                # the agnostic kernel is also checked in test_bcfw.py
                                pytest.param({"block_order": "perm", "step_size": "agnostic"},
                                             marks=pytest.mark.slow)])
def test_fused_and_generic_compiled_drivers_equal_python_engine(ids, kw):
    model, X, Y = _chain(ids)
    lam = 0.05
    runs = {}
    for name, cls, compiled in (("fused", SSVMDualObjective, True),
                                ("generic", _NotIsotropic, True),
                                ("python", SSVMDualObjective, False)):
        f = cls(lam, model.size_joint_feature)
        dom = SSVMDual(model, X, Y, lam, compiled=compiled)
        if compiled:
            dk = dom.compiled_blocks(None)
            assert (fused_driver(dk, f.compiled_block_objective()) is not None) == \
                (name == "fused")
        with fw.debug(False):
            runs[name] = fw.block_coordinate_frank_wolfe(
                f, dom, tol=0.0, max_iter=9, gap_every=3, random_state=7,
                compiled=compiled, **kw)
    ref = runs["python"]
    for name in ("fused", "generic"):
        r = runs[name]
        assert r.extra["engine"] == "compiled"
        np.testing.assert_allclose(r.x, ref.x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.history["fun"], ref.history["fun"], rtol=1e-10, atol=1e-13)
        if "averaging" in kw:
            np.testing.assert_allclose(r.extra["x_average"], ref.extra["x_average"], atol=1e-12)
        # the block iterates (label marginals) are feasible: each token's marginal sums to 1
        mu, T, lbar = r.extra["block_iterates"][1]
        np.testing.assert_allclose(mu.sum(axis=1), 1.0, atol=1e-12)
        assert mu.min() >= -1e-12 and T.min() >= -1e-12  # probabilities, up to rounding


def test_fused_step_certified_gap_matches_primal_minus_dual():
    """The gap certified after fused passes is the SSVM duality gap computed from scratch."""
    from frankwolfe.applications.structured_svm.oracles import batch_primal

    model, X, Y = _chain(True)
    lam = 0.05
    f = SSVMDualObjective(lam, model.size_joint_feature)
    with fw.debug(False):
        res = fw.block_coordinate_frank_wolfe(f, SSVMDual(model, X, Y, lam), tol=0.0,
                                              max_iter=6, gap_every=3, random_state=0)
    w = res.x[:-1]
    primal = batch_primal(model, X, Y, w, lam)["primal"]
    assert primal == pytest.approx(-res.fun + res.gap, abs=1e-12)


def _phi(model, x, y):
    phi = model.joint_feature(x, y)  # sparse for attribute ids, dense otherwise
    return np.asarray(phi.todense() if hasattr(phi, "todense") else phi).ravel()


def _brute_force_decode(model, x, y_true, w):
    best, arg = -np.inf, None
    for lab in itertools.product(range(model.n_states), repeat=len(y_true)):
        lab = np.array(lab)
        phi = _phi(model, x, lab)
        v = float(phi @ w) + float(np.mean(lab != y_true))
        if v > best + 1e-12:
            best, arg = v, lab
    return arg, best


def test_feature_major_oracle_matches_enumeration():
    rng = np.random.default_rng(0)
    model = ChainModel(3, [4, 3, 5])
    X, Y = make_chain(12, n_states=3, n_features=4, n_templates=3, length=(2, 4),
                      random_state=1)
    X = [np.minimum(x, [4, 3, 5]) for x in X]  # ids within the template sizes
    w = rng.normal(size=model.size_joint_feature)
    wt = to_feature_major(w, model.n_states, model.n_unary)
    for x, y in zip(X, Y):
        lab, val = decode_ids_fm(np.ascontiguousarray(x, dtype=np.int64), model.offsets, wt, w,
                                 3, model.n_unary, np.asarray(y, dtype=np.int64), True)
        ref_lab, ref_val = _brute_force_decode(model, x, y, w)
        np.testing.assert_array_equal(lab, ref_lab)
        assert val == pytest.approx(ref_val, abs=1e-12)
    # the batch decoder (feature-major internally) agrees with the model's own oracle
    labels, _ = chain_batch_decode(chain_data(model, X, Y), w, True)
    ref = np.concatenate([model.loss_augmented_decode(x, y, w) for x, y in zip(X, Y)])
    np.testing.assert_array_equal(labels, ref)


def _sparse_rows_chain(kind, rng):
    """Small random chains whose features take each unary path of the pass's oracle."""
    K, F = 3, 6
    if kind == "ids":
        model = ChainModel(K, [4, 3, 5])
        X, Y = make_chain(10, n_states=K, n_features=4, n_templates=3, length=(1, 5),
                          random_state=rng)
        return model, [np.minimum(x, [4, 3, 5]) for x in X], Y
    X, Y = make_chain(10, n_states=K, n_features=F, length=(1, 5), random_state=rng)
    if kind == "binary":  # sparse rows without values
        X = [(rng.random(x.shape) < 0.4).astype(float) for x in X]
    elif kind == "sparse":  # sparse rows with values
        X = [x * (rng.random(x.shape) < 0.4) for x in X]
    return ChainModel(K, F), X, Y


@pytest.mark.parametrize("kind", ["sparse", "binary"])
def test_token_rows_are_scipys_csr(kind):
    """The sparse token rows the kernels read (``ChainData.token_csr``) against scipy's
    CSR of the same rows; binary rows keep no values."""
    import scipy.sparse as sp

    model, X, Y = _sparse_rows_chain(kind, np.random.default_rng(9))
    ptr, col, val = chain_data(model, X, Y).token_csr()
    ref = sp.csr_matrix(np.vstack(X))
    np.testing.assert_array_equal(ptr, ref.indptr)
    np.testing.assert_array_equal(col, ref.indices)
    assert col.dtype == np.int32
    if kind == "binary":
        assert val.size == 0 and np.all(ref.data == 1.0)
    else:
        np.testing.assert_array_equal(val, ref.data)


@pytest.mark.parametrize("kind", ["dense", "sparse", "binary", "ids"])
@pytest.mark.parametrize("synced", [False, True])
def test_pass_oracle_matches_enumeration(kind, synced):
    """The oracle the compiled pass calls (``direction``, label-major gradient or, after
    ``sync``, its feature-major copy over sparse rows / ids): its labelling maximizes the
    loss-augmented score at ``w = g_w / (lam (-g_l))`` over all labellings, and its
    score and gap are ``<g, A_i s_i>`` and ``<g, A_i (z_i - s_i)>`` recomputed from the
    enumerated optimum's joint features."""
    rng = np.random.default_rng(5)
    model, X, Y = _sparse_rows_chain(kind, rng)
    lam, n = 0.3, len(X)
    blocks = SSVMDual(model, X, Y, lam).compiled_blocks(None)
    st = blocks.state
    assert (st.xptr.size > 0) == (kind in ("sparse", "binary"))
    assert (st.xval.size > 0) == (kind == "sparse")
    d = model.size_joint_feature
    for _ in range(3):
        g = np.append(rng.normal(size=d), -rng.uniform(0.5, 2.0))
        if synced:
            blocks.sync(st, g)
        w = g[:d] / (lam * -g[d])
        idx, val = np.empty(blocks.max_nnz, dtype=np.int64), np.empty(blocks.max_nnz)
        for i, (x, y) in enumerate(zip(X, Y)):
            nnz, gap, score = blocks.direction(st, i, g, False, idx, val)
            lab, best = _brute_force_decode(model, x, y, w)
            L = len(y)
            np.testing.assert_array_equal(st.ys[:L], lab)
            phi = [_phi(model, x, yy) for yy in (y, lab)]
            loss = float(np.mean(lab != y))
            ref = g[:d] @ (phi[0] - phi[1]) / (lam * n) + g[d] * loss / n
            scale = np.abs(g[:d]) @ (np.abs(phi[0]) + np.abs(phi[1])) / (lam * n) + 1.0
            assert -1e-12 * scale <= score - ref <= 1e-12 * scale
            # the blocks start at the true labellings (A_i z_i = 0)
            assert -1e-12 * scale <= gap + ref <= 1e-12 * scale


@pytest.mark.parametrize("ids", [False, True])
def test_token_gram_is_inner_product_of_unary_features(ids):
    model, X, Y = _chain(ids)
    gram, goff = chain_data(model, X, Y).gram()
    F = model.n_unary
    for i, x in enumerate(X):
        L = len(x)
        if ids:  # one-hot rows of the unary features, built with numpy
            A = np.zeros((L, F))
            for j, off in enumerate(model.offsets):
                present = x[:, j] > 0
                A[np.flatnonzero(present), off + x[present, j] - 1] = 1.0
        else:
            A = np.asarray(x, dtype=float)
        np.testing.assert_allclose(gram[goff[i]:goff[i + 1]].reshape(L, L), A @ A.T,
                                   rtol=1e-13, atol=1e-13)


def test_compiled_blocks_step_needs_sync():
    with pytest.raises(ValueError, match="`describe` and `sync` go together"):
        CompiledBlocks(None, None, (), 1, None, describe=lambda: None)


@pytest.mark.parametrize("kind", ["dense", "sparse rows", "ids"])
def test_chain_start_point_is_the_mixtures_joint_features(kind):
    """The run's start ``x = sum_i A_i z_i`` from warm-start marginals that mix three
    labellings per block, against the model's own joint feature map of those labellings
    (another code path: ChainModel.joint_feature)."""
    from frankwolfe.applications.structured_svm.models.chain.dual_kernels import (
        chain_blocks,
        chain_state,
    )

    if kind == "dense":
        X, Y = make_chain(12, n_states=4, n_features=5, random_state=3)
        model = ChainModel(4, 5)
    else:
        model, X, Y = _chain(kind == "ids")
        X, Y = X[:12], Y[:12]
    rng = np.random.default_rng(5)
    K, d, n, lam = model.n_states, model.size_joint_feature, len(X), 0.3
    weights = rng.dirichlet(np.ones(3), size=n)
    mus, Ts, lbar, ref = [], [], np.zeros(n), np.zeros(d + 1)
    for i, (x, y) in enumerate(zip(X, Y)):
        L = len(y)
        mu, T = np.zeros((L, K)), np.zeros((K, K))
        phi_bar = np.zeros(d)
        for c in weights[i]:
            z = rng.integers(0, K, size=L)
            mu[np.arange(L), z] += c
            np.add.at(T, (z[1:], z[:-1]), c)  # T[b, a]: y_t = a, y_t+1 = b
            phi = model.joint_feature(x, z)
            phi_bar += c * (phi.toarray().ravel() if hasattr(phi, "toarray") else phi)
            lbar[i] += c * np.mean(z != y)
        phi = model.joint_feature(x, y)
        ref[:d] += (phi.toarray().ravel() if hasattr(phi, "toarray") else phi) - phi_bar
        mus.append(mu)
        Ts.append(T)
    ref[:d] /= lam * n
    ref[d] = lbar.sum() / n
    state = chain_state(model, X, Y, lam, warm=("marginals", (np.vstack(mus), np.array(Ts),
                                                              lbar)))
    assert (state.uses_ids, state.xptr.size > 0) == {
        "dense": (False, False), "sparse rows": (False, True), "ids": (True, False)}[kind]
    x = np.zeros(d + 1)
    chain_blocks(state).start(x)
    np.testing.assert_allclose(x, ref, rtol=1e-12, atol=1e-12)

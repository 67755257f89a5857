"""Kernelized dual BCFW (KernelStructuredSVM) against independent solvers: cvxpy's
primal QP for the linear kernel on a tiny chain, cvxpy's dual QP over all labellings
for an RBF multiclass kernel (Gram matrix built here from scikit-learn's rbf_kernel),
and the linear StructuredSVM."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from frankwolfe.applications.structured_svm import (
    ChainModel,
    MulticlassModel,
    StructuredModel,
    StructuredSVM,
    kernel_bcfw,
    make_chain,
)
from frankwolfe.applications.structured_svm.kernel_bcfw import (
    CallableJointKernel,
    KernelStructuredSVM,
    LabelMatchKernel,
    LinearJointKernel,
    enumerate_labellings,
)

CLARABEL = dict(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)


def all_chain_labellings(K, L):
    return [np.array(t) for t in itertools.product(range(K), repeat=L)]


# -- linear kernel on a tiny chain: the linear SSVM ----------------------------------


@pytest.fixture(scope="module")
def tiny_chain():
    X, Y = make_chain(10, n_states=2, n_features=3, length=(1, 3), noise=1.5, random_state=5)
    Xt, Yt = make_chain(12, n_states=2, n_features=3, length=(2, 3), noise=1.5, random_state=6)
    model = ChainModel(2, 3)
    lam = 0.05
    # the primal QP over every labelling (n-slack form), solved by cvxpy
    n, d = len(X), model.size_joint_feature
    w = cp.Variable(d)
    xi = cp.Variable(n)
    cons = []
    for i, (x, y) in enumerate(zip(X, Y)):
        phi_true = model.joint_feature(x, y)
        for yy in all_chain_labellings(2, len(y)):
            psi = phi_true - model.joint_feature(x, yy)
            cons.append(xi[i] >= model.loss(y, yy) - psi @ w)
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + cp.sum(xi) / n), cons)
    prob.solve(**CLARABEL)
    return model, X, Y, Xt, Yt, lam, prob.value, w.value


def test_linear_kernel_chain_matches_cvxpy_primal(tiny_chain):
    model, X, Y, Xt, Yt, lam, p_ref, w_ref = tiny_chain
    svm = KernelStructuredSVM(model, "linear", lam=lam, block_step="pairwise", tol=1e-11,
                              max_passes=5000, gap_every=5, random_state=0).fit(X, Y)
    assert svm.result_.success, svm.result_.message
    assert svm.dual_ == pytest.approx(p_ref, abs=1e-6)  # strong duality
    assert svm.primal_ == pytest.approx(p_ref, abs=1e-6)
    # w = sum_b coef_b phi(support_b), formed here only to compare with cvxpy's w
    w = sum(c * model.joint_feature(x, y)
            for c, x, y in zip(svm.dual_coef_, svm.support_x_, svm.support_y_))
    # lam-strong convexity: ||w - w*||^2 <= 2 gap / lam
    assert np.linalg.norm(w - w_ref) <= 1e-4
    # predictions by kernel scores over enumerated labellings = Viterbi at cvxpy's w
    for x, p in zip(Xt, svm.predict(Xt)):
        np.testing.assert_array_equal(p, model.decode(x, w_ref))


def test_linear_kernel_chain_matches_structured_svm(tiny_chain):
    """Same optimum and predictions as the linear estimator (gapBCFW to 1e-10)."""
    model, X, Y, Xt, Yt, lam, p_ref, w_ref = tiny_chain
    ksvm = KernelStructuredSVM(model, "linear", lam=lam, block_step="pairwise", tol=1e-10,
                               max_passes=5000, random_state=1).fit(X, Y)
    lsvm = StructuredSVM(model, lam=lam, solver="bcfw_pairwise", tol=1e-10, max_passes=5000,
                         gap_every=5, random_state=1).fit(X, Y)
    assert ksvm.dual_ == pytest.approx(-lsvm.result_.fun, abs=1e-6)
    for a, b in zip(ksvm.predict(Xt), lsvm.predict(Xt)):
        np.testing.assert_array_equal(a, b)
    assert ksvm.score(Xt, Yt) == pytest.approx(lsvm.score(Xt, Yt), abs=1e-12)


def test_fw_steps_certificate_brackets_optimum(tiny_chain):
    """Plain BCFW (Algorithm 4, weighted averaging): dual <= opt <= primal, gap <= tol."""
    model, X, Y, Xt, Yt, lam, p_ref, w_ref = tiny_chain
    svm = KernelStructuredSVM(model, "linear", lam=lam, tol=1e-2, max_passes=2000,
                              random_state=0).fit(X, Y)
    assert svm.result_.success
    assert svm.gap_ <= 1e-2
    assert svm.gap_ == pytest.approx(svm.result_.gap, abs=1e-12)  # = the core certificate
    assert svm.dual_ <= p_ref + 1e-8
    assert svm.primal_ >= p_ref - 1e-8
    assert svm.primal_ - svm.dual_ >= -1e-12


# -- RBF kernel on a small multiclass problem -------------------------------------------


@pytest.fixture(scope="module")
def rbf_multiclass():
    return _rbf_multiclass(0.02)


@pytest.fixture(scope="module")
def rbf_multiclass_fw():
    # plain FW steps (debug checks on) to tol=1e-4 at lam=0.1: 50-480 passes instead of
    # 490-1730 at lam=0.02; a Gram matrix 1% off misses cvxpy's optimum here as there
    return _rbf_multiclass(0.1)


def _rbf_multiclass(lam):
    rng = np.random.default_rng(7)
    n, K, gamma = 24, 3, 0.8
    centers = np.array([[0.0, 0.0], [1.5, 0.5], [0.3, 1.6]])
    Y = rng.integers(K, size=n)
    X = centers[Y] + 0.7 * rng.standard_normal((n, 2))
    Xt = rng.uniform(-1, 2.5, size=(15, 2))
    # the dual QP over all labellings with K_psi written entry by entry from the
    # input kernel: <psi_iy, psi_jy'> = kx_ij ([yi=yj] - [yi=y'] - [y=yj] + [y=y'])
    kx = rbf_kernel(X, X, gamma=gamma)
    labs = np.arange(K)
    Kpsi = np.zeros((n * K, n * K))
    for i, j in itertools.product(range(n), repeat=2):
        e = (float(Y[i] == Y[j]) - (Y[i] == labs)[None, :].astype(float)
             - (labs == Y[j])[:, None] + (labs[:, None] == labs[None, :]))
        Kpsi[i * K:(i + 1) * K, j * K:(j + 1) * K] = kx[i, j] * e
    ev, U = np.linalg.eigh(Kpsi)
    R = U * np.sqrt(np.clip(ev, 0, None))  # Kpsi = R R^T
    loss = (labs[None, :] != Y[:, None]).astype(float).ravel()
    a = cp.Variable(n * K, nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(R.T @ a) / (2 * lam * n * n) - loss @ a / n),
                      [cp.sum(cp.reshape(a, (n, K), order="C"), axis=1) == 1])
    prob.solve(**CLARABEL)
    alpha = a.value.reshape(n, K)
    # scores <w, phi(x, y)> = 1/(lam n) sum_i [kx(x, x_i) ([y = y_i] - alpha_i(y))]
    kt = rbf_kernel(Xt, X, gamma=gamma)
    onehot = np.eye(K)[Y]
    scores = kt @ (onehot - alpha) / (lam * n)
    return X, Y, Xt, gamma, lam, -prob.value, scores


def test_rbf_multiclass_matches_cvxpy_dual_qp(rbf_multiclass, monkeypatch):
    X, Y, Xt, gamma, lam, d_ref, scores_ref = rbf_multiclass
    svm = KernelStructuredSVM(MulticlassModel(3, 2), LabelMatchKernel("rbf", gamma=gamma),
                              lam=lam, block_step="pairwise", tol=1e-11, max_passes=5000,
                              random_state=0).fit(list(X), list(Y))
    assert svm.result_.success, svm.result_.message
    assert svm.dual_ == pytest.approx(d_ref, abs=1e-6)
    assert svm.primal_ == pytest.approx(d_ref, abs=1e-6)
    scores = np.array([s for _, s in svm.decision_function(Xt)])
    np.testing.assert_allclose(scores, scores_ref, atol=1e-4)
    margin = np.sort(scores_ref, axis=1)
    clear = margin[:, -1] - margin[:, -2] > 1e-3
    assert clear.sum() >= 10
    assert np.array_equal(np.array(svm.predict(list(Xt)))[clear],
                          scores_ref.argmax(axis=1)[clear])
    # prediction in several Gram chunks gives the same labels
    monkeypatch.setattr(kernel_bcfw, "_CHUNK", 7 * svm.dual_coef_.size)
    np.testing.assert_array_equal(svm.predict(list(Xt)), scores.argmax(axis=1))


@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_rbf_multiclass_fw_steps_converge(rbf_multiclass_fw, sampling):
    X, Y, Xt, gamma, lam, d_ref, scores_ref = rbf_multiclass_fw
    svm = KernelStructuredSVM(MulticlassModel(3, 2), LabelMatchKernel("rbf", gamma=gamma),
                              lam=lam, tol=1e-4, max_passes=3000, block_order=sampling,
                              random_state=2).fit(list(X), list(Y))
    assert svm.result_.success
    assert svm.dual_ <= d_ref + 1e-8 <= svm.primal_ + 2e-8
    assert d_ref - svm.dual_ <= 1e-4


# -- kernels ------------------------------------------------------------------------


def test_kernels_agree_with_feature_inner_products():
    rng = np.random.default_rng(0)
    model = MulticlassModel(3, 4)
    XA, XB = list(rng.normal(size=(5, 4))), list(rng.normal(size=(6, 4)))
    YA, YB = list(rng.integers(3, size=5)), list(rng.integers(3, size=6))
    PA = np.array([model.joint_feature(x, y) for x, y in zip(XA, YA)])
    PB = np.array([model.joint_feature(x, y) for x, y in zip(XB, YB)])
    ref = PA @ PB.T
    np.testing.assert_allclose(LinearJointKernel(model).gram(XA, YA, XB, YB), ref, atol=1e-12)
    np.testing.assert_allclose(LabelMatchKernel("linear").gram(XA, YA, XB, YB), ref,
                               atol=1e-12)
    fun = CallableJointKernel(lambda x, y, x2, y2: float(model.joint_feature(x, y)
                                                         @ model.joint_feature(x2, y2)))
    np.testing.assert_allclose(fun.gram(XA, YA, XB, YB), ref, atol=1e-12)
    np.testing.assert_allclose(fun.gram(XA, YA, XA, YA), PA @ PA.T, atol=1e-12)


def test_callable_kernel_trains_like_linear(tiny_chain):
    model, X, Y, Xt, Yt, lam, p_ref, w_ref = tiny_chain
    X, Y = X[:5], Y[:5]

    def k(x, y, x2, y2):
        return float(model.joint_feature(x, y) @ model.joint_feature(x2, y2))

    a = KernelStructuredSVM(model, k, lam=lam, max_passes=30, tol=0.0, random_state=3).fit(X, Y)
    b = KernelStructuredSVM(model, "linear", lam=lam, max_passes=30, tol=0.0,
                            random_state=3).fit(X, Y)
    assert a.dual_ == pytest.approx(b.dual_, abs=1e-10)
    for u, v in zip(a.alpha_, b.alpha_):
        np.testing.assert_allclose(u, v, atol=1e-9)


@pytest.mark.parametrize("max_passes, gap_every", [(10, 5), (10, 10), (7, 3), (1, 10), (0, 10)])
def test_max_passes_counts_certificates_as_structured_svm(max_passes, gap_every):
    """``max_passes`` means one budget in both estimators: passes of oracle calls, the
    certificate passes included (counted by hand: n calls a pass)."""
    import warnings

    rng = np.random.default_rng(0)
    X, y = list(rng.normal(size=(12, 3))), [int(v) for v in rng.integers(0, 3, 12)]
    model = MulticlassModel(3, 3)
    kw = dict(max_passes=max_passes, gap_every=gap_every, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = KernelStructuredSVM(model, "linear", **kw).fit(X, y)
        s = StructuredSVM(model, **kw).fit(X, y)
    calls = k.result_.n_oracle_calls
    assert calls == s.result_.n_oracle_calls
    assert calls <= max(max_passes, 1) * len(X)
    assert calls >= (max_passes - 1) * len(X)


def test_enumerate_labellings():
    labs = enumerate_labellings(ChainModel(3, 2), np.zeros((2, 2)))
    assert len(labs) == 9 and len({tuple(y) for y in labs}) == 9
    assert enumerate_labellings(MulticlassModel(4, 2), np.zeros(2)) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="max_labellings=100"):
        enumerate_labellings(ChainModel(3, 2), np.zeros((5, 2)), max_labellings=100)


# -- errors -----------------------------------------------------------------------------


class _NoEnum(StructuredModel):
    size_joint_feature = 2

    def joint_feature(self, x, y):
        return np.array([x, y], dtype=float)

    def loss(self, y_true, y):
        return float(y_true != y)

    def loss_augmented_decode(self, x, y_true, w):
        return 0

    def decode(self, x, w):
        return 0


def test_errors():
    model = MulticlassModel(2, 2)
    X, Y = [np.zeros(2), np.ones(2)], [0, 1]
    with pytest.raises(ValueError, match="'linear'"):
        KernelStructuredSVM(model, "rbf").fit(X, Y)
    with pytest.raises(TypeError, match="JointKernel"):
        KernelStructuredSVM(model, 3).fit(X, Y)
    with pytest.raises(ValueError, match="X has 2 examples but Y has 1"):
        KernelStructuredSVM(model).fit(X, Y[:1])
    with pytest.raises(ValueError, match="block_step"):
        KernelStructuredSVM(model, block_step="away").fit(X, Y)
    with pytest.raises(ValueError, match="lam"):
        KernelStructuredSVM(model, lam=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="Y\\[1\\] = 5 is not among"):
        KernelStructuredSVM(model).fit(X, [0, 5])
    with pytest.raises(ValueError, match="max_pairs=3"):
        KernelStructuredSVM(model, max_pairs=3).fit(X, Y)
    with pytest.raises(TypeError, match="labellings\\(x\\)"):
        KernelStructuredSVM(_NoEnum()).fit([1.0], [0])
    with pytest.raises(AttributeError, match="not fitted"):
        KernelStructuredSVM(model).predict(X)
    with pytest.raises(ValueError, match="metric"):
        LabelMatchKernel("nope")

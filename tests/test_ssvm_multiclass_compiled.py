"""Compiled BCFW passes of the multiclass SSVM (``MulticlassModel.compiled_dual_blocks``):
the same iterates and gaps as the generic Python engine, the Crammer-Singer optimum of
scikit-learn's ``LinearSVC`` on the digits, the estimator's default path, warm starts,
lock-free passes and the checks of what the kernels are given."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    MulticlassModel,
    SSVMDual,
    SSVMDualObjective,
    StructuredSVM,
)
from frankwolfe.applications.structured_svm.models.multiclass_kernels import (
    WARM_TAG,
    _aggregate,
    multiclass_state,
)
from frankwolfe.compiled import CompiledObjective
from frankwolfe.errors import ShapeError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(seed, n=40, F=5, K=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, F)) * (rng.random((n, F)) < 0.7)
    X[:, -1] = 1.0
    return X, rng.integers(0, K, n), MulticlassModel(K, F)


class _Materialized(SSVMDualObjective):
    """The dual objective without its Hessian diagonal: the driver then materializes each
    direction (the kernels' ``direction`` with ``want``) instead of the fused steps."""

    def compiled_block_objective(self) -> CompiledObjective:
        okern = super().compiled_block_objective()
        return CompiledObjective(okern.line, okern.update, okern.data)


def _both(model, X, Y, lam, objective=SSVMDualObjective, **kw):
    f = objective(lam, model.size_joint_feature)
    runs = {}
    for compiled in (True, False):
        dom = SSVMDual(model, list(X), list(Y), lam, compiled=compiled)
        with fw.debug(False):
            runs[compiled] = fw.block_coordinate_frank_wolfe(f, dom, compiled=compiled, **kw)
    fast, slow = runs[True], runs[False]
    assert fast.extra["engine"] == "compiled", fast.extra["engine_reason"]
    assert slow.extra["engine"] == "python"
    return fast, slow


def _same(fast, slow):
    scale = np.abs(slow.x).max()
    np.testing.assert_allclose(fast.x, slow.x, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(fast.history["fun"], slow.history["fun"], rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(fast.history["gap"], slow.history["gap"], rtol=1e-10,
                               atol=1e-14)
    assert fast.n_oracle_calls == slow.n_oracle_calls


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kw", [{"block_order": "uniform", "averaging": "weighted"},
                                {"block_order": "perm"},
                                {"block_order": "perm", "step_size": "agnostic"},
                                {"block_order": "gap"}])
def test_compiled_passes_take_the_python_engines_steps(seed, kw):
    X, Y, model = _data(seed)
    fast, slow = _both(model, X, Y, 0.03, tol=0.0, max_iter=25, gap_every=4,
                       random_state=seed, **kw)
    _same(fast, slow)
    if "averaging" in kw:
        np.testing.assert_allclose(fast.extra["x_average"], slow.extra["x_average"], rtol=0,
                                   atol=1e-12 * np.abs(slow.extra["x_average"]).max())
    # x is the aggregate of the block iterates (class marginals: distributions)
    tag, (alpha, lbar) = fast.extra["block_iterates"]
    assert tag == WARM_TAG
    np.testing.assert_allclose(alpha.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    assert alpha.min() >= -1e-15
    np.testing.assert_allclose(lbar, 1.0 - alpha[np.arange(len(Y)), Y], rtol=0, atol=1e-13)
    state = multiclass_state(X, Y, model.n_classes, 0.03, (tag, (alpha, lbar)))
    x = np.zeros(model.size_joint_feature + 1)
    _aggregate(state, x)
    np.testing.assert_allclose(fast.x, x, rtol=0, atol=1e-12 * np.abs(x).max())


@pytest.mark.parametrize("order", ["uniform", "gap"])
def test_materialized_directions_take_the_python_engines_steps(order):
    X, Y, model = _data(5)
    fast, slow = _both(model, X, Y, 0.1, objective=_Materialized, tol=0.0, max_iter=15,
                       gap_every=3, random_state=1, block_order=order)
    _same(fast, slow)


def test_digits_fit_brackets_linearsvc_crammer_singer():
    """The compiled fit's primal (written out in numpy) is within its certified gap of
    LinearSVC's (run to tol 1e-10: its primal is the optimum to far below the gap)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.svm import LinearSVC

    d = load_digits()
    Xa = np.hstack([d.data / 16.0, np.ones((d.data.shape[0], 1))])
    X, _, y, _ = train_test_split(Xa, d.target, test_size=0.3, random_state=0)
    n, lam = X.shape[0], 0.01
    assert n == 1257
    sk = LinearSVC(C=1.0 / (lam * n), multi_class="crammer_singer", fit_intercept=False,
                   tol=1e-10, max_iter=100000).fit(X, y)

    def primal(W):
        S = X @ W.T
        rows = np.arange(n)
        aug = S + 1.0
        aug[rows, y] -= 1.0
        return 0.5 * lam * np.sum(W * W) + np.mean(aug.max(axis=1) - S[rows, y])

    svm = StructuredSVM(MulticlassModel(10, 65), lam=lam, tol=1e-4, max_passes=3000,
                        eval_every=10**6, random_state=0)
    with fw.debug(False):
        svm.fit(X, y)
    res = svm.result_
    assert res.extra["engine"] == "compiled" and res.success
    p_ours, p_sk = primal(svm.w_.reshape(10, 65)), primal(sk.coef_)
    assert p_ours == pytest.approx(svm.primal(X, y), rel=1e-12)
    assert 0.0 < res.gap <= 1e-4
    # P* <= P(w_svc) ~ P* and P(w_ours) - gap <= P* <= P(w_ours)
    assert -1e-8 <= p_ours - p_sk <= res.gap + 1e-8


def test_the_estimator_takes_the_compiled_passes_by_default():
    X, Y, model = _data(3, n=60)
    with fw.debug(False):
        fast = StructuredSVM(model, lam=0.05, max_passes=30, tol=0.0, random_state=0).fit(X, Y)
        slow = StructuredSVM(model, lam=0.05, max_passes=30, tol=0.0, random_state=0,
                             compiled=False).fit(X, Y)
    assert fast.result_.extra["engine"] == "compiled"
    assert slow.result_.extra["engine"] == "python"
    np.testing.assert_allclose(fast.w_, slow.w_, rtol=0, atol=1e-12 * np.abs(slow.w_).max())
    assert fast.result_.gap == pytest.approx(slow.result_.gap, rel=1e-10)


def test_a_model_that_changes_the_loss_takes_the_python_path():
    class Weighted(MulticlassModel):
        def loss(self, y_true, y):
            return 2.0 * super().loss(y_true, y)

    X, Y, _ = _data(4)
    assert Weighted(4, 5).compiled_dual_blocks(X, Y, 0.1) is None
    with fw.debug(False):
        svm = StructuredSVM(Weighted(4, 5), lam=0.1, max_passes=5).fit(X, Y)
    assert svm.result_.extra["engine"] == "python"


def test_warm_starts_along_lambda_continue_alike():
    """A second fit at another lambda from the first's state: the compiled kernels'
    class marginals give the same iterates as the Python engine's image-space points."""
    X, Y, model = _data(6)
    fits = {}
    for c in (True, False):
        svm = StructuredSVM(model, lam=0.1, max_passes=12, tol=0.0, random_state=0,
                            warm_start=True, compiled=c)
        with fw.debug(False):
            svm.fit(X, Y)
            svm.set_params(lam=0.03).fit(X, Y)
        fits[c] = svm
    assert fits[True].result_.extra["engine"] == "compiled"
    np.testing.assert_allclose(fits[True].w_, fits[False].w_, rtol=0,
                               atol=1e-12 * np.abs(fits[False].w_).max())


def test_lock_free_passes_run_on_the_kernels():
    X, Y, model = _data(7, n=60)
    lam = 0.05
    dom = SSVMDual(model, list(X), list(Y), lam)
    f = dom.dual_objective()
    kw = dict(block_order="perm", max_iter=8, tol=0.0, gap_every=4, random_state=2)
    with fw.debug(False):
        serial = fw.block_coordinate_frank_wolfe(f, dom, compiled=True, **kw)
        one = fw.block_coordinate_frank_wolfe(f, dom, round_step="lock_free", n_jobs=1, **kw)
        two = fw.block_coordinate_frank_wolfe(f, dom, round_step="lock_free", n_jobs=2, **kw)
    np.testing.assert_allclose(one.x, serial.x, rtol=0, atol=1e-12)
    tag, (alpha, lbar) = two.extra["block_iterates"]
    np.testing.assert_allclose(alpha.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    x = np.zeros(model.size_joint_feature + 1)
    _aggregate(multiclass_state(X, Y, model.n_classes, lam, (tag, (alpha, lbar))), x)
    np.testing.assert_allclose(two.x, x, rtol=0, atol=1e-12)


def test_sparse_rows_and_lists_give_the_dense_kernels_input():
    import scipy.sparse as sp

    X, Y, model = _data(8)
    dense = model.compiled_dual_blocks(X, Y, 0.1).state.X
    for X2 in (list(X), list(sp.csr_matrix(X)), [tuple(x) for x in X]):
        np.testing.assert_array_equal(model.compiled_dual_blocks(X2, Y, 0.1).state.X, dense)
    counts = np.arange(20).reshape(4, 5)  # an integer matrix: its values as floats
    np.testing.assert_array_equal(model.compiled_dual_blocks(counts, Y[:4], 0.1).state.X,
                                  counts.astype(float))


def test_bad_labels_and_warm_states_are_refused():
    X, Y, model = _data(9)
    Yb = list(Y)
    Yb[3] = 7
    with pytest.raises(ValueError, match=r"`Y\[3\]` must be an integer in \[0, 4\), got 7"):
        model.compiled_dual_blocks(X, Yb, 0.1)
    Yb[3] = True
    with pytest.raises(ValueError, match=r"`Y\[3\]` must be an integer"):
        model.compiled_dual_blocks(X, Yb, 0.1)
    with pytest.raises(ValueError, match="warm-start state must be"):
        model.compiled_dual_blocks(X, Y, 0.1, warm=("marginals", (1, 2, 3)))
    with pytest.raises(ValueError, match=r"do not fit this data set: shapes \(3, 4\)"):
        model.compiled_dual_blocks(X, Y, 0.1, warm=(WARM_TAG, (np.zeros((3, 4)), np.zeros(3))))
    with pytest.raises(ShapeError, match=r"`X` must have 5 features .*got shape \(40, 4\)"):
        model.compiled_dual_blocks(X[:, :4], Y, 0.1)
    with pytest.raises(ShapeError, match=r"X has 40 examples but Y has 39 labels"):
        model.compiled_dual_blocks(X, Y[:-1], 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.compiled_dual_blocks(X, [float(v) for v in Y], 0.1)  # whole floats: fine


def test_a_subclass_that_preprocesses_features_keeps_the_python_path():
    """A subclass normalizing x in ``_check_x`` trains on its features, not the raw X: the
    compiled kernels read X directly, so the model falls back (same weights either way)."""
    import warnings

    from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM

    class Normalized(MulticlassModel):
        def _check_x(self, x):
            x = super()._check_x(x)
            return x / np.linalg.norm(x)

    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((60, 5)), rng.integers(0, 3, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = [StructuredSVM(Normalized(3, 5), lam=0.1, max_passes=30, tol=1e-6,
                           random_state=0, compiled=c).fit(X, Y).w_ for c in (True, False)]
    assert not Normalized(3, 5)._kernels_apply()
    np.testing.assert_allclose(w[0], w[1], rtol=0, atol=1e-12)


def test_an_empty_x_of_another_width_is_refused_by_name():
    from frankwolfe.applications.structured_svm import MulticlassModel
    from frankwolfe.errors import ShapeError

    with pytest.raises(ShapeError, match=r"`X` must have 4 features .*\(0, 5\)"):
        MulticlassModel(3, 4).compiled_dual_blocks(np.zeros((0, 5)), [], 0.1)

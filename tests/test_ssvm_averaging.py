"""Averaging variants (SSG-avg, SSG-tavg, BCFW-tavg) and the running averages."""

from __future__ import annotations

import numpy as np
import pytest
from ssvm_reference import ssvm_dual_qp

from frankwolfe.algorithms.averages import RunningAverage, WeightedMean
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain, ssg
from frankwolfe.applications.structured_svm.oracles import batch_primal


def test_running_averages_match_numpy_means():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(37, 5))
    for kind in ("uniform", "weighted", "tail"):
        avg = RunningAverage(kind, (xs[0],))
        for t in range(1, xs.shape[0] + 1):  # t iterates seen (1-based)
            if t > 1:
                avg.update((xs[t - 1],))
            if kind == "uniform":
                want = xs[:t].mean(axis=0)
            elif kind == "weighted":  # x_j weighted by j (x_0 gets 0), as BCFW-wavg
                wts = np.arange(t, dtype=float)
                want = xs[0] if t == 1 else (wts[:, None] * xs[:t]).sum(0) / wts.sum()
            else:  # 0.5-suffix: iterates 2^(j-1) .. t (1-based) with 2^j <= t
                j = int(np.floor(np.log2(t)))
                first = max(1, 2 ** (j - 1))
                assert t - first + 1 >= t / 2  # at least the last half
                want = xs[first - 1:t].mean(axis=0)
            np.testing.assert_allclose(avg.value()[0], want, rtol=1e-12, atol=1e-12)


def test_running_average_rejects_unknown_kind():
    with pytest.raises(ValueError, match="averaging"):
        RunningAverage("suffix", (np.zeros(2),))


@pytest.mark.parametrize("kind", ["uniform", "tail", "weighted"])
def test_ssg_averaging_variants_reduce_the_primal(kind):
    X, Y = make_chain(30, n_states=3, n_features=4, random_state=1)
    model = ChainModel(3, 4)
    svm = StructuredSVM(model, lam=0.05, solver="ssg", averaging=kind, max_passes=20,
                        eval_every=5, random_state=0).fit(X, Y)
    start = batch_primal(model, X, Y, np.zeros(model.size_joint_feature), 0.05)["primal"]
    h = svm.history_
    assert h["primal"][-1] < 0.5 * h["primal"][0]
    if kind != "uniform":  # the plain mean still carries the huge first SSG steps
        assert h["primal"][-1] < start
    out = ssg(model, X, Y, 0.05, max_passes=2, averaging=kind, random_state=0)
    assert out["w_average"] is not None and out["w_average"].shape == out["w"].shape


def test_ssg_rejects_unknown_averaging():
    X, Y = make_chain(3, n_states=2, n_features=2, random_state=0)
    with pytest.raises(ValueError, match="averaging"):
        ssg(ChainModel(2, 2), X, Y, 0.1, averaging="suffix")
    with pytest.raises(ValueError, match="averaging"):
        StructuredSVM(ChainModel(2, 2), averaging="suffix").fit(X, Y)


@pytest.mark.parametrize("kind", ["tail", "uniform", "weighted", True])
def test_bcfw_averaging_kinds_are_certified(kind):
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    lam = 0.1
    d_star = -ssvm_dual_qp(model, X, Y, lam)
    svm = StructuredSVM(model, lam=lam, averaging=kind, max_passes=40, tol=0, gap_every=5,
                        random_state=0).fit(X, Y)
    h = svm.history_
    tol = 1e-9
    for primal, dual, gap in zip(h["primal"], h["dual"], h["gap"]):
        assert -tol <= d_star - dual <= gap + tol
        assert -tol <= primal - d_star <= gap + tol
    assert h["gap"][-1] < h["gap"][0]


def test_weighted_mean_is_numpys_weighted_average():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((6, 4))
    ys = rng.standard_normal((6, 2, 3))
    w = rng.uniform(0.1, 2.0, 6)
    m = WeightedMean((xs[0], ys[0]), w[0])
    for k in range(1, 6):
        m.update((xs[k], ys[k]), w[k])
    x_avg, y_avg = m.value()
    np.testing.assert_allclose(x_avg, np.average(xs, axis=0, weights=w), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(y_avg, np.average(ys, axis=0, weights=w), rtol=1e-13, atol=1e-15)

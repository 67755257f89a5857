"""SSG's warm start continues its step schedule (and its average): the first step of a
run from step 0 has size 1 and forgot the start, so a warm refit of a converged SSG fit
jumped back to a one-pass solution."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from frankwolfe.algorithms.averages import RunningAverage
from frankwolfe.applications.structured_svm import StructuredSVM, ssg
from frankwolfe.applications.structured_svm.models.multiclass import MulticlassModel

K, D, LAM = 3, 3, 0.1


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.integers(K, size=n)
    X = rng.normal(size=(K, D))[Y] * 1.5 + rng.normal(size=(n, D))
    return X, Y


def _primal(w, X, Y):
    """Crammer-Singer primal by brute force over the K classes (0-1 loss)."""
    n = len(Y)
    S = X @ w.reshape(K, D).T
    H = (S + (np.arange(K)[None] != Y[:, None]) - S[np.arange(n), Y][:, None]).max(axis=1)
    return LAM / 2 * w @ w + H.mean()


def _optimum(X, Y):
    """The same primal's optimal value by cvxpy."""
    n = len(Y)
    W = cp.Variable((K, D))
    S = X @ W.T
    true = cp.sum(cp.multiply(S, np.eye(K)[Y]), axis=1)
    H = cp.max(S + (np.arange(K)[None] != Y[:, None]) - cp.vstack([true] * K).T, axis=1)
    prob = cp.Problem(cp.Minimize(LAM / 2 * cp.sum_squares(W) + cp.sum(H) / n))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("averaging", [True, False, "uniform", "tail"])
def test_a_warm_pass_after_a_converged_fit_stays_near_its_optimum(averaging):
    X, Y = _data()
    Xl, Yl = list(X), list(Y)
    p_star = _optimum(X, Y)
    svm = StructuredSVM(MulticlassModel(K, D), lam=LAM, solver="ssg", max_passes=300,
                        averaging=averaging, random_state=0).fit(Xl, Yl)
    converged = _primal(svm.w_, X, Y) - p_star
    assert -1e-6 <= converged < 5e-3  # cvxpy's optimum is accurate to about 1e-8
    assert svm.warm_state()["ssg"] == 300 * 30
    cold = StructuredSVM(MulticlassModel(K, D), lam=LAM, solver="ssg", max_passes=1,
                         averaging=averaging, random_state=0).fit(Xl, Yl)
    cold_gap = _primal(cold.w_, X, Y) - p_star
    assert cold_gap > 0.1  # one pass from 0 is far off: what the warm pass must not be
    svm.set_params(warm_start=True, max_passes=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warm SSG refit warns of nothing
        svm.fit(Xl, Yl)
    warm = _primal(svm.w_, X, Y) - p_star
    assert warm < converged + 1e-3
    assert svm.result_.n_oracle_calls == 30 and svm.warm_state()["ssg"] == 301 * 30


def test_the_continued_schedule_is_the_uninterrupted_one():
    # the last iterate of 2 + 3 passes, continued, is that of 5 passes in one run
    X, Y = _data()
    model = MulticlassModel(K, D)
    for order in ("uniform", "perm"):
        full = ssg(model, list(X), list(Y), LAM, max_passes=5, averaging=None,
                   block_order=order, random_state=np.random.default_rng(1))
        rng = np.random.default_rng(1)
        a = ssg(model, list(X), list(Y), LAM, max_passes=2, averaging=None,
                block_order=order, random_state=rng)
        b = ssg(model, list(X), list(Y), LAM, max_passes=3, averaging=None,
                block_order=order, random_state=rng, w0=a["w"], start_step=a["steps"])
        np.testing.assert_allclose(b["w"], full["w"], rtol=1e-12, atol=1e-12)
        assert (a["steps"], b["steps"], b.n_oracle_calls, b["passes"]) == (60, 150, 90, 3)


@pytest.mark.parametrize("kind", ["weighted", "uniform", "tail"])
@pytest.mark.parametrize("start", [1, 5, 7, 8, 12])
def test_the_continued_average_counts_the_start_as_its_iterates(kind, start):
    # one example: a pass is one step, so the iterates are read step by step
    X, Y = _data(n=1, seed=3)
    model = MulticlassModel(K, D)
    w0 = np.random.default_rng(4).normal(size=K * D)
    steps = 9
    iterates, w = [], w0
    for k in range(start, start + steps):
        w = ssg(model, list(X), list(Y), LAM, max_passes=1, averaging=None, w0=w,
                start_step=k, random_state=0)["w"]
        iterates.append(w)
    got = ssg(model, list(X), list(Y), LAM, max_passes=steps, averaging=kind, w0=w0,
              start_step=start, random_state=0)
    np.testing.assert_allclose(got["w"], iterates[-1], rtol=1e-12, atol=1e-12)
    # the reference: the start as each of the start + 1 iterates x_0 .. x_start so far
    ref = RunningAverage(kind, (w0,))
    for x in [w0] * start + iterates:
        ref.update((x,))
    np.testing.assert_allclose(got.x, ref.value()[0], rtol=1e-10, atol=1e-12)


def test_a_warm_ssg_fit_after_another_solver_starts_cold_with_a_warning():
    X, Y = _data()
    Xl, Yl = list(X), list(Y)
    svm = StructuredSVM(MulticlassModel(K, D), lam=LAM, solver="bcfw", max_passes=20,
                        random_state=0).fit(Xl, Yl)
    assert svm.warm_state()["ssg"] is None
    svm.set_params(solver="ssg", warm_start=True, max_passes=1)
    with pytest.warns(UserWarning, match=r"solver='ssg' continues only an SSG fit's step "
                                         r"schedule.*this fit starts cold"):
        svm.fit(Xl, Yl)
    cold = StructuredSVM(MulticlassModel(K, D), lam=LAM, solver="ssg", max_passes=1,
                         random_state=0).fit(Xl, Yl)
    np.testing.assert_array_equal(svm.w_, cold.w_)
    assert svm.warm_state()["ssg"] == 30


def test_the_step_count_survives_a_model_file(tmp_path):
    X, Y = _data()
    Xl, Yl = list(X), list(Y)
    svm = StructuredSVM(MulticlassModel(K, D), lam=LAM, solver="ssg", max_passes=4,
                        random_state=0).fit(Xl, Yl)
    svm.save(tmp_path / "m.npz", include_state=True)
    back = StructuredSVM.load(tmp_path / "m.npz")
    assert back.warm_state()["ssg"] == 120
    back.set_params(warm_start=True, max_passes=1)
    svm.set_params(warm_start=True, max_passes=1)
    np.testing.assert_allclose(back.fit(Xl, Yl).w_, svm.fit(Xl, Yl).w_, rtol=1e-12)


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (1.5, ValueError),
                                      ("3", TypeError), (None, TypeError)])
def test_a_bad_start_step_is_refused_by_name(bad, err):
    X, Y = _data(n=3)
    with pytest.raises(err, match=r"ssg: `start_step` must be a non-negative integer, got "):
        ssg(MulticlassModel(K, D), list(X), list(Y), LAM, max_passes=1, start_step=bad)


def test_numpy_start_steps_are_accepted():
    X, Y = _data(n=3)
    out = ssg(MulticlassModel(K, D), list(X), list(Y), LAM, max_passes=1,
              start_step=np.int64(6), w0=np.ones(K * D), random_state=0)
    assert out["steps"] == 9 and out.n_oracle_calls == 3

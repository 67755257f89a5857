"""Structured SVM: tol stops of online EG and the dual extragradient, seeds converted as
everywhere (latent k-means, the CoNLL-like corpus) and the kernel estimator's averaging
kinds."""

from __future__ import annotations

import itertools
import pickle
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from frankwolfe import RunOptions
from frankwolfe.applications._params import InvalidParameterError
from frankwolfe.applications.structured_svm import (
    ChainModel,
    ConllLike,
    KernelStructuredSVM,
    LatentGraphCRF,
    MulticlassModel,
    StructuredSVM,
    dual_extragradient,
    make_chain,
    make_conll_like,
    make_latent_blocks,
    online_eg,
    ssg,
)


def _brute_primal(model: ChainModel, X, Y, w: np.ndarray, lam: float) -> float:
    """The SSVM primal at ``w`` by enumerating every labelling of every (short) chain."""
    hinge = 0.0
    for x, y in zip(X, Y):
        truth = float(w @ model.joint_feature(x, y))
        hinge += max(model.loss(y, np.array(z)) + float(w @ model.joint_feature(x, np.array(z)))
                     - truth for z in itertools.product(range(model.n_states), repeat=len(y)))
    return 0.5 * lam * float(w @ w) + hinge / len(X)


@pytest.mark.parametrize("solver", ["online_eg", "dual_extragradient"])
def test_a_stop_at_a_certified_gap_within_tol_is_convergence(solver):
    X, Y = make_chain(12, n_states=2, n_features=3, length=(2, 4), random_state=0)
    model, lam, tol = ChainModel(2, 3), 0.1, 0.05
    est = StructuredSVM(model, lam=lam, solver=solver, tol=tol, max_passes=400, eval_every=2,
                        random_state=0).fit(X, Y)
    res = est.result_
    assert res.status == "converged" and res.success
    # the certified gap: the primal by enumeration less the dual value of the returned run
    gap = _brute_primal(model, X, Y, est.w_, lam) - res.extra["dual"]
    assert -1e-12 <= res.gap <= tol  # primal - dual: rounding either side
    assert res.gap == pytest.approx(gap, rel=1e-9, abs=1e-12)
    assert res.best_gap <= res.gap + 1e-15 and res.best_gap >= -1e-12
    assert res.nit < 400  # stopped by tol, not by the budget


def test_a_callback_of_the_user_still_stops_as_a_callback():
    X, Y = make_chain(12, n_states=2, n_features=3, length=(2, 4), random_state=0)
    res = online_eg(ChainModel(2, 3), X, Y, 0.1, max_passes=20, random_state=0,
                    run_options=RunOptions(callback=lambda s: False if s.k >= 2 else None))
    assert res.status == "callback_stop" and not res.success and res.nit == 2


@pytest.mark.parametrize("solver", [ssg, online_eg, dual_extragradient])
def test_run_options_are_a_run_options_without_a_max_iter(solver):
    """``run_options`` (was ``options``, which ``minimize(**options)`` means as keywords)
    takes a RunOptions only, named; its ``max_iter`` was overridden by ``max_passes``
    without a word."""
    X, Y = make_chain(6, n_states=2, n_features=3, length=(2, 3), random_state=0)
    name = solver.__name__
    with pytest.raises(TypeError, match=rf"{name}: `run_options` must be a frankwolfe.RunOptions"
                                        r" or None, got dict"):
        solver(ChainModel(2, 3), X, Y, 0.1, max_passes=2, run_options={"time_limit": 5.0})
    with pytest.raises(ValueError, match=rf"{name}: `run_options` has max_iter=7, but {name} "
                                         r"counts its budget in `max_passes`"):
        solver(ChainModel(2, 3), X, Y, 0.1, max_passes=2, run_options=RunOptions(max_iter=7))
    with pytest.raises(TypeError, match="options"):
        solver(ChainModel(2, 3), X, Y, 0.1, max_passes=2, options=RunOptions())
    res = solver(ChainModel(2, 3), X, Y, 0.1, max_passes=2,
                 run_options=RunOptions(time_limit=60.0))
    assert res.nit <= 2 and res.extra["effective_passes"] <= 2


@pytest.mark.parametrize("seed", [2**70, np.random.SeedSequence(3), np.random.PCG64(3), [3, 4],
                                  np.random.RandomState(3), np.random.default_rng(3)])
def test_init_latent_takes_every_seed_of_the_package(seed):
    X, Y = make_latent_blocks(6, 4, 4, noise=0.1, random_state=0)
    H = LatentGraphCRF(2, 2, 2).init_latent(X, Y, random_state=seed)
    assert all(np.array_equal(h // 2, y) for h, y in zip(H, Y))


def test_init_latent_refuses_bad_seeds_by_name():
    X, Y = make_latent_blocks(4, 3, 3, noise=0.1, random_state=0)
    model = LatentGraphCRF(2, 2, 2)
    for bad, err in (("3", TypeError), (1.5, TypeError), (-1, ValueError)):
        with pytest.raises(err, match=r"random_state must be .*got"):
            model.init_latent(X, Y, random_state=bad)
    with pytest.raises(TypeError, match="random_state"):  # also where no k-means runs
        LatentGraphCRF(2, 2, 1).init_latent(X, Y, random_state="3")


def _same_corpus(a, b) -> bool:
    return len(a[0]) == len(b[0]) and all(
        np.array_equal(x, z) and np.array_equal(y, t) for x, y, z, t in zip(*a, *b))


def test_conll_like_seeds_are_those_of_the_package():
    # as every generator of the package: 0 and SeedSequence(0) are one stream
    assert _same_corpus(make_conll_like(30, random_state=0),
                        make_conll_like(30, random_state=np.random.SeedSequence(0)))
    assert not _same_corpus(make_conll_like(30, random_state=0),
                            make_conll_like(30, random_state=1))
    for make in (lambda: np.random.RandomState(2), lambda: np.random.PCG64(2),
                 lambda: [2, 5]):
        corpus = ConllLike(20, random_state=make())
        assert _same_corpus(corpus.examples(0, 20),
                            ConllLike(20, random_state=make()).examples(0, 20))
        again = pickle.loads(pickle.dumps(corpus))
        assert _same_corpus(again.examples(0, 20), corpus.examples(0, 20))


@pytest.mark.parametrize("bad, err", [("7", TypeError), (1.5, TypeError), (-1, ValueError)])
def test_conll_like_refuses_bad_seeds_by_name(bad, err):
    with pytest.raises(err, match=r"ConllLike: `random_state` must be .*got"):
        ConllLike(5, random_state=bad)


def _multiclass_optimum(model: MulticlassModel, X, Y, lam: float) -> float:
    """The multiclass SSVM primal optimum by cvxpy."""
    d, n = model.size_joint_feature, len(X)
    w = cp.Variable(d)
    hinges = [cp.max(cp.hstack([
        model.loss(y, c) + (model.joint_feature(x, c) - model.joint_feature(x, y)) @ w
        for c in range(model.n_classes)])) for x, y in zip(X, Y)]
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + sum(hinges) / n))
    prob.solve()
    return float(prob.value)


def test_kernel_estimator_takes_the_averaging_kinds():
    rng = np.random.default_rng(0)
    X = list(rng.standard_normal((15, 2)))
    Y = [int(v) for v in rng.integers(3, size=15)]
    model, lam, tol = MulticlassModel(3, 2), 0.1, 1e-2
    best = _multiclass_optimum(model, X, Y, lam)
    for kind in ("weighted", "uniform", "tail", True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = KernelStructuredSVM(model, lam=lam, tol=tol, max_passes=2000, averaging=kind,
                                      random_state=0).fit(X, Y)
        assert est.gap_ <= tol
        assert -1e-6 <= est.primal_ - best <= tol + 1e-6


def test_kernel_estimator_refuses_averaging_as_the_linear_one_does():
    X, Y = [np.ones(2)] * 4, [0, 1, 2, 0]
    errors = []
    for cls in (StructuredSVM, KernelStructuredSVM):
        with pytest.raises(InvalidParameterError, match="averaging") as info:
            cls(MulticlassModel(3, 2), averaging="mean").fit(X, Y)
        errors.append(str(info.value).replace(cls.__name__, ""))
    assert errors[0] == errors[1]


def test_kernel_ssvm_warns_only_when_the_closing_gap_misses_tol():
    """A budget shorter than ``gap_every`` ends the run between certificates; the closing
    certificate decides the status (converged when it meets tol) and the warning, as
    StructuredSVM's does."""
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(30, 2)))
    y = [int(x[0] > 0) for x in X]

    def fit(tol):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = KernelStructuredSVM(MulticlassModel(2, 2), lam=0.1, max_passes=1, tol=tol,
                                      random_state=0).fit(X, y)
        return est, [w for w in caught if issubclass(w.category, ConvergenceWarning)]

    est, caught = fit(10.0)
    assert est.result_.status == "converged" and est.result_.gap <= 10.0
    assert caught == []
    est, caught = fit(1e-6)
    assert est.result_.status == "max_iter" and est.result_.gap > 1e-6 and len(caught) == 1
    assert "gap" in str(caught[0].message) and "tol=1e-06" in str(caught[0].message)


def test_a_numpy_bool_averaging_is_the_bool():
    rng = np.random.default_rng(0)
    X = [rng.standard_normal(3) for _ in range(20)]
    Y = [int(rng.integers(3)) for _ in range(20)]
    for cls in (KernelStructuredSVM, StructuredSVM):
        kw = dict(lam=0.1, max_passes=20, random_state=0)
        a = cls(MulticlassModel(3, 3), averaging=np.True_, **kw).fit(X, Y)
        b = cls(MulticlassModel(3, 3), averaging="weighted", **kw).fit(X, Y)
        np.testing.assert_array_equal(a.result_.x, b.result_.x)

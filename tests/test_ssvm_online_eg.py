"""Online-EG and dual extragradient against the cvxpy dual optimum over all labellings."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import (ChainModel, MatchingModel, StructuredSVM,
                                                    make_chain)
from frankwolfe.applications.structured_svm.extragradient import dual_extragradient
from frankwolfe.applications.structured_svm.oracles import batch_primal

from ssvm_reference import ssvm_dual_qp

LAM = 0.1
TOL = 1e-9  # cvxpy/Clarabel solves the reference QP to about 1e-10


@pytest.fixture(scope="module")
def tiny():
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    d_star = -ssvm_dual_qp(model, X, Y, LAM)  # dual optimum = primal optimum
    return model, X, Y, d_star


def _check_certificates(h, d_star):
    """Each recorded gap bounds the true primal and dual suboptimality."""
    for primal, dual, gap in zip(h["primal"], h["dual"], h["gap"]):
        assert -TOL <= d_star - dual <= gap + TOL
        assert -TOL <= primal - d_star <= gap + TOL


def test_online_eg_reaches_dual_optimum(tiny):
    model, X, Y, d_star = tiny
    svm = StructuredSVM(model, lam=LAM, solver="online_eg", max_passes=1500, tol=0,
                        eval_every=25, random_state=0).fit(X, Y)
    h = svm.history_
    assert len(h) >= 10
    _check_certificates(h, d_star)
    assert -TOL <= d_star - h["dual"][-1] <= 1e-5
    # backtracking accepts only steps that decrease the dual objective: monotone dual
    assert np.all(np.diff(h["dual"]) >= -1e-12)
    # retries are counted: effective passes >= passes, and oracle calls = n * effective
    assert np.all(h["effective_passes"] >= h["passes"])
    np.testing.assert_allclose(h["oracle_calls"], np.round(h["effective_passes"] * len(X)))
    # the reported w is the dual point's: its primal is the recorded one
    assert svm.primal(X, Y) == pytest.approx(h["primal"][-1], rel=1e-12, abs=1e-12)


def test_dual_extragradient_reaches_dual_optimum(tiny):
    model, X, Y, d_star = tiny
    rows = []

    def record(it, eff, state):
        if it % 200 == 0:
            w_dual, _, dual = state["point_bar"].image()
            primal = batch_primal(model, X, Y, state["w_bar"], LAM)["primal"]
            rows.append((primal, dual, primal - dual))
        return None

    out = dual_extragradient(model, X, Y, LAM, max_passes=12000, step_size=0.5, c_w=0.25,
                             averaging="tail", callback=record)
    h = {k: np.array(v) for k, v in zip(("primal", "dual", "gap"), zip(*rows))}
    _check_certificates(h, d_star)
    assert -TOL <= d_star - out["dual"] <= 1e-5


def test_dual_extragradient_estimator_certifies_every_row(tiny):
    model, X, Y, d_star = tiny
    svm = StructuredSVM(model, lam=LAM, solver="dual_extragradient", max_passes=400, tol=0,
                        eval_every=20).fit(X, Y)
    h = svm.history_
    _check_certificates(h, d_star)
    assert h["effective_passes"][-1] == pytest.approx(2 * h["passes"][-1])
    # the restricted saddle gap (Taskar et al.) never exceeds the certified gap
    for (it, rg), gap in zip(svm.restricted_gaps_, h["gap"]):
        assert rg <= gap + TOL
    # plain (uniform) averaging is slow but moves towards the optimum
    assert d_star - h["dual"][-1] < 0.5 * (d_star - h["dual"][0])


@pytest.mark.parametrize("solver", ["online_eg", "dual_extragradient"])
def test_models_without_marginals_are_refused(solver):
    X = [np.zeros((2, 2, 2))]
    Y = [np.array([0, 1])]
    with pytest.raises(TypeError, match=f"solver='{solver}'.*marginals"):
        StructuredSVM(MatchingModel(2), solver=solver, max_passes=1).fit(X, Y)


def test_online_eg_backtracking_budget(tiny):
    # at most 2 halvings per example on the first pass, 5 afterwards: <= 3n then <= 6n calls
    from frankwolfe.applications.structured_svm import online_eg

    model, X, Y, _ = tiny
    n = len(X)
    effs = []
    online_eg(model, X, Y, LAM, max_passes=40, random_state=1,
              callback=lambda p, eff, point: effs.append(eff))
    steps = np.diff(np.concatenate([[0.0], effs]))
    assert 1.0 <= steps[0] <= 3.0
    assert np.all(steps[1:] >= 1.0) and np.all(steps[1:] <= 6.0)
    assert np.any(steps > 1.0)  # some steps were retried (an uninformative run otherwise)
    np.testing.assert_allclose(np.array(effs) * n, np.round(np.array(effs) * n), atol=1e-9)


@pytest.mark.parametrize("max_passes", [1.0, 2.5, 7.3])
def test_online_eg_effective_pass_budget_is_hard(tiny, max_passes):
    # backtracking retries count as oracle calls: the run stops at the call budget
    # floor(max_passes * n), inside a pass if need be, never beyond it
    from frankwolfe.applications.structured_svm import online_eg

    model, X, Y, _ = tiny
    n = len(X)
    effs = []
    out = online_eg(model, X, Y, LAM, max_passes=max_passes, random_state=1,
                    callback=lambda p, eff, point: effs.append(eff))
    budget = int(np.floor(max_passes * n))
    assert out["oracle_calls"] == budget  # every trial is one call: the budget is used up
    assert out["effective_passes"] <= max_passes
    assert all(e <= max_passes for e in effs)
    # an estimator's history ends within the budget too
    budget_passes = int(np.ceil(max_passes))
    svm = StructuredSVM(model, lam=LAM, solver="online_eg", max_passes=budget_passes, tol=0,
                        eval_every=1, random_state=1).fit(X, Y)
    h = svm.history_["effective_passes"]
    assert np.all(h <= budget_passes) and h[-1] == budget_passes


def test_coupling_norm_between_brute_force_bounds():
    # ||A|| = sup ||1/n sum_i sum_y z_i(y) psi_i(y)|| over 1/n sum ||z_i||_1^2 <= 1 lies
    # between max_i max_y ||psi_i(y)|| / sqrt(n) (all weight on one example) and
    # sqrt(mean_i max_y ||psi_i(y)||^2) (Cauchy-Schwarz); labellings enumerated
    import itertools

    from frankwolfe.applications.structured_svm.extragradient import coupling_norm

    X, Y = make_chain(6, n_states=3, n_features=3, length=(2, 4), noise=1.5, random_state=1)
    model = ChainModel(3, 3)
    d = model.size_joint_feature
    R = []
    for x, y in zip(X, Y):
        best = 0.0
        for yy in itertools.product(range(3), repeat=len(y)):
            idx, val = model.psi(x, y, np.array(yy))
            v = np.zeros(d)
            np.add.at(v, idx, val)
            best = max(best, float(np.linalg.norm(v)))
        R.append(best)
    R = np.array(R)
    est = coupling_norm(model, X, Y, rounds=6)
    n = len(X)
    assert R.max() / np.sqrt(n) * (1 - 1e-12) <= est <= np.sqrt(np.mean(R * R)) * (1 + 1e-12)


def test_dual_extragradient_step_size_choices(tiny):
    model, X, Y, _ = tiny
    auto = dual_extragradient(model, X, Y, LAM, max_passes=2)
    bound = dual_extragradient(model, X, Y, LAM, max_passes=2, step_size="bound")
    assert auto["step_size"] > bound["step_size"]  # the estimate is below the safe bound
    with pytest.raises(ValueError, match="step_size"):
        dual_extragradient(model, X, Y, LAM, max_passes=2, step_size="big")

"""Dual extragradient against the structured SVM optimum from cvxpy, and restricted_gap
against a direct minimization over the ball (scipy)."""
import itertools

import cvxpy as cp
import numpy as np
import pytest

from frankwolfe.applications.structured_svm import ChainModel, make_chain
from frankwolfe.applications.structured_svm.solvers import dual_extragradient, restricted_gap


def _primal_optimum(model, X, Y, lam):
    """min lam/2 ||w||^2 + 1/n sum_i max_y [L(y_i, y) - <w, phi(x_i, y_i) - phi(x_i, y)>],
    every labelling enumerated (cvxpy)."""
    d = model.size_joint_feature
    w = cp.Variable(d)
    terms = []
    for x, y in zip(X, Y):
        rows, loss = [], []
        for lab in itertools.product(range(model.n_states), repeat=len(y)):
            lab = np.array(lab)
            rows.append(model.joint_feature(x, y) - model.joint_feature(x, lab))
            loss.append(model.loss(y, lab))
        terms.append(cp.max(np.array(loss) - np.array(rows) @ w))
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + sum(terms) / len(X)))
    prob.solve()
    return prob.value


@pytest.fixture(scope="module")
def tiny():
    X, Y = make_chain(6, n_states=2, n_features=3, length=(3, 4), random_state=0)
    model = ChainModel(2, 3)
    lam = 0.1
    return model, X, Y, lam, _primal_optimum(model, X, Y, lam)


# the last point converges fast; the step-weighted mean at O(1/t) (hence its looser bound)
@pytest.mark.parametrize("averaging, within", [(None, 2e-3), ("tail", 2e-3), ("uniform", 3e-2)])
def test_dual_value_approaches_the_optimum(tiny, averaging, within):
    model, X, Y, lam, pstar = tiny
    res = dual_extragradient(model, X, Y, lam, max_passes=400, averaging=averaging)
    dual = -res.fun
    assert dual <= pstar + 1e-6  # weak duality
    assert pstar - dual < within * max(1.0, abs(pstar))
    # the values tracked inside the run (history, before the closing certificate) are
    # D(z_bar) too: below P* and near it at the end
    tracked = -np.asarray(res.history["fun"], dtype=float)[-2]
    assert tracked <= pstar + 1e-6
    assert pstar - tracked < within * max(1.0, abs(pstar))


def test_restricted_gap_is_primal_minus_min_over_the_ball():
    from scipy.optimize import minimize
    lam, radius, primal, dual = 2.0, 1.0, 3.0, 0.5
    wz = np.array([3.0, 4.0])  # ||w(z)|| = 5, outside the ball
    cons = {"type": "ineq", "fun": lambda w: radius ** 2 - w @ w}
    best = minimize(lambda w: 0.5 * lam * np.sum((w - wz) ** 2) + dual, np.zeros(2),
                    constraints=[cons], method="SLSQP", tol=1e-12)
    assert restricted_gap(primal, dual, wz, lam, radius) == pytest.approx(primal - best.fun,
                                                                          abs=1e-6)
    # inside the ball the minimum is D(z) itself
    assert restricted_gap(primal, dual, wz / 10, lam, radius) == pytest.approx(primal - dual)

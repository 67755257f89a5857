"""Active-set bookkeeping checked against closed forms."""
import numpy as np
import pytest

from frankwolfe import (
    ActiveSet,
    FunctionObjective,
    ProbabilitySimplex,
    away_step_frank_wolfe,
    blended_pairwise_conditional_gradient,
    pairwise_frank_wolfe,
)

E = np.eye(3)


def test_sparsify_removes_weights_below_tol_and_renormalizes():
    """Docs: 'Remove atoms with weight below tol, renormalize'; x recomputed."""
    S = ActiveSet([E[0], E[1], E[2]], [0.5, 0.3, 0.2])
    assert S.sparsify(0.2) == 0  # 0.2 is not below 0.2
    assert S.sparsify(0.25) == 1
    assert np.allclose(sorted(S.weights), [0.375, 0.625], atol=1e-15)
    assert np.allclose(S.x, [0.625, 0.375, 0.0], atol=1e-15)
    assert S.check()["sum_error"] <= 1e-15 and S.check()["x_error"] <= 1e-15


def _projection_problem():
    """min 0.5 ||x - y||^2 over the simplex; the answer (closed form) has support {0, 1}."""
    y = np.array([0.8, 0.6, -0.2, -0.3, 0.1])
    f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y, shape=(5,),
                          exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    return f, np.array([0.6, 0.4, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("method", [away_step_frank_wolfe, pairwise_frank_wolfe])
def test_drop_steps_leave_exactly_the_optimal_support(method):
    """Starting from the barycentre every vertex outside the support {0, 1} must leave
    through a drop step; the final active set is the support, weights = the answer."""
    f, ref = _projection_problem()
    res = method(f, ProbabilitySimplex(dim=5), x0=np.full(5, 0.2), step_size="exact",
                 tol=1e-12, max_iter=1000)
    assert res.status == "converged"
    assert np.allclose(res.x, ref, atol=1e-9)
    assert sorted(res.active_set.keys) == [("e", 0), ("e", 1)]
    assert res.extra["n_drop_steps"] >= 3


def test_lazy_converged_means_the_true_gap_meets_tol():
    """A lazy step's gap is a lower bound only, never a certificate: a 'converged' lazy run
    meets tol with the closed-form l1... here simplex gap <g, x> - min g at its point."""
    n = 50
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    Q, c = A.T @ A / n + 0.01 * np.eye(n), rng.standard_normal(n)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(n,))
    for tol in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6):
        res = blended_pairwise_conditional_gradient(f, ProbabilitySimplex(dim=n), tol=tol,
                                                    max_iter=5000, step_size="adaptive")
        g = Q @ res.x + c
        true_gap = float(g @ res.x - g.min())
        assert res.status == "converged"
        assert true_gap <= tol * (1 + 1e-9)
        assert res.gap == pytest.approx(true_gap, rel=1e-9, abs=1e-13)


def test_remove_keeps_x_consistent_with_the_weights():
    """ActiveSet.remove: 'Remove an atom without renormalizing'; the kept x must stay
    sum_a w_a a (after renormalize() too)."""
    S = ActiveSet([E[0], E[1]], [0.5, 0.5])
    assert S.remove(S.keys[0]) == 0.5
    assert S.check()["x_error"] <= 1e-15
    S.renormalize()
    assert np.allclose(S.x, E[1]) and S.check()["x_error"] <= 1e-15


def test_lazy_iterations_certify_nothing():
    """Docs (lazy): 'Such iterations report no certified gap (NaN in the history)'; the dual
    bound max_k f(x_k) - gap_k stays below f* (cvxpy)."""
    import cvxpy as cp
    n = 50
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    Q, c = A.T @ A / n + 0.01 * np.eye(n), rng.standard_normal(n)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(n,))
    z = cp.Variable(n)
    fstar = cp.Problem(cp.Minimize(0.5 * cp.quad_form(z, cp.psd_wrap(Q)) + c @ z),
                       [z >= 0, cp.sum(z) == 1]).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                                                        tol_gap_rel=1e-12)
    res = blended_pairwise_conditional_gradient(f, ProbabilitySimplex(dim=n), tol=1e-7,
                                                max_iter=5000, step_size="adaptive")
    lazy = res.extra["n_lazy_steps"]
    assert lazy > 0
    assert int(np.isnan(res.history["gap"]).sum()) == lazy
    assert res.dual_bound <= fstar + 1e-8

"""Warm starts from another run's domain: a vertex keyed as this domain keys another
vertex (the l1 ball's ("e", i, s) at another radius) starts the run at its own vector;
the lasso takes a previous radius's active set under every method; a start a method
cannot take is refused saying what to pass."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.lasso import solve_lasso


def _l1_least_squares_optimum(A, b, radius):
    z = cp.Variable(A.shape[1])
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ z - b)),
                      [cp.norm1(z) <= radius]).solve(solver=cp.CLARABEL)


@pytest.mark.parametrize("method", ["pairwise", "away", "bpcg", "bcg", "rafw", "fcfw"])
def test_a_vertex_of_a_smaller_ball_starts_the_run_at_its_own_vector(method):
    rng = np.random.default_rng(1)
    A, b = rng.normal(size=(30, 20)), rng.normal(size=30)
    x0 = fw.L1Ball(2.0, dim=20)(np.ones(20))  # key ("e", i, -1), vector -2 e_i
    kw = {"random_state": 0} if method == "rafw" else {}
    res = fw.minimize(fw.LeastSquares(A, b), fw.L1Ball(3.0, dim=20), method, x0=x0,
                      tol=1e-9, max_iter=20000, **kw)
    fstar = _l1_least_squares_optimum(A, b, 3.0)
    assert res.status == "converged"
    assert res.fun == pytest.approx(fstar, rel=1e-7, abs=1e-9)


def test_a_vertex_of_a_smaller_ball_projects_like_the_closed_form():
    y = np.array([10.0, 0.5, 0, 0, 0, 0])
    old = fw.L1Ball(1.0, dim=6)(-y)  # +1 e_0, key ("e", 0, 1)
    res = fw.fully_corrective_frank_wolfe(fw.QuadraticObjective(np.eye(6), -y),
                                          fw.L1Ball(2.0, dim=6), x0=old, tol=1e-10)
    # the projection of y onto the radius-2 l1 ball: soft threshold at 8
    np.testing.assert_allclose(res.x, [2.0, 0, 0, 0, 0, 0], atol=1e-9)


@pytest.mark.parametrize("method", ["auto", "compiled_pairwise", "pairwise", "away"])
def test_the_lasso_takes_a_previous_radius_s_active_set(method):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 30))
    b = A[:, :4] @ [3.0, -2, 1, 4]
    previous = solve_lasso(A, b, 5.0)
    res = solve_lasso(A, b, 7.0, method=method, x0=previous.active_set, max_iter=50000)
    assert res.fun == pytest.approx(_l1_least_squares_optimum(A, b, 7.0), rel=1e-6, abs=1e-8)


def test_starts_a_method_cannot_take_say_what_to_pass():
    q = fw.QuadraticObjective(np.eye(3), -np.ones(3))
    D = fw.ProbabilitySimplex(dim=3)
    res = fw.pairwise_frank_wolfe(q, D)
    with pytest.raises(TypeError, match=r"keeps no active set; .* x0=S\.x"):
        fw.frank_wolfe(q, D, x0=res.active_set)
    with pytest.raises(TypeError, match=r"a Result: start from its point, x0=res\.x"):
        fw.away_step_frank_wolfe(q, D, x0=res)
    P = fw.ProductDomain([fw.ProbabilitySimplex(dim=3) for _ in range(2)])
    obj = fw.QuadraticObjective(np.eye(6), -np.arange(6.0))
    r = fw.block_coordinate_frank_wolfe(obj, P, block_step="pairwise", random_state=0)
    with pytest.raises(TypeError, match=r"x0: block 0 .* extra\['active_sets'\] holds the "
                                        r"atoms' keys only"):
        fw.block_coordinate_frank_wolfe(obj, P, x0=r.extra["active_sets"],
                                        block_step="pairwise")

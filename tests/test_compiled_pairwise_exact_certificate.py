"""The compiled pairwise method certifies exact values at the point it returns.

Its kernels update ``A x`` and the gradient step by step, exactly every
``refresh_every`` iterations only.  On an l1 ball far larger than the optimum's norm
(``+-r e_j`` at weights near 1/2) the drift, multiplied by the radius in the gap, once
gave ``converged`` with a gap of 6.7e-11 where the gap at ``res.x`` was 1.4e-3, and a
dual bound above ``f*``.  Every value here is recomputed with numpy from ``res.x`` and
compared with the least-squares solution, the optimum (the balls hold it inside).
"""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import L1Ball, LeastSquares, Status, compiled_pairwise_frank_wolfe

EPS = float(np.finfo(float).eps)


def _problem():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 10))
    b = A @ rng.standard_normal(10) + 0.1 * rng.standard_normal(30)
    return A, b


def _exact(A, b, x, radius):
    """``(f, gap, rounding of the gap)`` at ``x`` over the l1 ball, with numpy.  The
    rounding is a typical one, not a worst case: the residual's entries rounded at the
    scale of ``|A| |x| + |b|``, carried to ``g`` by ``A^T`` (a 2-norm over the rows),
    times the radius, with a slack of 16 over the spread seen."""
    r = A @ x - b
    g = A.T @ r
    scale = np.abs(A) @ np.abs(x) + np.abs(b)
    rounding = 16 * EPS * radius * float(np.sqrt((A ** 2).T @ scale ** 2).max())
    return 0.5 * float(r @ r), float(g @ x + radius * np.abs(g).max()), rounding


def _optimum(A, b):
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x, 0.5 * float(np.sum((A @ x - b) ** 2))


@pytest.mark.parametrize("radius", [1e6, 1e3])
def test_the_reported_gap_is_the_gap_at_the_returned_point(radius):
    A, b = _problem()
    x_ls, f_star = _optimum(A, b)
    assert np.abs(x_ls).sum() < radius / 100  # an interior optimum: f_star is f*
    tol = 1e-10
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=tol,
                                        max_iter=20000)
    f, gap, rounding = _exact(A, b, res.x, radius)
    assert abs(res.gap - gap) <= rounding, (res.status, res.gap, gap, rounding)
    assert abs(res.fun - f) <= 1e-12 * f
    if res.status == Status.CONVERGED:  # never on the drifted gradient's word
        assert gap <= tol + rounding
    # certificates: f* >= dual bound, and best_gap bounds f(x) - f*
    assert res.dual_bound <= f_star + 1e-14 * f_star
    assert res.best_gap >= f - f_star - 1e-14 * f_star
    assert res.extra["n_refreshes"] >= 1


def test_a_run_to_its_budget_closes_on_exact_values():
    """tol=0: the run ends at max_iter, where the drifted gradient had gaps of 1e-38 and
    the history's drifted f put the dual bound 1.9e-11 above f*."""
    radius = 1e6
    A, b = _problem()
    _, f_star = _optimum(A, b)
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=0.0,
                                        max_iter=20000)
    assert res.status == Status.MAX_ITER
    f, gap, rounding = _exact(A, b, res.x, radius)
    assert abs(res.gap - gap) <= rounding and abs(res.fun - f) <= 1e-12 * f
    assert res.dual_bound <= f_star + 1e-14 * f_star
    assert res.best_gap >= f - f_star - 1e-14 * f_star


def test_a_stop_on_rtol_is_certified_by_exact_values():
    radius = 1e6
    A, b = _problem()
    rtol = 1e-9
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=0.0,
                                        rtol=rtol, max_iter=20000)
    f, gap, rounding = _exact(A, b, res.x, radius)
    assert abs(res.gap - gap) <= rounding
    if res.status == Status.CONVERGED:
        assert gap <= rtol * f + rounding


def test_a_run_a_callback_stops_by_raising_returns_exact_values():
    radius = 1e6
    A, b = _problem()
    _, f_star = _optimum(A, b)

    def callback(state):
        if state.k > 2000:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough") as info:
        compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=0.0,
                                      max_iter=20000, callback=callback)
    res = info.value.result
    f, gap, rounding = _exact(A, b, res.x, radius)
    assert abs(res.gap - gap) <= rounding and abs(res.fun - f) <= 1e-12 * f
    assert res.dual_bound <= f_star + 1e-14 * f_star


@pytest.mark.parametrize("radius, nit", [(4.0, 4), (10.0, 6)])
def test_a_radius_near_the_optimum_converges_in_the_iterations_it_took_before(radius, nit):
    """The exact check confirms the claim at once (one recomputation): no iteration
    more than before it was made."""
    A, b = _problem()
    tol = 1e-10
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(radius), tol=tol,
                                        max_iter=20000)
    assert res.status == Status.CONVERGED and res.nit == nit
    assert res.extra["n_refreshes"] == 1
    f, gap, rounding = _exact(A, b, res.x, radius)
    assert gap <= tol + rounding and abs(res.gap - gap) <= rounding
    # on the sphere: against cvxpy's optimum
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert res.dual_bound <= prob.value + 1e-8 * max(1.0, abs(prob.value))
    assert res.fun - prob.value <= tol + 1e-8 * max(1.0, abs(prob.value))


@pytest.mark.parametrize("refresh_every, expected", [(1000, 6), (500, 11), (10**6, 1)])
def test_n_refreshes_counts_the_periodic_recomputations(refresh_every, expected):
    """5500 pairwise steps far from the optimum (an uncentred design, tol=0: no stop on
    the gap, no stall): one recomputation every ``refresh_every`` steps, and one at the
    end unless the last step was followed by a periodic one."""
    rng = np.random.default_rng(4)
    A = 5.0 + rng.standard_normal((100, 200))
    b = rng.standard_normal(100)
    res = compiled_pairwise_frank_wolfe(LeastSquares(A, b), L1Ball(1.0, dim=200),
                                        corrective=False, tol=0.0, max_iter=5500,
                                        refresh_every=refresh_every)
    assert res.status == Status.MAX_ITER and res.extra["n_pairwise_steps"] == 5500
    assert res.extra["n_refreshes"] == expected
    f, gap, rounding = _exact(A, b, res.x, 1.0)
    assert abs(res.gap - gap) <= rounding


def test_minimize_reaches_the_same_engine():
    A, b = _problem()
    res = fw.minimize(LeastSquares(A, b), L1Ball(1e6), method="compiled_pairwise",
                      tol=1e-10, max_iter=20000)
    f, gap, rounding = _exact(A, b, res.x, 1e6)
    assert abs(res.gap - gap) <= rounding

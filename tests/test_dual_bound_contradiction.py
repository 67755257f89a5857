"""A lower bound max_k (f_k - gap_k) above the value returned proves the objective is not
convex: the run raises NonConvexError instead of clamping ``fun - dual_bound`` into a
certified gap of 0 (Rosenbrock on a box declared convex reported best_gap 0.0 and a
dual bound above scipy's optimum)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from scipy.optimize import rosen, rosen_der

import frankwolfe as fw


def test_a_contradicted_bound_raises_with_the_run_so_far():
    x0 = np.full(4, -0.75)
    box = fw.Box(-2.0, 0.5, dim=4)
    ref = scipy_minimize(rosen, x0, jac=rosen_der, method="L-BFGS-B", bounds=[(-2, 0.5)] * 4)
    with pytest.raises(fw.NonConvexError, match="convex=False") as info:
        fw.minimize(rosen, box, jac=rosen_der, x0=x0, max_iter=5000)
    res = info.value.result
    assert res.status == "error"
    # the bound the run gathered is above a feasible point's value (scipy's): no bound
    assert max(res.history["fun"] - res.history["gap"]) > ref.fun + 1e-3
    assert res.fun == pytest.approx(rosen(res.x), rel=1e-12)


def test_declared_non_convex_the_same_run_reports_stationarity():
    x0 = np.full(4, -0.75)
    f = fw.FunctionObjective(rosen, rosen_der, convex=False)
    res = fw.minimize(f, fw.Box(-2.0, 0.5, dim=4), method="pairwise", x0=x0, max_iter=20000,
                      tol=1e-9)
    ref = scipy_minimize(rosen, x0, jac=rosen_der, method="L-BFGS-B", bounds=[(-2, 0.5)] * 4,
                         options={"ftol": 1e-15, "gtol": 1e-12})
    assert res.dual_bound == -np.inf
    assert res.fun == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("method", ["fw", "away", "pairwise"])
def test_a_convex_run_keeps_its_bound_below_its_value(method):
    """A convex quadratic: the bound stays at most f* (cvxpy-free closed form: the box
    clips the unconstrained minimizer coordinate-wise for a diagonal Q)."""
    rng = np.random.default_rng(3)
    d = rng.uniform(0.5, 2.0, 6)
    c = rng.normal(size=6) * 2
    f = fw.QuadraticObjective(np.diag(d), c)
    x_star = np.clip(-c / d, -0.5, 0.5)
    f_star = 0.5 * x_star @ (d * x_star) + c @ x_star
    res = fw.minimize(f, fw.Box(-0.5, 0.5, dim=6), method=method, tol=1e-10)
    assert res.success
    assert res.dual_bound <= f_star + 1e-12 * (1 + abs(f_star))
    assert f_star - 1e-12 * (1 + abs(f_star)) <= res.fun <= f_star + res.best_gap + 1e-12


class _Sampled(fw.ProbabilitySimplex):
    """The best of 3 random vertices: an oracle that may miss the minimum, declared so."""

    exact = False

    def __init__(self, dim: int, seed: int) -> None:
        super().__init__(dim=dim)
        self.n = dim
        self.rng = np.random.default_rng(seed)

    def extreme_point(self, g):
        keep = np.isin(np.arange(self.n), self.rng.choice(self.n, 3, replace=False))
        return super().extreme_point(np.where(keep, g, 1e300))


def test_an_inexact_oracle_gives_no_bound_and_no_false_error():
    """Its gaps are estimates (LMO.exact): f_k - gap_k may exceed f*, which proves
    nothing about convexity; the result reports no dual bound."""
    n = 50
    b = np.random.default_rng(0).random(n)
    b /= b.sum()
    res = fw.minimize(lambda x: 0.5 * np.sum((x - b) ** 2), _Sampled(n, 1), x0=np.eye(n)[0],
                      jac=lambda x: x - b, max_iter=200)
    assert res.dual_bound == -np.inf
    # the projection of b (in the simplex) is b itself: f* = 0
    assert 0.0 <= res.fun <= 0.5 * np.sum((np.eye(n)[0] - b) ** 2)


def test_inexact_block_oracles_give_no_bound_and_no_false_block_error():
    n = 20
    b = np.random.default_rng(0).random(2 * n)
    b[:n] /= b[:n].sum()
    b[n:] /= b[n:].sum()
    dom = fw.ProductDomain([_Sampled(n, 1), _Sampled(n, 2)])
    f = fw.FunctionObjective(lambda x: 0.5 * np.sum((x - b) ** 2), lambda x: x - b)
    x0 = np.concatenate([np.eye(n)[0], np.eye(n)[0]])
    res = fw.block_coordinate_frank_wolfe(f, dom, x0, max_iter=50, gap_every=1,
                                          random_state=0)
    assert res.dual_bound == -np.inf
    assert 0.0 <= res.fun <= f.value(x0)

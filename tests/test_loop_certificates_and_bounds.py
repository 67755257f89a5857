"""Stopping, certificates and result fields, checked against closed forms."""
import numpy as np
import pytest

from frankwolfe import (
    FunctionObjective,
    L1Ball,
    ProbabilitySimplex,
    blended_pairwise_conditional_gradient,
    frank_wolfe,
)
from frankwolfe.errors import NonConvexError
from frankwolfe.step_size import ShortStep


def _qp(seed=0, n=30):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q, c = M.T @ M / n + 0.1 * np.eye(n), rng.standard_normal(n)
    return FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c,
                             shape=(n,)), Q, c


def _simplex_gap(grad, x):
    """The Frank-Wolfe gap over the probability simplex, in closed form."""
    return float(grad @ x - grad.min())


def test_a_lazy_run_stopped_between_certificates_returns_a_certified_gap():
    """Docs (lazy): 'the returned gap is always certified'.  Runs stopped by max_iter after
    every budget, some on a lazy (uncertified) iteration; the gap returned must be the
    closed-form l1-ball gap <g, x> + radius * max|g_i| at the returned point."""
    n = 50
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    Q, c = A.T @ A / n + 0.01 * np.eye(n), rng.standard_normal(n)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(n,))
    lazy = 0
    for it in range(2, 80):
        res = blended_pairwise_conditional_gradient(f, L1Ball(1.0, dim=n), max_iter=it, tol=0.0,
                                                    step_size="adaptive")
        lazy += res.extra["n_lazy_steps"]
        g = Q @ res.x + c
        assert res.gap == pytest.approx(g @ res.x + np.abs(g).max(), rel=1e-9, abs=1e-12)
    assert lazy > 0  # the lazy rule was used


def test_success_is_false_when_the_budget_ends_the_run():
    f, Q, c = _qp()
    res = frank_wolfe(f, ProbabilitySimplex(dim=30), max_iter=3, tol=0.0)
    assert res.status == "max_iter"
    assert res.success is False


def test_tol_zero_stops_at_an_exact_zero_gap():
    """'Stop when the certified gap is at most tol': min <c, x> over the simplex is reached
    by one full step (closed form min(c)), where the gap is exactly 0."""
    cvec = np.array([0.3, -1.2, 0.7, 0.1])
    f = FunctionObjective(lambda x: float(cvec @ x), lambda x: cvec, shape=(4,))
    res = frank_wolfe(f, ProbabilitySimplex(dim=4), x0=np.full(4, 0.25), step_size="agnostic",
                      tol=0.0, max_iter=100)
    assert res.fun == cvec.min() and res.gap == 0.0
    assert res.status == "converged" and res.nit == 1


def test_rtol_stops_only_when_the_documented_relative_rule_holds():
    """Docs: stop when gap <= rtol * (|f| - gap), which certifies f - f* <= rtol |f*|."""
    n = 20
    rng = np.random.default_rng(1)
    y = rng.random(n) + 5.0
    f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y, shape=(n,))
    for rtol in (0.01, 0.05, 0.1, 0.2, 0.4):
        res = frank_wolfe(f, ProbabilitySimplex(dim=n), rtol=rtol, tol=0.0, max_iter=10_000,
                          step_size="agnostic")
        assert res.status == "converged"
        g = res.x - y
        gap = _simplex_gap(g, res.x)
        assert gap <= rtol * (abs(res.fun) - gap) * (1 + 1e-12)


def test_best_gap_is_fun_minus_the_best_dual_bound():
    """Docs: best_gap = fun - max_k (f(x_k) - gap_k), never larger than gap; the history
    holds f(x_k) and gap_k."""
    rng = np.random.default_rng(2)
    y = rng.random(30)
    y /= y.sum()  # an interior optimum: vanilla FW zig-zags, its gap oscillates
    f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y, shape=(30,))
    res = frank_wolfe(f, ProbabilitySimplex(dim=30), max_iter=60, tol=0.0, step_size="agnostic")
    h = res.history
    ok = np.isfinite(h["gap"])
    dual = float(np.max(h["fun"][ok] - h["gap"][ok]))
    assert res.dual_bound == pytest.approx(dual, rel=1e-12, abs=1e-14)
    assert res.best_gap == pytest.approx(min(res.gap, res.fun - dual), rel=1e-9, abs=1e-14)
    assert res.best_gap < res.gap  # this run's gap oscillates: the bound is tighter


def test_no_dual_bound_for_an_objective_declared_nonconvex():
    """Docs: 'f - gap bounds f* below only for convex f'."""
    f0, Q, c = _qp()
    f = FunctionObjective(f0.value, f0.gradient, shape=(30,), convex=False)
    res = frank_wolfe(f, ProbabilitySimplex(dim=30), max_iter=20, tol=0.0)
    assert res.dual_bound == -np.inf


def test_negative_curvature_on_a_short_step_is_reported():
    """f(x) = <c, x> - 0.5 ||x||^2 declared convex: after the first (short, gamma < 1) step,
    f is below its tangent bound f0 + gamma <g, d> by gamma^2 ||d||^2 / 2 > 0."""
    cvec = np.array([0.0, 0.05, 0.3, 0.2])
    f = FunctionObjective(lambda x: float(cvec @ x - 0.5 * x @ x), lambda x: cvec - x, shape=(4,))
    with pytest.raises(NonConvexError):
        frank_wolfe(f, ProbabilitySimplex(dim=4), x0=np.array([0.0, 0.0, 0.5, 0.5]),
                    step_size=ShortStep(smoothness=10.0), tol=0.0, max_iter=5)


def test_monitor_rtol_rule_is_relative_to_the_lower_bound():
    """Monitor docs: stop when gap <= rtol * (|f| - gap) (|f*| >= |f| - gap), not rtol |f|."""
    from frankwolfe.monitor import Monitor
    mon = Monitor("fw", tol=0.0, rtol=0.5)
    assert mon.stop_reason(1, 0.45, fun=1.0) is None       # 0.45 > 0.5 * 0.55
    assert mon.stop_reason(1, 0.30, fun=1.0) == "converged"  # 0.30 <= 0.5 * 0.70
    assert not mon.converged(0.45, 1.0) and mon.converged(0.3, 1.0)


@pytest.mark.parametrize("method", ["bpcg", "bcg", "rafw", "fw"])
def test_the_closing_certificate_is_the_history_s_last_row(method):
    """A run that stops between certificates certifies its point once more; that row is
    the history's last (it kept the iteration's NaN gap: a short run plotted nothing)."""
    import frankwolfe as fw

    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(40, 30)), rng.normal(size=40)
    obj = fw.LeastSquares(A, b)
    kw = {"random_state": 0} if method == "rafw" else {}
    res = fw.minimize(obj, ProbabilitySimplex(dim=30), method=method, max_iter=50,
                      tol=1e-12, **kw)
    g = A.T @ (A @ res.x - b)
    assert res.gap == pytest.approx(float(g @ res.x - g.min()), rel=1e-9, abs=1e-14)
    h = res.history
    assert h["iteration"][-1] == res.nit and len(h) == len(set(h["iteration"]))
    assert h["gap"][-1] == res.gap and h["fun"][-1] == res.fun


def test_a_short_bcfw_run_has_its_certified_gap_in_the_history():
    import frankwolfe as fw

    dom = fw.ProductDomain([ProbabilitySimplex(dim=5) for _ in range(10)])
    obj = fw.QuadraticObjective(np.eye(50) + 0.1, np.random.default_rng(0).normal(size=50))
    res = fw.block_coordinate_frank_wolfe(obj, dom, max_iter=5, random_state=0)
    h = res.history
    assert np.isnan(h["gap"][:-1]).all() and h["gap"][-1] == res.gap > 0
    assert h["effective_passes"][-1] == res.extra["effective_passes"]

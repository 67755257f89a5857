"""The step rules without a closed form or a constant: the secant line search, the
monotonic, log-adaptive and non-convex open-loop rules.

References: scipy's bounded scalar minimizer for the line searches, the formulas of
the papers for the open-loop rules, cvxpy's optimum for whole runs.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from frankwolfe import (
    Atom,
    Direction,
    FunctionObjective,
    L1Ball,
    LogAgnostic,
    Monotonic,
    NonConvexAgnostic,
    ProbabilitySimplex,
    ProductDomain,
    Secant,
    block_coordinate_frank_wolfe,
    frank_wolfe,
    pairwise_frank_wolfe,
)
from frankwolfe.step_size import STEP_RULES, Adaptive, Agnostic, Armijo, make_step_size


def _logistic(rng, m=60, n=15):
    """A logistic regression (no closed-form line search): its objective and data."""
    A = rng.standard_normal((m, n))
    y = np.where(rng.standard_normal(m) > 0, 1.0, -1.0)

    def fun(x):
        return float(np.mean(np.logaddexp(0.0, -y * (A @ x))))

    def grad(x):
        s = -y / (1.0 + np.exp(y * (A @ x)))
        return A.T @ s / m

    return FunctionObjective(fun, grad, shape=(n,)), A, y


def _cvxpy_logistic_l1(A, y, r):
    x = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, A @ x))) / A.shape[0]),
                      [cp.norm1(x) <= r])
    prob.solve(solver=cp.CLARABEL)
    return float(prob.value)


def _line(f, n, rng):
    x0 = ProbabilitySimplex()(rng.standard_normal(n)).to_dense() * 0.5 + 0.5 / n
    tr = f.tracker(x0)
    v = ProbabilitySimplex()(tr.gradient())  # the Frank-Wolfe vertex: a descent direction
    d = Direction.frank_wolfe(v)
    slope = float(d.dot(tr.gradient(), x=tr.x))
    return tr, d, slope, x0, v.to_dense()


@pytest.mark.parametrize("seed", range(20))
def test_secant_finds_the_line_minimum(seed):
    rng = np.random.default_rng(seed)
    f, _, _ = _logistic(rng, n=8)
    tr, d, slope, x0, v = _line(f, 8, rng)
    assert slope < 0
    gamma = Secant()(0, tr, d, slope, 1.0)
    ref = minimize_scalar(lambda g: f.value(x0 + g * (v - x0)), bounds=(0.0, 1.0),
                          method="bounded", options={"xatol": 1e-12})
    fx = f.value(x0 + gamma * (v - x0))
    # the value at the step matches the true line minimum on both sides
    assert abs(fx - ref.fun) <= 1e-10 * (1.0 + abs(ref.fun))
    if 1e-6 < ref.x < 1.0 - 1e-6:  # interior: the steps themselves agree
        assert gamma == pytest.approx(ref.x, rel=1e-4, abs=1e-6)


def test_secant_is_the_exact_step_on_a_quadratic():
    rng = np.random.default_rng(7)
    M = rng.standard_normal((10, 10))
    Q, c = M.T @ M + np.eye(10), rng.standard_normal(10)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(10,))
    for _ in range(20):
        tr, d, slope, x0, v = _line(f, 10, rng)
        dd = v - x0
        exact = min(1.0, max(0.0, -(Q @ x0 + c) @ dd / (dd @ Q @ dd)))
        gamma = Secant()(0, tr, d, slope, 1.0)
        assert gamma == pytest.approx(exact, rel=1e-7, abs=1e-10)


def test_secant_falls_back_to_golden_section_when_gradients_fail():
    """A gradient that is NaN away from x: the golden-section search on f still finds
    the line minimum of a smooth convex function."""
    rng = np.random.default_rng(3)
    c = rng.standard_normal(6)

    def fun(x):
        return float(np.sum(np.cosh(x - c)))

    x_start = np.full(6, 1.0 / 6)

    def grad(x):
        return np.sinh(x - c) if np.allclose(x, x_start) else np.full(6, np.nan)

    f = FunctionObjective(fun, grad, shape=(6,))
    tr, d, slope = f.tracker(x_start), None, None
    v = Atom.sparse([int(np.argmax(c))], [1.0], (6,), key=0)
    d = Direction.frank_wolfe(v)
    slope = float(d.dot(tr.gradient(), x=tr.x))
    gamma = Secant()(0, tr, d, slope, 1.0)
    ref = minimize_scalar(lambda g: fun(x_start + g * (v.to_dense() - x_start)),
                          bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    assert gamma == pytest.approx(ref.x, abs=1e-6)


def test_secant_refuses_an_ascent_on_a_nonconvex_line():
    """On a line where the stationary point the secant finds is a maximum above f(x),
    the step taken still decreases f (golden section) and never increases it."""
    def fun(x):
        return float(-np.cos(3.0 * x[0]) - 0.1 * x[0])

    def grad(x):
        g = np.zeros(2)
        g[0] = 3.0 * np.sin(3.0 * x[0]) - 0.1
        return g

    f = FunctionObjective(fun, grad, convex=False, shape=(2,))
    x0 = np.array([0.0, 1.0])
    tr = f.tracker(x0)
    d = Direction.frank_wolfe(Atom.sparse([0], [3.0], (2,), key=0))
    slope = float(d.dot(tr.gradient(), x=tr.x))
    gamma = Secant()(0, tr, d, slope, 1.0)
    assert fun(x0 + gamma * (np.array([3.0, 0.0]) - x0)) <= fun(x0) + 1e-15


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("rule", ["secant", "monotonic"])
def test_fw_with_rule_reaches_the_cvxpy_optimum(seed, rule):
    rng = np.random.default_rng(100 + seed)
    f, A, y = _logistic(rng)
    r = 2.0
    fstar = _cvxpy_logistic_l1(A, y, r)
    if rule == "secant":  # a line search: with pairwise steps (vanilla FW zig-zags here)
        res = pairwise_frank_wolfe(f, L1Ball(r), step_size=rule, tol=1e-7, max_iter=5000)
    else:  # an open-loop rule: vanilla FW, O(1/k)
        res = frank_wolfe(f, L1Ball(r), step_size=rule, tol=1e-3, max_iter=20000)
    assert res.status == "converged"
    # the certified gap bounds f - f* (two-sided: cvxpy's own accuracy ~1e-8)
    assert res.fun - fstar <= res.gap + 1e-7
    assert res.fun - fstar >= -1e-7
    if rule == "monotonic":
        fs = res.history["fun"]
        assert np.all(np.diff(fs[np.isfinite(fs)]) <= 1e-12 * (1 + np.abs(fs[:-1])).max())


def test_secant_costs_a_few_gradients_per_step():
    rng = np.random.default_rng(5)
    f, _, _ = _logistic(rng)
    res = pairwise_frank_wolfe(f, L1Ball(2.0), step_size="secant", tol=1e-8, max_iter=5000)
    assert res.status == "converged"
    # the docstring's claim: typically 2-5 gradients per step (one more at the iterate)
    assert res.n_gradient_calls <= 6 * max(res.nit, 1)


def test_monotonic_halves_persistently_and_keeps_f_finite():
    """A log-barrier objective, infinite outside its domain: a plain 2/(k+2) step from
    the centre jumps to a vertex where f is infinite; the monotonic rule halves until
    f is finite and decreasing, and keeps its halving count for the next step."""
    n = 4

    def fun(x):
        return float(-np.sum(np.log(x))) if np.all(x > 0) else np.inf

    def grad(x):
        return -1.0 / x

    f = FunctionObjective(fun, grad, shape=(n,))
    x0 = np.array([0.4, 0.3, 0.2, 0.1])
    tr = f.tracker(x0)
    v = ProbabilitySimplex()(tr.gradient())
    d = Direction.frank_wolfe(v)
    slope = float(d.dot(tr.gradient(), x=tr.x))
    rule = Monotonic()
    gamma = rule(0, tr, d, slope, 1.0)
    assert gamma == pytest.approx(0.5 ** rule.halvings)  # 2/(0+2) = 1, halved N times
    assert rule.halvings >= 1
    assert fun(x0 + gamma * (v.to_dense() - x0)) <= fun(x0)
    n_before = rule.halvings
    assert rule(1, tr, d, slope, 1.0) <= (2.0 / 3.0) * 0.5 ** n_before + 1e-15
    rule.reset()
    assert rule.halvings == 0


@pytest.mark.parametrize("k", [0, 1, 5, 99, 10_000])
def test_open_loop_formulas_and_their_kernels(k):
    ell = 2.0 + np.log(k + 1.0)
    assert LogAgnostic()(k, None, None, -1.0, 1.0) == pytest.approx(ell / (k + ell), rel=1e-15)
    assert NonConvexAgnostic(0.5)(k, None, None, -1.0, 1.0) == pytest.approx(
        min(1.0, 0.5 / np.sqrt(k + 1.0)), rel=1e-15)
    for rule in (LogAgnostic(), NonConvexAgnostic(0.5), Agnostic()):
        kernel, params = rule.compiled()
        assert kernel(params, float(k), -1.0, 1.0, 0.3) == pytest.approx(
            rule(k, None, None, -1.0, 0.3), rel=1e-15)


def test_log_agnostic_reaches_the_optimum_of_a_simplex_qp():
    rng = np.random.default_rng(11)
    M = rng.standard_normal((8, 8))  # 5 of 8 coordinates active at the optimum
    Q, c = M.T @ M, rng.standard_normal(8)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(8,))
    x = cp.Variable(8)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + c @ x), [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    res = frank_wolfe(f, ProbabilitySimplex(), step_size="log_agnostic", tol=1e-4,
                      max_iter=200000)
    assert res.status == "converged"
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7


def test_nonconvex_rule_drives_the_gap_down_on_a_nonconvex_objective():
    """f(x) = -||x||^2 / 2 + <c, x> on the l1 ball (concave): with 1/sqrt(k+1) the
    smallest gap seen falls (the O(1/sqrt(K)) guarantee of Lacoste-Julien, 2016)."""
    rng = np.random.default_rng(2)
    c = rng.standard_normal(10)
    f = FunctionObjective(lambda x: -0.5 * x @ x + c @ x, lambda x: -x + c, convex=False,
                          shape=(10,))
    res = frank_wolfe(f, L1Ball(1.0), step_size="nonconvex", tol=0.0, max_iter=400)
    gaps = res.history["gap"]
    gaps = gaps[np.isfinite(gaps)]
    assert np.min(gaps) < 0.1 * gaps[0]


def test_block_coordinate_runs_with_the_secant_search():
    """BCFW over a product of simplices with a logistic-like separable-coupled objective
    without a closed form reaches cvxpy's optimum."""
    rng = np.random.default_rng(4)
    n_blocks, m = 4, 5
    A = rng.standard_normal((30, n_blocks * m))
    y = np.where(rng.standard_normal(30) > 0, 1.0, -1.0)

    def fun(x):
        return float(np.mean(np.logaddexp(0.0, -y * (A @ x)))) + 0.05 * float(x @ x)

    def grad(x):
        return A.T @ (-y / (1.0 + np.exp(y * (A @ x)))) / 30 + 0.1 * x

    f = FunctionObjective(fun, grad, shape=(n_blocks * m,))
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n_blocks)])
    res = block_coordinate_frank_wolfe(f, dom, block_step="pairwise", step_size="secant",
                                       tol=1e-7, max_iter=5000, random_state=0)
    x = cp.Variable(n_blocks * m)
    cons = [x >= 0] + [cp.sum(x[i * m:(i + 1) * m]) == 1 for i in range(n_blocks)]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, A @ x))) / 30
                                  + 0.05 * cp.sum_squares(x)), cons)
    prob.solve(solver=cp.CLARABEL)
    assert res.status == "converged"
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7


def test_words_and_argument_errors():
    for word in ("secant", "monotonic", "log_agnostic", "nonconvex"):
        assert "minimize" in STEP_RULES[word] and "block" in STEP_RULES[word]
    assert isinstance(make_step_size("secant", context="minimize"), Secant)
    with pytest.raises(ValueError, match="tol"):
        Secant(tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        Secant(max_iter=0)
    with pytest.raises(ValueError, match="scale"):
        NonConvexAgnostic(-1.0)
    with pytest.raises(TypeError, match="open-loop"):
        Monotonic(Secant())
    with pytest.raises(ValueError, match="max_halvings"):
        Monotonic(max_halvings=0)
    for rule in (Armijo, Adaptive):
        for bad in (0, -3, 2.7, float("inf")):
            with pytest.raises(ValueError, match=f"{rule.__name__}: `max_backtracks`.*{bad!r}"):
                rule(max_backtracks=bad)
        with pytest.raises(TypeError, match=f"{rule.__name__}: `max_backtracks`.*'5'"):
            rule(max_backtracks="5")
        assert rule(max_backtracks=5.0).max_backtracks == 5


def test_exact_step_takes_a_negative_step_at_a_rounding_level_slope_as_zero():
    """A convex objective's exact step below 0 along a descent direction is negative
    curvature, unless the slope is within the rounding of <g, d> (n eps |g| |d|): then
    the two sums of <g, d> may differ in sign, and no step is taken."""
    from types import SimpleNamespace

    from frankwolfe import ExactStep, NonConvexError

    g, d = np.array([3.0, -4.0]), np.array([1.0, 0.0])  # |g| |d| = 5

    def tracker(gamma):
        return SimpleNamespace(has_exact_step=True, exact_step=lambda _: gamma,
                               objective=SimpleNamespace(convex=True),
                               gradient=lambda: g, direction_sq_norm=lambda _: 1.0)

    eps = np.finfo(float).eps
    rule = ExactStep()
    assert rule(0, tracker(-1e-17), d, -5 * eps, 1.0) == 0.0  # |slope| <= 2 * 2 eps * 5
    with pytest.raises(NonConvexError, match="negative curvature"):
        rule(0, tracker(-1e-17), d, -100 * eps, 1.0)
    assert rule(0, tracker(0.25), d, -1.0, 1.0) == 0.25

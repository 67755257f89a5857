"""Step rules checked against closed forms on a quadratic line."""
import numpy as np
import pytest

from frankwolfe import Direction, FunctionObjective, ProbabilitySimplex, frank_wolfe
from frankwolfe.step_size import Adaptive, Armijo, ExactStep, ShortStep


def _quadratic_line(seed=3, n=6, qscale=1.0):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q, c = qscale * (M.T @ M + np.eye(n)), 3.0 * rng.standard_normal(n)
    f = FunctionObjective(lambda x: 0.5 * x @ Q @ x + c @ x, lambda x: Q @ x + c, shape=(n,),
                          exact_step=lambda x, d, g: -(g @ d) / (d @ Q @ d))
    x0 = np.full(n, 1.0 / n)
    tr = f.tracker(x0)
    v = ProbabilitySimplex()(tr.gradient())
    d = Direction.frank_wolfe(v)
    dd = v.to_dense() - x0
    slope = float((Q @ x0 + c) @ dd)
    curv = float(dd @ Q @ dd)  # phi(gamma) = f0 + gamma slope + gamma^2 curv / 2, exactly
    return f, tr, d, slope, curv, dd @ dd, x0, dd


def test_adaptive_is_the_exact_step_on_a_quadratic_when_started_at_its_curvature():
    """Docstring: a failed trial jumps to the curvature it measures, 'exact' on quadratics.
    With L0 = curv / ||d||^2 the first trial (M = 0.9 L0) fails, the jump lands on L0, and
    the accepted step is the closed-form line minimum -slope / curv."""
    f, tr, d, slope, curv, dd, x0, _ = _quadratic_line()
    assert slope < 0
    exact = -slope / curv
    assert exact < 1.0  # an interior minimum on the segment
    rule = Adaptive(L0=curv / dd)
    gamma = rule(0, tr, d, slope, 1.0)
    assert gamma == pytest.approx(exact, rel=1e-9)
    assert rule.L == pytest.approx(curv / dd, rel=1e-9)


def test_adaptive_never_accepts_a_step_beyond_the_quadratic_bound():
    """An estimate M below the true curvature must be rejected: the accepted step never
    exceeds the line minimum by more than rounding (f(x + gamma d) <= f0 + gamma slope +
    gamma^2 M dd / 2 fails for M < curv / dd)."""
    f, tr, d, slope, curv, dd, x0, _ = _quadratic_line(seed=5)
    exact = -slope / curv
    for scale in (0.6, 0.75, 0.95):
        rule = Adaptive(L0=scale * curv / dd / 0.9, eta=0.9)
        gamma = rule(0, tr, d, slope, 1.0)
        assert gamma <= min(exact, 1.0) * (1 + 1e-9)


def test_armijo_accepts_the_first_sufficient_decrease_trial():
    """Armijo halves gamma from gamma_max until phi(gamma) <= phi(0) + c gamma slope; on a
    quadratic line that test is a closed form."""
    f, tr, d, slope, curv, dd, x0, _ = _quadratic_line()
    c, beta = 0.4, 0.5
    # phi(g) - phi(0) - c g slope = g ((1 - c) slope + g curv / 2) <= 0
    # <=>  g <= 2 (c - 1) slope / curv
    bound = 2.0 * (c - 1.0) * slope / curv
    expected = 1.0
    while expected > bound:
        expected *= beta
    assert Armijo(c=c, beta=beta)(0, tr, d, slope, 1.0) == pytest.approx(expected, rel=1e-12)


def test_armijo_returns_zero_when_backtracking_runs_out():
    """Documented: 'a step of 0 is returned when it runs out'."""
    f, tr, d, slope, curv, dd, x0, _ = _quadratic_line(qscale=10.0)
    bound = 2.0 * (1e-4 - 1.0) * slope / curv
    assert bound < 1.0  # so the first (and only) trial gamma = 1 fails
    assert Armijo(max_backtracks=1)(0, tr, d, slope, 1.0) == 0.0


def test_short_step_with_zero_smoothness_takes_the_whole_step_on_a_linear_objective():
    """Documented: 'L = 0 (a linear objective) makes every descent step gamma_max'.
    min <c, x> over the simplex is min(c), at the vertex e_argmin: one step reaches it."""
    c = np.array([0.3, -1.2, 0.7, 0.1])
    f = FunctionObjective(lambda x: float(c @ x), lambda x: c, shape=(4,))
    res = frank_wolfe(f, ProbabilitySimplex(dim=4), x0=np.full(4, 0.25),
                      step_size=ShortStep(smoothness=0.0), tol=1e-12, max_iter=5)
    assert res.fun == pytest.approx(c.min(), abs=1e-12)
    assert res.status == "converged"


def test_exact_step_is_zero_along_an_ascent_direction():
    """Clipped to [0, gamma_max]: along an ascent direction (slope > 0) the step is 0."""
    f, tr, d, slope, curv, dd, x0, _ = _quadratic_line()
    up = Direction.away(ProbabilitySimplex()(tr.gradient()))  # x - v: slope -slope > 0
    assert ExactStep()(0, tr, up, -slope, 1.0) == 0.0

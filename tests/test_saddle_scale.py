"""Saddle-point Frank-Wolfe at payoff and domain scales far from 1.

A strongly convex-concave game scaled by ``s`` has the same saddle point and
``s`` times the value: the fully corrective solver, the backtracking step rule
and the away-step bookkeeping must reach the same relative gap at ``s = 2**-40``
(or ``1e-12``) as at ``s = 1``, with bit-identical iterates for a power of two;
the value is checked against cvxpy, from both sides of the min-max.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.restricted_game import gram_factor, solve_quadratic_game

cp = pytest.importorskip("cvxpy")

_RNG = np.random.default_rng(3)
M = _RNG.standard_normal((8, 7))
A = 0.3 * _RNG.standard_normal(8)
B = 0.3 * _RNG.standard_normal(7)
MU_X, MU_Y = 0.5, 0.7
TINY = 2.0 ** -40


def _game(s: float, coupling: float = 1.0) -> fw.BilinearObjective:
    return fw.BilinearObjective(s * coupling * M, s * A, s * B, mu_x=MU_X * s, mu_y=MU_Y * s)


def _domains(radius: float = 1.0) -> tuple[fw.ProbabilitySimplex, fw.ProbabilitySimplex]:
    return fw.ProbabilitySimplex(radius=radius, dim=8), fw.ProbabilitySimplex(radius=radius, dim=7)


def _cvxpy_values() -> tuple[float, float]:
    """``min_x max_y L`` and ``max_y min_x L`` of the unscaled game, each inner
    problem over the simplex replaced by its Lagrange dual (one multiplier for
    the sum), solved by cvxpy: two problems independent of the solver's QP."""
    x, lam = cp.Variable(8, nonneg=True), cp.Variable()
    upper = cp.Problem(cp.Minimize(
        A @ x + MU_X / 2 * cp.sum_squares(x) + lam
        + cp.sum_squares(cp.pos(M.T @ x + B - lam)) / (2 * MU_Y)), [cp.sum(x) == 1])
    y, kap = cp.Variable(7, nonneg=True), cp.Variable()
    lower = cp.Problem(cp.Maximize(
        B @ y - MU_Y / 2 * cp.sum_squares(y) + kap
        - cp.sum_squares(cp.pos(kap - M @ y - A)) / (2 * MU_X)), [cp.sum(y) == 1])
    solver = "CLARABEL" if "CLARABEL" in cp.installed_solvers() else None
    return float(upper.solve(solver=solver)), float(lower.solve(solver=solver))


@pytest.fixture(scope="module")
def value() -> float:
    minmax, maxmin = _cvxpy_values()
    assert abs(minmax - maxmin) <= 1e-7  # no duality gap: both sides agree
    return 0.5 * (minmax + maxmin)


def _check_value(res, s: float, value: float, slack: float) -> None:
    """The certified bracket holds the cvxpy value, and ``fun`` is within the gap."""
    assert res.extra["value_lower"] / s <= value + slack
    assert res.extra["value_upper"] / s >= value - slack
    assert abs(res.fun / s - value) <= res.gap / s + slack


def _same_run(a, b, s: float) -> None:
    assert a.nit == b.nit
    assert np.array_equal(a.x, b.x) and np.array_equal(a.extra["y"], b.extra["y"])
    assert b.fun == math.ldexp(a.fun, round(math.log2(s)))
    assert b.gap == math.ldexp(a.gap, round(math.log2(s)))


# --- item 1: fully corrective, the restricted quadratic game -------------------------

def _corrective(s: float, radius: float = 1.0):
    X, Y = _domains(radius)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cvxpy's "may be inaccurate" on the old path
        return fw.saddle_point_frank_wolfe(_game(s), X, Y, corrective=True, tol=1e-9 * s,
                                           max_iter=300)


def test_corrective_small_payoffs_converge_like_unit_payoffs(value):
    ref = _corrective(1.0)
    assert ref.status == "converged" and ref.gap <= 1e-9
    _check_value(ref, 1.0, value, 1e-7)
    for s in (TINY, 1e-12):
        res = _corrective(s)
        assert res.status == "converged", (s, res.status, res.gap / s)
        assert res.gap / s <= 1e-9
        assert res.nit == ref.nit
        _check_value(res, s, value, 1e-7)
        np.testing.assert_allclose(res.x, ref.x, atol=1e-12)
    _same_run(ref, _corrective(TINY), TINY)


def test_corrective_small_domain():
    """``L(x / r, y / r)`` over simplices of radius ``r``: the same game in other
    units; the atoms' Gram matrix ``r^2 I`` must keep its rank."""
    ref = _corrective(1.0)
    r = 2.0 ** -30
    X, Y = _domains(r)
    L = fw.BilinearObjective(M / r**2, A / r, B / r, mu_x=MU_X / r**2, mu_y=MU_Y / r**2)
    res = fw.saddle_point_frank_wolfe(L, X, Y, corrective=True, tol=1e-9, max_iter=300)
    assert res.status == "converged" and res.gap <= 1e-9
    np.testing.assert_allclose(res.x / r, ref.x, atol=1e-12)
    assert res.fun == pytest.approx(ref.fun, abs=1e-12)


def test_gram_factor_rank_is_relative():
    for r in (1.0, 1e-8, 1e8):
        K = r * r * np.array([[2.0, 1.0], [1.0, 2.0]])
        R = gram_factor(K)
        assert R.shape == (2, 2)
        np.testing.assert_allclose(R.T @ R, K, rtol=1e-12)


def test_quadratic_game_power_of_two_scaling_is_exact():
    H = M + A[:, None] + B[None, :]
    R1, R2 = np.eye(8), np.eye(7)
    u, v, val = solve_quadratic_game(H, R1, R2, MU_X, MU_Y)
    for e in (-40, 30):
        us, vs, vals = solve_quadratic_game(np.ldexp(H, e), R1, R2, math.ldexp(MU_X, e),
                                            math.ldexp(MU_Y, e))
        assert np.array_equal(us, u) and np.array_equal(vs, v)
        assert vals == math.ldexp(val, e)


# --- item 2: the backtracking rule -----------------------------------------------------

def _backtracking(s: float, *, away: bool = False, coupling: float = 1.0,
                  max_iter: int = 1000):
    X, Y = _domains()
    return fw.saddle_point_frank_wolfe(_game(s, coupling), X, Y, away=away,
                                       step_size="saddle_backtracking", tol=1e-9 * s,
                                       max_iter=max_iter)


def test_backtracking_small_payoffs_take_the_same_steps(value):
    ref = _backtracking(1.0)
    _check_value(ref, 1.0, value, 1e-9)
    _same_run(ref, _backtracking(TINY), TINY)
    res = _backtracking(1e-12)
    assert res.gap / 1e-12 <= 2.0 * ref.gap
    _check_value(res, 1e-12, value, 1e-9)


class _Offset(fw.SaddleObjective):
    """``L0`` evaluated as ``(T + L0) - T``: values small by cancellation of large
    terms, rounded to a grid of ``eps T`` (the gradients are exact)."""

    def __init__(self, L0: fw.SaddleObjective, T: float) -> None:
        self.L0, self.T = L0, T

    def value(self, x, y):
        return (self.T + self.L0.value(x, y)) - self.T

    def gradient_x(self, x, y):
        return self.L0.gradient_x(x, y)

    def gradient_y(self, x, y):
        return self.L0.gradient_y(x, y)


def _offset_run(T: float, max_iter: int):
    X, Y = _domains()
    return fw.saddle_point_frank_wolfe(_Offset(_game(1.0, 0.1), T), X, Y, x0=np.eye(8)[0],
                                       y0=np.eye(7)[0], away=True,
                                       step_size="saddle_backtracking", tol=1e-12,
                                       max_iter=max_iter)


def test_backtracking_cancellation_still_steps():
    # values rounded to eps * 1e6: the curvature test meets rounding near the end
    res = _offset_run(1e6, 1000)
    assert res.status == "converged" and res.gap <= 1e-12
    # values all rounded to 0: the test cannot tell, the steps must go on (a rule
    # that rejects every trial would halve gamma to nothing, two calls per trial)
    res = _offset_run(1e20, 50)
    assert res.n_function_calls <= 8 * res.nit
    assert res.gap < 2.0


# --- item 3: SP-AFW with the backtracking rule (documented limitation) ---------------

def test_backtracking_away_converges_on_weakly_coupled_game():
    for s in (1.0, TINY):
        res = _backtracking(s, away=True, coupling=0.2, max_iter=3000)
        assert res.status == "converged" and res.gap / s <= 1e-9


# --- item 4: the away variant's vertex and drift checks on a small domain -------------

@pytest.mark.parametrize(("r", "off"), [(2.0 ** -30, 1e-5), (2.0 ** -50, 1e-3)])
def test_away_start_near_vertex_of_small_domain(r, off):
    """A start ``off`` (relative) from a vertex is no vertex at any radius: the
    active sets sum to the result, and a power-of-two radius runs as radius 1."""

    def run(radius):
        X, Y = _domains(radius)
        L = fw.BilinearObjective(M / radius**2, A / radius, B / radius,
                                 mu_x=MU_X / radius**2, mu_y=MU_Y / radius**2)
        x0 = np.zeros(8)
        x0[0], x0[1] = radius * (1 - off), radius * off
        return fw.saddle_point_frank_wolfe(L, X, Y, x0=x0, away=True, tol=1e-9, max_iter=2000)

    ref, res = run(1.0), run(r)
    Sx, Sy = res.active_set
    assert np.abs(res.x - Sx.x).max() <= 1e-12 * r
    assert np.abs(res.extra["y"] - Sy.x).max() <= 1e-12 * r
    assert res.nit == ref.nit
    assert np.array_equal(res.x, ref.x * r) and res.fun == ref.fun

"""The value-reading step rules (Armijo, Monotonic, Adaptive) are scale-equivariant.

Their rounding allowances follow the size of the values compared, with no floor in
units of ``f``: ``f`` scaled by a power of two (which changes no rounding) gives the
same iterates bit for bit.  A former floor of ``16 eps`` exceeded the whole change of
``f`` once ``|f| << 1``, so Armijo took ``gamma_max`` every step and oscillated (a
relative gap of 0.19 at ``f`` scaled by 2^-40, against 1.6e-7 unscaled).  Where ``f``
is near 0 by cancellation of large terms its values round by more than the allowance;
on a convex ``f`` the rules then decide through the directional derivative, and runs
still reach their tolerance.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.step_size import Adaptive, Armijo, Monotonic

N = 12
SCALES = (1.0, 2.0 ** -40, 2.0 ** 40)


def _qp(domain: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, N))
    Q = A.T @ A + 0.1 * np.eye(N)
    # the unconstrained minimizer lies outside the domain: the solution is on its boundary
    centre = np.ones(N) / N if domain == "simplex" else 2.0 * np.ones(N) / N
    c = -Q @ (centre + 0.05 * rng.standard_normal(N))
    return Q, c


def _domain(domain: str) -> fw.LMO:
    return fw.ProbabilitySimplex(dim=N) if domain == "simplex" else fw.L1Ball(dim=N, radius=1.0)


def _cvxpy_optimum(Q: np.ndarray, c: np.ndarray, domain: str) -> float:
    x = cp.Variable(N)
    cons = [x >= 0, cp.sum(x) == 1] if domain == "simplex" else [cp.norm1(x) <= 1.0]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    return float(prob.value)


RULES = {"armijo": Armijo, "monotonic": Monotonic, "adaptive": Adaptive}


@pytest.mark.parametrize("domain", ["simplex", "l1"])
@pytest.mark.parametrize("method", ["away", "pairwise", "fw"])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_power_of_two_scaling_gives_the_same_iterates(rule, method, domain):
    Q, c = _qp(domain)
    runs = {}
    for s in SCALES:
        runs[s] = fw.minimize(fw.QuadraticObjective(s * Q, s * c), _domain(domain),
                              method=method, step_size=RULES[rule](), tol=1e-8 * s,
                              max_iter=600)
    base = runs[1.0]
    for s in SCALES[1:]:
        r = runs[s]
        assert r.nit == base.nit, (s, r.nit, base.nit)
        assert np.array_equal(r.x, base.x), (s, np.max(np.abs(r.x - base.x)))
        assert r.fun == s * base.fun and r.gap == s * base.gap
    # the small-scale answer against an independent solver: f - f* between rounding below
    # 0 and the certified gap above it (relative to the scale)
    fstar = _cvxpy_optimum(Q, c, domain)
    small = runs[2.0 ** -40]
    err = (small.fun - 2.0 ** -40 * fstar) / 2.0 ** -40
    assert -1e-9 <= err <= small.gap / 2.0 ** -40 + 1e-9, (err, small.gap / 2.0 ** -40)
    if method != "fw":  # vanilla FW's sublinear rate stays short of 1e-8 in 600 steps
        assert small.gap / 2.0 ** -40 <= 1e-6


def _cancellation_problems():
    """Objectives whose optimum value is 0 while their terms are of order 1."""
    Q, c = _qp("simplex")
    fstar = _cvxpy_optimum(Q, c, "simplex")
    rng = np.random.default_rng(1)
    A = rng.standard_normal((20, N))
    b = A @ rng.dirichlet(np.ones(N))  # an exact fit inside the simplex: f* = 0

    def quadratic(s):
        return fw.QuadraticObjective(s * Q, s * c, -s * fstar)

    def function(s):
        sQ, sc, sf = s * Q, s * c, s * fstar
        # evaluated whole every time: the values round at eps * |terms|, not eps * |f|
        return fw.FunctionObjective(lambda x: 0.5 * float(x @ sQ @ x) + float(sc @ x) - sf,
                                    lambda x: sQ @ x + sc)

    def least_squares(s):
        r = s ** 0.5  # a power of two: exact
        return fw.LeastSquares(r * A, r * b)

    def function_least_squares(s):
        r = s ** 0.5
        rA, rb = r * A, r * b
        return fw.FunctionObjective(lambda x: float(np.sum((rA @ x - rb) ** 2)),
                                    lambda x: 2.0 * rA.T @ (rA @ x - rb))

    # the optimum values, from cvxpy (the QP, shifted by its own optimum: 0 within its
    # accuracy) and exactly (the exact fit)
    return {"quadratic": (quadratic, 0.0), "function": (function, 0.0),
            "least_squares": (least_squares, 0.0),
            "function_least_squares": (function_least_squares, 0.0)}


_CANCELLATION = _cancellation_problems()


@pytest.mark.parametrize("kind", sorted(_CANCELLATION))
@pytest.mark.parametrize("method", ["away", "pairwise"])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_optimum_value_zero_by_cancellation_reaches_tol(rule, method, kind):
    make, fstar = _CANCELLATION[kind]
    runs = {}
    for s in (1.0, 2.0 ** -40):
        r = fw.minimize(make(s), fw.ProbabilitySimplex(dim=N), method=method,
                        step_size=RULES[rule](), tol=1e-8 * s, max_iter=1500)
        # about 150-850 iterations; Armijo and Monotonic with the old floor ran out of
        # 5000 short of 1e-8 at s = 1 on most of these
        assert r.status == fw.Status.CONVERGED, (s, r.status, r.nit, r.gap / s)
        err = (r.fun - s * fstar) / s
        assert -1e-9 <= err <= r.gap / s + 1e-9, (s, err, r.gap / s)
        runs[s] = r
    assert runs[2.0 ** -40].nit == runs[1.0].nit
    assert np.array_equal(runs[2.0 ** -40].x, runs[1.0].x)


def test_monotonic_on_a_nonconvex_objective_is_scale_equivariant():
    # not declared convex: a trial within 16 ulps of |f| above f passes, and past that N
    # grows (no derivative check: convexity is what makes the derivative a bound)
    Q, c = _qp("simplex")
    for s in SCALES:
        obj = fw.QuadraticObjective(s * Q, s * c, convex=False)
        r = fw.minimize(obj, fw.ProbabilitySimplex(dim=N), method="away",
                        step_size=Monotonic(), tol=1e-8 * s, max_iter=300)
        assert np.isfinite(r.fun)
        if s == 1.0:
            base = r
        else:
            assert r.nit == base.nit and np.array_equal(r.x, base.x)

"""The loop's oracle and convexity checks at any scale of ``f``.

The negative-gap check (a wrong oracle) and the non-convexity detector allow
rounding relative to the products compared and to the run's largest ``|f|``, with no
absolute term: ``+1`` in units of ``f`` let through, at ``f ~ 2**-40``, a gap of
``-1e-12`` (relative ``-1``) and any fall below the tangent.  ``f`` scaled by a power
of two is caught, or not, as at scale 1; a correct run is never flagged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import NonConvexError, Objective, OracleError

N = 6
P = np.linspace(0.1, 0.6, N)
SCALES = (-40, 0, 40)


def _projection_onto_simplex(p: np.ndarray) -> np.ndarray:
    """Euclidean projection on the unit simplex by the sort rule (Held, Wolfe and
    Crowder; Duchi et al. 2008): independent of the solvers."""
    u = np.sort(p)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - css / np.arange(1, p.size + 1) > 0)[-1]
    return np.maximum(p - css[k] / (k + 1), 0.0)


def _objective(s: float) -> fw.QuadraticObjective:
    """``s/2 |x - P|^2`` up to a constant: ``s/2 x'x - s <P, x>``."""
    return fw.QuadraticObjective(s * np.eye(N), -s * P)


class _Maximizer(fw.ProbabilitySimplex):
    """A wrong oracle: the maximizer of ``<g, .>``."""

    def __call__(self, direction):
        return super().__call__(-np.asarray(direction))


@pytest.mark.parametrize("e", SCALES)
def test_wrong_oracle_is_caught_at_every_scale(e):
    s = math.ldexp(1.0, e)
    with pytest.raises(OracleError, match="certifies nothing"):
        fw.frank_wolfe(_objective(s), _Maximizer(dim=N), x0=np.full(N, 1.0 / N), max_iter=20)


METHODS = {
    "fw": fw.frank_wolfe,
    "away": fw.away_step_frank_wolfe,
    "pairwise": fw.pairwise_frank_wolfe,
    "bpcg": fw.blended_pairwise_conditional_gradient,
}


@pytest.mark.parametrize("method", list(METHODS))
def test_correct_oracle_is_never_flagged(method):
    """Deep runs (gap to 1e-13 of the scale) at three scales: no OracleError, no
    NonConvexError, the same iterates, and the projection of ``P`` as the answer."""
    solve = METHODS[method]
    exact = _projection_onto_simplex(P)
    runs = []
    for e in SCALES:
        s = math.ldexp(1.0, e)
        res = solve(_objective(s), fw.ProbabilitySimplex(dim=N), x0=np.full(N, 1.0 / N),
                    tol=1e-13 * s, max_iter=20000)
        runs.append(res)
        if method != "fw":  # vanilla FW converges sublinearly to a face
            assert res.status == "converged"
            np.testing.assert_allclose(res.x, exact, atol=1e-9)
    ref = runs[1]
    for e, res in zip(SCALES, runs):
        assert res.nit == ref.nit and np.array_equal(res.x, ref.x)
        assert res.fun == math.ldexp(ref.fun, e)


def test_zero_residual_least_squares_is_not_flagged():
    """``f`` falls from O(1) to ~0 (a consistent system): the values near 0 round
    relative to the run's first values, not to themselves."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((30, N))
    x_star = _projection_onto_simplex(rng.random(N))
    for e in SCALES:
        s = math.ldexp(1.0, e)
        res = fw.away_step_frank_wolfe(fw.LeastSquares(s * A, s * (A @ x_star)),
                                       fw.ProbabilitySimplex(dim=N), tol=1e-20 * s * s,
                                       max_iter=5000)
        np.testing.assert_allclose(res.x, x_star, atol=1e-7)


class _Concave(Objective):
    """``s (<c, x> - |x|^2 / 2)``: concave, declared convex."""

    def __init__(self, s: float) -> None:
        self.s = s
        self.c = np.linspace(0.0, 0.3, N)

    def value(self, x):
        return self.s * (float(self.c @ x) - 0.5 * float(x @ x))

    def gradient(self, x):
        return self.s * (self.c - x)


@pytest.mark.parametrize("e", SCALES)
def test_negative_curvature_is_caught_at_every_scale(e):
    s = math.ldexp(1.0, e)
    with pytest.raises(NonConvexError, match="negative curvature"):
        fw.frank_wolfe(_Concave(s), fw.ProbabilitySimplex(dim=N), x0=np.full(N, 1.0 / N),
                       step_size="agnostic", tol=1e-9 * s, max_iter=50)


@pytest.mark.parametrize("method", ["fw", "cfw", "bfw", "dicg"])
def test_drifted_values_are_replaced_at_small_scale_as_at_scale_one(method):
    """Least squares over a box of 1e8 around an O(1) optimum (the incremental ``Ax``
    drifts, see tests/test_bad_input.py): the closing check replaces the drifted f and
    gap by exact ones at ``f ~ 2**-40`` as at scale 1.  With allowances of ``1e-10 *
    (|f| + 1)`` fw and bfw said "converged" at gap 1e-8 where the exact gap is 210.
    Checked against f and the gap computed here at the returned point."""
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(20, 8)), rng.normal(size=20)
    box = fw.Box(-1e8 * np.ones(8), 1e8 * np.ones(8))
    runs = []
    for e in (0, -20):  # f scaled by 4**e
        t = math.ldexp(1.0, e)
        res = fw.minimize(fw.LeastSquares(t * A, t * b), box, method=method, max_iter=2000,
                          tol=1e-8 * t * t)
        r = t * A @ res.x - t * b
        g = t * A.T @ r
        assert res.fun == pytest.approx(0.5 * float(r @ r), rel=1e-12)
        assert res.gap == pytest.approx(float(g @ res.x + 1e8 * np.abs(g).sum()), rel=1e-6)
        assert res.status == "stalled"
        runs.append(res)
    ref, small = runs
    assert np.array_equal(small.x, ref.x) and small.nit == ref.nit
    assert small.fun == math.ldexp(ref.fun, -40) and small.gap == math.ldexp(ref.gap, -40)

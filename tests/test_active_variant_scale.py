"""Active-set methods on domains of radius far from 1.

``f_r(x) = f_1(x / r)`` over the domain scaled by ``r`` is the same problem in other
units: for a power of two ``r`` every product of the run scales exactly, so the
iterates must be those of radius 1 times ``r``, bit for bit, and the returned active
set must sum to the returned ``x``.  The start lies ``1e-5`` (relative) from a vertex:
an absolute floor in the vertex test (``1e-12 * max(1, |x|)``) took it for the vertex
at radius ``2**-30`` while the run kept ``x0``, so the active set disagreed with ``x``.
"""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import ActiveSet, OracleError

_RNG = np.random.default_rng(11)
N, M = 12, 20
A = _RNG.standard_normal((M, N))
B = _RNG.standard_normal(M)
R = 2.0 ** -30
OFF = 1e-5

METHODS = {
    "away": fw.away_step_frank_wolfe,
    "pairwise": fw.pairwise_frank_wolfe,
    "bpcg": fw.blended_pairwise_conditional_gradient,
    "bcg": fw.blended_conditional_gradient,
    "fcfw": fw.fully_corrective_frank_wolfe,
    "compiled_pairwise": fw.compiled_pairwise_frank_wolfe,
}


def _domain(kind: str, r: float):
    if kind == "simplex":
        return fw.ProbabilitySimplex(radius=r, dim=N)
    if kind == "l1":
        return fw.L1Ball(radius=r, dim=N)
    return fw.Box(np.zeros(N), np.full(N, r))


def _start(kind: str, r: float) -> np.ndarray:
    """``OFF`` (relative) from the vertex ``r e_0``: no vertex at any radius."""
    x = np.zeros(N)
    x[0] = r * (1 - OFF)
    if kind != "box":  # on the simplex and the l1 ball, the rest on a neighbour
        x[1] = r * OFF
    return x


def _run(method: str, kind: str, r: float, **options):
    return METHODS[method](fw.LeastSquares(A / r, B), _domain(kind, r), x0=_start(kind, r),
                           max_iter=300, tol=1e-10, **options)


CASES = [(m, k) for m in METHODS for k in ("simplex", "l1", "box")
         if not (m == "compiled_pairwise" and k == "box")]


@pytest.mark.parametrize(("method", "kind"), CASES)
def test_small_radius_runs_as_radius_one(method, kind):
    ref, res = _run(method, kind, 1.0), _run(method, kind, R)
    S = res.active_set
    # the active set is the result's point (relative to the radius)
    assert np.abs(res.x - S.x).max() <= 1e-12 * R
    assert np.abs(ref.x - ref.active_set.x).max() <= 1e-12
    # the same run in other units, bit for bit
    assert res.nit == ref.nit and res.status == ref.status
    assert np.array_equal(res.x, ref.x * R)
    assert res.fun == ref.fun and res.gap == ref.gap


def test_small_radius_with_frequent_drift_control():
    """The periodic re-sum compares the tracker with the active set relative to the
    atoms (``sum w_a |a|``), not to ``max(1, |x|)``: the same resyncs at both radii."""
    ref = _run("away", "l1", 1.0, resum_every=3)
    res = _run("away", "l1", R, resum_every=3)
    assert res.extra["n_resyncs"] == ref.extra["n_resyncs"]
    assert np.array_equal(res.x, ref.x * R) and res.fun == ref.fun


@pytest.mark.parametrize("kind", ["simplex", "l1", "box"])
def test_result_is_the_constrained_least_squares_solution(kind):
    """The radius-1 runs the others are compared with solve the problem: the value
    matches cvxpy's (an independent solver)."""
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(N)
    cons = {"simplex": [x >= 0, cp.sum(x) == 1], "l1": [cp.norm1(x) <= 1],
            "box": [x >= 0, x <= 1]}[kind]
    best = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - B)), cons).solve()
    res = METHODS["fcfw"](fw.LeastSquares(A, B), _domain(kind, 1.0), x0=_start(kind, 1.0),
                          max_iter=300, tol=1e-10)
    assert res.status == "converged"
    assert abs(res.fun - best) <= 1e-6 * abs(best)
    small = _run("away", kind, R)
    assert small.fun <= best + 1e-6 * abs(best) + small.gap


class _WrongDecompose(fw.ProbabilitySimplex):
    """A decomposition that answers the first vertex for every point."""

    def decompose(self, x):
        return ActiveSet.from_vertex(self(-np.eye(N)[0]))


@pytest.mark.parametrize("r", [1.0, R])
def test_wrong_decomposition_is_caught_at_any_radius(r):
    """The decomposition of the barycenter lands on a vertex ``0.96 r`` away: caught
    at radius ``2**-30`` as at 1 (an absolute floor allowed 1e-6 of distance)."""
    x0 = np.full(N, r / N)
    with pytest.raises(OracleError, match="decompose"):
        fw.away_step_frank_wolfe(fw.LeastSquares(A / r, B), _WrongDecompose(radius=r, dim=N),
                                 x0=x0, max_iter=5)

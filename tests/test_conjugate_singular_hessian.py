"""CFW and BFW on convex quadratics with a singular (low-rank PSD) Hessian.

The conjugate point ``s`` sits next to ``x`` along the null space of ``Q``, where the
tracker's image ``Q s - Q x`` is all rounding of the products ``Q s`` and ``Q x``.  The
curvature of such a direction came out at -8e-20 and was refused as negative
(NonConvexError) on objectives declared convex; a truly indefinite ``Q`` must still be
refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.errors import NonConvexError


def _cvxpy_optimum(Q, c, name, n, radius):
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(n)
    cons = {"l2": [cp.norm(x, 2) <= radius],
            "simplex": [x >= 0, cp.sum(x) == 1],
            "box": [x >= -1, x <= 2],
            "l1": [cp.norm(x, 1) <= radius]}[name]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return float(prob.value)


def _domain(name, n, radius):
    return {"l2": lambda: fw.L2Ball(radius, dim=n),
            "simplex": lambda: fw.ProbabilitySimplex(dim=n),
            "box": lambda: fw.Box(-1.0, 2.0, dim=n),
            "l1": lambda: fw.L1Ball(radius, dim=n)}[name]()


def _check_certified(f, res, fstar):
    """The result's gap certifies ``f(x) - f*`` and ``f(x)`` is not below ``f*``, both to
    cvxpy's accuracy."""
    fx = f.value(res.x)
    slack = 1e-8 * max(1.0, abs(fstar))
    assert -slack <= fx - fstar <= res.gap + slack


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_rank_one_hessian_on_l2_ball(method):
    rg = np.random.default_rng(5)
    a = rg.normal(size=3)
    q = 0.5 * rg.normal(size=3)
    Q = np.outer(a, a)
    f = fw.QuadraticObjective(Q, q)
    res = fw.minimize(f, fw.L2Ball(1.5, dim=3), method=method, tol=1e-6)
    assert res.status == "converged"
    assert res.gap <= 1e-6
    _check_certified(f, res, _cvxpy_optimum(Q, q, "l2", 3, 1.5))


# instances of a random family (n = 10 or 30, rank 1 or 2) where cfw or bfw raised
@pytest.mark.parametrize("seed, name, method", [
    (0, "l2", "cfw"), (0, "simplex", "bfw"), (0, "box", "cfw"),
    (1, "simplex", "bfw"), (1, "box", "bfw"), (5, "l1", "cfw"), (6, "box", "bfw"),
    (11, "l1", "bfw"),
])
def test_low_rank_family(seed, name, method):
    rg = np.random.default_rng(1000 + seed)
    n, r = [10, 30][seed % 2], 1 + seed % 5
    B = rg.normal(size=(n, r))
    Q = B @ B.T
    Q = 0.5 * (Q + Q.T)
    c = rg.normal(size=n)
    radius = 1.5 if name == "l2" else 2.0
    f = fw.QuadraticObjective(Q, c)
    res = fw.minimize(f, _domain(name, n, radius), method=method, tol=1e-6, max_iter=5000)
    assert res.gap <= 1e-6
    _check_certified(f, res, _cvxpy_optimum(Q, c, name, n, radius))


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_indefinite_declared_convex_still_raises(method):
    rg = np.random.default_rng(3)
    U, _ = np.linalg.qr(rg.normal(size=(6, 6)))
    Q = U @ np.diag([2.0, 1.0, 0.5, 0.0, 0.0, -1.0]) @ U.T
    Q = 0.5 * (Q + Q.T)
    f = fw.QuadraticObjective(Q, rg.normal(size=6))
    with pytest.raises(NonConvexError, match="negative curvature"):
        fw.minimize(f, fw.L2Ball(1.0, dim=6), method=method, tol=1e-8, max_iter=2000)


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_indefinite_declared_nonconvex_runs(method):
    rg = np.random.default_rng(3)
    U, _ = np.linalg.qr(rg.normal(size=(6, 6)))
    Q = U @ np.diag([2.0, 1.0, 0.5, 0.0, 0.0, -1.0]) @ U.T
    Q = 0.5 * (Q + Q.T)
    f = fw.QuadraticObjective(Q, rg.normal(size=6), convex=False)
    res = fw.minimize(f, fw.L2Ball(1.0, dim=6), method=method, max_iter=200)
    assert np.isfinite(f.value(res.x))
    assert np.linalg.norm(res.x) <= 1.0 + 1e-12


def test_tracker_null_space_direction_counts_as_linear():
    """A direction ``s - x`` along the null space of a rank-one ``Q``, far from the origin:
    its curvature is zero, so the exact step is the whole segment, not an error."""
    from frankwolfe.atoms import Atom
    from frankwolfe.direction import Direction

    rg = np.random.default_rng(7)
    a = rg.normal(size=30)
    Q = np.outer(a, a)
    f = fw.QuadraticObjective(Q, rg.normal(size=30))
    hits = 0
    for _ in range(200):
        x = 10.0 * rg.normal(size=30)
        z = rg.normal(size=30)
        z -= (z @ a) / (a @ a) * a  # orthogonal to a: Q z = 0 up to rounding
        s = x + 1e-3 * z
        tracker = f.tracker(x)
        d = Direction.frank_wolfe(Atom(s))
        tracker.slope(d)
        curv, scale = tracker._curvature(tracker._memo_for(d))
        hits += curv < 0
        tracker.exact_step(d)  # raised NonConvexError where curv < 0
    assert hits > 0  # the rounding did come out negative: the case is exercised


@pytest.mark.parametrize("neg", [-1.0, -1e-6])
def test_tracker_small_negative_curvature_still_raises(neg):
    """A curvature far below the rounding of its products is refused on a convex-declared
    objective, even along a short direction from a far point."""
    from frankwolfe.atoms import Atom
    from frankwolfe.direction import Direction

    rg = np.random.default_rng(11)
    U, _ = np.linalg.qr(rg.normal(size=(30, 30)))
    Q = U @ np.diag(np.r_[np.zeros(29), neg]) @ U.T
    Q = 0.5 * (Q + Q.T)
    f = fw.QuadraticObjective(Q, rg.normal(size=30))
    x = 10.0 * rg.normal(size=30)
    s = x + 1e-3 * U[:, -1]
    tracker = f.tracker(x)
    d = Direction.frank_wolfe(Atom(s))
    tracker.slope(d)
    with pytest.raises(NonConvexError, match="negative curvature"):
        tracker.exact_step(d)

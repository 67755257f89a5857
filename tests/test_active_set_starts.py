"""Active-set methods started from any point of a domain with ``LMO.decompose``.

The decompositions are checked against the point itself (the weighted sum of the
atoms, recomputed here from the dense atoms) and against the oracle (each atom's key
and vector are the oracle's answer for a direction that picks that vertex); the runs
against cvxpy's optimum of the same problem, solved independently.
"""

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    LMO,
    ActiveSet,
    Box,
    CachedLMO,
    Hypercube,
    InfeasibleError,
    L1Ball,
    LinfBall,
    ProbabilitySimplex,
    QuadraticObjective,
    UnitSimplex,
)
from frankwolfe.objectives.least_squares import LeastSquares

N = 6

# (domain, center): the oracle answers the vertex a for the direction center - a
DOMAINS = {
    "simplex": (ProbabilitySimplex(2.0, dim=N), np.zeros(N)),
    "unit_simplex": (UnitSimplex(1.5, dim=N), np.zeros(N)),
    "l1": (L1Ball(1.5, dim=N), np.zeros(N)),
    "box": (Box(np.linspace(-1.0, 0.0, N), np.linspace(0.5, 2.0, N)),
            (np.linspace(-1.0, 0.0, N) + np.linspace(0.5, 2.0, N)) / 2),
    "linf": (LinfBall(0.7, dim=N), np.zeros(N)),
    "hypercube": (Hypercube(dim=N), np.full(N, 0.5)),
}


def interior_points(name, rng):
    """Points of the domain: its barycenter-like center, random interior points, and
    boundary points with ties (shared coordinates, zeros)."""
    lmo, center = DOMAINS[name]
    pts = []
    if name == "simplex":
        pts.append(np.full(N, 2.0 / N))
        for _ in range(3):
            pts.append(2.0 * rng.dirichlet(np.ones(N)))
        pts.append(np.array([1.0, 0.0, 0.5, 0.5, 0.0, 0.0]))
    elif name == "unit_simplex":
        pts += [np.zeros(N), np.full(N, 0.1), 1.5 * rng.dirichlet(np.ones(N + 1))[:N],
                np.array([0.5, 0.0, 1.0, 0.0, 0.0, 0.0])]
    elif name == "l1":
        pts += [np.zeros(N), np.full(N, 0.1) * (-1.0) ** np.arange(N),
                rng.dirichlet(np.ones(N)) * rng.choice([-1.0, 1.0], N) * 1.2,
                np.array([0.75, -0.75, 0.0, 0.0, 0.0, 0.0])]
    else:
        lo, up = lmo._bounds(N)
        pts.append(center.copy())
        for _ in range(3):
            pts.append(lo + (up - lo) * rng.random(N))
        t = np.array([0.3, 0.3, 1.0, 0.0, 0.7, 0.3])  # ties, both bounds
        pts.append(lo + (up - lo) * t)
    for x in pts:
        assert lmo.violation(x) <= 1e-12
    return pts


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_decomposition_is_exact_convex_and_keyed_as_the_oracle(name):
    lmo, center = DOMAINS[name]
    rng = np.random.default_rng(7)
    for x in interior_points(name, rng):
        S = lmo.decompose(x)
        assert isinstance(S, ActiveSet) and S.shape == x.shape
        w = S.weights
        assert np.all(w > 0)
        np.testing.assert_allclose(w.sum(), 1.0, rtol=0, atol=1e-14)
        dense = np.array([a.to_dense() for a in S.atoms])
        np.testing.assert_allclose(w @ dense, x, rtol=0,
                                   atol=1e-12 * max(1.0, float(np.linalg.norm(x))))
        assert len(set(S.keys)) == len(S)
        # the staircase decomposition of a box point has at most n + 1 vertices
        assert len(S) <= N + 2
        for a in S.atoms:
            v = lmo(center - a.to_dense())
            assert v.key == a.key
            np.testing.assert_array_equal(v.to_dense(), a.to_dense())


def test_decomposition_closed_forms():
    S = ProbabilitySimplex(2.0).decompose(np.array([0.5, 0.0, 1.5]))
    assert S.keys == [("e", 0), ("e", 2)]
    np.testing.assert_allclose(S.weights, [0.25, 0.75], rtol=1e-15)
    S = UnitSimplex(2.0).decompose(np.array([0.5, 0.0, 0.5]))
    assert S.keys == [("e", 0), ("e", 2), ("zero",)]
    np.testing.assert_allclose(S.weights, [0.25, 0.25, 0.5], rtol=1e-15)
    S = L1Ball(2.0).decompose(np.array([0.5, -1.0, 0.0]))
    # the slack 1/4 goes to +-2 e_1, merged with the -2 e_1 of x
    assert dict(zip(S.keys, S.weights)) == pytest.approx(
        {("e", 0, 1): 0.25, ("e", 1, -1): 0.625, ("e", 1, 1): 0.125}, rel=1e-15)
    S = LinfBall(1.0, dim=4).decompose(np.zeros(4))  # the center: the two opposite corners
    assert sorted(a.to_dense().tolist() for a in S.atoms) == [[-1.0] * 4, [1.0] * 4]
    np.testing.assert_allclose(S.weights, [0.5, 0.5], rtol=1e-15)
    S = Box(0.0, [1.0, 2.0]).decompose(np.array([0.25, 1.5]))
    np.testing.assert_allclose([a.to_dense() for a in S.atoms], [[0, 0], [0, 2], [1, 2]])
    np.testing.assert_allclose(S.weights, [0.25, 0.5, 0.25], rtol=1e-15)
    S = ProbabilitySimplex().decompose(np.array([[0.5, 0.0], [0.0, 0.5]]))  # matrix points
    assert S.shape == (2, 2) and S.keys == [("e", 0), ("e", 3)]


def test_box_with_a_fixed_coordinate_keeps_one_key_per_vertex():
    lmo = Box([0.0, 1.0, -1.0], [1.0, 1.0, 1.0])
    x = np.array([0.2, 1.0, 0.5])
    S = lmo.decompose(x)
    np.testing.assert_allclose(S.x, x, rtol=0, atol=1e-15)
    for a in S.atoms:
        assert lmo(0.5 * (lmo._bounds(3)[0] + lmo._bounds(3)[1]) - a.to_dense()).key == a.key


def test_decompose_refuses_infeasible_points_and_defaults_to_none():
    with pytest.raises(InfeasibleError, match=r"^x is not in the domain ProbabilitySimplex"):
        ProbabilitySimplex().decompose(np.array([0.7, 0.7]))
    with pytest.raises(InfeasibleError, match=r"^x is not in the domain L1Ball"):
        L1Ball(1.0).decompose(np.array([0.7, -0.7]))
    with pytest.raises(InfeasibleError, match=r"^x is not in the domain Box"):
        Box(0.0, 1.0).decompose(np.array([0.5, 1.5]))
    with pytest.raises(InfeasibleError, match=r"^x is not in the domain UnitSimplex"):
        UnitSimplex().decompose(np.array([-0.1, 0.5]))
    with pytest.raises(InfeasibleError, match="x is not in the domain"):
        ProbabilitySimplex().decompose(np.array([np.nan, 1.0]))
    assert fw.FlowPolytope is not None
    assert fw.L2Ball(1.0).decompose(np.zeros(3)) is None
    # a wrapped oracle's decomposition, with its keys
    S = CachedLMO(ProbabilitySimplex(dim=3)).decompose(np.full(3, 1 / 3))
    assert S.keys == [("e", 0), ("e", 1), ("e", 2)]


def test_points_within_the_tolerance_are_decomposed_inside_the_domain():
    x = np.array([0.5 + 1e-10, 0.5, -1e-10, 0.0])  # sum 1 + 1e-10, one entry below 0
    S = ProbabilitySimplex().decompose(x)
    assert np.all(S.weights > 0) and S.keys == [("e", 0), ("e", 1)]
    np.testing.assert_allclose(S.x, [0.5, 0.5, 0.0, 0.0], rtol=0, atol=1e-9)
    S = Box(0.0, 1.0).decompose(np.array([1.0 + 1e-10, -1e-10, 0.5]))
    np.testing.assert_allclose(S.x, [1.0, 0.0, 0.5], rtol=0, atol=1e-15)


def test_lasso_warm_start_writes_x_with_the_signed_vertices():
    """Closed form: ``x`` (shrunk into the ball) as ``sum |x_i|/r * sign(x_i) r e_i`` plus
    the slack on a cancelling pair ``+-r e_j``."""
    from frankwolfe.applications.lasso import warm_start

    rng = np.random.default_rng(3)
    for x in (np.zeros(5), rng.standard_normal(8) * (rng.random(8) < 0.5), np.array([0.1, -0.2])):
        for radius in (0.3, 1.0, 5.0):
            S = warm_start(x, radius)
            n1 = np.abs(x).sum()
            target = x * (radius / n1) if n1 > radius else x
            np.testing.assert_allclose(S.x, target, rtol=0, atol=1e-14 * radius)
            assert np.all(S.weights >= 0) and S.weights.sum() == pytest.approx(1.0, abs=1e-15)
            for key, atom in zip(S.keys, S.atoms):
                _, i, sign = key
                expected = np.zeros(x.size)
                expected[i] = sign * radius
                np.testing.assert_array_equal(atom.to_dense(), expected)
                assert target[i] == 0 or np.sign(target[i]) == sign or \
                    S.keys.count(("e", i, -sign)) == 1  # the slack pair


def test_starts_within_the_domains_tolerance_are_accepted():
    """A start the feasibility check accepts (its violation is relative to the domain's
    scale) is started from, decomposed onto the domain: a box of very different widths,
    a simplex point of many tiny negative entries (an interior-point solver's output)."""
    f = QuadraticObjective(np.eye(2), -np.ones(2))
    res = fw.away_step_frank_wolfe(f, Box([0.0, 0.0], [1e-3, 1e3]), np.array([1e-3 + 5e-6, 0.5]))
    assert res.success
    np.testing.assert_allclose(res.x, [1e-3, 1.0], rtol=0, atol=1e-9)  # the box's clip of 1
    n = 20001
    x0 = np.full(n, -5e-9)
    x0[:3] = np.array([0.5, 0.3, 0.2]) + 1e-4 / 3
    f = LeastSquares(np.eye(3, n), np.array([1.0, 0.0, 0.0]))
    res = fw.away_step_frank_wolfe(f, ProbabilitySimplex(dim=n), x0, tol=1e-12)
    assert res.success and res.fun == pytest.approx(0.0, abs=1e-12)  # x = e_0


# -- the methods, started from an interior point --------------------------------
def problem(name, seed=0):
    """A strongly convex quadratic whose minimizer over the domain lies on a face,
    with cvxpy's solution."""
    lmo, _ = DOMAINS[name]
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((N, N))
    Q = M.T @ M / N + 0.5 * np.eye(N)
    c = 2.0 * rng.standard_normal(N)
    x = cp.Variable(N)
    cons = {
        "simplex": lambda: [x >= 0, cp.sum(x) == lmo.radius],
        "unit_simplex": lambda: [x >= 0, cp.sum(x) <= lmo.radius],
        "l1": lambda: [cp.norm1(x) <= lmo.radius],
    }.get(name, lambda: [x >= lmo._bounds(N)[0], x <= lmo._bounds(N)[1]])()
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return QuadraticObjective(Q, c), lmo, x.value, prob.value


def bcg(f, lmo, x0, **kw):
    return fw.blended_conditional_gradient(f, lmo, x0, **kw)


def rafw(f, lmo, x0, **kw):
    return fw.randomized_away_step_frank_wolfe(f, lmo, x0, random_state=0, **kw)


METHODS = {
    "afw": fw.away_step_frank_wolfe,
    "pfw": fw.pairwise_frank_wolfe,
    "bpcg": fw.blended_pairwise_conditional_gradient,
    "bcg": bcg,
    "fcfw": fw.fully_corrective_frank_wolfe,
    "rafw": rafw,
}


def start_point(name):
    lmo, center = DOMAINS[name]
    if name == "simplex":
        return np.full(N, lmo.radius / N)  # the barycenter
    if name in ("unit_simplex", "l1"):
        return np.full(N, 0.1)
    return center


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_methods_start_from_an_interior_point_and_reach_the_optimum(method, name):
    f, lmo, x_star, f_star = problem(name)
    x0 = start_point(name)
    assert not np.allclose(lmo(-x0).to_dense(), x0)  # not a vertex
    res = METHODS[method](f, lmo, x0, tol=1e-10, max_iter=5000)
    assert str(res.status) == "converged"
    assert -1e-12 <= res.gap <= 1e-10  # a certified Frank-Wolfe gap (rounding either side)
    assert -1e-9 <= res.fun - f_star <= 1e-9 + 1e-10
    np.testing.assert_allclose(res.x, x_star, rtol=0, atol=1e-5)
    assert lmo.violation(res.x) <= 1e-12
    np.testing.assert_allclose(res.active_set.x, res.x, rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_run_starts_at_x0_with_its_decomposition(method):
    f, lmo, _, _ = problem("box")
    x0 = DOMAINS["box"][0]._bounds(N)[0] + 0.25  # inside, one level: two vertices
    res = METHODS[method](f, lmo, x0, max_iter=0)
    np.testing.assert_allclose(res.x, x0, rtol=0, atol=1e-15)
    assert sorted(res.active_set.keys) == sorted(lmo.decompose(x0).keys)


@pytest.mark.parametrize("name", ["simplex", "l1"])
def test_compiled_pairwise_starts_from_an_interior_point(name):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((10, N))
    b = rng.standard_normal(10)
    lmo, _ = DOMAINS[name]
    x = cp.Variable(N)
    cons = [x >= 0, cp.sum(x) == lmo.radius] if name == "simplex" else [
        cp.norm1(x) <= lmo.radius]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    res = fw.compiled_pairwise_frank_wolfe(LeastSquares(A, b), lmo, start_point(name),
                                           tol=1e-10, max_iter=5000)
    assert -1e-12 <= res.gap <= 1e-10
    assert -1e-9 <= res.fun - prob.value <= 1e-9 + 1e-10
    np.testing.assert_allclose(res.x, x.value, rtol=0, atol=1e-5)


def test_saddle_away_starts_from_interior_points():
    rng = np.random.default_rng(2)
    m, n = 4, 5
    M = rng.standard_normal((m, n))
    a, b = rng.standard_normal(m), rng.standard_normal(n)
    mu_x, mu_y = 1.0, 1.0
    L = fw.BilinearObjective(M, a=a, b=b, mu_x=mu_x, mu_y=mu_y)
    X, Y = ProbabilitySimplex(dim=m), ProbabilitySimplex(dim=n)
    res = fw.saddle_point_frank_wolfe(L, X, Y, x0=np.full(m, 1 / m), y0=np.full(n, 1 / n),
                                      away=True, tol=1e-9, max_iter=20000)
    assert -1e-12 <= res.gap <= 1e-9
    # the reference: max over the simplex of <g, y> - mu/2 ||y||^2 equals
    # min_nu nu + ||(g - nu)_+||^2 / (2 mu) (its Lagrangian dual), so the saddle
    # point's x minimizes a convex function cvxpy solves directly
    x, nu = cp.Variable(m), cp.Variable()
    g = M.T @ x + b
    obj = mu_x / 2 * cp.sum_squares(x) + a @ x + nu + cp.sum_squares(cp.pos(g - nu)) / (2 * mu_y)
    cp.Problem(cp.Minimize(obj), [x >= 0, cp.sum(x) == 1]).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    y_star = np.maximum(M.T @ x.value + b - nu.value, 0.0) / mu_y
    np.testing.assert_allclose(res.x, x.value, rtol=0, atol=1e-4)
    np.testing.assert_allclose(res.extra["y"], y_star, rtol=0, atol=1e-4)


# -- errors -----------------------------------------------------------------------
class _Diamond(LMO):
    """A user's l1 ball without decompose."""

    def extreme_point(self, direction):
        i = int(np.argmax(np.abs(direction)))
        s = np.zeros_like(direction)
        s[i] = -np.sign(direction[i]) or 1.0
        return s

    def violation(self, x):
        return max(0.0, float(np.abs(x).sum()) - 1.0)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_infeasible_start_still_names_x0(method):
    f, lmo, _, _ = problem("simplex")
    with pytest.raises(InfeasibleError, match=r"^x0 is not in the domain ProbabilitySimplex"):
        METHODS[method](f, lmo, np.full(N, 1.0))


@pytest.mark.parametrize("method", sorted(set(METHODS) - {"rafw"}))
def test_domains_without_decompose_keep_the_error(method):
    f = QuadraticObjective(np.eye(3), -np.array([0.8, 0.6, -0.2]))
    with pytest.raises(ValueError, match=r"^x0: an active-set method needs its start as a "
                                         r"convex combination of vertices.*decompose"):
        METHODS[method](f, _Diamond(), np.full(3, 0.2))
    # a flow polytope has no cheap exact decomposition here: the old error
    lmo = fw.FlowPolytope([(0, 1), (0, 2), (1, 2)], source=0, sink=2)
    x0 = np.array([0.5, 0.5, 0.5])
    assert lmo.violation(x0) <= 1e-12 and lmo.decompose(x0) is None
    with pytest.raises(ValueError, match=r"^x0: an active-set method needs its start"):
        METHODS[method](f, lmo, x0)

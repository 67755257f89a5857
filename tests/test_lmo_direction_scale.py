"""Oracles answer the same vertex for a direction at any scale, from subnormal to 1e308.

HiGHS's tolerances are absolute: below max|d| ~ 1e-11 every cost counts as 0 (any vertex
passes as optimal, and a Frank-Wolfe run stops at once, "converged" with gap 0), and it
refuses costs from 1e20 on; a product ``V @ g`` or a norm overflows near 1e308.  Each
answer is checked against one found independently: a closed form, a brute force in exact
rational arithmetic, or scipy's linprog on the same LP at scale 1.
"""

from __future__ import annotations

from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import frankwolfe as fw

# scales of the direction: subnormal, tiny (under HiGHS's tolerances), 1, and huge (at
# and beyond HiGHS's infinite cost, up to where the products overflow)
SCALES = [1e-310, 1e-300, 1e-13, 1e-11, 1.0, 1e20, 1e150, 1e300]


def _backends():
    """Polytope's two LP paths: the kept highspy model and scipy's linprog."""
    return ["highspy", "scipy"]


def _polytope(backend, **kw):
    P = fw.Polytope(**kw)
    if backend == "scipy":
        P._backend = "scipy"  # the fallback when highspy is not installed
    return P


def _linprog(c, **kw):
    """scipy's HiGHS at scale 1 (the direction divided by its largest entry)."""
    res = linprog(c, method="highs", **kw)
    assert res.status == 0
    return res


# -- Polytope -----------------------------------------------------------------------
@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("scale", SCALES)
def test_polytope_triangle_vertex_at_any_scale(backend, scale):
    # the triangle conv{0, e1, e2}: min <d, x> is at e2 for d = (-1, -2) and (1, -2)
    for d in (np.array([-1.0, -2.0]), np.array([1.0, -2.0])):
        P = _polytope(backend, A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(0, None))
        np.testing.assert_array_equal(P(scale * d).to_dense(), [0.0, 1.0])


def _random_lp(seed, n=6, m=10):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    b = rng.random(m) + 0.5  # 0 strictly inside
    return A, b, rng.standard_normal(n)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("seed", range(4))
def test_polytope_value_and_duals_scale_with_the_direction(backend, seed):
    A, b, d = _random_lp(seed)
    bounds = (-1.0, 1.0)
    ref = _linprog(d, A_ub=A, b_ub=b, bounds=bounds)
    for scale in SCALES[1:]:  # duals of a subnormal direction are subnormal themselves
        # a fresh polytope: a kept basis would hide a wrong answer at a tiny scale
        P = _polytope(backend, A_ub=A, b_ub=b, bounds=bounds)
        x = P(scale * d).to_dense()
        assert P.violation(x) <= 1e-9
        assert d @ x == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
        dual = P.dual_solution(scale * d)
        # strong duality at every scale, and the multipliers are linprog's times the scale
        assert dual.value / scale == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(dual.multipliers["ineq"] / scale, ref.ineqlin.marginals,
                                   rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("backend", _backends())
def test_polytope_same_vertex_for_power_of_two_multiples(backend):
    # the LP is solved for the direction scaled by a power of two: 2**k d is the same LP
    A, b, d = _random_lp(9)
    P = _polytope(backend, A_ub=A, b_ub=b, bounds=(-1.0, 1.0))
    keys = {P(np.ldexp(d, k)).key for k in (-1070, -600, -40, 0, 40, 600, 1020)}
    assert len(keys) == 1


@pytest.mark.parametrize("backend", _backends())
def test_polytope_zero_and_subnormal_directions(backend):
    P = _polytope(backend, A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(0, None))
    x = P(np.zeros(2)).to_dense()
    assert P.violation(x) == 0.0
    assert P.dual_solution(np.zeros(2)).value == 0.0
    np.testing.assert_array_equal(P(np.array([-5e-324, -1e-323])).to_dense(), [0.0, 1.0])


@pytest.mark.parametrize("method", ["frank_wolfe", "away"])
@pytest.mark.parametrize("s", [1e-12, 1.0, 1e20])
def test_minimize_over_polytope_certifies_its_gap_at_any_scale(method, s):
    # a run on s * f with s = 1e-12 stopped at once, "converged" with gap 0, at
    # (f - f*) / s = 4.12; with s = 1e20 the oracle raised OracleError
    n = 6
    rng = np.random.default_rng(1)
    M = rng.standard_normal((n, n))
    Q = M @ M.T + 0.5 * np.eye(n)
    c = rng.standard_normal(n) * 3
    x = cp.Variable(n)
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + c @ x),
                         [x >= 0, x <= 1, cp.sum(x) <= 1])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    fstar = float(problem.value)

    def f(x):
        return s * (0.5 * x @ Q @ x + c @ x)

    def jac(x):
        return s * (Q @ x + c)

    domain = fw.Polytope(A_ub=np.ones((1, n)), b_ub=[1.0], bounds=(0, 1))
    res = fw.minimize(f, domain, method=method, jac=jac, tol=0.0, rtol=1e-6, max_iter=2000)
    assert res.status == "converged"
    excess = res.fun / s - fstar
    # two-sided: no better than the optimum (to Clarabel's accuracy), and no worse than
    # the certified gap says
    assert -1e-8 * (1 + abs(fstar)) <= excess <= res.gap / s + 1e-8 * (1 + abs(fstar))
    assert res.gap / s <= 1e-6 * (1 + abs(fstar))


# -- FlowPolytope (LP oracle) ---------------------------------------------------------
@pytest.mark.parametrize("scale", SCALES)
def test_flow_lp_vertex_at_any_scale(scale):
    # edge 0->2 (cost -1) carries its capacity 0.5, the rest takes 0->1->2 (cost 2)
    F = fw.FlowPolytope([(0, 1), (1, 2), (0, 2)], supplies=[1, 0, -1], capacity=[1, 1, 0.5])
    assert F.method == "lp"
    c = np.array([1.0, 1.0, -1.0])
    np.testing.assert_array_equal(F(scale * c).to_dense(), [0.5, 0.5, 0.5])


def _random_flow(seed, n=7):
    rng = np.random.default_rng(seed)
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.6]
    edges += [(i, i + 1) for i in range(n - 1) if (i, i + 1) not in edges]
    cap = rng.choice([0.7, 1.3, 2.0, np.inf], size=len(edges))
    supplies = np.zeros(n)
    supplies[0], supplies[-1] = 1.5, -1.5
    return edges, cap, supplies, rng.standard_normal(len(edges))


@pytest.mark.parametrize("seed", range(4))
def test_flow_lp_value_scales_with_the_costs(seed):
    edges, cap, supplies, cost = _random_flow(seed)
    F = fw.FlowPolytope(edges, supplies=supplies, capacity=cap)
    assert F.method == "lp"
    ref = _linprog(cost, A_eq=F.incidence.toarray(), b_eq=supplies,
                   bounds=list(zip(np.zeros(len(edges)), cap)))
    for scale in SCALES:
        x = F(scale * cost).to_dense()
        assert F.violation(x) <= 1e-9
        assert cost @ x == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    finite = np.isfinite(cap)
    for scale in SCALES[1:]:
        # what the LP returns besides the flow (its value, the duals) is scaled back:
        # strong duality with the unscaled value
        res = F._solve_lp(scale * cost)
        assert res.fun / scale == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
        dual = supplies @ res.eqlin.marginals + cap[finite] @ res.upper.marginals[finite]
        assert dual / scale == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)


# -- GroupL1Ball ------------------------------------------------------------------------
def _group_vertex_exact(g, groups, radius):
    """``-radius g_G / ||g_G||`` on the group of largest norm (exact squares, ties to
    the first group), each entry rounded once from ``g_i / max|g_G|`` (exact)."""
    norms2 = [sum(Fraction(float(g[i])) ** 2 for i in grp) for grp in groups]
    j = max(range(len(groups)), key=lambda k: (norms2[k], -k))
    top = max(abs(Fraction(float(g[i]))) for i in groups[j])
    root = float(np.sqrt(float(norms2[j] / top**2)))  # ||g_G|| / max|g_G|, in [1, sqrt(|G|)]
    v = np.zeros(g.size)
    for i in groups[j]:
        v[i] = -radius * float(Fraction(float(g[i])) / top) / root
    return v


def test_group_l1_ball_overflowing_group_norm():
    # the group norms overflow to inf (a tie, then inf / inf): the answer was 0
    B = fw.GroupL1Ball([[0, 1], [2]])
    g = np.array([1.5e308, 1.5e308, 1.0])
    v = B(g).to_dense()
    np.testing.assert_allclose(v, [-np.sqrt(0.5), -np.sqrt(0.5), 0.0], rtol=1e-15)
    np.testing.assert_allclose(v[:2], fw.L2Ball(1.0)(g[:2]).to_dense(), rtol=1e-15)


@pytest.mark.parametrize("scale", [1e-320, 1e-300, 1.0, 1e150, 1e300, 2.0**1023])
def test_group_l1_ball_vertex_at_any_scale(scale):
    rng = np.random.default_rng(3)
    groups = [[0, 3], [1, 4, 5], [2], [6, 7]]
    B = fw.GroupL1Ball(groups, radius=2.0)
    for _ in range(5):
        g = rng.standard_normal(8)
        g *= scale / np.max(np.abs(g))  # largest entry `scale`: finite
        np.testing.assert_allclose(B(g).to_dense(), _group_vertex_exact(g, groups, 2.0),
                                   rtol=1e-12, atol=1e-15)


# -- ConvexHull ----------------------------------------------------------------------------
def _argmin_exact(V, g):
    """The first row of least ``<v_i, g>``, in exact rational arithmetic."""
    values = [sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, g))
              for row in np.asarray(V)]
    return min(range(len(values)), key=lambda i: (values[i], i))


@pytest.mark.parametrize("sparse", [False, True])
def test_convex_hull_overflowing_products(sparse):
    # V @ g is inf for both rows (true values 2e308 and 1e308): the tie went to row 0
    V = [[1.0, 1.0], [-1.0, 2.0]]
    H = fw.ConvexHull(sp.csr_array(V) if sparse else V)
    assert H(np.array([1e308, 1e308])).key == ("row", 1)
    # partial sums that overflow before they cancel: row 0 is 1e308, row 1 1.5e308
    W = [[1.0, 1.0, -1.0], [0.5, 1.0, 0.0]]
    H = fw.ConvexHull(sp.csr_array(W) if sparse else W)
    assert H(np.array([1e308, 1e308, 1e308])).key == ("row", 0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("vscale", [1e-300, 1.0, 1e300])
@pytest.mark.parametrize("gscale", [1e-310, 1e-300, 1e-150, 1.0, 1e150, 1e300, 1e308])
def test_convex_hull_matches_exact_argmin_at_any_scale(sparse, vscale, gscale):
    rng = np.random.default_rng(7)
    V = rng.standard_normal((30, 6)) * vscale
    V[rng.random(V.shape) < 0.3] = 0.0
    H = fw.ConvexHull(sp.csr_array(V) if sparse else V)
    for _ in range(5):
        g = rng.standard_normal(6)
        g *= gscale / np.max(np.abs(g))
        assert H(g).key == ("row", _argmin_exact(V, g))


def test_convex_hull_zero_direction_and_ties():
    H = fw.ConvexHull([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    assert H(np.zeros(2)).key == ("row", 0)  # ties go to the smallest row index
    assert H(np.array([1.0, -1.0])).key == ("row", 2)
    Z = fw.ConvexHull(np.zeros((3, 2)))
    assert Z(np.array([1e300, -1e300])).key == ("row", 0)


@pytest.mark.parametrize("scale", [1e-300, 1e-20, 1.0, 1e20, 1e300])
def test_convex_hull_violation_at_any_scale(scale):
    # the square [0, 1]^2 times `scale`: (2, 0.5) is 1 away from it in the inf-norm, over
    # the largest |v_ij| (scale); HiGHS refused the LP from entries of 1e15 on (inf)
    H = fw.ConvexHull(scale * np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert H.violation(scale * np.array([2.0, 0.5])) == pytest.approx(1.0, rel=1e-9)
    assert H.violation(scale * np.array([0.25, 0.5])) <= 1e-12

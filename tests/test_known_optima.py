"""Certified gaps against optima computed independently (cvxpy, networkx).

For each problem: the method of choice reaches gap <= 1e-8 and its objective
agrees with cvxpy's; along every run (vanilla FW included) the certified gap
bounds the true suboptimality f(x_k) - f* at every recorded iterate.
"""

from __future__ import annotations

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw

CVX_TOL = 1e-7  # accuracy of the interior-point reference
TIGHT = dict(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)


def assert_certificates(res: fw.Result, f_star: float) -> None:
    """gap_k >= f(x_k) - f* for every recorded iterate, and at the end."""
    fun, gap = res.history["fun"], res.history["gap"]
    assert np.all(gap >= fun - f_star - CVX_TOL)
    assert res.fun - f_star <= res.gap + CVX_TOL
    assert res.fun - f_star <= res.best_gap + CVX_TOL


def solve(objective, domain, method, **kw):
    return fw.minimize(objective, domain, method=method, **kw)


def test_l1_least_squares_matches_cvxpy():
    rng = np.random.default_rng(3)
    m, n = 80, 150
    A = rng.normal(size=(m, n)) / np.sqrt(m)
    x_true = np.zeros(n)
    x_true[rng.choice(n, 8, replace=False)] = rng.normal(size=8)
    b = A @ x_true + 0.05 * rng.normal(size=m)
    radius = 0.8 * np.abs(x_true).sum()  # active constraint
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
    f_star = prob.solve(**TIGHT)
    objective, domain = fw.LeastSquares(A, b), fw.L1Ball(radius)
    for method in ("away", "pairwise"):
        res = solve(objective, domain, method, tol=1e-9, max_iter=20000)
        assert res.success and res.gap <= 1e-9
        assert abs(res.fun - f_star) <= CVX_TOL
        assert_certificates(res, f_star)
        np.testing.assert_allclose(res.x, x.value, atol=1e-4)
    vanilla = solve(objective, domain, "fw", tol=1e-9, max_iter=2000)
    assert_certificates(vanilla, f_star)


def test_birkhoff_qp_matches_cvxpy():
    rng = np.random.default_rng(5)
    n = 6
    Y = rng.normal(size=(n, n))
    W = rng.uniform(0.5, 2.0, size=(n, n))  # weighted distance: not a plain projection
    q = W.reshape(-1)
    objective = fw.QuadraticObjective(sp.diags(q).tocsr(), -(q * Y.reshape(-1)), shape=(n, n))
    X = cp.Variable((n, n))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum(cp.multiply(W, cp.square(X - Y)))),
                      [X >= 0, cp.sum(X, axis=0) == 1, cp.sum(X, axis=1) == 1])
    f_star = prob.solve(**TIGHT) - 0.5 * float(np.sum(W * Y * Y))
    res = solve(objective, fw.Birkhoff(n), "pairwise", tol=1e-9, max_iter=20000)
    assert res.success and res.gap <= 1e-9
    assert abs(res.fun - f_star) <= CVX_TOL
    assert_certificates(res, f_star)
    assert fw.Birkhoff(n).is_feasible(res.x, tol=1e-9)


def layered_graph(rng, layers=4, width=4):
    edges = [("s", (0, j)) for j in range(width)]
    for layer in range(layers - 1):
        edges += [((layer, i), (layer + 1, j)) for i in range(width) for j in range(width)
                  if rng.random() < 0.7]
    edges += [((layers - 1, j), "t") for j in range(width)]
    return edges


def test_flow_polytope_linear_objective_matches_networkx():
    rng = np.random.default_rng(7)
    edges = layered_graph(rng)
    domain = fw.FlowPolytope(edges, source="s", sink="t", value=3.0)
    cost = rng.integers(-5, 10, size=len(domain.edges)).astype(float)
    c = fw.FunctionObjective(lambda x: float(cost @ x), lambda x: cost,
                             exact_step=lambda x, d, g: np.inf if g @ d < 0 else 0.0)
    res = fw.frank_wolfe(c, domain, x0=domain.initial_point(), tol=1e-12)
    G = nx.DiGraph()
    G.add_node("s", demand=-3)
    G.add_node("t", demand=3)
    for (u, v), w in zip(domain.edges, cost):
        G.add_edge(u, v, weight=int(w))
    # negative costs on a DAG: shift is not needed by networkx's network simplex
    flow_cost = nx.min_cost_flow_cost(G)
    assert res.fun == pytest.approx(flow_cost, abs=1e-9)
    assert res.gap <= 1e-12


def test_flow_polytope_quadratic_matches_cvxpy():
    rng = np.random.default_rng(11)
    edges = layered_graph(rng, layers=5, width=4)
    domain = fw.FlowPolytope(edges, source="s", sink="t", value=5.0)
    m = len(domain.edges)
    a, q = rng.uniform(1, 3, m), rng.uniform(0.1, 1.0, m)
    objective = fw.QuadraticObjective(sp.diags(q).tocsr(), a)
    x = cp.Variable(m)
    N = domain.incidence.toarray()
    prob = cp.Problem(cp.Minimize(a @ x + 0.5 * cp.sum(cp.multiply(q, cp.square(x)))),
                      [N @ x == domain.supplies, x >= 0])
    f_star = prob.solve(**TIGHT)
    for method in ("away", "pairwise"):
        res = solve(objective, domain, method, tol=1e-9, max_iter=20000)
        assert res.success
        assert abs(res.fun - f_star) <= CVX_TOL
        assert_certificates(res, f_star)
    vanilla = solve(objective, domain, "fw", tol=1e-9, max_iter=1000)
    assert_certificates(vanilla, f_star)

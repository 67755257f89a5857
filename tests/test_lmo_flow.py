"""Flow polytopes: oracle answers against networkx's min-cost flow solvers.

Costs and data are integers wherever networkx is the reference (its network
simplex is exact on integers); non-integral data are checked against cvxpy.
Feasibility is checked here edge by edge, not with the class's ``violation``.
"""

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import FlowPolytope, ShapeError


# ------------------------------------------------------------------ helpers
def random_dag(n: int, p: float, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """A DAG on 0..n-1 whose topological order is a random permutation, with a
    Hamiltonian path so that the last node is reachable from the first."""
    order = rng.permutation(n)
    edges = [(int(order[i]), int(order[j])) for i in range(n) for j in range(i + 1, n)
             if j == i + 1 or rng.random() < p]
    return order, edges


def random_capacitated(n: int, p: float, rng: np.random.Generator):
    """A digraph with cycles, integer capacities and feasible integer supplies
    (the node balance of a random integer flow within the capacities)."""
    edges = [(u, v) for u in range(n) for v in range(n) if u != v and rng.random() < p]
    cap = rng.integers(1, 6, len(edges)).astype(float)
    x0 = np.floor(rng.uniform(0, cap + 1))
    supplies = np.zeros(n)
    for (u, v), f in zip(edges, x0):
        supplies[u] += f
        supplies[v] -= f
    return edges, cap, supplies


def nx_graph(edges, cost, supplies, capacity=None, n=None):
    G = nx.DiGraph()
    G.add_nodes_from(range(n) if n is not None else [])
    for i, (u, v) in enumerate(edges):
        attrs = {"weight": int(cost[i])}
        if capacity is not None and np.isfinite(capacity[i]):
            attrs["capacity"] = int(capacity[i])
        G.add_edge(u, v, **attrs)
    for node, s in enumerate(supplies):
        G.nodes[node]["demand"] = -int(s)  # networkx: demand = inflow - outflow
    return G


def check_flow(P, x, supplies, capacity=None, tol=1e-9):
    """Balance, sign and bounds, edge by edge."""
    x = np.asarray(x)
    assert x.shape == (len(P.edges),)
    assert x.min() >= -tol
    if capacity is not None:
        assert np.all(x <= capacity + tol)
    net = {v: 0.0 for v in P.nodes}
    for (u, v), f in zip(P.edges, x):
        net[u] += f
        net[v] -= f
    for node, s in zip(P.nodes, supplies):
        assert net[node] == pytest.approx(s, abs=tol)


# --------------------------------------------------------------- path oracle
@pytest.mark.parametrize("seed,n,p", [(0, 8, 0.4), (1, 30, 0.2), (2, 120, 0.05), (3, 2, 1.0)])
def test_path_oracle_matches_network_simplex(seed, n, p):
    rng = np.random.default_rng(seed)
    order, edges = random_dag(n, p, rng)
    s, t, value = int(order[0]), int(order[-1]), 3
    P = FlowPolytope(edges, n, source=s, sink=t, value=value)
    assert P.method == "path"
    supplies = np.zeros(n)
    supplies[s], supplies[t] = value, -value
    for _ in range(5):
        cost = rng.integers(-10, 20, len(edges)).astype(float)  # negative costs too
        atom = P(cost)
        x = atom.to_dense()
        check_flow(P, x, supplies)
        ref, _ = nx.network_simplex(nx_graph(edges, cost, supplies, n=n))
        assert atom.dot(cost) == ref
        # the key is the path, source first, edge by edge
        path = atom.key
        assert P.edges[path[0]][0] == s and P.edges[path[-1]][1] == t
        assert all(P.edges[a][1] == P.edges[b][0] for a, b in zip(path, path[1:]))
        np.testing.assert_array_equal(np.flatnonzero(x), np.sort(path))


def test_path_oracle_matches_bellman_ford_on_real_costs():
    rng = np.random.default_rng(5)
    n = 60
    order, edges = random_dag(n, 0.1, rng)
    s, t = int(order[0]), int(order[-1])
    P = FlowPolytope(np.array(edges), source=s, sink=t, value=0.5)
    G = nx.DiGraph(edges)
    for _ in range(5):
        cost = rng.normal(size=len(edges))
        nx.set_edge_attributes(G, {e: cost[i] for i, e in enumerate(edges)}, "w")
        ref = nx.bellman_ford_path_length(G, s, t, weight="w")
        assert P(cost).dot(cost) == pytest.approx(0.5 * ref, rel=1e-12, abs=1e-12)


def test_path_oracle_beats_random_feasible_points():
    rng = np.random.default_rng(6)
    order, edges = random_dag(25, 0.3, rng)
    P = FlowPolytope(edges, source=int(order[0]), sink=int(order[-1]))
    cost = rng.normal(size=len(edges))
    best = P(cost).dot(cost)
    # convex combinations of vertices found for other directions are feasible
    vertices = [P(rng.normal(size=len(edges))).to_dense() for _ in range(20)]
    for _ in range(30):
        w = rng.dirichlet(np.ones(len(vertices)))
        y = np.tensordot(w, vertices, axes=1)
        assert P.is_feasible(y)
        assert best <= cost @ y + 1e-12


# ----------------------------------------------------------------- LP oracle
@pytest.mark.parametrize("seed", range(4))
def test_lp_oracle_capacitated_matches_network_simplex(seed):
    rng = np.random.default_rng(10 + seed)
    n = 12
    edges, cap, supplies = random_capacitated(n, 0.3, rng)
    P = FlowPolytope(edges, n, supplies=supplies, capacity=cap)
    assert P.method == "lp"
    G = nx_graph(edges, np.zeros(len(edges)), supplies, cap, n=n)
    for _ in range(3):
        cost = rng.integers(-5, 10, len(edges)).astype(float)  # negative cycles are bounded
        nx.set_edge_attributes(G, {e: int(cost[i]) for i, e in enumerate(edges)}, "weight")
        ref, _ = nx.network_simplex(G)
        atom = P(cost)
        x = atom.to_dense()
        check_flow(P, x, supplies, cap, tol=0.0)  # integral data: exact integers
        np.testing.assert_array_equal(x, np.rint(x))
        assert atom.dot(cost) == ref
        assert atom.key == tuple((int(i), int(x[i])) for i in np.flatnonzero(x))


def test_lp_oracle_partly_uncapacitated_matches_network_simplex():
    # uncapacitated edges only go "forward" (u < v), so no uncapacitated cycle
    rng = np.random.default_rng(21)
    n = 10
    edges, cap, supplies = random_capacitated(n, 0.35, rng)
    cap = np.where([u < v and rng.random() < 0.5 for u, v in edges], np.inf, cap)
    P = FlowPolytope(edges, n, supplies=supplies, capacity=cap)
    cost = rng.integers(-3, 10, len(edges)).astype(float)
    ref, _ = nx.network_simplex(nx_graph(edges, cost, supplies, cap, n=n))
    atom = P(cost)
    check_flow(P, atom.to_dense(), supplies, cap, tol=0.0)
    assert atom.dot(cost) == ref


def test_st_demand_with_capacities_uses_lp_and_matches_networkx():
    rng = np.random.default_rng(3)
    order, edges = random_dag(15, 0.4, rng)
    cap = rng.integers(1, 4, len(edges)).astype(float)
    s, t = int(order[0]), int(order[-1])
    value = float(min(nx.maximum_flow_value(
        nx.DiGraph([(u, v, {"capacity": c}) for (u, v), c in zip(edges, cap)]), s, t), 4))
    P = FlowPolytope(edges, source=s, sink=t, value=value, capacity=cap)
    assert P.method == "lp"
    cost = rng.integers(-4, 8, len(edges)).astype(float)
    supplies = np.zeros(15)
    supplies[s], supplies[t] = value, -value
    ref, _ = nx.network_simplex(nx_graph(edges, cost, supplies, cap, n=15))
    atom = P(cost)
    check_flow(P, atom.to_dense(), supplies, cap, tol=0.0)
    assert atom.dot(cost) == ref


def test_lp_oracle_non_integral_data_matches_cvxpy():
    rng = np.random.default_rng(8)
    n = 9
    edges, cap, supplies = random_capacitated(n, 0.4, rng)
    cap = cap * 0.37 + 0.1
    supplies = supplies * 0.37 / 2  # half of a flow within 0.37 * cap: feasible
    P = FlowPolytope(edges, n, supplies=supplies, capacity=cap)
    cost = rng.normal(size=len(edges))
    atom = P(cost)
    check_flow(P, atom.to_dense(), supplies, cap, tol=1e-9)
    x = cp.Variable(len(edges))
    N = np.zeros((n, len(edges)))
    for i, (u, v) in enumerate(edges):
        N[u, i], N[v, i] = 1.0, -1.0
    prob = cp.Problem(cp.Minimize(cost @ x), [N @ x == supplies, x >= 0, x <= cap])
    prob.solve(solver=cp.CLARABEL)
    assert atom.dot(cost) == pytest.approx(prob.value, rel=1e-7, abs=1e-8)


# ----------------------------------------------------- construction and inputs
def test_networkx_input_with_labels_and_capacity_attribute():
    G = nx.DiGraph()
    G.add_edge("s", "a", cap=2, weight=1)
    G.add_edge("s", "b", cap=2, weight=2)
    G.add_edge("a", "b", weight=0)  # no capacity attribute: uncapacitated
    G.add_edge("a", "t", cap=1, weight=1)
    G.add_edge("b", "t", cap=3, weight=1)
    P = FlowPolytope(G, source="s", sink="t", value=3.0, capacity="cap")
    assert P.edges == list(G.edges)
    assert all(P.edge_index[e] == i for i, e in enumerate(G.edges))
    assert np.isinf(P.capacity[P.edge_index[("a", "b")]])
    cost = np.array([G.edges[e]["weight"] for e in P.edges], dtype=float)
    H = G.copy()  # networkx reads capacities from the "capacity" attribute
    for _, _, d in H.edges(data=True):
        if "cap" in d:
            d["capacity"] = d["cap"]
    H.nodes["s"]["demand"], H.nodes["t"]["demand"] = -3, 3
    atom = P(cost)
    assert atom.dot(cost) == nx.min_cost_flow_cost(H)
    flows = P.flow_dict(atom.to_dense())
    check_flow(P, atom.to_dense(), [3.0, 0.0, 0.0, -3.0], P.capacity, tol=0.0)
    assert set(flows) <= set(G.edges) and all(f > 0 for f in flows.values())


def test_edge_list_with_hashable_labels_and_supply_mapping():
    edges = [("s", (0, 0)), ("s", (0, 1)), ((0, 0), "t"), ((0, 1), "t")]
    P = FlowPolytope(edges, supplies={"s": 2.0, "t": -2.0})
    assert P.method == "path"  # one source, one sink, no capacities
    assert P.nodes == ["s", (0, 0), (0, 1), "t"]  # order of first appearance
    atom = P(np.array([1.0, 0.0, 1.0, 0.5]))
    assert atom.key == (1, 3)
    np.testing.assert_array_equal(atom.to_dense(), [0, 2, 0, 2])


def test_integer_edge_list_forms_agree():
    edges = [(0, 1), (1, 2), (0, 2)]
    weight = {(0, 1): 1.0, (1, 2): 1.0, (0, 2): 3.0}
    a = FlowPolytope(edges, 4, source=0, sink=2)
    b = FlowPolytope(np.array(edges), source=0, sink=2)
    c = FlowPolytope(nx.DiGraph(edges), source=0, sink=2)  # networkx orders the edges itself
    assert a.n_nodes == 4 and b.n_nodes == 3 and c.n_nodes == 3
    for P in (a, b, c):
        atom = P(np.array([weight[e] for e in P.edges]))
        assert [P.edges[i] for i in atom.key] == [(0, 1), (1, 2)]


def test_violation_closed_form():
    P = FlowPolytope([(0, 1), (1, 2), (0, 2)], supplies=[2.0, 0.0, -2.0], capacity=[1, 1, 5])
    assert P.violation(np.array([1.0, 1.0, 1.0])) == 0.0
    assert P.violation(np.array([0.0, 0.0, 2.0])) == 0.0
    assert P.violation(np.array([2.0, 2.0, 0.0])) == pytest.approx(0.5)  # over capacity by 1
    assert P.violation(np.array([1.0, 1.0, 0.0])) == pytest.approx(0.5)  # balance off by 1
    assert P.violation(np.array([-0.5, -0.5, 2.5])) == pytest.approx(0.25)  # negative
    assert P.violation(np.zeros(2)) == np.inf
    assert "method='lp'" in repr(P)


# -------------------------------------------------------------------- errors
def test_cyclic_uncapacitated_graph_is_rejected():
    with pytest.raises(ValueError, match=r"unbounded: a directed cycle of uncapacitated edges "
                                         r"runs through nodes \[1, 2, 3\].*finite capacities or "
                                         r"use a DAG"):
        FlowPolytope([(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)], source=0, sink=4)
    with pytest.raises(ValueError, match=r"self-loop \(2, 2\) has no capacity"):
        FlowPolytope([(0, 1), (1, 2), (2, 2)], source=0, sink=2)
    # the same cycle with one capacitated edge is fine
    P = FlowPolytope([(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)], source=0, sink=4,
                     capacity=[np.inf, np.inf, np.inf, 2.0, np.inf])
    cost = np.array([0.0, -1.0, -1.0, -1.0, 0.0])
    x = P(cost).to_dense()  # the negative cycle is used up to its capacity
    np.testing.assert_array_equal(x, [1, 3, 3, 2, 1])


def test_demand_errors():
    edges = [(0, 1), (1, 2)]
    with pytest.raises(ValueError, match=r"`supplies` must sum to 0 \(supply = demand\), "
                                         r"got sum 1"):
        FlowPolytope(edges, supplies=[1.0, 0.0, 0.0])
    with pytest.raises(ShapeError, match=r"array of shape \(3,\) \(one per node\), "
                                         r"got shape \(2,\)"):
        FlowPolytope(edges, supplies=[1.0, -1.0])
    with pytest.raises(ValueError, match="`source` and `sink` must differ, both are 1"):
        FlowPolytope(edges, source=1, sink=1)
    with pytest.raises(ValueError, match="`sink` 7 is not a node of the graph"):
        FlowPolytope(edges, source=0, sink=7)
    with pytest.raises(ValueError, match="either `supplies` or `source`/`sink`, not both"):
        FlowPolytope(edges, source=0, sink=2, supplies=[1.0, 0.0, -1.0])
    with pytest.raises(ValueError, match="give `source` and `sink`"):
        FlowPolytope(edges)
    with pytest.raises(ValueError, match="`value` must be positive and finite, got -1"):
        FlowPolytope(edges, source=0, sink=2, value=-1)
    with pytest.raises(ValueError, match="empty: no directed path from 2 to 0"):
        FlowPolytope(edges, source=2, sink=0)
    with pytest.raises(ValueError, match="empty: no flow meets the supplies within the capacities"):
        FlowPolytope(edges, source=0, sink=2, value=3.0, capacity=2.0)


def test_graph_and_capacity_errors():
    with pytest.raises(ValueError, match=r"capacities must be >= 0 \(inf for none\), "
                                         r"got -1.0 on edge 1"):
        FlowPolytope([(0, 1), (1, 2)], source=0, sink=2, capacity=[1.0, -1.0])
    with pytest.raises(ShapeError, match=r"`capacity` must be a number or an array "
                                         r"of shape \(2,\)"):
        FlowPolytope([(0, 1), (1, 2)], source=0, sink=2, capacity=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"parallel edges \(0, 1\) are not supported"):
        FlowPolytope([(0, 1), (0, 1), (1, 2)], source=0, sink=2)
    with pytest.raises(ValueError, match=r"`n_nodes` must be an integer >= 3 .* got 2"):
        FlowPolytope([(0, 1), (1, 2)], 2, source=0, sink=2)
    with pytest.raises(TypeError, match="must be a directed graph"):
        FlowPolytope(nx.Graph([(0, 1)]), source=0, sink=1)
    with pytest.raises(TypeError, match="capacity attribute name needs a networkx.DiGraph"):
        FlowPolytope([(0, 1)], source=0, sink=1, capacity="cap")
    with pytest.raises(ShapeError, match=r"every edge must be a \(tail, head\) pair, "
                                         r"got \(0, 1, 2\)"):
        FlowPolytope([(0, 1, 2)], source=0, sink=1)
    with pytest.raises(ValueError, match=r"parallel edges \(0, 1\) are not supported"):
        FlowPolytope(nx.MultiDiGraph([(0, 1), (0, 1), (1, 2)]), source=0, sink=2)
    G = nx.DiGraph()
    G.add_edge(0, 1, cap=None)
    with pytest.raises(ValueError, match=r"capacity attribute 'cap' of edge \(0, 1\) must be "
                                         r"a number .* got None"):
        FlowPolytope(G, source=0, sink=1, capacity="cap")
    with pytest.raises(ValueError, match="`value` must be positive and finite, got True"):
        FlowPolytope([(0, 1)], source=0, sink=1, value=True)


def test_multidigraph_without_parallel_edges_is_a_digraph():
    edges = [("a", "b", 2.0), ("b", "c", 1.0), ("a", "c", 1.5)]
    D, M = nx.DiGraph(), nx.MultiDiGraph()
    for u, v, cap in edges:
        D.add_edge(u, v, cap=cap)
        M.add_edge(u, v, cap=cap)
    c = np.array([-1.0, -1.0, -1.0])
    for G in (D, M):
        P = FlowPolytope(G, source="a", sink="c", value=2.5, capacity="cap")
        assert P.edges == [("a", "b"), ("a", "c"), ("b", "c")]
        # the maximum flow: 1.5 straight, 1 round (the capacities); all edges cost -1
        x = P(c).to_dense()
        assert np.allclose(x, [1.0, 1.5, 1.0], rtol=0, atol=1e-9)


def test_direction_errors():
    P = FlowPolytope([(0, 1), (1, 2)], source=0, sink=2)
    with pytest.raises(ShapeError, match=r"`direction` must have shape \(2,\) \(one entry per "
                                         r"edge\), got \(3,\)"):
        P(np.zeros(3))
    with pytest.raises(ValueError, match="NaN or inf"):
        P(np.array([np.nan, 0.0]))
    Q = FlowPolytope([(0, 1), (1, 2)], source=0, sink=2, capacity=1.0)
    with pytest.raises(ValueError, match="NaN or inf"):
        Q(np.array([np.inf, 0.0]))


# ---------------------------------------------------- Frank-Wolfe on flows
def _incidence(P):
    N = np.zeros((P.n_nodes, P.n_edges))
    for i, (u, v) in enumerate(P.edges):
        N[P.node_index[u], i], N[P.node_index[v], i] = 1.0, -1.0
    return N


@pytest.mark.parametrize("capacitated", [False, True])
def test_frank_wolfe_linear_objective_one_step(capacitated):
    rng = np.random.default_rng(31)
    if capacitated:
        n = 12
        edges, cap, supplies = random_capacitated(n, 0.3, rng)
        P = FlowPolytope(edges, n, supplies=supplies, capacity=cap)
    else:
        n = 40
        order, edges = random_dag(n, 0.15, rng)
        cap, supplies = None, np.zeros(n)
        supplies[order[0]], supplies[order[-1]] = 2, -2
        P = FlowPolytope(edges, n, source=int(order[0]), sink=int(order[-1]), value=2)
    cost = rng.integers(-3, 10, len(edges)).astype(float)
    obj = fw.FunctionObjective(lambda x: float(cost @ x), lambda x: cost)
    res = fw.frank_wolfe(obj, P, step_size="agnostic", tol=1e-12, max_iter=10)
    ref, _ = nx.network_simplex(nx_graph(edges, cost, supplies, cap, n=n))
    assert res.success and res.nit == 1 and res.gap == 0.0
    assert res.fun == ref
    check_flow(P, res.x, supplies, cap, tol=0.0)


def test_frank_wolfe_quadratic_over_flows_matches_cvxpy():
    rng = np.random.default_rng(41)
    n = 10
    edges, cap, supplies = random_capacitated(n, 0.35, rng)
    P = FlowPolytope(edges, n, supplies=supplies, capacity=cap)
    m = len(edges)
    a = rng.uniform(0.5, 2.0, m)  # congestion-like separable quadratic
    c = rng.normal(size=m) * 3
    f = lambda x: float(0.5 * a @ x**2 + c @ x)  # noqa: E731
    obj = fw.FunctionObjective(f, lambda x: a * x + c,
                               exact_step=lambda x, d, g: -(g @ d) / (a @ d**2))
    # each LP oracle call costs a few ms, so the budget is kept small; the
    # certificate below holds whatever gap is reached (about 4e-2 here)
    res = fw.frank_wolfe(obj, P, tol=1e-6, max_iter=300)
    xv = cp.Variable(m)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum(cp.multiply(a, cp.square(xv))) + c @ xv),
                      [_incidence(P) @ xv == supplies, xv >= 0, xv <= cap])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    check_flow(P, res.x, supplies, cap, tol=1e-9)
    assert res.fun - prob.value <= res.gap + 1e-9
    assert prob.value <= res.fun + 1e-9
    # Jaggi's rate: f(x_k) - f* <= 2 L diam^2 / (k + 2); diam^2 <= ||cap||^2 in the box
    assert res.fun - prob.value <= 2 * a.max() * (cap @ cap) / (res.nit + 2)


def test_lp_oracle_gaps_near_the_optimum_are_certificates():
    """Supplies at several nodes (the LP oracle) near the optimum: at HiGHS's default
    tolerances (1e-7) the vertex was 6e-8 to 3.5e-7 short of the minimizer, the reported
    gap went negative and a run "converged" at tol=1e-8 with a true gap of 3e-7.  The
    reported gap is checked against the Frank-Wolfe gap of an independent LP solve."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(4)
    G = nx.gnp_random_graph(12, 0.35, seed=3, directed=True)
    G = nx.DiGraph([(u, v) for u, v in G.edges() if u < v])
    G.add_edges_from([(0, 1), (10, 11)])
    m = G.number_of_edges()
    M = rng.standard_normal((m // 2, m))
    Q, c = M.T @ M + 0.1 * np.eye(m), rng.standard_normal(m) * 2
    P = FlowPolytope(G, supplies={0: 2.0, 1: 1.0, 11: -2.5, 10: -0.5})
    assert P.method == "lp"
    res = fw.away_step_frank_wolfe(fw.QuadraticObjective(Q, c), P, tol=1e-8, max_iter=5000)
    g = Q @ res.x + c
    lp = linprog(g, A_eq=_incidence(P), b_eq=P.supplies, bounds=(0, None), method="highs",
                 options={"primal_feasibility_tolerance": 1e-10,
                          "dual_feasibility_tolerance": 1e-10})
    true_gap = float(g @ res.x - lp.fun)
    scale = 1e-12 * max(1.0, float(np.abs(g) @ np.abs(res.x)))
    assert res.gap >= -scale
    assert abs(res.gap - true_gap) <= 1e-9 + scale
    assert not (res.status == "converged" and true_gap > 1e-8 + 1e-9)


def test_lp_oracle_answers_where_highs_without_presolve_stops_unknown():
    """A 7-node capacitated network on which HiGHS's dual simplex, presolve off and
    feasibility tolerances at 1e-10, stops with model status "Unknown" (an audit's
    instance): the oracle and the general Polytope answer the LP, checked against
    scipy's HiGHS at its defaults."""
    from scipy.optimize import linprog

    edges = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (1, 4), (1, 6), (1, 2), (2, 0),
             (2, 1), (2, 3), (3, 1), (3, 2), (3, 4), (4, 1), (4, 6), (4, 5), (5, 0), (5, 1),
             (5, 6), (6, 5)]
    caps = np.array([1, 2, 1, 1, 3, 1, 2, 1, 1, 3, 1, 1, 1, 3, 1, 2, 1, 1, 3, 1, 2, 2.0])
    c = np.array([-0.6452251440621252, 1.7525233774884155, -0.19719329636076877,
                  0.20992637704733647, -0.2488983952267093, 1.0436750126735757,
                  -0.680062343093059, -1.2089066498632766, 1.1325947921436357,
                  -0.487369571482258, -1.5195103227172502, -2.5823510269959775,
                  3.147152740880439, 0.23373637675496095, -0.9301370170267625,
                  0.6800623038346644, 2.0133298699541426, -1.5143772269462872,
                  2.523475986889141, -0.3963267723420496, -1.6052332994010508,
                  3.199338576102959])
    P = FlowPolytope(edges, source=0, sink=6, capacity=caps)
    N = _incidence(P)
    ref = linprog(c, A_eq=N, b_eq=P.supplies, bounds=np.column_stack([np.zeros(22), caps]),
                  method="highs")
    assert ref.status == 0
    for lmo in (P, fw.Polytope(A_eq=N, b_eq=P.supplies,
                               bounds=np.column_stack([np.zeros(22), caps]))):
        x = lmo(c).to_dense()
        assert float(c @ x) == pytest.approx(ref.fun, abs=1e-6)
        assert np.abs(N @ x - P.supplies).max() <= 1e-8
        assert x.min() >= -1e-9 and (x - caps).max() <= 1e-9

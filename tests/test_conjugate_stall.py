"""Conjugate / bi-conjugate Frank-Wolfe restart with a Frank-Wolfe step when the
conjugate weight of the previous point leaves [0, 1 - delta].

The paper's rule clipped it to 1 - delta: the search point was then the previous one
up to delta, along which the last exact line search had left no slope, x hardly
moved and the same weight came back.  On a 4 x 4 traffic grid CFW needed 36,219
iterations to a relative gap of 1e-6 and BFW 1,038 (FW: 63,424); on the simplex QP
below CFW did not reach tol 1e-9 in 5,000 iterations where FW needs 200.

References: the relative gap recomputed with networkx shortest paths on the BPR
costs; cvxpy's optimum of the quadratic programs.
"""

from __future__ import annotations

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from test_conjugate import _Quadratic
from traffic_networks import grid_network

from frankwolfe import (
    ProbabilitySimplex,
    biconjugate_frank_wolfe,
    conjugate_frank_wolfe,
    frank_wolfe,
)
from frankwolfe.algorithms.conjugate import _Conjugate
from frankwolfe.applications.traffic import Network, traffic_assignment


def _networkx_relative_gap(net: Network, x: np.ndarray) -> float:
    """(total travel time - demand-weighted shortest paths) / total travel time, from
    the BPR formula and networkx's Dijkstra (the grid: no parallel links, no tolls,
    every node passable)."""
    cost = net.free_flow_time * (1.0 + net.b * (np.maximum(x, 0.0) / net.capacity)
                                 ** net.power)
    G = nx.DiGraph()
    for u, w, c in zip(net.init_node, net.term_node, cost):
        G.add_edge(int(u), int(w), weight=float(c))
    shortest = 0.0
    for o in range(net.demand.shape[0]):
        dist = nx.single_source_dijkstra_path_length(G, o)
        shortest += sum(net.demand[o, d] * dist[d] for d in range(net.demand.shape[1])
                        if d != o and net.demand[o, d] > 0)
    total = float(cost @ x)
    return (total - shortest) / total


@pytest.mark.parametrize(("method", "budget"), [("cfw", 4000), ("bfw", 300)])
def test_grid_reaches_1e6_faster_than_frank_wolfe(method, budget):
    # with the clip: cfw 36,219 iterations, bfw 1,038; with the restart 2,091 and 92
    net = grid_network(4, 4, 6, seed=1)
    res = traffic_assignment(net, method, rel_gap=1e-6, max_iter=budget)
    assert res.success, res.message
    assert _networkx_relative_gap(net, res.x) <= 1e-6 * (1 + 1e-6)
    # FW over the same number of iterations is still far off (it needs 63,424)
    plain = traffic_assignment(net, "fw", rel_gap=1e-6, max_iter=res.nit)
    assert _networkx_relative_gap(net, plain.x) > 10 * _networkx_relative_gap(net, res.x)


def _simplex_qp(seed: int, n: int, log_cond: float, spread: float):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = U @ np.diag(np.logspace(0, log_cond, n)) @ U.T
    y = rng.standard_normal(n) * spread + 1.0 / n
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - y, cp.psd_wrap(Q))),
                      [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    return _Quadratic(Q, y), x.value, prob.value


@pytest.mark.parametrize(("solver", "problem", "budget"), [
    # with the clip: no convergence in 5,000 iterations (CFW; FW: 200); restart: 25
    (conjugate_frank_wolfe, (0, 20, 2.0, 1.0), 200),
    # with the clip: no convergence in 5,000 iterations (BFW; FW neither); restart: 32
    (biconjugate_frank_wolfe, (0, 5, 1.0, 0.3), 200),
])
def test_simplex_qp_reaches_cvxpy_optimum(solver, problem, budget):
    f, x_ref, f_ref = _simplex_qp(*problem)
    dom = ProbabilitySimplex(dim=x_ref.size)
    res = solver(f, dom, tol=1e-9, max_iter=budget)
    assert res.success, res.message
    assert res.fun == pytest.approx(f_ref, rel=1e-9)
    np.testing.assert_allclose(res.x, x_ref, atol=1e-4)
    plain = frank_wolfe(f, dom, tol=1e-9, max_iter=budget)
    assert res.nit <= plain.nit


def test_weight_past_one_minus_delta_restarts_with_frank_wolfe():
    # Q = I, x = e0, previous point (e0 + e1) / 2, vertex e1: a = (-1/2, 1/2, 0),
    # u = (-1, 1, 0), <a, u> = 1 > <a, a> = 1/2, so the conjugate weight is
    # <a, u> / <a, u - a> = 2: the conjugate point would be 2 s1 - v, outside the simplex
    f = _Quadratic(np.eye(3), np.full(3, 1 / 3))
    x, s1, v = np.eye(3)[0], np.array([0.5, 0.5, 0.0]), np.eye(3)[1]
    tracker = f.tracker(x)
    for memory in (1, 2):
        var = _Conjugate(memory, 1e-4)
        var.start(tracker, None, ProbabilitySimplex(dim=3))
        var.s1 = s1
        s, kind = var._conjugate_point(tracker, v)
        assert kind == "fw"
        np.testing.assert_array_equal(s, v)


def test_weight_inside_range_is_kept():
    # Q = I, x = (0.2, 0.3, 0.5), previous point e1, vertex e0: a = (-0.2, 0.7, -0.5),
    # u = (0.8, -0.3, -0.5), weight <a, u> / <a, u - a> = -0.12 / -0.9 = 2/15
    f = _Quadratic(np.eye(3), np.full(3, 1 / 3))
    x, s1, v = np.array([0.2, 0.3, 0.5]), np.eye(3)[1], np.eye(3)[0]
    tracker = f.tracker(x)
    var = _Conjugate(1, 1e-4)
    var.start(tracker, None, ProbabilitySimplex(dim=3))
    var.s1 = s1
    s, kind = var._conjugate_point(tracker, v)
    assert kind == "cfw"
    np.testing.assert_allclose(s, (2 / 15) * s1 + (13 / 15) * v, rtol=0, atol=1e-15)
    assert abs((s1 - x) @ (s - x)) <= 1e-15

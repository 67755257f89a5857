"""Power-of-two scalings of the data leave the QAP local search and the conjugate
Frank-Wolfe methods unchanged (no absolute floors, no under- or overflow of their
2x2 systems), and BPR powers below 1 run the conjugate methods without warnings.

References: brute force over all permutations (QAP), cvxpy (the QP), the closed-form
BPR curvature and an independent networkx all-or-nothing assignment (traffic).
"""

from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from test_conjugate import _Quadratic
from traffic_networks import grid_network

from frankwolfe import ProbabilitySimplex, biconjugate_frank_wolfe
from frankwolfe.applications.matching import qap_value, solve_qap, two_opt
from frankwolfe.applications.traffic import Beckmann, Network, traffic_assignment

# (scale of A, scale of B): both small, both large, one alone
_QAP_SCALES = [(2.0**-30, 2.0**-30), (2.0**30, 2.0**30), (2.0**-60, 1.0), (1.0, 2.0**40)]
_QAP_IDS = ["both-2^-30", "both-2^30", "A-2^-60", "B-2^40"]


def _random_qap(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 10, (n, n)).astype(float),
            rng.integers(0, 10, (n, n)).astype(float))


def _brute_force_qap(A: np.ndarray, B: np.ndarray) -> float:
    n = A.shape[0]
    perms = np.array(list(itertools.permutations(range(n))))
    return float(np.einsum("ij,kij->k", A, B[perms[:, :, None], perms[:, None, :]]).min())


@pytest.mark.parametrize(("sa", "sb"), _QAP_SCALES, ids=_QAP_IDS)
def test_two_opt_makes_the_same_exchanges_at_any_scale(sa, sb):
    # the default tolerance had an absolute floor of 1e-12 that outweighed every
    # exchange once A * B was small: 0 exchanges at 2**-30 where scale 1 makes 3
    A, B = _random_qap(0, 10)
    p1, k1 = two_opt(A, B, np.arange(10))
    ps, ks = two_opt(A * sa, B * sb, np.arange(10))
    assert k1 == 3
    assert ks == k1
    np.testing.assert_array_equal(ps, p1)
    assert qap_value(A, B, p1) < qap_value(A, B, np.arange(10))


def test_two_opt_with_a_zero_matrix_makes_no_exchange():
    A, B = _random_qap(1, 6)
    for a, b in ((np.zeros_like(A), B), (A, np.zeros_like(B))):
        p, k = two_opt(a, b, np.arange(6))
        assert k == 0
        np.testing.assert_array_equal(p, np.arange(6))


@pytest.mark.parametrize(("sa", "sb"), _QAP_SCALES, ids=_QAP_IDS)
def test_solve_qap_is_scale_free(sa, sb):
    A, B = _random_qap(0, 10)
    r1 = solve_qap(A, B)
    rs = solve_qap(A * sa, B * sb)
    np.testing.assert_array_equal(rs.permutation, r1.permutation)
    assert rs.fun / (sa * sb) == r1.fun
    assert r1.fun == qap_value(A, B, r1.permutation) == 1964.0


@pytest.mark.parametrize(("seed", "n"), [(s, n) for s in range(4) for n in (6, 7, 8)])
def test_solve_qap_matches_brute_force_as_well_at_any_scale(seed, n):
    A, B = _random_qap(seed, n)
    opt = _brute_force_qap(A, B)
    r1 = solve_qap(A, B)
    assert r1.fun >= opt
    for sa, sb in _QAP_SCALES:
        rs = solve_qap(A * sa, B * sb)
        np.testing.assert_array_equal(rs.permutation, r1.permutation)
        # the same distance to the brute-force optimum as at scale 1 (often 0)
        assert rs.fun / (sa * sb) - opt == r1.fun - opt
        assert qap_value(A, B, rs.permutation) == r1.fun


def _simplex_qp(n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = U @ np.diag(np.logspace(0, 3, n)) @ U.T
    y = rng.standard_normal(n) * 0.3 + 1.0 / n
    return Q, y


@pytest.mark.parametrize("scale", [2.0**-560, 2.0**500, 2.0**900], ids=["-560", "500", "900"])
def test_biconjugate_iterates_do_not_depend_on_the_scale_of_f(scale):
    # the 2x2 system of the bi-conjugate weights was solved from raw curvature
    # products: its determinant underflowed below 2**-540 (every step fell back to
    # CFW) and overflowed above 2**500
    Q, y = _simplex_qp()
    dom = ProbabilitySimplex(dim=y.size)
    r1 = biconjugate_frank_wolfe(_Quadratic(Q, y), dom, tol=1e-9, max_iter=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = biconjugate_frank_wolfe(_Quadratic(Q * scale, y), dom, tol=1e-9 * scale,
                                     max_iter=2000)
    assert r1.success and r1.extra["n_bfw_steps"] > 10
    assert rs.nit == r1.nit
    assert rs.extra["n_bfw_steps"] == r1.extra["n_bfw_steps"]
    np.testing.assert_array_equal(rs.x, r1.x)
    assert rs.fun / scale == r1.fun
    x = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - y, cp.psd_wrap(Q))),
                      [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    assert r1.fun == pytest.approx(prob.value, rel=1e-8)  # cvxpy's own accuracy


def _scaled(net: Network, s: float) -> Network:
    return Network(init_node=net.init_node, term_node=net.term_node,
                   free_flow_time=net.free_flow_time, capacity=net.capacity * s, b=net.b,
                   power=net.power, demand=net.demand * s, n_nodes=net.n_nodes)


@pytest.mark.parametrize("k", [-560, 500, 900])
def test_traffic_bfw_is_scale_free(k):
    # demand and capacities scaled alike: flows scale, the relative gap does not
    base = grid_network(4, 4, 6, seed=1)
    s = 2.0**k
    r1 = traffic_assignment(base, "bfw", rel_gap=1e-8, max_iter=40)
    rs = traffic_assignment(_scaled(base, s), "bfw", rel_gap=1e-8, max_iter=40)
    assert r1.extra["n_bfw_steps"] > 0
    assert rs.extra["n_bfw_steps"] == r1.extra["n_bfw_steps"]
    assert rs.extra["relative_gap"] == r1.extra["relative_gap"]
    np.testing.assert_array_equal(rs.x / s, r1.x)


def test_beckmann_hessian_vector_product_below_power_one_is_silent():
    # power 0.3: c'(0) = inf; a link the direction does not touch adds nothing, and the
    # discarded 0 * inf no longer warns
    net = Network(init_node=np.array([0, 0]), term_node=np.array([1, 1]),
                  free_flow_time=np.array([1.0, 2.0]), capacity=np.array([1.0, 1.0]),
                  b=np.array([0.15, 0.15]), power=np.array([0.3, 0.3]),
                  demand=np.array([[0, 1.0], [0, 0]]), n_nodes=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hv = Beckmann(net).hessian_vector_product(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
        hv2 = Beckmann(net).hessian_vector_product(np.array([0.0, 1.0]), np.array([2.0, 1.0]))
    # c'(x) = t0 b p x^(p-1) / cap^p = 2 * 0.15 * 0.3 at x = 1
    np.testing.assert_array_equal(hv, [0.0, 2.0 * 0.15 * 0.3])
    assert hv2[0] == np.inf and hv2[1] == pytest.approx(0.09, rel=1e-15)


def _independent_relative_gap(net: Network, x: np.ndarray) -> float:
    costs = net.free_flow_time * (1 + net.b * (np.maximum(x, 0) / net.capacity) ** net.power)
    G = nx.DiGraph()
    G.add_nodes_from(range(net.n_nodes))
    for a, (u, w) in enumerate(zip(net.init_node, net.term_node, strict=True)):
        G.add_edge(int(u), int(w), weight=float(costs[a]))
    shortest = 0.0
    for o in range(net.demand.shape[0]):
        dist = nx.single_source_dijkstra_path_length(G, o)
        shortest += sum(net.demand[o, d] * dist[d] for d in range(net.demand.shape[1])
                        if d != o and net.demand[o, d] > 0)
    total = float(costs @ x)
    return (total - shortest) / total


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_conjugate_methods_run_below_bpr_power_one(method):
    # pytest turns frankwolfe's RuntimeWarnings into errors: this run warned
    # "invalid value encountered in multiply" in the Hessian-vector product
    base = grid_network(4, 4, 6, seed=1)
    net = Network(init_node=base.init_node, term_node=base.term_node,
                  free_flow_time=base.free_flow_time, capacity=base.capacity, b=base.b,
                  power=np.full(base.n_links, 0.3), demand=base.demand, n_nodes=base.n_nodes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = traffic_assignment(net, method, rel_gap=1e-8, max_iter=200)
    assert r.status == "converged"
    assert _independent_relative_gap(net, r.x) <= 1e-8


def test_bfw_weights_solve_the_2x2_system_at_any_exponent():
    from frankwolfe.algorithms.conjugate import _solve_2x2

    M = np.array([[3.0, 1.0], [1.0, 2.0]])
    rhs = np.array([1.0, 4.0])
    ref = np.linalg.solve(M, rhs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for em, er in ((0, 0), (-1060, -1000), (-560, 0), (1000, 1000), (700, -300)):
            nu, mu = _solve_2x2(np.ldexp(M, em), np.ldexp(rhs, er))
            np.testing.assert_allclose(np.ldexp([nu, mu], em - er), ref, rtol=1e-15)
        # weights past the float range, a singular or a non-finite system: no weights
        nu, mu = _solve_2x2(np.ldexp(M, -1000), np.ldexp(rhs, 1000))
        assert nu == -np.inf and mu == np.inf  # the solution is (-0.4, 2.2) * 2**2000
        assert _solve_2x2(np.ones((2, 2)), rhs) is None
        assert _solve_2x2(np.zeros((2, 2)), rhs) is None
        assert _solve_2x2(np.array([[np.inf, 1.0], [1.0, 2.0]]), rhs) is None
        assert _solve_2x2(M, np.array([np.nan, 1.0])) is None

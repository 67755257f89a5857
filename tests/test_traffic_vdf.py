"""Volume-delay functions: costs against their formulas written out again here,
derivatives against differences, integrals against quadrature, and equilibria against
cvxpy (BPR) and an independent path-flow formulation solved by scipy, with the Wardrop
conditions checked on enumerated paths.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy import integrate, optimize

import frankwolfe as fw
from frankwolfe.applications.traffic import (
    VDF_KINDS,
    Beckmann,
    Network,
    VolumeDelayError,
    relative_gap,
    traffic_assignment,
)

# kind -> (b, power) used below
PARAMS = {"bpr": (0.15, 4.0), "bpr2": (0.3, 2.0), "conical": (4.0, 0.0),
          "inrets": (0.6, 0.0), "akcelik": (0.3, 1.5)}


def _formula(kind: str, x: float, t0: float, cap: float, a: float, b: float) -> float:
    """The documented cost (applications/traffic/vdf.py), written out independently."""
    v = max(x, 0.0) / cap
    if kind == "bpr":
        return t0 * (1 + a * v ** b)
    if kind == "bpr2":
        return t0 * (1 + a * v ** (b if v <= 1 else 2 * b))
    if kind == "conical":
        g = (2 * a - 1) / (2 * a - 2)
        return t0 * (2 + np.sqrt(a ** 2 * (1 - v) ** 2 + g ** 2) - a * (1 - v) - g)
    if kind == "inrets":
        return t0 * (1.1 - a * v) / (1.1 - v) if v <= 1 else t0 * (1.1 - a) / 0.1 * v ** 2
    J, T = a, b
    return t0 + T / 4 * ((v - 1) + np.sqrt((v - 1) ** 2 + 8 * J * v / (cap * T)))


def _one_link(kind: str, t0: float = 3.0, cap: float = 50.0, fixed: float = 0.0) -> Network:
    a, b = PARAMS[kind]
    return Network(init_node=np.array([0]), term_node=np.array([1]),
                   free_flow_time=np.array([t0]), capacity=np.array([cap]), b=np.array([a]),
                   power=np.array([b]), demand=np.zeros((2, 2)), vdf=kind,
                   toll=np.array([fixed]), toll_factor=1.0)


@pytest.mark.parametrize("kind", sorted(VDF_KINDS))
def test_cost_derivative_and_integral(kind):
    t0, cap, fixed = 3.0, 50.0, 0.7
    net = _one_link(kind, t0, cap, fixed)
    obj = Beckmann(net)
    a, b = PARAMS[kind]
    xs = [0.0, 1e-3, 10.0, 37.5, 49.9, 50.0, 50.1, 80.0, 140.0]
    for x in xs:
        want = _formula(kind, x, t0, cap, a, b) + fixed
        f, g = obj.value_and_gradient(np.array([x]))
        assert g[0] == pytest.approx(want, rel=1e-12)
        assert net.link_costs(np.array([x]))[0] == pytest.approx(want, rel=1e-12)
        quad = integrate.quad(lambda u: _formula(kind, u, t0, cap, a, b) + fixed, 0.0, x,
                              points=[cap] if x > cap else None, epsabs=0, epsrel=1e-12)[0]
        assert f == pytest.approx(quad, rel=1e-9, abs=1e-12)
        if x > 0.5 and abs(x - cap) > 0.5:  # derivative: central differences off the kink
            h = obj.hessian_diagonal(np.array([x]))[0]
            eps = 1e-5 * x
            fd = (_formula(kind, x + eps, t0, cap, a, b)
                  - _formula(kind, x - eps, t0, cap, a, b)) / (2 * eps)
            assert h == pytest.approx(fd, rel=1e-5)
    # non-decreasing costs, continuous at capacity (the Beckmann objective is convex)
    grid = np.linspace(0, 3 * cap, 601)
    costs = [obj.gradient(np.array([x]))[0] for x in grid]
    assert np.all(np.diff(costs) >= -1e-12)
    lo, hi = (obj.gradient(np.array([cap * (1 + s)]))[0] for s in (-1e-9, 1e-9))
    assert abs(hi - lo) <= 1e-6 * hi
    # at 0 the free-flow time (plus the fixed cost), and below 0 the same, linearly
    assert obj.gradient(np.array([0.0]))[0] == pytest.approx(t0 + fixed, rel=1e-12)
    f, g = obj.value_and_gradient(np.array([-1e-9]))
    assert g[0] == pytest.approx(t0 + fixed, rel=1e-12)
    assert f == pytest.approx(-1e-9 * (t0 + fixed), rel=1e-9)


def test_bad_volume_delay_functions_are_named():
    base = dict(init_node=np.array([0, 1]), term_node=np.array([1, 0]),
                free_flow_time=np.ones(2), capacity=np.ones(2), b=np.array([0.15, 2.0]),
                power=np.array([4.0, 4.0]), demand=np.zeros((2, 2)))
    with pytest.raises(VolumeDelayError, match=r"link 1 is 'davidson'"):
        Network(**base, vdf=["bpr", "davidson"])
    with pytest.raises(VolumeDelayError, match="one of"):
        Network(**base, vdf="linear")
    with pytest.raises(VolumeDelayError, match="code 7"):
        Network(**base, vdf=np.array([0, 7]))
    with pytest.raises(VolumeDelayError, match=r"shape \(3,\)"):
        Network(**base, vdf=["bpr"] * 3)
    with pytest.raises(VolumeDelayError, match=r"link 0 .*'conical'.* > 1, got b=0.15"):
        Network(**base, vdf="conical")
    with pytest.raises(VolumeDelayError, match=r"link 1 .*'inrets'.*\[0, 1\), got b=2.0"):
        Network(**base, vdf="inrets")
    with pytest.raises(VolumeDelayError, match=r"link 0 .*'akcelik'.*got b=0.15, power=0.0"):
        Network(**dict(base, power=np.array([0.0, 1.0])), vdf="akcelik")
    with pytest.raises(VolumeDelayError, match="capacity 0.0"):
        Network(**dict(base, capacity=np.array([1.0, 0.0])), vdf="akcelik")
    # codes and names are both accepted, and the network keeps the codes
    net = Network(**base, vdf=["BPR2", "bpr"])
    assert net.vdf.tolist() == [VDF_KINDS["bpr2"], VDF_KINDS["bpr"]]


def _braess_like(kind, demand_scale: float = 1.0, seed: int = 0) -> Network:
    """6 nodes, 11 links, two origins to two destinations, several routes each;
    demand near and above capacity (the piecewise parts of BPR2 and INRETS are used)."""
    rng = np.random.default_rng(seed)
    links = [(0, 4), (0, 5), (4, 5), (5, 4), (4, 2), (5, 2), (1, 4), (1, 5), (4, 3), (5, 3),
             (0, 3)]
    tail, head = np.array(links).T
    m = len(links)
    kinds = kind if isinstance(kind, list) else [kind] * m
    b = np.array([PARAMS[k][0] for k in kinds])
    power = np.array([PARAMS[k][1] for k in kinds])
    demand = np.zeros((4, 4))
    demand[0, 2], demand[0, 3], demand[1, 2], demand[1, 3] = 60, 30, 40, 50
    return Network(init_node=tail, term_node=head, free_flow_time=rng.uniform(1, 4, m),
                   capacity=rng.uniform(25, 60, m), b=b, power=power,
                   demand=demand * demand_scale, n_nodes=6, vdf=kinds)


def _path_equilibrium(net: Network):
    """Link flows of the equilibrium by scipy on the path-flow formulation: minimize the
    sum of the links' integrals (Gauss-Legendre quadrature of their costs, not the
    objective's own integrals) over route flows."""
    G = nx.DiGraph()
    for a, (u, v) in enumerate(zip(net.init_node, net.term_node)):
        G.add_edge(int(u), int(v), a=a)
    pairs, paths = [], []
    for o in range(net.n_zones):
        for d in range(net.n_zones):
            if net.demand[o, d] > 0:
                for p in nx.all_simple_paths(G, o, d):
                    pairs.append((o, d))
                    paths.append([G[u][v]["a"] for u, v in zip(p[:-1], p[1:])])
    delta = np.zeros((net.n_links, len(paths)))
    for j, p in enumerate(paths):
        delta[p, j] = 1.0
    cost = net.link_costs
    nodes, weights = np.polynomial.legendre.leggauss(40)

    def integral(lo, hi):
        # Gauss-Legendre on [lo, hi] for every link at once (exact to ~1e-15 for these
        # smooth pieces; the kinks at capacity are interval ends)
        mid, half = (hi + lo) / 2, (hi - lo) / 2
        return half * sum(w * cost(mid + half * u) for u, w in zip(nodes, weights))

    def beckmann(h):
        x = delta @ h
        cap = np.minimum(x, net.capacity)
        return float(np.sum(integral(np.zeros_like(x), cap) + integral(cap, x)))

    def grad(h):
        return delta.T @ cost(delta @ h)

    cons = [{"type": "eq", "fun": (lambda h, od=od: sum(h[j] for j, p in enumerate(pairs)
                                                        if p == od) - net.demand[od])}
            for od in sorted(set(pairs))]
    h0 = np.array([net.demand[p] / pairs.count(p) for p in pairs])
    res = optimize.minimize(beckmann, h0, jac=grad, constraints=cons,
                            bounds=[(0, None)] * len(paths), method="SLSQP",
                            options={"ftol": 1e-14, "maxiter": 500})
    assert res.success, res.message
    return delta @ res.x, pairs, paths


@pytest.mark.parametrize("kind", ["bpr2", "conical", "inrets", "akcelik",
                                  ["bpr", "bpr2", "conical", "inrets", "akcelik", "bpr",
                                   "conical", "inrets", "akcelik", "bpr2", "bpr"]])
def test_equilibrium_matches_path_formulation_and_wardrop(kind):
    net = _braess_like(kind)
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", rel_gap=1e-12, max_iter=3000, random_state=0,
                                 compiled=True)
    assert res.extra["engine"] == "compiled"
    assert -1e-13 <= relative_gap(net, res.x) <= 1e-11
    ref, pairs, paths = _path_equilibrium(net)
    scale = np.abs(ref).max()
    assert np.abs(res.x - ref).max() <= 1e-4 * scale
    # Wardrop on the enumerated paths: no path of a pair is cheaper than a used one
    c = net.link_costs(res.x)
    from frankwolfe.applications.traffic import route_flows
    routes = route_flows(net, res)
    for od in sorted(set(pairs)):
        best = min(c[p].sum() for (q, p) in zip(pairs, paths) if q == od)
        for route, flow in routes[od].items():
            if flow > 1e-9 * net.demand[od]:
                assert c[list(route)].sum() <= best * (1 + 1e-9)
    # the Python block steps take the same steps
    with fw.debug(False):
        py = traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=40, random_state=0,
                                compiled=False, atom_storage="sparse")
        cc = traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=40, random_state=0,
                                compiled=True)
    assert np.abs(cc.x - py.x).max() <= 1e-12 * np.abs(py.x).max()


@pytest.mark.parametrize("power", [4.0, 2.5])
def test_bpr_equilibrium_matches_cvxpy(power):
    cp = pytest.importorskip("cvxpy")
    net = _braess_like("bpr", demand_scale=1.5, seed=1)
    net = Network(init_node=net.init_node, term_node=net.term_node,
                  free_flow_time=net.free_flow_time, capacity=net.capacity, b=net.b,
                  power=np.full(net.n_links, power), demand=net.demand, n_nodes=6, vdf="bpr")
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", rel_gap=1e-12, max_iter=3000, random_state=0)
    # link-node formulation: one flow vector per origin, conservation at every node
    n, m = net.n_nodes, net.n_links
    A = np.zeros((n, m))
    A[net.init_node, np.arange(m)] += 1.0
    A[net.term_node, np.arange(m)] -= 1.0
    origins = [o for o in range(net.n_zones) if net.demand[o].sum() > 0]
    F = cp.Variable((len(origins), m), nonneg=True)
    cons = []
    for k, o in enumerate(origins):
        supply = np.zeros(n)
        supply[o] = net.demand[o].sum()
        supply[:net.n_zones] -= net.demand[o]
        cons.append(A @ F[k] == supply)
    x = cp.sum(F, axis=0)
    t0, c, b = net.free_flow_time, net.capacity, net.b
    obj = t0 @ x + cp.sum(cp.multiply(t0 * b * c / (power + 1),
                                      cp.power(cp.multiply(x, 1 / c), power + 1)))
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve()
    assert prob.status == "optimal"
    assert res.fun == pytest.approx(prob.value, rel=1e-6)
    scale = np.abs(res.x).max()
    assert np.abs(res.x - x.value).max() <= 2e-3 * scale
    assert res.fun <= prob.value * (1 + 1e-7)  # ours is at least as good (to 1e-12)

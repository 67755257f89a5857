"""Multi-class traffic assignment: the equilibrium against cvxpy's solution of the same
convex program (link-node formulation, one commodity per class and origin), Wardrop's
conditions per class on enumerated paths (networkx), the one-class run against the
single-class API, and the errors of bad class input."""

import networkx as nx
import numpy as np
import pytest

from frankwolfe.applications.traffic import (
    DemandClass,
    DemandClassError,
    Network,
    load_siouxfalls,
    route_flows,
    split_demand,
    traffic_assignment,
)


def _network(vdf: str = "bpr", seed: int = 3) -> Network:
    """A strongly connected random network of 7 nodes (~20 links), 3 zones."""
    rng = np.random.default_rng(seed)
    n = 7
    g = nx.gnp_random_graph(n, 0.25, seed=seed, directed=True)
    ring = [(i, (i + 1) % n) for i in range(n)] + [((i + 1) % n, i) for i in range(n)]
    edges = sorted(set(g.edges()) | set(ring))
    tail, head = np.array(edges).T
    m = len(edges)
    demand = rng.uniform(5, 40, (3, 3))
    b = np.full(m, 0.15) if vdf == "bpr" else rng.uniform(0.2, 0.8, m)
    return Network(init_node=tail, term_node=head, free_flow_time=rng.uniform(1, 10, m),
                   capacity=rng.uniform(150, 300, m), b=b, power=np.full(m, 4.0),
                   demand=demand, n_nodes=n, vdf=vdf)


def _classes(net: Network, seed: int = 5) -> list[DemandClass]:
    """Cars and trucks: different demand, pce, vot, tolls (random on every link, so the
    class flows are unique) and a banned link for trucks."""
    rng = np.random.default_rng(seed)
    m = net.n_links
    banned = int(np.flatnonzero(net.init_node != net.term_node - 1)[0])  # not a ring link
    return [
        DemandClass("car", net.demand, pce=1.0, vot=1.0, tolls=rng.uniform(0, 2, m)),
        DemandClass("truck", 0.3 * net.demand[::-1, ::-1], pce=2.5, vot=4.0,
                    tolls=rng.uniform(0, 4, m), toll_factor=1.5, banned_links=[banned]),
    ]


def _cvxpy_multiclass(net: Network, classes: list[DemandClass]):
    """The multi-class program in cvxpy; returns (class flows, volumes, objective)."""
    cp = pytest.importorskip("cvxpy")
    n, m = net.n_nodes, net.n_links
    A = np.zeros((n, m))
    A[net.init_node, np.arange(m)] = 1.0
    A[net.term_node, np.arange(m)] = -1.0
    cons, flows, linear = [], [], 0
    for c in classes:
        X = cp.Variable((m, c.demand.shape[0]), nonneg=True)
        for o in range(c.demand.shape[0]):
            row = c.demand[o].copy()
            row[o] = 0.0
            rhs = np.zeros(n)
            rhs[: row.size] -= row
            rhs[o] += row.sum()
            cons.append(A @ X[:, o] == rhs)
        if c.banned_links is not None:
            cons.append(X[c.banned_links, :] == 0)
        x_c = cp.sum(X, axis=1)
        flows.append(x_c)
        linear = linear + c.pce * (c.toll_factor * c.tolls / c.vot) @ x_c
    v = sum(c.pce * x for c, x in zip(classes, flows))
    t0, cap = net.free_flow_time, net.capacity
    r = cp.multiply(v, 1 / cap)
    if (net.vdf == 0).all():  # BPR
        beck = t0 @ v + cp.sum(cp.multiply(t0 * net.b * cap / 5.0, cp.power(r, 5)))
    else:  # INRETS below capacity: t0 cap (alpha r - 1.1 (1 - alpha) log((1.1 - r) / 1.1))
        alpha = net.b
        beck = cp.sum(cp.multiply(t0 * cap * alpha, r)
                      - cp.multiply(t0 * cap * 1.1 * (1 - alpha), cp.log(1.1 - r) - np.log(1.1)))
        cons.append(r <= 1.0)
    prob = cp.Problem(cp.Minimize(beck + linear), cons)
    prob.solve(solver=cp.CLARABEL)
    return [np.asarray(x.value) for x in flows], np.asarray(v.value), float(prob.value)


@pytest.mark.parametrize("vdf", ["bpr", "inrets"])
@pytest.mark.parametrize("method", ["bfw", "bcfw"])
def test_two_classes_match_cvxpy(vdf, method):
    net = _network(vdf)
    classes = _classes(net)
    x_ref, v_ref, f_ref = _cvxpy_multiclass(net, classes)
    res = traffic_assignment(net, method, rel_gap=1e-9, max_iter=100_000, classes=classes)
    assert res.success, res.message
    if vdf == "inrets":  # the cvxpy program's branch (below capacity) is the one in use
        assert (res.x / net.capacity).max() < 0.99
    assert res.fun == pytest.approx(f_ref, rel=1e-6)
    assert res.fun <= f_ref * (1 + 1e-7)  # no worse than cvxpy's optimum
    scale = v_ref.max()
    np.testing.assert_allclose(res.x, v_ref, rtol=1e-4, atol=1e-4 * scale)
    for c, ref in zip(classes, x_ref):
        np.testing.assert_allclose(res.extra["class_flows"][c.name], ref, rtol=1e-3,
                                   atol=1e-3 * scale)
    # the certificates: per class relative gaps, class gaps summing to the overall one
    for c in classes:
        assert -1e-12 <= res.extra["class_relative_gap"][c.name] <= 1e-8
    total = sum(res.extra["class_gap"].values())
    assert total == pytest.approx(res.gap, rel=1e-6, abs=1e-9 * abs(res.fun))
    # banned links carry no truck
    assert np.all(res.extra["class_flows"]["truck"][classes[1].banned_links] == 0.0)


def test_wardrop_per_class_on_enumerated_paths():
    net = _network("bpr")
    classes = _classes(net)
    res = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=20_000, classes=classes,
                             random_state=0)
    assert res.success, res.message
    routes = route_flows(net, res, classes=classes)
    times = net.link_costs(res.x)  # the volume-delay times at the volumes, recomputed
    for c in classes:
        cost = times + c.toll_factor * c.tolls / c.vot
        banned = set() if c.banned_links is None else set(c.banned_links.tolist())
        G = nx.DiGraph()
        for a, (u, w) in enumerate(zip(net.init_node, net.term_node)):
            if a not in banned:
                G.add_edge(int(u), int(w), link=a)
        loads = np.zeros(net.n_links)
        for o in range(3):
            for d in range(3):
                if o == d:
                    continue
                paths = [tuple(G[u][w]["link"] for u, w in zip(p[:-1], p[1:]))
                         for p in nx.all_simple_paths(G, o, d)]
                best = min(cost[list(p)].sum() for p in paths)
                used = routes[(c.name, o, d)]
                assert sum(used.values()) == pytest.approx(c.demand[o, d], rel=1e-12)
                for route, flow in used.items():
                    assert route in paths  # a simple path avoiding the banned links
                    loads[list(route)] += flow
                    if flow > 1e-9 * c.demand[o, d]:
                        assert cost[list(route)].sum() == pytest.approx(best, rel=1e-7)
        np.testing.assert_allclose(loads, res.extra["class_flows"][c.name], rtol=1e-9,
                                   atol=1e-9 * loads.max())


@pytest.mark.parametrize("method", ["fw", "cfw", "bfw"])
def test_one_class_equals_single_class_api(method):
    net = _network("bpr")
    a = traffic_assignment(net, method, rel_gap=0.0, max_iter=40)
    b = traffic_assignment(net, method, rel_gap=0.0, max_iter=40,
                           classes=[DemandClass("all", net.demand, tolls=0.0)])
    np.testing.assert_allclose(b.x, a.x, rtol=1e-10, atol=1e-10 * a.x.max())
    np.testing.assert_allclose(b.extra["class_flows"]["all"], a.x, rtol=1e-10,
                               atol=1e-10 * a.x.max())
    assert b.fun == pytest.approx(a.fun, rel=1e-12)
    assert b.gap == pytest.approx(a.gap, rel=1e-8)
    assert b.extra["relative_gap"] == pytest.approx(a.extra["relative_gap"], rel=1e-8)
    assert b.extra["class_relative_gap"]["all"] == pytest.approx(a.extra["relative_gap"],
                                                                 rel=1e-8)


def test_one_class_bcfw_and_scalings_equal_single_class():
    """bcfw with one class reaches the single-class equilibrium; pce scales volumes
    (half the vehicles at pce 2) and vot scales tolls (vot 2 = toll factor 1/2)."""
    net = _network("bpr")
    m = net.n_links
    tolls = np.linspace(0.0, 3.0, m)
    ref = traffic_assignment(Network(**{**_fields(net), "toll": tolls, "toll_factor": 0.5}),
                             "bcfw", rel_gap=1e-11, max_iter=10_000)
    runs = [DemandClass("one", net.demand, tolls=tolls, vot=2.0),
            DemandClass("half", net.demand / 2, tolls=tolls, vot=2.0, pce=2.0)]
    for c in runs:
        res = traffic_assignment(net, "bcfw", rel_gap=1e-11, max_iter=10_000, classes=[c])
        assert res.success, res.message
        np.testing.assert_allclose(res.x, ref.x, rtol=1e-6, atol=1e-6 * ref.x.max())
        np.testing.assert_allclose(res.extra["class_flows"][c.name] * c.pce, ref.x,
                                   rtol=1e-6, atol=1e-6 * ref.x.max())


def _fields(net: Network) -> dict:
    return dict(init_node=net.init_node, term_node=net.term_node,
                free_flow_time=net.free_flow_time, capacity=net.capacity, b=net.b,
                power=net.power, demand=net.demand, n_nodes=net.n_nodes)


def test_warm_start_from_a_multiclass_result():
    net = _network("bpr")
    classes = _classes(net)
    first = traffic_assignment(net, "bfw", rel_gap=1e-4, classes=classes)
    again = traffic_assignment(net, "bfw", rel_gap=1e-4, classes=classes, x0=first)
    assert again.nit <= 1
    b1 = traffic_assignment(net, "bcfw", rel_gap=1e-6, classes=classes, random_state=0)
    b2 = traffic_assignment(net, "bcfw", rel_gap=1e-6, classes=classes, x0=b1, random_state=0)
    assert b2.nit <= 5
    with pytest.raises(ValueError, match="multi-class Result"):
        traffic_assignment(net, "bfw", classes=classes, x0=traffic_assignment(net, "fw"))


def test_bad_class_input_is_named():
    net = _network("bpr")
    d = net.demand
    m = net.n_links
    with pytest.raises(DemandClassError, match=r"'car'.*`demand`.*non-negative.*-1\.0"):
        DemandClass("car", np.where(np.arange(9).reshape(3, 3) == 5, -1.0, d))
    with pytest.raises(DemandClassError, match=r"'truck'.*`pce`.*positive.*0"):
        DemandClass("truck", d, pce=0)
    with pytest.raises(DemandClassError, match=r"`pce`.*-2"):
        DemandClass("truck", d, pce=-2.0)
    with pytest.raises(DemandClassError, match=r"'bus'.*`vot`.*positive"):
        DemandClass("bus", d, vot=0.0)
    with pytest.raises(DemandClassError, match=r"`demand`.*square"):
        DemandClass("car", d[:2])
    with pytest.raises(DemandClassError, match=r"`name`"):
        DemandClass("", d)
    with pytest.raises(DemandClassError, match=rf"'car'.*`tolls`.*\({m},\).*\({m + 1},\)"):
        traffic_assignment(net, classes=[DemandClass("car", d, tolls=np.ones(m + 1))])
    with pytest.raises(DemandClassError, match=rf"'car'.*banned link {m} .*0\.\.{m - 1}"):
        traffic_assignment(net, classes=[DemandClass("car", d, banned_links=[0, m])])
    with pytest.raises(DemandClassError, match=r"'car'.*banned link -1"):
        traffic_assignment(net, classes=[DemandClass("car", d, banned_links=[-1])])
    out_of_0 = np.flatnonzero(net.init_node == 0)
    with pytest.raises(DemandClassError, match=r"'car'.*no route.*banned links: zone \d cannot "
                       r"be reached from zone 1"):
        traffic_assignment(net, classes=[DemandClass("car", d, banned_links=out_of_0)])
    with pytest.raises(DemandClassError, match=r"unique"):
        traffic_assignment(net, classes=[DemandClass("a", d), DemandClass("a", d)])
    with pytest.raises(DemandClassError, match=r"classes\[0\].*dict"):
        traffic_assignment(net, classes=[{"name": "a"}])
    with pytest.raises(DemandClassError, match=r"at least one"):
        traffic_assignment(net, classes=[])
    with pytest.raises(DemandClassError, match=r"'car'.*negative at free flow"):
        traffic_assignment(net, classes=[DemandClass("car", d, tolls=-1e6)])
    with pytest.raises(ValueError, match=r"Python block steps.*compiled=True"):
        traffic_assignment(net, "bcfw", classes=[DemandClass("car", d)], compiled=True)
    with pytest.raises(DemandClassError, match="sum to 1"):
        split_demand(d, {"car": 0.9, "truck": 0.2})


def test_split_demand_shares():
    d = np.arange(9.0).reshape(3, 3)
    parts = split_demand(d, {"car": 0.9, "truck": 0.1})
    np.testing.assert_allclose(parts["car"] + parts["truck"], d, rtol=1e-15)
    np.testing.assert_allclose(parts["truck"], 0.1 * d, rtol=1e-15)


def test_siouxfalls_cars_and_trucks(shared_data):
    net, _ = load_siouxfalls(shared_data)
    parts = split_demand(net.demand, {"car": 0.9, "truck": 0.1})
    tolls = np.zeros(net.n_links)
    tolls[[24, 25, 27, 42]] = 2.0  # the links of node 10
    banned = [26, 29, 35]
    classes = [DemandClass("car", parts["car"], tolls=tolls),
               DemandClass("truck", parts["truck"], pce=2.5, vot=2.0, tolls=tolls,
                           toll_factor=3.0, banned_links=banned)]
    res = traffic_assignment(net, "bcfw", rel_gap=1e-6, classes=classes, random_state=0)
    assert res.success, res.message
    flows = res.extra["class_flows"]
    np.testing.assert_allclose(flows["car"] + 2.5 * flows["truck"], res.x, rtol=1e-12,
                               atol=1e-9)
    assert np.all(flows["truck"][banned] == 0.0)
    assert max(res.extra["class_relative_gap"].values()) <= 3e-6
    assert res.extra["relative_gap"] <= 1e-6


# -- planners' outputs: skims and select-link analysis ----------------------------------
def _nx_skims(net: Network, cost: np.ndarray, attrs: dict, banned=()) -> dict:
    """Shortest routes by networkx (on the links not banned); the attributes summed
    along them."""
    G = nx.DiGraph()
    for a, (u, w) in enumerate(zip(net.init_node, net.term_node)):
        if a not in set(banned):
            G.add_edge(int(u), int(w), link=a, weight=cost[a])
    out = {}
    for o in range(3):
        _, paths = nx.single_source_dijkstra(G, o)
        for d in range(3):
            if d != o:
                links = [G[u][w]["link"] for u, w in zip(paths[d][:-1], paths[d][1:])]
                out[(o, d)] = {k: float(v[links].sum()) for k, v in attrs.items()}
    return out


def test_skims_against_networkx_paths():
    pytest.importorskip("pandas")
    from frankwolfe.applications.traffic import skims

    base = _network("bpr")
    rng = np.random.default_rng(11)
    m = base.n_links
    net = Network(**_fields(base), length=rng.uniform(1, 5, m), toll=rng.uniform(0, 3, m),
                  toll_factor=0.5, distance_factor=0.2)
    # random volumes, not an equilibrium: no ties between routes of different times
    flows = rng.uniform(0, 300, m)
    table = skims(net, flows)
    assert len(table) == 6
    times = net.link_costs(flows) - net.fixed_cost
    ref = _nx_skims(net, net.link_costs(flows), {"cost": net.link_costs(flows),
                                                  "time": times, "distance": net.length,
                                                  "toll": net.toll})
    for row in table.itertuples():
        want = ref[(row.origin, row.destination)]
        assert row.demand == net.demand[row.origin, row.destination]
        for k in ("cost", "time", "distance", "toll"):
            assert getattr(row, k) == pytest.approx(want[k], rel=1e-12)
    # per class: its graph and generalized cost
    classes = _classes(base)
    table = skims(base, flows, classes=classes)
    assert set(table["class"]) == {"car", "truck"} and len(table) == 12
    times = base.link_costs(flows)
    for c in classes:
        toll = c.toll_factor * c.tolls
        ref = _nx_skims(base, times + toll / c.vot,
                        {"cost": times + toll / c.vot, "time": times, "toll": toll},
                        banned=() if c.banned_links is None else c.banned_links.tolist())
        for row in table[table["class"] == c.name].itertuples():
            want = ref[(row.origin, row.destination)]
            for k in ("cost", "time", "toll"):
                assert getattr(row, k) == pytest.approx(want[k], rel=1e-12)
    # a multi-class result without its classes read as one class with no tolls (and a
    # single-class one with classes): refused, as route_flows refuses it
    res = traffic_assignment(base, "bfw", rel_gap=1e-6, classes=classes)
    with pytest.raises(ValueError, match="skims: pass `classes` with"):
        skims(base, res)
    assert set(skims(base, res, classes=classes)["class"]) == {"car", "truck"}
    with pytest.raises(ValueError, match="skims: pass `classes` with"):
        skims(base, traffic_assignment(base, "bfw", rel_gap=1e-6), classes=classes)


def test_select_link_flows_add_up_to_link_flows():
    pytest.importorskip("pandas")
    from frankwolfe.applications.traffic import select_link

    net = _network("bpr")
    res = traffic_assignment(net, "bcfw", rel_gap=1e-10, random_state=0)
    for a in range(net.n_links):
        table = select_link(net, res, [a])
        assert table["flow"].sum() == pytest.approx(res.x[a], rel=1e-9, abs=1e-9)
        assert np.all((table["share"] > 0) & (table["share"] <= 1 + 1e-12))
    both = select_link(net, res, [0, 1])
    assert both["flow"].sum() <= res.x[0] + res.x[1] + 1e-9
    assert both["flow"].sum() >= max(res.x[0], res.x[1]) - 1e-9
    classes = _classes(net)
    mc = traffic_assignment(net, "bcfw", rel_gap=1e-10, classes=classes, random_state=0)
    for a in range(net.n_links):
        table = select_link(net, mc, [a], classes=classes)
        for c in classes:
            got = table.loc[table["class"] == c.name, "flow"].sum()
            assert got == pytest.approx(mc.extra["class_flows"][c.name][a], rel=1e-9,
                                        abs=1e-9)
    with pytest.raises(ValueError, match="select_link: `links`"):
        select_link(net, res, [net.n_links])
    with pytest.raises(ValueError, match="keeps no active sets"):
        select_link(net, traffic_assignment(net, "bfw"), [0])


def test_outputs_name_missing_pandas_and_class_mismatch(monkeypatch):
    from frankwolfe.applications.traffic import select_link, skims

    net = _network("bpr")
    classes = _classes(net)
    mc = traffic_assignment(net, "bcfw", rel_gap=1e-6, classes=classes, random_state=0)
    with pytest.raises(ValueError, match="route_flows: pass `classes`"):
        route_flows(net, mc)
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)  # pandas absent
    with pytest.raises(ImportError, match=r"skims needs pandas.*frankwolfe\[pandas\]"):
        skims(net, mc.x)
    with pytest.raises(ImportError, match=r"select_link needs pandas"):
        select_link(net, mc, [0], classes=classes)

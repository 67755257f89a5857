"""Compiled block steps for separable objectives, and traffic's origin blocks on them.

Independent references: scipy's bounded scalar minimization for the core's line
search; the Python block steps of the same run (the same block order, cache and
active sets) for the compiled ones; the relative gap recomputed from an independent
all-or-nothing assignment; cvxpy for a separable objective over simplices.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import optimize
from traffic_networks import grid_network

import frankwolfe as fw
from frankwolfe.applications.traffic import (
    Beckmann,
    Network,
    load_siouxfalls,
    read_tntp,
    relative_gap,
    route_flows,
    traffic_assignment,
)
from frankwolfe.applications.traffic.vdf import _coord
from frankwolfe.compiled import separable_objective, separable_step
from frankwolfe.lmo.product import ProductDomain
from frankwolfe.lmo.simplex import ProbabilitySimplex
from frankwolfe.objectives.base import Objective


def _both(net: Network, passes: int, **options):
    """The same bcfw run with the Python and with the compiled block steps.

    The Python steps keep their trees sparse (on small networks they would keep them
    dense, and BLAS would sum the scores in another order): right after a pairwise
    step the two trees' scores tie exactly, so which one is the next away atom depends
    on the last bit of the sums."""
    with fw.debug(False):
        res = {c: traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=passes,
                                     random_state=0, compiled=c,
                                     **(options if c else dict(options, atom_storage="sparse")))
               for c in (False, True)}
    assert res[False].extra["engine"] == "python"
    assert res[True].extra["engine"] == "compiled", res[True].extra["engine_reason"]
    return res[False], res[True]


def _assert_same_run(py, cc, rtol=1e-12):
    scale = np.abs(py.x).max()
    assert np.abs(cc.x - py.x).max() <= rtol * scale
    assert abs(cc.fun - py.fun) <= rtol * abs(py.fun)
    assert abs(cc.gap - py.gap) <= 1e-9 * max(py.gap, 1e-300) + rtol * abs(py.fun)
    assert cc.extra["cache_hits"] == py.extra["cache_hits"]
    assert cc.extra["cache_misses"] == py.extra["cache_misses"]
    assert cc.extra["n_drop_steps"] == py.extra["n_drop_steps"]
    assert cc.nit == py.nit
    assert cc.extra["atom_store_bytes"] > 0


# -- the core's line search -------------------------------------------------------------
def test_separable_search_matches_scipy():
    net = grid_network(4, 4, 5, seed=1)
    obj = Beckmann(net)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 300, net.n_links)
    idx = np.sort(rng.choice(net.n_links, 20, replace=False))
    d = rng.normal(0, 100, idx.size)
    d[np.abs(d) < 1] = 1.0

    def phi(gam: float) -> float:
        y = x.copy()
        y[idx] += gam * d
        return obj.value(y)

    g = obj.gradient(x)
    if g[idx] @ d > 0:  # a descent direction
        d = -d
    # the largest step that keeps the flows non-negative
    gmax = float(np.min(-x[idx][d < 0] / d[d < 0]))
    gam = separable_step(_coord, obj._data, x, idx, d, gmax)
    ref = optimize.minimize_scalar(phi, bounds=(0.0, gmax), method="bounded",
                                   options={"xatol": 1e-12 * gmax})
    assert 0.0 < gam <= gmax
    assert abs(gam - ref.x) <= 1e-6 * gmax
    assert phi(gam) <= ref.fun + 1e-9 * abs(ref.fun)
    # the bound is honoured, and a non-descent direction gives no step
    assert separable_step(_coord, obj._data, x, idx, d, 0.1 * gam) == 0.1 * gam
    assert separable_step(_coord, obj._data, x, idx, -d, gmax) == 0.0


# -- a separable objective of the core, not traffic: sum_j a_j x_j^4 / 4 + b_j x_j -------
@njit(cache=True)
def _quartic_coord(data, j, xj, want_value):  # pragma: no cover - compiled
    a, b = data[0][j], data[1][j]
    f = a * xj ** 4 / 4.0 + b * xj if want_value else 0.0
    return f, a * xj ** 3 + b, 3.0 * a * xj * xj


class _Quartic(Objective):
    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b = a, b
        self.shape = a.shape
        self._data = (a, b)

    def value_and_gradient(self, x):
        return float(np.sum(self.a * x ** 4 / 4 + self.b * x)), self.a * x ** 3 + self.b

    def value(self, x):
        return self.value_and_gradient(x)[0]

    def gradient(self, x):
        return self.value_and_gradient(x)[1]

    def exact_step_block(self, x, indices, direction, partial_gradient):
        return separable_step(_quartic_coord, self._data, x, indices, direction)

    def compiled_block_objective(self):
        return separable_objective(_quartic_coord, self._data)


def test_compiled_bcfw_on_a_separable_objective_matches_python_and_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    n_blocks, size = 6, 5
    a, b = rng.uniform(1, 4, n_blocks * size), rng.normal(0, 1, n_blocks * size)
    obj = _Quartic(a, b)
    dom = ProductDomain([ProbabilitySimplex(dim=size) for _ in range(n_blocks)])
    with fw.debug(False):
        runs = {c: fw.block_coordinate_frank_wolfe(obj, dom, step_size="exact", max_iter=200,
                                                   tol=0.0, random_state=1, compiled=c)
                for c in (False, True)}
    assert runs[True].extra["engine"] == "compiled"
    assert runs[False].extra["engine"] == "python"
    assert np.abs(runs[True].x - runs[False].x).max() <= 1e-12
    y = cp.Variable(n_blocks * size)
    cons = [y >= 0] + [cp.sum(y[i * size:(i + 1) * size]) == 1 for i in range(n_blocks)]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(a / 4, cp.power(y, 4))) + b @ y), cons)
    prob.solve()
    # the certified gap bounds the suboptimality (FW block steps converge sublinearly)
    res = runs[True]
    assert 0.0 < res.gap <= 1e-2
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7


# -- traffic's origin blocks ------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"block_step": "fw"}, {"cache": False},
                                     {"cache_size": 1}, {"cache_factor": 0.0}])
def test_compiled_block_steps_equal_python_on_agrid_network(options):
    net = grid_network(5, 5, 8, seed=2)
    py, cc = _both(net, 40, **options)
    _assert_same_run(py, cc)
    if options.get("block_step", "pairwise") == "pairwise":
        for sp, sc in zip(py.extra["active_sets"], cc.extra["active_sets"]):
            assert dict(sp) == pytest.approx(dict(sc), rel=1e-9, abs=1e-12)
    for zp, zc in zip(py.extra["block_iterates"].toarray(), cc.extra["block_iterates"].toarray()):
        assert np.abs(zc - zp).max() <= 1e-10 * max(np.abs(zp).max(), 1.0)


def test_compiled_siouxfalls_equals_python(shared_data):
    net, _ = load_siouxfalls(shared_data)
    py, cc = _both(net, 100)
    _assert_same_run(py, cc)


def test_compiled_bcfw_reaches_tight_gaps_and_keeps_routes_and_warm_starts():
    net = grid_network(5, 5, 8, seed=4)
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=2000, random_state=0,
                                 compiled=True)
    assert res.extra["engine"] == "compiled"
    assert res.status == fw.Status.CONVERGED
    # the gap recomputed by an independent all-or-nothing assignment of the flows
    assert -1e-13 <= relative_gap(net, res.x) <= 2e-10
    routes = route_flows(net, res)
    for (o, d), paths in routes.items():
        assert sum(paths.values()) == pytest.approx(net.demand[o, d], rel=1e-9)
    loads = np.zeros(net.n_links)
    for paths in routes.values():
        for route, flow in paths.items():
            loads[list(route)] += flow
    assert np.abs(loads - res.x).max() <= 1e-8 * np.abs(res.x).max()
    # a warm start from the compiled run's trees stays compiled and stays converged
    with fw.debug(False):
        again = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=50, x0=res,
                                   random_state=1, compiled=True)
    assert again.extra["engine"] == "compiled"
    assert again.nit <= 5
    assert np.abs(again.x - res.x).max() <= 1e-6 * np.abs(res.x).max()


def test_compiled_origin_blocks_grow_their_tables():
    # 1 inactive tree per block and many passes: the arena fills with replaced trees,
    # compacts and grows between calls; the run still equals the Python one
    net = grid_network(6, 6, 10, seed=5)
    py, cc = _both(net, 60, cache_size=1)
    _assert_same_run(py, cc)


def test_od_blocks_and_flow_starts_stay_python():
    net = grid_network(3, 3, 4, seed=6)
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", blocks="od", rel_gap=0.0, max_iter=3)
        # compiled=None: compiled where the kernels take the start (a network this
        # small defaults to the Python steps)
        flows = traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=2, compiled=None)
        warm = traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=2, compiled=None,
                                  x0=flows.extra["block_iterates"])
    assert res.extra["engine"] == "python"
    assert "declined" in warm.extra["engine_reason"]


def test_read_tntp_network_runs_compiled(tmp_path):
    # a network read from files takes the same compiled path (first_thru_node > 1)
    net_text = ("<NUMBER OF ZONES> 2\n<NUMBER OF NODES> 4\n<FIRST THRU NODE> 3\n"
                "<NUMBER OF LINKS> 5\n<END OF METADATA>\n"
                "~ init term cap len fft b power speed toll type ;\n"
                "1 3 100 1 2 0.15 4 0 0 1 ;\n3 2 100 1 2 0.15 4 0 0 1 ;\n"
                "1 4 80 1 3 0.15 4 0 0 1 ;\n4 2 80 1 1 0.15 4 0 0 1 ;\n"
                "1 2 50 1 9 0.15 4 0 0 1 ;\n")
    trips_text = "<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 300.0;\n"
    (tmp_path / "n.tntp").write_text(net_text)
    (tmp_path / "t.tntp").write_text(trips_text)
    net = read_tntp(tmp_path / "n.tntp", tmp_path / "t.tntp")
    with fw.debug(False):
        res = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=500, compiled=True)
    assert res.extra["engine"] == "compiled"
    # Wardrop: the three routes 1-3-2, 1-4-2, 1-2 that carry flow cost the same
    c = net.link_costs(res.x)
    used = [c[0] + c[1], c[2] + c[3], c[4]]
    flows = [res.x[0], res.x[2], res.x[4]]
    costs = [u for u, f in zip(used, flows) if f > 1e-6]
    assert max(costs) - min(costs) <= 1e-7 * max(costs)
    assert sum(flows) == pytest.approx(300.0, rel=1e-12)

"""A class with pce != 1 and tolls on two parallel routes: the equilibrium against its
closed form (linear link times) and against scipy's root of the route split (BPR), the
bcfw start on the free-flow generalized-cost routes, and the multi-class domain's
violation of a point whose volumes disagree with its class flows.

A class ``c``'s vehicles each add ``pce_c`` to the volume and pay ``t(v) + toll_factor *
toll / vot`` (time units per vehicle), so on used routes ``t_A(pce x_A) + tau_A =
t_B(pce x_B) + tau_B`` with ``x_A + x_B = D`` (:mod:`frankwolfe.applications.traffic.classes`).
"""

import numpy as np
import pytest
from scipy.optimize import brentq

from frankwolfe.applications.traffic import DemandClass, Network, traffic_assignment
from frankwolfe.applications.traffic.classes import ClassSet
from frankwolfe.applications.traffic.multiclass import MulticlassBlocks, MulticlassFlows

T0 = np.array([2.0, 1.0])  # route A slow and free, route B fast and tolled
B = np.array([1.0, 1.0])
CAP = np.array([10.0, 10.0])
D = 10.0  # vehicles from zone 0 to zone 1
PCE, VOT, TOLL_FACTOR = 2.0, 2.0, 1.5
TOLLS = np.array([0.0, 2.0])
TAU = TOLL_FACTOR * TOLLS / VOT  # toll in time units per vehicle: (0, 1.5)


def _network(power: float) -> Network:
    return Network(init_node=[0, 0], term_node=[1, 1], free_flow_time=T0, capacity=CAP,
                   b=B, power=[power, power], demand=np.array([[0.0, D], [0.0, 0.0]]),
                   n_nodes=2)


def _truck(demand: float = D, pce: float = PCE) -> DemandClass:
    return DemandClass("truck", np.array([[0.0, demand], [0.0, 0.0]]), pce=pce, vot=VOT,
                       tolls=TOLLS, toll_factor=TOLL_FACTOR)


def _bpr(v: float, a: int, power: float) -> float:
    """Link ``a``'s BPR time at volume ``v``, written out (not the package's)."""
    return T0[a] * (1.0 + B[a] * (v / CAP[a]) ** power)


def test_closed_form_pce_toll_equilibrium():
    """Linear times ``t_a(v) = t0_a (1 + b_a v / cap_a)``: the equal-cost condition is
    linear in ``x_A``:
    ``x_A = (t0_B + tau_B - t0_A - tau_A + k_B pce D) / (pce (k_A + k_B))``,
    ``k_a = t0_a b_a / cap_a``."""
    k = T0 * B / CAP
    x_a = (T0[1] + TAU[1] - T0[0] - TAU[0] + k[1] * PCE * D) / (PCE * (k[0] + k[1]))
    assert x_a == pytest.approx(25.0 / 6.0, rel=1e-15)  # 2 + 0.4 x = 1 + 0.2 (10 - x) + 1.5
    want = np.array([x_a, D - x_a])
    # an independent root of the cost difference on the route split
    root = brentq(lambda x: _bpr(PCE * x, 0, 1.0) + TAU[0]
                  - _bpr(PCE * (D - x), 1, 1.0) - TAU[1], 0.0, D, xtol=1e-14)
    assert root == pytest.approx(x_a, rel=1e-12)
    # the wrong models land elsewhere: toll without the pce weight on its gradient (the
    # class would see half the toll) and volumes without the pce
    assert abs((T0[1] + TAU[1] / PCE - T0[0] + k[1] * PCE * D) / (PCE * (k[0] + k[1]))
               - x_a) > 1.0
    assert abs((T0[1] + TAU[1] - T0[0] + k[1] * D) / (k[0] + k[1]) - x_a) > 0.5
    net = _network(1.0)
    for method in ("fw", "bfw", "bcfw"):
        res = traffic_assignment(net, method, rel_gap=1e-12, max_iter=2000,
                                 classes=[_truck()])
        assert res.success, (method, res.message)
        flows = res.extra["class_flows"]["truck"]
        np.testing.assert_allclose(flows, want, rtol=1e-8, atol=0, err_msg=method)
        np.testing.assert_allclose(res.x, PCE * want, rtol=1e-8, atol=0, err_msg=method)
        # both routes used at one generalized cost, the one the closed form gives
        cost = res.extra["class_costs"]["truck"]
        np.testing.assert_allclose(cost, [_bpr(PCE * x_a, 0, 1.0) + TAU[0]] * 2, rtol=1e-8,
                                   err_msg=method)


@pytest.mark.parametrize("pce", [2.0, 2.5])
def test_bpr_pce_toll_equilibrium_matches_brentq(pce):
    """Classic BPR (power 4): the route split is scipy's root of the cost difference."""
    root = brentq(lambda x: _bpr(pce * x, 0, 4.0) + TAU[0]
                  - _bpr(pce * (D - x), 1, 4.0) - TAU[1], 0.0, D, xtol=1e-14)
    assert 0.0 < root < D  # both routes used
    want = np.array([root, D - root])
    for method in ("bfw", "bcfw"):
        res = traffic_assignment(_network(4.0), method, rel_gap=1e-12, max_iter=2000,
                                 classes=[_truck(pce=pce)])
        assert res.success, (method, res.message)
        np.testing.assert_allclose(res.extra["class_flows"]["truck"], want, rtol=1e-7,
                                   atol=0, err_msg=method)
        np.testing.assert_allclose(res.x, pce * want, rtol=1e-7, atol=0, err_msg=method)


def test_start_routes_on_free_flow_generalized_cost():
    """Every method starts from the all-or-nothing loading at the free-flow generalized
    cost ``t0 + tau``: route A (2 < 1 + 1.5).  A start that weighted the times by the pce
    but not the tolls (``pce t0 + tau``: 4 > 2 + 1.5) would take route B."""
    assert T0[0] + TAU[0] < T0[1] + TAU[1]
    assert PCE * T0[0] + TAU[0] > PCE * T0[1] + TAU[1]
    net = _network(1.0)
    for method in ("fw", "bfw", "bcfw"):
        res = traffic_assignment(net, method, max_iter=0, classes=[_truck()])
        assert res.nit == 0
        np.testing.assert_array_equal(res.extra["class_flows"]["truck"], [D, 0.0],
                                      err_msg=method)
        np.testing.assert_array_equal(res.x, [PCE * D, 0.0], err_msg=method)
    # the bcfw blocks' own start: one tree per (class, origin), on link 0
    blocks = MulticlassBlocks(ClassSet(net, [_truck()]))
    [[(atom, weight)]] = blocks.initial_block_points()
    assert weight == 1.0
    np.testing.assert_array_equal(atom.to_dense(), [PCE * D, 0.0, D, 0.0])


def test_violation_counts_volumes_off_the_class_flows():
    """Feasible class flows (cars 3 + 2 = 5, trucks 4 + 6 = 10) with volumes that are not
    ``sum_c pce_c x_c``: the violation is ``||v - sum_c pce_c x_c||_1 / ||sum_c pce_c
    x_c||_1``; with the right volumes it is 0."""
    net = _network(1.0)
    car = DemandClass("car", np.array([[0.0, 5.0], [0.0, 0.0]]), tolls=TOLLS)
    cs = ClassSet(net, [car, _truck()])
    car_x, truck_x = np.array([3.0, 2.0]), np.array([4.0, 6.0])
    right = np.array([3.0 + PCE * 4.0, 2.0 + PCE * 6.0])  # (11, 14)
    for domain in (MulticlassFlows(cs), MulticlassBlocks(cs)):
        good = np.concatenate([right, car_x, truck_x])
        assert domain.violation(good) == 0.0
        bad = np.concatenate([right + [0.0, 1.0], car_x, truck_x])  # (11, 15)
        assert domain.violation(bad) == pytest.approx(1.0 / 25.0, rel=1e-15)
        short = np.concatenate([[9.0, 14.0], car_x, truck_x])  # (9, 14): 2 / 25
        assert domain.violation(short) == pytest.approx(2.0 / 25.0, rel=1e-15)

"""Multi-class routing when a class's pce is not 1 (belongs with
tests/test_traffic_multiclass.py).  Independent answers: two parallel links, where each
class's best route and its relative gap are closed forms (BPR written out by hand)."""

import numpy as np
import pytest

from frankwolfe.applications.traffic import DemandClass, Network, traffic_assignment


def _two_links(b):
    # two parallel links 0 -> 1: A (t0 = 10, no toll) and B (t0 = 1, toll 8)
    return Network(init_node=np.array([0, 0]), term_node=np.array([1, 1]),
                   free_flow_time=np.array([10.0, 1.0]), capacity=np.array([5.0, 5.0]),
                   b=np.array([b, b]), power=np.array([4.0, 4.0]),
                   demand=np.array([[0.0, 6.0], [0.0, 0.0]]), toll=np.array([0.0, 8.0]))


@pytest.mark.parametrize("method", ["fw", "bfw", "bcfw"])
def test_a_heavy_class_routes_on_its_generalized_cost(method):
    # constant costs: every vehicle takes the route of least t + toll / vot, whatever its
    # pce (pce scales both terms alike): A costs 10, B 1 + 8 = 9, so B
    net = _two_links(0.0)
    truck = DemandClass("truck", net.demand, pce=2.0, vot=1.0, tolls=np.array([0.0, 8.0]))
    res = traffic_assignment(net, method, classes=[truck], rel_gap=1e-10)
    np.testing.assert_allclose(res.extra["class_flows"]["truck"], [0.0, 6.0], atol=1e-9)
    np.testing.assert_allclose(res.x[:2], [0.0, 12.0], atol=1e-9)  # pce * vehicles


def test_class_relative_gap_is_one_minus_shortest_over_total():
    # three parallel BPR links and one Frank-Wolfe iteration: the gap is far from 0
    tolls = np.array([0.0, 8.0, 0.0])
    net = Network(init_node=np.array([0, 0, 0]), term_node=np.array([1, 1, 1]),
                  free_flow_time=np.array([10.0, 1.0, 7.0]),
                  capacity=np.array([5.0, 2.0, 5.0]), b=np.full(3, 0.15),
                  power=np.full(3, 4.0), demand=np.array([[0.0, 20.0], [0.0, 0.0]]),
                  toll=tolls)
    vot, pce = 2.0, 1.5
    truck = DemandClass("truck", net.demand, pce=pce, vot=vot, tolls=tolls)
    res = traffic_assignment(net, "fw", classes=[truck], max_iter=1, rel_gap=0.0)
    flow = np.asarray(res.extra["class_flows"]["truck"])
    v = pce * flow
    t = net.free_flow_time * (1 + 0.15 * (v / net.capacity) ** 4)  # BPR by hand
    cost = t + tolls / vot
    total = float(cost @ flow)
    shortest = 20.0 * float(cost.min())
    want = (total - shortest) / total
    assert want > 0.1  # not converged: the check means something
    assert res.extra["class_relative_gap"]["truck"] == pytest.approx(want, rel=1e-9)
    assert res.extra["class_gap"]["truck"] == pytest.approx(pce * (total - shortest),
                                                             rel=1e-9)

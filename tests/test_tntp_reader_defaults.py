"""TNTP readers and BPR costs: the documented defaults (belongs with tests/test_traffic.py).

Independent answers: the numbers written in the files, networkx shortest paths, and the
BPR formula written out by hand."""

import networkx as nx
import numpy as np
import pytest

from frankwolfe.applications.traffic import Network, bpr_cost, read_net, read_tntp, read_trips
from frankwolfe.applications.traffic.assignment import AllOrNothing


def test_missing_trailing_link_columns_are_zero(tmp_path):
    p = tmp_path / "short_net.tntp"
    # five columns only: init term capacity length free_flow_time
    p.write_text("<NUMBER OF LINKS> 2\n<END OF METADATA>\n1 2 10 3 4 ;\n2 1 20 5 6 ;\n")
    links, _ = read_net(p)
    np.testing.assert_array_equal(links["length"], [3.0, 5.0])
    np.testing.assert_array_equal(links["free_flow_time"], [4.0, 6.0])
    for name in ("b", "power", "speed", "toll", "link_type"):
        np.testing.assert_array_equal(links[name], [0.0, 0.0], err_msg=name)


def test_repeated_od_entries_are_refused(tmp_path):
    # the format lists each pair once (no published trips file repeats one) and its
    # readers disagree on a repeat (the collection's own script keeps the last value):
    # refused, naming the line of the second occurrence
    p = tmp_path / "t_trips.tntp"
    p.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n 2 : 3.0;\n"
                 "Origin 2\n 1 : 1.5;\n")
    with pytest.raises(ValueError, match=r"t_trips\.tntp:5: destination 2 of origin 1 is "
                                         r"listed a second time \(first on line 4\)"):
        read_trips(p)
    p.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n"
                 "Origin 2\n 1 : 1.5;\nOrigin 1\n 2 : 2.0;\n")
    with pytest.raises(ValueError, match=r"t_trips\.tntp:7: a second block of origin 1 "
                                         r"\(the first is on line 3\)"):
        read_trips(p)
    p.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n"
                 "Origin 2\n 1 : 1.5;\n")
    demand, _ = read_trips(p)
    np.testing.assert_array_equal(demand, [[0.0, 5.0], [1.5, 0.0]])


def test_a_net_file_without_first_thru_node_routes_through_every_node(tmp_path):
    # zones 1, 2, 3 on a path 1 - 2 - 3 (and a long direct link 1 -> 3): without
    # <FIRST THRU NODE> every node carries routes (TNTP's default 1, 0-based 0)
    net_p = tmp_path / "toy_net.tntp"
    net_p.write_text("<NUMBER OF ZONES> 3\n<NUMBER OF NODES> 3\n<NUMBER OF LINKS> 3\n"
                     "<END OF METADATA>\n"
                     "1 2 10 0 1 0 0 ;\n2 3 10 0 1 0 0 ;\n1 3 10 0 5 0 0 ;\n")
    trips_p = tmp_path / "toy_trips.tntp"
    trips_p.write_text("<NUMBER OF ZONES> 3\n<END OF METADATA>\nOrigin 1\n 3 : 4.0;\n")
    net = read_tntp(net_p, trips_p)
    assert net.first_thru_node == 0
    flow, sp = AllOrNothing(net).assign(net.link_costs(np.zeros(3)))
    g = nx.DiGraph()
    for a, (u, v) in enumerate(zip(net.init_node, net.term_node)):
        g.add_edge(int(u), int(v), weight=float(net.free_flow_time[a]))
    assert sp == pytest.approx(4.0 * nx.shortest_path_length(g, 0, 2, weight="weight"))
    np.testing.assert_allclose(flow, [4.0, 4.0, 0.0])


def test_bpr_cost_counts_negative_flows_as_zero():
    t0, b, cap = 2.0, 0.15, 10.0
    for p in (4.0, 0.5):
        got = bpr_cost(np.array([-3.0, -1e-12, 0.0, 5.0]), t0, b, cap, p)
        want = [t0, t0, t0, t0 * (1 + b * (5.0 / cap) ** p)]
        np.testing.assert_allclose(got, want, rtol=1e-14)
    net = Network(init_node=[0], term_node=[1], free_flow_time=[t0], capacity=[cap], b=[b],
                  power=[4.0], demand=np.zeros((2, 2)))
    assert net.link_costs(np.array([-3.0]))[0] == pytest.approx(t0, rel=1e-14)

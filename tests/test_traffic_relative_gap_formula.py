"""relative_gap = (sum_a c_a x_a - sum_od d_od SP_od) / sum_a c_a x_a, with the
shortest paths from networkx and the BPR costs in closed form."""
import networkx as nx
import numpy as np

from frankwolfe.applications.traffic import Network, relative_gap


def test_relative_gap_against_networkx_on_two_routes():
    # zones 0 -> 1, two parallel routes via nodes 2 and 3: links 0:0->2, 1:2->1, 2:0->3, 3:3->1
    t0 = np.array([1.0, 1.0, 2.0, 2.0])
    cap = np.array([100.0, 100.0, 100.0, 100.0])
    net = Network(init_node=np.array([0, 2, 0, 3]), term_node=np.array([2, 1, 3, 1]),
                  free_flow_time=t0, capacity=cap, b=np.full(4, 0.15),
                  power=np.full(4, 4.0), demand=np.array([[0.0, 300.0], [0.0, 0.0]]),
                  n_nodes=4)
    flow = np.array([200.0, 200.0, 100.0, 100.0])  # feasible, not an equilibrium
    c = t0 * (1 + 0.15 * (flow / cap) ** 4)
    G = nx.DiGraph()
    for a, (u, v) in enumerate([(0, 2), (2, 1), (0, 3), (3, 1)]):
        G.add_edge(u, v, weight=c[a])
    sp = nx.dijkstra_path_length(G, 0, 1)
    tt = float(c @ flow)
    expected = (tt - 300.0 * sp) / tt
    assert expected > 0.05  # a real gap, where the denominator matters
    assert np.isclose(relative_gap(net, flow), expected, rtol=1e-12, atol=0)

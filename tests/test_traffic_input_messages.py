"""Traffic's argument checks name the argument and the offending value (and where it
is: the link, the OD pair, the file's line), and the oracle's graph is a public record
the blocks, their compiled kernels and the skims read."""

from __future__ import annotations

import numpy as np
import pytest
from traffic_networks import grid_network

from frankwolfe.applications.traffic import (
    AllOrNothing,
    AssignmentBlocks,
    DemandClass,
    DemandClassError,
    Network,
    read_trips,
    skims,
    tntp,
    traffic_assignment,
)
from frankwolfe.applications.traffic.assignment import Graph
from frankwolfe.errors import InfeasibleError

_KW = dict(init_node=[0, 1, 0], term_node=[1, 2, 2], free_flow_time=[1.0, 2.0, 4.0],
           capacity=[1.0, 1.0, 1.0], b=[0.15] * 3, power=[4.0] * 3,
           demand=[[0, 0, 3.0], [0, 0, 0], [0, 0, 0]])


# -- callback ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["fw", "cfw", "bfw", "bcfw"])
def test_a_callback_that_cannot_be_called_is_refused_before_the_run(method):
    # zone 2 (1-based) has demand to zone 1, which no link reaches: any set-up that ran
    # (the start's all-or-nothing assignment, bcfw's free-flow trees) would raise
    # InfeasibleError first
    cut = Network(**{**_KW, "demand": [[0, 0, 0], [1.0, 0, 0], [0, 0, 0]]})
    with pytest.raises(InfeasibleError):
        traffic_assignment(cut, method, max_iter=2)
    with pytest.raises(TypeError, match=r"`callback` must be callable, got int$"):
        traffic_assignment(cut, method, max_iter=2, callback=3)
    seen = []
    res = traffic_assignment(Network(**_KW), method, max_iter=2, callback=seen.append)
    assert seen and res.nit <= 2


# -- n_nodes ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad, error", [("a", TypeError), (30.7, ValueError), (-1, ValueError),
                                        (np.nan, ValueError), (True, TypeError)])
def test_n_nodes_must_be_a_whole_number(bad, error):
    with pytest.raises(error, match=r"Network: `n_nodes` must be a non-negative "
                                    rf"integer, got {bad!r}"):
        Network(**_KW, n_nodes=bad)


@pytest.mark.parametrize("good", [np.int64(5), 5, 5.0])
def test_n_nodes_takes_whole_numbers_of_any_kind(good):
    net = Network(**_KW, n_nodes=good)
    assert net.n_nodes == 5 and type(net.n_nodes) is int
    assert Network(**_KW).n_nodes == 3  # 0: the largest node index + 1


# -- messages naming the value ----------------------------------------------------------
@pytest.mark.parametrize("name", ["init_node", "term_node"])
def test_node_indices_name_the_first_fractional_entry(name):
    nodes = [0.0, 1.0, 2.5] if name == "init_node" else [1.0, 2.0, 2.5]
    # term_node was not checked: 2.5 was truncated to node 2 without a word
    with pytest.raises(ValueError, match=rf"Network: `{name}` must hold integer node "
                                         r"indices, got 2\.5 at position 2"):
        Network(**{**_KW, name: nodes})
    with pytest.raises(ValueError, match=rf"`{name}` must hold integer node indices, got "
                                         r"nan at position 0"):
        Network(**{**_KW, name: [np.nan, 1.0, 1.0]})
    with pytest.raises(TypeError, match=rf"`{name}` must hold integer node indices, got "
                                        r"dtype <U1"):
        Network(**{**_KW, name: ["0", "1", "1"]})
    net = Network(**{**_KW, name: np.asarray(_KW[name], dtype=float)})  # whole floats
    assert net.init_node.dtype == net.term_node.dtype == np.int64


@pytest.mark.parametrize("name, value, what", [
    ("free_flow_time", -2.0, "finite and non-negative"),
    ("b", np.nan, "finite and non-negative"),
    ("power", np.inf, "finite and non-negative"),
    ("length", -1.0, "finite and non-negative"),
    ("toll", np.inf, "finite"),
])
def test_link_columns_name_the_first_bad_link(name, value, what):
    col = [1.0, 1.0, value]
    with pytest.raises(ValueError, match=rf"Network: `{name}` must be {what}, got "
                                         rf"{value!r} on link 2$"):
        Network(**{**_KW, name: col})


def test_link_columns_of_text_name_the_column():
    with pytest.raises(ValueError, match=r"Network: `capacity` must be an array of numbers, "
                                         r"got \['a', 'b', 'c'\]"):
        Network(**{**_KW, "capacity": ["a", "b", "c"]})
    with pytest.raises(ValueError, match=r"Network: `free_flow_time` must be real"):
        Network(**{**_KW, "free_flow_time": [1 + 1j, 1.0, 1.0]})


def test_demand_names_the_first_bad_od_pair():
    dem = np.zeros((3, 3))
    dem[0, 2] = 3.0
    dem[1, 0] = -4.0
    with pytest.raises(ValueError, match=r"`demand` must be finite and non-negative, got "
                                         r"-4\.0 at \(origin, destination\) \(1, 0\)"):
        Network(**{**_KW, "demand": dem})
    dem[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"got nan at \(origin, destination\) \(1, 0\)"):
        Network(**{**_KW, "demand": dem})
    with pytest.raises(ValueError, match=r"Network: `demand` must be an array of numbers"):
        Network(**{**_KW, "demand": [["0", "1"], ["1", "0"]]})


def test_the_compiled_origin_blocks_name_the_unreachable_zones():
    from frankwolfe.applications.traffic import origin_kernels

    net = grid_network(3, 3, 4, seed=0)
    blocks = AssignmentBlocks(net)
    st = blocks.compiled_blocks(None).state
    i = 1
    origin = int(st.origin[i])
    # infinite costs close every link: the first destination with demand, in zone order,
    # is the one the search cannot reach (the Python blocks' check_costs refuses such
    # costs before their search)
    first = next(z for z in range(net.n_zones) if z != origin and net.demand[origin, z] > 0)
    g = np.full(net.n_links, np.inf)
    idx = np.empty(net.n_links, dtype=np.int64)
    val = np.empty(net.n_links)
    with pytest.raises(ValueError, match=rf"origin blocks: zone {first + 1} cannot be reached "
                                         rf"from zone {origin + 1} \(1-based\)"):
        origin_kernels._direction(st, np.int64(i), g, False, idx, val)


def test_trips_files_name_the_zone_and_line_out_of_range(tmp_path):
    path = tmp_path / "t_trips.tntp"
    path.write_text("<NUMBER OF ZONES> 3\n<END OF METADATA>\n\nOrigin 1\n  2 : 5.0;\n"
                    "Origin 2\n  1 : 1.0;  7 : 2.0;\n")
    with pytest.raises(ValueError, match=rf"{path}:7: zone numbers must lie in 1\.\.3, got "
                                         r"destination 7$"):
        read_trips(path)
    path.write_text("<NUMBER OF ZONES> 3\n<END OF METADATA>\n\nOrigin 1\n  2 : 5.0;\n"
                    "Origin 4\n  1 : 1.0;\n")
    with pytest.raises(ValueError, match=r":7: zone numbers must lie in 1\.\.3, got "
                                         r"origin 4$"):
        read_trips(path)


def test_net_files_name_the_node_number_below_one(tmp_path, monkeypatch):
    # read_net refuses node numbers below 1 itself; the check of read_tntp guards the
    # 0-based shift against a reader that does not
    net_path, trips_path = tmp_path / "x_net.tntp", tmp_path / "x_trips.tntp"
    trips_path.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 1.0;\n")
    links = {k: np.ones(3) for k in ("capacity", "length", "free_flow_time", "b", "power",
                                     "speed", "toll", "link_type")}
    links.update(init_node=np.array([1, 2, 0]), term_node=np.array([2, 1, 1]))
    monkeypatch.setattr(tntp, "read_net", lambda path: (links, {}))
    with pytest.raises(ValueError, match=r"node numbers must start at 1, got link 3 "
                                         r"\(1-based\) from node 0 to node 1"):
        tntp.read_tntp(net_path, trips_path)


@pytest.mark.parametrize("text", ["2.5", "inf", "nan", "-2", "two"])
def test_metadata_counts_must_be_whole_numbers(tmp_path, text):
    # int(float("2.5")) read 2 zones; int(float("inf")) raised OverflowError
    path = tmp_path / "t_trips.tntp"
    path.write_text(f"<NUMBER OF ZONES> {text}\n<END OF METADATA>\nOrigin 1\n 2 : 1.0;\n")
    with pytest.raises(ValueError, match=rf"metadata <NUMBER OF ZONES> must be a "
                                         rf"non-negative integer, got '{text}'"):
        read_trips(path)


@pytest.mark.parametrize("text", ["inf", "nan", "x"])
def test_metadata_factors_must_be_finite_numbers(tmp_path, text):
    path = tmp_path / "t_trips.tntp"
    path.write_text(f"<TOTAL OD FLOW> {text}\n<END OF METADATA>\nOrigin 1\n 2 : 1.0;\n")
    with pytest.raises(ValueError, match=rf"metadata <TOTAL OD FLOW> must be a finite "
                                         rf"number, got '{text}'"):
        read_trips(path)


def test_demand_classes_name_bad_numbers():
    dem = [[0, 1.0], [0, 0]]
    with pytest.raises(DemandClassError, match=r"DemandClass 'car': `demand` must be an "
                                               r"array of numbers"):
        DemandClass("car", [["0", "1"], ["0", "0"]])
    with pytest.raises(DemandClassError, match=r"DemandClass 'car': `tolls` must be an "
                                               r"array of numbers"):
        DemandClass("car", dem, tolls=["a"])
    with pytest.raises(DemandClassError, match=r"`toll_factor` must be a finite number, "
                                               r"got '2'"):
        DemandClass("car", dem, toll_factor="2")
    with pytest.raises(DemandClassError, match=r"`pce` must be a positive number, got True"):
        DemandClass("car", dem, pce=True)
    for bad in (["1"], [0.5], [np.inf]):
        with pytest.raises(DemandClassError, match=r"`banned_links` must be 0-based link "
                                                   r"indices"):
            DemandClass("car", dem, banned_links=bad)
    c = DemandClass("car", dem, toll_factor=np.int64(3), banned_links=[1.0])
    assert c.toll_factor == 3.0 and type(c.toll_factor) is float
    assert c.banned_links.tolist() == [1]


# -- the oracle's graph -----------------------------------------------------------------
def test_the_oracle_graph_is_a_public_read_only_record_of_its_own_arrays():
    net = grid_network(3, 4, 5, seed=1)
    aon = AllOrNothing(net, banned_links=np.array([3, 7]))
    g = aon.graph
    assert isinstance(g, Graph)
    assert g._fields == ("indptr", "out_link", "head", "tail", "demand")
    # CSR by tail node: the links out of node u, the banned ones left out
    assert g.indptr[0] == 0 and g.indptr[-1] == g.out_link.size == net.n_links - 2
    for u in range(net.n_nodes):
        out = g.out_link[g.indptr[u]:g.indptr[u + 1]]
        expected = [a for a in range(net.n_links) if net.init_node[a] == u and a not in (3, 7)]
        assert sorted(out.tolist()) == expected
    np.testing.assert_array_equal(g.head, net.term_node)
    np.testing.assert_array_equal(g.tail, net.init_node)
    # not copies: a city's graph and demand are large
    assert np.shares_memory(g.demand, net.demand)
    assert np.shares_memory(g.tail, net.init_node)
    assert aon.graph is g and aon.graph.indptr is g.indptr
    with pytest.raises(AttributeError):
        aon.graph = g  # type: ignore[misc]
    with pytest.raises(AttributeError):
        g.demand = np.zeros((5, 5))  # type: ignore[misc]


def test_the_blocks_and_the_skims_search_the_oracle_graph():
    net = grid_network(3, 3, 4, seed=3)
    res = traffic_assignment(net, "bcfw", rel_gap=1e-8, max_iter=500, random_state=0)
    blocks = AssignmentBlocks(net)
    for b in blocks.blocks:
        assert np.shares_memory(b.aon.graph.demand, net.demand)
        assert b.demand[b.origin] == 0.0
        np.testing.assert_array_equal(np.delete(b.demand, b.origin),
                                      np.delete(net.demand[b.origin], b.origin))
    # skims: each OD pair's cost is the shortest-path cost at the final link costs, the
    # same as the all-or-nothing oracle's total
    table = skims(net, res)
    costs = net.link_costs(res.x)
    _, total = AllOrNothing(net).assign(costs)
    assert float((table["demand"] * table["cost"]).sum()) == pytest.approx(total, rel=1e-12)

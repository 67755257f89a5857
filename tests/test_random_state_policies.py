"""One ``random_state`` policy for the core and the estimators, what a model file keeps
of it, and the traffic assignment's seeds, thread counts and gap certificates."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from traffic_networks import grid_network

from frankwolfe._random import as_generator, check_random_state
from frankwolfe.applications._params import RANDOM_STATE, InvalidParameterError
from frankwolfe.applications.lasso import ConstrainedLasso
from frankwolfe.applications.structured_svm import (
    ChainModel,
    DirectionalGridCRF,
    EdgeFeatureGraphCRF,
    GraphCRF,
    GridCRF,
    LatentGraphCRF,
    StructuredSVM,
    make_chain,
)
from frankwolfe.applications.structured_svm.datasets import make_noisy_blocks
from frankwolfe.applications.structured_svm.model_checks import ModelFileError
from frankwolfe.applications.structured_svm.model_io import _unpack_seed
from frankwolfe.applications.structured_svm.models.graph import grid_edges
from frankwolfe.applications.traffic import (
    AllOrNothing,
    DemandClass,
    Network,
    relative_gap,
    traffic_assignment,
)
from frankwolfe.applications.traffic import solve as solve_module
from frankwolfe.errors import InfeasibleError

TNTP = Path("/work/shared/data/tntp/SiouxFalls")
# short fits: their budgets end the runs
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# -- 1. one policy ---------------------------------------------------------------------
GOOD = [None, 0, 3, np.int64(3), np.uint8(7), 2**70, [0], [1, 2], (1, 2), [2**70],
        [np.int64(2), 5], np.array([1, 2]), np.random.SeedSequence(1),
        np.random.PCG64(1), np.random.default_rng(1), np.random.RandomState(1)]
BAD = [(-1, ValueError), (np.int64(-1), ValueError), ([], ValueError), ((), ValueError),
       (np.array([], dtype=np.int64), ValueError), ([1, -2], ValueError),
       ([[1, 2]], TypeError), (np.array([[1, 2]]), TypeError), (["a"], TypeError),
       ("a", TypeError), (1.5, TypeError), (np.float64(2.0), TypeError), ([1.0], TypeError),
       (True, TypeError), (np.bool_(False), TypeError), ([True], TypeError),
       (np.array(3), TypeError), ({1: 2}, TypeError)]


def _seed_id(seed) -> str:
    """A test id that is the same in every process (pytest-xdist's workers collect
    apart): numpy's random objects show their address, a fresh SeedSequence its entropy."""
    if isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator,
                         np.random.RandomState)):
        return type(seed).__name__
    return repr(seed)


@pytest.mark.parametrize("seed", GOOD, ids=_seed_id)
def test_the_core_and_the_estimators_take_the_same_seeds(seed) -> None:
    check_random_state(seed)
    as_generator(seed)
    assert RANDOM_STATE.accepts(seed)


@pytest.mark.parametrize("seed, err", BAD, ids=lambda v: repr(v)[:30])
def test_the_core_and_the_estimators_refuse_the_same_seeds(seed, err) -> None:
    for check in (check_random_state, as_generator):
        with pytest.raises(err, match=r"random_state must be None, a non-negative integer"):
            check(seed)
    assert not RANDOM_STATE.accepts(seed)


def test_an_empty_sequence_is_refused_by_name_not_seeded_as_zero() -> None:
    with pytest.raises(ValueError, match=r"^random_state must be .*got \[\] \(an empty "
                                         r"sequence\)$"):
        as_generator([])
    with pytest.raises(ValueError, match=r"^seed must be .*got \(\)"):
        as_generator((), name="seed")


def test_a_check_draws_nothing() -> None:
    legacy, gen = np.random.RandomState(5), np.random.default_rng(5)
    check_random_state(legacy)
    check_random_state(gen)
    assert legacy.randint(1000) == np.random.RandomState(5).randint(1000)
    assert gen.random() == np.random.default_rng(5).random()


def _chain():
    return make_chain(10, n_states=3, n_features=4, random_state=0)


@pytest.mark.parametrize("solver", ["fw", "bcfw", "cutting_plane", "ssg"])
@pytest.mark.parametrize("seed", [-1, np.int64(-3), [], [[1, 2]], ["a"]], ids=repr)
def test_structured_svm_refuses_a_bad_seed_at_validation_whatever_the_solver(
        solver, seed) -> None:
    # InvalidParameterError: validate_params' refusal, before the dual is built (bcfw's
    # own came after it, a plain ValueError)
    X, Y = _chain()
    svm = StructuredSVM(ChainModel(3, 4), solver=solver, max_passes=1, random_state=seed)
    with pytest.raises(InvalidParameterError,
                       match=r"The 'random_state' parameter of StructuredSVM must be a "
                             r"non-negative int.*Got .* instead"):
        svm.fit(X, Y)


@pytest.mark.parametrize("method", ["fw", "away", "pairwise"])
def test_constrained_lasso_refuses_a_negative_seed_whatever_the_method(method) -> None:
    with pytest.raises(InvalidParameterError, match=r"'random_state' parameter of "
                                                    r"ConstrainedLasso.*Got -1 instead"):
        ConstrainedLasso(method=method, random_state=-1).fit(np.eye(5), np.ones(5))


def test_numpy_integer_seeds_are_taken_by_the_estimators() -> None:
    X, Y = _chain()
    a = StructuredSVM(ChainModel(3, 4), max_passes=2, random_state=np.int64(4)).fit(X, Y)
    b = StructuredSVM(ChainModel(3, 4), max_passes=2, random_state=4).fit(X, Y)
    np.testing.assert_array_equal(a.w_, b.w_)


# -- 2. a model file keeps a SeedSequence ----------------------------------------------
@pytest.mark.parametrize("seed", [np.random.SeedSequence(3), np.random.SeedSequence([3, 2**70]),
                                  np.random.SeedSequence(3).spawn(3)[2],
                                  np.random.SeedSequence(None)], ids=_seed_id)
def test_a_seed_sequence_survives_save_and_load(seed, tmp_path) -> None:
    X, Y = make_chain(20, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), max_passes=2, random_state=seed).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a storable seed saves without a warning
        svm.save(tmp_path / "m.npz")
    back = StructuredSVM.load(tmp_path / "m.npz")
    got = back.random_state
    assert isinstance(got, np.random.SeedSequence)
    for field in ("entropy", "spawn_key", "pool_size", "n_children_spawned"):
        assert np.array_equal(getattr(got, field), getattr(seed, field)), field
    np.testing.assert_array_equal(got.generate_state(8), seed.generate_state(8))
    np.testing.assert_array_equal(back.fit(X, Y).w_, svm.fit(X, Y).w_)


@pytest.mark.parametrize("seed", [np.random.default_rng(3), np.random.RandomState(3),
                                  np.random.PCG64(3)], ids=lambda s: type(s).__name__)
def test_a_generator_is_saved_as_null_with_a_warning(seed, tmp_path) -> None:
    X, Y = _chain()
    svm = StructuredSVM(ChainModel(3, 4), max_passes=2, random_state=seed).fit(X, Y)
    with pytest.warns(UserWarning, match=rf"random_state={type(seed).__name__}\(\.\.\.\) is "
                                         r"saved as null"):
        svm.save(tmp_path / "m.npz")
    assert StructuredSVM.load(tmp_path / "m.npz").random_state is None


def _seed_fields(**change):
    fields = {"entropy": 3, "spawn_key": [], "pool_size": 4, "n_children_spawned": 0}
    return {"random_state": {"SeedSequence": {**fields, **change}}}


@pytest.mark.parametrize("params", [
    _seed_fields(entropy=None), _seed_fields(entropy=-1), _seed_fields(entropy="3"),
    _seed_fields(entropy=[]), _seed_fields(spawn_key=3), _seed_fields(spawn_key=[-1]),
    _seed_fields(pool_size=10**9), _seed_fields(pool_size=True),
    _seed_fields(n_children_spawned=-1), {"random_state": {"Generator": {}}},
    {"random_state": {"SeedSequence": {"entropy": 3}}}], ids=lambda p: json.dumps(p)[:60])
def test_a_stored_seed_sequence_is_checked_on_load(params) -> None:
    with pytest.raises(ModelFileError, match=r"f\.npz: estimator\.params\.random_state"):
        _unpack_seed("f.npz", params)


# -- 6. every shipped model loads without models= --------------------------------------
def _graph_task():
    return make_noisy_blocks(8, 4, 4, 2, random_state=0)


def _edge_task():
    X, Y = _graph_task()
    _, dirs = grid_edges(4, 4, 4)
    return [(x[0], x[1], np.eye(2)[dirs]) for x in X], Y


def _image_task():
    X, Y = _graph_task()
    return [x[0].reshape(4, 4, 3) for x in X], [y.reshape(4, 4) for y in Y]


@pytest.mark.parametrize("make, task", [
    (lambda: GraphCRF(2, 3, inference="exact", class_weight=[1, 2]), _graph_task),
    (lambda: EdgeFeatureGraphCRF(2, 3, 2, inference="exact", symmetric_edge_features=[0]),
     _edge_task),
    (lambda: GridCRF(2, 3, neighborhood=8, inference="exact"), _image_task),
    (lambda: DirectionalGridCRF(2, 3, inference="exact"), _image_task),
    (lambda: LatentGraphCRF(2, 3, 2, inference="exact"), _graph_task)],
    ids=["GraphCRF", "EdgeFeatureGraphCRF", "GridCRF", "DirectionalGridCRF",
         "LatentGraphCRF"])
def test_every_shipped_graph_model_loads_without_models(make, task, tmp_path) -> None:
    X, Y = task()
    model = make()
    if isinstance(model, LatentGraphCRF):  # trained on the hidden states of its labels
        Y = model.init_latent(X, Y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, max_passes=3, random_state=0).fit(X, Y)
    svm.save(tmp_path / "g.npz")
    back = StructuredSVM.load(tmp_path / "g.npz")
    assert type(back.model) is type(model) and repr(back.model) == repr(model)
    np.testing.assert_array_equal(back.w_, svm.w_)
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(X), svm.predict(X)))


# -- 3. the flows do not depend on n_jobs ----------------------------------------------
def _zones_network() -> Network:
    """A grid whose 64 zones make 4 chunks of origins."""
    return grid_network(8, 8, 64, seed=4)


def test_all_or_nothing_gives_the_same_bits_for_every_n_jobs() -> None:
    net = _zones_network()
    costs = net.link_costs(np.full(net.n_links, 150.0))
    flows = {}
    for n_jobs in (1, 2, 3, 5):
        lmo = AllOrNothing(net, n_jobs=n_jobs)
        assert lmo._bounds.size - 1 == 4
        flows[n_jobs] = lmo.assign(costs)
    for flow, total in flows.values():
        assert np.array_equal(flow, flows[1][0]) and total == flows[1][1]
    # the values: each origin's tree on its own, summed in another order
    one = np.zeros(net.n_links)
    sp = 0.0
    for o in AllOrNothing(net).origins[::-1]:
        demand = np.zeros_like(net.demand)
        demand[o] = net.demand[o]
        f, t = AllOrNothing(dataclasses.replace(net, demand=demand)).assign(costs)
        one += f
        sp += t
    np.testing.assert_allclose(flows[1][0], one, rtol=1e-12, atol=1e-9)
    assert flows[1][1] == pytest.approx(sp, rel=1e-13)
    assert flows[1][1] == pytest.approx(float(costs @ flows[1][0]), rel=1e-12)


@pytest.mark.parametrize("method", ["fw", "bfw"])
def test_traffic_assignment_does_not_depend_on_n_jobs(method) -> None:
    net = _zones_network()
    a = traffic_assignment(net, method, max_iter=15, n_jobs=1)
    b = traffic_assignment(net, method, max_iter=15, n_jobs=3)
    assert np.array_equal(a.x, b.x) and a.gap == b.gap and a.fun == b.fun


def test_multiclass_class_gaps_do_not_depend_on_n_jobs() -> None:
    net = _zones_network()
    classes = [DemandClass("car", net.demand * 0.7), DemandClass("truck", net.demand * 0.3,
                                                                 pce=2.0)]
    a = traffic_assignment(net, "bcfw", max_iter=3, n_jobs=1, classes=classes, random_state=0)
    b = traffic_assignment(net, "bcfw", max_iter=3, n_jobs=2, classes=classes, random_state=0)
    assert a.extra["class_gap"] == b.extra["class_gap"]
    assert np.array_equal(a.x, b.x)


def test_an_unreachable_zone_is_named_alike_for_every_n_jobs() -> None:
    net = _zones_network()
    # the zone 40's links in and out closed: every origin's tree misses it
    keep = (net.init_node != 40) & (net.term_node != 40)
    cut = Network(init_node=net.init_node[keep], term_node=net.term_node[keep],
                  free_flow_time=net.free_flow_time[keep], capacity=net.capacity[keep],
                  b=net.b[keep], power=net.power[keep], demand=net.demand, n_nodes=net.n_nodes)
    messages = set()
    for n_jobs in (1, 3):
        with pytest.raises(InfeasibleError, match="cannot be reached") as err:
            AllOrNothing(cut, n_jobs=n_jobs).assign(np.ones(cut.n_links))
        messages.add(str(err.value))
    assert len(messages) == 1


# -- 4. traffic_assignment checks its seed up front ------------------------------------
@pytest.mark.parametrize("method", ["fw", "cfw", "bfw", "bcfw"])
@pytest.mark.parametrize("seed, err", [("x", TypeError), (-1, ValueError), ([], ValueError),
                                       (1.5, TypeError)], ids=repr)
def test_traffic_assignment_refuses_a_bad_seed_before_its_set_up(method, seed, err,
                                                                 monkeypatch) -> None:
    def no_set_up(*args, **kwargs):
        raise AssertionError("a domain was built before the seed was checked")

    monkeypatch.setattr(solve_module, "AssignmentBlocks", no_set_up)
    monkeypatch.setattr(solve_module, "AllOrNothing", no_set_up)
    with pytest.raises(err, match=r"^traffic_assignment: random_state must be None"):
        traffic_assignment(_zones_network(), method, max_iter=2, random_state=seed)


def test_traffic_assignment_does_not_draw_from_a_legacy_seed_it_does_not_use() -> None:
    legacy = np.random.RandomState(2)
    traffic_assignment(_zones_network(), "fw", max_iter=2, random_state=legacy)
    assert legacy.randint(1000) == np.random.RandomState(2).randint(1000)


# -- 5. relative_gap refuses flows that do not carry the demand ------------------------
def _two_zones() -> Network:
    return Network(init_node=np.array([0, 1]), term_node=np.array([1, 0]),
                   free_flow_time=np.array([1., 1.]), capacity=np.array([10., 10.]),
                   b=np.array([.15, .15]), power=np.array([4., 4.]),
                   demand=np.array([[0., 10.], [10., 0.]]))


def test_relative_gap_on_a_symmetric_demand() -> None:
    net = _two_zones()
    # one route each way: the flow that carries the demand is at equilibrium
    assert relative_gap(net, np.array([10.0, 10.0])) == 0.0
    for bad in ([0.0, 0.0], [5.0, 5.0], [9.0, 9.0]):  # node balance holds for all three
        with pytest.raises(ValueError, match="`flow` does not carry the network's demand"):
            relative_gap(net, np.array(bad))
    # twice the demand meets node balance on this network: it passes, its excess a cost
    c = 1 + 0.15 * (20 / 10) ** 4
    assert relative_gap(net, np.array([20.0, 20.0])) == pytest.approx(
        (40 * c - 20 * c) / (40 * c), rel=1e-14)


def test_relative_gap_refuses_a_flow_short_of_the_demand_at_free_flow() -> None:
    # zones 0 and 1, 30 trips each way: a short link each way, congested at the flow,
    # and a long route through node 2; a third of the demand on the short links meets
    # node balance, and the costs at the flow (the short links' 1501) do not see it short
    net = Network(init_node=np.array([0, 1, 0, 2, 1, 2]), term_node=np.array([1, 0, 2, 1, 2, 0]),
                  free_flow_time=np.array([1.0, 1.0, 5.0, 5.0, 5.0, 5.0]),
                  capacity=np.array([1.0, 1.0, 1e6, 1e6, 1e6, 1e6]),
                  b=np.array([0.15, 0.15, 0.0, 0.0, 0.0, 0.0]), power=np.full(6, 4.0),
                  demand=np.array([[0.0, 30.0], [30.0, 0.0]]), n_nodes=3)
    flow = np.array([10.0, 10.0, 0.0, 0.0, 0.0, 0.0])
    costs = net.link_costs(flow)
    assert costs @ flow >= 60 * 10.0  # above the shortest paths at the flow (the long ones)
    with pytest.raises(ValueError, match="its cost at free flow, 20, is below the shortest "
                                         "paths' 60"):
        relative_gap(net, flow)


@pytest.mark.skipif(not (TNTP / "SiouxFalls_flow.tntp").exists(), reason="no TNTP data")
def test_relative_gap_of_scaled_best_known_siouxfalls_flows() -> None:
    from frankwolfe.applications.traffic import load_siouxfalls

    net, best = load_siouxfalls(TNTP.parent.parent)
    assert 0.0 <= relative_gap(net, best) < 1e-10
    assert 0.0 <= relative_gap(net, np.round(best)) < 1e-4  # rounded published flows pass
    for scale in (0.0, 0.5):
        with pytest.raises(ValueError, match="`flow` does not carry the network's demand"):
            relative_gap(net, scale * best)

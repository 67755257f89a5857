"""One rule for whole-number (and the real-number arguments next to them) arguments at
every site that checked them by hand: text (or another non-number) is a ``TypeError``
naming the argument, ``2.5`` a ``ValueError``, and a numpy integer passes as before.
These sites raised ``ValueError`` for text too."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.active_variant import drift_options, lazy_options
from frankwolfe.applications.graph_matching import matching_model
from frankwolfe.applications.matching import (
    birkhoff_decomposition,
    sinkhorn,
    solve_qap,
    two_opt,
)
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MatchingModel,
    MulticlassModel,
    MultiLabelModel,
    SSVMDualObjective,
    make_chain,
)
from frankwolfe.applications.structured_svm.datasets import (
    make_latent_blocks,
    make_multilabel_tree,
    make_noisy_blocks,
)
from frankwolfe.applications.structured_svm.models.graph import (
    EdgeFeatureGraphCRF,
    GraphCRF,
    alpha_expansion,
    grid_edges,
    local_lp,
    trws,
)
from frankwolfe.applications.traffic import Network, read_flows, read_trips

_A = np.array([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]])
_B = np.array([[0.0, 5, 1], [5, 0, 2], [1, 2, 0]])
_U, _P, _E = np.zeros((2, 2)), np.zeros((1, 2, 2)), np.array([[0, 1]])
_NET = dict(init_node=[0], term_node=[1], free_flow_time=[1.0], capacity=[1.0], b=[0.15],
            power=[4.0], demand=[[0, 1.0], [0, 0]])


def _client():
    return SimpleNamespace(submit=None, gather=None, scheduler_info=None, status="running")


def _trips(n_zones, path):
    file = path / "t_trips.tntp"
    file.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 3.0;\n")
    return read_trips(file, n_zones=n_zones)


def _flows(n_links, path):
    file = path / "t_flow.tntp"
    file.write_text("From To Volume Cost\n1 2 3.0 1.0\n")
    return read_flows(file, n_links=n_links)


# name: (the call of one argument ``v``, the argument's name, a valid numpy integer)
_WHOLE = {
    "DaskExecutor.n_shards": (lambda v, p: fw.DaskExecutor(_client(), n_shards=v),
                              "n_shards", np.int64(2)),
    "DaskExecutor.retries": (lambda v, p: fw.DaskExecutor(_client(), retries=v),
                             "retries", np.int64(0)),
    "CachedLMO.cache_size": (lambda v, p: fw.CachedLMO(fw.ProbabilitySimplex(dim=3),
                                                       cache_size=v), "cache_size",
                             np.int64(4)),
    "drift_options.resum_every": (lambda v, p: drift_options(v, 0.0), "resum_every",
                                  np.int64(3)),
    "away_step.resum_every": (lambda v, p: fw.away_step_frank_wolfe(
        fw.QuadraticObjective(np.eye(3), -np.ones(3)), fw.ProbabilitySimplex(dim=3),
        resum_every=v, max_iter=2), "resum_every", np.int64(3)),
    "two_opt.max_swaps": (lambda v, p: two_opt(_A, _B, np.arange(3), max_swaps=v),
                          "max_swaps", np.int64(0)),
    "solve_qap.restarts": (lambda v, p: solve_qap(_A, _B, restarts=v, max_iter=2),
                           "restarts", np.int64(0)),
    "solve_qap.max_iter": (lambda v, p: solve_qap(_A, _B, max_iter=v), "max_iter",
                           np.int64(2)),
    "solve_qap.tabu_iter": (lambda v, p: solve_qap(_A, _B, max_iter=2, local_search="tabu",
                                                   tabu_iter=v), "tabu_iter", np.int64(3)),
    "matching_model.n_landmarks": (lambda v, p: matching_model(4, v), "n_landmarks",
                                   np.int64(5)),
    "make_chain.n_samples": (lambda v, p: make_chain(v, 2, 2, random_state=0), "n_samples",
                             np.int64(2)),
    "make_chain.n_states": (lambda v, p: make_chain(2, v, 2, random_state=0), "n_states",
                            np.int64(2)),
    "make_chain.n_features": (lambda v, p: make_chain(2, 2, v, random_state=0),
                              "n_features", np.int64(2)),
    "make_chain.n_templates": (lambda v, p: make_chain(2, 2, 2, n_templates=v,
                                                       random_state=0), "n_templates",
                               np.int64(2)),
    "make_noisy_blocks.height": (lambda v, p: make_noisy_blocks(1, height=v, random_state=0),
                                 "height", np.int64(3)),
    "make_latent_blocks.width": (lambda v, p: make_latent_blocks(1, width=v, random_state=0),
                                 "width", np.int64(4)),
    "make_multilabel_tree.n_labels": (lambda v, p: make_multilabel_tree(
        2, n_labels=v, random_state=0), "n_labels", np.int64(3)),
    "GraphCRF.n_states": (lambda v, p: GraphCRF(v, 2), "n_states", np.int64(2)),
    "GraphCRF.n_features": (lambda v, p: GraphCRF(2, v), "n_features", np.int64(2)),
    "EdgeFeatureGraphCRF.n_edge_features": (lambda v, p: EdgeFeatureGraphCRF(2, 2, v),
                                            "n_edge_features", np.int64(2)),
    "alpha_expansion.max_sweeps": (lambda v, p: alpha_expansion(
        np.zeros((2, 3)), np.zeros((1, 3, 3)), _E, max_sweeps=v), "max_sweeps", np.int64(2)),
    "grid_edges.height": (lambda v, p: grid_edges(v, 3), "height", np.int64(2)),
    "grid_edges.width": (lambda v, p: grid_edges(3, v), "width", np.int64(2)),
    "trws.max_iter": (lambda v, p: trws(_U, _P, _E, max_iter=v), "max_iter", np.int64(5)),
    "MulticlassModel.n_classes": (lambda v, p: MulticlassModel(v, 2), "n_classes",
                                  np.int64(3)),
    "MulticlassModel.n_features": (lambda v, p: MulticlassModel(3, v), "n_features",
                                   np.int64(2)),
    "MatchingModel.n_features": (lambda v, p: MatchingModel(v), "n_features", np.int64(2)),
    "ChainModel.n_states": (lambda v, p: ChainModel(v, 2), "n_states", np.int64(2)),
    "ChainModel.n_features": (lambda v, p: ChainModel(2, v), "n_features", np.int64(2)),
    "MultiLabelModel.n_labels": (lambda v, p: MultiLabelModel(v, 2), "n_labels",
                                 np.int64(3)),
    "MultiLabelModel.n_features": (lambda v, p: MultiLabelModel(3, v), "n_features",
                                   np.int64(2)),
    "SSVMDualObjective.d": (lambda v, p: SSVMDualObjective(0.1, v), "d", np.int64(3)),
    "read_trips.n_zones": (_trips, "n_zones", np.int64(2)),
    "read_flows.n_links": (_flows, "n_links", np.int64(1)),
    "Network.first_thru_node": (lambda v, p: Network(**_NET, first_thru_node=v),
                                "first_thru_node", np.int64(0)),
}

# the real-number arguments checked beside them: (call, name, a valid numpy float)
_REAL = {
    "DaskExecutor.timeout": (lambda v: fw.DaskExecutor(_client(), timeout=v), "timeout",
                             np.float64(7.0)),
    "drift_options.sparsify_tol": (lambda v: drift_options(5, v), "sparsify_tol",
                                   np.float64(1e-9)),
    "lazy_options.lazy_tolerance": (lambda v: lazy_options(True, v), "lazy_tolerance",
                                    np.float64(2.0)),
    "two_opt.tol": (lambda v: two_opt(_A, _B, np.arange(3), tol=v), "tol",
                    np.float64(0.0)),
    "solve_qap.tol": (lambda v: solve_qap(_A, _B, tol=v, max_iter=2), "tol",
                      np.float64(1e-6)),
    # the tabu search runs to the time limit: a short one
    "solve_qap.time_limit": (lambda v: solve_qap(_A, _B, time_limit=v, max_iter=2),
                             "time_limit", np.float64(0.2)),
    "sinkhorn.tol": (lambda v: sinkhorn(np.ones((2, 2)), tol=v), "tol", np.float64(1e-9)),
    "birkhoff_decomposition.tol": (lambda v: birkhoff_decomposition(np.eye(2), tol=v),
                                   "tol", np.float64(1e-9)),
    "make_chain.noise": (lambda v: make_chain(2, 2, 2, noise=v, random_state=0), "noise",
                         np.float64(0.5)),
    "make_noisy_blocks.noise": (lambda v: make_noisy_blocks(1, noise=v, random_state=0),
                                "noise", np.float64(0.5)),
    "make_latent_blocks.radius": (lambda v: make_latent_blocks(1, radius=v, random_state=0),
                                  "radius", np.float64(1.0)),
    "trws.tol": (lambda v: trws(_U, _P, _E, tol=v), "tol", np.float64(0.0)),
    "local_lp.tol": (lambda v: local_lp(_U, _P, _E, tol=v), "tol", np.float64(1e-9)),
    "MatchingModel.precision_cost": (lambda v: MatchingModel(2, precision_cost=v),
                                     "precision_cost", np.float64(0.5)),
    "MatchingModel.recall_cost": (lambda v: MatchingModel(2, recall_cost=v), "recall_cost",
                                  np.float64(0.5)),
}


@pytest.mark.parametrize("site", list(_WHOLE))
@pytest.mark.parametrize("bad", ["3", None, True], ids=repr)
def test_a_whole_number_argument_of_a_wrong_type_is_a_type_error(site, bad, tmp_path):
    call, name, _ = _WHOLE[site]
    if bad is None and site in ("DaskExecutor.n_shards", "CachedLMO.cache_size",
                                "solve_qap.tabu_iter", "make_chain.n_templates",
                                "read_trips.n_zones", "read_flows.n_links"):
        call(bad, tmp_path)  # optional: None is the default
        return
    with pytest.raises(TypeError, match=rf"`{name}` must be .*, got {re.escape(repr(bad))}"):
        call(bad, tmp_path)


@pytest.mark.parametrize("site", list(_WHOLE))
def test_a_whole_number_argument_of_a_wrong_value_is_a_value_error(site, tmp_path):
    call, name, _ = _WHOLE[site]
    with pytest.raises(ValueError, match=rf"`{name}` must be .*, got 2\.5"):
        call(2.5, tmp_path)


@pytest.mark.parametrize("site", list(_WHOLE))
def test_a_whole_number_argument_takes_a_numpy_integer(site, tmp_path):
    call, _, good = _WHOLE[site]
    call(good, tmp_path)


@pytest.mark.parametrize("site", list(_REAL))
@pytest.mark.parametrize("bad", ["1", True, [1.0]], ids=repr)
def test_a_real_argument_of_a_wrong_type_is_a_type_error(site, bad):
    call, name, _ = _REAL[site]
    with pytest.raises(TypeError, match=rf"`?{name}`? must be .*, got {re.escape(repr(bad))}"):
        call(bad)


@pytest.mark.parametrize("site", list(_REAL))
def test_a_real_argument_of_a_wrong_value_is_a_value_error(site):
    call, name, _ = _REAL[site]
    with pytest.raises(ValueError, match=rf"`?{name}`? must be .*, got -1\.0"):
        call(-1.0)


@pytest.mark.parametrize("site", list(_REAL))
def test_a_real_argument_takes_a_numpy_float(site):
    call, _, good = _REAL[site]
    call(good)


def test_the_named_kinds_of_mixed_arguments():
    """Arguments that check_whole cannot take whole (a pair, a list of indices, an
    option table) split type from value by hand, with their own wording."""
    with pytest.raises(TypeError, match=r"make_chain: `length` must be \(min, max\)"):
        make_chain(2, 2, 2, length=("2", 4))
    with pytest.raises(TypeError, match=r"make_chain: `length` must be \(min, max\)"):
        make_chain(2, 2, 2, length=3)
    with pytest.raises(ValueError, match=r"make_chain: `length` must be \(min, max\)"):
        make_chain(2, 2, 2, length=(2.5, 4))
    with pytest.raises(ValueError, match=r"make_chain: `length` must be \(min, max\)"):
        make_chain(2, 2, 2, length=(4, 2))
    assert len(make_chain(2, 2, 2, length=(np.int64(2), 3.0), random_state=0)[0]) == 2
    with pytest.raises(TypeError, match=r"`symmetric_edge_features` must hold whole-number"):
        EdgeFeatureGraphCRF(2, 2, 2, symmetric_edge_features=["0"])
    with pytest.raises(ValueError, match=r"`symmetric_edge_features` must hold whole-number"):
        EdgeFeatureGraphCRF(2, 2, 2, symmetric_edge_features=[0.5])
    EdgeFeatureGraphCRF(2, 2, 2, symmetric_edge_features=[np.int64(0)])
    with pytest.raises(TypeError, match=r"inference option 'max_iter' must be a positive "
                                        r"integer, got '3' \(str\)"):
        GraphCRF(2, 2, inference="trws", inference_options={"max_iter": "3"})
    with pytest.raises(ValueError, match=r"inference option 'max_iter' must be a positive "
                                         r"integer, got 2.5$"):
        GraphCRF(2, 2, inference="trws", inference_options={"max_iter": 2.5})
    with pytest.raises(TypeError, match=r"inference option 'tol' must be a finite number"):
        GraphCRF(2, 2, inference="trws", inference_options={"tol": "0"})
    GraphCRF(2, 2, inference="trws", inference_options={"max_iter": np.int64(3),
                                                         "tol": np.float32(0.1)})
    with pytest.raises(TypeError, match=r"ChainModel: `n_features` must be a positive "
                                        r"integer or a sequence of template sizes"):
        ChainModel(2, "4")
    with pytest.raises(TypeError, match=r"`actors` must be True or False, got 'no'"):
        fw.DaskExecutor(_client(), actors="no")


def test_the_accepted_values_are_kept_as_ints():
    assert fw.DaskExecutor(_client(), n_shards=2.0).n_shards == 2
    assert type(fw.CachedLMO(fw.ProbabilitySimplex(dim=3), cache_size=np.int64(4)).cache_size
                ) is int
    assert drift_options(np.int64(3), np.float32(0.0)) == (3, 0.0)
    assert type(drift_options(3.0, 0)[0]) is int
    assert type(SSVMDualObjective(0.1, np.int64(3)).d) is int
    assert Network(**_NET, first_thru_node=np.int64(0)).first_thru_node == 0
    # a whole float still counts where it did
    assert MulticlassModel(3.0, 2.0).size_joint_feature == 6

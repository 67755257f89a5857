"""Inactive-atom pruning of the per-block working sets (n-slack cutting plane)."""

from __future__ import annotations

import numpy as np
import pytest
from ssvm_reference import ssvm_dual_qp

import frankwolfe as fw
from frankwolfe.applications.structured_svm import ChainModel, SSVMDual, make_chain


def _problem(lam):
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    domain = SSVMDual(model, X, Y, lam)
    objective = domain.dual_objective()  # declares its quadratic form to the corrective QP
    start = [domain.blocks[i].vertex(Y[i]) for i in range(len(X))]
    return model, X, Y, objective, domain, start


@pytest.mark.parametrize("prune_after", [None, 1, 3])
def test_pruned_cutting_plane_reaches_the_optimum(prune_after):
    lam = 0.1
    model, X, Y, objective, domain, start = _problem(lam)
    f_star = ssvm_dual_qp(model, X, Y, lam)
    sizes = []

    def callback(s):
        sizes.append(s.info["working_set_size"])

    res = fw.fully_corrective_frank_wolfe(objective, domain, start, blocks=True,
                                          prune_after=prune_after, tol=1e-10, max_iter=200,
                                          callback=callback)
    assert -1e-9 <= res.fun - f_star <= 1e-8
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    if prune_after is None:
        assert res.extra["n_pruned"] == 0
        assert sizes == sorted(sizes)  # working sets only grow
    else:
        # every kept atom has had positive weight within the last prune_after solves
        assert res.extra["n_block_atoms"] <= max(sizes)
    if prune_after == 1:
        assert res.extra["n_pruned"] > 0


def test_prune_after_must_be_a_positive_integer():
    _, _, _, objective, domain, start = _problem(0.1)
    for bad, error in ((0, ValueError), (-1, ValueError), (1.5, ValueError),
                       (True, TypeError)):
        with pytest.raises(error, match="prune_after"):
            fw.fully_corrective_frank_wolfe(objective, domain, start, blocks=True,
                                            prune_after=bad, max_iter=2)


@pytest.mark.parametrize("max_sweeps", [1, 3])
def test_corrective_sweep_budget_is_kept_and_the_run_converges(max_sweeps):
    lam = 0.1
    model, X, Y, objective, domain, start = _problem(lam)
    f_star = ssvm_dual_qp(model, X, Y, lam)
    sweeps = []

    def callback(s):
        sweeps.append(s.info["n_qp_iterations"])

    res = fw.fully_corrective_frank_wolfe(objective, domain, start, blocks=True,
                                          corrective_max_sweeps=max_sweeps, prune_after=3,
                                          tol=0.0, max_iter=300, callback=callback)
    assert np.all(np.diff(np.concatenate([[0], sweeps])) <= max_sweeps)
    assert res.extra["n_qp_iterations"] <= max_sweeps * res.nit
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    # f(start) - f_star is 1.1e-2: a budget of one sweep still converges (more slowly
    # than exact corrections, which reach 1e-10 in 54 iterations)
    assert res.fun - f_star <= 1e-4


def test_corrective_max_sweeps_must_be_a_positive_integer():
    _, _, _, objective, domain, start = _problem(0.1)
    for bad in (0, -2, 2.5, True):
        with pytest.raises(ValueError, match="corrective_max_sweeps"):
            fw.fully_corrective_frank_wolfe(objective, domain, start, blocks=True,
                                            corrective_max_sweeps=bad, max_iter=2)

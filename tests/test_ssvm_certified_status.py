"""certified_result's status rule (belongs with tests/test_ssvm_training.py or
tests/test_graph_crf.py): a run its solver ended as converged is converged only when the
certified gap ``primal - dual`` is within ``tol``, else stalled."""

import dataclasses

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm.oracles import certified_result


def _converged_run():
    obj = fw.QuadraticObjective(np.eye(2), np.zeros(2))
    res = fw.frank_wolfe(obj, fw.ProbabilitySimplex(dim=2), np.array([1.0, 0.0]), max_iter=5)
    return dataclasses.replace(res, status=fw.Status.CONVERGED)


@pytest.mark.parametrize("primal,dual,tol,want", [
    (1.0, 0.5, 0.1, fw.Status.STALLED),     # certified gap 0.5 > tol
    (1.0, 0.95, 0.1, fw.Status.CONVERGED),  # certified gap 0.05 <= tol
])
def test_solver_convergence_needs_the_certified_gap(primal, dual, tol, want):
    out = certified_result(_converged_run(), primal, np.array([2.0, 0.98]), dual,
                           "exact problem", tol)
    assert out.status == want
    assert out.gap == pytest.approx(primal - dual)
    assert out.best_gap == pytest.approx(min(primal, 2.0, 0.98) - dual)
    assert out.dual_bound == pytest.approx(-min(primal, 2.0, 0.98))

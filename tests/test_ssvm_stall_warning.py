"""A structured SVM fit that stalls above tol (graph cut on learned pairwise weights that
are not submodular: the decodings miss their maxima and give no ascent) warns with
scikit-learn's ConvergenceWarning, as a spent budget does; its certificate stays honest
(the primal at w_ is the exact one, recomputed by brute force over the labellings)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from frankwolfe.applications.structured_svm import GraphCRF, StructuredSVM
from frankwolfe.applications.structured_svm.datasets import make_noisy_blocks


def _exact_primal(model, X, Y, w, lam):
    """lam/2 |w|^2 + mean_i max_y [L(y_i, y) + <w, psi(x_i, y) - psi(x_i, y_i)>]."""
    hinge = 0.0
    for x, y in zip(X, Y):
        n = y.size
        base = float(w @ model.joint_feature(x, y))
        best = max(model.loss(y, np.array(z)) + float(w @ model.joint_feature(x, np.array(z)))
                   for z in itertools.product(range(model.n_states), repeat=n))
        hinge += best - base
    return 0.5 * lam * float(w @ w) + hinge / len(X)


def test_a_stalled_fit_above_tol_warns_and_stays_certified():
    X, Y = make_noisy_blocks(30, 3, 3, 2, noise=1.0, n_blocks=1, random_state=0)
    svm = StructuredSVM(GraphCRF(2, 3, inference="graph-cut"), lam=0.01, max_passes=300,
                        tol=1e-4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="stalled at duality gap"):
        svm.fit(X, Y)
    assert svm.result_.status == "stalled"
    assert svm.result_.gap > svm.tol
    primal = _exact_primal(svm.model, X, Y, svm.w_, 0.01)
    assert svm.history_["primal"][-1] == pytest.approx(primal, rel=1e-9)


def test_a_fit_that_converges_does_not_warn():
    X, Y = make_noisy_blocks(30, 3, 3, 2, noise=1.0, n_blocks=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        StructuredSVM(GraphCRF(2, 3, inference="trws"), lam=0.1, max_passes=300,
                      tol=0.05, random_state=0).fit(X, Y)

"""MultiLabelModel.loss_augmented_bound where graph cut or max-product leaves its
labelling uncertified: TRW-S supplies a finite bound, at or above the true maximum
(belongs with tests/test_multilabel.py).  Independent answer: enumeration of every
labelling of loss + score."""

import itertools

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import MultiLabelModel


@pytest.mark.parametrize("method", ["graph-cut", "max-product"])
def test_uncertified_inference_gets_a_finite_bound_above_the_maximum(method):
    L, F = 5, 3
    model = MultiLabelModel(L, F, edges="full", inference=method)
    rng = np.random.default_rng(0)
    finite = 0
    for _ in range(20):
        w = rng.normal(size=model.size_joint_feature) * 2.0  # frustrated pairwise tables
        x = rng.normal(size=F)
        y_true = rng.integers(0, 2, L)
        best = max(model.loss(y_true, np.array(y)) + model.score(x, np.array(y), w)
                   for y in itertools.product((0, 1), repeat=L))
        bound, _ = model.loss_augmented_bound(x, y_true, w)
        assert bound >= best - 1e-9
        finite += np.isfinite(bound)
    assert finite == 20

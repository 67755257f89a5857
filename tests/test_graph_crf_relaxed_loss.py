"""GraphCRF's loss reads a relaxed labelling (n x K node marginals, then K x K per edge)
as the expected Hamming loss, and refuses a float vector of any other size."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import GraphCRF
from frankwolfe.errors import ShapeError


def test_a_relaxed_labelling_gives_the_expected_hamming_loss():
    m = GraphCRF(3, 1)
    t = np.array([0, 2])
    mu = np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    relaxed = np.concatenate([mu.ravel(), np.full(9, 1.0 / 9)])  # one edge
    # by hand: mean over nodes of 1 - mu_i(t_i)
    assert m.loss(t, relaxed) == pytest.approx(((1 - 0.5) + (1 - 0.8)) / 2, rel=1e-15)


@pytest.mark.parametrize("size", [50, 6 + 5, 7])
def test_a_float_vector_of_another_size_is_refused(size):
    with pytest.raises(ShapeError, match="`y`"):
        GraphCRF(3, 1).loss(np.array([0, 2]), np.full(size, 0.3))

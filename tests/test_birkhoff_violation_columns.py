"""Birkhoff.violation sees column sums as well as row sums.  Belongs in
tests/test_lmo_matrix.py; the answer is the closed form max(neg, |row sums - 1|,
|column sums - 1|)."""

import numpy as np
import pytest

from frankwolfe import Birkhoff


@pytest.mark.parametrize("X", [
    np.array([[1.0, 0.0], [1.0, 0.0]]),           # rows fine, columns 2 and 0
    np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]).T * np.array([1.0, 1.0, 1.0]),
    np.array([[0.7, 0.3], [0.7, 0.3]]),
])
def test_violation_counts_columns(X):
    expected = max(0.0, -X.min(), np.abs(X.sum(1) - 1).max(), np.abs(X.sum(0) - 1).max())
    assert Birkhoff().violation(X) == pytest.approx(expected)
    assert Birkhoff(X.shape[0]).violation(X.reshape(-1)) == pytest.approx(expected)

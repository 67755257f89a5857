"""ConvexHull answers views of its own rows: they are read-only, so changing an answer in
place cannot move the domain (the next answer is still the row given)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw

ROWS = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]


@pytest.mark.parametrize("make", [np.array, sp.csr_array], ids=["dense", "sparse"])
def test_an_answer_changed_in_place_leaves_the_hull_alone(make):
    hull = fw.ConvexHull(make(ROWS))
    g = np.array([1.0, -1.0])
    atom = hull(g)
    if make is np.array:
        with pytest.raises(ValueError, match="read-only"):
            atom.to_dense()[:] = 0.0
    else:
        with pytest.raises(ValueError, match="read-only"):
            atom.values[:] = 0.0
    np.testing.assert_array_equal(hull(g).to_dense(), [0.0, 2.0])  # min of <g, v>: row 2
    got = hull.vertices.toarray() if make is not np.array else hull.vertices
    np.testing.assert_array_equal(got, ROWS)


def test_the_callers_rows_stay_writable():
    rows = np.array(ROWS)
    fw.ConvexHull(rows)
    rows[0, 0] = 5.0  # the hull holds its own copy

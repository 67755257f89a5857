"""ConvexHull: subnormal rows with a normal direction, and answers shaped like the direction.

Belongs in tests/test_lmo_direction_scale.py (first test) and tests/test_lmo_family.py
(second).  The expected answers are brute force: the exact ranking of <v_i, g> computed
with Python fractions."""

from fractions import Fraction

import numpy as np
import pytest

from frankwolfe import ConvexHull


def _exact_argmin(V, g):
    vals = [sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, g)) for row in V]
    return min(range(len(vals)), key=lambda i: (vals[i], i))


@pytest.mark.parametrize("sparse", [False, True])
def test_subnormal_rows_with_a_unit_direction(sparse):
    # max|g| max ||v_i||_1 ~ 2**-1030: the product is rescaled, and the scale applied to g
    # must keep it finite (2**1030 * 1.0 overflows)
    V = np.array([[1e-310, 0.0], [0.0, 2e-310], [3e-311, -1e-311]])
    g = np.array([1.0, -1.0])
    M = V
    if sparse:
        import scipy.sparse as sp
        M = sp.csr_array(V)
    atom = ConvexHull(M)(g)
    assert atom.key == ("row", _exact_argmin(V, g)) == ("row", 1)
    np.testing.assert_array_equal(atom.to_dense(), V[1])


def test_answer_takes_the_shape_of_each_direction():
    V = np.arange(12.0).reshape(3, 4) * np.array([1.0, -1.0, 1.0, -1.0])
    hull = ConvexHull(V)
    g = np.array([1.0, 2.0, 3.0, 4.0])
    i = _exact_argmin(V, g)
    flat = hull(g)
    assert flat.shape == (4,)
    for shape in [(1, 4), (2, 2), (4, 1)]:
        atom = hull(g.reshape(shape))  # the same row wins for every shape
        assert atom.shape == shape
        np.testing.assert_array_equal(atom.to_dense(), V[i].reshape(shape))
    assert hull(g).shape == (4,)

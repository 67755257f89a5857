"""``lmo.extreme_point`` takes an array-like direction (a list, a tuple, integers), as
``lmo(direction)`` does: ``ProbabilitySimplex().extreme_point([1.0, 2.0])`` raised an
AttributeError ("'list' object has no attribute 'ndim'").  Each answer is checked against
the domain's closed-form vertex."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw

G = [0.5, -2.0, 1.5, 0.25]


def _simplex(g, r):  # r e_i, i the smallest entry
    v = np.zeros(len(g))
    v[int(np.argmin(g))] = r
    return v


def _l1(g, r):  # -r sign(g_i) e_i, i the largest in absolute value
    g = np.asarray(g, dtype=float)
    v = np.zeros(g.size)
    i = int(np.argmax(np.abs(g)))
    v[i] = -r * np.sign(g[i])
    return v


def _float32(g):
    return np.array(g, np.float32)


CASES = [
    (fw.ProbabilitySimplex(radius=2.0), lambda g: _simplex(g, 2.0)),
    (fw.UnitSimplex(radius=2.0), lambda g: _simplex(g, 2.0)),  # min(g) < 0: a vertex r e_i
    (fw.L1Ball(3.0), lambda g: _l1(g, 3.0)),
    (fw.L2Ball(2.0), lambda g: -2.0 * np.asarray(g, float) / np.linalg.norm(g)),
    (fw.LinfBall(1.5), lambda g: -1.5 * np.sign(g)),
    (fw.Box([-1, 0, -2, 1], [1, 3, 2, 4]),
     lambda g: np.where(np.asarray(g) > 0, [-1, 0, -2, 1], [1, 3, 2, 4]).astype(float)),
    # the two largest |g_i| (-2 and 1.5) at -radius sign(g_i)
    (fw.KSparsePolytope(2, 1.0), lambda g: np.array([0.0, 1.0, -1.0, 0.0])),
]


@pytest.mark.parametrize("lmo, vertex", CASES, ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("given", [list, tuple, np.array, _float32],
                         ids=["list", "tuple", "array", "float32"])
def test_extreme_point_of_an_array_like_is_the_closed_form_vertex(lmo, vertex, given):
    direction = given(G)
    answer = lmo.extreme_point(direction)
    dense = answer.to_dense() if isinstance(answer, fw.Atom) else np.asarray(answer)
    np.testing.assert_allclose(dense, vertex(G), rtol=1e-6, atol=0)
    if given is not _float32:  # float32 goes through as it is, in its own precision
        np.testing.assert_array_equal(dense, lmo(np.asarray(G)).to_dense())


def test_integer_directions_as_lists_and_arrays():
    lmo = fw.ProbabilitySimplex()
    for direction in ([3, 1, 2], (3, 1, 2), np.array([3, 1, 2])):
        np.testing.assert_array_equal(lmo.extreme_point(direction).to_dense(), [0, 1, 0])


def test_a_users_extreme_point_gets_an_array():
    seen = []

    class Cube(fw.LMO):
        def extreme_point(self, direction):
            seen.append(type(direction))
            return -np.sign(direction) + (direction == 0)

    np.testing.assert_array_equal(np.asarray(Cube().extreme_point([1.0, -2.0, 0.0])),
                                  [-1.0, 1.0, 1.0])
    assert seen == [np.ndarray]

    class Sub(Cube):  # inherits the converting method: converted once, not wrapped again
        pass

    assert Sub.extreme_point is Cube.extreme_point
    np.testing.assert_array_equal(np.asarray(Sub().extreme_point((2, 0))), [-1.0, 1.0])


def test_text_and_complex_directions_are_refused_by_name():
    lmo = fw.L1Ball(1.0)
    with pytest.raises(ValueError, match=r"L1Ball\(.*\): `direction` must be"):
        lmo.extreme_point(["a", "b"])
    with pytest.raises(ValueError, match=r"`direction` must be real"):
        lmo.extreme_point([1 + 1j, 0.0])


def test_sparse_directions_still_reach_the_oracles_that_take_them():
    lmo = fw.NuclearNormBall(1.0, shape=(3, 3))
    d = sp.csr_matrix(np.diag([3.0, -1.0, 0.5]))
    dense = lmo.extreme_point(d).to_dense()
    np.testing.assert_allclose(dense, lmo(d.toarray()).to_dense(), atol=1e-12)

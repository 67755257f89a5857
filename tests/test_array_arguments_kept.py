"""Array arguments are read as the documented values: bounds, linear terms and targets are
copied at construction (a caller's later in-place change no longer moves a checked
domain or leaves a stale cache), whole-valued float edge arrays are node indices, a
float16 target is fitted in float64, and a sparse ellipsoid matrix is refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw

# -- copies of the small arrays -------------------------------------------------------------

def test_box_copies_its_bounds():
    lo, up = np.array([0.0, 0.0]), np.array([1.0, 1.0])
    box = fw.Box(lo, up)
    lo[0] = 5.0  # above upper: the box would answer a point outside its checked bounds
    up[1] = -3.0
    np.testing.assert_array_equal(box(np.array([1.0, -1.0])).to_dense(), [0.0, 1.0])
    np.testing.assert_array_equal(box.lower, [0.0, 0.0])
    np.testing.assert_array_equal(box.upper, [1.0, 1.0])


def test_quadratic_copies_c():
    c = np.array([1.0, -1.0])
    f = fw.QuadraticObjective(np.eye(2), c)
    c[:] = 100.0
    x = np.array([1.0, 2.0])
    assert f.value(x) == 0.5 * 5.0 + (1.0 - 2.0)
    np.testing.assert_array_equal(f.gradient(x), x + [1.0, -1.0])


def test_least_squares_copies_b_and_offset():
    A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    b, mu = np.array([1.0, 1.0, 0.0]), np.array([0.5, 0.25])
    f = fw.LeastSquares(A, b, offset=mu)
    b[:] = 7.0
    mu[:] = -3.0
    x = np.array([0.5, -0.5])
    r = (A - [0.5, 0.25]) @ x - [1.0, 1.0, 0.0]
    assert f.value(x) == pytest.approx(0.5 * r @ r, rel=1e-15)
    np.testing.assert_allclose(f.gradient(x), (A - [0.5, 0.25]).T @ r, rtol=1e-15)
    # the run reads the kept A^T b too
    g = fw.LeastSquares(A, [1.0, 1.0, 0.0], offset=[0.5, 0.25])
    np.testing.assert_allclose(fw.frank_wolfe(f, fw.L1Ball(1.0), max_iter=30).x,
                               fw.frank_wolfe(g, fw.L1Ball(1.0), max_iter=30).x, atol=1e-15)


def test_bilinear_copies_its_linear_terms():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0, 0.0])
    L = fw.BilinearObjective(np.zeros((2, 3)), a, b)
    a[:] = 9.0
    b[:] = 9.0
    assert L.value(np.array([1.0, 0.0]), np.array([0.0, 1.0, 0.0])) == 2.0


def test_polytope_copies_its_right_hand_sides():
    b = np.array([1.0])
    P = fw.Polytope(A_ub=[[1.0, 1.0]], b_ub=b, bounds=(0, None))
    b[0] = 0.25
    np.testing.assert_array_equal(P(np.array([-1.0, -2.0])).to_dense(), [0.0, 1.0])
    np.testing.assert_array_equal(P.b_ub, [1.0])
    assert P.violation(np.array([0.5, 0.5])) == 0.0


# -- FlowPolytope: whole-valued float edges are node indices --------------------------------

_EDGES = [(0, 1), (1, 3), (0, 2), (2, 3), (1, 2)]
_G = np.array([1.0, 1.0, 0.5, 0.5, 0.1])


def _flow(edges):
    return fw.FlowPolytope(edges, supplies=[2.0, 0.0, 0.0, -2.0], capacity=[1.0, 2, 2, 1, 1])


@pytest.mark.parametrize("edges", [
    np.array(_EDGES, dtype=float),                     # np.loadtxt, pandas .to_numpy()
    [(float(t), float(h)) for t, h in _EDGES],
    [(np.float64(t), h) for t, h in _EDGES],
    [(0, 1.0)] + _EDGES[1:],
], ids=["float array", "float tuples", "numpy floats", "mixed"])
def test_flow_whole_float_edges_are_node_indices(edges):
    # the min-cost flow of 2 units by hand: the capacity-1 edges (0,1) and (2,3) are full,
    # so one unit goes 0-1-3 (cost 2) and one 0-2-3 (cost 1); 0-1-2-3 would cost 1.6
    np.testing.assert_array_equal(_flow(_EDGES)(_G).to_dense(), [1.0, 1.0, 1.0, 1.0, 0.0])
    P = _flow(edges)
    assert P.nodes == [0, 1, 2, 3]
    np.testing.assert_array_equal(P(_G).to_dense(), [1.0, 1.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize("edges", [np.array([(0.0, 1.5), (1.5, 2.0)]),
                                   [(0, 1.5), (1.5, 2)], [(0, float("nan")), (1, 2)]])
def test_flow_refuses_numbers_that_are_not_whole(edges):
    with pytest.raises(ValueError, match=r"FlowPolytope: node labels that are numbers .* "
                                         r"whole numbers, got (1\.5|nan) in edge 0"):
        fw.FlowPolytope(edges, supplies=[1.0, 0.0, -1.0])


def test_flow_text_labels_keep_their_order_of_appearance():
    P = fw.FlowPolytope([("b", "a"), ("a", "c")], supplies=[1.0, 0.0, -1.0])
    assert P.nodes == ["b", "a", "c"]
    np.testing.assert_array_equal(P(np.array([1.0, 1.0])).to_dense(), [1.0, 1.0])


# -- ConstrainedLasso: a float16 y ------------------------------------------------------------

def test_constrained_lasso_fits_a_float16_target_in_float64():
    lasso = pytest.importorskip("frankwolfe.applications.lasso")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y16 = (X @ [1.0, -2.0, 0.0, 0.5] + 100.0).astype(np.float16)
    y64 = y16.astype(np.float64)  # the same numbers, exactly
    assert float(y16.mean()) != y64.mean()  # float16's mean is off by about 0.04 here
    a = lasso.ConstrainedLasso(radius=2.0, tol=1e-12).fit(X, y16)
    b = lasso.ConstrainedLasso(radius=2.0, tol=1e-12).fit(X, y64)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    # the intercept of a centred fit: mean(y) - mean(X) coef, in float64
    assert a.intercept_ == pytest.approx(y64.mean() - X.mean(axis=0) @ a.coef_, abs=1e-12)


# -- Ellipsoid: a sparse A ------------------------------------------------------------------

def test_ellipsoid_refuses_a_sparse_matrix_by_name():
    with pytest.raises(ValueError, match=r"Ellipsoid: `A` must be a dense \(n, n\) matrix, "
                                         r"got a scipy.sparse csr_array; pass A.toarray\(\)"):
        fw.Ellipsoid(sp.csr_array(np.eye(2)))
    E = fw.Ellipsoid(sp.csr_array(np.eye(2)).toarray())
    np.testing.assert_allclose(E(np.array([0.0, 1.0])).to_dense(), [0.0, -1.0])

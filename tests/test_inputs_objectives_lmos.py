"""Argument checks of the objectives, the oracles' directions and the active set: bad
values refused by name (and with the offending value or index), numpy's scalars
accepted; the vertex cache of the simplices and the l1 ball; the k-norm ball's ``k``
against ``dim``; coordinates no block of a product domain holds."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe.errors import ShapeError
from frankwolfe.lmo import _vertices


def _f(x):
    return 0.0


def _g(x):
    return x


# ------------------------------------------------------------------ 1. objective shapes
@pytest.mark.parametrize("shape, error", [
    (-3, ShapeError), (0, ShapeError), ((0,), ShapeError), ((2.7,), ShapeError),
    (2.5, ShapeError), ((2, -1), ShapeError),
    (True, TypeError), ("5", TypeError), ((True, 2), TypeError), (object(), TypeError),
])
def test_function_objective_refuses_a_bad_shape_by_name(shape, error):
    with pytest.raises(error, match=r"FunctionObjective: `shape` must be a tuple of positive "
                                    r"integers .*got " + re.escape(repr(shape))):
        fw.FunctionObjective(_f, _g, shape=shape)


@pytest.mark.parametrize("shape, expected", [
    (3, (3,)), (np.int64(3), (3,)), (3.0, (3,)), ((2, 3), (2, 3)), ([2, 3], (2, 3)),
    ((np.int64(2), 3.0), (2, 3)), (np.array([2, 3]), (2, 3)),
])
def test_function_objective_takes_whole_numbers_as_shape(shape, expected):
    f = fw.FunctionObjective(_f, _g, shape=shape)
    assert f.shape == expected and all(type(s) is int for s in f.shape)


def test_the_other_objectives_check_shape_the_same_way():
    with pytest.raises(ShapeError, match=r"FiniteSumObjective: `shape` .*got 0"):
        fw.FiniteSumObjective(_f, _g, 3, shape=0)
    with pytest.raises(TypeError, match=r"FiniteSumObjective: `shape` .*got '2'"):
        fw.FiniteSumObjective(_f, _g, 3, shape="2")
    assert fw.FiniteSumObjective(_f, _g, 3, shape=np.int64(2)).shape == (2,)
    assert fw.FiniteSumObjective(_f, _g, np.int64(3)).n_samples == 3
    # int() truncated these to (2,), which matched the 2 x 2 matrix
    for bad in (2.5, (2.7,)):
        with pytest.raises(ShapeError, match=r"QuadraticObjective: `shape`"):
            fw.QuadraticObjective(np.eye(2), shape=bad)
        with pytest.raises(ShapeError, match=r"LeastSquares: `shape`"):
            fw.LeastSquares(np.eye(2), np.ones(2), shape=bad)
    with pytest.raises(TypeError, match=r"QuadraticObjective: `shape` .*got True"):
        fw.QuadraticObjective(np.eye(1), shape=True)
    assert fw.QuadraticObjective(np.eye(6), shape=(2, 3)).shape == (2, 3)
    with pytest.raises(ShapeError, match=r"`shape` \(2, 2\) has 4 entries, expected 6"):
        fw.QuadraticObjective(np.eye(6), shape=(2, 2))


# ------------------------------------------------------------------ 2. flags
@pytest.mark.parametrize("make", [
    lambda c: fw.FunctionObjective(_f, _g, convex=c),
    lambda c: fw.QuadraticObjective(np.eye(2), convex=c),
    lambda c: fw.FiniteSumObjective(_f, _g, 3, convex=c),
], ids=["function", "quadratic", "finite_sum"])
def test_convex_must_be_a_bool(make):
    for bad in ("no", "x", 0, 1, None):
        with pytest.raises(TypeError, match=r"`convex` must be True or False, got "):
            make(bad)
    f = make(np.False_)
    assert f.convex is False
    assert make(np.True_).convex is True


def test_keep_x_must_be_a_bool():
    with pytest.raises(TypeError, match=r"`keep_x` must be True or False, got 'x'"):
        fw.ActiveSet([np.ones(2)], keep_x="x")
    assert fw.ActiveSet([np.ones(2)], keep_x=np.False_).keep_x is False
    with pytest.raises(TypeError, match=r"`keep_x`"):
        fw.ActiveSet([np.ones(2)]).copy(keep_x="no")


# ------------------------------------------------------------------ 3. hooks
@pytest.mark.parametrize("name", ["exact_step", "value_and_gradient"])
def test_function_objective_hooks_must_be_callable(name):
    with pytest.raises(TypeError, match=rf"FunctionObjective: `{name}` must be callable or "
                                        r"None, got int"):
        fw.FunctionObjective(_f, _g, **{name: 3})


# ------------------------------------------------------------------ 4. complex directions
@pytest.mark.parametrize("direction", [
    np.arange(3.0) + 1j, [1.0, 2j, 3.0], np.array([1.0, 2.0, 3.0], dtype=np.complex64),
    sp.csr_array(np.array([1.0, 0.0, 2j])),
], ids=["ndarray", "list", "complex64", "sparse"])
def test_a_complex_direction_is_refused_by_name(direction):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning was all there was
        with pytest.raises(ValueError, match=r"L1Ball\(radius=1.0\): `direction` must be real"):
            fw.L1Ball()(direction)


def test_real_directions_of_other_types_still_answer():
    lmo = fw.L1Ball()
    expected = lmo(np.array([1.0, -3.0, 2.0])).to_dense()
    for d in ([1.0, -3.0, 2.0], [1, -3, 2], np.array([1.0, -3.0, 2.0], dtype=np.float32)):
        np.testing.assert_array_equal(lmo(d).to_dense(), expected)
    with pytest.raises(ValueError, match=r"`direction` must be an array of numbers"):
        lmo(["1", "2"])


# ------------------------------------------------------------------ 5. empty directions
@pytest.mark.parametrize("lmo", [
    fw.L1Ball(), fw.KNormBall(2), fw.ScaledL1Ball(-1.0, 1.0), fw.CachedLMO(fw.L1Ball()),
    fw.L2Ball(), fw.Box(0, 1), fw.Birkhoff(), fw.ProbabilitySimplex(), fw.UnitSimplex(),
    fw.LpBall(3.0), fw.KSparsePolytope(2),
], ids=repr)
@pytest.mark.parametrize("shape", [(0,), (0, 0), (3, 0)])
def test_an_empty_direction_is_one_shape_error(lmo, shape):
    with pytest.raises(ShapeError, match=r"`direction` must have at least one entry, got "
                                         r"shape " + re.escape(str(shape))):
        lmo(np.zeros(shape))


def test_an_empty_direction_of_another_type_is_the_same_error():
    lmo = fw.L1Ball()
    for d in ([], np.zeros(0, dtype=np.float32), sp.csr_array((1, 0))):
        with pytest.raises(ShapeError, match=r"`direction` must have at least one entry"):
            lmo(d)


# ------------------------------------------------------------------ 6. LpBall's p
@pytest.mark.parametrize("p", ["2", True, np.True_, None, [2.0]])
def test_lp_ball_refuses_a_p_that_is_no_number(p):
    with pytest.raises(ValueError, match=r"LpBall: `p` must be a number with 1 < p < inf"):
        fw.LpBall(p)


@pytest.mark.parametrize("p", [3, 3.0, np.float64(3.0), np.int64(3), np.float32(3.0),
                               np.array(3.0)])
def test_lp_ball_takes_numpy_numbers_as_p(p):
    assert fw.LpBall(p).p == 3.0


# ------------------------------------------------------------------ 7. named positions
def test_sparse_partial_gradient_names_the_bad_index():
    Q = sp.random(3, 3, density=0.8, random_state=0)
    Q = (Q + Q.T).tocsr()
    f = fw.QuadraticObjective(Q, c=np.array([1.0, 2.0, 3.0]))
    x = np.array([1.0, -2.0, 0.5])
    dense = fw.QuadraticObjective(Q.toarray(), c=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(f.partial_gradient(x, [2, -1, 0]),
                               dense.gradient(x)[[2, -1, 0]], rtol=1e-12)
    for bad, idx in ((5, [0, 5, 1]), (-4, [1, -4]), (3, [3])):
        with pytest.raises(IndexError, match=rf"partial_gradient: index {bad} is out of range "
                                             r"for 3 coordinates \(valid: -3 to 2\)"):
            f.partial_gradient(x, idx)


def test_linear_model_loss_names_the_non_finite_entry():
    A = np.ones((3, 2))
    A[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"LinearModelLoss: `A` .*nan at index \(1, 0\)"):
        fw.LinearModelLoss(A, np.ones(3))
    with pytest.raises(ValueError, match=r"LinearModelLoss: `A` .*nan at index \(1, 0\)"):
        fw.LinearModelLoss(sp.csr_matrix(A), np.ones(3))
    with pytest.raises(ValueError, match=r"LinearModelLoss: `y` .*inf at index 2"):
        fw.LinearModelLoss(np.ones((3, 2)), np.array([1.0, -1.0, np.inf]), loss="squared")
    with pytest.raises(ValueError, match=r"LinearModelLoss: `A` must have at least one row"):
        fw.LinearModelLoss(np.ones((0, 2)), np.ones(0))


def test_the_domains_name_the_non_finite_entry():
    A = np.eye(3)
    A[2, 1] = A[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"Ellipsoid: `A` contains NaN or inf \(inf at "
                                         r"index \(1, 2\)\)"):
        fw.Ellipsoid(A)
    with pytest.raises(ValueError, match=r"Ellipsoid: `center` contains NaN or inf \(nan "
                                         r"at index 1\)"):
        fw.Ellipsoid(np.eye(2), center=[0.0, np.nan])
    V = np.array([[0.0, 1.0], [1.0, 0.0], [np.nan, 2.0]])
    for vertices in (V, sp.csr_array(V)):
        with pytest.raises(ValueError, match=r"ConvexHull: `vertices` contains NaN or inf "
                                             r"\(nan at index \(2, 0\)\)"):
            fw.ConvexHull(vertices)
    A_ub = np.array([[1.0, 1.0], [1.0, -np.inf]])
    for a in (A_ub, sp.csr_array(A_ub)):
        with pytest.raises(ValueError, match=r"Polytope: `A_ub` contains NaN or inf \(-inf "
                                             r"at index \(1, 1\)\)"):
            fw.Polytope(a, [1.0, 1.0], bounds=(0, 1))
    with pytest.raises(ValueError, match=r"Polytope: `b_ub` contains NaN or inf \(nan at "
                                         r"index 0\)"):
        fw.Polytope(np.eye(2), [np.nan, 1.0], bounds=(0, 1))


def test_flow_polytope_names_the_non_finite_supply():
    edges = [(0, 1), (1, 2), (0, 2)]
    with pytest.raises(ValueError, match=r"FlowPolytope: `supplies` must be finite, got nan "
                                         r"at index 1"):
        fw.FlowPolytope(edges, 3, supplies=[1.0, np.nan, -1.0])
    with pytest.raises(ValueError, match=r"FlowPolytope: `supplies` must be finite, got inf "
                                         r"at node 2"):
        fw.FlowPolytope(edges, 3, supplies={0: 1.0, 2: np.inf})


def test_product_domain_names_the_bad_coordinate():
    with pytest.raises(ValueError, match=r"block 1 has a negative index: -2"):
        fw.ProductDomain([fw.L1Ball(dim=2)] * 2, [[0, 1], [3, -2]])
    with pytest.raises(ValueError, match=r"block 0 repeats a coordinate: 4 appears more than "
                                         r"once"):
        fw.ProductDomain([fw.L1Ball(dim=4)], [[4, 1, 2, 4]])
    with pytest.raises(ValueError, match=r"block 0 repeats a coordinate: 1 appears"):
        fw.ProductDomain([fw.L1Ball(dim=5)], [[7, 1, 0, 7, 1][::-1]])


def test_product_domain_refuses_a_block_without_coordinates():
    # its oracle would be asked with an empty direction, which every oracle refuses
    with pytest.raises(ShapeError, match=r"block 0 has no coordinates \(an empty index set\)"):
        fw.ProductDomain([fw.L2Ball(), fw.L1Ball(dim=2)], indices=[[], [0, 1]])

    class Empty(fw.L2Ball):
        def __init__(self):
            super().__init__()
            self.shape = (0,)

    with pytest.raises(ShapeError, match=r"block 1 \(.*\) has shape \(0,\), no coordinates"):
        fw.ProductDomain([fw.L1Ball(dim=2), Empty()])


def test_ksparse_candidates_name_the_bad_support():
    lmo = fw.KSparsePolytope(2)
    g = np.array([1.0, -2.0, 0.5])
    with pytest.raises(ShapeError, match=r"supports must lie in \[0, 3\), got 7"):
        lmo.extreme_point_among(g, (np.array([[0, 1], [1, 7]]), np.ones((2, 2))))
    with pytest.raises(ShapeError, match=r"supports must lie in \[0, 3\), got -1"):
        lmo.extreme_point_among(g, (np.array([[-1, 1]]), np.ones((1, 2))))


def test_a_sparse_atom_names_the_bad_index_in_debug_mode():
    with fw.debug():
        with pytest.raises(ShapeError, match=r"Atom: sparse index 9 out of range for shape "
                                             r"\(2, 3\) \(valid: 0 to 5\)"):
            fw.Atom.sparse([1, 9, 12], [1.0, 1.0, 1.0], (2, 3))


# ------------------------------------------------------------------ 8. the vertex cache
@pytest.mark.parametrize("lmo", [fw.ProbabilitySimplex(2.0), fw.UnitSimplex(2.0),
                                 fw.L1Ball(2.0)], ids=repr)
def test_the_oracle_owns_one_named_vertex_cache(lmo):
    g = np.array([0.3, -1.0, 0.2, 2.0])
    v = lmo(g)
    cache = lmo._vertices
    assert isinstance(cache, _vertices.VertexCache)
    assert cache.radius == 2.0 and cache.shape == (4,) and v in cache.atoms.values()
    assert "_vertex_cache" not in lmo.__dict__
    assert lmo(g.copy()) is v and lmo.extreme_point(g) is v
    # a changed radius or shape: a new cache, new atoms, the right vertex
    lmo.radius = 3.0
    w = lmo(g)
    assert w is not v and lmo._vertices is not cache and lmo._vertices.radius == 3.0
    np.testing.assert_array_equal(w.to_dense(), 1.5 * v.to_dense())
    m = lmo(g.reshape(2, 2))
    assert m.shape == (2, 2) and lmo._vertices.shape == (2, 2)
    np.testing.assert_array_equal(m.to_dense().reshape(-1), w.to_dense())
    # decompose answers with the oracle's own atoms
    lmo(g)  # back to the vector shape: the vertex of that shape, built afresh
    S = lmo.decompose(lmo(g).to_dense())
    assert any(a is lmo(g) for a in S.atoms)


# ------------------------------------------------------------------ 9. k against dim
def test_knorm_ball_refuses_k_above_dim_as_ksparse_does():
    for cls in (fw.KNormBall, fw.KSparsePolytope):
        with pytest.raises(ValueError, match=r"`k` must be <= `dim`=3, got k=5"):
            cls(5, dim=3)
        assert cls(3, dim=3).k == 3


def test_knorm_ball_with_k_above_the_direction_size_is_the_l1_ball():
    rng = np.random.default_rng(1)
    for _ in range(20):
        g = rng.standard_normal(3)
        # n <= k: the corners (l1 norm n r / k) lie in the l1 ball, whose vertex wins
        for k in (3, 5):
            np.testing.assert_array_equal(fw.KNormBall(k, 2.0)(g).to_dense(),
                                          fw.L1Ball(2.0)(g).to_dense())


def test_a_coordinate_no_block_holds_stays_zero():
    dom = fw.ProductDomain([fw.L1Ball(dim=2)], indices=[[0, 5]])
    assert dom.dim == 6
    s = dom(np.array([0.5, -9.0, 9.0, -9.0, 9.0, -1.0])).to_dense()
    np.testing.assert_array_equal(s, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    assert dom.violation(s) == 0.0
    assert dom.violation(np.array([0.0, 0.25, 0.0, 0.0, 0.0, 0.0])) == 0.25

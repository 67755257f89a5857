"""Sparse inputs are copied, canonicalised and never written: a valid non-canonical
matrix (repeated entries, unsorted indices) gives the numbers of its dense form, the
caller's arrays come back unchanged after construction and after a run, and read-only
arrays (memory-mapped data) work.

The objectives and oracles used to share the caller's index and data arrays, then
canonicalised them in place: a duplicate-entry matrix's sum changed under the caller, a
read-only one raised numpy's ``WRITEBACKIFCOPY`` error, the saddle tracker dropped one of
two repeated columns (a wrong saddle point) and HiGHS refused the polytope's matrix.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe.objectives.quadratic_kernels import csr_data


def _halves_csr(M: np.ndarray) -> sp.csr_array:
    """``M`` as a valid CSR array whose every entry is stored twice, as two halves."""
    r, c = np.nonzero(M)
    counts = np.bincount(r, minlength=M.shape[0]) * 2
    out = sp.csr_array((np.repeat(M[r, c] / 2, 2), np.repeat(c, 2),
                        np.r_[0, np.cumsum(counts)]), shape=M.shape)
    assert not out.has_canonical_format and np.array_equal(out.toarray(), M)
    return out


def _arrays(S):
    return [a.copy() for a in (S.data, S.indices, S.indptr)]


def _unchanged(S, saved) -> bool:
    return all(np.array_equal(a, b) for a, b in zip((S.data, S.indices, S.indptr), saved))


def _read_only(S):
    for a in (S.data, S.indices, S.indptr):
        a.setflags(write=False)
    return S


def _unsorted_csc():
    """``[[1, 2], [3, 4]]`` in CSC with each column's rows listed in reverse."""
    return sp.csc_matrix((np.array([3.0, 1, 4, 2]), np.array([1, 0, 1, 0]),
                          np.array([0, 2, 4])), shape=(2, 2))


def _unsorted_csr():
    """``[[2, 1], [1, 3]]`` (symmetric) in CSR with each row's columns listed in reverse."""
    return sp.csr_matrix((np.array([1.0, 2, 3, 1]), np.array([1, 0, 1, 0]),
                          np.array([0, 2, 4])), shape=(2, 2))


def _duplicate_csc():
    """``[[1, 3], [2, 0]]`` in CSC with the (0, 0) entry stored as two halves."""
    A = sp.csc_matrix((np.array([0.5, 0.5, 2.0, 3.0]), np.array([0, 0, 1, 0]),
                       np.array([0, 3, 4])), shape=(2, 2))
    assert np.array_equal(A.toarray(), [[1.0, 3.0], [2.0, 0.0]])
    return A


# -- BilinearObjective -------------------------------------------------------------------

_GAME = np.array([[1.0, -2.0, 0.5], [-1.0, 2.0, 1.0]])
_MU = 0.5


def _saddle(M, max_iter):
    L = fw.BilinearObjective(M, mu_x=_MU, mu_y=_MU)
    return fw.saddle_point_frank_wolfe(L, fw.ProbabilitySimplex(dim=2),
                                       fw.ProbabilitySimplex(dim=3), max_iter=max_iter, tol=0)


def _cvxpy_saddle_x(M):
    """``x*`` of ``min_x max_y x^T M y + mu/2 |x|^2 - mu/2 |y|^2`` over simplices, from the
    dual of the inner maximisation (``max_y {g^T y - mu/2 |y|^2 : y in simplex} =
    min_{lam, nu >= 0} lam + |g - lam + nu|^2 / (2 mu)``), one convex QP in cvxpy."""
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(M.shape[0], nonneg=True)
    lam, nu = cp.Variable(), cp.Variable(M.shape[1], nonneg=True)
    g = M.T @ x
    cp.Problem(cp.Minimize(_MU / 2 * cp.sum_squares(x) + lam
                           + cp.sum_squares(g - lam + nu) / (2 * _MU)),
               [cp.sum(x) == 1]).solve()
    return np.asarray(x.value)


def test_bilinear_duplicate_entries_give_the_dense_saddle_point():
    Md = _halves_csr(_GAME)
    saved = _arrays(Md)
    dense, dup = _saddle(_GAME, 2000), _saddle(Md, 2000)
    np.testing.assert_allclose(dup.x, dense.x, rtol=0, atol=1e-12)
    assert dup.gap == pytest.approx(dense.gap, rel=1e-9)
    # the gap bounds mu/2 (|x - x*|^2 + |y - y*|^2): x is within sqrt(2 gap / mu) of x*
    x_star = _cvxpy_saddle_x(_GAME)
    assert np.linalg.norm(dup.x - x_star) <= math.sqrt(2 * dup.gap / _MU) + 1e-6
    assert _unchanged(Md, saved)


def test_bilinear_keeps_a_canonical_copy_of_a_read_only_sparse_matrix():
    Md = _read_only(_halves_csr(_GAME))
    saved = _arrays(Md)
    L = fw.BilinearObjective(Md)
    assert L.M.has_canonical_format
    assert not np.shares_memory(L.M.data, Md.data)
    np.testing.assert_array_equal(L.M.toarray(), _GAME)
    assert _unchanged(Md, saved)


# -- LeastSquares, ConvexHull, the lasso ----------------------------------------------------

def test_least_squares_leaves_a_duplicate_entry_matrix_as_it_was():
    A = _duplicate_csc()
    dense = A.toarray()
    saved = _arrays(A)
    f = fw.LeastSquares(A, np.ones(2))
    assert _unchanged(A, saved)  # (scipy's own A.sum() would canonicalise A in place)
    assert A.toarray().sum() == dense.sum() == 6.0
    x = np.array([0.3, -0.7])
    assert f.value(x) == pytest.approx(fw.LeastSquares(dense, np.ones(2)).value(x), rel=1e-15)
    fw.frank_wolfe(f, fw.L1Ball(1.0), max_iter=20)
    assert _unchanged(A, saved)


def test_convex_hull_leaves_a_duplicate_entry_matrix_as_it_was():
    V = sp.csr_matrix((np.array([0.5, 0.5, 3.0, 2.0]), np.array([0, 0, 1, 0]),
                       np.array([0, 3, 4])), shape=(2, 2))
    dense = V.toarray()
    saved = _arrays(V)
    hull = fw.ConvexHull(V)
    assert _unchanged(V, saved)
    g = np.array([-1.0, 0.2])
    np.testing.assert_array_equal(hull(g).to_dense(), fw.ConvexHull(dense)(g).to_dense())


def test_solve_lasso_and_constrained_lasso_leave_the_design_as_it_was():
    lasso = pytest.importorskip("frankwolfe.applications.lasso")
    A = _duplicate_csc()
    saved = _arrays(A)
    y = np.array([1.0, -1.0])
    res = lasso.solve_lasso(A, y, 1.0, tol=1e-12, max_iter=2000)
    ref = lasso.solve_lasso(A.toarray(), y, 1.0, tol=1e-12, max_iter=2000)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-8)
    assert _unchanged(A, saved)
    lasso.ConstrainedLasso(radius=1.0, fit_intercept=False).fit(A, y)
    lasso.ConstrainedLasso(radius=1.0).fit(A, y)
    assert _unchanged(A, saved)


def test_least_squares_takes_read_only_unsorted_input():
    A = _read_only(_unsorted_csc())
    saved = _arrays(A)
    b = np.array([1.0, 2.0])
    f = fw.LeastSquares(A, b)
    ref = fw.LeastSquares(A.toarray(), b)
    x = np.array([0.25, -0.5])
    assert f.value(x) == pytest.approx(ref.value(x), rel=1e-15)
    np.testing.assert_allclose(f.gradient(x), ref.gradient(x), rtol=1e-15)
    run = fw.frank_wolfe(f, fw.L1Ball(1.0), max_iter=50)
    np.testing.assert_allclose(run.x, fw.frank_wolfe(ref, fw.L1Ball(1.0), max_iter=50).x,
                               atol=1e-12)
    assert _unchanged(A, saved)


# -- QuadraticObjective -------------------------------------------------------------------

def _bcfw(Q):
    f = fw.QuadraticObjective(Q, -np.ones(2))
    blocks = fw.ProductDomain([fw.ProbabilitySimplex(dim=1), fw.ProbabilitySimplex(dim=1)])
    with fw.debug(False):  # unchecked, the block pass runs compiled (csr_data)
        return fw.block_coordinate_frank_wolfe(f, blocks, max_iter=3)


def test_quadratic_block_coordinate_takes_read_only_unsorted_input():
    Q = _read_only(_unsorted_csr())
    saved = _arrays(Q)
    res = _bcfw(Q)
    np.testing.assert_allclose(res.x, _bcfw(Q.toarray()).x, atol=1e-15)
    assert _unchanged(Q, saved)


def test_quadratic_block_coordinate_leaves_writable_unsorted_input_unsorted():
    Q = _unsorted_csr()
    saved = _arrays(Q)
    _bcfw(Q)
    assert _unchanged(Q, saved)  # the indices were sorted in place: [1 0 1 0] -> [0 1 0 1]


def test_quadratic_keeps_a_canonical_copy():
    Q = _halves_csr(np.array([[2.0, 1.0], [1.0, 3.0]]))
    saved = _arrays(Q)
    f = fw.QuadraticObjective(Q)
    assert f.Q.has_canonical_format and not np.shares_memory(f.Q.data, Q.data)
    x = np.array([0.5, -1.0])
    assert f.value(x) == pytest.approx(0.5 * x @ Q.toarray() @ x, rel=1e-15)
    assert _unchanged(Q, saved)


def test_csr_data_sorts_a_copy():
    Q = _read_only(_unsorted_csr())
    saved = _arrays(Q)
    indptr, indices, data = csr_data(Q)
    np.testing.assert_array_equal(indices, [0, 1, 0, 1])
    np.testing.assert_array_equal(data, [2.0, 1.0, 1.0, 3.0])
    assert _unchanged(Q, saved)


# -- Polytope --------------------------------------------------------------------------

def test_polytope_with_duplicate_entries_answers_as_the_dense_one():
    A = sp.csr_matrix((np.array([0.5, 0.5, 1.0]), np.array([0, 0, 1]), np.array([0, 3])),
                      shape=(1, 2))
    saved = _arrays(A)
    d = np.array([-1.0, -2.0])
    P = fw.Polytope(A_ub=A, b_ub=[1.0], bounds=(0, None))
    ref = fw.Polytope(A_ub=A.toarray(), b_ub=[1.0], bounds=(0, None))
    np.testing.assert_array_equal(P(d).to_dense(), [0.0, 1.0])
    np.testing.assert_array_equal(P(d).to_dense(), ref(d).to_dense())
    Q = fw.Polytope(A_eq=A, b_eq=[1.0], bounds=(0, None))
    np.testing.assert_array_equal(Q(d).to_dense(), [0.0, 1.0])
    assert _unchanged(A, saved)

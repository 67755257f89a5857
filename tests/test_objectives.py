"""Tests of QuadraticObjective, LeastSquares and their incremental trackers.

References are independent of the code under test: central finite
differences, scipy's scalar minimizer, dense numpy recomputation, cvxpy
(Clarabel), numpy/LAPACK eigenvalues and the sort-based simplex projection
of Duchi et al. (2008).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from frankwolfe import (
    Atom,
    Direction,
    FunctionObjective,
    L1Ball,
    LeastSquares,
    NonConvexError,
    ProbabilitySimplex,
    QuadraticObjective,
    ShapeError,
    frank_wolfe,
)
from frankwolfe.objectives.atom_cache import AtomCache
from frankwolfe.step_size import Adaptive, Agnostic, Armijo, ExactStep, ShortStep


# -- fixtures ----------------------------------------------------------------
def _ls(rng, m=30, n=20, sparse=False, **kw):
    A = rng.standard_normal((m, n))
    if sparse:
        A[rng.random((m, n)) < 0.7] = 0.0
    b = rng.standard_normal(m)
    return LeastSquares(sp.csr_matrix(A) if sparse else A, b, **kw), A, b


def _quad(rng, n=20, sparse=False, psd=True, **kw):
    B = rng.standard_normal((n, n))
    if sparse:
        B[rng.random((n, n)) < 0.8] = 0.0
    Q = B.T @ B if psd else (B + B.T) / 2
    c = rng.standard_normal(n)
    return QuadraticObjective(sp.csc_matrix(Q) if sparse else Q, c, 1.5, **kw), Q, c


def _central_diff(f, x, h=1e-5):
    g = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        g[i] = (f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * h)
    return g.reshape(x.shape)


def _random_atom(rng, n, kind, shape=None):
    shape = (n,) if shape is None else shape
    if kind == "dense":
        return Atom(rng.standard_normal(shape))
    k = 1 if kind == "vertex" else 3
    idx = rng.choice(n, size=k, replace=False)
    vals = rng.standard_normal(k)
    # key from the content: equal atoms share cache entries, different ones never do
    return Atom.sparse(idx, vals, shape, key=("t", tuple(idx.tolist()), tuple(vals.tolist())))


def _random_direction(rng, atoms):
    form = rng.integers(5)
    v, a = atoms[rng.integers(len(atoms))], atoms[rng.integers(len(atoms))]
    if form == 0:
        return Direction.frank_wolfe(v)
    if form == 1:
        return Direction.away(a)
    if form == 2:
        return Direction.pairwise(v, a)
    if form == 3:  # longer combinations take the generic (non-fused) path
        picks = rng.choice(len(atoms), size=3, replace=False)
        return Direction(float(rng.uniform(-1, 1)),
                         tuple((float(rng.uniform(-1, 1)), atoms[i]) for i in picks))
    return Direction(-0.5, ())  # a pure rescaling of x


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def _duchi_projection(y):
    """Euclidean projection onto the probability simplex (Duchi et al., 2008)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.maximum(y - theta, 0.0)


# -- values and gradients ----------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_least_squares_gradient_matches_finite_differences(sparse):
    rng = np.random.default_rng(1)
    f, A, b = _ls(rng, sparse=sparse)
    x = rng.standard_normal(f.n)
    assert f.value(x) == pytest.approx(0.5 * np.sum((A @ x - b) ** 2), rel=1e-13)
    fd = _central_diff(f.value, x)
    assert _rel(f.gradient(x), fd) < 1e-7
    val, grad = f.value_and_gradient(x)
    assert val == pytest.approx(f.value(x), rel=1e-14)
    np.testing.assert_allclose(grad, f.gradient(x), rtol=1e-13)


@pytest.mark.parametrize("sparse", [False, True])
def test_quadratic_gradient_matches_finite_differences(sparse):
    rng = np.random.default_rng(2)
    f, Q, c = _quad(rng, sparse=sparse)
    x = rng.standard_normal(f.n)
    assert f.value(x) == pytest.approx(0.5 * x @ Q @ x + c @ x + 1.5, rel=1e-13)
    assert _rel(f.gradient(x), _central_diff(f.value, x)) < 1e-7
    idx = np.array([3, 0, 7])
    np.testing.assert_allclose(f.partial_gradient(x, idx), (Q @ x + c)[idx], rtol=1e-12)


def test_dense_and_sparse_least_squares_agree():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((25, 15))
    A[rng.random(A.shape) < 0.6] = 0.0
    b = rng.standard_normal(25)
    fd, fs = LeastSquares(A, b), LeastSquares(sp.csr_matrix(A), b)
    for _ in range(5):
        x = rng.standard_normal(15)
        assert fs.value(x) == pytest.approx(fd.value(x), rel=1e-13)
        np.testing.assert_allclose(fs.gradient(x), fd.gradient(x), rtol=1e-12, atol=1e-12)
    assert fs.smoothness == pytest.approx(fd.smoothness, rel=1e-10)


def test_matrix_shaped_points_flatten_in_c_order():
    rng = np.random.default_rng(4)
    B = rng.standard_normal((6, 6))
    Q, c = B @ B.T, rng.standard_normal(6)
    f = QuadraticObjective(Q, c.reshape(2, 3), shape=(2, 3))
    X = rng.standard_normal((2, 3))
    v = X.ravel()
    assert f.value(X) == pytest.approx(0.5 * v @ Q @ v + c @ v, rel=1e-13)
    assert f.gradient(X).shape == (2, 3)
    np.testing.assert_allclose(f.gradient(X).ravel(), Q @ v + c, rtol=1e-12)
    A = rng.standard_normal((4, 6))
    b = rng.standard_normal(4)
    g = LeastSquares(A, b, shape=(2, 3))
    np.testing.assert_allclose(g.gradient(X).ravel(), A.T @ (A @ v - b), rtol=1e-12)


# -- trackers ----------------------------------------------------------------
def _check_tracker(f, rng, shape, n_moves=300, kinds=("vertex", "multi", "dense")):
    n = int(np.prod(shape))
    x = rng.standard_normal(shape)
    tr = f.tracker(x)
    ref_x = x.copy()
    atoms = [_random_atom(rng, n, kinds[i % len(kinds)], shape) for i in range(12)]
    for _ in range(n_moves):
        d = _random_direction(rng, atoms)
        dd = d.dense(ref_x)
        # queries before the move, each against a dense computation
        g0 = f.gradient(ref_x)
        assert tr.direction_sq_norm(d) == pytest.approx(np.vdot(dd, dd), rel=1e-10, abs=1e-12)
        gamma = float(rng.uniform(-0.3, 0.6))
        assert tr.trial_value(d, gamma) == pytest.approx(f.value(ref_x + gamma * dd), rel=1e-10,
                                                         abs=1e-10)
        assert _rel(tr.trial_gradient(d, gamma), f.gradient(ref_x + gamma * dd)) < 1e-10
        if np.vdot(g0, dd) < 0:
            assert tr.exact_step(d) == pytest.approx(f.exact_step(ref_x, dd, g0), rel=1e-9)
        tr.move(d, gamma)
        ref_x = ref_x + gamma * dd
    assert _rel(tr.x, ref_x) < 1e-10
    fv, gv = f.value_and_gradient(tr.x)
    val, grad = tr.value_and_gradient()
    assert grad.shape == tuple(shape)
    assert val == pytest.approx(fv, rel=1e-10)
    assert _rel(grad, gv) < 1e-10
    return tr


@pytest.mark.parametrize("sparse", [False, True])
def test_least_squares_tracker_consistent_after_random_moves(sparse):
    rng = np.random.default_rng(5)
    f, _, _ = _ls(rng, m=40, n=25, sparse=sparse, refresh_every=10**9)
    tr = _check_tracker(f, rng, (25,))
    assert tr.n_gradient_calls == 1 and tr.n_function_calls == 1
    assert tr.n_incremental_updates == 300
    assert tr.n_atom_products == 12  # each atom's products computed once


@pytest.mark.parametrize("density", [0.02, 0.3])
def test_sparse_least_squares_tracker_with_sparse_atoms(density):
    # sparse A and sparse atoms only: A^T A a through the rows of A (density 0.02: a
    # column meets few rows) or one product with A^T (0.3), and directions of three
    # atoms through one pass over their columns; every query against dense numpy
    rng = np.random.default_rng(15)
    m, n = 200, 60
    A = sp.random(m, n, density=density, random_state=16, format="csr").toarray()
    b = rng.standard_normal(m)
    f = LeastSquares(sp.csr_matrix(A), b, refresh_every=10**9)
    tr = _check_tracker(f, rng, (n,), kinds=("vertex", "multi"))
    assert tr.n_gradient_calls == 1 and tr.n_incremental_updates == 300
    for atom in [_random_atom(rng, n, "vertex"), _random_atom(rng, n, "multi")]:
        Aa, Ha = tr.atom_products(atom)
        a = atom.to_dense()
        np.testing.assert_allclose(Aa, A @ a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(Ha, A.T @ (A @ a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_quadratic_tracker_consistent_after_random_moves(sparse):
    rng = np.random.default_rng(6)
    f, _, _ = _quad(rng, n=25, sparse=sparse, refresh_every=10**9)
    tr = _check_tracker(f, rng, (25,))
    assert tr.n_gradient_calls == 1


def test_tracker_with_matrix_points():
    rng = np.random.default_rng(7)
    B = rng.standard_normal((12, 12))
    f = QuadraticObjective(B @ B.T, rng.standard_normal(12), shape=(3, 4), refresh_every=10**9)
    _check_tracker(f, rng, (3, 4), n_moves=60)
    A = rng.standard_normal((9, 12))
    g = LeastSquares(A, rng.standard_normal(9), shape=(3, 4), refresh_every=10**9)
    _check_tracker(g, rng, (3, 4), n_moves=60)


def test_refresh_counts_and_set_point():
    rng = np.random.default_rng(8)
    f, _, _ = _ls(rng, refresh_every=7)
    tr = f.tracker(np.zeros(f.n))
    atom = Atom.sparse([2], [1.0], (f.n,), key=("e", 2))
    for _ in range(20):
        tr.move(Direction.frank_wolfe(atom), 0.1)
    assert tr.n_refreshes == 2 and tr.n_gradient_calls == 3 and tr.n_incremental_updates == 20
    tr.move(Direction.frank_wolfe(atom), 0.0)  # a zero step changes nothing and is not counted
    assert tr.n_incremental_updates == 20
    expected_x = np.zeros(f.n)
    expected_x[2] = 1.0 - 0.9 ** 20
    np.testing.assert_allclose(tr.x, expected_x, rtol=1e-13, atol=1e-15)
    y = rng.standard_normal(f.n)
    tr.set_point(y)
    assert tr.value() == pytest.approx(f.value(y), rel=1e-13)
    np.testing.assert_allclose(tr.gradient(), f.gradient(y), rtol=1e-12)
    assert tr.n_gradient_calls == 4 and len(tr.cache) == 1  # the atom cache survives
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        tr.set_point(np.zeros(3))


def test_returned_gradient_is_not_mutated_by_moves():
    rng = np.random.default_rng(9)
    f, _, _ = _quad(rng, n=10)
    tr = f.tracker(np.zeros(10))
    g0 = tr.gradient()
    kept = g0.copy()
    tr.move(Direction.frank_wolfe(Atom.sparse([1], [1.0], (10,), key=1)), 0.5)
    np.testing.assert_array_equal(g0, kept)


# -- exact line search -------------------------------------------------------
@pytest.mark.parametrize("which", ["ls", "ls_sparse", "quad", "quad_sparse"])
def test_exact_step_is_the_line_minimizer(which):
    rng = np.random.default_rng(10)
    if which.startswith("ls"):
        f, _, _ = _ls(rng, sparse=which.endswith("sparse"))
    else:
        f, _, _ = _quad(rng, sparse=which.endswith("sparse"))
    x = rng.standard_normal(f.n)
    tr = f.tracker(x)
    v = Atom.sparse([4], [3.0], (f.n,), key="v")
    d = Direction.frank_wolfe(v)
    dd = d.dense(x)
    g = f.gradient(x)
    ref = minimize_scalar(lambda t: f.value(x + t * dd), bracket=(-1.0, 1.0),
                          options={"xtol": 1e-12}).x
    assert f.exact_step(x, dd, g) == pytest.approx(ref, rel=1e-6, abs=1e-8)
    if np.dot(g, dd) < 0:
        assert tr.exact_step(d) == pytest.approx(ref, rel=1e-6, abs=1e-8)


def test_negative_curvature_raises_and_nonconvex_goes_to_the_end():
    Q = np.diag([1.0, -1.0, 2.0])
    f = QuadraticObjective(Q, c=[0.0, -1.0, 0.0])
    x = np.zeros(3)
    d = np.array([0.0, 1.0, 0.0])
    with pytest.raises(NonConvexError, match="negative curvature"):
        f.exact_step(x, d, f.gradient(x))
    tr = f.tracker(x)
    with pytest.raises(NonConvexError, match="convex=False"):
        tr.exact_step(Direction.frank_wolfe(Atom.sparse([1], [1.0], (3,), key="e1")))
    g = QuadraticObjective(Q, c=[0.0, -1.0, 0.0], convex=False)
    assert g.exact_step(x, d, g.gradient(x)) == np.inf
    # from e0 the vertex is e1: d = e1 - e0 has d^T Q d = 1 - 3 < 0, and the loop stops
    h = QuadraticObjective(np.diag([1.0, -3.0, 2.0]), c=[0.0, -1.0, 0.0])
    with pytest.raises(NonConvexError, match="negative curvature"):
        frank_wolfe(h, ProbabilitySimplex(), x0=np.array([1.0, 0.0, 0.0]), max_iter=5)


def test_zero_curvature_gives_inf_and_the_loop_clips_it():
    f = QuadraticObjective(np.zeros((3, 3)), c=[3.0, 1.0, 2.0])  # linear
    x = np.array([1.0, 0.0, 0.0])
    assert f.exact_step(x, np.array([-1.0, 1.0, 0.0]), f.gradient(x)) == np.inf
    assert f.exact_step(x, np.array([-1.0, 1.0, 0.0]), -f.gradient(x)) == -np.inf
    assert f.exact_step(x, np.zeros(3), f.gradient(x)) == 0.0
    res = frank_wolfe(f, ProbabilitySimplex(), x0=x, tol=1e-12)
    np.testing.assert_array_equal(res.x, [0.0, 1.0, 0.0])
    assert res.fun == 1.0 and res.gap == 0.0 and res.nit == 1
    ls = LeastSquares(np.array([[1.0, 1.0]]), [0.0])  # A d = 0 along d = (1, -1)
    assert ls.exact_step(np.zeros(2), np.array([1.0, -1.0]), np.array([-1.0, 0.0])) == np.inf


# -- errors ------------------------------------------------------------------
def test_shape_errors_name_the_shapes():
    with pytest.raises(ShapeError, match=r"\(3, 4\)"):
        QuadraticObjective(np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"\(3, 4\)"):
        QuadraticObjective(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ShapeError, match=r"`c` has shape \(4,\), expected \(3,\)"):
        QuadraticObjective(np.eye(3), c=np.ones(4))
    with pytest.raises(ShapeError, match=r"`b` has shape \(5,\), expected \(4,\)"):
        LeastSquares(np.ones((4, 2)), np.ones(5))
    with pytest.raises(ShapeError, match=r"\(7,\)"):
        LeastSquares(np.ones(7), np.ones(7))
    with pytest.raises(ShapeError, match=r"x has shape \(5,\) \(5 entries\), expected 3"):
        QuadraticObjective(np.eye(3)).value(np.ones(5))
    with pytest.raises(ShapeError, match=r"x has shape \(2, 2\)"):
        LeastSquares(np.ones((4, 3)), np.ones(4)).tracker(np.ones((2, 2)))
    with pytest.raises(ShapeError, match=r"`shape` \(2, 2\)"):
        QuadraticObjective(np.eye(3), shape=(2, 2))


def test_asymmetric_q_is_rejected():
    with pytest.raises(ValueError, match="not symmetric"):
        QuadraticObjective(np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="not symmetric"):
        QuadraticObjective(sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 1.0]])))
    with pytest.raises(ValueError, match="refresh_every"):
        QuadraticObjective(np.eye(2), refresh_every=0)


# -- the atom cache ----------------------------------------------------------
def test_atom_cache_is_lru_within_its_budget():
    entry = 10 * 8  # ten doubles
    cache = AtomCache(max_bytes=3 * entry)
    for k in range(3):
        cache.put(k, (np.zeros(10),))
    assert cache.get(0) is not None  # 0 becomes the most recent; 1 is now the oldest
    cache.put(3, (np.zeros(10),))
    assert 1 not in cache and {0, 2, 3} <= {k for k in range(4) if k in cache}
    assert cache.nbytes == 3 * entry and cache.evictions == 1
    cache.put(4, (np.zeros(100),))  # larger than the whole budget: not stored
    assert 4 not in cache and len(cache) == 3
    shared = np.zeros(10)
    cache.put(5, (shared, shared))  # one array used twice is counted once
    assert cache.nbytes <= cache.max_bytes and 5 in cache


@pytest.mark.parametrize("budget_atoms", [0, 3])
def test_tracker_cache_respects_budget_and_stays_correct(budget_atoms):
    rng = np.random.default_rng(11)
    m, n = 20, 15
    f, _, _ = _ls(rng, m=m, n=n, cache_bytes=budget_atoms * (m + n) * 8, refresh_every=10**9)
    tr = f.tracker(np.zeros(n))
    ref = np.zeros(n)
    for _ in range(100):
        i = int(rng.integers(n))
        a = Atom.sparse([i], [1.0], (n,), key=("e", i))
        d = Direction.frank_wolfe(a)
        dd = d.dense(ref)
        tr.move(d, 0.2)
        ref = ref + 0.2 * dd
        assert tr.cache.nbytes <= budget_atoms * (m + n) * 8
        assert len(tr.cache) <= budget_atoms
    assert tr.value() == pytest.approx(f.value(ref), rel=1e-10)
    assert _rel(tr.gradient(), f.gradient(ref)) < 1e-10


# -- smoothness --------------------------------------------------------------
def test_smoothness_matches_numpy():
    rng = np.random.default_rng(12)
    A = rng.standard_normal((40, 30))
    assert LeastSquares(A, np.zeros(40)).smoothness == pytest.approx(np.linalg.norm(A, 2) ** 2,
                                                                     rel=1e-10)
    S = sp.random(300, 200, density=0.05, random_state=np.random.default_rng(13), format="csr")
    assert LeastSquares(S, np.zeros(300)).smoothness == pytest.approx(
        np.linalg.norm(S.toarray(), 2) ** 2, rel=1e-8)  # ARPACK path
    B = rng.standard_normal((30, 30))
    Q = (B + B.T) / 2
    assert QuadraticObjective(Q, convex=False).smoothness == pytest.approx(
        np.max(np.abs(np.linalg.eigvalsh(Q))), rel=1e-10)
    Qs = sp.random(200, 200, density=0.05, random_state=np.random.default_rng(14))
    Qs = (Qs + Qs.T) / 2
    assert QuadraticObjective(Qs, convex=False).smoothness == pytest.approx(
        np.max(np.abs(np.linalg.eigvalsh(Qs.toarray()))), rel=1e-8)  # ARPACK path
    f = QuadraticObjective(np.eye(2))
    f.smoothness = 5.0
    assert f.smoothness == 5.0


# -- cvxpy -------------------------------------------------------------------
def test_to_cvxpy_values_equal_value():
    rng = np.random.default_rng(15)
    for sparse in (False, True):
        fq, _, _ = _quad(rng, n=8, sparse=sparse)
        fl, _, _ = _ls(rng, m=9, n=8, sparse=sparse)
        x = cp.Variable(8)
        x.value = rng.standard_normal(8)
        assert fq.to_cvxpy(x).value == pytest.approx(fq.value(x.value), rel=1e-12)
        assert fl.to_cvxpy(x).value == pytest.approx(fl.value(x.value), rel=1e-12)
    B = rng.standard_normal((6, 6))
    fm = QuadraticObjective(B @ B.T, rng.standard_normal(6), shape=(2, 3))
    X = cp.Variable((2, 3))
    X.value = rng.standard_normal((2, 3))
    assert fm.to_cvxpy(X).value == pytest.approx(fm.value(X.value), rel=1e-12)
    assert fm.to_cvxpy(X).is_convex()


def test_frank_wolfe_least_squares_on_l1_ball_vs_cvxpy():
    rng = np.random.default_rng(16)
    m, n = 60, 100
    A = rng.standard_normal((m, n))
    x_true = np.zeros(n)
    x_true[rng.choice(n, 5, replace=False)] = rng.standard_normal(5)
    b = A @ x_true + 0.1 * rng.standard_normal(m)
    r = 0.8 * np.abs(x_true).sum()  # active constraint
    f = LeastSquares(A, b)
    res = frank_wolfe(f, L1Ball(r), tol=1e-7, max_iter=3000)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(f.to_cvxpy(x)), [cp.norm1(x) <= r])
    prob.solve(solver=cp.CLARABEL)
    f_cvx = f.value(x.value)
    assert res.fun - f_cvx <= res.gap + 1e-9  # the certificate bounds the true suboptimality
    assert res.fun >= f_cvx - 1e-7  # a feasible iterate cannot beat the optimum
    assert res.fun == pytest.approx(f.value(res.x), rel=1e-10)  # the tracked value is honest
    assert np.abs(res.x).sum() <= r * (1 + 1e-12)


def test_frank_wolfe_quadratic_on_simplex_vs_cvxpy():
    rng = np.random.default_rng(17)
    n = 50
    B = rng.standard_normal((30, n))
    Q = sp.csr_matrix(B.T @ B / 30)
    c = rng.standard_normal(n)
    f = QuadraticObjective(Q, c)
    res = frank_wolfe(f, ProbabilitySimplex(), tol=1e-7, max_iter=3000)
    x = cp.Variable(n)
    cp.Problem(cp.Minimize(f.to_cvxpy(x)), [x >= 0, cp.sum(x) == 1]).solve(solver=cp.CLARABEL)
    xv = np.maximum(x.value, 0)
    xv /= xv.sum()
    f_cvx = f.value(xv)
    assert res.fun - f_cvx <= res.gap + 1e-9
    assert res.fun >= f_cvx - 1e-7
    assert res.fun == pytest.approx(f.value(res.x), rel=1e-10)


def test_simplex_projection_vs_duchi():
    rng = np.random.default_rng(18)
    # projection in the relative interior: vanilla FW converges linearly; a gap
    # of 1e-13 puts x within sqrt(2 gap) < 1e-6 of the projection (mu = 1)
    y = 0.1 + 0.02 * rng.standard_normal(10)
    p = _duchi_projection(y)
    assert p.min() > 0.02
    f = QuadraticObjective(np.eye(10), -y)
    res = frank_wolfe(f, ProbabilitySimplex(), tol=1e-13, max_iter=20000)
    assert res.status == "converged" and res.gap <= 1e-6
    np.testing.assert_allclose(res.x, p, atol=1e-6)
    # projection on a face: strong convexity (mu = 1) bounds the distance by sqrt(2 gap)
    y = rng.standard_normal(30)
    f = QuadraticObjective(sp.identity(30, format="csr"), -y)
    res = frank_wolfe(f, ProbabilitySimplex(), tol=1e-6, max_iter=3000)
    assert np.linalg.norm(res.x - _duchi_projection(y)) <= np.sqrt(2 * res.gap) + 1e-12


@pytest.mark.parametrize("rule", [ShortStep, Adaptive, Armijo, Agnostic, ExactStep])
def test_every_step_rule_follows_the_generic_tracker(rule):
    """The incremental tracker and the generic (re-evaluating) tracker take the same path."""
    rng = np.random.default_rng(19)
    f, A, b = _ls(rng, m=30, n=40)
    generic = FunctionObjective(f.value, f.gradient, exact_step=f.exact_step,
                                smoothness=f.smoothness, shape=f.n)
    lmo = L1Ball(2.0)
    r1 = frank_wolfe(f, lmo, step_size=rule(), max_iter=60, tol=0)
    r2 = frank_wolfe(generic, lmo, step_size=rule(), max_iter=60, tol=0)
    np.testing.assert_allclose(r1.x, r2.x, rtol=1e-8, atol=1e-10)
    assert r1.fun == pytest.approx(r2.fun, rel=1e-10)
    assert r1.n_gradient_calls == 1  # one full evaluation; every move was incremental


def test_a_converged_non_convex_run_does_not_call_its_gap_a_certificate():
    """On f declared non-convex the Frank-Wolfe gap is a stationarity measure (the run
    reports dual_bound -inf); the message said "certified gap ... <= tol".  The point is
    checked as stationary by its gap computed here: min over the simplex of <g, s - x>."""
    Q = np.diag([1.0, -3.0, 2.0])
    f = QuadraticObjective(Q, c=[0.0, -1.0, 0.0], convex=False)
    res = frank_wolfe(f, ProbabilitySimplex(), x0=np.array([0.0, 1.0, 0.0]), tol=1e-8)
    assert res.status == "converged" and res.dual_bound == -np.inf
    assert "certified" not in res.message and "not convex" in res.message
    g = Q @ res.x + np.array([0.0, -1.0, 0.0])
    assert float(g @ res.x - g.min()) <= 1e-8

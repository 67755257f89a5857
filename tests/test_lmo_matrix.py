"""Matrix domains: Birkhoff polytope, nuclear-norm ball, spectrahedron.

Every oracle answer is checked for feasibility (computed here, not with the
class's own ``violation``) and optimality against an independent computation:
brute force over permutations, singular values / eigenvalues from a different
routine, and random feasible points.  Two Frank-Wolfe runs over the Birkhoff
polytope are compared with cvxpy.
"""

from itertools import permutations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe import Birkhoff, NuclearNormBall, ShapeError, Spectrahedron
from frankwolfe.lmo import matrix as matrix_module


def sinkhorn(K: np.ndarray, tol: float = 1e-13) -> np.ndarray:
    """A doubly stochastic matrix from a positive one (Sinkhorn-Knopp)."""
    for _ in range(100_000):
        K = K / K.sum(axis=1, keepdims=True)
        K = K / K.sum(axis=0, keepdims=True)
        if np.abs(K.sum(axis=1) - 1).max() < tol:
            return K
    raise AssertionError("Sinkhorn did not converge")


def assert_permutation_matrix(X: np.ndarray) -> None:
    assert set(np.unique(X)) <= {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(axis=0), 1.0)
    np.testing.assert_array_equal(X.sum(axis=1), 1.0)


# --------------------------------------------------------------------- Birkhoff
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_birkhoff_matches_brute_force(n):
    rng = np.random.default_rng(n)
    perms = np.array(list(permutations(range(n))))
    lmo = Birkhoff(n)
    for trial in range(5):
        G = rng.standard_normal((n, n)) if trial else rng.integers(-3, 4, (n, n)).astype(float)
        best = G[np.arange(n), perms].sum(axis=1).min()
        atom = lmo(G)
        X = atom.to_dense()
        assert_permutation_matrix(X)
        assert atom.is_sparse and atom.nnz == n
        assert atom.dot(G) == pytest.approx(best, abs=1e-12)
        sigma = atom.key[1]
        assert atom.key[0] == "perm"
        np.testing.assert_array_equal(X[np.arange(n), list(sigma)], 1.0)


def test_birkhoff_beats_random_doubly_stochastic_points():
    rng = np.random.default_rng(7)
    n = 30
    lmo = Birkhoff()  # dimension from the direction
    G = rng.standard_normal((n, n))
    X = lmo(G).to_dense()
    assert_permutation_matrix(X)
    val = float(np.vdot(G, X))
    for _ in range(50):
        P = sinkhorn(rng.exponential(size=(n, n)) ** 3)
        assert lmo.is_feasible(P, tol=1e-10)
        assert val <= float(np.vdot(G, P)) + 1e-12
    # the minimum of a linear function over the polytope is at a vertex, so
    # the assignment value also bounds every permutation matrix
    for _ in range(50):
        Pm = np.eye(n)[rng.permutation(n)]
        assert val <= float(np.vdot(G, Pm)) + 1e-12


def test_birkhoff_keys_identify_permutations():
    lmo = Birkhoff(4)
    G = np.array([[0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 1, 1], [1, 1, 1, 0]], dtype=float)
    a, b = lmo(G), lmo(G + 0.1)  # same minimizer
    assert a.key == b.key == ("perm", (0, 2, 1, 3))
    assert a == b and hash(a) == hash(b)


def test_birkhoff_violation():
    lmo = Birkhoff(3)
    assert lmo.violation(np.full((3, 3), 1 / 3)) == 0.0
    assert lmo.violation(2 * np.eye(3)) == pytest.approx(1.0)  # row sums 2
    X = np.array([[1.2, -0.2, 0.0], [-0.2, 1.2, 0.0], [0.0, 0.0, 1.0]])
    assert lmo.violation(X) == pytest.approx(0.2)  # sums are fine, entries negative
    assert lmo.violation(np.full((3, 2), 0.5)) == np.inf
    assert not lmo.is_feasible(np.full((2, 2), 0.5))


def test_birkhoff_errors():
    with pytest.raises(ShapeError, match=r"square matrix, got shape \(3, 4\)"):
        Birkhoff()(np.zeros((3, 4)))
    with pytest.raises(ShapeError, match=r"2-D matrix, got shape \(2, 2, 2\)"):
        Birkhoff()(np.zeros((2, 2, 2)))
    with pytest.raises(ShapeError, match=r"shape \(4, 4\), expected \(3, 3\)"):
        Birkhoff(3)(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="`n` must be a positive integer, got 2.5"):
        Birkhoff(2.5)
    with pytest.raises(ValueError, match="`n` must be a positive integer, got 0"):
        Birkhoff(0)
    with pytest.raises(ValueError, match="NaN or inf"):
        Birkhoff()(np.array([[0.0, np.nan], [1.0, 0.0]]))


# ------------------------------------------------------------ nuclear-norm ball
def random_unit(rng, n):
    v = rng.standard_normal(n)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("shape", [(5, 8), (8, 5), (1, 7), (60, 80), (120, 55)])
def test_nuclear_norm_ball_value_and_feasibility(shape):
    rng = np.random.default_rng(sum(shape))
    r = 2.5
    lmo = NuclearNormBall(r, shape=shape)
    G = rng.standard_normal(shape)
    S = lmo(G).to_dense()
    # sigma_max independently: the largest eigenvalue of G^T G
    sigma_max = np.sqrt(np.linalg.eigvalsh(G.T @ G if shape[0] >= shape[1] else G @ G.T)[-1])
    assert np.vdot(G, S) == pytest.approx(-r * sigma_max, rel=1e-10)
    # S is rank one with nuclear norm r: its one non-zero singular value is r
    sv = np.linalg.svd(S, compute_uv=False)
    assert sv.sum() == pytest.approx(r, rel=1e-10)
    assert sv[1:].max(initial=0.0) < 1e-12 * r
    # no random feasible point does better
    val = np.vdot(G, S)
    for _ in range(30):
        w = rng.dirichlet(np.ones(4))
        P = sum(wi * rng.choice([-1, 1]) * r * np.outer(random_unit(rng, shape[0]),
                                                         random_unit(rng, shape[1]))
                for wi in w)
        assert lmo.is_feasible(P, tol=1e-10)
        assert val <= np.vdot(G, P) + 1e-10


def test_nuclear_norm_ball_large_is_reproducible_and_sparse_direction():
    rng = np.random.default_rng(3)
    G = rng.standard_normal((70, 90))
    lmo = NuclearNormBall()
    a, b = lmo(G), lmo(G)
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())
    assert a.key == b.key
    Gs = sp.random(200, 150, density=0.02, random_state=np.random.RandomState(1), format="csr")
    S = lmo.extreme_point(Gs).to_dense()
    sigma_max = np.linalg.svd(Gs.toarray(), compute_uv=False)[0]
    assert float((Gs.multiply(S)).sum()) == pytest.approx(-sigma_max, rel=1e-10)


def test_nuclear_norm_ball_zero_direction_gives_feasible_point():
    for shape in [(3, 4), (60, 70)]:
        lmo = NuclearNormBall(1.5)
        S = lmo(np.zeros(shape)).to_dense()
        assert np.linalg.svd(S, compute_uv=False).sum() == pytest.approx(1.5)


def test_nuclear_norm_ball_violation_and_errors():
    lmo = NuclearNormBall(2.0)
    assert lmo.violation(np.diag([1.0, 1.0])) == 0.0
    assert lmo.violation(np.diag([3.0, -1.0])) == pytest.approx(1.0)  # ||.||_* = 4
    assert lmo.violation(np.zeros(3)) == np.inf
    with pytest.raises(ShapeError, match=r"2-D matrix, got shape \(6,\)"):
        lmo(np.zeros(6))
    with pytest.raises(ShapeError, match=r"shape \(3, 3\), expected \(2, 3\)"):
        NuclearNormBall(shape=(2, 3))(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="`radius` must be positive and finite, got -1"):
        NuclearNormBall(-1)
    with pytest.raises(ValueError, match=r"`shape` must be a pair \(m, n\), got 5"):
        NuclearNormBall(shape=5)


# ----------------------------------------------------------------- spectrahedron
@pytest.mark.parametrize("n", [1, 2, 6, 50, 51, 90])
def test_spectrahedron_value_and_feasibility(n):
    rng = np.random.default_rng(n)
    t = 3.0
    lmo = Spectrahedron(t, dim=n)
    G = rng.standard_normal((n, n))  # not symmetric: only its symmetric part counts
    S = lmo(G).to_dense()
    lam_min = np.linalg.eigvals((G + G.T) / 2).real.min()
    assert np.vdot(G, S) == pytest.approx(t * lam_min, rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(S, S.T)
    assert np.trace(S) == pytest.approx(t, rel=1e-12)
    assert np.linalg.eigvalsh(S)[0] >= -1e-12
    val = np.vdot(G, S)
    for _ in range(30):
        k = rng.integers(1, n + 1)
        A = rng.standard_normal((n, k))
        P = t * (A @ A.T) / np.trace(A @ A.T)
        assert lmo.is_feasible(P, tol=1e-10)
        assert val <= np.vdot(G, P) + 1e-10


def test_spectrahedron_large_reproducible_and_sparse():
    rng = np.random.default_rng(5)
    G = rng.standard_normal((80, 80))
    lmo = Spectrahedron()
    np.testing.assert_array_equal(lmo(G).to_dense(), lmo(G).to_dense())
    Gs = sp.random(120, 120, density=0.05, random_state=np.random.RandomState(2), format="csr")
    S = lmo.extreme_point(Gs).to_dense()
    lam_min = np.linalg.eigvalsh(((Gs + Gs.T) / 2).toarray())[0]
    assert float(Gs.multiply(S).sum()) == pytest.approx(lam_min, rel=1e-9)


def test_spectrahedron_violation_and_errors():
    lmo = Spectrahedron(2.0)
    assert lmo.violation(np.eye(2)) == 0.0
    assert lmo.violation(np.diag([3.0, -1.0])) == pytest.approx(0.5)  # lambda_min = -1
    assert lmo.violation(np.array([[1.0, 0.5], [0.0, 1.0]])) == pytest.approx(0.25)  # asymmetry
    assert lmo.violation(np.eye(2) * 1.5) == pytest.approx(0.5)  # trace 3
    with pytest.raises(ShapeError, match=r"square matrix, got shape \(2, 3\)"):
        lmo(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="`trace` must be positive and finite, got 0"):
        Spectrahedron(0)
    with pytest.raises(ValueError, match="`dim` must be a positive integer, got -2"):
        Spectrahedron(dim=-2)


def test_dense_limit_is_exercised():
    # the size-parametrized tests above straddle the dense/ARPACK switch
    assert matrix_module.DENSE_LIMIT == 50


# ------------------------------------------- Frank-Wolfe on the Birkhoff polytope
def _cvxpy_birkhoff_qp(n, objective_of):
    X = cp.Variable((n, n))
    cons = [X >= 0, cp.sum(X, axis=0) == 1, cp.sum(X, axis=1) == 1]
    prob = cp.Problem(cp.Minimize(objective_of(X)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, X.value


def _check_certificate(res, f, f_cvx, lmo):
    assert lmo.violation(res.x) < 1e-12
    assert res.fun == pytest.approx(f(res.x), abs=1e-12)
    # the certified gap brackets the optimum found by cvxpy
    assert res.fun - f_cvx <= res.gap + 1e-9
    assert f_cvx <= res.fun + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frank_wolfe_projection_onto_birkhoff_matches_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n = 5
    Y = rng.standard_normal((n, n))
    f = lambda X: float(np.sum((X - Y) ** 2))  # noqa: E731
    obj = fw.FunctionObjective(
        f, lambda X: 2 * (X - Y),
        exact_step=lambda x, d, g: -np.vdot(g, d) / (2 * np.vdot(d, d)),
    )
    lmo = Birkhoff(n)
    res = fw.frank_wolfe(obj, lmo, tol=1e-6, max_iter=3000)
    f_cvx, X_cvx = _cvxpy_birkhoff_qp(n, lambda X: cp.sum_squares(X - Y))
    _check_certificate(res, f, f_cvx, lmo)
    # vanilla FW is sublinear here (the projection lies on a face; 3000
    # iterations give gaps from 1e-6 to 2e-3 depending on the seed): check the
    # rate of Jaggi (2013), f(x_k) - f* <= 2 L diam^2 / (k + 2), L = 2, diam^2 = 2n
    assert res.fun - f_cvx <= 2 * 2 * (2 * n) / (res.nit + 2)
    # strong convexity (modulus 2): ||X - X*||^2 <= f(X) - f* <= gap
    assert np.sum((res.x - X_cvx) ** 2) <= res.gap + 1e-7


def test_frank_wolfe_random_quadratic_over_birkhoff_matches_cvxpy():
    rng = np.random.default_rng(11)
    n = 4
    A = rng.standard_normal((n * n, n * n))
    Q = A @ A.T / n**2 + 0.1 * np.eye(n * n)
    c = rng.standard_normal(n * n)
    f = lambda X: float(0.5 * X.ravel() @ Q @ X.ravel() + c @ X.ravel())  # noqa: E731
    obj = fw.FunctionObjective(
        f, lambda X: (Q @ X.ravel() + c).reshape(n, n),
        exact_step=lambda x, d, g: -np.vdot(g, d) / (d.ravel() @ Q @ d.ravel()),
    )
    lmo = Birkhoff(n)
    res = fw.frank_wolfe(obj, lmo, tol=1e-6, max_iter=3000)
    Qs = (Q + Q.T) / 2
    f_cvx, _ = _cvxpy_birkhoff_qp(
        n, lambda X: 0.5 * cp.quad_form(cp.vec(X, order="C"), cp.psd_wrap(Qs))
        + c @ cp.vec(X, order="C"))
    _check_certificate(res, f, f_cvx, lmo)
    L = np.linalg.eigvalsh(Qs)[-1]
    assert res.fun - f_cvx <= 2 * L * (2 * n) / (res.nit + 2)  # Jaggi's rate, as above


def test_frank_wolfe_interior_projection_reaches_tolerance():
    # Y doubly stochastic and positive: the projection is Y itself (f* = 0),
    # in the relative interior, where FW with exact steps converges linearly
    rng = np.random.default_rng(4)
    n = 5
    Y = sinkhorn(rng.uniform(0.5, 1.5, (n, n)))
    obj = fw.FunctionObjective(
        lambda X: float(np.sum((X - Y) ** 2)), lambda X: 2 * (X - Y),
        exact_step=lambda x, d, g: -np.vdot(g, d) / (2 * np.vdot(d, d)),
    )
    res = fw.frank_wolfe(obj, Birkhoff(n), tol=1e-6, max_iter=5000)
    assert res.success and res.gap <= 1e-6
    assert -1e-12 <= res.fun <= res.gap + 1e-12  # f* = 0: f - f* <= gap, up to rounding
    np.testing.assert_allclose(res.x, Y, atol=1e-3)


def test_sparse_direction_through_the_oracle_call():
    import scipy.sparse as sp

    G = sp.random(60, 70, density=0.1, random_state=0, format="csr")
    atom = NuclearNormBall(2.0)(G)  # through LMO.__call__, not extreme_point
    assert atom.shape == (60, 70)
    sigma_max = np.linalg.svd(G.toarray(), compute_uv=False)[0]
    assert atom.dot(G.toarray()) == pytest.approx(-2.0 * sigma_max, rel=1e-10)


def test_clustered_extreme_spectra_are_answered_beyond_the_dense_limit():
    """ARPACK (n > 50) did not converge on 10 smallest eigenvalues (largest singular
    values) 1e-6 apart, as near a spectral problem's optimum, and the run died with
    ArpackNoConvergence; the oracles answer with the dense decomposition there, checked
    against numpy's eigh / svd: the vertex's value is the minimum."""
    rng = np.random.default_rng(0)
    n, c = 55, 10
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.concatenate([-1 + 1e-6 * np.arange(c), np.linspace(-1 + c * 1e-6, 4.0, n - c)])
    G = (Q * lam) @ Q.T
    U, _ = np.linalg.qr(rng.standard_normal((n + 13, n)))
    A = (U * (5.0 - lam)) @ Q.T
    w = np.linalg.eigvalsh(G)
    for lmo, best in ((fw.Spectrahedron(), w[0]), (fw.UnitSpectrahedron(), min(w[0], 0.0)),
                      (fw.Fantope(2), w[:2].sum())):
        for _ in range(2):  # the second call goes dense at once
            v = lmo(G).to_dense()
            assert float(np.vdot(G, v)) == pytest.approx(best, rel=1e-9, abs=1e-9), lmo
    s = np.linalg.svd(A, compute_uv=False)
    v = fw.NuclearNormBall(2.0)(A).to_dense()
    assert float(np.vdot(A, v)) == pytest.approx(-2.0 * s[0], rel=1e-9)

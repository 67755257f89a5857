"""Saddle-point Frank-Wolfe (SP-FW, SP-AFW), BilinearObjective and game_value.

References used here are independent of the solver: closed-form values of
2x2 games, the linear programs of scipy.optimize.linprog (through
game_value, itself checked by optimality certificates), games constructed
with a known equilibrium (its KKT conditions hold by construction and are
re-checked with plain numpy), and gaps recomputed from M directly.
"""

from __future__ import annotations

import numpy as np
import pytest
from lmo_reference import project_simplex

import frankwolfe as fw
from frankwolfe import (
    BilinearObjective,
    InfeasibleError,
    ProbabilitySimplex,
    ShapeError,
    game_value,
    minimize,
    saddle_point_frank_wolfe,
)


def _simplices():
    return ProbabilitySimplex(), ProbabilitySimplex()


def _saddle_gap(M, x, y, a=None, b=None):
    """max_y' L(x, y') - min_x' L(x', y) for L = x^T M y + a^T x + b^T y over simplices."""
    a = np.zeros(M.shape[0]) if a is None else a
    b = np.zeros(M.shape[1]) if b is None else b
    return float((M.T @ x + b).max() + a @ x - (M @ y + a).min() - b @ y)


def face_game(m, n, k, mu, rng, margin=0.2):
    """M with a unique, known saddle point of x^T M y + mu/2 |x|^2 - mu/2 |y|^2 over simplices.

    The equilibrium (xs, ys) lies in the relative interior of a k-vertex face
    of each simplex, with strict complementarity (margin) off the faces.  Returns M, xs,
    ys and the faces' vertex indices Ix, Jy (I and J in the comments).
    """
    M = rng.standard_normal((m, n))
    Ix = np.sort(rng.choice(m, k, replace=False))
    Jy = np.sort(rng.choice(n, k, replace=False))
    xs = np.zeros(m)
    ys = np.zeros(n)
    xs[Ix] = rng.uniform(0.5, 1.5, k)
    ys[Jy] = rng.uniform(0.5, 1.5, k)
    xs /= xs.sum()
    ys /= ys.sum()
    xi, yj = xs[Ix], ys[Jy]
    lam = 0.3 * rng.standard_normal()           # grad_x L on the x-face
    kap = lam - mu * (xi @ xi + yj @ yj)        # grad_y L on the y-face (consistency)
    u, w = lam - mu * xi, kap + mu * yj         # required M_IJ y_J and M_IJ^T x_I
    A = M[np.ix_(Ix, Jy)]
    A = A + np.outer(u - A @ yj, yj) / (yj @ yj)
    A = A + np.outer(xi, w - A.T @ xi) / (xi @ xi)  # keeps A y_J = u since x_I^T u = w^T y_J
    M[np.ix_(Ix, Jy)] = A
    rows = np.setdiff1d(np.arange(m), Ix)
    cols = np.setdiff1d(np.arange(n), Jy)
    M[np.ix_(rows, Jy)] += (lam + rng.uniform(margin, 2 * margin, rows.size)
                            - M[np.ix_(rows, Jy)] @ yj)[:, None]
    M[np.ix_(Ix, cols)] += (kap - rng.uniform(margin, 2 * margin, cols.size)
                            - xi @ M[np.ix_(Ix, cols)])[None, :]
    return M, xs, ys, Ix, Jy


# -- game_value ---------------------------------------------------------------

def test_game_value_closed_forms():
    v, x, y = game_value([[1.0, -1.0], [-1.0, 1.0]])  # matching pennies
    assert v == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-9)
    rps = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
    v, x, y = game_value(rps)
    assert v == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(x, np.full(3, 1 / 3), atol=1e-9)
    np.testing.assert_allclose(y, np.full(3, 1 / 3), atol=1e-9)
    # 2x2 without a pure saddle: v = (ad - bc) / (a + d - b - c), x1 = (d - c) / (a + d - b - c)
    a, b, c, d = 3.0, -1.0, -2.0, 4.0
    v, x, y = game_value([[a, b], [c, d]])
    den = a + d - b - c
    assert v == pytest.approx((a * d - b * c) / den, abs=1e-10)
    assert x[0] == pytest.approx((d - c) / den, abs=1e-9)
    assert y[0] == pytest.approx((d - b) / den, abs=1e-9)
    # a pure saddle point (entry min of its row... for the minimizer: max of its column)
    v, x, y = game_value([[2.0, 5.0], [1.0, 0.5]])
    assert v == pytest.approx(1.0, abs=1e-10)


def test_game_value_certificates_on_random_games():
    rng = np.random.default_rng(3)
    for m, n in [(5, 9), (40, 25), (120, 200)]:
        M = rng.standard_normal((m, n))
        v, x, y = game_value(M)
        # x guarantees at most v, y guarantees at least v: both optimal
        assert (M.T @ x).max() == pytest.approx(v, abs=1e-8)
        assert (M @ y).min() == pytest.approx(v, abs=1e-8)
        assert x.min() >= -1e-12 and y.min() >= -1e-12  # LP solutions, up to rounding
        assert x.sum() == pytest.approx(1.0) and y.sum() == pytest.approx(1.0)


# -- SP-FW on random matrix games -------------------------------------------------

def _random_games(count=20, seed=11, big=((150, 100), (200, 300))):
    rng = np.random.default_rng(seed)
    sizes = [(int(rng.integers(2, 60)), int(rng.integers(2, 60)))
             for _ in range(count - len(big))]
    sizes += list(big)
    return [rng.standard_normal(s) for s in sizes]


def test_spfw_random_games_certified_against_linprog():
    """10 random games: the certificate brackets the LP value; the gap is the true saddle gap.

    SP-FW on bilinear games converges slowly (fictitious-play-like, the gap
    falls roughly as k^-0.4), so the budget is 1000 iterations and the test
    checks what the method certifies rather than a tolerance it cannot reach.
    """
    for M in _random_games(count=10):
        v, _, _ = game_value(M)
        res = saddle_point_frank_wolfe(BilinearObjective(M), *_simplices(),
                                       step_size="agnostic", max_iter=1000, tol=1e-4,
                                       history_every=100)
        x, y = res.x, res.extra["y"]
        assert res.fun == pytest.approx(x @ M @ y, abs=1e-12)
        assert res.gap == pytest.approx(_saddle_gap(M, x, y), abs=1e-9)
        assert abs(res.fun - v) <= res.gap + 1e-9
        assert res.extra["value_lower"] <= v + 1e-9 <= res.extra["value_upper"] + 2e-9
        assert res.dual_bound == res.extra["value_lower"]
        # progress: the gap fell by at least a factor 5 from the starting vertex pair
        assert res.gap <= res.history["gap"][0] / 5
        if res.success:
            assert abs(res.fun - v) <= 1e-4


def test_spfw_pure_saddle_games_converge():
    """Games with a strict pure saddle point: SP-FW reaches the 1e-4 gap.

    (On games whose equilibrium is mixed the 1e-4 gap is out of reach: a random 5x6
    game still has a gap of 4.5e-3 after 2e5 iterations of the 2/(k+2) rule.)
    """
    rng = np.random.default_rng(5)
    for m, n in [(4, 7), (30, 20), (200, 300)]:
        M = rng.uniform(-1, 1, (m, n))
        i, j = int(rng.integers(m)), int(rng.integers(n))
        M[i, j] = 0.0
        M[i, np.arange(n) != j] = rng.uniform(-1.0, -0.1, n - 1)  # j is y's strict best reply
        M[np.arange(m) != i, j] = rng.uniform(0.1, 1.0, m - 1)    # i is x's strict best reply
        v, _, _ = game_value(M)
        assert v == pytest.approx(0.0, abs=1e-9)
        res = saddle_point_frank_wolfe(BilinearObjective(M), *_simplices(), step_size="agnostic",
                                       max_iter=5_000, tol=1e-4)
        assert res.success, res
        assert abs(res.fun - v) <= 1e-4
        # each side's gap is >= (0.1 margin - 0.9 x the other side's stray mass) x stray mass
        assert 1 - res.x[i] <= res.extra["gap_x"] / 0.05
        assert 1 - res.extra["y"][j] <= res.extra["gap_y"] / 0.05


# -- SP-AFW on games with an interior-face equilibrium ---------------------------

@pytest.mark.parametrize("m,n,k,seed", [(10, 15, 3, 0), (50, 80, 5, 1), (200, 300, 8, 2)])
def test_spafw_linear_rate_on_face_equilibrium(m, n, k, seed):
    mu = 1.0
    M, xs, ys, Ix, Jy = face_game(m, n, k, mu, np.random.default_rng(seed))
    gx, gy = M @ ys + mu * xs, M.T @ xs - mu * ys  # the construction is an equilibrium:
    assert gx @ xs - gx.min() + gy.max() - gy @ ys <= 1e-12
    L = BilinearObjective(M, mu_x=mu, mu_y=mu)
    budget = 1500
    C = 4.0 * mu  # mu_x D_x^2 + mu_y D_y^2 with D^2 = 2 on a simplex
    afw = saddle_point_frank_wolfe(L, *_simplices(), away=True, step_size="curvature", C=C,
                                   max_iter=budget, tol=1e-10, history_every=50)
    assert afw.success and afw.gap <= 1e-8, afw
    np.testing.assert_allclose(afw.x, xs, atol=1e-7)
    np.testing.assert_allclose(afw.extra["y"], ys, atol=1e-7)
    Sx, Sy = afw.active_set
    assert sorted(a.key[1] for a in Sx.atoms) == list(Ix)
    assert sorted(a.key[1] for a in Sy.atoms) == list(Jy)
    assert afw.extra["n_away_steps"] > 0
    for rule in ("agnostic", "curvature"):
        spfw = saddle_point_frank_wolfe(L, *_simplices(), step_size=rule, C=C,
                                        max_iter=budget, tol=1e-10, history_every=50)
        assert spfw.nit == budget and spfw.gap > 1e-5, (rule, spfw.gap)


def test_spafw_pure_bilinear_is_certified():
    """Without strong convexity SP-AFW has no linear rate, but its certificates stay valid."""
    M, *_ = face_game(12, 9, 3, 0.0, np.random.default_rng(7))
    v, _, _ = game_value(M)
    res = saddle_point_frank_wolfe(BilinearObjective(M), *_simplices(), away=True,
                                   step_size="agnostic", max_iter=800)
    assert res.gap == pytest.approx(_saddle_gap(M, res.x, res.extra["y"]), abs=1e-9)
    assert abs(res.fun - v) <= res.gap + 1e-9
    for S in res.active_set:
        assert S.check()["sum_error"] <= 1e-12


# -- objective values and entry points --------------------------------------------

def test_fun_is_L_with_linear_and_quadratic_terms():
    rng = np.random.default_rng(2)
    M = rng.standard_normal((6, 4))
    a, b = rng.standard_normal(6), rng.standard_normal(4)
    L = BilinearObjective(M, a, b)
    res = saddle_point_frank_wolfe(L, *_simplices(), max_iter=300)
    x, y = res.x, res.extra["y"]
    assert res.fun == pytest.approx(x @ M @ y + a @ x + b @ y, abs=1e-12)
    assert res.gap == pytest.approx(_saddle_gap(M, x, y, a, b), abs=1e-9)
    Lq = BilinearObjective(M, a, b, mu_x=0.7, mu_y=0.3)
    res = saddle_point_frank_wolfe(Lq, *_simplices(), C=2.0, max_iter=50)
    x, y = res.x, res.extra["y"]
    assert res.fun == pytest.approx(x @ M @ y + a @ x + b @ y + 0.35 * x @ x - 0.15 * y @ y,
                                    abs=1e-12)
    # gradients against central finite differences
    x0, y0 = rng.random(6), rng.random(4)
    e = 1e-6
    fd_x = [(Lq.value(x0 + e * d, y0) - Lq.value(x0 - e * d, y0)) / (2 * e) for d in np.eye(6)]
    fd_y = [(Lq.value(x0, y0 + e * d) - Lq.value(x0, y0 - e * d)) / (2 * e) for d in np.eye(4)]
    np.testing.assert_allclose(Lq.gradient_x(x0, y0), fd_x, atol=1e-7)
    np.testing.assert_allclose(Lq.gradient_y(x0, y0), fd_y, atol=1e-7)


def test_minimize_method_saddle_matches_direct_call():
    M = np.random.default_rng(4).standard_normal((7, 5))
    L = BilinearObjective(M)
    direct = saddle_point_frank_wolfe(L, *_simplices(), max_iter=200)
    for domain in (_simplices(), fw.ProductDomain([ProbabilitySimplex(dim=7),
                                                   ProbabilitySimplex(dim=5)])):
        via = minimize(L, domain, method="saddle", max_iter=200)
        np.testing.assert_array_equal(via.x, direct.x)
        np.testing.assert_array_equal(via.extra["y"], direct.extra["y"])
        assert via.gap == direct.gap
    assert "saddle" in fw.available_methods()


def test_warm_start_and_custom_saddle_objective():
    """A user SaddleObjective (quadratic-bilinear, written by hand) solved from a given start."""

    class Quad(fw.SaddleObjective):
        # L = 1/2 |x - p|^2 + x^T y - 1/2 |y - q|^2 on simplices of R^2: p, q chosen so that the
        # saddle point is interior with a closed form (see below)
        def value(self, x, y):
            return 0.5 * (x - p) @ (x - p) + x @ y - 0.5 * (y - q) @ (y - q)

        def gradient_x(self, x, y):
            return x - p + y

        def gradient_y(self, x, y):
            return x - (y - q)

    p, q = np.array([0.9, 0.1]), np.array([0.2, 0.8])
    # an interior saddle has equal gradient entries on each side; with x = (s, 1-s),
    # y = (t, 1-t): s - .9 + t = 1.9 - s - t and s - t + .2 = t - s + .8, so s = .85, t = .55
    s, t = np.linalg.solve([[2.0, 2.0], [2.0, -2.0]], [2.8, 0.6])
    res = saddle_point_frank_wolfe(Quad(), ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2),
                                   x0=np.array([0.5, 0.5]), y0=np.array([0.5, 0.5]),
                                   step_size=fw.SaddleStep(C=4.0), tol=1e-10, max_iter=5000)
    np.testing.assert_allclose(res.x, [s, 1 - s], atol=1e-6)
    np.testing.assert_allclose(res.extra["y"], [t, 1 - t], atol=1e-6)


# -- bad input -----------------------------------------------------------------

def test_bad_input_messages():
    M = np.ones((3, 2))
    L = BilinearObjective(M)
    X, Y = _simplices()
    with pytest.raises(ShapeError, match=r"`M` must be a 2-D matrix, got shape \(3,\)"):
        BilinearObjective(np.ones(3))
    with pytest.raises(ShapeError, match=r"`a` has shape \(2,\), expected \(3,\)"):
        BilinearObjective(M, a=np.ones(2))
    with pytest.raises(ValueError, match="NaN or inf"):
        BilinearObjective(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="`mu_x` must be finite and >= 0"):
        BilinearObjective(M, mu_x=-1.0)
    with pytest.raises(ShapeError, match=r"`x` has shape \(2,\), expected \(3,\)"):
        L.value(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="must be a SaddleObjective"):
        saddle_point_frank_wolfe(fw.QuadraticObjective(np.eye(2)), X, Y)
    with pytest.raises(TypeError, match="`domain_y` must be an LMO"):
        saddle_point_frank_wolfe(L, X, "simplex")
    with pytest.raises(InfeasibleError, match=r"`x0` is not in the domain ProbabilitySimplex"):
        saddle_point_frank_wolfe(L, X, Y, x0=np.array([1.0, 1.0, 0.0]))
    with pytest.raises(ShapeError, match=r"`y0` has shape \(3,\) but the objective expects \(2,\)"):
        saddle_point_frank_wolfe(L, X, Y, y0=np.ones(3) / 3)
    with pytest.raises(ShapeError, match=r"domain_x has shape \(4,\) but the objective expects"):
        saddle_point_frank_wolfe(L, ProbabilitySimplex(dim=4), Y)
    with pytest.raises(ValueError, match="needs the curvature constant: pass C"):
        saddle_point_frank_wolfe(L, X, Y, step_size="curvature")
    with pytest.raises(ValueError, match="unknown saddle step_size 'exact'"):
        saddle_point_frank_wolfe(L, X, Y, step_size="exact")
    with pytest.raises(ValueError, match="`C` must be positive"):
        fw.SaddleStep(C=0.0)
    with pytest.raises(ValueError, match="Cartesian ProductDomain of 2 blocks"):
        minimize(L, fw.ProductDomain([ProbabilitySimplex(dim=3)] * 3), method="saddle")
    with pytest.raises(TypeError, match=r"pair \(domain_x, domain_y\)"):
        minimize(L, X, method="saddle")
    with pytest.raises(ShapeError, match="game_value: `M` must be a non-empty 2-D matrix"):
        game_value(np.ones(3))


# -- fully corrective SP-FW (double oracle) ------------------------------------------

def _lp_value_column_player(P):
    """max_y min_i (P y)_i over the simplex, by one linprog written here (HiGHS)."""
    from scipy.optimize import linprog

    m, n = P.shape
    c = np.zeros(n + 1)
    c[-1] = -1.0                                         # maximize t
    A_ub = np.hstack([-P, np.ones((m, 1))])              # t <= (P y)_i
    A_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    assert res.status == 0
    return -res.fun


def test_corrective_random_games_reach_1e8_and_match_linprog():
    """11 random games (up to 120x80; test_corrective_face_games runs 200x300): gap <= 1e-8,
    value = LP value to 1e-6.

    Finite termination: each iteration adds an atom or stops, and an atom can leave
    at most once (it is pinned when it comes back), so nit <= 2 (m + n).
    """
    for M in _random_games(count=11, big=((120, 80),)):
        m, n = M.shape
        v = _lp_value_column_player(M)
        res = saddle_point_frank_wolfe(BilinearObjective(M), *_simplices(), corrective=True,
                                       tol=1e-10, max_iter=2 * (m + n) + 1)
        x, y = res.x, res.extra["y"]
        true_gap = _saddle_gap(M, x, y)
        assert res.success and res.gap <= 1e-8 and true_gap <= 1e-8, (M.shape, res.gap, true_gap)
        assert res.gap == pytest.approx(true_gap, abs=1e-11)
        assert abs(res.fun - v) <= 1e-6
        assert abs(x @ M @ y - v) <= 1e-6
        assert x.min() >= -1e-12 and y.min() >= -1e-12
        assert x.sum() == pytest.approx(1.0, abs=1e-12) and y.sum() == pytest.approx(1.0, abs=1e-12)
        assert res.extra["n_corrective_lp"] >= 1
        assert res.nit <= 2 * (m + n)
        # the active sets hold the returned point with positive weights only
        Sx, Sy = res.active_set
        np.testing.assert_allclose(Sx.x, x, atol=1e-12)
        np.testing.assert_allclose(Sy.x, y, atol=1e-12)
        assert Sx.weights.min() > 0 and Sy.weights.min() > 0


def test_corrective_linear_terms_and_l1_ball():
    """Linear terms fold into the restricted game; a non-simplex domain (l1 ball) works."""
    rng = np.random.default_rng(8)
    M = rng.standard_normal((25, 18))
    a, b = rng.standard_normal(25), rng.standard_normal(18)
    res = saddle_point_frank_wolfe(BilinearObjective(M, a, b), *_simplices(), corrective=True,
                                   tol=1e-10, max_iter=200)
    # x^T M y + a^T x + b^T y over simplices is the matrix game M + a 1^T + 1 b^T
    v = _lp_value_column_player(M + a[:, None] + b[None, :])
    x, y = res.x, res.extra["y"]
    assert res.gap <= 1e-8 and _saddle_gap(M, x, y, a, b) <= 1e-8
    assert abs(res.fun - v) <= 1e-6

    # min_{|x|_1 <= 1} max_{y in simplex} x^T M y  =  min_{|x|_1 <= 1} max_j (M^T x)_j (cvxpy)
    import cvxpy as cp

    M = rng.standard_normal((12, 9)) + 0.3
    xv = cp.Variable(12)
    ref = cp.Problem(cp.Minimize(cp.max(M.T @ xv)), [cp.norm1(xv) <= 1]).solve()
    res = saddle_point_frank_wolfe(BilinearObjective(M), fw.L1Ball(), ProbabilitySimplex(),
                                   corrective=True, tol=1e-10, max_iter=200)
    x, y = res.x, res.extra["y"]
    assert np.abs(x).sum() <= 1 + 1e-12
    gap = float((M.T @ x).max() + np.abs(M @ y).max())  # min over the l1 ball: -|M y|_inf
    assert res.gap <= 1e-8 and gap <= 1e-8
    assert abs(res.fun - ref) <= 1e-6


@pytest.mark.parametrize("m,n,k,seed", [(10, 15, 3, 0), (200, 300, 8, 2)])
def test_corrective_face_games(m, n, k, seed):
    """Games with a known interior-face equilibrium, with and without the mu terms."""
    rng = np.random.default_rng(seed)
    M, xs, ys, Ix, Jy = face_game(m, n, k, 1.0, rng)
    res = saddle_point_frank_wolfe(BilinearObjective(M, mu_x=1.0, mu_y=1.0), *_simplices(),
                                   corrective=True, tol=1e-8, max_iter=200)
    assert res.success and res.gap <= 1e-8, res.gap
    assert res.extra["n_corrective_qp"] >= 1 and res.extra["n_corrective_lp"] == 0
    np.testing.assert_allclose(res.x, xs, atol=1e-6)
    np.testing.assert_allclose(res.extra["y"], ys, atol=1e-6)
    assert sorted(a.key[1] for a in res.active_set[0].atoms) == list(Ix)
    assert sorted(a.key[1] for a in res.active_set[1].atoms) == list(Jy)

    M0, xs, ys, Ix, Jy = face_game(m, n, k, 0.0, rng)
    res = saddle_point_frank_wolfe(BilinearObjective(M0), *_simplices(), corrective=True,
                                   tol=1e-10, max_iter=2 * (m + n))
    assert res.gap <= 1e-8 and _saddle_gap(M0, res.x, res.extra["y"]) <= 1e-8
    assert abs(res.fun - xs @ M0 @ ys) <= 1e-8  # the constructed equilibrium's value


def test_corrective_bad_input():
    L = BilinearObjective(np.ones((3, 2)))
    X, Y = _simplices()
    with pytest.raises(ValueError, match="`corrective=True` and `away=True` exclude"):
        saddle_point_frank_wolfe(L, X, Y, corrective=True, away=True)
    with pytest.raises(ValueError, match=r"gamma = 1\); got step_size='agnostic'"):
        saddle_point_frank_wolfe(L, X, Y, corrective=True, step_size="agnostic")

    class Lin(fw.SaddleObjective):
        def value(self, x, y):
            return x @ y

        def gradient_x(self, x, y):
            return y

        def gradient_y(self, x, y):
            return x

    with pytest.raises(TypeError, match="needs a BilinearObjective, got Lin"):
        saddle_point_frank_wolfe(Lin(), ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2),
                                 corrective=True)


@pytest.mark.parametrize("corrective", [True, False])
def test_cvxpy_solver_is_checked_up_front_in_both_modes(corrective):
    """The name ``fully_corrective_frank_wolfe`` takes, checked as it checks it, before any
    oracle call: unused without ``corrective``, but a typo is still refused."""
    calls = []

    class Counting(ProbabilitySimplex):
        def __call__(self, direction):
            calls.append(1)
            return super().__call__(direction)

    L = BilinearObjective(np.array([[1.0, -1.0], [-1.0, 1.0]]), mu_x=1.0, mu_y=1.0)
    with pytest.raises(ValueError, match="`cvxpy_solver` must be the name .* got 'NO_SUCH'"):
        saddle_point_frank_wolfe(L, Counting(dim=2), Counting(dim=2), corrective=corrective,
                                 cvxpy_solver="NO_SUCH")
    assert calls == []
    with pytest.raises(TypeError, match="qp_solver"):
        saddle_point_frank_wolfe(L, *_simplices(), corrective=corrective, qp_solver="CLARABEL")
    res = saddle_point_frank_wolfe(L, Counting(dim=2), Counting(dim=2), corrective=corrective,
                                   cvxpy_solver="clarabel", tol=1e-8, max_iter=500,
                                   **({} if corrective else {"away": True, "C": 4.0}))
    assert res.gap <= 1e-8 and calls
    assert res.extra.get("n_corrective_qp", 0) >= (1 if corrective else 0)


# -- incremental products M y, M^T x -------------------------------------------------

def test_incremental_products_dense_sparse_and_drift():
    """Runs past the periodic refresh; gaps equal those recomputed from M; CSR M agrees."""
    import scipy.sparse as sps

    rng = np.random.default_rng(9)
    M = rng.standard_normal((40, 70)) * (rng.random((40, 70)) < 0.3)
    a, b = rng.standard_normal(40), rng.standard_normal(70)
    dense = saddle_point_frank_wolfe(BilinearObjective(M, a, b), *_simplices(),
                                     step_size="agnostic", max_iter=2500, tol=0)
    sparse = saddle_point_frank_wolfe(BilinearObjective(sps.csr_array(M), a, b), *_simplices(),
                                      step_size="agnostic", max_iter=2500, tol=0)
    x, y = dense.x, dense.extra["y"]
    assert dense.gap == pytest.approx(_saddle_gap(M, x, y, a, b), abs=1e-12)
    assert dense.fun == pytest.approx(x @ M @ y + a @ x + b @ y, abs=1e-12)
    np.testing.assert_allclose(sparse.x, x, atol=1e-12)
    np.testing.assert_allclose(sparse.extra["y"], y, atol=1e-12)
    # history gaps recomputed from scratch at a mid-run iterate via the callback
    seen = []

    def cb(state):
        z = state.x
        seen.append((state.gap, _saddle_gap(M, z[:40], z[40:], a, b)))

    saddle_point_frank_wolfe(BilinearObjective(M, a, b), *_simplices(), step_size="agnostic",
                             max_iter=1200, tol=0, callback=cb)
    got, want = np.array(seen).T
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_fictitious_rule_is_fictitious_play():
    """step_size='fictitious' (1/(k+1)): both strategies are the plain averages of the
    simultaneous best replies so far (Brown's fictitious play, transcribed here)."""
    rng = np.random.default_rng(12)
    M = rng.standard_normal((8, 11))
    K = 300
    res = saddle_point_frank_wolfe(BilinearObjective(M), *_simplices(), step_size="fictitious",
                                   max_iter=K, tol=0)
    x = np.eye(8)[0]
    y = np.eye(11)[0]   # the default start: the first vertex of each simplex
    cx, cy = np.zeros(8), np.zeros(11)
    for k in range(K):  # gamma_0 = 1: the start only chooses the first replies
        bx = np.eye(8)[np.argmin(M @ y)]
        by = np.eye(11)[np.argmax(M.T @ x)]
        cx += bx
        cy += by
        x, y = cx / (k + 1), cy / (k + 1)
    np.testing.assert_allclose(res.x, x, atol=1e-12)
    np.testing.assert_allclose(res.extra["y"], y, atol=1e-12)


# -- default step on strongly convex-concave games (issue 12, item 5) -----------------------


def _regularized_game_gap(M, mu, x, y):
    """``max_y' L(x, y') - min_x' L(x', y)`` for ``L = x'My + mu/2 |x|^2 - mu/2 |y|^2`` on
    simplices, from the closed-form best replies (projections), not from the solver."""
    yb = project_simplex(M.T @ x / mu)
    xb = project_simplex(-(M @ y) / mu)
    up = x @ M @ yb + 0.5 * mu * (x @ x - yb @ yb)
    lo = xb @ M @ y + 0.5 * mu * (xb @ xb - y @ y)
    return up - lo


def _regularized_game_value(M, mu):
    """The saddle value by cvxpy: min over x of mu/2 |x|^2 + max_y (x'My - mu/2 |y|^2), the inner
    max written through its dual, min_t t + |(M'x - t)_+|^2 / (2 mu)."""
    import cvxpy as cp

    x, t = cp.Variable(M.shape[0]), cp.Variable()
    obj = 0.5 * mu * cp.sum_squares(x) + t + cp.sum_squares(cp.pos(M.T @ x - t)) / (2 * mu)
    prob = cp.Problem(cp.Minimize(obj), [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    return float(prob.value)


@pytest.mark.parametrize("seed", [0, 1])
def test_default_step_of_sp_afw_converges_on_strongly_coupled_games(seed):
    """Coupling of spectral norm 12 against mu = 1: a local step from the players'
    curvature alone cycled (gap above 1 after 5000 iterations); the default reaches 1e-8,
    and the value agrees with cvxpy's."""
    M = np.random.default_rng(seed).standard_normal((15, 20))
    M *= 12.0 / np.linalg.norm(M, 2)
    L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    res = saddle_point_frank_wolfe(L, *_simplices(), away=True, tol=1e-8, max_iter=20000,
                                   history_every=1000)
    assert res.success and res.gap <= 1e-8, res.message
    true_gap = _regularized_game_gap(M, 1.0, res.x, res.extra["y"])
    assert -1e-12 <= true_gap <= res.gap + 1e-12
    value = _regularized_game_value(M, 1.0)
    assert abs(res.fun - value) <= res.gap + 1e-7  # cvxpy's accuracy


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_step_of_sp_afw_is_linear_on_strongly_convex_concave_games(seed):
    M = np.random.default_rng(seed).standard_normal((15, 20))
    M *= 0.2 / np.linalg.norm(M, 2)  # coupling of spectral norm 0.2, mu = 1
    L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    res = saddle_point_frank_wolfe(L, *_simplices(), away=True, tol=1e-9, max_iter=1500,
                                   history_every=100)
    assert res.success and res.gap <= 1e-9  # ~900 iterations; the 2/(k+2) rule is sublinear
    x, y = res.x, res.extra["y"]
    true_gap = _regularized_game_gap(M, 1.0, x, y)
    assert -1e-12 <= true_gap <= res.gap + 1e-12
    value = _regularized_game_value(M, 1.0)
    assert abs(res.fun - value) <= res.gap + 1e-7  # cvxpy's accuracy
    # the agnostic step after the same number of iterations is orders of magnitude behind
    agnostic = saddle_point_frank_wolfe(L, *_simplices(), away=True, step_size="agnostic",
                                        tol=0.0, max_iter=res.nit, history_every=res.nit)
    assert agnostic.gap > 1e4 * res.gap


def test_curvature_constant_and_default_rules():
    M = np.random.default_rng(3).standard_normal((4, 5))
    L = BilinearObjective(M, mu_x=2.0, mu_y=0.5)
    X, Y = _simplices()
    # simplex diameter^2 = 2, l1 ball of radius 3: (2 * 3)^2
    assert L.curvature_constant(X, Y) == pytest.approx(2.0 * 2 + 0.5 * 2, rel=1e-15)
    assert L.curvature_constant(X, fw.L1Ball(3.0)) == pytest.approx(4.0 + 0.5 * 36, rel=1e-15)
    assert BilinearObjective(M).curvature_constant(X, Y) == 0.0
    dx, dy = np.arange(4.0), np.ones(5)
    # ||r(z + d) - r(z)|| ||d|| for r = (grad_x L, -grad_y L), by finite differences of the
    # gradients; at least the players' curvature <r(z + d) - r(z), d> = 2 * 14 + 0.5 * 5
    z = (np.full(4, 0.25), np.full(5, 0.2))
    dr = np.concatenate([L.gradient_x(z[0] + dx, z[1] + dy) - L.gradient_x(*z),
                         -(L.gradient_y(z[0] + dx, z[1] + dy) - L.gradient_y(*z))])
    along = np.linalg.norm(dr) * np.sqrt(dx @ dx + dy @ dy)
    assert L.curvature_along(dx, dy) == pytest.approx(along, rel=1e-12)
    assert dr @ np.concatenate([dx, dy]) == pytest.approx(2.0 * 14 + 0.5 * 5, rel=1e-12)
    assert L.curvature_along(dx, dy) > 2.0 * 14 + 0.5 * 5
    # no coupling and one mu for both players: the change is mu d, the two are equal
    uncoupled = BilinearObjective(np.zeros((4, 5)), mu_x=2.0, mu_y=2.0)
    assert uncoupled.curvature_along(dx, dy) == pytest.approx(2.0 * 19, rel=1e-14)
    from frankwolfe.algorithms.saddle.solver import _step_rule
    from frankwolfe.step_size import Agnostic, SaddleBacktracking, SaddleStep

    assert isinstance(_step_rule(None, None, 1.0, BilinearObjective(M), X, Y), Agnostic)
    local = _step_rule(None, None, 1.0, L, X, Y)
    assert isinstance(local, SaddleStep) and local.C is None
    glob = _step_rule("curvature", None, 1.0, L, X, Y)
    assert isinstance(glob, SaddleStep) and glob.C == pytest.approx(5.0)

    class Smooth(fw.SaddleObjective):  # no curvature_along: the global constant or backtracking
        strongly_convex_concave = True
        smoothness_x = smoothness_y = 1.0

        def value(self, x, y):
            return 0.5 * x @ x - 0.5 * y @ y

        def gradient_x(self, x, y):
            return x

        def gradient_y(self, x, y):
            return -y

    rule = _step_rule(None, None, 1.0, Smooth(), X, Y)
    assert isinstance(rule, SaddleStep) and rule.C == pytest.approx(4.0)
    box = _step_rule(None, None, 1.0, Smooth(), X, fw.Box(0.0, 1.0, dim=5))
    assert isinstance(box, SaddleStep) and box.C == pytest.approx(2.0 + 5.0)  # [0, 1]^5: D^2 = 5

    class UnknownDiameterBox(fw.Box):  # a user's domain that does not say its diameter
        def diameter(self, shape=None):
            return None

    assert isinstance(_step_rule(None, None, 1.0, Smooth(), X, UnknownDiameterBox(0.0, 1.0, dim=5)),
                      SaddleBacktracking)
    with pytest.raises(ValueError, match="step_size='local' needs Smooth.curvature_along"):
        _step_rule("local", None, 1.0, Smooth(), X, Y)


def test_backtracking_step_converges_linearly_without_a_diameter():
    """A user's strongly convex-concave L (no curvature hook) on a box (no diameter)."""

    class Quad(fw.SaddleObjective):
        # L = 1/2 |x - p|^2 + x'By - 1/2 |y - q|^2 on [0, 1]^2 x [0, 1]^2
        strongly_convex_concave = True

        def value(self, x, y):
            return 0.5 * (x - p) @ (x - p) + x @ B @ y - 0.5 * (y - q) @ (y - q)

        def gradient_x(self, x, y):
            return x - p + B @ y

        def gradient_y(self, x, y):
            return B.T @ x - (y - q)

    p, q = np.array([0.7, 0.2]), np.array([0.4, 0.9])
    B = np.array([[0.1, -0.05], [0.02, 0.1]])
    # interior saddle: x - p + B y = 0 and B'x - y + q = 0
    K = np.block([[np.eye(2), B], [B.T, -np.eye(2)]])
    sol = np.linalg.solve(K, np.concatenate([p, -q]))
    class UnknownDiameterBox(fw.Box):  # a user's domain that does not say its diameter
        def diameter(self, shape=None):
            return None

    box = UnknownDiameterBox(0.0, 1.0, dim=2)
    res = saddle_point_frank_wolfe(Quad(), box, UnknownDiameterBox(0.0, 1.0, dim=2), away=True,
                                   tol=1e-9, max_iter=3000)
    assert box.diameter() is None
    assert res.success and res.nit < 3000
    # mu = 1 on both sides: gap >= 1/2 |z - z*|^2
    assert np.linalg.norm(np.concatenate([res.x, res.extra["y"]]) - sol) <= \
        np.sqrt(2 * res.gap) + 1e-12


def test_a_custom_domain_without_a_shape_is_told_to_give_one():
    class Simplex(fw.LMO):
        def extreme_point(self, g):
            v = np.zeros(g.shape)
            v[np.argmin(g)] = 1.0
            return v

    class Game(fw.SaddleObjective):                   # declares no shape_x, shape_y
        def value(self, x, y):
            return float(x @ y)

        def gradient_x(self, x, y):
            return y

        def gradient_y(self, x, y):
            return x

    with pytest.raises(ShapeError, match=r"pass `x0`, or for `domain_x`: give it a `shape` "
                                         r"attribute \(`self.shape = \(n,\)`\)"):
        saddle_point_frank_wolfe(Game(), Simplex(), Simplex(), max_iter=5)


def test_a_float32_start_is_accepted_within_its_rounding():
    """The float32 barycenter of a simplex sums to 1 within 3e-8, above the float64
    tolerance 1e-8: refused as infeasible before.  The game value is checked against
    scipy's linprog; a float32 start clearly outside is still refused."""
    from scipy.optimize import linprog

    M = np.array([[1.0, -2.0, 0.5], [-1.0, 1.5, -0.5], [0.3, -0.2, 1.0]])
    x0 = np.full(3, 1 / 3, dtype=np.float32)
    assert abs(float(x0.astype(float).sum()) - 1.0) > 1e-8  # the float64 check refused it
    res = fw.saddle_point_frank_wolfe(fw.BilinearObjective(M), fw.ProbabilitySimplex(dim=3),
                                      fw.ProbabilitySimplex(dim=3), x0=x0, y0=x0,
                                      corrective=True, tol=1e-10)
    # min_x max_y x^T M y: the LP over (x, t) minimizing t with M^T x <= t
    lp = linprog(np.r_[0, 0, 0, 1.0], A_ub=np.c_[M.T, -np.ones(3)], b_ub=np.zeros(3),
                 A_eq=[[1, 1, 1, 0]], b_eq=[1], bounds=[(0, None)] * 3 + [(None, None)])
    value = 0.5 * (res.extra["value_lower"] + res.extra["value_upper"])
    assert value == pytest.approx(lp.fun, abs=1e-8)
    # the away-step mode decomposes the start: in its own precision too
    res = fw.saddle_point_frank_wolfe(fw.BilinearObjective(M), fw.ProbabilitySimplex(dim=3),
                                      fw.ProbabilitySimplex(dim=3), x0=x0, y0=x0, away=True,
                                      max_iter=20)
    assert res.extra["value_lower"] - 1e-9 <= lp.fun <= res.extra["value_upper"] + 1e-9
    with pytest.raises(fw.InfeasibleError, match="x0"):
        fw.saddle_point_frank_wolfe(fw.BilinearObjective(M), fw.ProbabilitySimplex(dim=3),
                                    fw.ProbabilitySimplex(dim=3),
                                    x0=np.array([0.5, 0.5, 0.01], dtype=np.float32))

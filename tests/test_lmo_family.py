"""The oracles of issue #24 against independent references.

Each oracle answers 50 seeded random directions; its value ``<d, v>`` must equal the
optimum of the same linear program solved by cvxpy (HiGHS for LPs, Clarabel for
second-order-cone and semidefinite programs), with ``|a - b| <= tol (1 + |b|)``, and
its answer must be feasible.  The sets are modelled for cvxpy from their definitions
(the K-norm ball as the convex hull of the union of two balls, the OWL ball through
``sum_largest``, ...), not from the oracles' closed forms.  Then the duals
(``dual_solution``), the errors, violations and diameters.  Frank-Wolfe runs over the
new domains are in tests/test_lmo_family_runs.py.
"""

from __future__ import annotations

import itertools
import pickle
import sys

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from lmo_reference import CLARABEL, CONE_TOL, LP_TOL, Reference, close, random_polytope

import frankwolfe as fw
from frankwolfe import (
    Birkhoff,
    Box,
    ConvexHull,
    DualSolution,
    Ellipsoid,
    Fantope,
    GroupL1Ball,
    Hypercube,
    HyperSimplex,
    InfeasibleError,
    KNormBall,
    LinfBall,
    OrderedWeightedL1Ball,
    Polytope,
    ProbabilitySimplex,
    ScaledL1Ball,
    ShapeError,
    UnboundedError,
    UnitHyperSimplex,
    UnitSimplex,
    UnitSpectrahedron,
)

N_DIRECTIONS = 50


def check_against(lmo, reference, directions, tol, feas_tol=1e-9):
    """The oracle's value equals the reference's on every direction; answers feasible."""
    for d in directions:
        atom = lmo(d)
        assert atom.shape == d.shape
        value = atom.dot(d)
        ref = reference(d)
        assert close(value, ref, tol), (value, ref)
        assert lmo.violation(atom.to_dense()) <= feas_tol


def vectors(seed, n, count=N_DIRECTIONS):
    rng = np.random.default_rng(seed)
    # mixed scales and a few exact ties/zeros: the cases an argmax can get wrong
    out = [rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3]) for _ in range(count - 2)]
    tie = rng.standard_normal(n)
    tie[: n // 2] = 0.7
    return [*out, tie, np.zeros(n)]


def symmetric(seed, n, count=N_DIRECTIONS):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        G = rng.standard_normal((n, n))
        out.append(G)  # not symmetric: the oracle must use the symmetric part
    return out


# ------------------------------------------------------------------------- polytope
@pytest.mark.parametrize("sparse", [False, True])
def test_polytope_matches_highs_lp(sparse):
    A, b, A_eq, b_eq = random_polytope(1, sparse=sparse)
    n = A.shape[1]
    P = Polytope(A, b, A_eq, b_eq, bounds=(-3, 3))
    Ad = A.toarray() if sparse else A
    Ad_eq = A_eq.toarray() if sparse else A_eq
    ref = Reference((n,), lambda x: [Ad @ x <= b, Ad_eq @ x == b_eq, x >= -3, x <= 3],
                    dict(solver=cp.HIGHS))
    check_against(P, ref, vectors(2, n), LP_TOL)
    assert_exact_among_answers(P, vectors(3, n))


def assert_exact_among_answers(lmo, directions):
    """Each answer is at least as good as every other answer for its direction, to
    rounding: an oracle optimal only to a solver tolerance (HiGHS's default 1e-7) fails,
    and its Frank-Wolfe gaps go negative."""
    D = np.array(directions)
    V = np.array([lmo(d).to_dense() for d in directions])
    values = D @ V.T
    own = np.diag(values)
    scale = np.abs(D).max(axis=1) * np.abs(V).max()
    assert np.all(own <= values.min(axis=1) + 1e-12 * (1 + scale))


def test_polytope_scipy_fallback_matches_highspy(monkeypatch):
    A, b, A_eq, b_eq = random_polytope(3)
    warm = Polytope(A, b, A_eq, b_eq, bounds=[(-2, 2)] * 10)
    monkeypatch.setitem(sys.modules, "highspy", None)  # `import highspy` -> ImportError
    cold = Polytope(A, b, A_eq, b_eq, bounds=[(-2, 2)] * 10)
    assert cold._backend == "scipy" and warm._backend == "highspy"
    assert_exact_among_answers(cold, vectors(3, 10, count=20))
    for d in vectors(4, 10, count=20):
        a, c = warm(d), cold(d)
        assert close(a.dot(d), c.dot(d), LP_TOL)
        da, dc = warm.dual_solution(d), cold.dual_solution(d)
        assert close(da.value, dc.value, LP_TOL)


def test_polytope_warm_start_keys_and_pickle():
    A, b, A_eq, b_eq = random_polytope(5)
    P = Polytope(A, b, A_eq, b_eq, bounds=(-3, 3))
    d = np.random.default_rng(6).standard_normal(10)
    first = P(d)
    again = P(d)
    # the same objective from the kept optimal basis: no pivot at all
    assert P._model.getInfo().simplex_iteration_count == 0
    assert again.key == first.key and again.key[0] == "lp"
    Q = pickle.loads(pickle.dumps(P))
    assert Q(d).key == first.key
    assert P.diameter() == pytest.approx(6.0 * np.sqrt(10), rel=1e-12)
    assert Polytope(A_ub=np.eye(2), b_ub=[1, 1]).diameter() is None


@pytest.mark.parametrize("method", ["away", "pairwise"])
def test_polytope_oracle_is_exact_enough_for_certified_gaps(method):
    # with HiGHS's default tolerances (1e-7) the vertices near the optimum are optimal
    # only to ~1e-8 here and the gaps of these runs go negative (-1.3e-8, -4e-9)
    rng = np.random.default_rng(0)
    n = 8
    y = rng.standard_normal(n) * 2
    A, b = rng.standard_normal((20, n)), rng.random(20) + 0.5
    run = {"away": fw.away_step_frank_wolfe, "pairwise": fw.pairwise_frank_wolfe}[method]
    res = run(fw.QuadraticObjective(np.eye(n), -y), Polytope(A, b, bounds=(-3, 3)), tol=1e-10,
              max_iter=3000)
    assert res.status == "converged"
    assert np.min(res.history["gap"]) >= -1e-12


def test_polytope_errors():
    with pytest.raises(InfeasibleError, match="the set is empty"):
        Polytope(A_ub=[[1.0], [-1.0]], b_ub=[1.0, -2.0])  # x <= 1 and x >= 2
    with pytest.raises(InfeasibleError, match="the set is empty"):
        Polytope(A_eq=[[1.0, 1.0]], b_eq=[5.0], bounds=(0, 1))
    half_line = Polytope(A_ub=[[1.0]], b_ub=[1.0])
    assert half_line(np.array([-1.0])).to_dense()[0] == pytest.approx(1.0)
    with pytest.raises(UnboundedError, match="unbounded for the direction given"):
        half_line(np.array([1.0]))
    with pytest.raises(ValueError, match="`A_ub` is given without `b_ub`"):
        Polytope(A_ub=np.eye(2))
    with pytest.raises(ValueError, match="`b_eq` is given without `A_eq`"):
        Polytope(b_eq=[1.0])
    with pytest.raises(ShapeError, match="`A_ub` has 2 rows but `b_ub` has 3 entries"):
        Polytope(A_ub=np.eye(2), b_ub=np.ones(3))
    with pytest.raises(ShapeError, match="`A_eq` has 3 columns, expected 2"):
        Polytope(A_ub=np.eye(2), b_ub=np.ones(2), A_eq=np.ones((1, 3)), b_eq=[1.0])
    with pytest.raises(ValueError, match="`A_ub` contains NaN or inf"):
        Polytope(A_ub=[[np.nan]], b_ub=[1.0])
    with pytest.raises(ValueError, match="`b_ub` contains NaN or inf"):
        Polytope(A_ub=[[1.0]], b_ub=[np.inf])
    with pytest.raises(ValueError, match=r"min <= max, got \(2, 1\) for coordinate 1"):
        Polytope(bounds=[(0, 1), (2, 1)])
    with pytest.raises(ShapeError, match="`bounds` has 3 pairs, expected 2"):
        Polytope(A_ub=np.eye(2), b_ub=np.ones(2), bounds=[(0, 1)] * 3)
    with pytest.raises(ValueError, match="the dimension is unknown"):
        Polytope(bounds=(0, 1))
    with pytest.raises(ShapeError, match="expected 2 entries"):
        Polytope(bounds=[(0, 1), (0, 1)])(np.ones(3))
    with pytest.raises(ValueError, match="`direction` must be finite"):
        Polytope(bounds=[(0, 1), (0, 1)])(np.array([np.nan, 1.0]))


# ------------------------------------------------------------------------- hull
@pytest.mark.parametrize("sparse", [False, True])
def test_convex_hull_matches_lp_over_weights(sparse):
    rng = np.random.default_rng(7)
    V = rng.standard_normal((40, 8))
    if sparse:
        V[rng.random(V.shape) < 0.7] = 0.0
    hull = ConvexHull(sp.csr_array(V) if sparse else V)

    def constraints(x):
        lam = cp.Variable(V.shape[0], nonneg=True)
        return [cp.sum(lam) == 1, x == V.T @ lam]

    ref = Reference((8,), constraints, dict(solver=cp.HIGHS))
    check_against(hull, ref, vectors(8, 8), LP_TOL, feas_tol=1e-8)
    a = hull(rng.standard_normal(8))
    assert a.key[0] == "row" and a.is_sparse == sparse
    lam = rng.random(40)
    inside = V.T @ (lam / lam.sum())
    assert hull.violation(inside) <= 1e-9
    assert hull.violation(inside + 10.0 * np.abs(V).max()) > 1.0


def test_convex_hull_errors():
    with pytest.raises(ShapeError, match=r"non-empty \(m, n\) matrix, got shape \(3,\)"):
        ConvexHull([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`vertices` contains NaN or inf"):
        ConvexHull([[1.0, np.inf]])
    with pytest.raises(ShapeError, match="expected 2 entries"):
        ConvexHull(np.eye(2))(np.ones(3))


# ------------------------------------------------------------------- hypersimplex
@pytest.mark.parametrize("unit", [False, True])
def test_hypersimplex_matches_lp(unit):
    n, k, r = 12, 3, 1.5
    lmo = (UnitHyperSimplex if unit else HyperSimplex)(k, r)

    def constraints(x):
        total = cp.sum(x) <= k * r if unit else cp.sum(x) == k * r
        return [x >= 0, x <= r, total]

    ref = Reference((n,), constraints, dict(solver=cp.HIGHS))
    check_against(lmo, ref, vectors(9, n), LP_TOL)
    # a vertex is r times a subset of at most k coordinates, keyed by that subset
    a = lmo(-np.arange(n, dtype=float))
    assert sorted(a.indices.tolist()) == [n - 3, n - 2, n - 1]
    assert lmo(-np.arange(n, dtype=float)).key == a.key


def test_hypersimplex_errors_and_edges():
    with pytest.raises(ValueError, match="`k` must be a positive integer, got 0"):
        HyperSimplex(0)
    with pytest.raises(ValueError, match="`k` must be <= `dim`=3, got k=4"):
        HyperSimplex(4, dim=3)
    with pytest.raises(ValueError, match="`radius` must be positive and finite, got -1"):
        UnitHyperSimplex(2, -1)
    with pytest.raises(ShapeError, match="fewer than k=3"):
        HyperSimplex(3)(np.ones(2))
    # k >= n: the unit hypersimplex is the box [0, r]^n
    assert UnitHyperSimplex(5)(np.array([-1.0, 2.0, -3.0])).to_dense().tolist() == [1, 0, 1]
    assert HyperSimplex(2, dim=5).diameter() == pytest.approx(2.0)
    assert HyperSimplex(2, dim=3).violation(np.array([1.0, 1.0, 0.0])) == 0.0
    assert HyperSimplex(2, dim=3).violation(np.array([1.0, 0.5, 0.0])) == pytest.approx(0.25)


# ------------------------------------------------------------------ structured norms
def test_knorm_ball_matches_hull_of_two_balls():
    n, k, r = 9, 3, 2.0

    def constraints(x):
        # conv(B_1(r) ∪ B_inf(r/k)) as the perspective formulation of a union
        y, z, t = cp.Variable(n), cp.Variable(n), cp.Variable()
        return [x == y + z, cp.norm1(y) <= r * t, cp.norm_inf(z) <= r / k * (1 - t),
                t >= 0, t <= 1]

    ref = Reference((n,), constraints, dict(solver=cp.HIGHS))
    lmo = KNormBall(k, r)
    check_against(lmo, ref, vectors(10, n), LP_TOL)
    # both kinds of vertex occur
    assert lmo(np.eye(n)[0]).is_sparse and not lmo(np.ones(n)).is_sparse
    assert lmo.violation(np.full(n, r / k)) == 0.0  # a corner: top-3 sum = r
    assert lmo.violation(np.full(n, 2 * r / k)) == pytest.approx(1.0)
    assert KNormBall(k, r, dim=n).diameter() == pytest.approx(2 * r)
    with pytest.raises(ValueError, match="`k` must be a positive integer, got 1.5"):
        KNormBall(1.5)


def test_owl_ball_matches_sum_largest_lp():
    rng = np.random.default_rng(11)
    n, r = 8, 1.5
    w = np.sort(rng.random(n))[::-1]
    w[-2:] = 0.0  # zero weights are allowed after a positive first one

    def constraints(x):
        a = cp.abs(x)
        steps = np.append(w[:-1] - w[1:], w[-1])  # OWL = sum_i (w_i - w_i+1) top_i(|x|)
        return [sum(steps[i] * cp.sum_largest(a, i + 1) for i in range(n) if steps[i] > 0) <= r]

    ref = Reference((n,), constraints, dict(solver=cp.HIGHS))
    lmo = OrderedWeightedL1Ball(w, r)
    check_against(lmo, ref, vectors(12, n), LP_TOL)
    # equal weights: the l1 ball of radius r / w
    flat = OrderedWeightedL1Ball(np.full(4, 2.0), 1.0)
    assert flat(np.array([0.1, -3.0, 0.2, 1.0])).to_dense().tolist() == [0, 0.5, 0, 0]


def test_owl_errors():
    with pytest.raises(ValueError, match=r"non-increasing, got weights\[0\]=1 < weights\[1\]=2"):
        OrderedWeightedL1Ball([1.0, 2.0])
    with pytest.raises(ValueError, match=r"`weights\[0\]` must be positive, got 0"):
        OrderedWeightedL1Ball([0.0, 0.0])
    with pytest.raises(ValueError, match="finite and non-negative"):
        OrderedWeightedL1Ball([1.0, -1.0])
    with pytest.raises(ShapeError, match="non-empty 1-D array"):
        OrderedWeightedL1Ball(np.ones((2, 2)))
    with pytest.raises(ShapeError, match="expected 2 entries"):
        OrderedWeightedL1Ball([1.0, 1.0])(np.ones(3))


def test_group_l1_ball_matches_socp():
    rng = np.random.default_rng(13)
    n, r = 10, 2.0
    perm = rng.permutation(n)
    groups = [perm[:3], perm[3:4], perm[4:8], perm[8:]]

    def constraints(x):
        return [sum(cp.norm(x[g], 2) for g in groups) <= r]

    ref = Reference((n,), constraints, CLARABEL)
    lmo = GroupL1Ball(groups, r)
    check_against(lmo, ref, vectors(14, n), CONE_TOL)
    assert lmo(np.zeros(n)).key == ("zero",)
    with pytest.raises(ValueError, match="index 1 is in 2 groups"):
        GroupL1Ball([[0, 1], [1]])
    with pytest.raises(ValueError, match=r"`groups` must partition 0\.\.1, got index 5"):
        GroupL1Ball([[0], [5]])
    with pytest.raises(ValueError, match=r"`groups\[1\]` is empty"):
        GroupL1Ball([[0], []])


def test_scaled_l1_ball_matches_lp():
    rng = np.random.default_rng(15)
    n = 7
    lower = rng.standard_normal(n)
    upper = lower + rng.random(n) * 3 + 0.1
    c, h = (lower + upper) / 2, (upper - lower) / 2

    ref = Reference((n,), lambda x: [cp.sum(cp.multiply(cp.abs(x - c), 1 / h)) <= 1],
                    dict(solver=cp.HIGHS))
    lmo = ScaledL1Ball(lower, upper)
    check_against(lmo, ref, vectors(16, n), LP_TOL)
    # FrankWolfe.jl's example: bounds [-1, 3] x [-1, 1]
    d = ScaledL1Ball([-1.0, -1.0], [3.0, 1.0])
    assert d(np.array([1.0, 0.0])).to_dense().tolist() == [-1.0, 0.0]
    assert d.diameter() == pytest.approx(4.0)
    with pytest.raises(ValueError, match="got lower=2 >= upper=2 at flat index 1"):
        ScaledL1Ball([0.0, 2.0], [1.0, 2.0])


def test_ellipsoid_matches_socp():
    rng = np.random.default_rng(17)
    n, r = 6, 1.5
    B = rng.standard_normal((n, n))
    A = B @ B.T + 0.5 * np.eye(n)
    c = rng.standard_normal(n)
    L = np.linalg.cholesky(A)

    ref = Reference((n,), lambda x: [cp.norm(L.T @ (x - c), 2) <= r], CLARABEL)
    lmo = Ellipsoid(A, c, r)
    check_against(lmo, ref, vectors(18, n), CONE_TOL)
    lam = np.linalg.eigvalsh(A)[0]
    assert lmo.diameter() == pytest.approx(2 * r / np.sqrt(lam), rel=1e-12)
    with pytest.raises(ValueError, match="`A` must be positive definite"):
        Ellipsoid(-np.eye(2))
    with pytest.raises(ValueError, match="`A` must be symmetric"):
        Ellipsoid([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ShapeError, match="`center` has 3 entries, expected 2"):
        Ellipsoid(np.eye(2), center=np.zeros(3))


# ------------------------------------------------------------------------ spectral
def test_unit_spectrahedron_matches_sdp():
    n, r = 5, 2.0
    ref = Reference((n, n), lambda X: [X >> 0, cp.trace(X) <= r], CLARABEL)
    lmo = UnitSpectrahedron(r)
    directions = symmetric(19, n)
    directions[0] = np.eye(n)  # PSD direction: the answer is 0
    for D in directions:
        atom = lmo(D)
        sym = (D + D.T) / 2
        assert close(atom.dot(D), ref(sym), CONE_TOL)
        assert lmo.violation(atom.to_dense()) <= 1e-9
    assert lmo(np.eye(n)).key == ("zero",)
    assert lmo.violation(-np.eye(n)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="`radius` must be positive and finite, got 0"):
        UnitSpectrahedron(0)


def test_fantope_matches_sdp():
    n, k = 5, 2
    eye = np.eye(n)
    ref = Reference((n, n), lambda X: [X >> 0, eye - X >> 0, cp.trace(X) == k], CLARABEL)
    lmo = Fantope(k)
    for D in symmetric(20, n):
        atom = lmo(D)
        assert close(atom.dot(D), ref((D + D.T) / 2), CONE_TOL)
        assert lmo.violation(atom.to_dense()) <= 1e-9
    assert Fantope(k, dim=n).diameter() == pytest.approx(2.0)
    assert lmo.violation(2 * eye / n * k) == pytest.approx(1.0)  # trace 2k
    with pytest.raises(ValueError, match="`k` must be <= `dim`=3, got k=4"):
        Fantope(4, dim=3)
    with pytest.raises(ShapeError, match="smaller than k=2"):
        Fantope(2)(np.zeros((1, 1)))


# ------------------------------------------------------------------------ Birkhoff
def test_birkhoff_flat_direction_matches_lp():
    n = 4

    def constraints(x):
        X = cp.reshape(x, (n, n), order="C")
        return [x >= 0, cp.sum(X, axis=1) == 1, cp.sum(X, axis=0) == 1]

    ref = Reference((n * n,), constraints, dict(solver=cp.HIGHS))
    lmo = Birkhoff()
    check_against(lmo, ref, vectors(21, n * n), LP_TOL)
    d = np.random.default_rng(22).standard_normal(n * n)
    flat, square = lmo(d), lmo(d.reshape(n, n))
    assert flat.shape == (n * n,) and square.shape == (n, n) and flat.key == square.key
    with pytest.raises(ShapeError, match="n\\^2 entries, got 8; expected a perfect square"):
        lmo(np.zeros(8))
    with pytest.raises(ShapeError, match=r"got 4; expected 9 \(n=3\)"):
        Birkhoff(3)(np.zeros(4))


# ----------------------------------------------------------------------- duals
def lp_description(lmo, n):
    """(blocks {name: (A, b, sense)}, lower, upper) of the domains with a dual."""
    one = np.ones((1, n))
    if isinstance(lmo, ProbabilitySimplex):
        return {"eq": (one, [lmo.radius])}, 0.0, np.inf
    if isinstance(lmo, UnitSimplex):
        return {"ineq": (one, [lmo.radius])}, 0.0, np.inf
    if isinstance(lmo, UnitHyperSimplex):
        return {"ineq": (one, [lmo.k * lmo.radius])}, 0.0, lmo.radius
    if isinstance(lmo, HyperSimplex):
        return {"eq": (one, [lmo.k * lmo.radius])}, 0.0, lmo.radius
    if isinstance(lmo, Polytope):
        return ({"ineq": (lmo.A_ub.toarray(), lmo.b_ub), "eq": (lmo.A_eq.toarray(), lmo.b_eq)},
                lmo.lower, lmo.upper)
    assert isinstance(lmo, Box)
    return {}, lmo._lo_flat, lmo._up_flat


def check_dual(lmo, d, dual: DualSolution, tol=1e-8):
    n = d.size
    blocks, lower, upper = lp_description(lmo, n)
    lower = np.broadcast_to(lower, (n,))
    upper = np.broadcast_to(upper, (n,))
    rc = d.reshape(-1).copy()
    value = 0.0
    assert set(dual.multipliers) == set(blocks)
    for name, (A, b) in blocks.items():
        y = dual.multipliers[name]
        rc -= np.asarray(A).T @ y
        value += float(np.dot(b, y))
        if name == "ineq":
            assert np.all(y <= tol)
    np.testing.assert_allclose(dual.reduced_costs, rc, atol=tol * (1 + np.abs(d).max()))
    v = lmo(d).to_dense().reshape(-1)
    scale = 1 + np.abs(d).max()
    # complementary slackness: a positive reduced cost at the lower bound, negative at the upper
    pos, neg = dual.reduced_costs > tol * scale, dual.reduced_costs < -tol * scale
    np.testing.assert_allclose(v[pos], lower[pos], atol=1e-9)
    np.testing.assert_allclose(v[neg], upper[neg], atol=1e-9)
    # the value is the dual objective, equal to the oracle's (strong duality)
    rcv = dual.reduced_costs
    value += float(np.sum(np.where(rcv > 0, rcv * np.where(rcv > 0, lower, 0), 0)))
    value += float(np.sum(np.where(rcv < 0, rcv * np.where(rcv < 0, upper, 0), 0)))
    assert close(dual.value, value, 1e-9)
    assert close(dual.value, float(np.dot(d.reshape(-1), v)), tol)


@pytest.mark.parametrize("make", [
    lambda: ProbabilitySimplex(2.0), lambda: UnitSimplex(1.5), lambda: HyperSimplex(3, 0.5),
    lambda: UnitHyperSimplex(3, 2.0), lambda: Box(-1.0, np.arange(1.0, 11.0)),
    lambda: LinfBall(2.0), lambda: Hypercube(),
    lambda: Polytope(*random_polytope(23), bounds=(-3, 3)),
], ids=["simplex", "unit-simplex", "hypersimplex", "unit-hypersimplex", "box", "linf",
        "hypercube", "polytope"])
def test_dual_solutions_certify_the_oracle(make):
    lmo = make()
    for d in vectors(24, 10):
        check_dual(lmo, d, lmo.dual_solution(d))


def test_dual_solution_default_says_which_domains_have_one():
    with pytest.raises(NotImplementedError, match="KNormBall does not implement dual_solution"):
        KNormBall(2).dual_solution(np.ones(3))


# ------------------------------------------------------------------- violations
def test_violations_are_inf_for_non_finite_points():
    cases = [
        (HyperSimplex(2), np.array([1.0, np.nan, 0.0])),
        (UnitHyperSimplex(2), np.array([np.inf, 0.0])),
        (KNormBall(2), np.array([np.nan, 0.0])),
        (OrderedWeightedL1Ball([1.0, 0.5]), np.array([np.nan, 0.0])),
        (GroupL1Ball([[0], [1]]), np.array([np.inf, 0.0])),
        (ScaledL1Ball(-1.0, 1.0), np.array([np.nan, 0.0])),
        (Ellipsoid(np.eye(2)), np.array([np.nan, 0.0])),
        (Polytope(bounds=[(0, 1), (0, 1)]), np.array([np.nan, 0.0])),
        (ConvexHull(np.eye(2)), np.array([np.nan, 0.0])),
        (UnitSpectrahedron(), np.array([[np.nan, 0.0], [0.0, 1.0]])),
        (Fantope(1), np.array([[np.nan, 0.0], [0.0, 1.0]])),
    ]
    for lmo, x in cases:
        assert lmo.violation(x) == np.inf, lmo


def test_a_point_of_another_size_than_the_domain_is_named():
    # L1Ball(dim=3).violation of 5 entries answered 0.0 (inside), Box raised ShapeError
    for lmo in (fw.L1Ball(1.0, dim=3), fw.L2Ball(1.0, dim=3), fw.LpBall(3.0, 1.0, dim=3),
                fw.LinfBall(1.0, dim=3), fw.ProbabilitySimplex(dim=3),
                fw.UnitSimplex(dim=3), fw.Box(np.zeros(3), np.ones(3))):
        with pytest.raises(fw.ShapeError, match="has 5 entries, expected 3"):
            lmo.violation(np.full(5, 0.1))
        assert not lmo.is_feasible(np.full(5, 0.1))
        assert lmo.violation(np.array([0.2, 0.3, 0.5])) == 0.0


@pytest.mark.parametrize("make", [
    lambda: KNormBall(3, 2.0, dim=7), lambda: OrderedWeightedL1Ball(np.linspace(3, 1, 7), 2.0),
    lambda: GroupL1Ball([[0, 1, 2], [3], [4, 5, 6]], 2.0),
    lambda: Ellipsoid(np.diag(np.arange(1.0, 8.0)), np.ones(7), 2.0),
    lambda: ScaledL1Ball(-np.arange(1.0, 8.0), np.ones(7)),
], ids=["knorm", "owl", "group-l1", "ellipsoid", "scaled-l1"])
def test_violation_is_the_relative_excess_of_the_gauge(make):
    # a ball's point moved twice as far from the centre has gauge 2: violation 1
    lmo = make()
    center = getattr(lmo, "center", None)
    if isinstance(lmo, ScaledL1Ball):
        center = (lmo._lo + lmo._up) / 2
    center = np.zeros(7) if center is None else center
    for d in vectors(29, 7, count=10)[:-1]:
        v = lmo(d).to_dense()
        assert lmo.violation(v) <= 1e-12
        assert lmo.violation(center + 2 * (v - center)) == pytest.approx(1.0, rel=1e-9)
        assert lmo.violation(center + 0.5 * (v - center)) == 0.0


def vertex_diameter(points):
    P = np.array([np.ravel(p) for p in points], dtype=float)
    return max(np.linalg.norm(a - b) for a, b in itertools.combinations(P, 2))


def subsets(n, k, r):
    for S in itertools.combinations(range(n), k):
        v = np.zeros(n)
        v[list(S)] = r
        yield v


def test_diameters_equal_the_largest_distance_between_extreme_points():
    n, r = 5, 1.5
    E = np.eye(n)
    signs = [np.array(s) for s in itertools.product([-1.0, 1.0], repeat=n)]
    w = np.array([3.0, 2.0, 2.0, 0.5, 0.5])
    owl_points = [r / w[:j].sum() * np.array(s) * v for j in range(1, n + 1)
                  for v in subsets(n, j, 1.0) for s in signs[:: 2 ** (n - 2)]]
    owl_points += [-p for p in owl_points]
    lo, up = -np.arange(1.0, n + 1), np.ones(n)
    c = (lo + up) / 2
    A = np.diag(np.arange(1.0, n + 1))
    cases = [
        (HyperSimplex(2, r, dim=n), list(subsets(n, 2, r))),
        (UnitHyperSimplex(3, r, dim=n),
         [np.zeros(n)] + [v for k in (1, 2, 3) for v in subsets(n, k, r)]),
        (KNormBall(2, r, dim=n), [*(r * E), *(-r * E), *(r / 2 * s for s in signs)]),
        (OrderedWeightedL1Ball(w, r), owl_points),
        (ScaledL1Ball(lo, up), [c + (up - c) * e for e in E] + [c + (lo - c) * e for e in E]),
        (Ellipsoid(A, np.ones(n), r), [np.ones(n) + r * e / np.sqrt(A[i, i]) * s
                                       for i, e in enumerate(E) for s in (-1, 1)]),
        (Fantope(2, dim=4), [np.diag([1.0, 1, 0, 0]), np.diag([0.0, 0, 1, 1])]),
        (UnitSpectrahedron(r, dim=3), [r * np.diag(e) for e in np.eye(3)] + [np.zeros((3, 3))]),
    ]
    for lmo, points in cases:
        assert all(lmo.violation(p) <= 1e-12 for p in points), lmo
        assert lmo.diameter() == pytest.approx(vertex_diameter(points), rel=1e-12), lmo
    # the group-l1 ball and the hull: the bound holds for every pair of answers
    for lmo in (GroupL1Ball([[0, 1], [2, 3, 4]], r), ConvexHull(np.random.default_rng(30)
                                                                .standard_normal((12, n)))):
        answers = [lmo(d).to_dense() for d in vectors(31, n, count=30)[:-1]]
        assert vertex_diameter(answers) <= lmo.diameter() * (1 + 1e-12)


def test_reprs_name_the_parameters():
    assert repr(HyperSimplex(2, 3.0)) == "HyperSimplex(k=2, radius=3.0)"
    assert repr(KNormBall(2, dim=4)) == "KNormBall(k=2, radius=1.0, dim=4)"
    assert repr(Polytope(bounds=[(0, 1)] * 3)) == "Polytope(n=3, ineq=0, eq=0)"
    assert repr(Fantope(2)) == "Fantope(k=2, dim=None)"
    assert repr(GroupL1Ball([[0, 1], [2]])) == "GroupL1Ball(groups=2, dim=3, radius=1.0)"

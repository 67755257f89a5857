"""Away-step and pairwise Frank-Wolfe: linear convergence, invariants, warm starts.

Reference solutions are independent of the solvers: problems are built from
their KKT conditions (the optimum is known in closed form), or solved with
cvxpy; active-set invariants are recomputed from the atoms one by one.
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frankwolfe as fw
from frankwolfe import (
    LMO,
    ActiveSet,
    Atom,
    FunctionObjective,
    InfeasibleError,
    L1Ball,
    ProbabilitySimplex,
    away_step_frank_wolfe,
    frank_wolfe,
    minimize,
    pairwise_frank_wolfe,
)
from frankwolfe.objectives.least_squares import LeastSquares
from frankwolfe.objectives.quadratic import QuadraticObjective


def blended(*args, **kwargs):
    return pairwise_frank_wolfe(*args, blended=True, **kwargs)


METHODS = {"afw": away_step_frank_wolfe, "pfw": pairwise_frank_wolfe, "bpfw": blended}


# -- problems with a known optimum (KKT construction) ---------------------------
def simplex_problem(n=100, face=5, seed=0):
    """Strongly convex quadratic over the simplex; optimum in the relative
    interior of a ``face``-vertex face, with strict complementarity."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = (U * rng.uniform(1.0, 4.0, n)) @ U.T
    Q = (Q + Q.T) / 2
    support = rng.choice(n, face, replace=False)
    x_star = np.zeros(n)
    x_star[support] = rng.dirichlet(np.ones(face))
    lam = 0.3
    g_star = lam + rng.uniform(0.1, 1.0, n)  # larger than lam off the face ...
    g_star[support] = lam  # ... and equal to it on the face
    c = g_star - Q @ x_star  # grad f(x*) = Q x* + c = g*
    return QuadraticObjective(Q, c), ProbabilitySimplex(dim=n), x_star, support


def lasso_problem(n=100, m=300, s=20, seed=0):
    """Least squares over an l1 ball (m > n: strongly convex) with a
    ``s``-sparse optimum on the ball's boundary, strict complementarity."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n)) / np.sqrt(m)
    support = rng.choice(n, s, replace=False)
    x_star = np.zeros(n)
    x_star[support] = rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s)
    lam = 1.0
    g_star = rng.uniform(-0.5, 0.5, n) * lam  # |g_i| < lam off the support
    g_star[support] = -lam * np.sign(x_star[support])
    r = A @ np.linalg.solve(A.T @ A, g_star)  # A^T r = g*, r = A x* - b
    b = A @ x_star - r
    return LeastSquares(A, b), L1Ball(np.abs(x_star).sum(), dim=n), x_star, support


PROBLEMS = {"simplex": simplex_problem, "lasso": lasso_problem}


def log_gap_slope(gaps: np.ndarray) -> float:
    """Least-squares slope of log10(gap) against the iteration, last half of the run."""
    k = np.arange(gaps.size)
    half = gaps.size // 2
    return float(np.polyfit(k[half:], np.log10(gaps[half:]), 1)[0])


@pytest.mark.parametrize("problem", ["simplex", "lasso"])
@pytest.mark.parametrize("method", ["afw", "pfw", "bpfw"])
@pytest.mark.parametrize("step", ["exact", "short", "adaptive"])
def test_linear_convergence_where_frank_wolfe_stalls(problem, method, step):
    f, lmo, x_star, support = PROBLEMS[problem]()
    budget = 3000
    res = METHODS[method](f, lmo, step_size=step, tol=1e-10, max_iter=budget)
    assert res.success and res.gap <= 1e-10
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)
    gaps = res.history["gap"]
    assert log_gap_slope(gaps) < -2e-3  # decades per iteration
    # exact active set: the optimum's face (strict complementarity identifies it)
    active = {a.key[1] for a in res.active_set.atoms}
    assert active == set(support.tolist())
    assert res.extra["n_drop_steps"] >= 1 or method == "bpfw"


@pytest.mark.parametrize("problem", ["simplex", "lasso"])
def test_frank_wolfe_stalls_with_the_same_budget(problem):
    f, lmo, x_star, _ = PROBLEMS[problem]()
    res = frank_wolfe(f, lmo, step_size="exact", tol=1e-10, max_iter=3000)
    gaps = res.history["gap"]
    assert np.nanmin(gaps) > 1e-4
    assert log_gap_slope(gaps) > -2e-3  # sublinear: the linear-rate bound above is not met


def test_optimum_matches_cvxpy():
    rng = np.random.default_rng(7)
    m, n = 30, 40  # n > m: not strongly convex, the solution is still unique in f
    A = rng.standard_normal((m, n))
    b = rng.standard_normal(m)
    f = LeastSquares(A, b)
    radius = 2.0
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL)
    for method in METHODS.values():
        res = method(f, L1Ball(radius, dim=n), tol=1e-9, max_iter=20000)
        assert res.success
        assert res.fun == pytest.approx(prob.value, abs=1e-7)
        assert res.fun - res.gap <= prob.value + 1e-7  # the certificate brackets f*

    Q = rng.standard_normal((n, n))
    Q = Q @ Q.T / n
    c = rng.standard_normal(n)
    y = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(y, cp.psd_wrap(Q)) + c @ y),
                      [y >= 0, cp.sum(y) == 1])
    prob.solve(solver=cp.CLARABEL)
    res = away_step_frank_wolfe(QuadraticObjective(Q, c), ProbabilitySimplex(dim=n), tol=1e-10,
                                max_iter=20000)
    assert res.success and res.fun == pytest.approx(prob.value, abs=1e-7)
    np.testing.assert_allclose(res.x, y.value, atol=1e-4)


# -- property test: invariants over random problems and all step rules ----------
def quadratic_function_objective(Q: np.ndarray, c: np.ndarray) -> FunctionObjective:
    """The same quadratic through plain callables (the generic tracker)."""
    return FunctionObjective(
        lambda x: 0.5 * x @ Q @ x + c @ x,
        lambda x: Q @ x + c,
        exact_step=lambda x, d, g: -(g @ d) / max(d @ Q @ d, 1e-300),
        smoothness=max(float(np.linalg.eigvalsh(Q)[-1]), 1e-12),
    )


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 12),
    domain=st.sampled_from(["simplex", "l1"]),
    method=st.sampled_from(sorted(METHODS)),
    step=st.sampled_from(["exact", "short", "adaptive", "agnostic"]),
    max_iter=st.integers(0, 80),
    resum_every=st.sampled_from([1, 3, 100]),
    tracked=st.booleans(),
)
def test_active_set_invariants_property(seed, n, domain, method, step, max_iter, resum_every,
                                        tracked):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, max(1, n - 1)))
    Q = B @ B.T + 0.01 * np.eye(n)
    c = rng.standard_normal(n) * 3
    f = QuadraticObjective(Q, c) if tracked else quadratic_function_objective(Q, c)
    lmo = ProbabilitySimplex(dim=n) if domain == "simplex" else L1Ball(1.5, dim=n)
    res = METHODS[method](f, lmo, step_size=step, tol=0.0, max_iter=max_iter,
                          resum_every=resum_every)
    S = res.active_set
    w = S.weights
    assert len(S) >= 1 and np.all(w >= 0)
    assert abs(w.sum() - 1.0) <= 1e-12
    assert len(set(S.keys)) == len(S)
    x_sum = np.zeros(n)
    for a, wa in S:
        assert lmo.is_feasible(a.to_dense(), tol=1e-12)
        x_sum += wa * a.to_dense()
    assert np.linalg.norm(res.x - x_sum) <= 1e-10 * max(1.0, np.linalg.norm(x_sum))
    assert lmo.is_feasible(res.x, tol=1e-12)
    assert res.history["active_set_size"][-1] == len(S)
    # monotone rules never end above the starting vertex
    if step != "agnostic":
        assert res.fun <= f.value(lmo.initial_point((n,)).to_dense()) + 1e-9


# -- starts -------------------------------------------------------------------
def small_problem():
    y = np.array([0.8, 0.6, -0.2, 0.1])
    f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y,
                          exact_step=lambda x, d, g: -(g @ d) / (d @ d), smoothness=1.0)
    # projection of y onto the simplex, by hand: tau = 0.2 -> (0.6, 0.4, 0, 0)
    return f, ProbabilitySimplex(dim=4), np.array([0.6, 0.4, 0.0, 0.0])


@pytest.mark.parametrize("method", sorted(METHODS))
def test_warm_start_from_active_set(method):
    f, lmo, x_star = small_problem()
    first = METHODS[method](f, lmo, tol=1e-12)
    warm = first.active_set
    before = (warm.keys, warm.weights)
    again = METHODS[method](f, lmo, x0=warm, tol=1e-12)
    assert again.nit == 0 and again.success
    np.testing.assert_allclose(again.x, x_star, atol=1e-12)
    assert warm.keys == before[0] and np.array_equal(warm.weights, before[1])  # not modified
    # a warm start that is not optimal continues from its combination
    mixed = ActiveSet([lmo(-np.eye(4)[i]) for i in range(4)], [0.25] * 4)
    res = METHODS[method](f, lmo, x0=mixed, tol=1e-12)
    assert res.success
    np.testing.assert_allclose(res.x, x_star, atol=1e-10)
    assert sorted(res.active_set.keys) == [("e", 0), ("e", 1)]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_vertex_starts_and_non_vertex_error(method):
    f, lmo, x_star = small_problem()
    res = METHODS[method](f, lmo, x0=Atom.sparse([3], [1.0], 4, key=("e", 3)), tol=1e-12)
    np.testing.assert_allclose(res.x, x_star, atol=1e-10)
    res = METHODS[method](f, lmo, x0=np.eye(4)[2], tol=1e-12)  # an array that is a vertex
    np.testing.assert_allclose(res.x, x_star, atol=1e-10)
    # an interior array: decomposed by the simplex (decompose), refused by a domain
    # without a cheap decomposition
    res = METHODS[method](f, lmo, x0=np.full(4, 0.25), tol=1e-12)
    np.testing.assert_allclose(res.x, x_star, atol=1e-10)
    with pytest.raises(ValueError, match="ActiveSet"):
        METHODS[method](f, fw.KSparsePolytope(2, 1.0, dim=4), x0=np.full(4, 0.25))
    bad = ActiveSet([np.array([2.0, -1.0, 0, 0]), np.array([0.0, 1.0, 0, 0])], [0.5, 0.5])
    with pytest.raises(InfeasibleError, match="warm-start"):
        METHODS[method](f, lmo, x0=bad)
    with pytest.raises(fw.ShapeError, match="x0"):
        METHODS[method](f, lmo, x0=ActiveSet([np.array([1.0, 0.0])]))
    with pytest.raises(ValueError, match="resum_every"):
        METHODS[method](f, lmo, resum_every=0)


class DenseSimplex(LMO):
    """The probability simplex answering with dense arrays (dense storage)."""

    def extreme_point(self, direction):
        v = np.zeros_like(direction)
        v[np.argmin(direction)] = 1.0
        return v

    def violation(self, x):
        return ProbabilitySimplex().violation(x)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_dense_atoms_match_sparse_atoms(method):
    f, lmo, x_star, support = simplex_problem(n=40, face=4, seed=2)
    sparse = METHODS[method](f, lmo, tol=1e-10, step_size="exact", max_iter=2000)
    dense = METHODS[method](f, DenseSimplex(), x0=np.eye(40)[np.argmin(np.ones(40))],
                            tol=1e-10, step_size="exact", max_iter=2000)
    assert sparse.success and dense.success
    assert dense.active_set._mode == "dense" and sparse.active_set._mode == "sparse"
    np.testing.assert_allclose(dense.x, x_star, atol=1e-7)
    np.testing.assert_allclose(sparse.x, x_star, atol=1e-7)


def test_minimize_methods_and_history():
    f, lmo, x_star = small_problem()
    assert {"away", "pairwise"} <= set(fw.available_methods())
    for method, opts in [("away", {}), ("pairwise", {}), ("pairwise", {"blended": True})]:
        res = minimize(f, lmo, method=method, tol=1e-12, **opts)
        assert res.success
        np.testing.assert_allclose(res.x, x_star, atol=1e-10)
        assert "active_set_size" in res.history.columns
        assert isinstance(res.active_set, ActiveSet)
    res = minimize(f, lmo, method="pairwise", blended=True)
    assert res.method == "pairwise" and res.extra["blended"] is True


def test_drift_control_resyncs_the_tracker():
    from frankwolfe.algorithms.away import _AwayStep

    f, lmo, _ = small_problem()
    S = ActiveSet([lmo(-np.eye(4)[0]), lmo(-np.eye(4)[1])], [0.5 + 1e-9, 0.5])  # sum 1 + 1e-9
    S._w[0] += 1e-13  # a drifted weight
    variant = _AwayStep(S, resum_every=1, sparsify_tol=1e-15)
    tracker = f.tracker(np.array([0.5, 0.5, 0.0, 0.0]) + 1e-9)  # a drifted iterate
    variant.start(tracker, None, lmo)
    variant.maintain()
    w = variant.active.weights
    assert abs(w.sum() - 1) < 1e-15
    x_sum = sum(wa * a.to_dense() for a, wa in variant.active)
    np.testing.assert_allclose(tracker.x, x_sum, rtol=0, atol=1e-16)
    assert variant.counts["n_resyncs"] == 1
    variant.maintain()  # no drift left: no second resync
    assert variant.counts["n_resyncs"] == 1


class _BufferSimplex(fw.LMO):
    """The probability simplex's oracle answering from one buffer it overwrites on every
    call (an oracle written to avoid allocations)."""

    def __init__(self, n):
        self.buf = np.zeros(n)
        self.shape = (n,)

    def extreme_point(self, g):
        self.buf[:] = 0.0
        self.buf[np.argmin(g)] = 1.0
        return self.buf


def _simplex_projection(y):
    """Euclidean projection onto the probability simplex, by the sort-and-threshold closed
    form (Held, Wolfe and Crowder), written here independently of the library."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


@pytest.mark.parametrize("method", ["away", "pairwise", "bpcg", "bcg"])
def test_an_oracle_reusing_its_output_buffer_keeps_the_active_atoms(method):
    y = np.array([0.5, 0.3, 0.2, -0.4])
    f = QuadraticObjective(np.eye(4), -y)            # 1/2 ||x||^2 - <y, x>: projection of y
    lmo = _BufferSimplex(4)
    res = minimize(f, lmo, method=method, tol=1e-9, max_iter=2000)
    np.testing.assert_allclose(res.x, _simplex_projection(y), atol=1e-6)
    # every stored atom is a distinct vertex, whatever the buffer holds now
    vertices = {tuple(a.to_dense()) for a, _ in res.active_set}
    assert len(vertices) == len(res.active_set)
    assert all(sorted(v) == [0.0, 0.0, 0.0, 1.0] for v in vertices)


class _SignedZeroL1(fw.LMO):
    """The l1 ball of radius 2 written the way a user writes it: its vertices carry
    ``-0.0`` or ``0.0`` off the chosen coordinate, after the signs of the direction."""

    def __init__(self, n):
        self.shape = (n,)

    def extreme_point(self, g):
        i = int(np.argmax(np.abs(g)))
        return -2.0 * np.sign(g) * (np.arange(g.size) == i)


def test_vertices_differing_only_in_signed_zeros_are_one_atom():
    n = 7
    y = np.array([0.3, -0.2, 0.25, -0.15, 0.1, -0.05, 0.2])    # inside the ball: x* = y
    f = QuadraticObjective(np.eye(n), -y)
    res = minimize(f, _SignedZeroL1(n), method="pairwise", tol=1e-10, max_iter=3000)
    np.testing.assert_allclose(res.x, y, atol=1e-6)
    # distinct vertices counted by value (a tuple compares -0.0 equal to 0.0)
    vertices = {tuple(a.to_dense()) for a, _ in res.active_set}
    assert len(res.active_set) == len(vertices) <= 2 * n

"""Quadratic assignment on the Birkhoff polytope (frankwolfe.applications.matching).

Independent references: objectives recomputed here with plain numpy sums,
brute-force enumeration of all permutations (n <= 7), central finite
differences, dense grids for the line search, scipy's
``quadratic_assignment`` (FAQ) from the same start, and the published
QAPLIB optimal values (SOURCE.md of the shared data).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import quadratic_assignment
from sklearn.exceptions import ConvergenceWarning

from frankwolfe import available_methods
from frankwolfe.applications.matching import (
    QAPObjective,
    TabuSearch,
    barycenter,
    birkhoff_decomposition,
    project_to_permutation,
    qap_value,
    random_doubly_stochastic,
    read_qaplib,
    read_qaplib_solution,
    sinkhorn,
    solve_qap,
    swap_deltas,
    two_opt,
)
from frankwolfe.applications.matching.qaplib import QAPLIBConventionWarning
from frankwolfe.errors import InfeasibleError, ShapeError

# Published optimal values (QAPLIB; SOURCE.md of the shared data).
QAPLIB_BEST = {"chr12a": 9552, "had12": 1652, "nug12": 578, "tai12a": 224416}


def objective_sum(A, B, p):
    """sum_{i,j} A[i, j] B[p(i), p(j)] by an explicit double sum (reference)."""
    n = len(p)
    return float(sum(A[i, j] * B[p[i], p[j]] for i in range(n) for j in range(n)))


def brute_force(A, B):
    """Optimal value over all n! permutations."""
    n = A.shape[0]
    perms = np.array(list(itertools.permutations(range(n))))
    Bp = B[perms[:, :, None], perms[:, None, :]]
    return float((Bp * A).sum(axis=(1, 2)).min())


def random_instance(seed, n, kind="int"):
    rng = np.random.default_rng(seed)
    if kind == "int":
        A = rng.integers(0, 10, (n, n)).astype(float)
        B = rng.integers(0, 10, (n, n)).astype(float)
    elif kind == "sym":
        A = rng.integers(0, 10, (n, n)).astype(float)
        B = rng.integers(0, 10, (n, n)).astype(float)
        A, B = A + A.T, B + B.T
        np.fill_diagonal(A, 0)
        np.fill_diagonal(B, 0)
    else:
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return A, B


@pytest.fixture
def qaplib(shared_data):
    folder = shared_data / "qaplib"
    if not folder.is_dir():
        pytest.skip(f"no QAPLIB folder at {folder}")
    return folder


# -- objective -----------------------------------------------------------------

def test_objective_matches_permutation_sum_and_scipy_convention():
    A, B = random_instance(0, 6)
    f = QAPObjective(A, B)
    assert f.convex is False
    rng = np.random.default_rng(1)
    for _ in range(5):
        p = rng.permutation(6)
        P = np.eye(6)[p]  # P[i, p(i)] = 1
        assert f.value(P) == pytest.approx(objective_sum(A, B, p), rel=1e-12)
        assert f.value(P) == pytest.approx(np.trace(A.T @ P @ B @ P.T), rel=1e-12)
        res = quadratic_assignment(A, B, options={"partial_guess": np.c_[np.arange(6), p]},
                                   method="2opt")
        assert res.fun == pytest.approx(objective_sum(A, B, res.col_ind), rel=1e-12)


def test_gradient_matches_finite_differences():
    A, B = random_instance(2, 5, "real")
    f = QAPObjective(A, B)
    X = np.random.default_rng(3).standard_normal((5, 5))
    g = f.gradient(X)
    h = 1e-6
    fd = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        fd[idx] = (f.value(X + E) - f.value(X - E)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    val, g2 = f.value_and_gradient(X)
    assert val == pytest.approx(f.value(X), rel=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-13, atol=1e-13)
    V = np.random.default_rng(4).standard_normal((5, 5))
    hv_fd = (f.gradient(X + h * V) - f.gradient(X - h * V)) / (2 * h)
    np.testing.assert_allclose(f.hessian_vector_product(X, V), hv_fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_exact_step_is_the_best_step_on_a_grid(seed):
    # Frank-Wolfe directions v - x on random instances: convex and concave
    # cases both occur; compare the clipped step with a dense grid on [0, 1].
    A, B = random_instance(seed, 6, "real" if seed % 2 else "int")
    f = QAPObjective(A, B)
    rng = np.random.default_rng(100 + seed)
    x = random_doubly_stochastic(6, rng)
    v = np.eye(6)[rng.permutation(6)]
    d = v - x
    g = f.gradient(x)
    slope = float(np.vdot(g, d))
    if slope >= 0:
        d, slope = -d, -slope  # a descent direction; gamma_max then differs, the 1-D fact does not
    gamma = min(1.0, f.exact_step(x, d, g))
    assert gamma >= 0
    grid = np.linspace(0, 1, 20001)
    values = np.array([f.value(x + t * d) for t in grid])
    assert f.value(x + gamma * d) <= values.min() + 1e-9 * (1 + abs(values.min()))


def test_exact_step_concave_direction_goes_to_the_end():
    f = QAPObjective(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[0.0, -1.0], [-1.0, 0.0]]))
    d = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert f.curvature(d) < 0
    x = barycenter(2)
    g = f.gradient(x) + 0.0
    # slope zero at the barycenter, negative curvature: any move helps
    assert f.exact_step(x, d, g) == np.inf


# -- doubly stochastic helpers ---------------------------------------------------

def test_sinkhorn_and_random_start_are_doubly_stochastic():
    rng = np.random.default_rng(5)
    P = sinkhorn(rng.uniform(0.1, 3.0, (7, 7)))
    np.testing.assert_allclose(P.sum(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-12)
    Q = random_doubly_stochastic(9, rng)
    np.testing.assert_allclose(Q.sum(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(Q.sum(axis=1), 1, atol=1e-12)
    assert Q.min() >= 0.5 / 9 - 1e-15  # (J/n + K)/2 with K >= 0
    with pytest.raises(ValueError, match="positive"):
        sinkhorn(np.zeros((3, 3)))


def test_projection_is_the_best_assignment_by_enumeration():
    rng = np.random.default_rng(6)
    P = random_doubly_stochastic(6, rng)
    p = project_to_permutation(P)
    best = max(itertools.permutations(range(6)), key=lambda q: P[np.arange(6), list(q)].sum())
    assert P[np.arange(6), p].sum() == pytest.approx(P[np.arange(6), list(best)].sum(), abs=1e-14)


@pytest.mark.parametrize("n", [1, 4, 8])
def test_birkhoff_decomposition_rebuilds_the_matrix(n):
    P = random_doubly_stochastic(n, np.random.default_rng(n))
    perms, w = birkhoff_decomposition(P)
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-14)
    assert len(perms) <= n * n - 2 * n + 2 if n > 1 else len(perms) == 1
    for p in perms:
        assert sorted(p.tolist()) == list(range(n))
    rebuilt = sum(wi * np.eye(n)[p] for wi, p in zip(w, perms))
    np.testing.assert_allclose(rebuilt, P, atol=1e-10)


def test_doubly_stochastic_helpers_refuse_what_they_cannot_answer():
    """birkhoff_decomposition rebuilt [[1.5, -.5], [-.5, 1.5]] as I and [[.5, .5], [.2, .2]]
    as J/2; sinkhorn(max_iter=0) returned column sums 0.76 / 1.24 without a word."""
    with pytest.raises(InfeasibleError, match=r"birkhoff_decomposition: `P` must be doubly"):
        birkhoff_decomposition(np.array([[1.5, -0.5], [-0.5, 1.5]]))
    with pytest.raises(InfeasibleError, match="violation 0.6"):
        birkhoff_decomposition(np.array([[0.5, 0.5], [0.2, 0.2]]))
    with pytest.raises(ValueError, match="`P` contains NaN"):
        birkhoff_decomposition(np.array([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(ShapeError, match="non-empty square"):
        birkhoff_decomposition(np.ones((2, 3)) / 2)
    for bad in (-1.0, np.nan):
        with pytest.raises(ValueError, match="`tol` must be a finite number >= 0"):
            birkhoff_decomposition(np.eye(2), tol=bad)
    for bad in ("1", True):  # no number: a TypeError, as for every real argument
        with pytest.raises(TypeError, match="birkhoff_decomposition: `tol` must be a real"):
            birkhoff_decomposition(np.eye(2), tol=bad)
    # a permutation matrix of booleans is doubly stochastic
    perms, w = birkhoff_decomposition(np.eye(3, dtype=bool)[[2, 0, 1]])
    assert perms.tolist() == [[2, 0, 1]] and w.tolist() == [1.0]
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1 ended the scaling with column sums"):
        sinkhorn(M, max_iter=1)
    for kw in ({"max_iter": 0}, {"max_iter": 2.5}, {"tol": np.nan}, {"tol": -1.0}):
        with pytest.raises(ValueError, match=f"sinkhorn: `{next(iter(kw))}` must be"):
            sinkhorn(M, **kw)
    for kw in ({"max_iter": True}, {"tol": True}, {"tol": "1"}, {"tol": 1 + 2j}):
        with pytest.raises(TypeError, match=f"sinkhorn: `{next(iter(kw))}` must be"):
            sinkhorn(M, **kw)  # a bool, text or a complex number: no number of that kind
    for n, error in ((0, ValueError), (2.5, ValueError), (None, TypeError), (True, TypeError)):
        with pytest.raises(error, match="`n` must be a positive integer"):
            barycenter(n)
        with pytest.raises(error, match="`n` must be a positive integer"):
            random_doubly_stochastic(n)
    with pytest.raises(ValueError, match="project_to_permutation: `P` contains NaN"):
        project_to_permutation(np.array([[np.nan, 0.0], [0.0, 1.0]]))
    # a budget beyond the kernel's int64 counter (was an OverflowError)
    A, B = random_instance(5, 5, "int")
    p, _ = two_opt(A, B, np.arange(5), max_swaps=10**30)
    assert sorted(p.tolist()) == list(range(5))


# -- 2-opt ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["int", "sym", "real"])
def test_swap_deltas_match_recomputation(kind):
    A, B = random_instance(7, 7, kind)
    p = np.random.default_rng(8).permutation(7)
    D = swap_deltas(A, B, p)
    base = objective_sum(A, B, p)
    for r, s in itertools.combinations(range(7), 2):
        q = p.copy()
        q[r], q[s] = q[s], q[r]
        assert D[r, s] == pytest.approx(objective_sum(A, B, q) - base, abs=1e-9)
        assert D[s, r] == D[r, s]


@pytest.mark.parametrize("kind", ["int", "sym", "real"])
def test_two_opt_reaches_a_local_minimum(kind):
    A, B = random_instance(9, 9, kind)
    start = np.random.default_rng(10).permutation(9)
    p, n_swaps = two_opt(A, B, start)
    assert sorted(p.tolist()) == list(range(9))
    f = objective_sum(A, B, p)
    assert f <= objective_sum(A, B, start)
    assert n_swaps > 0
    for r, s in itertools.combinations(range(9), 2):  # no exchange improves, by recomputation
        q = p.copy()
        q[r], q[s] = q[s], q[r]
        assert objective_sum(A, B, q) >= f - 1e-9


# -- robust tabu search ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["int", "sym", "real"])
def test_tabu_delta_table_matches_recomputation(kind):
    # the O(1)-updated table of exchange deltas equals the brute-force change of
    # the objective, after every chunk of moves; the tracked value is the objective
    for seed in range(4):
        n = 5 + seed
        A, B = random_instance(60 + seed, n, kind)
        ts = TabuSearch(A, B, np.random.default_rng(seed).permutation(n), random_state=seed)
        scale = np.abs(A).sum() * np.abs(B).max()
        for _ in range(6):
            ts.run(5)
            p = ts.permutation
            base = objective_sum(A, B, p)
            assert ts.fun == pytest.approx(base, abs=1e-9 * scale)
            for r, s in itertools.combinations(range(n), 2):
                q = p.copy()
                q[r], q[s] = q[s], q[r]
                assert ts.delta[r, s] == pytest.approx(objective_sum(A, B, q) - base,
                                                       abs=1e-9 * scale)
        assert ts.n_iter == 30
        assert ts.best_fun == pytest.approx(objective_sum(A, B, ts.best_permutation),
                                            abs=1e-9 * scale)
        assert ts.best_fun <= ts.fun + 1e-9 * scale


def test_tabu_polish_against_brute_force():
    # the reported value is the recomputed objective, never below the enumerated
    # optimum; 300 tabu iterations find the optimum of every one of these
    # 15 small instances (a heuristic; all 15 when written)
    found = 0
    for seed in range(15):
        n, kind = 6 + seed % 2, ("int", "sym", "real")[seed % 3]
        A, B = random_instance(70 + seed, n, kind)
        res = solve_qap(A, B, local_search="tabu", tabu_iter=300, max_iter=5, random_state=seed)
        assert res.local_search == "tabu" and res.tabu_iter == 300
        assert sorted(res.permutation.tolist()) == list(range(n))
        assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), abs=1e-9)
        opt = brute_force(A, B)
        assert res.fun >= opt - 1e-9
        found += res.fun <= opt + 1e-9
    assert found >= 14


def test_time_limit_polishes_with_tabu_search():
    A, B = random_instance(80, 25, "sym")
    res = solve_qap(A, B, time_limit=0.05, random_state=0)
    assert res.local_search == "tabu" and res.tabu_iter > 0
    assert sorted(res.permutation.tolist()) == list(range(25))
    assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), rel=1e-12)
    assert res.fun <= min(r.fun for r in res.runs)  # the polish only improves
    r1 = solve_qap(A, B, local_search="tabu", tabu_iter=200, random_state=3)
    r2 = solve_qap(A, B, local_search="tabu", tabu_iter=200, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(r1.permutation, r2.permutation)


def test_tabu_bad_input_is_named():
    A, B = random_instance(81, 5, "int")
    with pytest.raises(ValueError, match="`local_search` must be one of"):
        solve_qap(A, B, local_search="3opt")
    with pytest.raises(ValueError, match="`tabu_iter` must be a non-negative integer"):
        solve_qap(A, B, local_search="tabu", tabu_iter=-1)
    with pytest.raises(ValueError, match="`permutation` must be a permutation of 0..4"):
        TabuSearch(A, B, [0, 1, 2, 3, 3])


def test_local_search_functions_refuse_what_their_kernels_would_misread():
    # the compiled searches index B with the permutation: an entry out of range read
    # outside the arrays (answers changing from run to run), a mismatched B past its end
    A, B = random_instance(82, 3, "int")
    for fn in (two_opt, swap_deltas, qap_value):
        who = fn.__name__
        for bad in ([0, 1, 7], [0, 0, 1], [0, 1], [0.5, 1, 2], [True, False, True]):
            with pytest.raises(ValueError, match=rf"{who}: `permutation` must be"):
                fn(A, B, bad)
        with pytest.raises(ShapeError, match=rf"{who}: `A` and `B` must have the same shape"):
            fn(A, np.eye(4), [0, 1, 2])
    with pytest.raises(ShapeError, match="TabuSearch: `A` and `B`"):
        TabuSearch(A, np.eye(4), [0, 1, 2])
    with pytest.raises(ValueError, match="`max_swaps` must be a non-negative integer"):
        two_opt(A, B, [0, 1, 2], max_swaps=1.5)
    with pytest.raises(TypeError, match="`tol` must be a real number"):
        two_opt(A, B, [0, 1, 2], tol="0")
    with pytest.raises(TypeError, match="`tabu_iter` must be a non-negative integer or None, "
                                        "got 'x'"):
        solve_qap(A, B, local_search="tabu", tabu_iter="x")
    # whole floats are permutations; the value is the plain sum
    p = np.array([2.0, 0.0, 1.0])
    assert qap_value(A, B, p) == pytest.approx(objective_sum(A, B, [2, 0, 1]), rel=1e-12,
                                               abs=1e-12)


def test_boolean_adjacency_matrices_are_numbers():
    rng = np.random.default_rng(83)
    A, B = rng.random((5, 5)) < 0.5, rng.random((5, 5)) < 0.5
    best = min(objective_sum(A, B, p) for p in itertools.permutations(range(5)))
    res = solve_qap(A, B, restarts=3, random_state=0)
    assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), rel=1e-12, abs=1e-12)
    assert res.fun >= best - 1e-9


# -- solve_qap ---------------------------------------------------------------------

def test_restarts_against_brute_force():
    # 30 small random instances (n = 5..7, integer / symmetric / real): the
    # reported value is always the recomputed objective and never below the
    # enumerated optimum; restarts + 2-opt find the optimum on most of them
    # (a heuristic: a few optima have tiny basins; 26 of these 30 when written).
    found = 0
    for seed in range(30):
        n, kind = 5 + seed % 3, ("int", "sym", "real")[(seed // 3) % 3]
        A, B = random_instance(seed, n, kind)
        res = solve_qap(A, B, restarts=30, max_iter=10, random_state=seed)
        assert sorted(res.permutation.tolist()) == list(range(n))
        assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), abs=1e-9)
        assert res.n_runs == 31
        assert res.fun == min(r.fun for r in res.runs)
        opt = brute_force(A, B)
        assert res.fun >= opt - 1e-9
        found += res.fun <= opt + 1e-9
    assert found >= 25


@pytest.mark.parametrize("seed", range(10))
def test_never_worse_than_scipy_faq_from_the_barycenter(seed):
    n = 8 + seed
    A, B = random_instance(seed, n, ("int", "sym", "real")[seed % 3])
    ref = quadratic_assignment(A, B, method="faq")  # default start: the barycenter
    res = solve_qap(A, B)
    assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), rel=1e-12, abs=1e-12)
    assert res.fun <= ref.fun + 1e-9 * abs(ref.fun)


@pytest.mark.parametrize("seed", range(4))
def test_never_worse_than_scipy_faq_from_a_given_start(seed):
    n = 10
    A, B = random_instance(20 + seed, n, "int")
    P0 = random_doubly_stochastic(n, np.random.default_rng(seed))
    ref = quadratic_assignment(A, B, method="faq", options={"P0": P0})
    res = solve_qap(A, B, P0=P0)
    assert res.runs[0].start == "given"
    assert res.fun <= ref.fun + 1e-9 * abs(ref.fun)


def test_projection_without_local_search_still_matches_scipy():
    # Rounding every iterate passes through scipy's end point: even with
    # no 2-opt the result is never worse (same start, same line search).
    for seed in range(5):
        A, B = random_instance(30 + seed, 12, "int")
        ref = quadratic_assignment(A, B, method="faq")
        res = solve_qap(A, B, local_search=False)
        assert res.runs[0].projected_fun == res.fun
        assert res.fun <= ref.fun + 1e-9 * abs(ref.fun)


@pytest.mark.parametrize("method", ["away", "pairwise"])
def test_active_set_methods(method):
    if method not in available_methods():
        pytest.skip(f"{method} not registered")
    A, B = random_instance(40, 7, "sym")
    res = solve_qap(A, B, method=method, restarts=2, random_state=0)
    assert res.method == method
    assert res.fun == pytest.approx(objective_sum(A, B, res.permutation), abs=1e-9)
    assert res.fun >= brute_force(A, B) - 1e-9
    X = res.x
    assert X.min() >= -1e-12
    np.testing.assert_allclose(X.sum(axis=0), 1, atol=1e-9)
    np.testing.assert_allclose(X.sum(axis=1), 1, atol=1e-9)
    assert res.relaxed_fun == pytest.approx(np.trace(A.T @ X @ B @ X.T), rel=1e-9)


def test_seeded_runs_are_reproducible():
    A, B = random_instance(50, 10, "int")
    r1 = solve_qap(A, B, restarts=3, random_state=7, P0="randomized")
    r2 = solve_qap(A, B, restarts=3, random_state=np.random.default_rng(7), P0="randomized")
    np.testing.assert_array_equal(r1.permutation, r2.permutation)
    assert [r.fun for r in r1.runs] == [r.fun for r in r2.runs]
    assert all(r.start == "randomized" for r in r1.runs)


def test_time_limit_stops_restarts():
    A, B = random_instance(51, 8, "int")
    res = solve_qap(A, B, restarts=50, time_limit=1e-9)
    assert res.n_runs == 1  # the first run is always finished, then the budget is spent


def test_bad_input_is_named():
    A, B = random_instance(52, 4, "int")
    with pytest.raises(ShapeError, match="`A` must be a square"):
        solve_qap(np.ones((3, 4)), B)
    with pytest.raises(ShapeError, match="same shape"):
        solve_qap(A, np.ones((5, 5)))
    with pytest.raises(ValueError, match="NaN"):
        solve_qap(A, np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="`method`"):
        solve_qap(A, B, method="newton")
    with pytest.raises(ValueError, match="`P0`"):
        solve_qap(A, B, P0="center")
    with pytest.raises(ShapeError, match="`P0` must have shape"):
        solve_qap(A, B, P0=np.eye(3))
    with pytest.raises(InfeasibleError, match="doubly stochastic"):
        solve_qap(A, B, P0=np.full((4, 4), 0.3))
    with pytest.raises(ValueError, match="`restarts`"):
        solve_qap(A, B, restarts=-1)
    with pytest.raises(ValueError, match="`time_limit`"):
        solve_qap(A, B, time_limit=0)
    # NaN and strings named (int(nan): "cannot convert float NaN to integer")
    for name, bad in (("restarts", np.nan), ("max_iter", np.nan), ("max_iter", "10"),
                      ("tol", "1e-6"), ("time_limit", "5")):
        error = TypeError if isinstance(bad, str) else ValueError  # text is no number
        with pytest.raises(error, match=rf"`{name}` must be .*got {bad!r}"):
            solve_qap(A, B, **{name: bad})


def test_an_infinite_time_limit_is_no_limit():
    """time_limit=inf made "auto" pick the tabu search with neither a deadline nor an
    iteration budget: the call never returned.  It is the run without a time limit."""
    A, B = random_instance(53, 5, "int")
    res = solve_qap(A, B, time_limit=float("inf"), random_state=0)
    ref = solve_qap(A, B, random_state=0)
    assert res.fun == ref.fun
    np.testing.assert_array_equal(res.permutation, ref.permutation)


# -- QAPLIB ---------------------------------------------------------------------------

def test_qaplib_instances_and_solutions(qaplib):
    for name, best in QAPLIB_BEST.items():
        A, B = read_qaplib(qaplib / f"{name}.dat")
        assert A.shape == B.shape == (12, 12)
        assert A.dtype == np.int64
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the four files use the standard convention
            sol = read_qaplib_solution(qaplib / f"{name}.sln", A, B)
        objective, perm = sol
        assert sol.convention == "1-based"
        assert objective == best
        assert objective_sum(A, B, perm) == best


def test_qaplib_first_tokens_parsed_by_hand(qaplib):
    # chr12a.dat starts "12", then the row "0 90 10 23 43 0 ..." of A.
    A, _ = read_qaplib(qaplib / "chr12a.dat")
    assert A[0, :5].tolist() == [0, 90, 10, 23, 43]
    assert A[1, 0] == 90


@pytest.mark.parametrize("name", sorted(QAPLIB_BEST))
def test_qaplib_same_start_as_scipy_and_above_the_optimum(qaplib, name):
    A, B = read_qaplib(qaplib / f"{name}.dat")
    ref = quadratic_assignment(A, B, method="faq")
    res = solve_qap(A, B)
    assert res.fun == objective_sum(A, B, res.permutation)
    assert res.fun <= ref.fun
    assert res.fun >= QAPLIB_BEST[name]  # published optimum: nothing can beat it
    many = solve_qap(A, B, restarts=14, max_iter=5, random_state=0)
    assert QAPLIB_BEST[name] <= many.fun <= res.fun


def _write_instance(tmp_path, A, B, wrap=5):
    n = A.shape[0]
    tokens = [str(n)] + [str(int(v)) for v in np.concatenate([A.ravel(), B.ravel()])]
    lines = [" ".join(tokens[i:i + wrap]) for i in range(1, len(tokens), wrap)]
    path = tmp_path / "made.dat"
    path.write_text(f"{n}\n\n" + "\n".join(lines) + "\n")
    return path


def _asymmetric_instance():
    # Asymmetric, so a permutation and its inverse give different objectives.
    A, B = random_instance(60, 5, "int")
    p = np.array([1, 3, 4, 0, 2])  # not an involution
    inv = np.argsort(p)
    assert objective_sum(A, B, p) != objective_sum(A, B, inv)
    return A, B, p, inv


def test_reader_wrapped_rows(tmp_path):
    A, B, _, _ = _asymmetric_instance()
    A2, B2 = read_qaplib(_write_instance(tmp_path, A, B, wrap=3))
    np.testing.assert_array_equal(A2, A)
    np.testing.assert_array_equal(B2, B)


def test_a_byte_order_mark_and_commas_read_as_the_plain_file(tmp_path):
    """A UTF-8 byte-order mark glued itself to n ("the first token must be the size n,
    got '\\ufeff12'"); a permutation written with commas needed 14 numbers and found 3."""
    A, B, p, _ = _asymmetric_instance()
    plain = _write_instance(tmp_path, A, B)
    bom = tmp_path / "bom.dat"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    A2, B2 = read_qaplib(bom)
    np.testing.assert_array_equal(A2, A)
    np.testing.assert_array_equal(B2, B)
    value = int(objective_sum(A, B, p))
    sln = tmp_path / "commas.sln"
    sln.write_bytes(b"\xef\xbb\xbf" + f"5 {value}\n".encode()
                    + ",".join(str(i + 1) for i in p).encode() + b"\n")
    sol = read_qaplib_solution(sln, A, B)
    assert sol.objective == value
    np.testing.assert_array_equal(sol.permutation, p)


@pytest.mark.parametrize("convention", ["1-based", "1-based inverse", "0-based", "0-based inverse"])
def test_solution_conventions_are_detected(tmp_path, convention):
    A, B, p, inv = _asymmetric_instance()
    value = int(objective_sum(A, B, p))
    written = inv if "inverse" in convention else p
    base = 1 if convention.startswith("1") else 0
    path = tmp_path / "made.sln"
    path.write_text(f"5 {value}\n" + " ".join(str(i + base) for i in written) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = read_qaplib_solution(path, A, B)
    assert sol.convention == convention
    assert sol.objective == value
    np.testing.assert_array_equal(sol.permutation, p)
    warned = [w for w in caught if issubclass(w.category, QAPLIBConventionWarning)]
    assert len(warned) == (0 if convention == "1-based" else 1)
    if warned:
        assert convention in str(warned[0].message)


def test_malformed_files(tmp_path):
    A, B, p, _ = _asymmetric_instance()
    bad = tmp_path / "short.dat"
    bad.write_text("5\n" + " ".join(["1"] * 49))
    with pytest.raises(ValueError, match=r"1 \+ 2 n\^2 = 51 numbers, found 50"):
        read_qaplib(bad)
    empty = tmp_path / "empty.dat"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match="empty"):
        read_qaplib(empty)
    word = tmp_path / "word.dat"
    word.write_text("1\n3 x\n")
    with pytest.raises(ValueError, match="'x' is not a number"):
        read_qaplib(word)
    sln = tmp_path / "bad.sln"
    sln.write_text("5 100\n1 2 3 4\n")
    with pytest.raises(ValueError, match=r"2 \+ n = 7 numbers"):
        read_qaplib_solution(sln, A, B)
    sln.write_text("4 100\n1 2 3 4\n")
    with pytest.raises(ShapeError, match="n = 4"):
        read_qaplib_solution(sln, A, B)
    sln.write_text("5 100\n1 2 2 4 5\n")
    with pytest.raises(ValueError, match="not a permutation"):
        read_qaplib_solution(sln, A, B)
    value = int(objective_sum(A, B, p))
    sln.write_text(f"5 {value + 1}\n" + " ".join(str(i + 1) for i in p))
    with pytest.raises(ValueError, match="matches no convention"):
        read_qaplib_solution(sln, A, B)
    with pytest.raises(FileNotFoundError):
        read_qaplib(tmp_path / "missing.dat")


@pytest.mark.parametrize("method", ["fw", "away", "pairwise"])
def test_float32_start_is_allowed_its_rounding(method):
    A, B = random_instance(12, 5)
    P = random_doubly_stochastic(5, np.random.default_rng(12))
    P32 = P.astype(np.float32)
    # its rounding puts it beyond the float64 tolerance (1e-8): widened, it is refused
    with pytest.raises(InfeasibleError, match="`P0` must be doubly stochastic"):
        solve_qap(A, B, P0=P32.astype(float), method=method)
    kw = dict(method=method, local_search=False, max_iter=200)
    res = solve_qap(A, B, P0=P32, **kw)
    ref = solve_qap(A, B, P0=P, **kw)
    assert res.runs[0].start == "given"
    assert res.fun == pytest.approx(qap_value(A, B, res.permutation))
    assert res.fun >= brute_force(A, B) - 1e-9
    # the same relaxation from the same start, to float32's rounding
    assert res.relaxed_fun == pytest.approx(ref.relaxed_fun, rel=1e-5)


def test_float32_barycenter_of_three_is_a_qap_start():
    res = solve_qap(np.ones((3, 3)), np.ones((3, 3)), P0=np.full((3, 3), 1 / 3, np.float32))
    assert res.fun == pytest.approx(brute_force(np.ones((3, 3)), np.ones((3, 3))))
    with pytest.raises(InfeasibleError, match="`P0` must be doubly stochastic"):
        solve_qap(np.ones((3, 3)), np.ones((3, 3)),
                  P0=np.full((3, 3), 0.34, np.float32))


def test_sparse_matrices_are_densified():
    import scipy.sparse as sp

    # np.asarray made a 0-d object array of them: "`A` must be a square matrix, got shape ()"
    A, B = random_instance(21, 5)
    res = solve_qap(sp.csr_matrix(A), sp.csr_array(B), local_search=False)
    ref = solve_qap(A, B, local_search=False)
    assert res.fun == ref.fun and np.array_equal(res.permutation, ref.permutation)
    assert res.fun >= brute_force(A, B) - 1e-9
    assert qap_value(sp.coo_matrix(A), B, res.permutation) == pytest.approx(res.fun)
    assert solve_qap(sp.csr_matrix(np.ones((3, 3))), np.ones((3, 3))).fun == 9.0
    with pytest.raises(ValueError, match="`B` must be a real numeric matrix"):
        solve_qap(A, sp.csr_matrix(B * 1j))

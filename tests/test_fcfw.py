"""Fully corrective Frank-Wolfe and its corrective solvers, checked against cvxpy."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qp_reference import assert_block_qp_optimal
from ssvm_reference import ssvm_dual_qp

import frankwolfe as fw
from frankwolfe import (
    Atom,
    FunctionObjective,
    L1Ball,
    LeastSquares,
    Objective,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    away_step_frank_wolfe,
    fully_corrective_frank_wolfe,
    minimize,
)
from frankwolfe.algorithms.corrective import BlockQuadraticQP
from frankwolfe.algorithms.simplex_qp import simplex_qp


def simplex_qp_problem(n=150, seed=0):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + 0.05 * np.eye(n)
    c = rng.standard_normal(n)
    return QuadraticObjective(Q, c), ProbabilitySimplex(dim=n), Q, c


def lasso_problem(m=300, n=500, s=20, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    x_true = np.zeros(n)
    x_true[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    return A, b, float(np.abs(x_true).sum())


def test_simplex_qp_interior_optimum_is_exact_without_a_long_polish():
    # an ill-conditioned G (the Gram matrix of a lasso's atoms) with an interior
    # optimum w* built by hand: G w* + lin = nu 1.  Every weight is free at the
    # solution; the active-set solve gives it (KKT), and only a short polish of
    # its rounding follows (the cap of the degenerate case is 200000 iterations)
    rng = np.random.default_rng(3)
    M = rng.standard_normal((60, 40)) * np.logspace(0, 2, 40)
    G = M.T @ M
    w_star = rng.uniform(0.5, 1.5, 40)
    w_star /= w_star.sum()
    lin = 2.0 - G @ w_star
    w, n_iter = simplex_qp(G, lin, np.full(40, 1.0 / 40))
    np.testing.assert_allclose(w, w_star, rtol=1e-8, atol=1e-12)
    assert n_iter <= 3 * 40 + 20 + 20 * 40 + 100


def test_simplex_qp_matches_cvxpy_with_fewer_iterations_than_afw():
    f, lmo, Q, c = simplex_qp_problem()
    n = c.size
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), [cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    res = fully_corrective_frank_wolfe(f, lmo, tol=1e-10, max_iter=500)
    afw = away_step_frank_wolfe(f, lmo, tol=1e-10, max_iter=20000)
    assert res.success and afw.success
    assert abs(res.fun - prob.value) <= 1e-8 * max(1.0, abs(prob.value))
    assert res.nit < afw.nit
    assert res.extra["n_corrective_qp"] == res.nit
    # zero weights are dropped: every active atom carries mass, and they span x's support
    w = res.active_set.weights
    assert np.all(w > 0)
    support = {a.key[1] for a in res.active_set.atoms}
    assert support == set(np.flatnonzero(res.x).tolist())


def test_lasso_matches_cvxpy_with_fewer_iterations_than_afw():
    A, b, radius = lasso_problem()
    n = A.shape[1]
    f, lmo = LeastSquares(A, b), L1Ball(radius, dim=n)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    res = fully_corrective_frank_wolfe(f, lmo, tol=1e-9, max_iter=500)
    afw = away_step_frank_wolfe(f, lmo, tol=1e-9, max_iter=20000)
    assert res.success and afw.success
    assert abs(res.fun - prob.value) <= 1e-8 * max(1.0, abs(prob.value))
    assert res.nit < afw.nit
    np.testing.assert_allclose(res.x, x.value, atol=1e-6)


class _QuarticObjective(Objective):
    """0.5 ||x - y||^2 + 0.25 sum x^4: smooth, not quadratic; cvxpy form given."""

    def __init__(self, y):
        self.y = np.asarray(y, dtype=float)
        self.shape = self.y.shape

    def value(self, x):
        return 0.5 * float((x - self.y) @ (x - self.y)) + 0.25 * float(np.sum(x**4))

    def gradient(self, x):
        return x - self.y + x**3

    def to_cvxpy(self, x):
        return 0.5 * cp.sum_squares(x - self.y) + 0.25 * cp.sum(cp.power(x, 4))


def test_cvxpy_corrective_on_a_user_objective():
    rng = np.random.default_rng(3)
    n = 40
    y = rng.standard_normal(n) * 2
    f = _QuarticObjective(y)
    radius = 3.0
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(f.to_cvxpy(x)), [cp.norm1(x) <= radius])
    prob.solve(solver=cp.CLARABEL)
    # the corrective solves are as accurate as cvxpy's solver (about 1e-7 here)
    res = fully_corrective_frank_wolfe(f, L1Ball(radius, dim=n), tol=1e-5, max_iter=200)
    assert res.success
    assert res.extra["n_corrective_cvxpy"] >= 1 and res.extra["n_corrective_qp"] == 0
    assert abs(res.fun - prob.value) <= 1e-6 * max(1.0, abs(prob.value))


def test_forced_cvxpy_on_a_quadratic_and_minimize():
    f, lmo, Q, c = simplex_qp_problem(n=40, seed=2)
    qp = minimize(f, lmo, method="fcfw", tol=1e-10)
    via_cvxpy = fully_corrective_frank_wolfe(f, lmo, corrective="cvxpy", tol=1e-7)
    assert qp.success and via_cvxpy.success
    assert qp.method == "fcfw"
    assert via_cvxpy.extra["n_corrective_cvxpy"] >= 1
    assert abs(qp.fun - via_cvxpy.fun) <= 1e-7


def _qp_value(G, lin, w):
    return 0.5 * w @ G @ w + lin @ w


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 25), rank=st.integers(1, 25))
def test_simplex_qp_matches_cvxpy(seed, k, rank):
    """Exact simplex QP on random PSD (also rank-deficient) Gram matrices."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((min(rank, k), k))
    G = B.T @ B
    lin = rng.standard_normal(k)
    w0 = rng.dirichlet(np.ones(k)) if seed % 2 else None
    w, _ = simplex_qp(G, lin, w0)
    assert np.all(w >= 0) and abs(w.sum() - 1) <= 1e-12
    v = cp.Variable(k, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(v, cp.psd_wrap(G)) + lin @ v),
                      [cp.sum(v) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    scale = 1.0 + np.abs(G).max() + np.abs(lin).max()
    assert _qp_value(G, lin, w) <= prob.value + 1e-8 * scale
    # KKT: no coordinate has a smaller gradient than the support's common value
    grad = G @ w + lin
    assert grad.min() >= w @ grad - 1e-8 * scale


def test_bad_input():
    f, lmo, _, _ = simplex_qp_problem(n=10)
    with pytest.raises(ValueError, match="corrective"):
        fully_corrective_frank_wolfe(f, lmo, corrective="newton")
    plain = FunctionObjective(lambda x: float(x @ x), lambda x: 2 * x)
    with pytest.raises(TypeError, match="to_cvxpy"):
        fully_corrective_frank_wolfe(plain, ProbabilitySimplex(dim=10))
    with pytest.raises(TypeError, match="qp"):
        fully_corrective_frank_wolfe(plain, ProbabilitySimplex(dim=10), corrective="qp")
    with pytest.raises(ValueError, match="w0"):
        simplex_qp(np.eye(3), np.zeros(3), np.array([0.5, 0.6, 0.0]))
    # a solver cvxpy lacks failed every corrective solve, each silently replaced by a
    # Frank-Wolfe step; a name in any case is the installed solver's (cvxpy 1.6 reads
    # upper case only)
    for bad in ("NO_SUCH_SOLVER", 3):
        with pytest.raises(ValueError, match=rf"`cvxpy_solver` must be the name of a solver "
                                             rf"cvxpy has installed .*got {bad!r}"):
            fully_corrective_frank_wolfe(f, lmo, corrective="cvxpy", cvxpy_solver=bad)
    res = fully_corrective_frank_wolfe(f, lmo, corrective="cvxpy", cvxpy_solver="clarabel",
                                       tol=1e-7)
    assert res.success and res.extra["n_corrective_failures"] == 0


# -- product domains: one active set per block (the n-slack cutting plane) -----------------


def product_qp_problem(n_blocks=6, m=8, seed=0):
    rng = np.random.default_rng(seed)
    n = n_blocks * m
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + 0.05 * np.eye(n)
    c = rng.standard_normal(n)
    domain = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n_blocks)])
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, Q) + c @ x),
                      [cp.sum(x[i * m:(i + 1) * m]) == 1 for i in range(n_blocks)])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return QuadraticObjective(Q, c), domain, x.value, prob.value


def test_product_domain_matches_cvxpy_with_fewer_iterations_than_the_joint_hull():
    f, domain, x_ref, f_ref = product_qp_problem()
    res = fully_corrective_frank_wolfe(f, domain, tol=1e-10, max_iter=500)
    joint = fully_corrective_frank_wolfe(f, domain, blocks=False, tol=1e-10, max_iter=500)
    assert res.success and joint.success
    assert abs(res.fun - f_ref) <= 1e-8 * max(1.0, abs(f_ref))
    np.testing.assert_allclose(res.x, x_ref, atol=1e-5)
    assert res.nit < joint.nit
    fun = res.history["fun"]
    assert np.all(np.diff(fun) <= 1e-12 * max(1.0, abs(f_ref)))  # monotone
    # one active set per block, on its simplex, summing to the iterate
    assert isinstance(res.active_set, list) and len(res.active_set) == domain.n_blocks
    x = np.zeros(domain.dim)
    for i, S in enumerate(res.active_set):
        assert np.all(S.weights > 0) and abs(S.weights.sum() - 1) <= 1e-12
        x[domain.block_indices[i]] += S.x
    np.testing.assert_allclose(x, res.x, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_block_qp_matches_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n, k, groups = 12, 25, 4
    M = rng.standard_normal((n, 3))
    Q = M @ M.T + 0.01 * np.diag(rng.uniform(0, 1, n) > 0.5)  # semidefinite
    c = rng.standard_normal(n)
    V = rng.standard_normal((k, n)) * (rng.uniform(size=(k, n)) < 0.4)
    blocks = np.sort(rng.integers(0, groups, k))
    blocks[:groups] = np.arange(groups)
    atoms = [Atom(V[j]) for j in range(k)]
    w0 = np.zeros(k)
    for b in range(groups):
        w0[np.flatnonzero(blocks == b)[0]] = 1.0
    qp = BlockQuadraticQP(QuadraticObjective(Q, c), n)
    w, x, sweeps, gap = qp.solve(atoms, blocks, w0, rtol=1e-14, max_sweeps=100000)
    assert_block_qp_optimal(w, x, V, Q, c, blocks, groups)


def _recording_chain():
    from frankwolfe.applications.structured_svm import ChainModel, make_chain

    class RecordingChain(ChainModel):
        """Records every loss-augmented labelling (the generic, uncompiled oracle path)."""

        calls: list = []

        def loss_augmented_decode(self, x, y_true, w):
            yhat = super().loss_augmented_decode(x, y_true, w)
            self.calls.append((id(x), np.array(yhat)))
            return yhat

    X, Y = make_chain(6, n_states=3, n_features=3, length=(2, 4), noise=1.5, random_state=1)
    return RecordingChain(3, 3), X, Y


def _product_hull_dual(model, X, Y, lam, labellings):
    """cvxpy: the SSVM dual over the product of the per-example hulls of ``labellings``."""
    return ssvm_dual_qp(model, X, Y, lam, labellings)


def _seen(model, X, Y, rounds):
    """Labellings per example from the first ``rounds`` oracle rounds (truth included)."""
    pos = {id(x): i for i, x in enumerate(X)}
    seen = [{tuple(np.asarray(y).tolist())} for y in Y]
    for xid, yhat in model.calls[: rounds * len(X)]:
        seen[pos[xid]].add(tuple(yhat.tolist()))
    return seen


@pytest.mark.parametrize("passes", [2, 4])
def test_cutting_plane_optimizes_over_the_product_of_per_example_hulls(passes):
    """The n-slack cutting plane: after ``passes`` oracle rounds the dual iterate is the
    optimum over the product of the per-example hulls of the labellings seen (cvxpy)."""
    from frankwolfe.applications.structured_svm import StructuredSVM

    model, X, Y = _recording_chain()
    lam = 0.1
    model.calls.clear()
    # max_passes counts every oracle round (the closing certificate too): passes + 1
    svm = StructuredSVM(model, lam=lam, solver="cutting_plane", tol=0.0,
                        max_passes=passes + 1, eval_every=10**6).fit(X, Y)
    res = svm.result_
    # rounds 0..passes (the last only certifies) and the final evaluation's round
    assert len(model.calls) == (passes + 2) * len(X)
    f_ref = _product_hull_dual(model, X, Y, lam, _seen(model, X, Y, passes))
    assert res.fun >= f_ref - 1e-9
    # the estimator solves the corrective QP to 1e-3 of the outer gap
    gap_before = res.history["gap"][passes - 1]
    assert res.fun - f_ref <= 1e-3 * gap_before + 1e-12


def test_block_corrective_is_exact_and_joint_hull_is_weaker():
    import scipy.sparse as sps

    from frankwolfe.applications.structured_svm import SSVMDual

    model, X, Y = _recording_chain()
    lam, n, passes = 0.1, len(X), 3
    d = model.size_joint_feature
    h = np.full(d + 1, lam)
    h[-1] = 0.0
    c = np.zeros(d + 1)
    c[-1] = -1.0
    f = QuadraticObjective(sps.diags_array(h, format="csr"), c)
    domain = SSVMDual(model, X, Y, lam)
    start = [domain.blocks[i].vertex(Y[i]) for i in range(n)]
    model.calls.clear()
    res = fully_corrective_frank_wolfe(f, domain, start, corrective_tol=1e-14, tol=0.0,
                                       max_iter=passes)
    assert len(model.calls) == (passes + 1) * n
    f_ref = _product_hull_dual(model, X, Y, lam, _seen(model, X, Y, passes))
    assert abs(res.fun - f_ref) <= 1e-9
    # the hull of the joint vertices (one weight per pass) falls short of the
    # product of the per-example hulls of the very same labellings
    model.calls.clear()
    joint = fully_corrective_frank_wolfe(f, domain, fw.Atom(np.zeros(d + 1), key="truth"),
                                         blocks=False, tol=0.0, max_iter=passes)
    f_ref_joint = _product_hull_dual(model, X, Y, lam, _seen(model, X, Y, passes))
    assert joint.fun > f_ref_joint + 1e-4


def test_block_mode_bad_input():
    f, domain, _, _ = product_qp_problem(n_blocks=3, m=4)
    with pytest.raises(TypeError, match="one Atom per block"):
        fully_corrective_frank_wolfe(f, domain, np.ones(12) / 4)
    with pytest.raises(ValueError, match="one Atom per block"):
        fully_corrective_frank_wolfe(f, domain, [Atom(np.eye(4)[0])] * 2)
    with pytest.raises(ValueError, match="blocks"):
        fully_corrective_frank_wolfe(f, domain, blocks="yes")
    with pytest.raises(TypeError, match="ProductDomain"):
        fully_corrective_frank_wolfe(f, ProbabilitySimplex(dim=12), blocks=True)
    with pytest.raises(ValueError, match="corrective_tol"):
        fully_corrective_frank_wolfe(f, domain, corrective_tol=0.0)


def test_function_objective_takes_its_cvxpy_expression_for_the_cvxpy_corrective_step():
    c = np.array([0.5, -0.2, 1.0, 0.3, 0.0])
    f = fw.FunctionObjective(lambda x: float(np.sum(np.exp(x)) - c @ x),
                             lambda x: np.exp(x) - c,
                             to_cvxpy=lambda x: cp.sum(cp.exp(x)) - c @ x)
    res = fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=5), corrective="cvxpy",
                                          tol=1e-4)  # the cvxpy solver's accuracy
    x = cp.Variable(5)
    ref = cp.Problem(cp.Minimize(cp.sum(cp.exp(x)) - c @ x), [x >= 0, cp.sum(x) == 1])
    ref.solve()
    assert res.success
    assert res.gap <= 1e-4 and res.fun == pytest.approx(ref.value, abs=1e-4)
    # f is 1-strongly convex on x >= 0: ||x - x*||^2 <= 2 gap <= 2e-4
    np.testing.assert_allclose(res.x, x.value, atol=2e-2)
    with pytest.raises(TypeError, match="`to_cvxpy` must be callable, got str"):
        fw.FunctionObjective(np.sum, np.ones_like, to_cvxpy="sum")
    # without it the cvxpy step is refused, naming the method it needs
    plain = fw.FunctionObjective(lambda x: float(np.sum(np.exp(x))), np.exp)
    assert not hasattr(plain, "to_cvxpy")

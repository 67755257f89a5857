"""Block-coordinate Frank-Wolfe: cvxpy optimum, Algorithm 4 transcription, caching."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    LMO,
    Atom,
    L1Ball,
    Objective,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    ShapeError,
    block_coordinate_frank_wolfe,
    minimize,
)
from frankwolfe.algorithms.bcfw.store import LazyAverage
from frankwolfe.algorithms.block_orders import GapSampling

# -- problems -----------------------------------------------------------------


def simplices_problem(n: int = 50, m: int = 3, seed: int = 0):
    """A coupled strongly convex quadratic (Q >= I) over a product of n simplices."""
    rng = np.random.default_rng(seed)
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 20.0), size=n).ravel() + 0.01 * rng.standard_normal(dim)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    return QuadraticObjective(Q, -Q @ y), dom


def cvxpy_solution(f: QuadraticObjective, n: int, m: int) -> np.ndarray:
    x = cp.Variable(n * m)
    cons = [x >= 0] + [cp.sum(x[i * m:(i + 1) * m]) == 1 for i in range(n)]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(f.Q)) + f.c @ x), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return x.value


class FiniteSet(LMO):
    """conv of the rows of ``V`` (a random finite label set); key = row index."""

    def __init__(self, V: np.ndarray) -> None:
        self.V = V
        self.shape = (V.shape[1],)

    def extreme_point(self, direction):
        j = int(np.argmin(self.V @ direction))
        return Atom(self.V[j], key=("y", j))


class SSVMDual(Objective):
    """``f(w, l) = lam/2 ||w||^2 - l`` with ``x = (w, l)``, ``l`` the last entry."""

    def __init__(self, lam: float, d: int) -> None:
        self.lam, self.d = lam, d
        self.shape = (d + 1,)

    def value(self, x):
        return 0.5 * self.lam * float(x[:-1] @ x[:-1]) - float(x[-1])

    def gradient(self, x):
        g = self.lam * x
        g[-1] = -1.0
        return g

    def partial_gradient(self, x, indices):
        g = self.lam * x[indices]
        g[indices == self.d] = -1.0
        return g

    def exact_step_block(self, x, indices, direction, partial_gradient):
        num = -float(partial_gradient @ direction)
        dw = direction[indices != self.d]
        den = self.lam * float(dw @ dw)
        return num / den if den > 0 else (np.inf if num > 0 else 0.0)


def ssvm_problem(n: int = 30, d: int = 40, lam: float = 0.05, seed: int = 0):
    """Random SSVM-shaped dual: block i has labels y with (psi_i(y)/(lam n), L_i(y)/n)
    on coordinates supp_i + {d}; label 0 is the true label (psi = 0, loss 0)."""
    rng = np.random.default_rng(seed)
    psis, losses, supports = [], [], []
    for _ in range(n):
        K = int(rng.integers(3, 8))
        supp = np.sort(rng.choice(d, size=int(rng.integers(5, 15)), replace=False))
        psi = np.zeros((K, d))
        psi[1:, supp] = rng.standard_normal((K - 1, supp.size))
        loss = np.concatenate(([0.0], rng.uniform(0.2, 1.0, K - 1)))
        psis.append(psi)
        losses.append(loss)
        supports.append(supp)
    blocks, idx = [], []
    for psi, loss, supp in zip(psis, losses, supports):
        V = np.column_stack((psi[:, supp] / (lam * n), loss / n))
        blocks.append(FiniteSet(V))
        idx.append(np.append(supp, d))
    dom = ProductDomain(blocks, idx)
    x0 = [np.zeros(a.size) for a in idx]  # alpha at the true labels: w_i = 0, l_i = 0
    return SSVMDual(lam, d), dom, x0, (psis, losses, lam)


def algorithm4(psis, losses, lam, passes, seed):
    """Direct transcription of Algorithm 4 (BCFW for the SSVM dual, line search) of
    Lacoste-Julien et al. (ICML 2013); uniform blocks drawn per pass as
    rng.integers(n, size=n).  Returns the (w, l) after each pass."""
    n, d = len(psis), psis[0].shape[1]
    rng = np.random.default_rng(seed)
    w, ell = np.zeros(d), 0.0
    w_i, ell_i = np.zeros((n, d)), np.zeros(n)
    trace = []
    for _ in range(passes):
        for i in rng.integers(n, size=n):
            y = int(np.argmax(losses[i] - psis[i] @ w))  # loss-augmented decoding
            w_s, ell_s = psis[i][y] / (lam * n), losses[i][y] / n
            dw = w_i[i] - w_s
            num = lam * dw @ w - ell_i[i] + ell_s
            den = lam * dw @ dw
            gamma = 0.0 if num <= 0 else (1.0 if den <= 0 else min(1.0, num / den))
            new_w = (1 - gamma) * w_i[i] + gamma * w_s
            new_ell = (1 - gamma) * ell_i[i] + gamma * ell_s
            w += new_w - w_i[i]
            ell += new_ell - ell_i[i]
            w_i[i], ell_i[i] = new_w, new_ell
        trace.append(np.append(w, ell))
    return trace


# -- done criteria ---------------------------------------------------------------


@pytest.fixture(scope="module")
def simplices():
    f, dom = simplices_problem()
    return f, dom, cvxpy_solution(f, 50, 3)


@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_product_of_simplices_matches_cvxpy(simplices, sampling):
    f, dom, x_ref = simplices
    res = block_coordinate_frank_wolfe(f, dom, block_order=sampling, tol=1e-13, max_iter=2000,
                                       random_state=3)
    assert res.success and res.gap <= 1e-13
    assert dom.is_feasible(res.x, tol=1e-12)
    # strong convexity (Q >= I): ||x - x*||^2 <= 2 gap, so 1e-13 certifies 1e-6
    assert np.max(np.abs(res.x - x_ref)) <= 1e-6
    # the certificate is a true gap: recompute it from the full gradient
    g = f.gradient(res.x)
    assert g @ res.x - g @ dom(g).to_dense() == pytest.approx(res.gap, abs=1e-12)


def test_gap_sampling_needs_fewer_block_steps(simplices):
    f, dom, _ = simplices
    steps = {}
    for sampling in ("uniform", "gap"):
        res = block_coordinate_frank_wolfe(f, dom, block_order=sampling, tol=1e-6,
                                           max_iter=2000, gap_every=1, random_state=3)
        assert res.success and res.gap <= 1e-6
        steps[sampling] = res.extra["n_block_steps"]
    print("block steps to gap 1e-6:", steps)
    assert steps["gap"] < steps["uniform"]


def test_minimize_method_bcfw(simplices):
    f, dom, x_ref = simplices
    res = minimize(f, dom, method="bcfw", block_order="perm", tol=1e-13, max_iter=2000,
                   random_state=0)
    assert res.success and np.max(np.abs(res.x - x_ref)) <= 1e-6


def test_away_and_pairwise_reach_boundary_optimum():
    """Optimum on faces of the simplices: away / pairwise steps converge (linear rate),
    checked against cvxpy."""
    rng = np.random.default_rng(5)
    n, m = 20, 4
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    f = QuadraticObjective(Q, rng.standard_normal(dim))
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    x_ref = cvxpy_solution(f, n, m)
    assert np.sum(x_ref < 1e-8) >= 10  # several active bounds
    for step_type in ("away", "pairwise"):
        res = block_coordinate_frank_wolfe(f, dom, block_step=step_type, tol=1e-13,
                                           max_iter=3000, random_state=1)
        assert res.success, res.message
        assert np.max(np.abs(res.x - x_ref)) <= 1e-6
        assert res.extra["n_drop_steps"] > 0


def test_ssvm_equivalence_with_algorithm4():
    f, dom, x0, (psis, losses, lam) = ssvm_problem()
    assert not dom.disjoint  # blocks overlap: a Minkowski sum
    passes = 15
    trace = []
    res = block_coordinate_frank_wolfe(
        f, dom, x0, block_order="uniform", step_size="exact", tol=0.0, max_iter=passes,
        gap_every=5, random_state=42, callback=lambda s: trace.append(s.x.copy()))
    ref = algorithm4(psis, losses, lam, passes, seed=42)
    assert len(trace) == passes + 1  # pass 0 (start) .. the last pass
    assert np.abs(trace[0]).max() == 0.0
    for k in range(passes):
        np.testing.assert_allclose(trace[k + 1], ref[k], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.x, ref[-1], rtol=0, atol=1e-12)
    # the certified gap of the SSVM dual is the duality gap of BCFWstruct
    n, d = len(psis), psis[0].shape[1]
    w, ell = res.x[:d], res.x[d]
    ys = [int(np.argmax(L - P @ w)) for P, L in zip(psis, losses)]
    w_s = sum(P[y] for P, y in zip(psis, ys)) / (lam * n)
    ell_s = sum(L[y] for L, y in zip(losses, ys)) / n
    assert res.gap == pytest.approx(lam * w @ (w - w_s) - ell + ell_s, abs=1e-12)


def _best_gap_within(history, budget):
    calls, gaps = history["oracle_calls"], history["gap"]
    ok = (calls <= budget) & np.isfinite(gaps)
    return float(np.min(gaps[ok]))


def test_pairwise_with_cache_beats_plain_at_equal_oracle_calls():
    f, dom, x0, _ = ssvm_problem(n=40, d=30, lam=0.01, seed=1)
    plain = block_coordinate_frank_wolfe(f, dom, x0, tol=0.0, max_iter=40, gap_every=1,
                                         random_state=0)
    budget = plain.n_oracle_calls
    fancy = block_coordinate_frank_wolfe(
        f, dom, x0, block_step="pairwise", cache=True, block_order="gap", tol=0.0,
        max_iter=10_000, gap_every=1, random_state=0,
        callback=lambda s: s.info["oracle_calls"] < budget)
    end_plain = _best_gap_within(plain.history, budget)
    end_fancy = _best_gap_within(fancy.history, budget)
    print(f"oracle calls {budget}: plain gap {end_plain:.3e}, pairwise+cache gap {end_fancy:.3e}")
    assert fancy.extra["cache_hits"] > 0
    assert end_fancy < end_plain


# -- behaviour ------------------------------------------------------------------


def test_same_seed_same_result():
    f, dom, x0, _ = ssvm_problem(n=15, d=20, seed=2)
    for kw in ({"block_order": "uniform"}, {"block_order": "perm"},
               {"block_order": "gap", "block_step": "pairwise", "cache": True}):
        a = block_coordinate_frank_wolfe(f, dom, x0, max_iter=8, tol=0.0, random_state=7, **kw)
        b = block_coordinate_frank_wolfe(f, dom, x0, max_iter=8, tol=0.0,
                                         random_state=np.random.default_rng(7), **kw)
        c = block_coordinate_frank_wolfe(f, dom, x0, max_iter=8, tol=0.0, random_state=8, **kw)
        assert np.array_equal(a.x, b.x)
        assert not np.array_equal(a.x, c.x)


def test_block_iterates_sum_to_x_and_stay_feasible():
    f, dom, x0, _ = ssvm_problem(n=12, d=15, seed=3)
    res = block_coordinate_frank_wolfe(f, dom, x0, block_step="away", block_order="gap",
                                       max_iter=20, tol=0.0, random_state=0)
    x = np.zeros(dom.dim)
    for ix, z in zip(dom.block_indices, res.extra["block_iterates"]):
        x[ix] += z
    np.testing.assert_allclose(x, res.x, atol=1e-12)
    # each block point is a convex combination of its vertices (nnls on the simplex)
    from scipy.optimize import nnls
    for b, z in zip(dom.blocks, res.extra["block_iterates"]):
        A = np.vstack((b.V.T, 100.0 * np.ones(b.V.shape[0])))
        lam, resid = nnls(A, np.append(z, 100.0))
        assert resid <= 1e-9


def test_weighted_average_certified():
    f, dom = simplices_problem(n=10, m=3, seed=4)
    res = block_coordinate_frank_wolfe(f, dom, averaging="weighted", certify="average",
                                       tol=1e-4, max_iter=5000, random_state=0)
    assert res.success
    g = f.gradient(res.x)
    assert g @ res.x - g @ dom(g).to_dense() == pytest.approx(res.gap, abs=1e-12)
    assert not np.array_equal(res.x, res.extra["x_last"])


@pytest.mark.parametrize("kind", ["weighted", "uniform", "tail"])
def test_lazy_average_matches_explicit_recursion(kind):
    rng = np.random.default_rng(0)
    dim, steps = 12, 40
    x = rng.standard_normal(dim)
    avg = LazyAverage(x, kind)
    iterates = [x.copy()]
    start = 0
    for k in range(steps):
        if kind == "tail" and k == 16:
            avg.restart(x, k)
            start = k
        idx = np.sort(rng.choice(dim, size=3, replace=False))
        avg.touch(x, idx, k)
        x[idx] += rng.standard_normal(3)
        iterates.append(x.copy())
        # explicit reference
        if kind == "weighted":
            ref = iterates[0].copy()
            for j in range(1, k + 2):
                ref = (j - 1) / (j + 1) * ref + 2 / (j + 1) * iterates[j]
        else:
            ref = np.mean(iterates[start:k + 2], axis=0)
        np.testing.assert_allclose(avg.value(x, k + 1), ref, atol=1e-12)


def test_gap_sampler_frequencies_and_unvisited_first():
    est = np.array([np.inf, 1.0, np.inf, 3.0, 0.0, 4.0])
    s = GapSampling(degree=1.0)
    s.start(est)
    rng = np.random.default_rng(0)
    assert [s.draw(rng) for _ in range(1)] == [0]
    s.update(0, 2.0)
    assert s.draw(rng) == 2
    s.update(2, 0.0)
    draws = np.array([s.draw(rng) for _ in range(40_000)])
    freq = np.bincount(draws, minlength=6) / draws.size
    np.testing.assert_allclose(freq, np.array([2, 1, 0, 3, 0, 4]) / 10.0, atol=0.01)


def test_bad_input():
    f, dom = simplices_problem(n=4, m=3)
    with pytest.raises(TypeError, match="ProductDomain"):
        block_coordinate_frank_wolfe(f, L1Ball(dim=12))
    with pytest.raises(ValueError, match="block_order.*'uniform'.*'cyclic'"):
        block_coordinate_frank_wolfe(f, dom, block_order="cyclic")
    with pytest.raises(ValueError, match="block_step"):
        block_coordinate_frank_wolfe(f, dom, block_step="newton")
    with pytest.raises(ShapeError, match=r"x0 has shape \(5,\), expected \(12,\)"):
        block_coordinate_frank_wolfe(f, dom, np.zeros(5))
    with pytest.raises(ValueError, match="block 0 is not in"):
        block_coordinate_frank_wolfe(f, dom, np.zeros(12))
    with pytest.raises(ValueError, match="certify='average' needs averaging"):
        block_coordinate_frank_wolfe(f, dom, certify="average")
    with pytest.raises(ValueError, match="gap_every"):
        block_coordinate_frank_wolfe(f, dom, gap_every=0)
    with pytest.raises(ValueError, match="needs a line search"):
        block_coordinate_frank_wolfe(f, dom, block_step="pairwise", step_size="agnostic")


@pytest.mark.parametrize("step_size", ["exact", "agnostic"])
def test_compiled_pass_equals_python_steps(step_size):
    f, dom = simplices_problem(n=30, m=4, seed=2)
    with __import__("frankwolfe").debug(False):  # the compiled pass does not run in debug mode
        fast = block_coordinate_frank_wolfe(f, dom, step_size=step_size, tol=0.0, max_iter=12,
                                            gap_every=5, random_state=0, compiled=True)
    slow = block_coordinate_frank_wolfe(f, dom, step_size=step_size, tol=0.0, max_iter=12,
                                        gap_every=5, random_state=0, compiled=False)
    np.testing.assert_allclose(fast.x, slow.x, atol=1e-12)
    # f tracked incrementally by the compiled pass equals the evaluated one
    np.testing.assert_allclose(fast.history["fun"], slow.history["fun"], rtol=1e-10)
    assert fast.n_oracle_calls == slow.n_oracle_calls


def test_a_pass_that_moved_is_no_zero_step_for_the_stall_check(monkeypatch):
    """A pass reports its last block step as its step size: a lock-free pass reports the
    last thread's, 0 on most SSVM passes, and runs still descending ended "stalled" at
    passes 3268-14511.  A pass whose f changed is not a zero step, whatever its last
    block step was (here a pass that changes f by -1 and reports a last step of 0)."""
    from frankwolfe.algorithms.bcfw.python_pass import PythonPass

    def moved(self, order, budget):
        self.steps.state.last_gamma = 0.0
        return -1.0

    monkeypatch.setattr(PythonPass, "run", moved)
    f = QuadraticObjective(np.eye(4), -np.array([0.9, 0.1, 0.3, 0.7]))
    dom = ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2)])
    res = block_coordinate_frank_wolfe(f, dom, compiled=False, tol=0.0, max_iter=80,
                                          gap_every=1)
    assert res.status == "max_iter"

    def still(self, order, budget):
        self.steps.state.last_gamma = 0.0
        return 0.0

    monkeypatch.setattr(PythonPass, "run", still)
    res = block_coordinate_frank_wolfe(f, dom, compiled=False, tol=0.0, max_iter=80,
                                          gap_every=1)
    assert res.status == "stalled"


@pytest.mark.parametrize("batch_size", [None, 2])
def test_a_non_finite_block_gradient_ends_the_run_at_the_last_good_point(batch_size):
    """The block's NaN gradient went to its oracle, which raised, and err.result held the
    point that produced it (docs/results.md: a non-finite gradient does not raise; the
    run stops with status "error" at the last good iterate and its certified gap)."""
    y = np.array([0.1, 0.1, 2.0, 0.1, 0.1, 2.0])

    def grad(x):
        return (x - y) * (np.nan if x[2] > 0.6 else 1.0)

    f = fw.FunctionObjective(lambda x: 0.5 * float(np.sum((x - y) ** 2)), grad, shape=(6,))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    kw = {} if batch_size is None else {"batch_size": batch_size}
    res = fw.block_coordinate_frank_wolfe(f, dom, x0=np.r_[1.0, 0, 0, 1, 0, 0],
                                          random_state=0, **kw)
    assert res.status == "error" and "not finite" in res.message
    assert res.x[2] <= 0.6 and np.isfinite(grad(res.x)).all()
    g = res.x - y
    gap = sum(float(g[i:i + 3] @ res.x[i:i + 3] - g[i:i + 3].min()) for i in (0, 3))
    assert res.gap == pytest.approx(gap, rel=1e-12, abs=1e-15)
    assert res.fun == pytest.approx(f.value(res.x), rel=1e-12)

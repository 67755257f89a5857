"""Randomized away-step Frank-Wolfe at its default ``subsample`` on every subset domain.

The default was the fraction 0.1, which the boxes and the k-sparse polytope refuse
past a few coordinates (a tenth of their ``2^n`` vertices is too many to draw), so
``method="rafw"`` failed at its defaults on ``Hypercube(dim=10)``.  References are
cvxpy's optima; the certificate checked is the run's own gap.
"""

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.rafw import _sample_size
from frankwolfe.lmo import Box, KSparsePolytope, LinfBall

N, M = 10, 12


def least_squares(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, N))
    b = rng.standard_normal(M)
    return fw.LeastSquares(A, b), A, b


# each domain with its cvxpy constraints and a feasibility check of the returned x
DOMAINS = {
    "hypercube": (lambda: fw.Hypercube(dim=N),
                  lambda x: [x >= 0, x <= 1],
                  lambda x: np.all(x >= -1e-12) and np.all(x <= 1 + 1e-12)),
    "box": (lambda: Box(-np.ones(N), 2 * np.ones(N)),
            lambda x: [x >= -1, x <= 2],
            lambda x: np.all(x >= -1 - 1e-12) and np.all(x <= 2 + 1e-12)),
    "linf_ball": (lambda: LinfBall(0.5, dim=N),
                  lambda x: [cp.norm_inf(x) <= 0.5],
                  lambda x: np.abs(x).max() <= 0.5 + 1e-12),
    "ksparse_k_eq_n": (lambda: KSparsePolytope(N, dim=N),
                       lambda x: [cp.norm_inf(x) <= 1, cp.norm1(x) <= N],
                       lambda x: np.abs(x).max() <= 1 + 1e-12),
    "ksparse_k3": (lambda: KSparsePolytope(3, dim=N),
                   lambda x: [cp.norm_inf(x) <= 1, cp.norm1(x) <= 3],
                   lambda x: np.abs(x).max() <= 1 + 1e-12 and np.abs(x).sum() <= 3 + 1e-9),
    "probability_simplex": (lambda: fw.ProbabilitySimplex(dim=N),
                            lambda x: [x >= 0, cp.sum(x) == 1],
                            lambda x: np.all(x >= -1e-12) and abs(x.sum() - 1) <= 1e-9),
    "unit_simplex": (lambda: fw.UnitSimplex(dim=N),
                     lambda x: [x >= 0, cp.sum(x) <= 1],
                     lambda x: np.all(x >= -1e-12) and x.sum() <= 1 + 1e-9),
    "l1_ball": (lambda: fw.L1Ball(dim=N),
                lambda x: [cp.norm1(x) <= 1],
                lambda x: np.abs(x).sum() <= 1 + 1e-9),
}

#: domains on which the fraction 0.1 is refused (the defect's domains)
REFUSING = ["hypercube", "box", "linf_ball", "ksparse_k_eq_n"]


def counts(res):
    """The run's work counters (``extra`` without its clock readings)."""
    return {k: v for k, v in res.extra.items() if "time" not in k}


def f_star(A, b, constraints):
    x = cp.Variable(N)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), constraints(x))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == cp.OPTIMAL, prob.status
    return float(prob.value)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_defaults_run_and_certify(name):
    make, constraints, feasible = DOMAINS[name]
    objective, A, b = least_squares()
    res = fw.minimize(objective, make(), method="rafw", random_state=0)
    assert res.status in ("converged", "max_iter"), res.message
    assert res.nit <= 1000  # the default max_iter
    assert np.isfinite(res.gap) and res.gap >= 0
    assert feasible(res.x)
    fs = f_star(A, b, constraints)
    tol = 1e-9 * (1 + abs(fs))
    assert fs - tol <= res.fun <= fs + res.gap + tol, (res.fun, fs, res.gap)
    if res.status == "converged":
        assert res.gap <= 1e-6 + 1e-9  # the default tol


def test_audit_call_without_a_seed():
    """The audit's exact call: defaults only, through minimize."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((12, 10))
    b = rng.standard_normal(12)
    res = fw.minimize(fw.LeastSquares(A, b), fw.Hypercube(dim=10), method="rafw")
    assert res.status in ("converged", "max_iter") and np.isfinite(res.gap)
    fs = f_star(A, b, DOMAINS["hypercube"][1])
    assert res.fun - fs <= res.gap + 1e-9 * (1 + abs(fs))


@pytest.mark.parametrize("name", ["hypercube", "ksparse_k_eq_n", "l1_ball"])
def test_defaults_are_reproducible(name):
    make = DOMAINS[name][0]
    objective, *_ = least_squares(2)
    runs = [fw.randomized_away_step_frank_wolfe(objective, make(), random_state=11)
            for _ in range(2)]
    assert runs[0].nit == runs[1].nit
    np.testing.assert_array_equal(runs[0].x, runs[1].x)
    for column in ("fun", "gap", "step_size", "active_set_size"):
        np.testing.assert_array_equal(runs[0].history[column], runs[1].history[column])
    assert counts(runs[0]) == counts(runs[1])


@pytest.mark.parametrize("make", [lambda: fw.ProbabilitySimplex(dim=30),
                                  lambda: fw.L1Ball(dim=30),
                                  lambda: fw.Hypercube(dim=6),
                                  lambda: KSparsePolytope(2, dim=10)],
                         ids=["simplex", "l1_ball", "hypercube6", "ksparse2"])
def test_default_is_the_tenth_where_a_tenth_is_accepted(make):
    """Where the old default 0.1 ran, the default draws the same samples."""
    rng = np.random.default_rng(4)
    dom = make()
    n = dom.shape[0]
    objective = fw.LeastSquares(rng.standard_normal((n + 2, n)), rng.standard_normal(n + 2))
    default = fw.randomized_away_step_frank_wolfe(objective, dom, random_state=5)
    tenth = fw.randomized_away_step_frank_wolfe(objective, dom, subsample=0.1,
                                                random_state=5)
    assert default.nit == tenth.nit and default.status == tenth.status
    np.testing.assert_array_equal(default.x, tenth.x)
    np.testing.assert_array_equal(default.history["fun"], tenth.history["fun"])
    assert counts(default) == counts(tenth)


@pytest.mark.parametrize("name", REFUSING)
def test_an_explicit_fraction_is_still_refused(name):
    objective, *_ = least_squares()
    with pytest.raises(ValueError, match=r"`subsample`=0\.1 is a fraction .* give a count"):
        fw.minimize(objective, DOMAINS[name][0](), method="rafw", subsample=0.1)


def test_default_sizes_where_a_fraction_is_refused():
    # a box vertex costs a full call: one per iteration
    assert _sample_size(None, 1 << 10, cand_cost=10, full_cost=10) == 1
    assert _sample_size(None, 1 << 200, cand_cost=200, full_cost=200) == 1
    # the 3-sparse polytope in R^100: ceil(100 / 30) vertices
    assert _sample_size(None, 1_293_600, cand_cost=3, full_cost=100) == 4
    # accepted fractions are unchanged: a tenth of the 512 vertices of a 9-cube
    assert _sample_size(None, 1 << 9, cand_cost=9, full_cost=9) == 52
    assert _sample_size(None, 30) == _sample_size(0.1, 30) == 3


def test_large_box_and_ksparse_at_defaults():
    """Far past 2^40 vertices the default is a small count, so the run starts at once."""
    rng = np.random.default_rng(6)
    n = 300
    objective = fw.LeastSquares(rng.standard_normal((20, n)), rng.standard_normal(20))
    for dom in (fw.Hypercube(dim=n), KSparsePolytope(40, dim=n)):
        res = fw.randomized_away_step_frank_wolfe(objective, dom, max_iter=60, random_state=0)
        assert res.nit <= 60 and np.isfinite(res.gap)
        assert res.extra["n_subset_oracle_calls"] > 0

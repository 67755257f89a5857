"""Alternating linear minimization over intersections, against cvxpy."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    Box,
    L1Ball,
    ProbabilitySimplex,
    QuadraticObjective,
    alternating_linear_minimization,
    minimize,
)


def _sets(rng):
    d = int(rng.integers(4, 15))
    upper = rng.uniform(1.2 / d, 3.0 / d, size=d)  # sum(upper) > 1: the intersection is not empty
    return d, [ProbabilitySimplex(dim=d), Box(0.0, upper)], \
        lambda x: [x >= 0, cp.sum(x) == 1, x <= upper], upper


@pytest.mark.parametrize("seed", range(20))
def test_feasibility_finds_a_point_of_the_intersection(seed):
    rng = np.random.default_rng(seed)
    d, sets, _, _ = _sets(rng)
    res = alternating_linear_minimization(None, sets, tol=1e-12, max_iter=100000)
    assert res.status == "converged"
    # F = spread^2 terms: gap 1e-12 certifies sum ||x_i - mean||^2 <= 2k * 1e-12 / penalty
    assert res.extra["spread"] <= 3e-6
    for s in sets:
        assert s.violation(res.x) <= 1e-5


@pytest.mark.parametrize("seed", range(20))
def test_penalized_problem_matches_cvxpy(seed):
    rng = np.random.default_rng(100 + seed)
    d, sets, _, ub = _sets(rng)
    y = rng.standard_normal(d)
    f = QuadraticObjective(np.eye(d), -y)  # 0.5 ||x||^2 - <y, x>
    lam = 5.0
    res = alternating_linear_minimization(f, sets, penalty=lam, tol=1e-9, max_iter=100000)
    X = cp.Variable((2, d))
    mean = cp.sum(X, axis=0) / 2
    obj = sum(0.5 * cp.sum_squares(X[i]) - y @ X[i] for i in range(2)) / 2 \
        + lam / 4 * sum(cp.sum_squares(X[i] - mean) for i in range(2))
    cons = [X[0] >= 0, cp.sum(X[0]) == 1, X[1] >= 0, X[1] <= ub]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    assert res.status == "converged"
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7


def test_a_larger_penalty_approaches_the_constrained_optimum():
    rng = np.random.default_rng(7)
    d, sets, cons, _ = _sets(rng)
    y = rng.standard_normal(d)
    f = QuadraticObjective(np.eye(d), -y)
    x = cp.Variable(d)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x) - y @ x), cons(x)).solve(solver=cp.CLARABEL)
    dist, spread = [], []
    for lam in (1.0, 100.0, 1000.0):
        res = alternating_linear_minimization(f, sets, penalty=lam, tol=1e-12, max_iter=200000)
        assert res.status == "converged"
        dist.append(float(np.linalg.norm(res.x - x.value)))
        spread.append(res.extra["spread"])
    # the penalized optimum tends to the constrained one as the penalty grows
    assert dist[2] < dist[1] < dist[0]
    assert spread[2] < spread[1] < spread[0]
    assert dist[2] < 0.05 * dist[0]


def test_by_name_and_bad_arguments():
    sets = [ProbabilitySimplex(dim=3), Box(0.0, 0.5, dim=3)]
    res = minimize(None, sets, method="alm", tol=1e-10)
    assert res.method == "alm" and res.extra["copies"].shape == (2, 3)
    with pytest.raises(TypeError, match="two or more"):
        alternating_linear_minimization(None, [ProbabilitySimplex(dim=3)])
    with pytest.raises(ValueError, match="one dimension"):
        alternating_linear_minimization(None, [ProbabilitySimplex(dim=3), L1Ball(1.0, dim=4)])
    with pytest.raises(ValueError, match="penalty"):
        alternating_linear_minimization(None, sets, penalty=0.0)


def test_random_state_makes_the_run_reproducible():
    """bcfw draws its block order: without a seed two runs differed, and minimize(...,
    method="alm", random_state=0) raised a TypeError."""
    d = 30
    y = np.random.default_rng(1).standard_normal(d)
    f = fw.QuadraticObjective(np.eye(d), -y)
    doms = [fw.ProbabilitySimplex(dim=d), fw.Box(0.0, 0.1, dim=d)]
    kw = dict(penalty=10.0, tol=1e-9, max_iter=20000)
    a = fw.alternating_linear_minimization(f, doms, random_state=0, **kw)
    b = fw.alternating_linear_minimization(f, doms, random_state=0, **kw)
    assert a.nit == b.nit
    np.testing.assert_array_equal(a.x, b.x)
    c = fw.minimize(f, doms, method="alm", random_state=0, **kw)
    np.testing.assert_array_equal(c.x, a.x)
    with pytest.raises(ValueError, match="method 'fw' draws nothing"):
        fw.alternating_linear_minimization(f, doms, method="fw", random_state=0)


def test_an_empty_intersection_is_certified_and_said():
    """A simplex and a box of entries >= 0.5 in R^10 do not meet (the box's sum is >= 5):
    the run said "converged" and nothing else.  Its certificate proves it now."""
    doms = [fw.ProbabilitySimplex(dim=10), fw.Box(0.5, 1.0, dim=10)]
    with pytest.warns(UserWarning, match="the sets do not intersect"):
        res = fw.alternating_linear_minimization(None, doms, tol=1e-8, max_iter=2000,
                                                 random_state=0)
    assert res.extra["empty"] and "do not intersect" in res.message
    # the certified lower bound and the true minimum of the spread term F = ||x1 - x2||^2 / 8
    # (two copies, penalty 1): the nearest points are 0.1 and 0.5 everywhere, F* = 0.2
    lower = res.fun - res.gap
    assert 0.2 - 1e-6 <= lower <= 0.2 + 1e-12
    meeting = [fw.ProbabilitySimplex(dim=4), fw.Box(0.0, 0.3, dim=4)]
    res = fw.alternating_linear_minimization(None, meeting, tol=1e-10, max_iter=20000,
                                             random_state=0)
    assert not res.extra["empty"]


def test_matrix_sets_without_their_own_shape_take_the_objectives():
    """A NuclearNormBall() that knows no shape answers matrices only: ALM handed it a flat
    copy and failed.  Each copy now has the shape the objective states; the run equals
    the one with the shape given to the set."""
    k = 5
    S = np.random.default_rng(3).standard_normal((k, k))
    f = fw.FunctionObjective(lambda X: 0.5 * float(np.sum((X - S) ** 2)), lambda X: X - S,
                             smoothness=1.0, shape=(k, k))
    kw = dict(max_iter=200, tol=0.0, random_state=0)
    ref = fw.alternating_linear_minimization(
        f, [fw.Birkhoff(k), fw.NuclearNormBall(3.0, shape=(k, k))], **kw)
    res = fw.alternating_linear_minimization(f, [fw.Birkhoff(k), fw.NuclearNormBall(3.0)],
                                             **kw)
    assert res.x.shape == (k, k)
    np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-12)
    assert res.gap == pytest.approx(ref.gap, rel=1e-9, abs=1e-12)


def test_user_sets_declaring_their_shape_as_an_int_or_a_list():
    """A user's LMO with ``shape = 3`` or ``shape = [3]`` (read as (3,) everywhere else)
    failed here: the shapes went into a set (a list is unhashable).  The answer is
    checked as a point of both sets: the simplex and the unit box."""

    class Simplex(fw.LMO):
        shape = 3

        def extreme_point(self, g):
            v = np.zeros(3)
            v[np.argmin(g)] = 1.0
            return v

    class UnitBox(fw.LMO):
        shape = [3]

        def extreme_point(self, g):
            return np.where(g > 0, 0.0, 1.0)

    res = fw.alternating_linear_minimization(None, [Simplex(), UnitBox()])
    assert res.x.shape == (3,)
    simplex_copy, box_copy = res.extra["copies"]  # each in its own set
    assert simplex_copy.sum() == pytest.approx(1.0, abs=1e-9) and simplex_copy.min() >= -1e-12
    assert box_copy.min() >= -1e-12 and box_copy.max() <= 1.0 + 1e-12
    # their mean, the answer, is within their spread of both
    assert abs(res.x.sum() - 1.0) <= np.sqrt(3) * res.extra["spread"] + 1e-9

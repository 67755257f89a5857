"""Mends from the review of session 29's changes.

1. The value-reading step rules allow for rounding in ulps of the run's largest ``|f|``
   (``Tracker.note_value``), not of the current ``f``: an objective declared non-convex
   whose value is small only because large terms cancel stalled (Armijo) or ran to
   ``max_iter`` (Monotonic, BCFW with Adaptive) once the allowance was 16 ulps of
   ``|f| ~ 0.02`` while ``f`` rounds in ulps of its terms (~15).
2. ``LMO.__init_subclass__``'s conversion passes a user ``extreme_point``'s further
   parameters through, and finds the direction by position or by its own name.
3. The saddle solver's drift checks are relative to the terms of the active sets' sums
   (``ActiveSet.terms_scale``), not to ``||z||``, which vanishes when ``e_i`` and ``-e_i``
   cancel (every re-sum reset the iterate).
4. Active-set methods keep the key of the domain's own start vertex (``x0=None``): a user
   ``SubsetOracle``'s ``candidate_ids`` sees only keys it issued.
6. ``History`` refuses an array of one integer as a key by name.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.lmo.subset import SubsetOracle
from frankwolfe.objectives.base import Tracker
from frankwolfe.result import History
from frankwolfe.step_size import Adaptive

# -- 1. rounding allowances relative to the run's largest |f| ---------------------------


def _cancelling(seed: int, m: int, n: int, blocks: int, below: float = 0.02) -> tuple:
    """``0.5 ||A x - b||^2 - shift`` on a product of ``blocks`` simplices, declared
    non-convex, with ``shift`` the optimum's value (cvxpy's) plus ``below``: ``f`` near
    the optimum is about ``-below`` while its terms are about 15."""
    rng = np.random.default_rng(seed)
    A, b = rng.standard_normal((m, n)), rng.standard_normal(m)
    k = n // blocks
    x = cp.Variable(n)
    cons = [x >= 0] + [cp.sum(x[i * k:(i + 1) * k]) == 1 for i in range(blocks)]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), cons)
    prob.solve(solver="CLARABEL")
    shift = float(prob.value) + below

    def objective() -> fw.FunctionObjective:
        return fw.FunctionObjective(lambda z: 0.5 * np.sum((A @ z - b) ** 2) - shift,
                                    lambda z: A.T @ (A @ z - b), convex=False)

    return objective, np.asarray(x.value), -below, A


def _check_optimum(res: fw.Result, x_star: np.ndarray, f_star: float, A: np.ndarray,
                   tol: float) -> None:
    assert res.status == "converged", (res.status, res.nit, res.gap)
    assert -tol <= res.gap <= tol  # a certified gap is >= 0 up to rounding
    # f - f* <= gap; cvxpy's interior point is accurate to about 1e-8 (both ways)
    assert res.fun == pytest.approx(f_star, abs=1e-6)
    # strongly convex (A has full column rank): ||x - x*||^2 <= 2 gap / lambda_min
    lam = float(np.linalg.eigvalsh(A.T @ A)[0])
    assert np.linalg.norm(res.x - x_star) <= np.sqrt(2.0 * tol / lam) + 1e-4


def test_armijo_converges_on_a_nonconvex_objective_small_by_cancellation():
    objective, x_star, f_star, A = _cancelling(0, 30, 20, 1)
    assert abs(objective().value(x_star)) < 0.05  # f small, its terms about 15
    res = fw.away_step_frank_wolfe(objective(), fw.ProbabilitySimplex(dim=20),
                                   step_size="armijo", max_iter=2000, tol=1e-7)
    _check_optimum(res, x_star, f_star, A, 1e-7)


@pytest.mark.parametrize("rule", ["adaptive", "monotonic"])
@pytest.mark.parametrize("method", [fw.away_step_frank_wolfe,
                                    fw.blended_pairwise_conditional_gradient])
def test_adaptive_and_monotonic_converge_on_it(rule, method):
    objective, x_star, f_star, A = _cancelling(0, 30, 20, 1)
    res = method(objective(), fw.ProbabilitySimplex(dim=20), step_size=rule, max_iter=3000,
                 tol=1e-7)
    _check_optimum(res, x_star, f_star, A, 1e-7)


@pytest.mark.parametrize("block_step", ["away", "pairwise"])
@pytest.mark.parametrize("rule", ["adaptive", "secant"])
def test_bcfw_line_searches_converge_on_it(block_step, rule):
    """f near 0 at the optimum.  A block step's view keeps no record of |f|: the rule
    keeps its own."""
    objective, x_star, f_star, A = _cancelling(1, 40, 30, 6, below=0.0)
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=5) for _ in range(6)])
    res = fw.block_coordinate_frank_wolfe(objective(), dom, step_size=rule,
                                          block_step=block_step, max_iter=400, tol=1e-7,
                                          random_state=0)
    _check_optimum(res, x_star, f_star, A, 1e-7)


def test_the_tracker_keeps_the_runs_largest_finite_value():
    t = Tracker(fw.QuadraticObjective(np.eye(2), np.zeros(2)), np.zeros(2))
    assert t.f_top == 0.0
    assert t.note_value(-3.0) == 3.0
    assert t.note_value(0.5) == 3.0
    for not_finite in (np.inf, -np.inf, np.nan):
        assert t.note_value(not_finite) == 3.0
    assert t.note_value(-7.25) == 7.25 and t.f_top == 7.25


def test_a_rule_keeps_its_own_record_for_a_tracker_like_view():
    class View:  # a tracker-like object without note_value (as BCFW's block view)
        pass

    rule, a, b = Adaptive(), View(), View()
    assert rule._value_top(a, -2.0) == 2.0
    assert rule._value_top(a, 1.0) == 2.0
    assert rule._value_top(b, 1.0) == 1.0  # another view: another run's record
    rule.reset()
    assert rule._value_top(b, 0.5) == 0.5


# -- 2. a user extreme_point's further parameters ---------------------------------------


class _Options(fw.LMO):
    def extreme_point(self, direction, *, lo=-1.0):
        return np.where(direction > 0, lo, 1.0)


class _Positional(fw.LMO):
    def extreme_point(self, g, scale=1.0):
        return np.where(g > 0, -scale, scale)


def test_keyword_options_pass_through():
    np.testing.assert_array_equal(_Options().extreme_point(np.array([1.0, -2.0]), lo=-3.0),
                                  [-3.0, 1.0])
    # and the direction is still converted from a list
    np.testing.assert_array_equal(_Options().extreme_point([1, -2], lo=-3.0), [-3.0, 1.0])
    np.testing.assert_array_equal(_Options().extreme_point([1, -2]), [-1.0, 1.0])


def test_an_extra_positional_parameter_passes_through():
    np.testing.assert_array_equal(_Positional().extreme_point([1, -2], 2.0), [-2.0, 2.0])
    np.testing.assert_array_equal(_Positional().extreme_point(np.array([1.0, -2.0]), 3.0),
                                  [-3.0, 3.0])


def test_the_direction_by_its_own_name():
    np.testing.assert_array_equal(_Options().extreme_point(direction=[1, -2]), [-1.0, 1.0])
    np.testing.assert_array_equal(_Options().extreme_point(direction=[1, -2], lo=-4.0),
                                  [-4.0, 1.0])
    np.testing.assert_array_equal(_Positional().extreme_point(g=[1, -2], scale=3.0),
                                  [-3.0, 3.0])
    with pytest.raises(ValueError, match="direction"):
        _Positional().extreme_point(g=["a", "b"])


def test_an_lmo_with_options_still_runs():
    # min ||x - c||^2 over the box [-1, 1]^3 (the default lo): the clipped c
    c = np.array([2.0, 0.5, -3.0])
    res = fw.frank_wolfe(fw.QuadraticObjective(2.0 * np.eye(3), -2.0 * c), _Options(),
                         x0=np.zeros(3), tol=1e-9, max_iter=10000)
    np.testing.assert_allclose(res.x, np.clip(c, -1.0, 1.0), atol=1e-6)


# -- 3. saddle drift relative to the terms ----------------------------------------------


def test_terms_scale_is_the_size_of_the_terms_not_of_their_sum():
    ball = fw.L1Ball(1.0, dim=3)
    S = fw.ActiveSet()
    S.add(ball(np.array([-1.0, 0.0, 0.0])), 0.5)  # e_1
    S.add(ball(np.array([1.0, 0.0, 0.0])), 0.5)   # -e_1
    assert np.linalg.norm(S.resum()) == 0.0
    assert S.terms_scale() == pytest.approx(1.0, rel=1e-15)
    S2 = fw.ActiveSet()
    S2.add(fw.Atom(np.array([3.0, 4.0])), 0.25)
    S2.add(fw.Atom(np.array([0.0, -2.0])), 0.75)
    assert S2.terms_scale() == pytest.approx(0.25 * 5.0 + 0.75 * 2.0, rel=1e-15)


def test_saddle_away_steps_do_not_reset_at_a_cancelling_point():
    """L = x^T M y + |x|^2 / 2 - |y|^2 / 2 on two l1 balls: the saddle point is (0, 0),
    which the active sets hold as e_1 and -e_1 with equal weights; a re-sum after every
    step (resum_every=1) found ||z|| ~ 1e-11 and reset z each time (20 resets in 36
    steps)."""
    M = 0.3 * np.random.default_rng(0).standard_normal((3, 4))
    L = fw.BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    res = fw.saddle_point_frank_wolfe(L, fw.L1Ball(1.0, dim=3), fw.L1Ball(1.0, dim=4),
                                      away=True, max_iter=3000, tol=1e-10, resum_every=1)
    assert res.status == "converged"
    assert res.extra["n_resyncs"] == 0
    # strongly convex-concave with mu = 1: the distance to (0, 0) is at most sqrt(2 gap)
    assert np.linalg.norm(np.concatenate([res.x, res.extra["y"]])) <= np.sqrt(2e-10)
    Sx = res.active_set[0]
    assert len(Sx) >= 2 and np.linalg.norm(Sx.x) < 1e-9 < Sx.terms_scale()


def test_compiled_pairwise_starts_from_a_cancelling_decomposition():
    rng = np.random.default_rng(3)
    A, b = rng.standard_normal((15, 6)), rng.standard_normal(15)
    ball = fw.L1Ball(1.0, dim=6)
    start = fw.ActiveSet()
    start.add(ball(np.array([-1.0, 0, 0, 0, 0, 0])), 0.5)
    start.add(ball(np.array([1.0, 0, 0, 0, 0, 0])), 0.5)
    v = cp.Variable(6)
    f_star = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ v - b)),
                        [cp.norm1(v) <= 1.0]).solve(solver="CLARABEL")
    for x0 in (start, np.zeros(6)):
        res = fw.compiled_pairwise_frank_wolfe(fw.LeastSquares(A, b), ball, x0=x0,
                                               max_iter=1000, tol=1e-10)
        assert res.status == "converged"
        assert res.fun == pytest.approx(f_star, rel=1e-7)
        np.testing.assert_allclose(res.x, v.value, atol=1e-4)


# -- 4. the default start keeps its key ---------------------------------------------------


class _UserSimplex(SubsetOracle, fw.LMO):
    """A probability simplex written from the SubsetOracle docs: candidates are the
    coordinates, and candidate_ids reads the keys ("e", i) this oracle gives."""

    shape = 6

    def __init__(self):
        self.seen = set()

    @staticmethod
    def _e(i, n):
        v = np.zeros(n)
        v[i] = 1.0
        return fw.Atom(v, key=("e", int(i)))

    def extreme_point(self, g):
        return self._e(np.argmin(g), g.size)

    def n_candidates(self, shape):
        return 6

    def candidate_ids(self, atoms):
        keys = [a.key for a in atoms]
        self.seen.update(keys)
        return np.array([k[1] for k in keys], dtype=np.int64)

    def extreme_point_among(self, g, ids):
        return self._e(ids[np.argmin(g[ids])], g.size)


def test_rafw_with_a_user_subset_oracle_from_the_default_start():
    rng = np.random.default_rng(4)
    B = rng.standard_normal((10, 6))
    Q, c = B.T @ B + 0.1 * np.eye(6), rng.standard_normal(6)
    dom = _UserSimplex()
    res = fw.randomized_away_step_frank_wolfe(fw.QuadraticObjective(Q, c), dom,
                                              subsample=2, max_iter=5000, tol=1e-9,
                                              random_state=0)
    assert res.status == "converged"
    assert dom.seen and all(k[0] == "e" for k in dom.seen)  # no ("x0", ...) key
    v = cp.Variable(6)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(v, Q) + c @ v), [v >= 0, cp.sum(v) == 1])
    f_star = prob.solve(solver="CLARABEL")
    assert res.fun == pytest.approx(f_star, abs=1e-7)
    np.testing.assert_allclose(res.x, v.value, atol=1e-4)


def test_a_users_atom_start_is_still_held_under_a_key_of_its_own():
    """An Atom given as x0 may come from another domain: it stays foreign (its key is
    restored in the result)."""
    Q, c = np.eye(3), -np.array([0.2, 0.5, 0.3])
    start = fw.Atom(np.array([1.0, 0.0, 0.0]), key=("e", 0))
    res = fw.away_step_frank_wolfe(fw.QuadraticObjective(Q, c), fw.ProbabilitySimplex(dim=3),
                                   x0=start, max_iter=3, tol=0.0)
    assert set(res.active_set.keys) <= {("e", 0), ("e", 1), ("e", 2)}


# -- 6. History keys ------------------------------------------------------------------------


@pytest.mark.parametrize("key", [np.array([1]), np.array([[1]]), np.array([1.0]),
                                 np.array([0, 1])])
def test_history_refuses_an_array_key_by_name(key):
    h = History(("iteration", "fun"))
    h.append_values((0, 3.0))
    h.append_values((1, 2.0))
    with pytest.raises(TypeError, match=r"history: a key is a column name .* got array"):
        h[key]
    assert h[np.int64(1)]["fun"] == 2.0  # a numpy integer is still a row

"""Every bad input gets a clear error, and nothing computed is lost."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    LMO,
    FunctionObjective,
    InfeasibleError,
    L1Ball,
    NonConvexError,
    OracleError,
    ProbabilitySimplex,
    ShapeError,
    frank_wolfe,
)


def quad(y, **kw):
    return FunctionObjective(lambda x: 0.5 * float(np.sum((x - y) ** 2)), lambda x: x - y,
                             exact_step=lambda x, d, g: -float(g @ d) / float(d @ d), **kw)


def test_x0_shape_differs_from_lmo_dimension():
    with pytest.raises(ShapeError, match=r"x0 has shape \(3,\) but the LMO expects shape \(4,\)"):
        frank_wolfe(quad(np.zeros(3)), ProbabilitySimplex(dim=4), x0=np.array([1.0, 0, 0]))


def test_x0_shape_differs_from_objective_shape():
    with pytest.raises(ShapeError,
                       match=r"x0 has shape \(2,\) but the objective expects shape \(3,\)"):
        frank_wolfe(quad(np.zeros(3), shape=3), ProbabilitySimplex(), x0=np.array([1.0, 0]))


def test_gradient_shape_differs_from_x():
    obj = FunctionObjective(lambda x: 0.0, lambda x: np.zeros(x.size + 1))
    with pytest.raises(ShapeError, match=r"the gradient has shape \(4,\) but x has shape \(3,\)"):
        frank_wolfe(obj, ProbabilitySimplex(), x0=np.array([1.0, 0, 0]))


def test_function_objective_value_not_a_scalar():
    obj = FunctionObjective(lambda x: np.ones(2), lambda x: x)
    with pytest.raises(ShapeError, match=r"FunctionObjective: `fun` must return a scalar, got "
                                         r"ndarray of shape \(2,\) at x of shape \(3,\)"):
        frank_wolfe(obj, ProbabilitySimplex(dim=3), max_iter=3)


def test_no_dimension_anywhere():
    obj = FunctionObjective(lambda x: 0.0, lambda x: x)
    with pytest.raises(ShapeError, match="cannot choose a starting vertex.*pass x0"):
        frank_wolfe(obj, ProbabilitySimplex())


def test_x0_infeasible():
    with pytest.raises(InfeasibleError,
                       match=r"x0 is not in the domain L1Ball\(radius=1.0\): violation 0.5"):
        frank_wolfe(quad(np.zeros(2)), L1Ball(1.0), x0=np.array([1.0, 0.5]))


def test_x0_not_finite():
    with pytest.raises(ValueError, match=r"x0 contains NaN or inf: x0\[1\] = inf"):
        frank_wolfe(quad(np.zeros(2)), L1Ball(1.0), x0=np.array([0.0, np.inf]))


def test_nan_value_stops_with_error_and_keeps_last_good_iterate():
    y = np.array([0.1, 0.2, 0.7])
    trail = []

    def f(x):
        trail.append(x.copy())
        return np.nan if len(trail) > 3 else 0.5 * float(np.sum((x - y) ** 2))

    obj = FunctionObjective(f, lambda x: x - y)
    res = frank_wolfe(obj, ProbabilitySimplex(), x0=np.array([1.0, 0, 0]), step_size="agnostic",
                      tol=0.0, max_iter=100)
    assert res.status == fw.Status.ERROR
    assert "value is not finite at iteration 3" in res.message
    assert "returning the last good iterate (iteration 2)" in res.message
    np.testing.assert_array_equal(res.x, trail[2])
    assert np.isfinite(res.fun) and np.isfinite(res.gap)


def test_an_uncertified_last_good_iterate_keeps_best_gap_and_says_so():
    """RAFW stopped by a NaN gradient returns its last good iterate with gap NaN (its
    certificate needs the gradient there, NaN again): best_gap = fun - dual_bound still
    certifies x (it was NaN: min(nan, .)), and the message says the gap is not
    certified.  Checked against least squares' minimum over the simplex by cvxpy."""
    rng = np.random.default_rng(2)
    A, b = rng.standard_normal((14, 10)), 2 * rng.standard_normal(14)
    calls = [0]

    def grad(x):
        calls[0] += 1
        return np.full_like(x, np.nan) if calls[0] >= 4 else A.T @ (A @ x - b)

    obj = FunctionObjective(lambda x: 0.5 * float(np.sum((A @ x - b) ** 2)), grad)
    res = fw.minimize(obj, ProbabilitySimplex(1.0, 10), method="rafw", random_state=0,
                      tol=1e-12)
    assert res.status == fw.Status.ERROR and np.isnan(res.gap)
    assert "not certified" in res.message
    assert res.best_gap == pytest.approx(res.fun - res.dual_bound, rel=1e-12)
    cp = pytest.importorskip("cvxpy")
    z = cp.Variable(10)
    f_star = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ z - b)),
                        [z >= 0, cp.sum(z) == 1]).solve()
    assert res.fun - f_star <= res.best_gap + 1e-6


def test_an_error_in_the_direction_returns_the_iterate_it_was_computed_at():
    """cfw's direction calls the gradient (a Hessian product by differences): an error
    there returned x_0 with nit 0 where x_1 was a completed, certified iterate (the
    history's row 1), and the history's last fun was not the result's."""
    rng = np.random.default_rng(2)
    A, b = rng.standard_normal((14, 10)), 2 * rng.standard_normal(14)
    calls = [0]

    def grad(x):
        calls[0] += 1
        if calls[0] == 4:
            raise RuntimeError("boom")
        return A.T @ (A @ x - b)

    obj = FunctionObjective(lambda x: 0.5 * float(np.sum((A @ x - b) ** 2)), grad)
    with pytest.raises(RuntimeError, match="boom") as info:
        fw.minimize(obj, ProbabilitySimplex(1.0, 10), method="cfw")
    res = info.value.result
    assert res.nit == 1 and len(res.history) == res.nit + 1
    assert res.history["fun"][-1] == res.fun
    assert res.fun == pytest.approx(0.5 * float(np.sum((A @ res.x - b) ** 2)), rel=1e-12)
    g = A.T @ (A @ res.x - b)
    assert res.gap == pytest.approx(float(g @ res.x - g.min()), rel=1e-9, abs=1e-12)


def test_inf_gradient_at_x0():
    obj = FunctionObjective(lambda x: 0.0, lambda x: np.full_like(x, np.inf))
    x0 = np.array([0.0, 1.0])
    res = frank_wolfe(obj, ProbabilitySimplex(), x0=x0)
    assert res.status == fw.Status.ERROR
    assert "gradient is not finite at x0; no good iterate exists" in res.message
    np.testing.assert_array_equal(res.x, x0)


class BadShapeLMO(LMO):
    def extreme_point(self, direction):
        return np.zeros(direction.size + 2)


class OutsideLMO(LMO):
    """Claims to be the simplex but answers 2 e_i."""

    def extreme_point(self, direction):
        s = np.zeros_like(direction)
        s[np.argmin(direction)] = 2.0
        return s

    def violation(self, x):
        return ProbabilitySimplex().violation(x)


def test_lmo_returns_wrong_shape():
    with pytest.raises(ShapeError, match=r"BadShapeLMO\(\) returned an array of shape \(5,\), "
                                         r"expected \(3,\)"):
        frank_wolfe(quad(np.zeros(3)), BadShapeLMO(), x0=np.zeros(3))


def test_lmo_returns_point_outside_domain_in_debug_mode():
    assert fw.debug_enabled()  # tests run in debug mode (conftest)
    with pytest.raises(OracleError, match=r"OutsideLMO\(\) returned a point outside its domain "
                                          r"\(violation 1"):
        frank_wolfe(quad(np.zeros(3)), OutsideLMO(), x0=np.array([1.0, 0, 0]))
    with fw.debug(False):  # unchecked, the call goes through (cheap mode)
        OutsideLMO()(np.array([1.0, 0.0]))


def test_lmo_returns_none():
    class NoneLMO(LMO):
        def extreme_point(self, direction):
            return None

    with pytest.raises(OracleError, match="returned None"):
        NoneLMO()(np.zeros(2))


def test_negative_curvature_detected_by_exact_step():
    # f(x) = -1/2 ||x||^2 declared convex: the exact step along a descent direction is negative
    obj = FunctionObjective(lambda x: -0.5 * float(x @ x), lambda x: -x,
                            exact_step=lambda x, d, g: -float(g @ d) / float(-(d @ d)))
    with pytest.raises(NonConvexError,
                       match="negative curvature on an objective declared convex") as ei:
        frank_wolfe(obj, L1Ball(1.0), x0=np.array([0.5, 0.0]))
    # nothing is lost: the exception carries the partial result with the last iterate
    np.testing.assert_array_equal(ei.value.result.x, [0.5, 0.0])


def test_negative_curvature_detected_after_short_step():
    obj = FunctionObjective(lambda x: -0.5 * float(x @ x) + 0.1 * x[0],
                            lambda x: -x + np.array([0.1, 0.0]), smoothness=1.0)
    with pytest.raises(NonConvexError, match="negative curvature at iteration 1: f fell to"):
        frank_wolfe(obj, L1Ball(1.0), x0=np.array([0.0, 0.2]), step_size="short")


def test_nonconvex_declared_objective_runs():
    obj = FunctionObjective(lambda x: -0.5 * float(x @ x), lambda x: -x, smoothness=1.0,
                            convex=False)
    res = frank_wolfe(obj, L1Ball(1.0), x0=np.array([0.0, 0.2]), step_size="short", max_iter=10)
    assert np.isfinite(res.fun)


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="L1Ball: `radius` must be positive and finite, got -1"):
        L1Ball(-1)
    with pytest.raises(ValueError, match="`dim` must be a positive integer, got 0"):
        ProbabilitySimplex(dim=0)
    with pytest.raises(TypeError, match="FunctionObjective: `fun` must be callable"):
        FunctionObjective(3, lambda x: x)
    with pytest.raises(ValueError,
                       match="FunctionObjective: `smoothness` must be a finite number >= 0"):
        FunctionObjective(lambda x: 0.0, lambda x: x, smoothness=-1.0)


@pytest.mark.parametrize("bad", ["seed", 1.5, -3, object()])
def test_a_bad_random_state_is_named(bad):
    """Every random choice converts ``random_state`` the same way; a value numpy refuses
    is an error naming the argument and the value (numpy's own names neither)."""
    from frankwolfe.applications.matching import solve_qap
    from frankwolfe.applications.structured_svm import make_chain

    f = fw.LeastSquares(np.eye(3), np.ones(3))
    blocks = fw.ProductDomain([fw.ProbabilitySimplex(dim=3)])
    A = np.arange(9.0).reshape(3, 3)
    runs = [lambda: fw.minimize(f, fw.ProbabilitySimplex(dim=3), method="rafw",
                                random_state=bad),
            lambda: fw.block_coordinate_frank_wolfe(f, blocks, random_state=bad),
            lambda: solve_qap(A, A.T, random_state=bad),
            lambda: make_chain(4, random_state=bad)]
    for run in runs:
        with pytest.raises((TypeError, ValueError), match=r"random_state must be None, a "
                                                          r"non-negative integer .*got "):
            run()


def test_random_state_takes_a_generator_as_it_is_and_a_legacy_random_state():
    from frankwolfe._random import as_generator

    gen = np.random.default_rng(4)
    assert as_generator(gen) is gen
    assert as_generator(7).random() == np.random.default_rng(7).random()
    # a RandomState (scikit-learn's convention; numpy 1.26's default_rng refuses it)
    # seeds a generator by one draw: the same stream on every numpy
    seed = np.random.RandomState(4).randint(2**31 - 1)
    assert as_generator(np.random.RandomState(4)).random() == \
        np.random.default_rng(seed).random()


class _SimplexWithoutViolation(fw.LMO):
    """A user's simplex oracle of 2 coordinates that states no violation() (allowed)."""

    shape = (2,)

    def extreme_point(self, g):
        return np.eye(2)[int(np.argmin(g))]


def test_product_checks_the_blocks_that_can_be_checked():
    """One block without violation() switched off the check of every block: an x0 far
    outside the other block's simplex ran and ended "converged" infeasible."""
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), _SimplexWithoutViolation()])
    assert dom.violation(np.array([5.0, 0.5, 1.0, 0.0])) == pytest.approx(4.5)
    assert dom.violation(np.array([0.5, 0.5, 7.0, 7.0])) == 0.0  # the unknown block
    f = fw.FunctionObjective(lambda x: 0.5 * float(x @ x), lambda x: x)
    with pytest.raises(fw.InfeasibleError, match="x0 is not in the domain ProductDomain"):
        fw.frank_wolfe(f, dom, np.array([5.0, 0.5, 1.0, 0.0]))
    with pytest.raises(NotImplementedError, match="no block implements violation"):
        fw.ProductDomain([_SimplexWithoutViolation()]).violation(np.zeros(2))


@pytest.mark.parametrize("bad", [[2.5, 3.0], [True, True, False, False]])
def test_product_indices_must_be_integers(bad):
    """2.5 was truncated to 2 (the blocks then overlapped: a Minkowski sum); a mask read
    as the indices 0 and 1."""
    with pytest.raises(ValueError, match=r"`indices` must hold integer coordinates"):
        fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)],
                         indices=[[0, 1], bad])


def test_less_used_methods_name_their_bad_arguments():
    """compiled_pairwise read corrective="no" as True; a batch schedule's 0 or -5 was
    read as 1; resum_every="x" raised int()'s own error."""
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((20, 30)), rng.standard_normal(20)
    with pytest.raises(ValueError, match=r"`corrective` must be True or False, got 'no'"):
        fw.compiled_pairwise_frank_wolfe(fw.LeastSquares(A, b), fw.L1Ball(2.0, dim=30),
                                         corrective="no", max_iter=2)
    loss = fw.LinearModelLoss(A, np.sign(b))
    for answer in (0, -5, 2.5):
        with pytest.raises(ValueError, match=rf"the `batch_size` schedule answered {answer!r} "
                                             rf"at iteration 0"):
            fw.stochastic_frank_wolfe(loss, fw.L1Ball(2.0), batch_size=lambda k, a=answer: a,
                                      max_iter=3, random_state=0)
    f = fw.QuadraticObjective(np.eye(4), -np.ones(4))
    for bad in ("x", float("nan"), 0):
        with pytest.raises(TypeError if bad == "x" else ValueError,
                           match=rf"`resum_every` must be a positive integer, got {bad!r}"):
            fw.blended_conditional_gradient(f, fw.ProbabilitySimplex(dim=4), resum_every=bad)


def test_a_non_convex_objective_reports_no_dual_bound():
    """f - gap bounds f* only for convex f: minimizing a concave function over the
    simplex, the reported bound -4.62 lay above f* = -4.95 (the vertex found)."""
    q = np.array([0.9, -2.0, 0.3])
    f = FunctionObjective(lambda x: float(-0.5 * np.sum((x - q) ** 2)), lambda x: -(x - q),
                          convex=False)
    res = frank_wolfe(f, ProbabilitySimplex(dim=3), x0=np.full(3, 1 / 3),
                      step_size="nonconvex", max_iter=200)
    f_star = min(-0.5 * float(np.sum((e - q) ** 2)) for e in np.eye(3))
    assert res.dual_bound == -np.inf
    assert res.best_gap == (res.gap if res.gap > 0 else 0.0)
    assert res.fun >= f_star - 1e-12


def test_starts_and_flags_that_numpy_or_bool_would_take_are_named():
    f = quad(np.array([0.2, 0.5, 0.3]))
    dom = fw.ProductDomain([ProbabilitySimplex(dim=2), L1Ball(1.0, dim=1)])
    with pytest.raises(ValueError, match="x0 must be an array of numbers .*got list"):
        frank_wolfe(f, dom, [np.array([1.0, 0.0]), np.zeros(1)])
    with pytest.raises(ValueError, match="x0 must be real, got complex"):
        frank_wolfe(f, ProbabilitySimplex(dim=3), np.array([1.0, 0, 0], dtype=complex))
    import scipy.sparse as sp

    res = frank_wolfe(f, ProbabilitySimplex(dim=3), sp.coo_array(np.array([1.0, 0.0, 0.0])),
                      tol=1e-10)
    assert np.allclose(res.x, [0.2, 0.5, 0.3], rtol=0, atol=1e-6)  # the projection
    with pytest.raises(TypeError, match="`blended` must be True or False, got 'no'"):
        fw.pairwise_frank_wolfe(f, ProbabilitySimplex(dim=3), blended="no")
    prod = fw.ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=1)])
    for name in ("compiled", "cache"):
        with pytest.raises(TypeError, match=rf"`{name}` must be True or False"):
            fw.block_coordinate_frank_wolfe(f, prod, **{name: "yes"})
    M = np.arange(12.0).reshape(3, 4)
    for bad in (-1.0, 0.0, np.nan, "1"):
        with pytest.raises(TypeError if isinstance(bad, str) else ValueError,
                           match=r"`C` \(the curvature constant\) must be "
                                 r"(positive and finite|a real number)"):
            fw.saddle_point_frank_wolfe(fw.BilinearObjective(M), ProbabilitySimplex(dim=3),
                                        ProbabilitySimplex(dim=4), step_size="curvature",
                                        C=bad)


def test_an_oracle_answering_nan_at_the_start_is_named():
    class NanLMO(LMO):
        shape = (5,)

        def extreme_point(self, g):
            s = np.zeros(g.shape)
            s[0] = np.nan
            return s

    f = FunctionObjective(lambda x: 0.5 * float(x @ x), lambda x: x, shape=5)
    with pytest.raises(OracleError, match="NanLMO.*starting vertex with NaN or inf"):
        frank_wolfe(f, NanLMO(), max_iter=20)


@pytest.mark.parametrize("bad", [np.inf, np.nan, 2.5, True])
def test_model_sizes_that_are_not_whole_numbers_are_named(bad):
    from frankwolfe.applications.structured_svm import ChainModel, MulticlassModel

    error = TypeError if bad is True else ValueError  # a bool is no number
    with pytest.raises(error, match="`n_states` must be a positive integer"):
        ChainModel(bad, 3)
    with pytest.raises(error, match="`n_features` must be"):
        ChainModel(3, bad)
    with pytest.raises(error, match="`n_features` must be a positive integer"):
        MulticlassModel(3, bad)


def test_objective_and_domain_of_other_shapes_are_named_without_x0():
    # the run constrained another matrix than the objective's (x of the LMO's shape)
    A, b = np.ones((3, 64)), np.ones(3)
    with pytest.raises(ShapeError, match=r"objective's points have shape \(8, 8\) but "
                                         r"NuclearNormBall.* shape \(4, 16\)"):
        frank_wolfe(fw.LeastSquares(A, b, shape=(8, 8)), fw.NuclearNormBall(2.0, shape=(4, 16)))


def test_a_float32_objective_is_no_negative_curvature():
    """Sums of float32 round at ~6e-8 a term: a convex objective computed in single
    precision fell below its tangent bound by rounding and the run raised NonConvexError
    (1e-10 of f allowed).  Checked against the projection onto the simplex."""
    rng = np.random.default_rng(2)
    y = rng.standard_normal(2000).astype(np.float32)
    f = FunctionObjective(lambda x: float(0.5 * np.sum((x.astype(np.float32) - y) ** 2)),
                          lambda x: x.astype(np.float32) - y, smoothness=1.0, shape=y.shape)
    # the projection onto the simplex in closed form (sorting)
    u = np.sort(y.astype(float))[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u - css / np.arange(1, u.size + 1) > 0)[-1]
    p = np.maximum(y.astype(float) - css[rho] / (rho + 1), 0.0)
    f_star = 0.5 * float(np.sum((p - y) ** 2))
    for method in ("fw", "pairwise"):
        res = fw.minimize(f, ProbabilitySimplex(), method=method, tol=1e-6, max_iter=300)
        assert res.status in ("max_iter", "converged", "stalled")
        assert abs(res.x.sum() - 1.0) <= 1e-9
        # float32 evaluations: f within their rounding (1e-5 of f) of the bracket
        assert res.fun - f_star <= res.gap + 1e-5 * f_star


def test_the_tangent_check_confirms_with_exact_values_before_it_raises():
    """Least squares over a box of 1e8 around an O(1) optimum: the tracker's incremental
    f drifted by 6e-8 on the way in, its periodic exact refresh landed below the tangent
    bound built from the drifted value, and away / bpcg / bcg / rafw / fcfw raised
    NonConvexError on a convex problem.  A non-convex objective declared convex is still
    caught (by the same test, now on exact values).  Checked against least squares."""
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(20, 8)), rng.normal(size=20)
    box = fw.Box(-1e8 * np.ones(8), 1e8 * np.ones(8))
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]  # interior: the box's optimum
    f_star = 0.5 * float(np.sum((A @ x_ls - b) ** 2))
    for method in ("away", "bpcg", "fcfw"):
        res = fw.minimize(fw.LeastSquares(A, b), box, method=method, max_iter=2000)
        assert res.status != "error", method
        assert 0.5 * float(np.sum((A @ res.x - b) ** 2)) == pytest.approx(f_star, rel=1e-6)
    # f = -||x||^2 / 2 (concave) with a step rule that takes no curvature: the loop's own
    # tangent check raises
    f = FunctionObjective(lambda x: -0.5 * float(x @ x), lambda x: -x, shape=(3,))
    with pytest.raises(NonConvexError, match="below the tangent bound"):
        fw.minimize(f, fw.ProbabilitySimplex(dim=3), method="fw", step_size="agnostic",
                    x0=np.array([0.6, 0.3, 0.1]), max_iter=20)


def test_a_run_whose_incremental_values_drifted_reports_exact_ones():
    """Least squares over a box of 1e8 around an O(1) optimum: the tracker's Ax, updated
    move by move from 1e8 vertices, drifted by about 1e-7; fw / cfw / bfw / dicg reported
    f 5.7e-8 above f(x) and a "certified" gap of 1e-7 from the drifted gradient, where
    the exact gap at the point is about 210 (a gradient error of 1e-6 times the radius):
    "converged" on a certificate the point does not have.  Checked against the exact
    gap at the returned point and least squares."""
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(20, 8)), rng.normal(size=20)
    f = fw.LeastSquares(A, b)
    box = fw.Box(-1e8 * np.ones(8), 1e8 * np.ones(8))
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    f_star = 0.5 * float(np.sum((A @ x_ls - b) ** 2))
    for method in ("fw", "cfw", "bfw", "dicg"):
        res = fw.minimize(f, box, method=method, max_iter=2000)
        assert res.fun == pytest.approx(0.5 * float(np.sum((A @ res.x - b) ** 2)),
                                        rel=1e-14)
        g = A.T @ (A @ res.x - b)
        exact_gap = float(g @ res.x + 1e8 * np.abs(g).sum())  # the box's vertex: -1e8 sign(g)
        assert res.gap == pytest.approx(exact_gap, rel=1e-6)
        assert res.fun - f_star <= res.gap + 1e-9
        assert res.status == ("converged" if res.gap <= 1e-8 else "stalled"), method


def test_a_run_whose_gradient_drifted_but_not_its_value_reports_the_exact_gap():
    """The same drift where f stayed within rounding but the incremental gradient did
    not: cfw / bfw said "certified gap 6e-7 <= tol" where the exact gap at the returned
    point is 74 (the gradient's drift times the radius 1e8; the closing check compared
    f only).  Checked against the gap at the returned point computed here."""
    rng = np.random.default_rng(8)
    A = rng.standard_normal((12, 8))
    b = A @ (0.5 * rng.standard_normal(8)) + 0.01 * rng.standard_normal(12)
    for method in ("fw", "cfw", "bfw", "dicg"):
        res = fw.minimize(fw.LeastSquares(A, b), fw.LinfBall(1e8, 8), method=method,
                          tol=1e-6, max_iter=3000)
        g = A.T @ (A @ res.x - b)
        exact_gap = float(g @ res.x + 1e8 * np.abs(g).sum())
        assert res.gap == pytest.approx(exact_gap, rel=1e-6, abs=1e-9), method
        assert res.fun == pytest.approx(0.5 * float(np.sum((A @ res.x - b) ** 2)), rel=1e-12)
        assert res.status == ("converged" if exact_gap <= 1e-6 else "stalled"), method


# -- a float32 start is allowed its own rounding --------------------------------------

@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "blended_pairwise",
                                    "compiled_pairwise"])
@pytest.mark.parametrize("domain", ["simplex", "unit_simplex", "l1"])
def test_float32_barycenter_start_is_accepted_and_solves(method, domain):
    import cvxpy as cp

    if method == "compiled_pairwise" and domain == "unit_simplex":
        pytest.skip("the compiled method takes the simplex and the l1 ball only")
    y = np.array([0.9, -0.2, 0.4])
    # its sum (its l1 norm) exceeds 1 by 2.98e-08, beyond FEASIBILITY_TOL = 1e-8
    x0 = np.full(3, 1 / 3, dtype=np.float32)
    dom = {"simplex": fw.ProbabilitySimplex(), "unit_simplex": fw.UnitSimplex(),
           "l1": fw.L1Ball()}[domain]
    res = fw.minimize(fw.LeastSquares(np.eye(3), y), dom, method=method, x0=x0, tol=1e-10,
                      max_iter=10_000)
    z = cp.Variable(3)
    cons = {"simplex": [z >= 0, cp.sum(z) == 1], "unit_simplex": [z >= 0, cp.sum(z) <= 1],
            "l1": [cp.norm1(z) <= 1]}[domain]
    cp.Problem(cp.Minimize(cp.sum_squares(z - y)), cons).solve()
    np.testing.assert_allclose(res.x, z.value, atol=1e-4)


def test_float32_barycenter_of_three_is_accepted():
    # the audit's reproducer: violation 2.98e-08 > 1e-08 was refused
    for dom in (fw.ProbabilitySimplex(), fw.UnitSimplex(), fw.L1Ball()):
        res = frank_wolfe(fw.QuadraticObjective(np.eye(3)), dom,
                          x0=np.full(3, 1 / 3, dtype=np.float32), max_iter=2000)
        # min ||x||^2 / 2: the barycenter on the simplex, 0 in the others
        expected = np.full(3, 1 / 3) if isinstance(dom, fw.ProbabilitySimplex) else 0.0
        np.testing.assert_allclose(res.x, expected, atol=1e-3)


def test_float32_barycenter_of_birkhoff_is_accepted():
    res = frank_wolfe(fw.QuadraticObjective(np.eye(9), shape=(3, 3)), fw.Birkhoff(3),
                      x0=np.full((3, 3), 1 / 3, dtype=np.float32), max_iter=10)
    np.testing.assert_allclose(res.x, 1 / 3, atol=1e-7)  # the minimum, where it started


def test_float32_start_clearly_outside_is_refused():
    with pytest.raises(InfeasibleError, match=r"x0 is not in the domain .*violation 0\.1"):
        frank_wolfe(fw.QuadraticObjective(np.eye(3)), ProbabilitySimplex(),
                    x0=np.array([0.5, 0.5, 0.1], dtype=np.float32))
    # 1e-5 is far beyond float32's rounding (8 eps = 9.5e-07)
    with pytest.raises(InfeasibleError, match="x0 is not in the domain"):
        frank_wolfe(fw.QuadraticObjective(np.eye(3)), ProbabilitySimplex(),
                    x0=np.array([0.5, 0.5, 1e-5], dtype=np.float32))


def test_float64_feasibility_tolerance_is_unchanged():
    from frankwolfe.lmo.base import FEASIBILITY_TOL, feasibility_tolerance

    assert feasibility_tolerance(np.zeros(3)) == FEASIBILITY_TOL
    assert feasibility_tolerance([0.5, 0.5]) == FEASIBILITY_TOL
    assert feasibility_tolerance(np.zeros(3, np.float32)) == 8 * np.finfo(np.float32).eps
    # the float64 barycenter computed in float32 and widened is refused as before
    with pytest.raises(InfeasibleError, match="tolerance 1e-08"):
        frank_wolfe(fw.QuadraticObjective(np.eye(3)), ProbabilitySimplex(),
                    x0=np.full(3, 1 / 3, dtype=np.float32).astype(float))


@pytest.mark.parametrize("flag", ["no", "false", 0, 1, None])
def test_set_debug_takes_a_bool_only(flag):
    """``set_debug("no")`` switched debug mode on (``bool("no")`` is True)."""
    before = fw.debug_enabled()
    with pytest.raises(TypeError, match=r"set_debug: `flag` must be True or False"):
        fw.set_debug(flag)
    assert fw.debug_enabled() == before
    with pytest.raises(TypeError, match="must be True or False"):
        with fw.debug(flag):
            pass
    assert fw.debug_enabled() == before


class _ShapedSimplex(LMO):
    """The probability simplex's oracle with a ``shape`` as a user may write it."""

    def __init__(self, shape):
        self.shape = shape

    def extreme_point(self, g):
        v = np.zeros(g.shape)
        v.reshape(-1)[np.argmin(g)] = 1.0
        return v


class _IntShapedObjective(fw.Objective):
    shape = 3

    def value(self, x):
        return 0.5 * float(np.sum((x - np.array([0.5, 0.3, 0.2])) ** 2))

    def gradient(self, x):
        return x - np.array([0.5, 0.3, 0.2])


@pytest.mark.parametrize("shape", [3, [3], np.int64(3), (3,)])
@pytest.mark.parametrize("method", ["frank_wolfe", "away"])
def test_a_user_shape_as_an_int_or_a_list_is_the_vector_shape(shape, method):
    # as FunctionObjective(shape=3) takes it; the optimum is y, inside the simplex
    y = np.array([0.5, 0.3, 0.2])
    res = fw.minimize(quad(y), _ShapedSimplex(shape), method=method, tol=1e-8, max_iter=5000)
    assert res.x.shape == (3,)
    np.testing.assert_allclose(res.x, y, atol=1e-3)
    res = fw.minimize(_IntShapedObjective(), ProbabilitySimplex(), method=method, tol=1e-8,
                      max_iter=5000)
    np.testing.assert_allclose(res.x, y, atol=1e-3)
    prod = fw.ProductDomain([_ShapedSimplex(shape), ProbabilitySimplex(dim=2)])
    assert prod.dim == 5 and prod.block_shape(0) == (3,)


@pytest.mark.parametrize("bad", ["3", True, 2.7, (2.7,), -3])
def test_objectives_and_domains_read_a_shape_by_one_rule(bad):
    """An objective's `shape` argument and a domain's declared `shape` are one reading:
    text and bools a TypeError, numbers that are no whole dimension a ShapeError."""
    error = TypeError if isinstance(bad, (str, bool)) else ShapeError
    with pytest.raises(error, match=r"FunctionObjective: `shape` must be a tuple of positive"):
        fw.FunctionObjective(lambda x: 0.0, lambda x: x, shape=bad)
    with pytest.raises(error, match=r"_ShapedSimplex: `shape` must be a tuple of non-negative"):
        fw.ProductDomain([_ShapedSimplex(bad), ProbabilitySimplex(dim=2)])
    with pytest.raises(ShapeError, match="positive"):
        fw.FunctionObjective(lambda x: 0.0, lambda x: x, shape=0)


@pytest.mark.parametrize("bad, error", [("ab", TypeError), (2.5, ShapeError),
                                        (-1, ShapeError), ([3, "x"], TypeError),
                                        ({"n": 3}, TypeError)])
def test_a_user_shape_that_is_no_shape_is_named(bad, error):
    f = quad(np.zeros(3))
    pattern = r"_ShapedSimplex: `shape` must be a tuple of non-negative integers .* got "
    with pytest.raises(error, match=pattern):
        frank_wolfe(f, _ShapedSimplex(bad), max_iter=5)
    with pytest.raises(error, match=pattern):
        fw.ProductDomain([_ShapedSimplex(bad), ProbabilitySimplex(dim=2)])

"""Input checks found by a fuzzer: complex data, huge Python ints, bare int() coercions,
bools taken for numbers, and arguments that met numpy's or scikit-learn's errors (which
name no argument of ours).  Each refusal names the function (or class) and the argument."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe._numbers import as_real, check_whole, is_whole, real_array
from frankwolfe.applications import lasso
from frankwolfe.applications.lasso import solve as lasso_solve
from frankwolfe.errors import NonConvexError

A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
B = A @ np.array([1.0, -0.5])
NAN, INF = float("nan"), float("inf")


@pytest.fixture
def problem():
    return fw.LeastSquares(A, B), fw.L1Ball(1.0, dim=2)


# -- the helpers ------------------------------------------------------------------------
def test_number_helpers_take_huge_ints():
    assert as_real(10**30) == 1e30
    assert as_real(10**400) == math.inf and as_real(-(10**400)) == -math.inf
    assert math.isnan(as_real(True)) and math.isnan(as_real("1")) and math.isnan(as_real(None))
    assert is_whole(10**400, 1) and not is_whole(2.5) and not is_whole(INF)
    assert check_whole(4.0, "n") == 4 and check_whole(None, "n", optional=True) is None
    with pytest.raises(ValueError, match=r"f: `n` must be a positive integer, got 2.5"):
        check_whole(2.5, "n", 1, "f")


def test_real_array_refuses_what_a_float_cast_hid():
    assert real_array([[1, 2]], "f", "A").dtype == float
    with pytest.raises(ValueError, match=r"f: `A` must be real, got complex values"):
        real_array(np.array([1 + 2j]), "f", "A")
    with pytest.raises(ValueError, match=r"f: `A` must be real, got complex values"):
        real_array(np.array([1, 2j], dtype=object), "f", "A")
    with pytest.raises(ValueError, match=r"f: `A` must be an array of numbers, got '1'"):
        real_array("1", "f", "A")
    with pytest.raises(ValueError, match=r"f: `A` must be an array of numbers"):
        real_array([[1.0, 2.0], [1.0]], "f", "A")
    with pytest.raises(ValueError, match=r"f: `A` must be an array of numbers, got True"):
        real_array(True, "f", "A", bools=False)
    with pytest.raises(ValueError, match=r"f: `A` must be real, got complex values"):
        real_array(sp.csr_array(np.eye(2) * 1j), "f", "A", sparse=True)


# -- 1. complex data ------------------------------------------------------------------
@pytest.mark.parametrize("make, where, name", [
    (lambda: fw.LeastSquares(A + 1j, B), "LeastSquares", "A"),
    (lambda: fw.LeastSquares(A, B + 1j), "LeastSquares", "b"),
    (lambda: fw.LeastSquares(sp.csr_array(A + 1j), B), "LeastSquares", "A"),
    (lambda: fw.LeastSquares(A, B, offset=[1j, 0.0]), "LeastSquares", "offset"),
    (lambda: fw.QuadraticObjective(np.eye(2) + 0j), "QuadraticObjective", "Q"),
    (lambda: fw.QuadraticObjective(np.eye(2), [1j, 0.0]), "QuadraticObjective", "c"),
    (lambda: fw.LinearModelLoss(A + 1j, np.ones(3)), "LinearModelLoss", "A"),
    (lambda: fw.LinearModelLoss(A, np.ones(3) + 1j), "LinearModelLoss", "y"),
    (lambda: fw.BilinearObjective(A + 1j), "BilinearObjective", "M"),
    (lambda: fw.BilinearObjective(A, a=np.ones(3) + 1j), "BilinearObjective", "a"),
    (lambda: fw.game_value(A + 1j), "game_value", "M"),
    (lambda: lasso.solve_lasso(A + 1j, B, 1.0), "solve_lasso", "A"),
    (lambda: lasso.solve_lasso(A, B, 1.0, x0=[1j, 0.0]), "solve_lasso", "x0"),
    (lambda: lasso.alpha_max(A, B + 1j), "alpha_max", "b"),
    (lambda: lasso.lasso_path(A + 1j, B, [1.0]), "lasso_path", "A"),
    (lambda: lasso.penalty_from_radius(A, B, [1j, 0.0]), "penalty_from_radius", "x"),
])
def test_complex_data_is_refused_by_name(make, where, name):
    with pytest.raises(ValueError, match=rf"{where}: `{name}` must be real, got complex values"):
        make()


def test_complex_data_is_refused_by_radius_from_penalty():
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match=r"radius_from_penalty: `A` must be real"):
        lasso.radius_from_penalty(A + 1j, B, 0.1)


# -- 2. huge ints into the compiled method -------------------------------------------------
@pytest.mark.parametrize("kw", [dict(tol=10**30), dict(tol=10**400),
                                dict(refresh_every=10**30, tol=1e-9),
                                dict(refresh_every=10**400, tol=1e-9),
                                dict(cache_bytes=10**30, tol=1e-9),
                                dict(max_iter=10**30, tol=1e-9)])
def test_compiled_pairwise_takes_huge_ints_as_numbers(problem, kw):
    f, dom = problem
    res = fw.compiled_pairwise_frank_wolfe(f, dom, **kw)
    assert res.status == "converged"


# -- 3. integer options -------------------------------------------------------------------
# a wrong value (ValueError) and a wrong type (TypeError: text, an array, a bool), as
# check_real tells them apart
BAD_WHOLE = [(INF, ValueError), (NAN, ValueError), ("abc", TypeError),
             (np.array([1, 2]), TypeError), (2.5, ValueError), (True, TypeError),
             (0, ValueError)]


@pytest.mark.parametrize("bad, error", BAD_WHOLE)
def test_frank_wolfe_gap_every(problem, bad, error):
    with pytest.raises(error, match=r"frank_wolfe: `gap_every` must be a positive"):
        fw.frank_wolfe(*problem, momentum=0.5, gap_every=bad)


@pytest.mark.parametrize("bad, error", BAD_WHOLE + [(None, TypeError)])
def test_rafw_gap_every(problem, bad, error):
    with pytest.raises(error, match=r"randomized_away_step_frank_wolfe: `gap_every` must"):
        fw.randomized_away_step_frank_wolfe(*problem, gap_every=bad)


@pytest.mark.parametrize("name, bad, error", [
    (n, b, e) for n in ("refresh_every", "cache_bytes")
    for b, e in [(INF, ValueError), (NAN, ValueError), ("abc", TypeError), (None, TypeError),
                 (np.array([1]), TypeError), (2.5, ValueError), (True, TypeError),
                 (-1, ValueError)]])
def test_compiled_pairwise_integer_options(problem, name, bad, error):
    with pytest.raises(error, match=rf"compiled_pairwise_frank_wolfe: `{name}` must be"):
        fw.compiled_pairwise_frank_wolfe(*problem, **{name: bad})


@pytest.mark.parametrize("bad, error", BAD_WHOLE)
def test_fcfw_prune_after(problem, bad, error):
    with pytest.raises(error, match=r"fully_corrective_frank_wolfe: `prune_after` must"):
        fw.fully_corrective_frank_wolfe(*problem, prune_after=bad)


@pytest.mark.parametrize("method", [fw.frank_wolfe, fw.away_step_frank_wolfe,
                                    fw.pairwise_frank_wolfe, fw.compiled_pairwise_frank_wolfe,
                                    fw.fully_corrective_frank_wolfe])
@pytest.mark.parametrize("bad, error", [(2.5, ValueError), (INF, ValueError), ("2", TypeError),
                                        (True, TypeError), (0, ValueError)])
def test_history_every_must_be_whole(problem, method, bad, error):
    with pytest.raises(error, match=r"history_every must be a positive integer"):
        method(*problem, history_every=bad)


def test_history_every_whole_float_is_accepted(problem):
    res = fw.frank_wolfe(*problem, history_every=2.0, max_iter=4, tol=0.0)
    assert list(res.history["iteration"]) == [0, 2, 4]


@pytest.mark.parametrize("method", [fw.frank_wolfe, fw.away_step_frank_wolfe])
@pytest.mark.parametrize("bad", [True, 10**400, "2", None])
def test_lazy_tolerance_refuses_bools_and_overflow(problem, method, bad):
    error, want = ((ValueError, "a finite number >= 1") if bad == 10**400
                   else (TypeError, "a real number"))
    with pytest.raises(error, match=rf"`lazy_tolerance` must be {want}"):
        method(*problem, lazy=True, lazy_tolerance=bad)


@pytest.mark.parametrize("kw, name, error", [
    (dict(cache_bytes=INF), "cache_bytes", ValueError),
    (dict(refresh_every=2.5), "refresh_every", ValueError),
    (dict(refresh_every="a"), "refresh_every", TypeError)])
def test_tracker_options_of_the_objectives(kw, name, error):
    with pytest.raises(error, match=rf"LeastSquares: `{name}` must be"):
        fw.LeastSquares(A, B, **kw)
    with pytest.raises(error, match=rf"QuadraticObjective: `{name}` must be"):
        fw.QuadraticObjective(np.eye(2), **kw)


# -- 4. dim and k -------------------------------------------------------------------------
@pytest.mark.parametrize("make, where, name", [
    (lambda v: fw.L1Ball(1.0, dim=v), "L1Ball", "dim"),
    (lambda v: fw.ProbabilitySimplex(dim=v), "ProbabilitySimplex", "dim"),
    (lambda v: fw.KSparsePolytope(v, 1.0), "KSparsePolytope", "k"),
    (lambda v: fw.KSparsePolytope(1, 1.0, dim=v), "KSparsePolytope", "dim"),
    (lambda v: fw.HyperSimplex(v), "HyperSimplex", "k"),
    (lambda v: fw.KNormBall(v, 1.0), "KNormBall", "k"),
])
@pytest.mark.parametrize("bad, error", [(INF, ValueError), (-INF, ValueError),
                                        (NAN, ValueError), (2.5, ValueError),
                                        (True, TypeError), ("3", TypeError)])
def test_dim_and_k_refused_before_int(make, where, name, bad, error):
    with pytest.raises(error, match=rf"{where}: `{name}` must be a positive integer"):
        make(bad)


def test_ksparse_k_above_dim_still_named():
    with pytest.raises(ValueError, match=r"KSparsePolytope: `k` must be <= `dim`=3, got k=5"):
        fw.KSparsePolytope(5, dim=3)
    assert fw.KSparsePolytope(2.0, dim=3).k == 2


# -- 5. conjugate and fully corrective options ---------------------------------------------
@pytest.mark.parametrize("method, where", [(fw.conjugate_frank_wolfe, "conjugate_frank_wolfe"),
                                           (fw.biconjugate_frank_wolfe,
                                            "biconjugate_frank_wolfe")])
@pytest.mark.parametrize("bad", [None, "abc", np.array([0.1, 0.2]), True, 0.0, 1.0, NAN])
def test_conjugate_delta(problem, method, where, bad):
    with pytest.raises(ValueError, match=rf"{where}: `delta` must lie in \(0, 1\)"):
        method(*problem, delta=bad)


@pytest.mark.parametrize("kw, err, name", [
    (dict(corrective_tol=None), ValueError, "corrective_tol"),
    (dict(corrective_tol="x"), ValueError, "corrective_tol"),
    (dict(corrective_tol=10**400), ValueError, "corrective_tol"),
    (dict(cvxpy_options=2.5), TypeError, "cvxpy_options"),
    (dict(cvxpy_options=0), TypeError, "cvxpy_options"),
    (dict(cvxpy_options=[("verbose", True)]), TypeError, "cvxpy_options"),
    (dict(blocks=np.array([1, 2])), ValueError, "blocks"),
    (dict(blocks="yes"), ValueError, "blocks"),
    (dict(corrective=np.array([1, 2])), ValueError, "corrective"),
])
def test_fcfw_options(problem, kw, err, name):
    with pytest.raises(err, match=rf"fully_corrective_frank_wolfe: `{name}` must"):
        fw.fully_corrective_frank_wolfe(*problem, **kw)


def test_fcfw_numpy_bool_blocks_accepted(problem):
    res = fw.fully_corrective_frank_wolfe(*problem, blocks=np.bool_(False), tol=1e-10,
                                          cvxpy_options={})
    assert res.status == "converged"


# -- 6. huge ints to the shared float checks -----------------------------------------------
@pytest.mark.parametrize("kw", [dict(lazy=True, lazy_tolerance=10**30),
                                dict(sparsify_tol=10**30)])
def test_active_set_float_options_take_huge_ints(problem, kw):
    res = fw.away_step_frank_wolfe(*problem, max_iter=5, **kw)
    assert res.nit <= 5


@pytest.mark.parametrize("bad", [10**400, "1e-9", None, -1.0])
def test_sparsify_tol_refused_by_name(problem, bad):
    error, want = ((ValueError, "a finite number >= 0") if bad in (10**400, -1.0)
                   else (TypeError, "a real number"))
    with pytest.raises(error, match=rf"`sparsify_tol` must be {want}"):
        fw.pairwise_frank_wolfe(*problem, sparsify_tol=bad)


# -- 7. bools and text as domain sizes and bounds ------------------------------------------
@pytest.mark.parametrize("make, where, name", [
    (lambda: fw.NuclearNormBall(radius=True), "NuclearNormBall", "radius"),
    (lambda: fw.Spectrahedron(trace=True), "Spectrahedron", "trace"),
    (lambda: fw.UnitSpectrahedron(radius=True), "UnitSpectrahedron", "radius"),
    (lambda: fw.NuclearNormBall(radius="1"), "NuclearNormBall", "radius"),
])
def test_matrix_domains_refuse_bools(make, where, name):
    with pytest.raises(ValueError, match=rf"{where}: `{name}` must be positive and finite"):
        make()


@pytest.mark.parametrize("lower, upper, name, shown", [
    ("1", 2.0, "lower", "'1'"), (0.0, True, "upper", "True"), (None, 1.0, "lower", "None"),
    ([0.0, "1"], 2.0, "lower", ""), ([True, False], 2.0, "lower", ""),
    (0.0, [1.0, 2j], "upper", None),
])
def test_box_bounds_must_be_numbers(lower, upper, name, shown):
    if shown is None:
        match = rf"Box: `{name}` must be real, got complex values"
    else:
        match = rf"Box: `{name}` must be a number or an array of numbers, got {shown}"
    with pytest.raises(ValueError, match=match):
        fw.Box(lower=lower, upper=upper)
    assert fw.Box([0, 1], 3).shape == (2,)  # integers still are numbers


def test_scaled_l1_ball_bounds_must_be_numbers():
    with pytest.raises(ValueError, match=r"ScaledL1Ball: `upper` must be a number"):
        fw.ScaledL1Ball(-1.0, "2")


# -- 8. gap_every without momentum -------------------------------------------------------
def test_gap_every_without_momentum_is_refused(problem):
    with pytest.raises(ValueError, match=r"frank_wolfe: `gap_every` applies to `momentum` only"):
        fw.frank_wolfe(*problem, gap_every=3)
    with pytest.raises(TypeError, match=r"frank_wolfe: `gap_every` must be a positive"):
        fw.frank_wolfe(*problem, gap_every="abc")


def test_gap_every_defaults_to_10_with_momentum():
    f = fw.LeastSquares(np.eye(20), np.linspace(-1.0, 1.0, 20))
    res = fw.frank_wolfe(f, fw.L1Ball(1.0, dim=20), momentum=0.5, tol=0.0, max_iter=25)
    h = res.history
    certified = [int(k) for k, g in zip(h["iteration"], h["gap"]) if np.isfinite(g) and k < 25]
    assert certified == [0, 10, 20]


@pytest.mark.parametrize("bad", [True, "0.5", np.array([0.5]), 1.0, NAN])
def test_momentum_must_be_a_number(problem, bad):
    with pytest.raises(ValueError, match=r"frank_wolfe: `momentum` must be in \[0, 1\)"):
        fw.frank_wolfe(*problem, momentum=bad)


# -- 9. the lasso helpers ------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [None, "1", np.array([0.1, 0.2]), True, 0.0, INF])
def test_radius_from_penalty_alpha(alpha):
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match=r"radius_from_penalty: `alpha` must be positive"):
        lasso.radius_from_penalty(A, B, alpha)


def test_radius_from_penalty_huge_alpha_and_own_checks():
    pytest.importorskip("sklearn")
    radius, coef = lasso.radius_from_penalty(A, B, 10**30)
    assert radius == 0.0 and not coef.any()
    with pytest.raises(ValueError, match=r"radius_from_penalty: `tol` must be a non-negative"):
        lasso.radius_from_penalty(A, B, 0.1, tol=-1)
    with pytest.raises(ValueError, match=r"radius_from_penalty: `max_iter` must be a positive"):
        lasso.radius_from_penalty(A, B, 0.1, max_iter=0)


@pytest.mark.parametrize("call, where", [
    (lambda a, b: lasso.solve_lasso(a, b, 1.0), "solve_lasso"),
    (lambda a, b: lasso.alpha_max(a, b), "alpha_max"),
    (lambda a, b: lasso.lasso_path(a, b, [1.0]), "lasso_path"),
    (lambda a, b: lasso.penalty_from_radius(a, b, np.zeros(2)), "penalty_from_radius"),
])
@pytest.mark.parametrize("a, b, name", [
    ([[1.0, 2.0], [1.0]], [1.0, 2.0], "A"),
    ("abc", B, "A"),
    (A, "abc", "b"),
    (A, [1.0, [2.0, 3.0], 1.0], "b"),
    (A, sp.csr_array(B.reshape(-1, 1)), "b"),
])
def test_lasso_data_named(call, where, a, b, name):
    with pytest.raises(ValueError, match=rf"{where}: `{name}` must be a"):
        call(a, b)


@pytest.mark.parametrize("radii", ["1", True, [[1.0, 2.0]], [1.0, "2"], 2.0, [1.0, 1j]])
def test_lasso_path_radii(radii):
    with pytest.raises(ValueError, match=r"lasso_path: `radii` must be"):
        lasso.lasso_path(A, B, radii)


def test_solve_lasso_rounding_is_not_called_curvature(monkeypatch):
    """On least squares (convex) a NonConvexError is rounding, e.g. radius=1e30."""
    run = fw.Result.__new__(fw.Result)

    def fake(*args, **kwargs):
        err = NonConvexError("negative curvature at iteration 4")
        err.result = run
        raise err

    monkeypatch.setattr(lasso_solve, "resolve_method", lambda method, where="": fake)
    with pytest.raises(NonConvexError, match=r"solve_lasso: rounding errors, not curvature "
                                             r"\(least squares is convex\): with radius=1e\+30") \
            as info:
        lasso.solve_lasso(A, B, 1e30, method="fw")
    assert info.value.result is run
    assert "negative curvature at iteration 4" in str(info.value)


def test_product_domain_blocks_given_one_by_one_are_named():
    a, b = fw.ProbabilitySimplex(dim=2), fw.L1Ball(1.0, dim=3)
    for call in (lambda: fw.ProductDomain(a, b), lambda: fw.ProductDomain(a),
                 lambda: fw.ProductDomain(3)):
        with pytest.raises(TypeError, match=r"ProductDomain: `blocks` must be a list \(or "
                                            r"tuple\) of LMOs, got .*ProductDomain\(\[block_0"):
            call()
    assert fw.ProductDomain((a, b)).dim == 5


def test_product_domain_blocks_given_one_index_array_share_one_checked_copy():
    full = np.arange(6)
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=6) for _ in range(4)], [full] * 4)
    assert all(ix is dom.block_indices[0] for ix in dom.block_indices)
    full[0] = 5  # the caller's array reused: the domain keeps its own copy
    np.testing.assert_array_equal(dom.block_indices[0], np.arange(6))
    assert not dom.disjoint and dom.dim == 6
    with pytest.raises(ValueError, match="block 0 repeats a coordinate"):
        fw.ProductDomain([fw.ProbabilitySimplex(dim=3)] * 2, [np.array([2, 0, 2])] * 2)
    with pytest.raises(ValueError, match="block 1 repeats a coordinate"):
        fw.ProductDomain([fw.ProbabilitySimplex(dim=2)] * 2, [[0, 1], [3, 3]])
    # indices out of order are distinct too
    assert fw.ProductDomain([fw.ProbabilitySimplex(dim=3)], [[2, 0, 1]]).dim == 3


# -- empty problems -----------------------------------------------------------------------
def test_objectives_refuse_zero_coordinates():
    # accepted before, the run then failed in numpy ("argmax of an empty sequence")
    with pytest.raises(fw.ShapeError, match=r"QuadraticObjective: `Q` must be at least 1 x 1, "
                                            r"got shape \(0, 0\)"):
        fw.QuadraticObjective(np.zeros((0, 0)))
    with pytest.raises(fw.ShapeError, match=r"QuadraticObjective: `Q` .*shape \(0, 0\)"):
        fw.QuadraticObjective(sp.csr_matrix((0, 0)))
    with pytest.raises(fw.ShapeError, match=r"LeastSquares: `A` must have at least one column"
                                            r".*got shape \(3, 0\)"):
        fw.LeastSquares(np.zeros((3, 0)), np.zeros(3))
    # no rows is a problem still (f = 0 on the domain), as before
    assert fw.frank_wolfe(fw.LeastSquares(np.zeros((0, 3)), np.zeros(0)),
                          fw.ProbabilitySimplex()).fun == 0.0


# -- complex values from a user's functions ------------------------------------------------
def test_minimize_refuses_complex_gradients_and_values():
    import warnings

    dom = fw.ProbabilitySimplex(dim=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: refused before any cast
        with pytest.raises(ValueError, match=r"`grad` \(minimize's `jac`\) must return a real "
                                             r"array, got complex values"):
            fw.minimize(lambda x: float(x @ x), dom, jac=lambda x: 2 * x + 1j)
        with pytest.raises(ValueError, match=r"`jac`\) must return a real array"):
            fw.minimize(lambda x: float(x @ x), dom, jac=lambda x: list(2 * x + 1j))
        with pytest.raises(ValueError, match=r"`jac`\) must return a real array"):
            fw.minimize(lambda x: (x @ x, 2 * x + 0j), dom, jac=True)
        with pytest.raises(ValueError, match=r"`fun` \(minimize's `fun`\) must return a real "
                                             r"number, got the complex"):
            fw.minimize(lambda x: (x @ x + 0j, 2 * x), dom, jac=True)
        with pytest.raises(ValueError, match=r"must return a real number"):
            fw.minimize(lambda x: complex(x @ x), dom, jac=lambda x: 2 * x)
    # real ones, as lists too: min ||x||^2 over the simplex is its barycenter
    for jac in (lambda x: 2 * x, lambda x: list(2 * x)):
        res = fw.minimize(lambda x: float(x @ x), dom, jac=jac, max_iter=5000)
        np.testing.assert_allclose(res.x, 1 / 3, atol=1e-3)


# -- scikit-learn's reading of numeric text ---------------------------------------------
def test_constrained_lasso_reads_numeric_text_y_as_sklearn_does():
    from sklearn.linear_model import Lasso

    X = np.array([[1.0, 0.2], [0.3, 1.0], [0.5, 0.5], [0.1, 0.9]])
    y = np.array([1.0, 2.5, 1.5, 2.0])
    ref = lasso.ConstrainedLasso(radius=10.0).fit(X, y).coef_
    for text in (y.astype(str), y.astype(str).astype(object), list(y.astype(str)),
                 y.astype(bytes)):
        np.testing.assert_allclose(lasso.ConstrainedLasso(radius=10.0).fit(X, text).coef_,
                                   ref)
    # scikit-learn converts the same text (its Lasso, whose l1 penalty ~0 is least squares)
    np.testing.assert_allclose(Lasso(alpha=1e-10, tol=1e-12, max_iter=100_000)
                               .fit(X, y.astype(str)).coef_, ref, atol=1e-6)
    with pytest.raises(ValueError, match=r"ConstrainedLasso.fit: `y` must be numbers .*'a'"):
        lasso.ConstrainedLasso().fit(X, np.array(["1", "a", "2", "3"]))
    with pytest.raises(ValueError, match=r"ConstrainedLasso.fit: `y` contains NaN or inf"):
        lasso.ConstrainedLasso().fit(X, np.array(["1", "nan", "2", "3"]))


# -- scalar parameters, half-built objects ---------------------------------------------------
def test_domains_take_a_0d_array_radius():
    for r in (np.array(0.5), np.array(2), np.float32(0.5)):
        ball = fw.L1Ball(r, dim=3)
        assert ball.radius == float(r) and type(ball.radius) is float
        g = np.array([0.3, -2.0, 1.0])
        np.testing.assert_array_equal(ball(g).to_dense(), [0.0, float(r), 0.0])
    assert fw.ProbabilitySimplex(np.array(3.0)).radius == 3.0
    for bad in (np.array(True), np.array([0.5]), np.array(-1.0), np.array("1")):
        with pytest.raises(ValueError, match=r"L1Ball: `radius` must be positive and finite"):
            fw.L1Ball(bad)


def test_half_built_product_domain_has_a_repr():
    for blocks, indices in (([fw.L1Ball(dim=2), 3], None),
                            ([fw.L1Ball(dim=1)], [np.array([-1])])):
        with pytest.raises((TypeError, ValueError)) as info:
            fw.ProductDomain(blocks, indices)
        tb = info.value.__traceback__
        while tb.tb_next is not None and "self" not in tb.tb_frame.f_locals:
            tb = tb.tb_next
        half = tb.tb_frame.f_locals["self"]
        assert repr(half) == f"ProductDomain(n_blocks={len(blocks)})"  # AttributeError before
    assert repr(fw.ProductDomain([fw.L1Ball(dim=2)] * 2)) == \
        "ProductDomain(n_blocks=2, dim=4, kind='cartesian')"

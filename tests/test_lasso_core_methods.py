"""The lasso's method names are the core registry's (frankwolfe.minimize's), with "auto"
its only own word: every core method that runs on an l1 ball is reachable by any of its
names, and solves the lasso (checked against cvxpy); the others are refused, saying why."""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.lasso import (
    ConstrainedLasso,
    lasso_methods,
    lasso_path,
    solve_lasso,
)
from frankwolfe.registry import available_methods, lookup

REFUSED = ("bcfw", "alm", "saddle", "sfw", "dicg")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(1)
    A, b, radius = rng.normal(size=(30, 12)), rng.normal(size=30), 1.0
    x = cp.Variable(12)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius]).solve(
        solver=cp.CLARABEL)
    return A, b, radius, x.value


def test_the_names_are_the_core_registry_s():
    names = lasso_methods()
    refused = {lookup(m) for m in REFUSED}
    assert set(names) == {"auto"} | {m for m in available_methods()
                                      if lookup(m) not in refused}
    for new in ("bcg", "bpcg", "blended_pairwise", "cfw", "bfw", "compiled_pairwise",
                "compiled_pairwise_frank_wolfe", "frank_wolfe", "pairwise_frank_wolfe"):
        assert new in names
    assert "compiled" not in names  # the core's name only: compiled_pairwise


# the methods the lasso's own table did not reach, by their short names and an alias
@pytest.mark.parametrize("method", ["bcg", "bpcg", "blended_pairwise_conditional_gradient",
                                    "bfw", "compiled_pairwise", "compiled_pairwise_frank_wolfe",
                                    "away_step_frank_wolfe", "BPCG"])
@pytest.mark.parametrize("start", [None, "array"])
def test_newly_reachable_methods_solve_the_lasso(problem, method, start):
    A, b, radius, ref = problem
    x0 = None if start is None else np.r_[3.0, -2.0, np.zeros(10)]  # outside the ball
    res = solve_lasso(A, b, radius, method, x0, tol=1e-10, max_iter=50000)
    assert res.status == fw.Status.CONVERGED
    np.testing.assert_allclose(res.x, ref, atol=1e-6)
    assert np.abs(res.x).sum() <= radius * (1 + 1e-12)


def test_conjugate_frank_wolfe_solves_the_lasso(problem):
    A, b, radius, ref = problem
    # conjugate FW without away steps crawls near a face (its gap plateaus near 4e-5
    # here): a loose tol, the certified gap checked against cvxpy's optimum
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve_lasso(A, b, radius, "cfw", tol=1e-3, max_iter=50000)
    assert res.status == fw.Status.CONVERGED and res.gap <= 1e-3
    fstar = 0.5 * np.sum((A @ ref - b) ** 2)
    assert -1e-9 <= res.fun - fstar <= res.gap + 1e-9
    np.testing.assert_allclose(res.x, ref, atol=1e-2)


def test_each_name_means_what_it_means_in_minimize(problem):
    A, b, radius, _ = problem
    for method in ("bpcg", "fw", "compiled_pairwise"):
        ours = solve_lasso(A, b, radius, method, tol=1e-9, max_iter=20000)
        core = fw.minimize(fw.LeastSquares(A, b), fw.L1Ball(radius, dim=12), method=method,
                           tol=1e-9, max_iter=20000)
        assert ours.method == core.method
        np.testing.assert_allclose(ours.x, core.x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", [*REFUSED, "block_coordinate_frank_wolfe"])
def test_methods_that_do_not_solve_the_lasso_are_refused_saying_why(problem, method):
    A, b, radius, _ = problem
    with pytest.raises(ValueError, match=rf"solve_lasso: method={method!r} does not solve "
                                         r"the lasso: it "):
        solve_lasso(A, b, radius, method)


def test_unknown_names_and_non_strings(problem):
    A, b, radius, _ = problem
    with pytest.raises(ValueError, match=r"`method` must be one of \[.*'bpcg'.*\], got "
                                         r"'compiled'"):
        solve_lasso(A, b, radius, "compiled")
    with pytest.raises(TypeError, match=r"`method` must be a method name \(a str\), got 3"):
        lasso_path(A, b, [0.5, 1.0], 3)


def test_estimator_takes_the_core_names(problem):
    A, b, radius, _ = problem
    est = ConstrainedLasso(radius=radius, method="bpcg", fit_intercept=False, tol=1e-12)
    ref = ConstrainedLasso(radius=radius, method="pairwise", fit_intercept=False, tol=1e-12)
    np.testing.assert_allclose(est.fit(A, b).coef_, ref.fit(A, b).coef_, atol=1e-6)
    with pytest.raises(ValueError, match="The 'method' parameter of ConstrainedLasso"):
        ConstrainedLasso(method="compiled").fit(A, b)
    with pytest.raises(ValueError, match="The 'method' parameter of ConstrainedLasso"):
        ConstrainedLasso(method="bcfw").fit(A, b)


def test_estimator_reads_aliases_of_rafw_and_the_compiled_method(problem):
    A, b, _, _ = problem
    # the rafw alias is seeded as rafw is (the other methods take no random_state)
    runs = [ConstrainedLasso(method="randomized_away_step_frank_wolfe", random_state=s,
                             tol=1e-4).fit(A, b).result_ for s in (5, 5)]
    assert runs[0].nit == runs[1].nit and np.array_equal(runs[0].x, runs[1].x)
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match="method='compiled_pairwise_frank_wolfe' \\(the "
                                        "compiled pairwise method\\) has no centred sparse"):
        ConstrainedLasso(method="compiled_pairwise_frank_wolfe").fit(sparse.csr_array(A), b)
    from sklearn.utils import get_tags
    assert not get_tags(ConstrainedLasso(method="compiled_pairwise_frank_wolfe")
                        ).input_tags.sparse
    assert get_tags(ConstrainedLasso(method="bpcg")).input_tags.sparse

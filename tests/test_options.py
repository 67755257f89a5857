"""One public vocabulary: the shared run keywords, the domain and seed keywords,
method names, the relative stopping rule and the feasibility check of user input."""

from __future__ import annotations

import inspect
import warnings
from dataclasses import fields

import numpy as np
import pytest
from lmo_reference import project_simplex

import frankwolfe as fw
from frankwolfe import (
    BilinearObjective,
    FunctionObjective,
    InfeasibleError,
    L1Ball,
    ProbabilitySimplex,
    QuadraticObjective,
    minimize,
)
from frankwolfe.lmo.base import FEASIBILITY_TOL
from frankwolfe.options import RunOptions

SINGLE_DOMAIN = {
    "fw": fw.frank_wolfe,
    "away": fw.away_step_frank_wolfe,
    "pairwise": fw.pairwise_frank_wolfe,
    "rafw": fw.randomized_away_step_frank_wolfe,
    "fcfw": fw.fully_corrective_frank_wolfe,
    "cfw": fw.conjugate_frank_wolfe,
    "bfw": fw.biconjugate_frank_wolfe,
}
RUN_KEYWORDS = [f.name for f in fields(RunOptions)]


def small_problem():
    y = np.array([0.8, 0.6, -0.2, -0.5])
    return QuadraticObjective(np.eye(4), -y), ProbabilitySimplex(dim=4), np.array([0.6, 0.4, 0, 0])


@pytest.mark.parametrize("name", [*SINGLE_DOMAIN, "saddle"])
def test_signatures_list_the_run_keywords_and_the_docstrings_describe_them(name):
    func = fw.saddle_point_frank_wolfe if name == "saddle" else SINGLE_DOMAIN[name]
    params = inspect.signature(func).parameters
    for kw in RUN_KEYWORDS:
        assert params[kw].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[kw].default == getattr(RunOptions(), kw)
        assert f"\n    {kw} : " in func.__doc__, (name, kw)
    assert "options" not in params
    if name == "saddle":
        assert list(params)[1:3] == ["domain_x", "domain_y"]
    else:
        assert list(params)[:3] == ["objective", "domain", "x0"]
        assert "\n    domain : LMO" in func.__doc__
    # the run keywords sit inside "Parameters", before "Returns"
    doc = func.__doc__
    assert doc.index("Parameters") < doc.index("    rtol : ") < doc.index("Returns")


@pytest.mark.parametrize("name", list(SINGLE_DOMAIN))
def test_result_method_is_the_minimize_name(name):
    f, dom, x_star = small_problem()
    res = minimize(f, dom, method=name, tol=1e-10, max_iter=5000,
                   **({"random_state": 0, "subsample": 2} if name == "rafw" else {}))
    assert res.method == name
    assert res.success
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)


def _problem_for(primary):
    """A small problem of the kind the method solves, its keywords and its optimum."""
    f, dom, x_star = small_problem()
    if primary == "saddle":
        return BilinearObjective(np.eye(2)), (ProbabilitySimplex(), ProbabilitySimplex()), \
            {"max_iter": 20}, None
    if primary == "bcfw":
        return f, fw.ProductDomain([dom]), {"tol": 1e-10, "random_state": 0}, x_star
    if primary == "compiled_pairwise":  # least squares only: the same problem as A = I
        return fw.LeastSquares(np.eye(4), [0.8, 0.6, -0.2, -0.5]), dom, {"tol": 1e-10}, x_star
    if primary == "sfw":  # the same QP as a finite sum of n = 3 terms (mean target y)
        ys = np.array([[0.8, 0.6, -0.2, -0.5]]) + np.array([[0.1], [-0.1], [0.0]])

        def value(x, i):
            return float(np.mean(0.5 * x @ x - ys[i] @ x))

        def grad(x, i):
            return x - ys[i].mean(axis=0)

        return fw.FiniteSumObjective(value, grad, 3, shape=(4,)), dom, \
            {"max_iter": 50, "random_state": 0}, None
    if primary == "alm":  # objective, then the sets to intersect
        return f, [dom, fw.Box(0.0, 1.0, dim=4)], {"tol": 1e-10}, None
    extra = {"random_state": 0, "subsample": 2} if primary == "rafw" else {}
    return f, dom, {"tol": 1e-10, "max_iter": 5000, **extra}, x_star


ALIASES = {"frank_wolfe": "fw", "afw": "away", "pfw": "pairwise", "blended_pairwise": "bpcg",
           "blended_conditional_gradient": "bcg", "decomposition_invariant": "dicg",
           "stochastic_frank_wolfe": "sfw", "alternating_linear_minimization": "alm",
           # every method is also reachable by its function's name
           "away_step_frank_wolfe": "away", "pairwise_frank_wolfe": "pairwise",
           "blended_pairwise_conditional_gradient": "bpcg", "block_coordinate_frank_wolfe": "bcfw",
           "fully_corrective_frank_wolfe": "fcfw", "randomized_away_step_frank_wolfe": "rafw",
           "decomposition_invariant_conditional_gradient": "dicg",
           "saddle_point_frank_wolfe": "saddle", "conjugate_frank_wolfe": "cfw",
           "biconjugate_frank_wolfe": "bfw", "compiled_pairwise_frank_wolfe": "compiled_pairwise"}


def test_every_method_function_is_reachable_by_its_own_name():
    for name in ("frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe",
                 "block_coordinate_frank_wolfe", "randomized_away_step_frank_wolfe",
                 "fully_corrective_frank_wolfe", "saddle_point_frank_wolfe"):
        assert name in fw.available_methods()
        if name != "saddle_point_frank_wolfe":  # a wrapper taking the pair of domains
            assert fw.registry.lookup(name.upper()) is getattr(fw, name)
    assert "_minimize_saddle" not in fw.available_methods()


@pytest.mark.parametrize("name", fw.available_methods())
def test_every_minimize_name_is_a_result_method_or_a_documented_alias(name):
    primary = ALIASES.get(name, name)
    assert primary in fw.available_methods()
    f, dom, kw, x_star = _problem_for(primary)
    res = minimize(f, dom, method=name, **kw)
    assert res.method == primary
    if x_star is not None:
        assert res.success
        np.testing.assert_allclose(res.x, x_star, atol=1e-6)


def test_saddle_method_name_and_variant():
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    for kw, variant in (({}, "fw"), ({"away": True}, "away"), ({"corrective": True}, "corrective")):
        res = minimize(BilinearObjective(M), (ProbabilitySimplex(), ProbabilitySimplex()),
                       method="saddle", max_iter=50, **kw)
        assert res.method == "saddle" and res.extra["variant"] == variant


def test_new_keywords_raise_no_warning():
    f, dom, _ = small_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fw.randomized_away_step_frank_wolfe(f, domain=dom, random_state=0, subsample=2)
        fw.frank_wolfe(f, domain=dom)


def test_unknown_keyword_is_a_type_error():
    f, dom, _ = small_problem()
    with pytest.raises(TypeError, match="tolerance"):
        fw.frank_wolfe(f, dom, tolerance=1e-3)
    with pytest.raises(TypeError, match="options"):
        fw.frank_wolfe(f, dom, options=RunOptions())


# -- relative stopping rule ---------------------------------------------------------------


def test_rtol_stops_with_a_certified_relative_error_on_a_large_objective():
    rng = np.random.default_rng(3)
    y = rng.uniform(0.0, 0.05, size=50)  # an interior optimum: FW needs many iterations
    big = 1e6
    f = FunctionObjective(lambda x: big + 0.5 * float((x - y) @ (x - y)), lambda x: x - y,
                          smoothness=1.0, shape=y.shape)
    f_star = big + 0.5 * float(np.sum((project_simplex(y) - y) ** 2))
    rtol = 1e-9
    res = fw.frank_wolfe(f, ProbabilitySimplex(), step_size="agnostic", tol=0.0, rtol=rtol,
                         max_iter=100_000)
    assert res.success and res.nit > 20
    assert res.gap <= rtol * (abs(res.fun) - res.gap)
    # the certificate holds against the closed-form optimum (1e-16 relative: rounding of f)
    assert -1e-16 * f_star <= res.fun - f_star <= rtol * f_star + 1e-16 * f_star
    # and it stopped at the first iteration that met the rule
    gaps, funs = res.history["gap"], res.history["fun"]
    assert np.all(gaps[:-1] > rtol * (np.abs(funs[:-1]) - gaps[:-1]))
    # without rtol the same budget does not reach an absolute tolerance of the same size
    absolute = fw.frank_wolfe(f, ProbabilitySimplex(), step_size="agnostic", tol=1e-12,
                              max_iter=res.nit)
    assert not absolute.success


def test_rtol_rule_for_a_negative_objective_and_bad_values():
    y = np.array([0.3, 0.9, 0.1])
    f = FunctionObjective(lambda x: -1e6 + 0.5 * float((x - y) @ (x - y)), lambda x: x - y,
                          smoothness=1.0, shape=y.shape)
    f_star = -1e6 + 0.5 * float(np.sum((project_simplex(y) - y) ** 2))
    res = fw.away_step_frank_wolfe(f, ProbabilitySimplex(), tol=0.0, rtol=1e-12,
                                   step_size="short")
    assert res.success
    assert -1e-16 * abs(f_star) <= res.fun - f_star <= 1e-12 * abs(f_star) + 1e-16 * abs(f_star)
    for bad in (-1e-3, 1.0, float("nan")):
        with pytest.raises(ValueError, match="rtol must be a number in"):
            fw.frank_wolfe(f, ProbabilitySimplex(), rtol=bad)


def test_rtol_on_a_saddle_problem_certifies_the_gap_relative_to_the_value():
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    L = BilinearObjective(M, a=np.array([1e6, 1e6]), mu_x=1.0, mu_y=1.0)
    res = fw.saddle_point_frank_wolfe(L, ProbabilitySimplex(), ProbabilitySimplex(), away=True,
                                      C=4.0, tol=0.0, rtol=1e-12, max_iter=5000)
    assert res.success
    lo, hi = res.extra["value_lower"], res.extra["value_upper"]
    assert hi - lo <= 1e-12 * min(abs(lo), abs(hi)) * (1 + 1e-12)
    # the saddle value of this game: x = y = (1/2, 1/2) by symmetry, L = 1e6
    assert lo - 1e-9 <= 1e6 <= hi + 1e-9


# -- one feasibility check ------------------------------------------------------------------

def test_check_feasible_names_the_argument_and_the_violation():
    dom = L1Ball(1.0)
    dom.check_feasible(np.array([0.5, -0.5]))
    dom.check_feasible(np.array([1.0 + 0.5 * FEASIBILITY_TOL, 0.0]))
    with pytest.raises(InfeasibleError, match=r"`y0` is not in the domain L1Ball\(radius=1.0\): "
                                              r"violation 0.5 > tolerance 1e-08"):
        dom.check_feasible(np.array([1.0, 0.5]), "`y0`")


def test_warm_start_atoms_go_through_the_same_check():
    f, dom, _ = small_problem()
    # the combination (1, 0, 0, 0) is feasible, its atoms are not
    bad = fw.ActiveSet([fw.Atom(np.array([2.0, 0, 0, 0]), key="far"),
                        fw.Atom(np.zeros(4), key="origin")])
    with pytest.raises(InfeasibleError, match="x0: atom 'far' of the warm-start ActiveSet is "
                                              "not in the domain ProbabilitySimplex"):
        fw.away_step_frank_wolfe(f, dom, bad)


# -- block-coordinate FW: the same run keywords, its budget counted in passes -----------

def two_blocks():
    """Two simplex blocks, f = 1/2 ||x - y||^2: the optimum is the projection per block."""
    y = np.array([0.9, 0.3, 0.2, 0.8])
    f = FunctionObjective(lambda x: 0.5 * float((x - y) @ (x - y)), lambda x: x - y,
                          exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    dom = fw.ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2)])
    return f, dom, np.array([0.8, 0.2, 0.2, 0.8])


def test_bcfw_signature_has_the_run_keywords_with_a_budget_in_passes():
    func = fw.block_coordinate_frank_wolfe
    params = inspect.signature(func).parameters
    for kw in RUN_KEYWORDS:
        assert params[kw].kind is inspect.Parameter.KEYWORD_ONLY
        assert f"\n    {kw} : " in func.__doc__, kw
        if kw != "max_iter":
            assert params[kw].default == getattr(RunOptions(), kw)
    assert params["max_iter"].default == 100
    assert "max_passes" not in params and "options" not in params
    assert list(params)[:3] == ["objective", "domain", "x0"]
    # one entry per keyword: BCFW's own wording of the budget replaces the shared one
    assert func.__doc__.count("\n    max_iter : ") == 1
    assert "\n    max_iter : int, default 100\n        Budget of passes" in func.__doc__


def test_bcfw_max_iter_counts_passes():
    f, dom, _ = two_blocks()
    new = fw.block_coordinate_frank_wolfe(f, dom, max_iter=7, tol=0.0, random_state=0)
    assert new.nit == 7 and new.status == fw.Status.MAX_ITER
    assert new.extra["n_block_steps"] == 7 * dom.n_blocks  # the budget counts passes
    with pytest.raises(ValueError, match="max_iter must be a non-negative integer, got -1"):
        fw.block_coordinate_frank_wolfe(f, dom, max_iter=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fw.block_coordinate_frank_wolfe(f, dom, max_iter=2, random_state=0)


def test_bcfw_history_every_thins_the_rows_and_keeps_the_last():
    f, dom, _ = two_blocks()
    res = fw.block_coordinate_frank_wolfe(f, dom, max_iter=10, tol=0.0, history_every=4,
                                          random_state=0)
    assert res.nit == 10
    np.testing.assert_array_equal(res.history["iteration"], [0, 4, 8, 10])


def test_bcfw_rtol_stops_with_a_certified_relative_error():
    rng = np.random.default_rng(0)
    n, m, big = 4, 10, 1e6
    y = rng.uniform(0.0, 0.05, size=n * m)  # an interior optimum in every block
    f = FunctionObjective(lambda x: big + 0.5 * float((x - y) @ (x - y)), lambda x: x - y,
                          exact_step=lambda x, d, g: -(g @ d) / (d @ d), shape=y.shape)
    dom = fw.ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    x_star = np.concatenate([project_simplex(y[i * m:(i + 1) * m]) for i in range(n)])
    f_star = big + 0.5 * float(np.sum((x_star - y) ** 2))
    rtol = 1e-11
    res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, rtol=rtol, max_iter=5000,
                                          gap_every=1, random_state=0)
    assert res.success and res.nit < 5000
    assert res.gap <= rtol * (abs(res.fun) - res.gap)
    assert -1e-16 * f_star <= res.fun - f_star <= rtol * f_star + 1e-16 * f_star
    # without rtol the same budget does not certify an absolute gap of that size
    absolute = fw.block_coordinate_frank_wolfe(f, dom, tol=1e-13, max_iter=res.nit,
                                               gap_every=1, random_state=0)
    assert not absolute.success


# -- run_frank_wolfe (a user's Variant) takes one RunOptions ------------------------------

class _UserFW(fw.algorithms.Variant):
    name = "user_fw"

    def direction(self, k, tracker, gradient, v, gap, g_dot_x):
        return fw.Direction.frank_wolfe(v), 1.0, None


def test_run_frank_wolfe_takes_run_options():
    f, dom, x_star = small_problem()
    run = fw.algorithms.run_frank_wolfe
    res = run(f, dom, _UserFW(), options=RunOptions(tol=1e-10, max_iter=5000))
    assert res.method == "user_fw" and res.success
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)


# -- the saddle curvature rule has its own name -------------------------------------------

def test_saddle_curvature_rule_solves_matching_pennies():
    L = BilinearObjective(np.array([[1.0, -1.0], [-1.0, 1.0]]), mu_x=1.0, mu_y=1.0)
    kw = dict(away=True, C=4.0, tol=1e-10, max_iter=500)
    new = fw.saddle_point_frank_wolfe(L, ProbabilitySimplex(), ProbabilitySimplex(),
                                      step_size="curvature", **kw)
    assert new.success
    # matching pennies: the equilibrium is (1/2, 1/2) for both players
    np.testing.assert_allclose(new.x, [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(new.extra["y"], [0.5, 0.5], atol=1e-9)


def test_run_keywords_typed_dict_lists_the_run_options_fields_with_their_types():
    from dataclasses import fields
    from typing import get_type_hints

    from frankwolfe.options import RunKeywords

    hints = get_type_hints(RunKeywords)
    assert list(hints) == [f.name for f in fields(RunOptions)]
    option_hints = get_type_hints(RunOptions)
    assert hints == {name: option_hints[name] for name in hints}


def test_a_users_function_named_as_a_method_does_not_take_over_that_name():
    before = fw.registry.lookup("frank_wolfe")

    def frank_wolfe(objective, domain, **kw):  # a user's wrapper, registered by its own name
        return before(objective, domain, **kw)

    try:
        fw.register("test_users_logged_fw")(frank_wolfe)
        assert fw.registry.lookup("frank_wolfe") is before
        assert fw.registry.lookup("test_users_logged_fw") is frank_wolfe
    finally:
        fw.registry._METHODS.pop("test_users_logged_fw", None)


def test_minimize_takes_a_plain_function_and_its_gradient_as_scipy_does():
    """The projection of y onto the simplex, in closed form (sort and threshold)."""
    y = np.array([0.8, 0.6, -0.2, 0.1, 0.3])
    u = np.sort(y)[::-1]
    k = max(j for j in range(1, 6) if u[j - 1] - (u[:j].sum() - 1) / j > 0)
    x_star = np.maximum(y - (u[:k].sum() - 1) / k, 0.0)
    dom = fw.ProbabilitySimplex(dim=5)
    res = minimize(lambda x: 0.5 * np.sum((x - y) ** 2), dom, method="pairwise",
                   jac=lambda x: x - y, tol=1e-10)
    assert res.success and res.method == "pairwise"
    np.testing.assert_allclose(res.x, x_star, atol=1e-8)
    res = minimize(lambda x: (0.5 * np.sum((x - y) ** 2), x - y), dom, method="away",
                   jac=True, tol=1e-10)
    np.testing.assert_allclose(res.x, x_star, atol=1e-8)
    with pytest.raises(TypeError, match="needs its gradient: pass jac=grad"):
        minimize(lambda x: float(x @ x), dom)
    with pytest.raises(TypeError, match="`jac` must be callable or True, got str"):
        minimize(lambda x: float(x @ x), dom, jac="2-point")
    with pytest.raises(TypeError, match="`jac` goes with a plain function objective"):
        minimize(fw.QuadraticObjective(np.eye(5)), dom, jac=lambda x: x)

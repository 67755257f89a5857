"""A new user's first mistakes get the message that says what to do: a class where an
instance is expected, a plain function given to a method function, scipy's x0 in the
domain's place, a function returning (f, gradient) without jac=True."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw

Q = fw.QuadraticObjective(np.eye(3), -np.ones(3))
INSTANCE = r"the class (\w+) \(pass an instance: \1\(\.\.\.\)\)"


@pytest.mark.parametrize("call", [
    lambda: fw.frank_wolfe(Q, fw.ProbabilitySimplex),
    lambda: fw.away_step_frank_wolfe(Q, fw.L1Ball),
    lambda: fw.ProductDomain([fw.ProbabilitySimplex]),
    lambda: fw.frank_wolfe(Q, fw.ProbabilitySimplex(), step_size=fw.Agnostic),
    lambda: fw.CachedLMO(fw.L1Ball),
    lambda: fw.stochastic_frank_wolfe(fw.LinearModelLoss(np.eye(3), np.ones(3)), fw.L1Ball),
], ids=["fw-domain", "away-domain", "product-block", "step-rule", "cached", "sfw-domain"])
def test_a_class_for_an_instance_says_to_make_one(call):
    with pytest.raises(TypeError, match=INSTANCE):
        call()


def test_a_plain_function_to_a_method_function_points_to_its_wrappers():
    with pytest.raises(TypeError, match=r"got function; a plain function f\(x\) is an "
                                        r"objective as FunctionObjective\(f, grad\), or "
                                        r"minimize\(f, domain, jac=grad\)"):
        fw.frank_wolfe(lambda x: float(x @ x), fw.ProbabilitySimplex(dim=3))


@pytest.mark.parametrize("start", [np.ones(3) / 3, [1.0, 0.0, 0.0], 0.5])
def test_scipy_s_x0_in_the_domain_s_place_is_named(start):
    with pytest.raises(TypeError, match=r"second argument is the domain .* x0=\.\.\."):
        fw.minimize(lambda x: float(x @ x), start, jac=lambda x: 2 * x)


def test_a_pair_from_fun_without_jac_true_names_jac_true():
    y = np.array([0.8, 0.6, -0.2])
    with pytest.raises(fw.ShapeError, match=r"got a pair .* minimize\(fun, domain, "
                                            r"jac=True\)'s form"):
        fw.minimize(lambda x: (0.5 * float((x - y) @ (x - y)), x - y),
                    fw.ProbabilitySimplex(dim=3), jac=lambda x: x - y)
    # and with jac=True the same function solves the projection (closed form: y shifted
    # onto the simplex, here [0.6, 0.4, 0])
    res = fw.minimize(lambda x: (0.5 * float((x - y) @ (x - y)), x - y),
                      fw.ProbabilitySimplex(dim=3), jac=True, tol=1e-10)
    np.testing.assert_allclose(res.x, [0.6, 0.4, 0.0], atol=1e-6)


def test_reprs_a_user_reads_show_parameters_and_summarize_arrays():
    class Ball(fw.LMO):
        def __init__(self, center, radius):
            self.center, self.radius = np.asarray(center, float), radius
            self._cache = None  # private state stays out

        def extreme_point(self, g):
            return self.center - self.radius * g / np.linalg.norm(g)

    assert repr(Ball([0, 0, 1], 1.0)) == "Ball(center=[0., 0., 1.], radius=1.0)"
    assert repr(Ball(np.zeros(1000), 2)) == "Ball(center=<array (1000,) float64>, radius=2)"
    f = fw.FunctionObjective(lambda x: 0.5 * x @ x, lambda x: x, smoothness=1.0, shape=3)
    assert repr(f) == "FunctionObjective(fun=<lambda>, grad=<lambda>, shape=(3,), smoothness=1.0)"
    seen = []
    fw.frank_wolfe(fw.QuadraticObjective(np.eye(500), -np.linspace(0, 1, 500)),
                   fw.ProbabilitySimplex(), max_iter=1, callback=lambda s: seen.append(repr(s)))
    assert seen and all(len(r) < 300 and "<array (500,) float64>" in r for r in seen)


@pytest.mark.parametrize("call, guess", [
    (lambda: fw.minimize(Q, fw.ProbabilitySimplex(), "pairwse"), "pairwise"),
    (lambda: fw.minimize(Q, fw.ProbabilitySimplex(), "frank-wolfe"), "frank_wolfe"),
    (lambda: fw.frank_wolfe(Q, fw.ProbabilitySimplex(), step_size="exacct"), "exact"),
    (lambda: fw.block_coordinate_frank_wolfe(Q, fw.ProductDomain([fw.ProbabilitySimplex(dim=3)]),
                                             block_order="gapp"), "gap"),
    (lambda: fw.block_coordinate_frank_wolfe(Q, fw.ProductDomain([fw.ProbabilitySimplex(dim=3)]),
                                             block_step="pairwize"), "pairwise"),
])
def test_a_misspelt_choice_gets_the_close_one(call, guess):
    with pytest.raises(ValueError, match=rf"\(did you mean '{guess}'\?\)"):
        call()


def test_a_word_far_from_every_choice_gets_no_guess():
    with pytest.raises(ValueError) as info:
        fw.minimize(Q, fw.ProbabilitySimplex(), "zzz")
    assert "did you mean" not in str(info.value)

"""Fully corrective FW on a one-block product with its per-block start (and the cutting
plane on one example), short steps with the smoothness constant 0 of a linear
objective, bools refused as random states.

References: closed forms (the simplex projection of 0, the vertex of a linear
objective's smallest coefficient, the one-example two-class SVM).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe._random import as_generator
from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM

# -- fully corrective FW, blocks=True on a one-block ProductDomain ----------------------


def test_fcfw_one_block_product_takes_the_per_block_start():
    """``[Atom]`` was refused as "x0 must be an array" when the product had one block."""
    f = fw.QuadraticObjective(np.eye(3))  # 1/2 ||x||^2: minimized over the simplex at 1/3
    one = fw.ProductDomain([fw.ProbabilitySimplex(dim=3)])
    res = fw.fully_corrective_frank_wolfe(f, one, [fw.Atom(np.array([1.0, 0.0, 0.0]))],
                                          blocks=True, tol=1e-10)
    np.testing.assert_allclose(res.x, np.full(3, 1 / 3), rtol=0, atol=1e-8)
    assert res.fun == pytest.approx(1 / 6, rel=1e-9, abs=1e-12)
    assert -1e-12 <= res.gap <= 1e-9


def _one_example_primal(lam):
    """``min_w lam/2 ||w||^2 + max(0, 1 - (w_1 - w_0))`` (two classes, ``x = 1``,
    label 1): the minimizer is ``w = (-a, a)`` with ``a = min(1/2, 1/lam)``."""
    a = min(0.5, 1.0 / lam)
    return np.array([-a, a]), lam * a * a + max(0.0, 1.0 - 2.0 * a)


@pytest.mark.parametrize("lam", [1.0, 4.0])
def test_cutting_plane_fits_one_example(lam):
    """The n-slack cutting plane passes one start atom per example with blocks=True:
    one example crashed in fully_corrective_frank_wolfe."""
    X, Y = [np.array([1.0])], [1]
    svm = StructuredSVM(MulticlassModel(2, 1), lam=lam, solver="cutting_plane",
                        tol=1e-10).fit(X, Y)
    w, primal = _one_example_primal(lam)
    np.testing.assert_allclose(svm.w_, w, rtol=0, atol=1e-6)
    assert svm.primal(X, Y) == pytest.approx(primal, rel=1e-6, abs=1e-9)


# -- short steps with L = 0 ---------------------------------------------------------------


def _linear():
    return fw.QuadraticObjective(np.zeros((3, 3)), c=[1.0, -1.0, 0.5])  # smoothness 0


@pytest.mark.parametrize("method", [fw.frank_wolfe, fw.away_step_frank_wolfe,
                                    fw.pairwise_frank_wolfe])
def test_short_step_with_zero_smoothness_reaches_the_vertex(method):
    """L = 0 bounds a linear function's gradient variation: the short step is +inf and
    clips to gamma_max; it raised NonConvexError."""
    f = _linear()
    assert f.smoothness == 0.0
    res = method(f, fw.ProbabilitySimplex(dim=3), step_size="short", tol=1e-12)
    np.testing.assert_allclose(res.x, [0.0, 1.0, 0.0], rtol=0, atol=1e-12)
    assert res.fun == pytest.approx(-1.0, rel=0, abs=1e-12)
    # a certificate: f(x) - f* <= gap, with f* = -1 the smallest coefficient of c
    assert -1e-14 <= res.gap <= 1e-12
    assert res.fun - res.gap <= -1.0 + 1e-12


def test_function_objective_and_short_step_take_smoothness_zero():
    c = np.array([1.0, -1.0, 0.5])
    f = fw.FunctionObjective(lambda x: float(c @ x), lambda x: c.copy(), smoothness=0.0)
    res = fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), step_size=fw.ShortStep(0),
                         tol=1e-12)
    assert res.fun == pytest.approx(-1.0, rel=0, abs=1e-12)
    assert -1e-14 <= res.gap <= 1e-12


def test_block_short_step_with_zero_smoothness():
    """The block rule's own check refused L = 0 as well."""
    f = fw.QuadraticObjective(np.zeros((4, 4)), c=[2.0, -1.0, 0.5, -3.0])
    domain = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)])
    res = fw.block_coordinate_frank_wolfe(f, domain, step_size="short", random_state=0,
                                          max_iter=50, tol=1e-12)
    # each block at the vertex of its smaller coefficient: -1 + -3
    np.testing.assert_allclose(res.x, [0.0, 1.0, 0.0, 1.0], rtol=0, atol=1e-12)
    assert res.fun == pytest.approx(-4.0, rel=0, abs=1e-12)


def test_adaptive_estimate_underflow_steps_to_gamma_max():
    """eta * L underflowed to 0 (a positive L0 of 5e-324 and eta 1/2 at once; a long
    run on a linear objective by the products of eta): ZeroDivisionError."""
    res = fw.frank_wolfe(_linear(), fw.ProbabilitySimplex(dim=3),
                         step_size=fw.Adaptive(L0=5e-324, eta=0.5), tol=1e-12)
    assert res.fun == pytest.approx(-1.0, rel=0, abs=1e-12)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1"])
def test_negative_or_nonfinite_smoothness_refused(bad):
    """Refused still, by a message that states the range 0 now belongs to (it said
    "positive"); text raised numpy's TypeError from np.isfinite."""
    # text is no number: a TypeError (house rule) for ShortStep
    with pytest.raises(TypeError if isinstance(bad, str) else ValueError,
                       match=r"ShortStep: `smoothness` must be a (finite number >= 0|real "
                       r"number), got " + re.escape(repr(bad))):
        fw.ShortStep(bad)
    with pytest.raises(TypeError if isinstance(bad, str) else ValueError,
                       match=r"FunctionObjective: `smoothness` must be a (finite number >= 0|"
                       r"real number), got " + re.escape(repr(bad))):
        fw.FunctionObjective(lambda x: 0.0, lambda x: 0 * x, smoothness=bad)


# -- random_state: bools refused ----------------------------------------------------------


def test_as_generator_takes_sequences_of_ints():
    a, b = as_generator([3, 1]).random(), np.random.default_rng([3, 1]).random()
    assert a == b


@pytest.mark.parametrize("flag", [True, False, [True, False], (3, np.True_)])
def test_as_generator_refuses_bools(flag):
    with pytest.raises(TypeError, match=r"^seed must be None, a non-negative integer.*got "
                       + re.escape(repr(flag)) + "$"):
        as_generator(flag, "seed")


def test_block_coordinate_frank_wolfe_refuses_a_bool_random_state():
    """True ran as the seed 1, silently."""
    f = fw.QuadraticObjective(np.eye(4))
    domain = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)])
    with pytest.raises(TypeError, match=r"random_state must be None.*got True"):
        fw.block_coordinate_frank_wolfe(f, domain, random_state=True, max_iter=2)

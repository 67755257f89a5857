"""An objective's answers are checked at every evaluation, not only at x0: a complex
value or gradient, a gradient of another shape than x, or None, is a clear error naming
the objective's method, in every method that reads them (fw, its variants, bcfw, sfw,
the conjugate methods' curvature, saddle-point FW); a NaN gradient read by the default
block line search blames the gradient, not ``exact_step``."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from lmo_reference import project_simplex

import frankwolfe as fw
from frankwolfe import ShapeError
from frankwolfe.atoms import Atom
from frankwolfe.direction import Direction
from frankwolfe.objectives.base import NonFiniteGradientError, Tracker

B = np.array([0.9, 0.6, -0.2, 0.3, 0.1])
SIMPLEX = fw.ProbabilitySimplex(dim=5)
E0 = np.eye(5)[0]


class Quad(fw.Objective):
    """``||x - B||^2 / 2``, whose gradient turns bad (``bad``) after ``good`` calls."""

    good = 10**9

    def __init__(self, bad=None, value=None):
        self.calls = 0
        self.bad = bad
        self.bad_value = value

    def value(self, x):
        if self.bad_value is not None:
            return self.bad_value(x)
        return 0.5 * float((x - B) @ (x - B))

    def gradient(self, x):
        self.calls += 1
        g = x - B
        return self.bad(g) if self.bad is not None and self.calls > self.good else g


class LaterQuad(Quad):
    good = 1  # right at x0: the run gets past the loop's check of x0


# -- item 1: complex answers ---------------------------------------------------------

@pytest.mark.parametrize("method", ["fw", "afw", "bpcg", "cfw"])
def test_complex_value_is_refused(method):
    obj = Quad(value=lambda x: np.complex128(0.5 * (x - B) @ (x - B) + 1j))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a ComplexWarning: an error
        with pytest.raises(ValueError, match=r"Quad\.value must return a real number, got "
                                             r"the complex"):
            fw.minimize(obj, SIMPLEX, method=method)


@pytest.mark.parametrize("method", ["fw", "pfw", "bfw"])
def test_complex_gradient_is_refused(method):
    obj = LaterQuad(bad=lambda g: g + 1j)
    with pytest.raises(ValueError, match=r"LaterQuad\.gradient must return a real array, "
                                         r"got complex values \(dtype complex128\)"):
        fw.minimize(obj, SIMPLEX, method=method, x0=E0)


def test_complex_python_value_names_the_method():
    class Pair(Quad):
        def value_and_gradient(self, x):
            return complex(1.0, 2.0), x - B

    with pytest.raises(ValueError, match=r"Pair\.value_and_gradient must return a real "
                                         r"number, got the complex \(1\+2j\)"):
        fw.minimize(Pair(), SIMPLEX)


def test_complex_gradient_in_bcfw():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(ValueError, match=r"Quad\.gradient must return a real array"):
        fw.minimize(LaterQuad(bad=lambda g: g + 1j), dom, method="bcfw", max_iter=5)


class Game(fw.SaddleObjective):
    def __init__(self, mode):
        self.mode = mode

    def value(self, x, y):
        v = 0.5 * x @ x - 0.5 * y @ y + x @ y
        return np.complex128(v + 1j) if self.mode == "value" else v

    def gradient_x(self, x, y):
        return x + y + 1j if self.mode == "gradient_x" else x + y

    def gradient_y(self, x, y):
        return None if self.mode == "gradient_y" else x - y


@pytest.mark.parametrize(("mode", "error", "match"), [
    ("value", ValueError, r"Game\.value must return a real number, got the complex"),
    ("gradient_x", ValueError, r"Game\.gradient_x must return a real array, got complex"),
    ("gradient_y", TypeError, r"Game\.gradient_y must return an array of real numbers, "
                              r"got None"),
])
def test_saddle_answers_are_checked(mode, error, match):
    doms = (fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3))
    with pytest.raises(error, match=match):
        fw.minimize(Game(mode), doms, method="saddle", max_iter=5)


# -- item 2: stochastic FW's values -------------------------------------------------

def _finite_sum(value=None, gradient=None):
    class FS(fw.FiniteSum):
        n_samples = 4
        shape = (5,)

        def batch_value(self, x, i):
            return value(x) if value is not None else 0.5 * float((x - B) @ (x - B))

        def batch_gradient(self, x, i):
            return gradient(x) if gradient is not None else x - B

    return FS()


def test_sfw_complex_batch_value_is_refused():
    obj = _finite_sum(value=lambda x: np.complex128(0.5 * (x - B) @ (x - B) + 1j))
    with pytest.raises(ValueError, match=r"FS\.batch_value must return a real number, got "
                                         r"the complex"):
        fw.minimize(obj, SIMPLEX, method="sfw", max_iter=20, random_state=0)


@pytest.mark.parametrize("estimator", ["momentum", "minibatch", "svrf"])
@pytest.mark.parametrize(("bad", "error", "match"), [
    (lambda g: g + 1j, ValueError, r"FS\.batch_gradient must return a real array"),
    (lambda g: g.reshape(1, -1), ShapeError,
     r"FS\.batch_gradient: the gradient has shape \(1, 5\) but x has shape \(5,\)"),
    (lambda g: None, TypeError, r"FS\.batch_gradient must return an array of real numbers, "
                                r"got None"),
])
def test_sfw_batch_gradient_is_checked(estimator, bad, error, match):
    obj = _finite_sum(gradient=lambda x: bad(x - B))
    with pytest.raises(error, match=match):
        fw.minimize(obj, SIMPLEX, method="sfw", estimator=estimator, max_iter=20,
                    random_state=0)


@pytest.mark.parametrize("estimator", ["momentum", "minibatch", "svrf"])
def test_sfw_mini_batch_gradient_is_checked(estimator):
    class FS(fw.FiniteSum):
        # right over all the samples (the certificates), wrong on a mini-batch
        n_samples = 4
        shape = (5,)

        def batch_value(self, x, i):
            return 0.5 * float((x - B) @ (x - B))

        def batch_gradient(self, x, i):
            return x - B if len(i) == self.n_samples else (x - B) + 1j

    with pytest.raises(ValueError, match=r"FS\.batch_gradient must return a real array"):
        fw.minimize(FS(), SIMPLEX, method="sfw", estimator=estimator, batch_size=1,
                    max_iter=20, random_state=0)


def test_sfw_estimate_of_ones_own_estimator_is_checked():
    from frankwolfe.algorithms.gradient_estimators import GradientEstimator

    class Nothing(GradientEstimator):
        def estimate(self, k, x):
            return None

    with pytest.raises(TypeError, match=r"Nothing\.estimate must return an array of real "
                                        r"numbers, got None"):
        fw.minimize(_finite_sum(), SIMPLEX, method="sfw", estimator=Nothing(), max_iter=5)


def test_finite_sum_objective_checks_its_callables():
    f = fw.FiniteSumObjective(lambda x, i: np.complex128(1 + 1j), lambda x, i: x + 1j,
                              n_samples=3, shape=(5,))
    with pytest.raises(ValueError, match=r"FiniteSumObjective: `batch_value` must return a "
                                         r"real number, got the complex"):
        f.value(np.zeros(5))
    with pytest.raises(ValueError, match=r"FiniteSumObjective: `batch_gradient` must return "
                                         r"a real array"):
        f.batch_gradient(np.zeros(5), np.arange(2))


def test_sfw_still_solves_a_valid_finite_sum():
    # np.float64 values and integer-valued lists are valid answers
    obj = _finite_sum(value=lambda x: np.float64(0.5 * (x - B) @ (x - B)),
                      gradient=lambda x: list(x - B))
    res = fw.minimize(obj, SIMPLEX, method="sfw", estimator="minibatch",
                      batch_size=4, max_iter=400, random_state=0)
    ref = project_simplex(B)
    assert abs(res.fun - 0.5 * float((ref - B) @ (ref - B))) < 1e-2


# -- item 3: the gradient's shape, at every evaluation -------------------------------

@pytest.mark.parametrize("method", ["fw", "afw", "pfw", "bpcg", "cfw", "bfw"])
@pytest.mark.parametrize("bad", [lambda g: g.reshape(1, -1), lambda g: np.append(g, 0.0)])
def test_gradient_shape_checked_after_x0(method, bad):
    shape = np.shape(bad(np.zeros(5)))
    with pytest.raises(ShapeError, match=rf"LaterQuad\.gradient: the gradient has shape "
                                         rf"{re_shape(shape)} but x has shape \(5,\)"):
        fw.minimize(LaterQuad(bad=bad), SIMPLEX, method=method, x0=E0)


def re_shape(shape):
    return str(shape).replace("(", r"\(").replace(")", r"\)")


def test_gradient_shape_checked_in_bcfw():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)])
    for bad, shape in ((lambda g: np.append(g, 0.0), r"\(6,\)"),
                       (lambda g: g.reshape(1, -1), r"\(1, 5\)")):
        with pytest.raises(ShapeError, match=rf"Quad\.gradient: the gradient has shape "
                                             rf"{shape} but x has shape \(5,\)"):
            fw.minimize(LaterQuad(bad=bad), dom, method="bcfw", max_iter=5)


def test_tracker_trial_answers_are_checked():
    t = Tracker(LaterQuad(bad=lambda g: g[:4]), E0)
    t.gradient()
    d = Direction.frank_wolfe(Atom.vertex(1, 1.0, (5,)))
    with pytest.raises(ShapeError, match=r"LaterQuad\.gradient: the gradient has shape "
                                         r"\(4,\) but x has shape \(5,\)"):
        t.trial_gradient(d, 0.5)
    t = Tracker(Quad(value=lambda x: np.complex64(1 + 1j)), E0)
    with pytest.raises(ValueError, match=r"Quad\.value must return a real number"):
        t.trial_value(d, 0.5)


# -- item 4: a gradient of None -----------------------------------------------------

@pytest.mark.parametrize("method", ["fw", "afw", "cfw", "bfw"])
@pytest.mark.parametrize("obj", [LaterQuad, Quad], ids=["later", "x0"])
def test_none_gradient_is_a_type_error(method, obj):
    o = obj(bad=lambda g: None)
    o.good = 1 if obj is LaterQuad else 0
    with pytest.raises(TypeError, match=rf"{obj.__name__}\.gradient must return an array "
                                        r"of real numbers, got None"):
        fw.minimize(o, SIMPLEX, method=method, x0=E0)


def test_none_gradient_in_bcfw():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(TypeError, match=r"Quad\.gradient must return an array of real "
                                        r"numbers, got None"):
        fw.minimize(LaterQuad(bad=lambda g: None), dom, method="bcfw", max_iter=5)


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_none_gradient_in_the_conjugate_curvature(method):
    class FiniteDifference(Quad):
        # None only for the forward difference of the conjugate methods' curvature
        def gradient(self, x):
            if sys._getframe(1).f_code.co_name == "_hessian_product":
                return None
            return x - B

    with pytest.raises(TypeError, match=r"FiniteDifference\.gradient must return an array "
                                        r"of real numbers, got None"):
        fw.minimize(FiniteDifference(), SIMPLEX, method=method, max_iter=30)


# -- item 5: a NaN gradient behind bcfw's exact line search --------------------------

def test_bcfw_exact_step_nan_gradient_blames_the_gradient():
    class NaNOutside(Quad):
        # NaN in block 0 only: block 1's own gradient is finite, the full gradient the
        # default exact_step_block reads is not
        def gradient(self, x):
            g = x - B
            g[0] = np.nan
            return g

        def exact_step(self, x, d, g):
            return -float(g @ d) / float(d @ d)

    obj = NaNOutside()
    with pytest.raises(NonFiniteGradientError,
                       match=r"NaNOutside\.gradient is not finite \(entry 0 is nan"):
        obj.exact_step_block(np.full(5, 0.2), np.array([2, 3]), np.array([1.0, -1.0]),
                             np.array([0.0, 0.0]))


def test_bcfw_run_with_nan_gradient_and_exact_step_blames_the_gradient():
    class NaNOutside(Quad):
        def gradient(self, x):
            g = x - B
            g[0] = np.nan
            return g

        def exact_step(self, x, d, g):
            return -float(g @ d) / float(d @ d)

    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)])
    for seed in range(4):
        try:
            res = fw.minimize(NaNOutside(), dom, method="bcfw", max_iter=5,
                              step_size="exact", random_state=seed)
        except NonFiniteGradientError as err:
            assert "gradient is not finite" in str(err)
            assert "exact_step" not in str(err).replace("exact_step_block", "")
        else:  # block 0 came first: bcfw's own check of the block gradient
            assert res.status == fw.Status.ERROR
            assert "gradient is not finite" in res.message


# -- valid answers keep working ------------------------------------------------------

def test_valid_answers_of_other_types_still_converge():
    class Loose(fw.Objective):
        def value(self, x):
            return np.float32(0.5 * float((x - B) @ (x - B)))

        def gradient(self, x):
            return list(x - B)

    res = fw.minimize(Loose(), SIMPLEX, tol=1e-6)
    ref = project_simplex(B)
    np.testing.assert_allclose(res.x, ref, atol=1e-3)

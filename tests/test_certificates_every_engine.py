"""Every engine's certificates check their gaps, block by block on a Cartesian product.

A Frank-Wolfe gap ``<g, x - v>`` below zero beyond rounding certifies nothing (``v``
does not minimize), and on a product the blocks' gaps are summed, so a block oracle
answering its worst vertex hides behind the other blocks' gaps: the runs reported
"converged" with gap 1e-17 where the true gap was 1.15.  One rounding allowance
(:func:`frankwolfe._finite.gap_below_rounding`) serves the loop, stochastic FW and the
product's block check.  Also: BCFW's guarded reads of its last good point under a
``KeyboardInterrupt``, its non-finite gradients as one error, and the objective's
answers checked in BCFW and in conjugate FW's Hessian products.

The references are closed forms: ``f = 1/2 ||x - b||^2`` over probability simplices,
whose gap at ``x`` is ``<g, x> - min_j g_j`` per block, and whose minimizer is the
Euclidean projection of ``b`` onto each simplex.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lmo_reference import project_simplex
from wrong_oracles import X0, B, Worst
from wrong_oracles import Dist as _Dist

import frankwolfe as fw
import frankwolfe.algorithms.loop as loop_module
import frankwolfe.lmo.product as product_module
from frankwolfe._finite import gap_below_rounding
from frankwolfe.algorithms.bcfw import passes
from frankwolfe.errors import OracleError, ShapeError
from frankwolfe.objectives.base import NonFiniteGradientError


class _Worst(Worst):
    """The worst-vertex oracle, named as the messages below expect."""


class _Switch(fw.LMO):
    """The probability simplex's oracle for its first ``good`` calls, then the worst
    vertex: a run's certified iterations pass, a later certificate does not."""

    shape = (3,)

    def __init__(self, good: int) -> None:
        self.good = good
        self.calls = 0

    def extreme_point(self, g):
        self.calls += 1
        v = np.zeros(3)
        v[np.argmin(g) if self.calls <= self.good else np.argmax(g)] = 1.0
        return v


def _true_gaps(x, b=B, w=None):
    """The two blocks' Frank-Wolfe gaps over probability simplices, in closed form, for
    ``f = 1/2 sum_j w_j (x_j - b_j)^2``."""
    g = (x - b) * (1.0 if w is None else w)
    return (float(g[:3] @ x[:3] - g[:3].min()), float(g[3:] @ x[3:] - g[3:].min()))


# -- item 1: one rounding allowance --------------------------------------------------

def test_one_rounding_allowance_for_loop_and_product():
    # the loop and the product's block check read the same function, not copies
    assert loop_module.gap_below_rounding is gap_below_rounding
    assert product_module.gap_below_rounding is gap_below_rounding


def test_gap_below_rounding_scalar_and_vectorised():
    # allowance 1e-6 (|<g,x>| + |<g,v>|) + 1e-12 (|f| + f_top): 2e-6 + 2e-12 here
    assert gap_below_rounding(-1e-5, 1.0, 1.0 + 1e-5, 1.0, 1.0) is True
    assert gap_below_rounding(-1.5e-6, 1.0, 1.0 + 1.5e-6, 1.0, 1.0) is False
    assert gap_below_rounding(0.3, 1.0, 0.7, 1.0, 1.0) is False
    # no absolute floor: at scale 2**-40 the same relative gap is caught
    s = 2.0 ** -40
    assert gap_below_rounding(-1e-5 * s, s, (1 + 1e-5) * s, s, s) is True
    gx = np.array([1.0, 1.0, 1.0, np.nan])
    gv = np.array([1.0 + 1e-5, 1.0 + 1e-7, 0.5, 1.0])
    got = gap_below_rounding(gx - gv, gx, gv, 1.0, 1.0)
    np.testing.assert_array_equal(got, [True, False, False, False])  # NaN: not judged


# -- item 2: the loop's certificates on a product, block by block --------------------

_LOOP_CASES = [
    ("fw", {}), ("fw", {"lazy": True}), ("fw", {"momentum": 0.5, "gap_every": 3}),
    ("away", {}), ("away", {"lazy": True}), ("pairwise", {}), ("pairwise", {"lazy": True}),
    ("bpcg", {}), ("bpcg", {"lazy": True}), ("bcg", {}), ("cfw", {}), ("bfw", {}),
]


@pytest.mark.parametrize("method, kw", _LOOP_CASES)
def test_loop_methods_refuse_a_block_oracle_hidden_in_the_sum(method, kw):
    dom = fw.ProductDomain([_Worst(), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(OracleError, match=r"block 0 of the ProductDomain.*at iteration 0"):
        fw.minimize(_Dist(), dom, method=method, max_iter=30, **kw)


def test_fw_reproducer_raises_naming_block_0():
    dom = fw.ProductDomain([_Worst(), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(OracleError, match=r"_Worst\(\) \(block 0 of the ProductDomain\)"):
        fw.minimize(_Dist(), dom, method="fw", x0=X0, max_iter=30)


def test_fcfw_refuses_a_block_oracle_hidden_in_the_sum():
    quad = fw.QuadraticObjective(np.eye(6), -B, 0.5 * float(B @ B))
    dom = fw.ProductDomain([_Worst(), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(OracleError, match=r"block 0 of the ProductDomain"):
        fw.minimize(quad, dom, method="fcfw", max_iter=30)


# block 0 weighted by 0.01: its negative gap (-0.008) is far smaller than block 1's
# (0.5), so the summed gap stays positive and only the block check sees it
_W = np.r_[0.01, 0.01, 0.01, 1.0, 1.0, 1.0]
_BW = np.array([2.0, 0.0, 0.5, 3.0, 2.5, -3.0])
_XW = np.r_[1 / 3, 1 / 3, 1 / 3, 0.0, 0.0, 1.0]


def _weighted():
    return fw.QuadraticObjective(np.diag(_W), -_W * _BW, 0.5 * float(_BW @ (_W * _BW)))


def test_closing_certificate_checks_every_block():
    # momentum: only iteration 0 is certified (its oracle call is the good one); the
    # budget ends the run between certificates and the closing one asks block 0 again
    # (without the block check the run returned max_iter with the summed gap 0.49, the
    # true gap being 0.52)
    dom = fw.ProductDomain([_Switch(1), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(OracleError, match=r"block 0 .* at the closing certificate"):
        fw.minimize(_weighted(), dom, method="fw", x0=_XW, momentum=0.5, gap_every=100,
                    max_iter=2)


def test_result_of_a_stopped_run_is_uncertified_when_a_block_answers_wrongly():
    # a callback stops the run at an uncertified iteration: the result's gap is
    # certified with one more oracle call, whose block 0 answers its worst vertex
    def stop(state):
        if state.k == 1:
            raise RuntimeError("stop here")

    dom = fw.ProductDomain([_Switch(1), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(RuntimeError, match="stop here") as info:
        fw.minimize(_weighted(), dom, method="fw", x0=_XW, momentum=0.5, gap_every=100,
                    max_iter=10, callback=stop)
    res = info.value.result
    assert res.nit == 1
    g = _W * (res.x - _BW)
    assert g @ res.x - g[:3].max() - g[3:].min() > 0.0  # the sum alone passed
    assert math.isnan(res.gap)


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "bpcg"])
def test_correct_block_oracles_still_converge_to_the_projection(method):
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    quad = fw.QuadraticObjective(np.eye(6), -B, 0.5 * float(B @ B))
    res = fw.minimize(quad, dom, method=method, tol=1e-10, max_iter=5000,
                      step_size="exact")
    assert res.status == fw.Status.CONVERGED
    ref = np.r_[project_simplex(B[:3]), project_simplex(B[3:])]
    np.testing.assert_allclose(res.x, ref, atol=1e-6)
    assert abs(sum(_true_gaps(res.x)) - res.gap) <= 1e-12


# -- item 3: stochastic FW ------------------------------------------------------------

_Y = np.stack([B - 0.1, B + 0.1])  # mean B: the full gradient is x - B


def _finite_sum(cls=fw.FiniteSumObjective):
    return cls(lambda x, i: 0.5 * float(np.mean(np.sum((x - _Y[i]) ** 2, axis=1))),
               lambda x, i: x - _Y[i].mean(axis=0), n_samples=2, shape=(6,))


def _f(x):
    return 0.5 * float(np.mean(np.sum((x - _Y) ** 2, axis=1)))


class _Max(fw.LMO):
    """The maximizer of ``<g, .>`` over the probability simplex of dimension 6."""

    shape = (6,)

    def extreme_point(self, g):
        v = np.zeros(6)
        v[np.argmax(g)] = 1.0
        return v


def test_sfw_refuses_an_oracle_answering_the_maximizer():
    with pytest.raises(OracleError, match=r"_Max\(\) answered .* at iteration 0"):
        fw.minimize(_finite_sum(), _Max(), method="sfw", max_iter=50, random_state=0)


def test_sfw_refuses_a_block_oracle_hidden_in_the_sum():
    dom = fw.ProductDomain([_Worst(), fw.ProbabilitySimplex(dim=3)])
    with pytest.raises(OracleError, match=r"block 0 of the ProductDomain.*at iteration 0"):
        fw.minimize(_finite_sum(), dom, method="sfw", max_iter=50, random_state=0)


def test_sfw_certified_gap_matches_the_closed_form():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    res = fw.minimize(_finite_sum(), dom, method="sfw", max_iter=40, random_state=0)
    assert res.gap == pytest.approx(sum(_true_gaps(res.x)), rel=1e-12, abs=1e-15)
    assert res.fun == pytest.approx(_f(res.x), rel=1e-14)


class _Refuses(fw.LMO):
    shape = (6,)

    def extreme_point(self, g):
        raise RuntimeError("the oracle is down")


def test_sfw_first_certificate_failing_returns_f_x0_and_nan():
    x0 = np.full(6, 1 / 6)
    with pytest.raises(RuntimeError, match="the oracle is down") as info:
        fw.minimize(_finite_sum(), _Refuses(), x0=x0, method="sfw", max_iter=5)
    res = info.value.result
    np.testing.assert_array_equal(res.x, x0)
    assert res.fun == pytest.approx(_f(x0), rel=1e-15)
    assert math.isnan(res.gap)


class _NaNFifth(fw.FiniteSumObjective):
    """The full gradient is NaN at its fifth evaluation (the closing certificate of a
    run of 6 iterations: the certificates are at 0, 1, 2, 4 and the close)."""

    calls = 0

    def value_and_gradient(self, x):
        type(self).calls += 1
        f, g = super().value_and_gradient(x)
        return (f, np.full_like(g, np.nan)) if type(self).calls == 5 else (f, g)


def test_sfw_failed_closing_certificate_returns_f_and_nan():
    dom = fw.ProbabilitySimplex(dim=6)
    _NaNFifth.calls = 0
    res = fw.minimize(_finite_sum(_NaNFifth), dom, method="sfw", max_iter=6, tol=0.0,
                      random_state=0)
    assert _NaNFifth.calls == 5
    assert res.status == fw.Status.MAX_ITER
    assert math.isnan(res.gap)
    assert res.fun == pytest.approx(_f(res.x), rel=1e-14)
    assert "not certified" in res.message


# -- item 4: bcfw's last good point under a KeyboardInterrupt -------------------------

def test_bcfw_keyboard_interrupt_from_value_on_the_hurried_retry():
    calls = [0]

    class Interrupting(_Dist):
        def value(self, x):
            calls[0] += 1
            if calls[0] >= 32:
                raise KeyboardInterrupt
            return super().value(x)

    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    try:
        res = fw.minimize(Interrupting(), dom, method="bcfw", gap_every=7, max_iter=30,
                          tol=0, x0=X0, random_state=0)
    except KeyboardInterrupt:  # not the test session's to end
        pytest.fail("the KeyboardInterrupt of the objective's value escaped the run")
    assert res.status == fw.Status.INTERRUPTED
    assert math.isnan(res.fun)  # f could not be read at the point returned
    assert dom.violation(res.x) <= 1e-12


# -- item 5: a non-finite gradient behind bcfw's exact line search --------------------

class _NaNOutside(fw.Objective):
    """NaN in coordinate 0 only: block 1's own gradient is finite, the full gradient
    the default exact_step_block reads is not."""

    def value(self, x):
        return 0.5 * float((x - B[:5]) @ (x - B[:5]))

    def gradient(self, x):
        g = x - B[:5]
        g[0] = np.nan
        return g

    def exact_step(self, x, d, g):
        return -float(g @ d) / float(d @ d)


@pytest.mark.parametrize("seed", range(4))
def test_bcfw_nan_full_gradient_ends_the_run_with_error(seed):
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)])
    res = fw.minimize(_NaNOutside(), dom, method="bcfw", max_iter=5, step_size="exact",
                      random_state=seed)
    assert res.status == fw.Status.ERROR
    assert "gradient is not finite" in res.message
    assert "at pass 0" in res.message


def test_bcfw_block_gradient_check_raises_the_one_error():
    assert not hasattr(passes, "NonFiniteGradient")
    with pytest.raises(NonFiniteGradientError, match="not finite in block 3"):
        passes.check_block_gradient(np.array([1.0, np.inf]), 3)


# -- item 6: the objective's answers checked in bcfw and conjugate FW -----------------

_PRODUCT = [fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)]


def _bcfw(obj, **kw):
    return fw.minimize(obj, fw.ProductDomain(_PRODUCT), method="bcfw", max_iter=3,
                       random_state=0, compiled=False, **kw)


def test_bcfw_complex_partial_gradient_is_a_value_error():
    class Complex(_Dist):
        def partial_gradient(self, x, indices):
            return (x - B)[indices] + 0j

    with pytest.raises(ValueError, match=r"Complex\.partial_gradient must return a real"):
        _bcfw(Complex())


def test_bcfw_partial_gradient_of_another_shape_is_a_shape_error():
    class Column(_Dist):
        def partial_gradient(self, x, indices):
            return (x - B)[indices].reshape(-1, 1)

    with pytest.raises(ShapeError, match=r"Column\.partial_gradient"):
        _bcfw(Column())


def test_bcfw_none_gradient_at_the_certificate_is_a_type_error():
    class NoGradient(_Dist):
        def partial_gradient(self, x, indices):  # the steps read their own
            return (x - B)[indices]

        def gradient(self, x):
            return None

    with pytest.raises(TypeError, match=r"NoGradient\.gradient must return an array"):
        _bcfw(NoGradient(), gap_every=1)


def test_bcfw_complex_value_is_a_value_error():
    class ComplexValue(_Dist):
        def value(self, x):
            return np.complex128(super().value(x) + 1j)

    with pytest.raises(ValueError, match=r"ComplexValue\.value must return a real"):
        _bcfw(ComplexValue())


def test_bcfw_compiled_certificate_checks_the_gradient():
    class ComplexQuad(fw.QuadraticObjective):
        def value_and_gradient(self, x):
            f, g = super().value_and_gradient(x)
            return f, g + 0j

    quad = ComplexQuad(np.eye(6), -B, 0.5 * float(B @ B))
    # the compiled pass does not run in debug mode (the suite's)
    with fw.debug(False):
        res = fw.minimize(fw.QuadraticObjective(np.eye(6), -B, 0.5 * float(B @ B)),
                          fw.ProductDomain(_PRODUCT), method="bcfw", max_iter=3,
                          random_state=0, compiled=True)
        assert res.extra["engine"] == "compiled"
        with pytest.raises(ValueError,
                           match=r"ComplexQuad\.value_and_gradient must return a real"):
            fw.minimize(quad, fw.ProductDomain(_PRODUCT), method="bcfw", max_iter=3,
                        gap_every=1, random_state=0, compiled=True)


class _HVP(_Dist):
    def __init__(self, answer):
        self.answer = answer

    def hessian_vector_product(self, x, v):
        return self.answer(v)


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_conjugate_complex_hessian_product_is_a_value_error(method):
    dom = fw.ProbabilitySimplex(dim=6)
    with pytest.raises(ValueError, match=r"_HVP\.hessian_vector_product must return a real"):
        fw.minimize(_HVP(lambda v: v + 1e-3j), dom, method=method, max_iter=20)


def test_conjugate_hessian_product_of_another_shape_is_a_shape_error():
    dom = fw.ProbabilitySimplex(dim=6)
    with pytest.raises(ShapeError, match=r"_HVP\.hessian_vector_product: the product"):
        fw.minimize(_HVP(lambda v: v.reshape(-1, 1)), dom, method="cfw", max_iter=20)


def test_conjugate_real_hessian_product_still_meets_the_projection():
    dom = fw.ProbabilitySimplex(dim=6)
    res = fw.minimize(_HVP(lambda v: np.array(v, dtype=float)), dom, method="bfw",
                      tol=1e-10, max_iter=2000, step_size="adaptive")
    np.testing.assert_allclose(res.x, project_simplex(B), atol=1e-5)

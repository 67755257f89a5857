"""No absolute floors in ``ActiveSet.check`` and in the conjugate methods' finite
difference.

``f_r(x) = f_1(x / r)`` over the domain scaled by ``r`` is the same problem in other
units; for a power of two ``r`` every product scales exactly (see
``test_active_variant_scale.py``).  The conjugate methods' forward difference of
gradients stepped ``1e-6 max(1, |x|)`` away from ``x``: at radius ``2**-30`` that is a
thousand radii, and bi-conjugate FW, which converges at radius 1, ran out of
iterations.  ``ActiveSet.check`` measured ``x_error`` against ``max(1, |x|)``: an ``x``
wrong by a tenth of its size read as 1e-10 at radius ``2**-30``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import ActiveSet, Atom

_RNG = np.random.default_rng(3)
N, M = 15, 25
A = _RNG.standard_normal((M, N))
B = _RNG.standard_normal(M)
RADII = (1.0, math.ldexp(1.0, -30), math.ldexp(1.0, 30))


def _objective(r: float) -> fw.FunctionObjective:
    """``f_1(z) = 1/2 |A z - B|^2 + 1/4 sum z^4`` at ``z = x / r``: not quadratic (a finite
    difference of gradients depends on its step), and no Hessian-vector product."""

    def fun(x):
        z = x / r
        res = A @ z - B
        return 0.5 * float(res @ res) + 0.25 * float(np.sum(z ** 4))

    def grad(x):
        z = x / r
        return (A.T @ (A @ z - B) + z ** 3) / r

    return fw.FunctionObjective(fun, grad, shape=(N,))


def _run(solver, r: float):
    x0 = np.zeros(N)
    x0[0] = r
    return solver(_objective(r), fw.L1Ball(r, dim=N), x0, tol=1e-10, max_iter=300)


@pytest.mark.parametrize("solver", [fw.conjugate_frank_wolfe, fw.biconjugate_frank_wolfe])
def test_conjugate_methods_run_bit_for_bit_at_any_radius(solver):
    assert not _objective(1.0).has_hessian_vector_product  # the finite difference runs
    ref = _run(solver, 1.0)
    for r in RADII[1:]:
        res = _run(solver, r)
        assert res.nit == ref.nit and res.status == ref.status
        assert np.array_equal(res.x, ref.x * r)
        assert res.fun == ref.fun and res.gap == ref.gap


def test_biconjugate_converges_at_a_small_radius_to_cvxpy_optimum():
    cp = pytest.importorskip("cvxpy")
    z = cp.Variable(N)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ z - B) + 0.25 * cp.sum(z ** 4)),
                      [cp.norm1(z) <= 1.0])
    prob.solve(solver=cp.CLARABEL)
    r = RADII[1]
    res = _run(fw.biconjugate_frank_wolfe, r)
    assert res.status == "converged", res.message
    # f_r(x) = f_1(x / r): the same optimal value
    assert res.fun == pytest.approx(prob.value, rel=1e-6)
    assert res.fun - res.gap <= prob.value + 1e-6 * abs(prob.value)


def _pair(r: float) -> ActiveSet:
    e0 = np.zeros(3)
    e0[0] = r
    e1 = np.zeros(3)
    e1[1] = r
    return ActiveSet([Atom(e0, key="e0"), Atom(e1, key="e1")], [0.5, 0.5])


@pytest.mark.parametrize("r", RADII)
def test_active_set_check_measures_x_error_relative_to_the_atoms(r):
    S = _pair(r)
    # x off by a tenth of the atoms' size: |(0, -0.1 r, 0)| / (0.5 r + 0.5 r)
    stats = S.check(x=np.array([0.5 * r, 0.4 * r, 0.0]))
    assert stats["x_error"] == pytest.approx(0.1, rel=1e-12)
    assert S.check()["x_error"] <= 1e-15


@pytest.mark.parametrize("r", RADII)
def test_active_set_check_of_cancelling_atoms(r):
    """``r e_0`` and ``-r e_0`` at weights 1/2 sum to 0: the error is relative to the
    terms (``r``), not to the sum's norm."""
    e0 = np.zeros(3)
    e0[0] = r
    S = ActiveSet([Atom(e0, key="+"), Atom(-e0, key="-")], [0.5, 0.5])
    x = np.zeros(3)
    x[1] = 1e-3 * r
    assert S.check(x=x)["x_error"] == pytest.approx(1e-3, rel=1e-12)


def test_active_set_check_of_a_zero_atom():
    S = ActiveSet([Atom(np.zeros(3), key="0")], [1.0])
    assert S.check()["x_error"] == 0.0
    assert S.check(x=np.array([1e-3, 0.0, 0.0]))["x_error"] == np.inf

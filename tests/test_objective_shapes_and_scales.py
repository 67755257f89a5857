"""LinearModelLoss reads ``x`` as LeastSquares does and keeps its own ``y``;
QuadraticObjective's symmetry check reads the same at any scale of ``Q``; minimize names
a ``fun`` that is neither an Objective nor a callable, with or without ``jac``."""

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe.errors import ShapeError

A = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
LABELS = np.array([1.0, -1.0, 1.0])
X = np.array([0.2, -0.1])


def _loss(loss, sparse):
    return fw.LinearModelLoss(sp.csr_matrix(A) if sparse else A, LABELS, loss=loss)


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_linear_model_loss_reads_a_column_x_as_the_vector(loss, sparse):
    o = _loss(loss, sparse)
    col = X.reshape(2, 1)
    z = A @ X
    want = (np.mean(np.logaddexp(0.0, -LABELS * z)) if loss == "logistic"
            else 0.5 * np.mean((z - LABELS) ** 2))
    _close(o.value(X), want)
    _close(o.value(col), want)
    g = o.gradient(X)
    assert o.gradient(col).shape == (2, 1)
    _close(o.gradient(col).reshape(-1), g)
    f, gc = o.value_and_gradient(col)
    _close(f, want)
    assert gc.shape == (2, 1)
    _close(gc.reshape(-1), g)
    idx = np.array([0, 2])
    _close(o.batch_value(col, idx), o.batch_value(X, idx))
    bg = o.batch_gradient(col, idx)
    assert bg.shape == (2, 1)
    _close(bg.reshape(-1), o.batch_gradient(X, idx))
    _close(o.sample_derivatives(col, idx), o.sample_derivatives(X, idx))


@pytest.mark.parametrize("method", ["value", "gradient", "value_and_gradient",
                                    "batch_value", "batch_gradient"])
def test_linear_model_loss_names_x_of_the_wrong_size(method):
    o = _loss("logistic", False)
    args = (np.arange(2),) if method.startswith("batch") else ()
    with pytest.raises(ShapeError, match=rf"LinearModelLoss.{method}: `x` has shape "
                                         r"\(3,\) .*expected 2 entries"):
        getattr(o, method)(np.zeros(3), *args)


def test_linear_model_loss_keeps_its_own_labels():
    y = LABELS.copy()
    o = fw.LinearModelLoss(A, y)
    before = o.value(X)
    y[0] = 5.0  # not a label: the objective must not see it
    assert o.y is not y
    _close(o.y, LABELS)
    _close(o.value(X), before)


SHIFTS = [-600, -400, -200, -64, 0, 64, 200, 400, 600]


def _symmetric():
    M = np.random.default_rng(3).standard_normal((20, 20))
    return M @ M.T / 20


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shift", SHIFTS)
def test_quadratic_symmetric_q_passes_at_any_scale(shift, sparse):
    Q = np.ldexp(_symmetric(), shift)
    fw.QuadraticObjective(sp.csr_array(Q) if sparse else Q)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shift", SHIFTS)
def test_quadratic_asymmetric_q_fails_at_any_scale(shift, sparse):
    M = np.random.default_rng(3).standard_normal((20, 20))
    Q = np.ldexp(M, shift)
    with pytest.raises(ValueError, match="is not symmetric"):
        fw.QuadraticObjective(sp.csr_array(Q) if sparse else Q)


def test_quadratic_asymmetry_reported_at_the_scale_of_q():
    M = np.random.default_rng(3).standard_normal((20, 20))
    gaps = []
    for shift in (-600, 0):
        with pytest.raises(ValueError, match="is not symmetric") as info:
            fw.QuadraticObjective(np.ldexp(M, shift))
        gaps.append(float(str(info.value).split("= ")[1].split(" ")[0]))
    np.testing.assert_allclose(gaps[0], np.ldexp(gaps[1], -600), rtol=1e-2, atol=0.0)


def test_minimize_names_a_fun_that_is_no_objective_nor_callable_with_jac():
    with pytest.raises(TypeError, match=r"`fun` \(the objective\) must be an Objective "
                                        r"or a callable, got int"):
        fw.minimize(3, fw.ProbabilitySimplex(), jac=lambda x: x)

"""A ``fun`` answering an array of one entry (``np.array([f])``, a 1x1 product) is read
as that entry, as scipy.optimize.minimize reads it (``np.asarray(fx).item()`` in
``scipy._lib._util._ScalarFunctionWrapper``); larger answers are still refused, by both.
FunctionObjective and minimize refused every array with "must return a scalar"."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import frankwolfe as fw
from frankwolfe.errors import ShapeError

Y = np.array([0.9, -0.4, 0.3])
LOWER, UPPER = np.zeros(3), np.full(3, 0.5)


def value(x):
    return 0.5 * float((x - Y) @ (x - Y))


def grad(x):
    return x - Y


ONE_ENTRY = {"float": value, "(1,)": lambda x: np.array([value(x)]),
             "(1, 1)": lambda x: np.array([[value(x)]]), "list": lambda x: [value(x)],
             "1x1 product": lambda x: 0.5 * (x - Y)[None, :] @ (x - Y)[:, None],
             "float32 (1,)": lambda x: np.array([value(x)], dtype=np.float32)}


@pytest.mark.parametrize("name", ONE_ENTRY)
def test_one_entry_answer_as_scipy_reads_it(name):
    fun = ONE_ENTRY[name]
    x = np.array([0.1, 0.2, 0.3])
    f = fw.FunctionObjective(fun, grad)
    assert type(f.value(x)) is float
    # scipy's own reading of the same answer
    assert f.value(x) == float(np.asarray(fun(x)).item())
    v, _ = f.value_and_gradient(x)
    assert v == f.value(x)

    ours = fw.minimize(fun, fw.Box(LOWER, UPPER), method="away", jac=grad, tol=1e-12,
                       max_iter=1000)
    theirs = scipy.optimize.minimize(fun, np.full(3, 0.25), jac=grad, method="L-BFGS-B",
                                     bounds=list(zip(LOWER, UPPER)),
                                     options={"ftol": 1e-15, "gtol": 1e-12})
    assert theirs.success
    # the box projection of Y, which both find
    np.testing.assert_allclose(ours.x, np.clip(Y, LOWER, UPPER), atol=1e-6)
    np.testing.assert_allclose(ours.x, theirs.x, atol=1e-6)
    assert ours.fun == pytest.approx(theirs.fun, abs=1e-10)


def test_bitwise_the_run_of_the_plain_float():
    runs = [fw.minimize(fun, fw.ProbabilitySimplex(dim=3), jac=grad, max_iter=50, tol=0.0)
            for fun in ONE_ENTRY.values() if fun is not ONE_ENTRY["float32 (1,)"]]
    for res in runs[1:]:
        np.testing.assert_array_equal(res.x, runs[0].x)
        assert res.fun == runs[0].fun


@pytest.mark.parametrize("answer", [np.ones(2), np.ones((1, 2)), [1.0, 2.0], np.empty(0)],
                         ids=repr)
def test_more_entries_refused_as_scipy_refuses_them(answer):
    with pytest.raises(ValueError, match="must return a scalar value"):
        scipy.optimize.minimize(lambda x: answer, np.full(3, 0.25), jac=grad,
                                method="L-BFGS-B", bounds=list(zip(LOWER, UPPER)))
    with pytest.raises(ShapeError, match=r"FunctionObjective: `fun` must return a scalar, got "
                                         r"\w+ of shape \([\d, ]*\) at x of shape \(3,\)"):
        fw.minimize(lambda x: answer, fw.Box(LOWER, UPPER), jac=grad, max_iter=5)


def test_other_answers_still_refused_by_name():
    x = np.zeros(3)
    with pytest.raises(ValueError, match="must return a real number, got the complex"):
        fw.FunctionObjective(lambda x: [1.0 + 2j], grad).value(x)
    with pytest.raises(ValueError, match="must return a real number, got the complex"):
        fw.FunctionObjective(lambda x: np.array([[1.0 + 0j]]), grad).value(x)
    # text was read as a number by float()
    for text in ("3.0", b"3.0", None):
        with pytest.raises(TypeError, match=r"FunctionObjective: `fun` must return a real "
                                            r"number, got "):
            fw.FunctionObjective(lambda x, t=text: t, grad).value(x)
    with pytest.raises(ShapeError, match=r"got a pair \(tuple of 2\)"):
        fw.FunctionObjective(lambda x: (1.0, x), grad).value(x)
    with pytest.raises(ShapeError, match=r"must return a scalar, got ndarray of shape \(1,\)"):
        fw.FunctionObjective(lambda x: np.array([None]), grad).value(x)

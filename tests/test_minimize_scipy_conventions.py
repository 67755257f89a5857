"""minimize with a plain function, as scipy.optimize.minimize takes one: ``jac=True``
runs ``fun`` once per point, a function's answer that is no number is named, and scipy's
keywords that are spelled otherwise here are refused with the way to say them."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.minimize import _function_objective


def _qp(n=6, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return A @ A.T + np.eye(n), rng.standard_normal(n)


def test_jac_true_runs_fun_once_per_point():
    """47 calls at 30 distinct points on a simplex QP: the value and the gradient were
    asked for separately, and each ran fun in full."""
    Q, c = _qp()
    points = []

    def fun(x):
        points.append(x.tobytes())
        return 0.5 * x @ Q @ x + c @ x, Q @ x + c

    dom = fw.ProbabilitySimplex(dim=6)
    for method in ("fw", "away", "pairwise"):
        points.clear()
        res = fw.minimize(fun, dom, method=method, jac=True, tol=1e-9, max_iter=200)
        assert len(points) == len(set(points)), method
        # the same iterates as with a separate gradient (the cache changes no answer)
        ref = fw.minimize(lambda x: 0.5 * x @ Q @ x + c @ x, dom, method=method,
                          jac=lambda x: Q @ x + c, tol=1e-9, max_iter=200)
        assert np.array_equal(res.x, ref.x) and res.nit == ref.nit, method


def test_jac_true_cache_compares_points_by_value():
    Q, c = _qp(3)
    calls = []

    def fun(x):
        calls.append(1)
        return 0.5 * x @ Q @ x + c @ x, Q @ x + c

    f = _function_objective(fun, True)
    x = np.array([0.2, 0.3, 0.5])
    v = f.value(x)
    g = f.gradient(x.copy())  # an equal array: the cached pair
    assert len(calls) == 1
    assert v == pytest.approx(0.5 * x @ Q @ x + c @ x) and np.allclose(g, Q @ x + c)
    g[:] = 99.0  # the caller's change to the gradient reaches no later answer
    assert np.allclose(f.gradient(x), Q @ x + c) and len(calls) == 1
    x[0] = 0.1  # changed in place: a new point
    assert np.allclose(f.gradient(x), Q @ x + c) and len(calls) == 2
    assert f.value(x.astype(np.float32)) == pytest.approx(0.5 * x @ Q @ x + c @ x, rel=1e-6)
    assert len(calls) == 3  # another dtype: another point


def test_jac_true_fun_must_return_a_pair():
    """"cannot unpack non-iterable numpy.float64 object"."""
    dom = fw.ProbabilitySimplex(dim=3)
    with pytest.raises(TypeError, match=r"with jac=True `fun` must return the pair "
                                        r"\(f, gradient\), got (np\.float64\()?[0-9.]+\)? "
                                        r"\(float64\)"):  # numpy 1's repr: the bare number
        fw.minimize(lambda x: np.float64(0.5) * x @ x, dom, jac=True)
    with pytest.raises(TypeError, match=r"`fun` must return the pair .*\(list\)"):
        fw.minimize(lambda x: [1.0, x, x], dom, jac=True)


def test_text_from_fun_or_jac_is_named():
    """"could not convert string to float: 'a'" named neither fun nor minimize."""
    dom = fw.ProbabilitySimplex(dim=3)
    with pytest.raises(TypeError, match=r"minimize: `fun` must return a real number, got "
                                        r"'a' \(str\)"):
        fw.minimize(lambda x: "a", dom, jac=lambda x: x)
    with pytest.raises(TypeError, match=r"minimize: `fun` must return a real number, got "
                                        r"None"):
        fw.minimize(lambda x: None, dom, jac=lambda x: x)
    with pytest.raises(TypeError, match=r"minimize: `jac` must return an array of numbers"):
        fw.minimize(lambda x: 0.0, dom, jac=lambda x: ["a"] * 3)
    with pytest.raises(TypeError, match=r"`fun` \(its f, with jac=True\) must return a real "
                                        r"number, got 'a'"):
        fw.minimize(lambda x: ("a", x), dom, jac=True)


@pytest.mark.parametrize("key,value,hint", [
    ("args", (1.0,), r"functools\.partial"),
    ("options", {"maxiter": 5}, r"pass the method's keywords directly, e\.g\. max_iter="),
    ("maxiter", 5, r"max_iter="),
    ("bounds", [(0, 1)] * 3, r"fw\.Box\(lower, upper\)"),
    ("constraints", ({"type": "eq"},), r"the `domain` argument, an LMO"),
    ("hess", lambda x: np.eye(3), r"first order"),
    ("hessp", lambda x, p: p, r"first order"),
])
def test_scipy_keywords_refused_with_the_way_here(key, value, hint):
    """"frank_wolfe() got an unexpected keyword argument 'X'" named the inner function."""
    dom = fw.ProbabilitySimplex(dim=3)
    for method in ("fw", "away", "saddle"):
        with pytest.raises(TypeError, match=rf"minimize: scipy's keyword `{key}` .*{hint}"):
            fw.minimize(lambda x: 0.5 * x @ x, dom, method=method, jac=lambda x: x,
                        **{key: value})

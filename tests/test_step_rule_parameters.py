"""The step rules' numeric parameters: each finite and in its range, refused by name
(ValueError for a value out of range, NaN or inf; TypeError for what is no number), and
numpy's scalars accepted where Python's are."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.step_size import (
    Adaptive,
    Agnostic,
    Armijo,
    NonConvexAgnostic,
    SaddleBacktracking,
    SaddleStep,
    Secant,
)

# (rule, parameter, values out of range)
_OUT_OF_RANGE = [
    (Agnostic, "ell", [0.0, -1.0, math.nan, math.inf, -math.inf, 10**400]),
    (NonConvexAgnostic, "scale", [0.0, -2.0, math.nan, math.inf]),
    (Adaptive, "L0", [0.0, -1.0, math.nan, math.inf]),
    (Adaptive, "eta", [0.0, 1.5, math.nan, -math.inf]),
    (Adaptive, "tau", [1.0, 0.5, math.nan, math.inf]),
    (Armijo, "c", [0.0, 1.0, math.nan, math.inf]),
    (Armijo, "beta", [0.0, 1.0, math.nan, -0.5]),
    (Secant, "tol", [0.0, 1.0, math.nan, math.inf]),
    (SaddleStep, "C", [0.0, -1.0, math.nan, math.inf]),
    (SaddleStep, "nu", [0.0, 1.5, math.nan, -1.0]),
    (SaddleBacktracking, "nu", [0.0, 2.0, math.nan]),
    (SaddleBacktracking, "shrink", [0.0, 1.01, math.nan, math.inf]),
]


def _build(rule, name, value):
    if rule is SaddleStep and name == "nu":
        return rule(C=1.0, nu=value)
    if rule is SaddleStep:
        return rule(C=value)
    return rule(**{name: value})


#: the rules whose pair of factors is stated in one message ("need 0 < c < 1 and ...")
_JOINT = {(Adaptive, "eta"), (Adaptive, "tau"), (Armijo, "c"), (Armijo, "beta")}


@pytest.mark.parametrize("rule,name,bads", _OUT_OF_RANGE,
                         ids=[f"{r.__name__}-{n}" for r, n, _ in _OUT_OF_RANGE])
def test_out_of_range_refused_by_name(rule, name, bads):
    for bad in bads:
        if (rule, name) in _JOINT:
            pattern = rf"{rule.__name__}: need .*{name}.*, got .*{name}={re.escape(repr(bad))}"
        else:
            pattern = rf"{rule.__name__}: `{name}` must be .*, got {re.escape(repr(bad))}"
        with pytest.raises(ValueError, match=pattern):
            _build(rule, name, bad)


@pytest.mark.parametrize("rule,name,_", _OUT_OF_RANGE,
                         ids=[f"{r.__name__}-{n}" for r, n, _ in _OUT_OF_RANGE])
def test_non_numbers_are_type_errors_by_name(rule, name, _):
    for bad in ("2", None if name not in ("L0", "C") else [1.0], True, 1 + 0j):
        with pytest.raises(TypeError, match=rf"{rule.__name__}: `{name}` must be a real number, "
                                            rf"got {re.escape(repr(bad))}"):
            _build(rule, name, bad)


def test_numpy_scalars_are_accepted():
    assert Agnostic(np.float64(3.0)).ell == 3.0
    assert Agnostic(np.int64(1)).ell == 1.0
    assert NonConvexAgnostic(np.float32(0.5)).scale == 0.5
    rule = Adaptive(L0=np.float64(2.0), eta=np.float64(0.5), tau=np.int64(3))
    assert (rule.L0, rule.eta, rule.tau) == (2.0, 0.5, 3.0)
    assert Armijo(c=np.float64(0.1), beta=np.float64(0.5)).beta == 0.5
    assert Secant(tol=np.float64(1e-6)).tol == 1e-6
    step = SaddleStep(np.int64(4), nu=np.float64(0.5))
    assert (step.C, step.nu) == (4.0, 0.5)
    assert type(step.C) is float and type(Agnostic(np.int64(2)).ell) is float
    assert SaddleBacktracking(np.float64(1.0), np.float64(0.5)).shrink == 0.5


def test_agnostic_nan_no_longer_takes_full_steps():
    """Agnostic(ell=nan) was accepted: min(gamma_max, nan) is gamma_max, every step a full
    one, and the run ended at f = 11.41 where the optimum is 2.45.  A valid ell reaches it
    (checked against the optimum of the same least-squares problem by cvxpy)."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    A, b = rng.standard_normal((10, 6)), rng.standard_normal(10)
    with pytest.raises(ValueError, match="Agnostic: `ell`"):
        fw.Agnostic(ell=np.nan)
    x = cp.Variable(6)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= 1])
    prob.solve(solver=cp.CLARABEL)
    res = fw.frank_wolfe(fw.LeastSquares(A, b), fw.L1Ball(dim=6), step_size=fw.Agnostic(3.0),
                         max_iter=3000, tol=0.0)
    assert res.fun - prob.value <= 1e-2 * max(1.0, abs(prob.value))

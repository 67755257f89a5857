"""A gradient function that writes into one output array and returns it every call (numpy's
``out=``): the run must not read a gradient it holds after the next call overwrote it.
The bi-conjugate methods' finite-difference product of two gradients came out 0 that
way, and with it a false "converged" at gap 0."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw


def _problem():
    rng = np.random.default_rng(1)
    return rng.standard_normal((12, 10)), 3 * rng.standard_normal(12)


def _true_gap(A, b, x):
    g = A.T @ (A @ x - b)
    return float(g @ x + np.linalg.norm(g))  # min over the unit ball of <g, s> is -||g||


@pytest.mark.parametrize("method", ["cfw", "bfw", "fw", "pairwise"])
@pytest.mark.parametrize("step_size", ["adaptive", "secant"])
def test_a_jac_that_reuses_its_output_array(method, step_size):
    A, b = _problem()
    buf = np.empty(10)

    def grad(x):
        np.dot(A.T, A @ x - b, out=buf)
        return buf

    res = fw.minimize(lambda x: 0.5 * float(np.sum((A @ x - b) ** 2)), fw.L2Ball(1.0, dim=10),
                      jac=grad, method=method, step_size=step_size, tol=1e-8)
    true = _true_gap(A, b, res.x)
    assert res.gap == pytest.approx(true, rel=1e-6, abs=1e-12)
    if res.status == "converged":
        assert true <= 1e-8 * (1 + 1e-6)


class _BufferedLeastSquares(fw.Objective):
    """An Objective of a user's own whose gradient is one array written each call."""

    def __init__(self, A, b):
        self.A, self.b = A, b
        self.buf = np.empty(A.shape[1])

    def value(self, x):
        return 0.5 * float(np.sum((self.A @ x - self.b) ** 2))

    def gradient(self, x):
        np.dot(self.A.T, self.A @ x - self.b, out=self.buf)
        return self.buf


@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_an_objective_whose_gradient_reuses_its_array_in_the_conjugate_methods(method):
    A, b = _problem()
    res = fw.minimize(_BufferedLeastSquares(A, b), fw.L2Ball(1.0, dim=10), method=method,
                      step_size="adaptive", tol=1e-8)
    true = _true_gap(A, b, res.x)
    assert res.status == "converged"
    assert true <= 1e-8 * (1 + 1e-6)

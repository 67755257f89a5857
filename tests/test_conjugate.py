"""Conjugate and bi-conjugate Frank-Wolfe (core variants).

References: cvxpy solutions of the same problems, and the conjugacy
conditions checked with the explicit Hessian.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    FunctionObjective,
    L1Ball,
    Objective,
    ProbabilitySimplex,
    biconjugate_frank_wolfe,
    conjugate_frank_wolfe,
    frank_wolfe,
    minimize,
)
from frankwolfe.algorithms.conjugate import _Conjugate


class _Quadratic(Objective):
    """``1/2 (x - y)^T Q (x - y)`` with an explicit Hessian-vector product."""

    def __init__(self, Q: np.ndarray, y: np.ndarray) -> None:
        self.Q, self.y = Q, y
        self.shape = y.shape

    def value(self, x):
        r = x - self.y
        return 0.5 * float(r @ self.Q @ r)

    def gradient(self, x):
        return self.Q @ (x - self.y)

    def exact_step(self, x, direction, gradient):
        curv = float(direction @ self.Q @ direction)
        return -float(gradient @ direction) / curv if curv > 0 else np.inf

    def hessian_vector_product(self, x, v):
        return self.Q @ v


def _problem(seed: int, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = U @ np.diag(np.logspace(0, 3, n)) @ U.T  # condition number 1e3
    y = rng.standard_normal(n) * 0.3 + 1.0 / n
    return Q, y


def _cvxpy_simplex(Q, y):
    x = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - y, cp.psd_wrap(Q))),
                      [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    return x.value, prob.value


@pytest.mark.parametrize("solver", [conjugate_frank_wolfe, biconjugate_frank_wolfe])
def test_matches_cvxpy_on_simplex(solver):
    Q, y = _problem(0)
    x_ref, f_ref = _cvxpy_simplex(Q, y)
    res = solver(_Quadratic(Q, y), ProbabilitySimplex(dim=y.size), tol=1e-9, max_iter=20_000)
    assert res.success, res.message
    assert res.fun == pytest.approx(f_ref, abs=1e-7)
    np.testing.assert_allclose(res.x, x_ref, atol=1e-4)
    assert res.x.min() >= 0 and res.x.sum() == pytest.approx(1.0, abs=1e-12)


def test_fewer_iterations_than_frank_wolfe():
    # the point of the method: on an ill-conditioned quadratic with an
    # interior-of-a-face optimum FW zig-zags, conjugate directions do not
    Q, y = _problem(1)
    f = _Quadratic(Q, y)
    dom = ProbabilitySimplex(dim=y.size)
    budget = 500
    assert frank_wolfe(f, dom, tol=1e-6, max_iter=budget).status == "max_iter"
    assert conjugate_frank_wolfe(f, dom, tol=1e-6, max_iter=budget).success
    assert biconjugate_frank_wolfe(f, dom, tol=1e-6, max_iter=budget).success


def test_finite_difference_fallback_without_hessian_hook():
    Q, y = _problem(2, n=15)
    x = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - y, cp.psd_wrap(Q))), [cp.norm1(x) <= 0.5])
    prob.solve(solver=cp.CLARABEL)
    g = FunctionObjective(lambda z: 0.5 * (z - y) @ Q @ (z - y), lambda z: Q @ (z - y))
    assert not g.has_hessian_vector_product
    res = biconjugate_frank_wolfe(g, L1Ball(0.5), np.zeros(y.size), step_size="adaptive",
                                  tol=1e-8, max_iter=50_000)
    assert res.success, res.message
    assert res.fun == pytest.approx(prob.value, abs=1e-6)


def test_conjugate_points_are_conjugate():
    """The CFW point makes s - x Q-conjugate to s1 - x; the BFW point to s1 - x and s2 - x."""
    Q, y = _problem(3, n=6)
    f = _Quadratic(Q, y)
    rng = np.random.default_rng(0)
    checked = {"cfw": 0, "bfw": 0}
    for _ in range(200):
        pts = rng.dirichlet(np.ones(6), size=4)
        x, s1, s2, v = pts
        tracker = f.tracker(x)
        for memory in (1, 2):
            var = _Conjugate(memory, 1e-4)
            var.start(tracker, None, ProbabilitySimplex())
            var.s1, var.s2 = s1, (s2 if memory == 2 else None)
            s, kind = var._conjugate_point(tracker, v)
            if kind == "cfw":
                alpha = (s - v) @ (s1 - v) / ((s1 - v) @ (s1 - v))
                if alpha < 1 - 1e-4 - 1e-9:  # not clipped
                    assert abs((s1 - x) @ Q @ (s - x)) <= 1e-9 * np.linalg.norm(Q) * 4
                    checked["cfw"] += 1
            elif kind == "bfw":
                assert abs((s1 - x) @ Q @ (s - x)) <= 1e-9 * np.linalg.norm(Q) * 4
                assert abs((s2 - x) @ Q @ (s - x)) <= 1e-9 * np.linalg.norm(Q) * 4
                # a convex combination of v, s1, s2: stays feasible
                w = np.linalg.lstsq(np.stack([v, s1, s2], axis=1), s, rcond=None)[0]
                assert w.min() >= -1e-9 and w.sum() == pytest.approx(1.0, abs=1e-9)
                checked["bfw"] += 1
    assert checked["cfw"] > 5 and checked["bfw"] > 5


def test_registered_in_minimize():
    Q, y = _problem(4, n=10)
    f = _Quadratic(Q, y)
    for name, solver in (("cfw", conjugate_frank_wolfe), ("bfw", biconjugate_frank_wolfe)):
        assert name in fw.available_methods()
        res = minimize(f, ProbabilitySimplex(dim=10), method=name, tol=1e-8, max_iter=5000)
        assert res.method == name and solver.__name__.endswith("conjugate_frank_wolfe")
        assert res.success


def test_bad_delta():
    Q, y = _problem(5, n=4)
    with pytest.raises(ValueError, match=r"`delta` must lie in \(0, 1\), got 1.5"):
        conjugate_frank_wolfe(_Quadratic(Q, y), ProbabilitySimplex(dim=4), delta=1.5)


@pytest.mark.parametrize("rule", ["agnostic", "monotonic", fw.step_size.Agnostic()])
@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_open_loop_steps_are_refused(rule, method):
    """Under an open-loop step the conjugate point collapsed next to x and nothing reset
    the memory: f - f* = 0.61 after 3000 steps where FW with the same rule reached
    7e-7."""
    Q, y = _problem(5, n=4)
    with pytest.raises(ValueError, match=r"needs a step rule that reads f .* the run stalls"):
        fw.minimize(_Quadratic(Q, y), ProbabilitySimplex(dim=4), method=method,
                    step_size=rule, max_iter=10)


def test_extra_counts_step_kinds():
    Q, y = _problem(0, n=40)
    res = biconjugate_frank_wolfe(_Quadratic(Q, y), ProbabilitySimplex(dim=40), tol=1e-8,
                                  max_iter=10_000)
    e = res.extra
    assert e["n_fw_steps"] + e["n_cfw_steps"] + e["n_bfw_steps"] == res.nit
    assert e["n_bfw_steps"] > 0

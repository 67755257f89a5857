"""Shared by the tests of the LMO family (issue #24): the two-sided comparison, cvxpy's
solver settings, a reference ``min <d, x>`` compiled once, a random polytope; the
Euclidean projection onto the simplex, the closed form many tests compare with."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

LP_TOL = 1e-7  # HiGHS's LP optimum against the oracle's
CONE_TOL = 1e-6  # Clarabel's interior point on SOCPs and SDPs
CLARABEL = dict(solver=cp.CLARABEL)  # its default tolerances (1e-8): tighter ones end "inaccurate"


def project_simplex(y: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection onto the simplex ``{x >= 0, sum x = radius}`` by sorting
    (Duchi et al. 2008): a closed form independent of the library."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - radius
    rho = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * (1.0 + abs(b))


class Reference:
    """``min <d, x>`` over a set modelled in cvxpy, compiled once (``d`` a Parameter)."""

    def __init__(self, shape, constraints_of, solve_kw):
        self.x = cp.Variable(shape, symmetric=len(shape) == 2)
        self.d = cp.Parameter(shape)
        objective = cp.sum(cp.multiply(self.d, self.x))
        self.problem = cp.Problem(cp.Minimize(objective), constraints_of(self.x))
        self.solve_kw = solve_kw

    def __call__(self, d: np.ndarray) -> float:
        # the value is linear in d: solve for d / max|d| (interior-point tolerances are
        # absolute) and scale back
        scale = float(np.max(np.abs(d))) or 1.0
        self.d.value = d / scale
        self.problem.solve(**self.solve_kw)
        assert self.problem.status == cp.OPTIMAL
        return scale * float(self.problem.value)


def random_polytope(seed, n=10, m=30, sparse=False):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    if sparse:
        A[rng.random((m, n)) < 0.6] = 0.0
    b = rng.random(m) + 0.5  # 0 is strictly inside
    A_eq = rng.standard_normal((2, n))
    x_in = rng.standard_normal(n) * 0.01
    x_in *= 0.4 / max(1.0, float(np.max((A @ x_in) / b)))
    b_eq = A_eq @ x_in
    if sparse:
        A, A_eq = sp.csr_array(A), sp.csr_array(A_eq)
    return A, b, A_eq, b_eq

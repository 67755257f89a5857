"""simplex_qp against closed forms and cvxpy."""
import cvxpy as cp
import numpy as np
import pytest

from frankwolfe.algorithms.simplex_qp import simplex_qp


def _cvxpy_simplex_qp(G, lin):
    w = cp.Variable(lin.size, nonneg=True)
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, cp.psd_wrap(G)) + lin @ w),
               [cp.sum(w) == 1]).solve(solver="CLARABEL")
    return 0.5 * w.value @ G @ w.value + lin @ w.value


def test_small_reduced_gradient_still_enters_the_support():
    # min 1/2 (w0^2 + w1^2) + 0.9995 w1 on the simplex: w1 = (1 - 0.9995) / 2 (closed form)
    G, lin = np.eye(2), np.array([0.0, 0.9995])
    w, _ = simplex_qp(G, lin)
    assert w == pytest.approx([1 - 0.00025, 0.00025], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_iter", [None, 1])
def test_random_qps_match_cvxpy(seed, max_iter):
    rng = np.random.default_rng(seed)
    k = 8
    B = rng.standard_normal((k, 3 if seed % 2 else k))  # semidefinite and definite G
    G = B @ B.T
    lin = rng.standard_normal(k)
    w0 = rng.dirichlet(np.ones(k))  # interior warm start: drops are needed
    w, _ = simplex_qp(G, lin, w0, max_iter=max_iter)
    assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12
    assert 0.5 * w @ G @ w + lin @ w <= _cvxpy_simplex_qp(G, lin) + 1e-8

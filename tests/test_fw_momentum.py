"""Vanilla Frank-Wolfe with gradient momentum, against cvxpy's optimum."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from frankwolfe import L1Ball, ProbabilitySimplex, QuadraticObjective, frank_wolfe


@pytest.mark.parametrize("seed", range(20))
def test_momentum_fw_reaches_the_cvxpy_optimum(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 30))
    M = rng.standard_normal((d, d))
    Q, c = M.T @ M / d + 0.1 * np.eye(d), rng.standard_normal(d)
    l1 = seed % 2 == 0
    dom = L1Ball(1.0, dim=d) if l1 else ProbabilitySimplex(dim=d)
    x = cp.Variable(d)
    cons = [cp.norm1(x) <= 1.0] if l1 else [x >= 0, cp.sum(x) == 1]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL)
    # tol 1e-4: on two of these faces vanilla FW itself zig-zags for 2e5 iterations at 1e-6
    res = frank_wolfe(QuadraticObjective(Q, c), dom, momentum=0.9, tol=1e-4, max_iter=200000)
    assert res.status == "converged"
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7


def test_momentum_certifies_every_gap_every_iterations():
    rng = np.random.default_rng(1)
    M = rng.standard_normal((20, 20))
    f = QuadraticObjective(M.T @ M / 20 + np.eye(20), rng.standard_normal(20))
    res = frank_wolfe(f, L1Ball(1.0, dim=20), momentum=0.5, gap_every=7, tol=0.0,
                      max_iter=50)
    h = res.history
    certified = [int(k) for k, g in zip(h["iteration"], h["gap"]) if np.isfinite(g) and k < 50]
    assert certified == list(range(0, 50, 7))  # then the closing certificate at k = 50


def test_momentum_arguments():
    f = QuadraticObjective(np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="momentum"):
        frank_wolfe(f, ProbabilitySimplex(dim=3), momentum=1.0)
    with pytest.raises(ValueError, match="gap_every"):
        frank_wolfe(f, ProbabilitySimplex(dim=3), momentum=0.5, gap_every=0)
    with pytest.raises(ValueError, match="lazy"):
        frank_wolfe(f, ProbabilitySimplex(dim=3), momentum=0.5, lazy=True)

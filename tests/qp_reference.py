"""Independent reference for the block-QP tests: the QP over a product of simplices
of stored atoms, solved by cvxpy/Clarabel."""

from __future__ import annotations

import cvxpy as cp
import numpy as np


def assert_block_qp_optimal(w, x, V, Q, c, blocks, groups, rtol=1e-8) -> None:
    """``w`` (weights of the rows of ``V``, one simplex per value of ``blocks``) and
    ``x = V.T @ w`` solve ``min 0.5 x'Qx + c'x`` to ``rtol`` of cvxpy's optimum."""
    wv = cp.Variable(V.shape[0], nonneg=True)
    xv = V.T @ wv
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(xv, cp.psd_wrap(Q)) + c @ xv),
                      [cp.sum(wv[blocks == b]) == 1 for b in range(groups)])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert np.all(w >= 0)
    np.testing.assert_allclose(np.bincount(blocks, weights=w), 1.0, atol=1e-12)
    np.testing.assert_allclose(x, V.T @ w, atol=1e-12)
    scale = rtol * max(1.0, abs(prob.value))
    assert -scale <= 0.5 * x @ Q @ x + c @ x - prob.value <= scale

"""Independent reference for the structured-SVM tests: the dual QP by cvxpy."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np


def ssvm_dual_qp(model, X, Y, lam, labellings=None) -> float:
    """Optimal value of ``lam/2 ||w||^2 - ell`` over the product of the per-example
    convex hulls of ``labellings`` (a collection of labelling tuples per example;
    default: every labelling of every example), solved by cvxpy/Clarabel."""
    n = len(X)
    if labellings is None:
        labellings = [itertools.product(range(model.n_states), repeat=len(y)) for y in Y]
    psis, losses = [], []
    for x, y, labs in zip(X, Y, labellings):
        labs = [np.array(t) for t in sorted(labs)]
        P = np.zeros((len(labs), model.size_joint_feature))
        for r, yy in enumerate(labs):
            idx, val = model.psi(x, y, yy)
            P[r, idx] = val
        psis.append(P)
        losses.append(np.array([model.loss(y, yy) for yy in labs]))
    alphas = [cp.Variable(P.shape[0], nonneg=True) for P in psis]
    w = sum(P.T @ a for P, a in zip(psis, alphas)) / (lam * n)
    ell = sum(L @ a for L, a in zip(losses, alphas)) / n
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) - ell),
                      [cp.sum(a) == 1 for a in alphas])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value

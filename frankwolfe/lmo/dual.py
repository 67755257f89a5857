"""The dual solution of an oracle's linear program (:meth:`LMO.dual_solution`).

A polyhedral domain is the feasible set of a linear program: blocks of rows
(``A x <= b`` or ``A x = b``) and bounds ``lower <= x <= upper``.  For a
direction ``d``, the oracle's problem ``min <d, x>`` has a dual; its solution
certifies the oracle's answer without trusting it: any feasible ``x`` has
``<d, x> >= value``, and the vertex returned attains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["DualSolution"]


@dataclass(frozen=True)
class DualSolution:
    """Dual variables of ``min <d, x>`` over a polyhedral domain, at the optimum.

    The domain is written as an LP: row blocks ``A_k x <= b_k`` or ``A_k x = b_k`` and
    bounds ``lower <= x <= upper`` (each domain's docstring says which).  The signs
    follow the usual convention of LP solvers (HiGHS, ``scipy.optimize.linprog``) for a
    minimization.

    Attributes
    ----------
    multipliers : dict of str to ndarray
        ``y_k`` for each row block, by name (``"eq"``, ``"ineq"``): ``y_k <= 0`` for a
        ``<=`` block (``0`` on rows that are not tight), free for an ``=`` block.
    reduced_costs : ndarray
        ``r = d - sum_k A_k^T y_k`` (flat, one per coordinate): ``r_j >= 0`` where the
        answer sits at ``lower_j``, ``r_j <= 0`` where it sits at ``upper_j``, ``0`` for a
        coordinate strictly between its bounds.
    value : float
        The dual objective ``sum_k <b_k, y_k> + sum_j r_j * (lower_j if r_j > 0 else
        upper_j)``: equal to ``min <d, x>`` (strong duality), and a lower bound on
        ``<d, x>`` for every feasible ``x``.
    """

    multipliers: dict[str, np.ndarray] = field(default_factory=dict)
    reduced_costs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    value: float = 0.0


def bounds_value(rc: np.ndarray, lower: np.ndarray | float, upper: np.ndarray | float) -> float:
    """``sum_j r_j * (lower_j if r_j > 0 else upper_j)`` (``0`` where ``r_j = 0``, so an
    infinite bound of a coordinate with zero reduced cost adds nothing)."""
    lo = np.broadcast_to(np.asarray(lower, dtype=float), rc.shape)
    up = np.broadcast_to(np.asarray(upper, dtype=float), rc.shape)
    pos, neg = rc > 0, rc < 0
    return float(np.dot(rc[pos], lo[pos]) + np.dot(rc[neg], up[neg]))

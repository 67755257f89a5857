"""Exact solvers of the small restricted games of fully corrective SP-FW.

Over the convex hulls of ``p`` active atoms of ``x`` and ``q`` of ``y`` a
bilinear saddle function with linear and quadratic terms becomes, in the
weights ``u`` (simplex of ``p``) and ``v`` (simplex of ``q``),

    u^T H v + mu_x/2 |R_x u|^2 - mu_y/2 |R_y v|^2

with ``H = A_x M A_y^T + (A_x a) 1^T + 1 (A_y b)^T`` (the linear terms fold
into ``H`` because the weights sum to one) and ``R^T R`` the Gram matrix of
the atoms.  Without quadratic terms this is a matrix game: one linear
program gives ``u`` as its primal and ``v`` as its dual solution.  With
them, the inner maximum is dualized (``-mu/2 |w|^2 = min_s -s^T w +
|s|^2 / (2 mu)``), leaving one convex QP whose multipliers are ``v``.
"""

from __future__ import annotations

import math

import numpy as np

from .._scaling import binary_exponent
from ..errors import RestrictedGameError
from ..objectives.saddle import payoffs_in_range

__all__ = ["solve_matrix_game", "solve_quadratic_game", "gram_factor",
           "polish_quadratic_game"]


#: HiGHS feasibility tolerances: the restricted game's accuracy is the saddle gap's floor
_LP_TOL = 1e-10
#: conic-solver weights below this fraction of the largest are taken as off the support
_SUPPORT_TOL = 1e-7


def _clean(w: np.ndarray) -> np.ndarray:
    """Clip rounding negatives and renormalize to the simplex."""
    w = np.clip(np.asarray(w, dtype=float), 0.0, None)
    s = float(w.sum())
    if not s > 0:  # pragma: no cover - the solvers return a distribution
        raise RestrictedGameError("restricted game: the solver returned all-zero weights")
    return w / s


def solve_matrix_game(H: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Equilibrium of the matrix game ``min_u max_v u^T H v`` over two simplices.

    One linear program, ``min t  s.t.  H^T u <= t 1,  1^T u = 1,  u >= 0``,
    solved by :func:`scipy.optimize.linprog` (HiGHS); the maximizer's
    strategy is the (negated) multiplier vector of the ``q`` inequalities.

    Parameters
    ----------
    H : ndarray, shape (p, q)
        Payoff paid by the row player.

    Returns
    -------
    u : ndarray, shape (p,)
        Optimal row (minimizing) strategy.
    v : ndarray, shape (q,)
        Optimal column (maximizing) strategy.
    value : float
        The game value (of ``H`` scaled by a power of two where its entries are far from
        1, :func:`~frankwolfe.objectives.saddle.payoffs_in_range`, and scaled back).

    Raises
    ------
    RestrictedGameError
        When ``H`` is not finite or the linear program fails.
    """
    from scipy.optimize import linprog  # slow to import; only corrective runs need it

    p, q = H.shape
    if not np.all(np.isfinite(H)):
        raise RestrictedGameError(
            f"restricted matrix game: the payoffs of the {p} x {q} active vertices are not "
            "all finite (the entries of M plus the linear terms overflow the float range)")
    H, exponent = payoffs_in_range(H)
    c = np.zeros(p + 1)
    c[-1] = 1.0
    A_ub = np.empty((q, p + 1))
    A_ub[:, :p] = H.T
    A_ub[:, p] = -1.0
    A_eq = np.ones((1, p + 1))
    A_eq[0, p] = 0.0
    bounds = [(0.0, None)] * p + [(None, None)]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(q), A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs", options={"presolve": False,  # tiny dense LPs: no gain
                                           "primal_feasibility_tolerance": _LP_TOL,
                                           "dual_feasibility_tolerance": _LP_TOL})
    x, fun = res.x, res.fun
    if res.status != 0 or x is None or fun is None:  # pragma: no cover - feasible, bounded
        raise RestrictedGameError(f"restricted matrix game of the {p} x {q} active vertices: "
                                  f"scipy's linprog (HiGHS) failed: {res.message}")
    u = _clean(x[:p])
    v = _clean(-np.asarray(res.ineqlin.marginals))
    return u, v, math.ldexp(float(fun), exponent)


def gram_factor(K: np.ndarray) -> np.ndarray:
    """``R`` with ``R^T R = K`` for a symmetric PSD Gram matrix ``K`` (rank rows only).

    The rank is decided relative to the largest eigenvalue, so the atoms of a domain
    of any radius keep their quadratic term.
    """
    K = 0.5 * (K + K.T)
    if np.array_equal(K, np.eye(K.shape[0])):  # distinct simplex vertices
        return K
    lam, V = np.linalg.eigh(K)
    keep = lam > 1e-12 * float(lam.max()) if lam.max() > 0 else np.zeros(lam.shape, bool)
    return (V[:, keep] * np.sqrt(lam[keep])).T


def solve_quadratic_game(H: np.ndarray, Rx: np.ndarray | None, Ry: np.ndarray | None,
                         mu_x: float, mu_y: float, *, solver: str | None = None
                         ) -> tuple[np.ndarray, np.ndarray, float]:
    """Saddle point of ``u^T H v + mu_x/2 |Rx u|^2 - mu_y/2 |Ry v|^2`` over two simplices.

    Solved as one convex QP with cvxpy,

        min  mu_x/2 |Rx u|^2 + |s|^2 / (2 mu_y) + t
        s.t. H^T u - Ry^T s <= t 1,  u in simplex,

    whose inequality multipliers are ``v`` (the inner maximum over ``v``
    dualized).  The game is first scaled by the power of two that brings the
    largest of ``|H|``, ``mu_x |Rx e_i|^2`` and ``mu_y |Ry e_j|^2`` into ``[0.5, 1)``
    (exact: the saddle point does not change and the value scales back), so the
    conic solver's tolerances are relative to the game's payoffs; the weights are
    accurate to about 1e-9 at any scale.

    Parameters
    ----------
    H : ndarray, shape (p, q)
    Rx, Ry : ndarray or None
        Factors of the atoms' Gram matrices (``None`` where ``mu`` is 0).
    mu_x, mu_y : float
        Non-negative weights of the quadratic terms.
    solver : str, optional
        cvxpy solver name (default: Clarabel when installed).

    Returns
    -------
    u, v : ndarray
        The saddle point's weights.
    value : float
        The restricted saddle value (in the units of ``H``).

    Raises
    ------
    RestrictedGameError
        When the cvxpy solver fails or ends without an optimal solution.
    """
    import cvxpy as cp  # heavy import; only the quadratic corrective mode needs it

    p, q = H.shape
    if (mu_x > 0 and Rx is None) or (mu_y > 0 and Ry is None):
        raise ValueError("solve_quadratic_game: a positive mu needs its Gram factor (Rx, Ry)")
    # absolute solver tolerances on payoffs of any size: solve the game scaled by a
    # power of two (no rounding), the same saddle point
    exponent = binary_exponent(max(
        float(np.abs(H).max(initial=0.0)),
        mu_x * float((Rx * Rx).sum(axis=0).max(initial=0.0)) if mu_x > 0 and Rx is not None
        else 0.0,
        mu_y * float((Ry * Ry).sum(axis=0).max(initial=0.0)) if mu_y > 0 and Ry is not None
        else 0.0))
    H = np.ldexp(H, -exponent)
    mu_x, mu_y = math.ldexp(mu_x, -exponent), math.ldexp(mu_y, -exponent)
    u = cp.Variable(p, nonneg=True)
    t = cp.Variable()
    objective = t
    inner = H.T @ u
    # mu folded into the factors (s = sqrt(mu_y) s'): a large mu on atoms of a small
    # domain is data of moderate size
    if mu_x > 0 and Rx is not None and Rx.shape[0]:
        objective = objective + 0.5 * cp.sum_squares((math.sqrt(mu_x) * Rx) @ u)
    if mu_y > 0 and Ry is not None and Ry.shape[0]:
        s = cp.Variable(Ry.shape[0])
        objective = objective + 0.5 * cp.sum_squares(s)
        inner = inner - (math.sqrt(mu_y) * Ry).T @ s
    con = inner <= t
    prob = cp.Problem(cp.Minimize(objective), [con, cp.sum(u) == 1])
    if solver is None and "CLARABEL" in cp.installed_solvers():
        solver = "CLARABEL"
    opts = {}
    if solver == "CLARABEL":
        opts = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}
    try:
        prob.solve(solver=solver, **opts)
    except cp.error.SolverError as err:
        raise RestrictedGameError(
            f"restricted quadratic game of the {p} x {q} active vertices: cvxpy's solver "
            f"{solver or 'default'} failed ({err}); try another `cvxpy_solver`") from err
    if prob.status not in ("optimal", "optimal_inaccurate") or u.value is None:
        raise RestrictedGameError(
            f"restricted quadratic game of the {p} x {q} active vertices: cvxpy's solver "
            f"{solver or 'default'} ended with status {prob.status!r}; try another "
            "`cvxpy_solver`")
    return _clean(u.value), _clean(con.dual_value), math.ldexp(float(prob.value), exponent)


def polish_quadratic_game(H: np.ndarray, Kx: np.ndarray, Ky: np.ndarray, mu_x: float,
                          mu_y: float, u: np.ndarray, v: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact saddle point on the support of an approximate one, or None.

    On supports ``F, G`` the optimality conditions of
    ``u^T H v + mu_x/2 u^T Kx u - mu_y/2 v^T Ky v`` are linear: equal
    partial derivatives on the support,

        H_FG v_G + mu_x Kx_FF u_F = lam 1,   H_FG^T u_F - mu_y Ky_GG v_G = kap 1,

    plus ``1^T u_F = 1^T v_G = 1``.  Solving that system removes the conic
    solver's residue (about 1e-9) and zeroes the weights off the support.
    The answer is returned only if it is a saddle point of the restricted
    game: non-negative, and no vertex outside the supports does better by more
    than 1e-12 of the largest of ``|H|``, ``mu_x Kx`` and ``mu_y Ky`` (the system
    is solved on the game scaled by a power of two, as in
    :func:`solve_quadratic_game`, so the answer does not depend on the payoffs'
    scale).

    Parameters
    ----------
    H : ndarray, shape (p, q)
    Kx, Ky : ndarray, shapes (p, p), (q, q)
        Gram matrices of the atoms.
    mu_x, mu_y : float
    u, v : ndarray
        The approximate saddle point.

    Returns
    -------
    tuple of ndarray or None
        ``(u, v)`` exact up to rounding, or None when the support guess fails.
    """
    top = max(float(np.abs(H).max(initial=0.0)), mu_x * float(np.abs(Kx).max(initial=0.0)),
              mu_y * float(np.abs(Ky).max(initial=0.0)))
    exponent = binary_exponent(top)
    H = np.ldexp(H, -exponent)
    mu_x, mu_y = math.ldexp(mu_x, -exponent), math.ldexp(mu_y, -exponent)
    F = np.flatnonzero(u > _SUPPORT_TOL * u.max())
    G = np.flatnonzero(v > _SUPPORT_TOL * v.max())
    f, g = F.size, G.size
    A = np.zeros((f + g + 2, f + g + 2))
    rhs = np.zeros(f + g + 2)
    A[:f, :f] = mu_x * Kx[np.ix_(F, F)]
    A[:f, f:f + g] = H[np.ix_(F, G)]
    A[:f, f + g] = -1.0
    A[f:f + g, :f] = H[np.ix_(F, G)].T
    A[f:f + g, f:f + g] = -mu_y * Ky[np.ix_(G, G)]
    A[f:f + g, f + g + 1] = -1.0
    A[f + g, :f] = 1.0
    A[f + g + 1, f:f + g] = 1.0
    rhs[f + g:] = 1.0
    try:
        sol = np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(sol)) or sol[:f + g].min() < 0:
        return None
    uu = np.zeros_like(u)
    vv = np.zeros_like(v)
    uu[F] = sol[:f]
    vv[G] = sol[f:f + g]
    gx = H @ vv + mu_x * (Kx @ uu)
    gy = H.T @ uu - mu_y * (Ky @ vv)
    scale = 1e-12 * math.ldexp(top, -exponent)
    if gx.min() < sol[f + g] - scale or gy.max() > sol[f + g + 1] + scale:
        return None
    return uu, vv

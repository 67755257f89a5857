"""The exact solver of a quadratic over the probability simplex of weights:
``min 1/2 w^T G w + l^T w`` with ``w >= 0``, ``sum(w) = 1``, a primal active-set method
(fully corrective Frank-Wolfe's corrective QP over the hull of its active atoms,
:mod:`.corrective`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from ..errors import NonConvexError

__all__ = ["simplex_qp"]

#: curvature below -_NEGATIVE times the size of its terms is no rounding (line_minimizer's)
_NEGATIVE = 64.0 * np.finfo(float).eps


def simplex_qp(G: np.ndarray, lin: np.ndarray, w0: np.ndarray | None = None, *,
               max_iter: int | None = None) -> tuple[np.ndarray, int]:
    """Minimize ``1/2 w^T G w + lin^T w`` over the probability simplex (``G`` PSD).

    A primal active-set method: on the current support ``F`` it solves the
    equality-constrained problem (KKT system ``[G_FF 1; 1^T 0]``), steps back
    to the boundary when a weight would turn negative (dropping it), and adds
    the coordinate with the most negative reduced gradient until none is
    left.  Exact up to rounding.  When ``G`` is only semidefinite and the
    quadratic is unbounded on the support's affine hull, the method moves
    along the unbounded direction until a weight reaches zero.

    Parameters
    ----------
    G : ndarray, shape (k, k)
        Symmetric positive semidefinite.
    lin : ndarray, shape (k,)
    w0 : ndarray, shape (k,), optional
        Feasible warm start (non-negative, summing to 1); default the vertex
        with the smallest ``G_ii / 2 + lin_i``.
    max_iter : int, optional
        Cap on the active-set changes (default ``3 k + 20``); when it is hit
        (degenerate, cycling cases) the solution is finished by pairwise
        Frank-Wolfe steps with exact line search, to a relative gap of 1e-14.

    Returns
    -------
    w : ndarray, shape (k,)
        The minimizer; weights outside the support are exactly zero.
    n_iter : int
        Active-set iterations done.

    Raises
    ------
    NonConvexError
        Negative curvature ``d^T G d < 0`` beyond rounding on the hull of the support
        of ``w0`` or of one grown from it: its stationary point is no minimizer.
    """
    return _simplex_qp(G, lin, w0, max_iter, _refuse, False)


def _refuse(u: np.ndarray, curv: float) -> bool:
    raise NonConvexError(f"simplex_qp: negative curvature d^T G d = {curv:.6g} along a "
                         "direction of the simplex: `G` is not positive semidefinite")


def _simplex_qp(G: np.ndarray, lin: np.ndarray, w0: np.ndarray | None,
                max_iter: int | None, negative: Callable[[np.ndarray, float], bool] | None,
                start_checked: bool) -> tuple[np.ndarray, int]:
    """:func:`simplex_qp` calling ``negative(u, curv)`` on a direction ``u`` where ``G``
    curves down: it raises, or returns whether to take it as it is (pairwise descent
    steps finish) or as rounding (``None``: ``G`` a Gram matrix, unchecked).
    ``start_checked``: the support of ``w0`` is known free of negative curvature.  A face
    grown by one coordinate has at most one negative eigenvalue (interlacing), of the
    sign of ``d^T G d`` along the step to its stationary point: no factorization."""
    G = np.asarray(G, dtype=float)
    lin = np.asarray(lin, dtype=float)
    k = lin.size
    if G.shape != (k, k):
        raise ValueError(f"simplex_qp: `G` must have shape ({k}, {k}) like `lin`, got {G.shape}")
    if w0 is None:
        w = np.zeros(k)
        w[int(np.argmin(0.5 * np.diag(G) + lin))] = 1.0
    else:
        w = np.array(w0, dtype=float)
        if w.shape != (k,) or w.min(initial=0.0) < 0 or abs(w.sum() - 1.0) > 1e-8:
            raise ValueError("simplex_qp: `w0` must be a point of the simplex of shape "
                             f"({k},), got shape {w.shape} with sum {w.sum()!r}")
        w /= w.sum()
    cap = 3 * k + 20 if max_iter is None else int(max_iter)
    free = w > 0
    n_iter = 0
    converged = False
    polish_cap = 200000
    checked = free.copy()  # the last face known free of negative curvature
    concave = negative is not None and not start_checked and _is_concave(
        G, np.flatnonzero(free), negative)  # True: pairwise descent steps finish
    size = int(np.count_nonzero(free))  # of the last face solved on: larger after an addition
    while n_iter < cap and not concave:
        n_iter += 1
        F = np.flatnonzero(free)
        z, bounded = _equality_qp(G, lin, F)
        if F.size > size and negative is not None:
            # drops need no check (faces of a checked face), nor unbounded directions
            if bounded and _is_concave(G, F, negative, z - w[F]):
                concave = True
                break
            checked = free.copy()
        size = F.size
        if bounded and np.all(z >= 0):
            w[:] = 0.0
            w[F] = z
            grad = G @ w + lin
            nu = float(np.dot(w, grad))  # the common gradient value on the support
            out = np.flatnonzero(~free)
            if out.size == 0:
                # every weight free and non-negative: the KKT point up to the rounding of
                # the solve, which a few pairwise steps polish (not the long run below)
                polish_cap = 20 * k + 100
                break
            j = out[int(np.argmin(grad[out]))]
            tol = 1e-13 * (float(np.abs(grad).max()) + abs(nu) + 1e-300)
            if grad[j] >= nu - tol:
                converged = True  # KKT: every reduced gradient is non-negative
                break
            free[j] = True
            continue
        # move from w towards z (or along the unbounded direction z) until the
        # first weight hits zero: a drop
        wf = w[F]
        d = z - wf if bounded else z
        neg = d < 0
        if not neg.any():  # rounding: nothing decreases
            break
        ratios = wf[neg] / -d[neg]
        t = float(ratios.min())
        w[F] = wf + t * d
        hit = F[neg][ratios <= t * (1 + 1e-12)]
        w[hit] = 0.0
        free[hit] = False
        w[w < 0] = 0.0
        if not free.any():  # rounding removed everything: restart from the best vertex
            i = int(np.argmin(0.5 * np.diag(G) + lin))
            w[:] = 0.0
            w[i] = 1.0
            free[i] = True
        w /= w.sum()
    if not converged:
        # degenerate (semidefinite) cases can cycle: finish with pairwise steps,
        # which converge linearly on f(Bw) + l^T w over the simplex
        w, extra = _pairwise_polish(G, lin, w / w.sum(), 1e-14, polish_cap)
        w[w < 0] = 0.0
        w /= w.sum()
        n_iter += extra
        # pairwise steps may leave the checked face for the next solve's start face
        if negative is not None and not concave and np.any((w > 0) & ~checked):
            _is_concave(G, np.flatnonzero(w > 0), negative)
    return w, n_iter


def _is_concave(G: np.ndarray, F: np.ndarray, negative: Callable[[np.ndarray, float], bool],
                d: np.ndarray | None = None) -> bool:
    """Whether ``G`` curves down beyond rounding along ``d`` (on the rows ``F``), or, with
    ``d`` None, on the hull of the face ``F``, and ``negative`` takes it as it is (it may
    raise).  A face's reduced Hessian on ``e_i - e_last`` is factorized by Cholesky, and
    decomposed into eigenvalues only where that fails (semidefinite or indefinite)."""
    if d is None:
        if F.size <= 1:
            return False
        A, last = F[:-1], F[-1]
        col = G[A, last]
        R = G[np.ix_(A, A)] - col[:, None] - col[None, :] + G[last, last]
        try:
            np.linalg.cholesky(R)
            return False
        except np.linalg.LinAlgError:
            lam, vec = np.linalg.eigh(R)
        if lam[0] >= -_NEGATIVE * F.size * float(np.abs(R).max()):
            return False
        d = np.append(vec[:, 0], -vec[:, 0].sum())
    u = np.zeros(G.shape[0])
    u[F] = d
    Gu = G @ u
    curv = float(u @ Gu)
    au = np.abs(u)
    # |u|^T |G| |u| only where |u|^T |G u| calls it negative (G u may have cancelled)
    if curv >= -_NEGATIVE * float(au @ np.abs(Gu)) or \
            curv >= -_NEGATIVE * F.size ** 0.5 * float(au @ (np.abs(G) @ au)):
        return False
    return negative(u, curv)


@njit(cache=True, nogil=True)
def _pairwise_polish(G, lin, w, rtol, max_iter):  # pragma: no cover - compiled
    """Pairwise Frank-Wolfe with exact steps on the simplex QP; O(k) per iteration."""
    k = w.shape[0]
    grad = G @ w + lin
    it = 0
    while it < max_iter:
        it += 1
        s = 0
        a = -1
        for i in range(k):
            if grad[i] < grad[s]:
                s = i
            if w[i] > 0 and (a < 0 or grad[i] > grad[a]):
                a = i
        scale = 0.0
        for i in range(k):
            scale = max(scale, abs(grad[i]))
        slope = grad[s] - grad[a]
        if -slope <= rtol * (scale + 1e-300):
            break
        curv = G[s, s] - 2.0 * G[s, a] + G[a, a]
        gamma = w[a]
        if curv > 0:
            gamma = min(gamma, -slope / curv)
        w[s] += gamma
        w[a] -= gamma
        if gamma == w[a] + gamma:  # a drop step: make it exact
            w[a] = 0.0
        for i in range(k):
            grad[i] += gamma * (G[i, s] - G[i, a])
    return w, it


def _equality_qp(G: np.ndarray, lin: np.ndarray, F: np.ndarray
                 ) -> tuple[np.ndarray, bool]:
    """Minimize the quadratic on the affine hull ``{w_F : sum w_F = 1}``.

    Returns ``(z, True)`` with a minimizer ``z``, or ``(d, False)`` with a
    direction along which the quadratic decreases without bound (zero
    curvature, ``sum d = 0``): the hull of a semidefinite ``G_FF``.
    """
    p = F.size
    K = np.empty((p + 1, p + 1))
    K[:p, :p] = G[np.ix_(F, F)]
    K[:p, p] = 1.0
    K[p, :p] = 1.0
    K[p, p] = 0.0
    rhs = np.empty(p + 1)
    rhs[:p] = -lin[F]
    rhs[p] = 1.0
    scale = float(np.abs(K).max()) + float(np.abs(rhs).max())
    try:
        sol = np.linalg.solve(K, rhs)
        if np.all(np.isfinite(sol)):
            res = rhs - K @ sol
            if float(np.abs(res).max()) <= 1e-9 * (scale + float(np.abs(K).max()
                                                           * np.abs(sol).max())):
                return sol[:p], True
    except np.linalg.LinAlgError:
        pass
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    res = rhs - K @ sol
    if float(np.linalg.norm(res)) <= 1e-9 * scale:
        return sol[:p], True
    # Inconsistent: the residual lies in the null space of K, so d = res[:p]
    # has G_FF d = 0, sum d = 0 and <lin_F, d> = -||res||^2 < 0.
    return res[:p], False

"""Corrective solves: minimize over the convex hull of the active atoms.

Fully corrective Frank-Wolfe re-solves ``min f(sum_i w_i a_i)`` over the
weights ``w`` on the probability simplex of the active atoms.  Two solvers:

* :func:`simplex_qp` - an exact primal active-set method for a quadratic in
  the weights, ``1/2 w^T G w + l^T w`` over the simplex.  For quadratic
  objectives :class:`GramModel` keeps ``G`` and ``l`` from cached per-atom
  products (``A a`` for least squares, ``Q a`` for a quadratic form), adding
  one row and column per new atom, so a corrective solve costs O(k^3) for k
  active atoms and no pass over the data.
* :func:`cvxpy_weights` - any objective with ``to_cvxpy(x_expression)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..atoms import Atom
from ..objectives.least_squares import LeastSquares
from ..objectives.quadratic import QuadraticObjective

__all__ = ["simplex_qp", "GramModel", "cvxpy_weights", "has_gram_structure"]


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
    """
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
    while n_iter < cap:
        n_iter += 1
        F = np.flatnonzero(free)
        z, bounded = _equality_qp(G, lin, F)
        if bounded and np.all(z >= 0):
            w[:] = 0.0
            w[F] = z
            grad = G @ w + lin
            nu = float(np.dot(w, grad))  # the common gradient value on the support
            out = np.flatnonzero(~free)
            if out.size == 0:
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
        w, extra = _pairwise_polish(G, lin, w / w.sum(), 1e-14, 200000)
        w[w < 0] = 0.0
        w /= w.sum()
        n_iter += extra
    return w, n_iter


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


def has_gram_structure(objective: Any, tracker: Any) -> bool:
    """Whether corrective solves can use :class:`GramModel` (a quadratic with cached products)."""
    return isinstance(objective, (LeastSquares, QuadraticObjective)) and hasattr(
        tracker, "atom_products")


class GramModel:
    """The objective as a quadratic in the weights of the atoms met so far.

    ``f(sum_i w_i a_i) = 1/2 w^T G w + l^T w + const`` with

    * least squares ``1/2 ||A x - b||^2``: ``G_ij = <A a_i, A a_j>``,
      ``l_i = -<b, A a_i>``;
    * quadratic ``1/2 x^T Q x + c^T x``: ``G_ij = <a_i, Q a_j>``, ``l_i = <c, a_i>``.

    The products ``A a`` / ``Q a`` come from the tracker's per-atom cache; a
    new atom costs one row of ``G`` (O(k m)).  Atoms are kept (their rows of
    ``G`` reused when they come back) until ``max_atoms`` is exceeded, when
    those not listed as active are pruned.

    Parameters
    ----------
    objective : LeastSquares or QuadraticObjective
    tracker : ProductTracker
        The run's tracker (owner of the per-atom product cache).
    max_atoms : int, default 1000
    """

    def __init__(self, objective: Any, tracker: Any, max_atoms: int = 1000) -> None:
        self.objective = objective
        self.tracker = tracker
        self.least_squares = isinstance(objective, LeastSquares)
        self.max_atoms = int(max_atoms)
        self.index: dict[Hashable, int] = {}
        self.atoms: list[Atom] = []
        self.images: np.ndarray | None = None
        self.G = np.zeros((0, 0))
        self.lin = np.zeros(0)

    def __len__(self) -> int:
        return len(self.atoms)

    def indices(self, atoms: Sequence[Atom]) -> np.ndarray:
        """Rows of ``atoms`` in the model (adding the missing ones)."""
        for a in atoms:
            if a.key not in self.index:
                self._add(a)
        return np.fromiter((self.index[a.key] for a in atoms), dtype=np.int64, count=len(atoms))

    def _add(self, atom: Atom) -> None:
        img = np.asarray(self.tracker.atom_products(atom)[0], dtype=float)
        k = len(self.atoms)
        if self.images is None:
            self.images = np.zeros((8, img.size))
        if k == self.images.shape[0]:
            grown = np.zeros((2 * k, img.size))
            grown[:k] = self.images[:k]
            self.images = grown
            G = np.zeros((2 * k, 2 * k))
            G[:k, :k] = self.G[:k, :k]
            self.G = G
            self.lin = np.concatenate([self.lin[:k], np.zeros(k)])
        elif self.G.shape[0] < self.images.shape[0]:
            cap = self.images.shape[0]
            G = np.zeros((cap, cap))
            G[:k, :k] = self.G[:k, :k]
            self.G = G
            self.lin = np.concatenate([self.lin[:k], np.zeros(cap - k)])
        self.images[k] = img
        if self.least_squares:
            col = self.images[:k] @ img
            diag = float(img @ img)
            lin = -float(img @ self.objective.b)
        else:
            col = np.array([a.dot(img) for a in self.atoms])  # <a_j, Q v>
            diag = atom_dot_flat(atom, img)
            lin = atom_dot_flat(atom, self.objective.c)
        self.G[:k, k] = col
        self.G[k, :k] = col
        self.G[k, k] = diag
        self.lin[k] = lin
        self.atoms.append(atom)
        self.index[atom.key] = k

    def submodel(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(G, l)`` restricted to ``rows``."""
        return self.G[np.ix_(rows, rows)], self.lin[rows]

    def prune(self, keep: set[Hashable]) -> None:
        """Forget atoms not in ``keep`` once the model holds more than ``max_atoms``."""
        k = len(self.atoms)
        if k <= self.max_atoms:
            return
        rows = np.array([i for i, a in enumerate(self.atoms) if a.key in keep], dtype=np.int64)
        self.atoms = [self.atoms[i] for i in rows]
        self.index = {a.key: i for i, a in enumerate(self.atoms)}
        p = rows.size
        self.images[:p] = self.images[rows]
        self.G[:p, :p] = self.G[np.ix_(rows, rows)]
        self.lin[:p] = self.lin[rows]


def atom_dot_flat(atom: Atom, vec: np.ndarray) -> float:
    """``<atom, vec>`` with ``vec`` flat."""
    if atom.is_sparse:
        return float(np.dot(vec[atom.indices], atom.values))
    return float(np.dot(atom.to_dense().reshape(-1), vec))


def cvxpy_weights(objective: Any, atoms: Sequence[Atom], shape: tuple[int, ...],
                  solver: str | None = None, **solver_options: Any) -> np.ndarray | None:
    """Minimize ``objective`` over the convex hull of ``atoms`` with cvxpy.

    Returns the weights (clipped at 0, renormalized), or ``None`` when the
    solver fails.  The objective must implement ``to_cvxpy(x_expression)``.
    """
    import cvxpy as cp

    k = len(atoms)
    n = int(np.prod(shape))
    rows, cols, vals = [], [], []
    for j, a in enumerate(atoms):
        if a.is_sparse:
            idx, val = a.indices, a.values
        else:
            dense = a.to_dense().reshape(-1)
            idx = np.flatnonzero(dense)
            val = dense[idx]
        rows.append(idx)
        cols.append(np.full(idx.size, j))
        vals.append(val)
    V = sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(n, k))
    w = cp.Variable(k, nonneg=True)
    x = V @ w
    if len(shape) > 1:
        x = cp.reshape(x, shape, order="C")
    prob = cp.Problem(cp.Minimize(objective.to_cvxpy(x)), [cp.sum(w) == 1])
    try:
        prob.solve(solver=solver, **solver_options)
    except cp.error.SolverError:
        return None
    if w.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        return None
    wv = np.maximum(np.asarray(w.value, dtype=float), 0.0)
    if not wv.sum() > 0:
        return None
    return wv / wv.sum()

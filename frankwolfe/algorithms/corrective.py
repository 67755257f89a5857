"""Corrective solves: minimize over the convex hull of the active atoms.

Fully corrective Frank-Wolfe re-solves ``min f(sum_i w_i a_i)`` over the
weights ``w`` on the probability simplex of the active atoms.  Two solvers:

* :func:`~.simplex_qp.simplex_qp` - an exact primal active-set method for a quadratic
  in the weights, ``1/2 w^T G w + l^T w`` over the simplex.  For quadratic
  objectives (least squares, or any objective whose ``as_quadratic()``
  returns a :class:`~frankwolfe.QuadraticObjective`: :func:`gram_model`)
  :class:`GramModel` keeps ``G`` and ``l`` from cached per-atom
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

from .._sparse import issparse
from ..atom_store import row_room
from ..atoms import Atom
from ..compiled import PASS, compiled_driver, order_picker, structured_direction
from ..compiled.average import NO_AVERAGE
from ..compiled.pass_state import NO_EXTRAS, PassData, PassVectors, StepScratch
from ..errors import ShapeError
from ..objectives.least_squares import LeastSquares
from ..objectives.quadratic import QuadraticObjective, QuadraticTracker
from ..step_size import ExactStep
from .working_set import working_set_blocks

__all__ = ["GramModel", "BlockQuadraticQP", "cvxpy_weights", "declared_quadratic", "gram_model"]

#: block steps a call of the driver makes at least, by repeating the sweep (few blocks)
_STEPS_PER_CALL = 256
#: sweeps over the blocks holding most of the gap between two full sweeps
_PARTIAL_SWEEPS = 8
def declared_quadratic(objective: Any, where: str, n: int) -> QuadraticObjective | None:
    """``objective.as_quadratic()``, checked: a :class:`~frankwolfe.QuadraticObjective`
    on ``n`` (flat) entries or ``None``; anything else is a ``TypeError`` (another
    type) or a :class:`~frankwolfe.errors.ShapeError` (another size) naming ``where``
    (the corrective QPs read ``Q`` and ``c`` from it)."""
    quad = objective.as_quadratic()
    if quad is None:
        return None
    if not isinstance(quad, QuadraticObjective):
        raise TypeError(f"{where}: {type(objective).__name__}.as_quadratic() must return a "
                        f"QuadraticObjective or None, got {type(quad).__name__}")
    if quad.n != n:
        raise ShapeError(f"{where}: {type(objective).__name__}.as_quadratic() has n = "
                         f"{quad.n}, but the iterate has {n} entries")
    return quad


def gram_model(objective: Any, tracker: Any, where: str, max_atoms: int = 1000
               ) -> GramModel | None:
    """The :class:`GramModel` of the corrective QP for ``objective``, or ``None`` when it
    has no quadratic structure.

    A :class:`~frankwolfe.LeastSquares` objective, a
    :class:`~frankwolfe.QuadraticObjective`, or any objective whose
    :meth:`~frankwolfe.Objective.as_quadratic` returns an equivalent
    ``QuadraticObjective`` (the hook, not the type, decides).  The products ``A a``
    / ``Q a`` come from the run's ``tracker`` when it caches them for that very
    quadratic; else (a user objective declaring its quadratic, whose tracker knows
    only values and gradients) from a :class:`~frankwolfe.objectives.quadratic.QuadraticTracker`
    of the declared quadratic, used for those products alone: the run's values and
    gradients stay the objective's own.
    """
    if isinstance(objective, LeastSquares):
        return GramModel(objective, tracker, max_atoms)
    quad = declared_quadratic(objective, where, int(np.asarray(tracker.x).size))
    if quad is None:
        return None
    if quad is not objective or not hasattr(tracker, "atom_image"):
        tracker = QuadraticTracker(quad, np.asarray(tracker.x).reshape(-1),
                                   cache_bytes=quad.cache_bytes,
                                   refresh_every=quad.refresh_every)
    return GramModel(quad, tracker, max_atoms)


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
        self.images = np.zeros((0, 0))  # allocated by the first atom (its image's size)
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
        if hasattr(self.tracker, "atom_image"):
            img = np.asarray(self.tracker.atom_image(atom), dtype=float)
        else:  # least squares on an offset design (a plain tracker): (A - 1 mu^T) a
            img = self.objective.residual(atom.to_dense()) + self.objective.b
        k = len(self.atoms)
        self.images = row_room(self.images, k, img.size)
        cap = self.images.shape[0]
        if self.G.shape[0] < cap:  # G and lin follow the images' room
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
            diag = atom.dot(img)
            lin = atom.dot(self.objective.c)
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


def cvxpy_weights(objective: Any, atoms: Sequence[Atom], shape: tuple[int, ...],
                  solver: str | None = None, groups: np.ndarray | None = None,
                  **solver_options: Any) -> np.ndarray | None:
    """Minimize ``objective`` over the convex hull of ``atoms`` with cvxpy.

    With ``groups`` (one group id per atom), the weights of each group lie on
    their own simplex: the hull is the sum of the per-group hulls (the
    product of the block hulls on a :class:`~frankwolfe.ProductDomain`).
    Returns the weights (clipped at 0, renormalized per group), or ``None``
    when the solver fails.  The objective must implement ``to_cvxpy(x_expression)``.
    """
    import cvxpy as cp

    k = len(atoms)
    n = int(np.prod(shape))
    rows, cols, vals = [], [], []
    for j, a in enumerate(atoms):
        idx, val = a.nonzeros()
        rows.append(idx)
        cols.append(np.full(idx.size, j))
        vals.append(val)
    V = sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(n, k))
    w = cp.Variable(k, nonneg=True)
    x = V @ w
    if len(shape) > 1:
        x = cp.reshape(x, shape, order="C")
    if groups is None:
        cons = [cp.sum(w) == 1]
    else:
        groups = np.asarray(groups, dtype=np.int64)
        _, gid = np.unique(groups, return_inverse=True)
        E = sp.csr_array((np.ones(k), (gid, np.arange(k))), shape=(int(gid.max()) + 1, k))
        cons = [E @ w == 1]
    prob = cp.Problem(cp.Minimize(objective.to_cvxpy(x)), cons)
    try:
        prob.solve(solver=solver, **solver_options)
    except cp.error.SolverError:
        return None
    except Exception as err:  # noqa: BLE001 - older cvxpy let a solver's own through
        if type(err).__module__.split(".")[0] in ("cvxpy", "numpy", "builtins"):
            raise
        return None
    if w.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        return None
    wv = np.maximum(np.asarray(w.value, dtype=float), 0.0)
    if groups is None:
        return wv / wv.sum() if wv.sum() > 0 else None
    sums = np.bincount(gid, weights=wv)
    if not np.all(sums > 0):
        return None
    return wv / sums[gid]


# -- corrective solves over a product of per-block hulls ------------------------------------


class BlockQuadraticQP:
    """``min 1/2 x^T Q x + c^T x`` over ``x = sum_b sum_{a in S_b} w_a a`` with one
    simplex of weights per block ``b`` (the product of the per-block convex hulls).

    The corrective QP of fully corrective Frank-Wolfe on a
    :class:`~frankwolfe.ProductDomain`: the hull of the *joint* atoms would be a
    much smaller set.  Solved by the core's compiled block machinery on the
    working-set domain (:mod:`.working_set`, each block the hull of its atoms):
    sweeps of pairwise block steps (:func:`~frankwolfe.compiled.compiled_driver` with
    ``pairwise``)
    with the exact line search of :class:`~frankwolfe.step_size.ExactStep`,
    which decrease ``f`` monotonically and converge linearly on this polytope; a
    sweep costs O(total nnz of the atoms + nnz of the rows of ``Q`` they touch).
    After a full sweep, sweeps visit only the blocks holding most of the gap
    (a full sweep every 8 sweeps, and before stopping, measures every block
    again).

    Parameters
    ----------
    objective : QuadraticObjective
        ``Q`` must be symmetric (the objective checks that).
    n : int
        Length of the flat iterate.
    """

    def __init__(self, objective: QuadraticObjective, n: int) -> None:
        Q = objective.Q
        self.Q = sp.csr_array(Q) if issparse(Q) else sp.csr_array(np.asarray(Q))
        self.c = np.asarray(objective.c, dtype=float).reshape(-1)
        self.n = int(n)
        # the objective's kernels (slope, curvature and update along a sparse direction)
        # and the exact line search, as the block driver uses them everywhere
        self.kernels = objective.compiled_block_objective()
        self.rule, self.rparams = ExactStep().compiled()

    def solve(self, atoms: Sequence[Atom], blocks: np.ndarray, w: np.ndarray,
              rtol: float = 1e-10, atol: float = 0.0, max_sweeps: int = 10000
              ) -> tuple[np.ndarray, np.ndarray, int, float]:
        """Weights minimizing the quadratic over the product of per-block hulls.

        Parameters
        ----------
        atoms : sequence of Atom
            Flat-indexed (embedded) atoms.
        blocks : ndarray of int, shape (k,)
            Block of each atom; weights of one block form a simplex.
        w : ndarray, shape (k,)
            Feasible warm start (each block's weights sum to 1).
        rtol, atol : float
            Stop when the restricted Frank-Wolfe gap is at most ``atol`` or
            ``rtol`` times its value at the warm start.
        max_sweeps : int

        Returns
        -------
        w, x : ndarrays
            Optimal weights and the point ``sum w_a a`` (flat).
        sweeps : int
        gap : float
            Restricted Frank-Wolfe gap at the returned weights.
        """
        k = len(atoms)
        blocks = np.asarray(blocks, dtype=np.int64)
        w = np.array(w, dtype=float)
        if blocks.shape != (k,) or w.shape != (k,):
            raise ValueError(f"BlockQuadraticQP.solve: `blocks` and `w` must have shape ({k},), "
                             f"got {blocks.shape} and {w.shape}")
        return self.solve_stacked(stack_atoms(atoms), blocks, w, rtol, atol, max_sweeps)

    def solve_stacked(self, table: tuple[np.ndarray, np.ndarray, np.ndarray],
                      blocks: np.ndarray, w: np.ndarray, rtol: float = 1e-10,
                      atol: float = 0.0, max_sweeps: int = 10000,
                      x0: np.ndarray | None = None, span: tuple[int, int] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, int, float]:
        """:meth:`solve` with the atoms as a table ``(ptr, idx, val)`` of
        :func:`stack_atoms` (sorted unique indices per atom); ``w`` is updated in place.
        ``x0``: the point ``sum w a`` when the caller has it (saves a pass over the
        table); the returned point is then the one the steps moved (not re-summed).
        ``span = (lo, hi)``: move only the weights of the blocks ``lo <= b < hi`` (the
        others stay fixed; the gap is then theirs only)."""
        ptr, idx, val = table
        k = ptr.size - 1
        order = np.argsort(blocks, kind="stable").astype(np.int64)
        ids, starts = np.unique(blocks[order], return_index=True)
        bptr = np.append(starts, k).astype(np.int64)
        n_blocks = bptr.size - 1
        x = table_combine(table, w, self.n) if x0 is None else np.array(x0, dtype=float)
        g = self.Q @ x + self.c
        dkern, pair = working_set_blocks(ptr, idx, val, order, bptr, w, self.n)
        run_pass = compiled_driver(dkern, self.kernels, self.rule, pairwise=pair)
        # the driver's records (.compiled.pass_state): no averaging, no fused direction
        # (an empty structured direction and Hessian diagonal)
        data = PassData(dkern.state, self.kernels.data, self.rparams, n_blocks)
        vectors = PassVectors(x, g, np.zeros(0))
        scratch = StepScratch(np.empty(dkern.max_nnz, dtype=np.int64),
                              np.empty(dkern.max_nnz),
                              structured_direction(0, 0, 0, np.zeros((0, 0))))
        est = np.zeros(n_blocks)
        movable = np.diff(bptr) >= 2  # a lone atom cannot move
        if span is not None:
            movable &= (ids >= span[0]) & (ids < span[1])
        multi = np.flatnonzero(movable)
        gap0, target, full, since_full, sweep, total = -1.0, 0.0, True, 0, 0, 0.0
        while sweep < max_sweeps:
            # after a full sweep, visit only the blocks holding most of the gap (their
            # scores are where the work goes)
            visit = multi if full else multi[est[multi] >= 0.1 * target / n_blocks]
            # a few blocks: several sweeps per call of the driver (a call costs more than
            # a sweep of a handful of blocks, and a small working set takes many sweeps
            # per solve); the stopping test then runs after the last of them, so the
            # weights are at least as converged
            # (benchmarks/README.md, "Measurements behind code choices")
            reps = 1 if sweep == 0 else \
                max(1, min(_STEPS_PER_CALL // max(visit.size, 1), max_sweeps - sweep,
                           _PARTIAL_SWEEPS - since_full if not full else max_sweeps))
            sweep += reps
            order = visit if reps == 1 else np.tile(visit, reps)
            picker = order_picker(order, est)
            run_pass(0, order.size, 0, PASS, False, picker, data, vectors, scratch, NO_AVERAGE,
                     NO_EXTRAS)
            total = float(est.sum())
            if gap0 < 0.0:
                gap0 = total
                target = max(atol, rtol * gap0)
            if full and total <= target:
                break
            since_full += reps
            full = since_full >= _PARTIAL_SWEEPS or total <= target
            if full:
                since_full = 0
        # pairwise steps keep each block's sum up to rounding; no renormalization here, so
        # that w - w0 stays a direction of tiny, exactly representable moves
        return w, (table_combine(table, w, self.n) if x0 is None else x), int(sweep), total


@njit(cache=True, nogil=True)
def _combine_rows(ptr, idx, val, coef, out):  # pragma: no cover - compiled
    for j in range(coef.size):
        c = coef[j]
        if c != 0.0:
            for p in range(ptr[j], ptr[j + 1]):
                out[idx[p]] += c * val[p]


def table_combine(table: tuple[np.ndarray, np.ndarray, np.ndarray], coef: np.ndarray,
                  n: int) -> np.ndarray:
    """``sum_j coef_j a_j`` (length ``n``) for the atoms of a :func:`stack_atoms` table,
    in O(nnz of the atoms with ``coef_j != 0``)."""
    out = np.zeros(n)
    _combine_rows(*table, np.asarray(coef, dtype=float), out)
    return out


@njit(cache=True, nogil=True)
def _row_dots(ptr, idx, val, rows, g, out):  # pragma: no cover - compiled
    for r in range(rows.size):
        j = rows[r]
        s = 0.0
        for p in range(ptr[j], ptr[j + 1]):
            s += g[idx[p]] * val[p]
        out[r] = s


def table_dots(table: tuple[np.ndarray, np.ndarray, np.ndarray], rows: np.ndarray,
               g: np.ndarray) -> np.ndarray:
    """``<a_j, g>`` for the atoms ``j`` in ``rows`` of a :func:`stack_atoms` table."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty(rows.size)
    _row_dots(*table, rows, np.ascontiguousarray(g, dtype=float).reshape(-1), out)
    return out


def combine_atoms(atoms: Sequence[Atom], coef: np.ndarray, n: int) -> np.ndarray:
    """``sum_j coef_j a_j`` as a flat array of length ``n`` (atoms with ``coef_j = 0``
    skipped).  A difference of two weightings computed this way keeps its precision,
    where ``x_new - x_old`` would cancel."""
    coef = np.asarray(coef, dtype=float)
    js = np.flatnonzero(coef)
    return table_combine(stack_atoms([atoms[int(j)] for j in js]), coef[js], n)


def stack_atoms(atoms: Sequence[Atom]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR-like ``(ptr, flat indices, values)`` of the atoms, each atom's indices
    sorted and unique (repeated indices summed)."""
    idx_list, val_list = [], []
    for a in atoms:
        if a.is_sparse:
            idx_list.append(a.indices)
            val_list.append(a.values)
        else:
            dense = a.to_dense().reshape(-1)
            nz = np.flatnonzero(dense)
            idx_list.append(nz)
            val_list.append(dense[nz])
    sizes = np.fromiter((i.size for i in idx_list), dtype=np.int64, count=len(idx_list))
    ptr = np.zeros(len(idx_list) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    idx = np.concatenate(idx_list).astype(np.int64) if idx_list else np.zeros(0, np.int64)
    val = np.concatenate(val_list).astype(float) if val_list else np.zeros(0)
    return _sorted_rows(ptr, idx, val)


def _sorted_rows(ptr: np.ndarray, idx: np.ndarray, val: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The table with sorted unique indices in every row (vectorized; a no-op check
    when they already are, as the sparse atoms of the oracles usually give them)."""
    if idx.size < 2:
        return ptr, idx, val
    row = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    step = np.diff(idx)
    same_row = row[1:] == row[:-1]
    if not np.any(same_row & (step <= 0)):
        return ptr, idx, val
    order = np.lexsort((idx, row))
    row, idx, val = row[order], idx[order], val[order]
    first = np.ones(idx.size, dtype=bool)
    first[1:] = (row[1:] != row[:-1]) | (idx[1:] != idx[:-1])
    starts = np.flatnonzero(first)
    val = np.add.reduceat(val, starts)
    idx, row = idx[starts], row[starts]
    ptr = np.zeros(ptr.size, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=ptr.size - 1), out=ptr[1:])
    return ptr, idx, val

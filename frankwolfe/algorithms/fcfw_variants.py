"""The two variants of fully corrective Frank-Wolfe on the shared loop.

* :class:`_FullyCorrective` re-optimizes over the convex hull of all active atoms
  (one step along ``d = x_c - x``, with ``x_c`` the corrective minimizer from the
  internal QP or cvxpy);
* :class:`_BlockCorrective` keeps one working set of block vertices per block of a
  :class:`~frankwolfe.ProductDomain` and re-optimizes over the product of the
  per-block hulls (the n-slack cutting plane of SVMstruct), with its start
  (:func:`_block_start`).

The driver, :func:`~frankwolfe.algorithms.fcfw.fully_corrective_frank_wolfe`, checks
its arguments and picks one of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..errors import ShapeError
from ..lmo.base import LMO
from ..lmo.product import ProductDomain
from ..objectives.base import Tracker
from ..objectives.line import line_minimizer
from ..objectives.quadratic import _curvature_scale
from .active_variant import ActiveSetVariant
from .corrective import (
    BlockQuadraticQP,
    combine_atoms,
    cvxpy_weights,
    declared_quadratic,
    gram_model,
    stack_atoms,
    table_combine,
    table_dots,
)
from .loop import Variant
from .simplex_qp import _simplex_qp

__all__ = ["_CORRECTIVE", "_BlockCorrective", "_FullyCorrective", "_block_start"]

#: the exact QP is used (corrective="auto") up to this many active atoms
_QP_MAX_ATOMS = 3000
#: cvxpy weights below this fraction of the largest are zero (interior-point residue)
_CVXPY_ZERO = 1e-9

_CORRECTIVE = ("auto", "qp", "cvxpy")

#: the objectives the internal QP takes (what the refusals below suggest)
_QP_KINDS = ("LeastSquares or QuadraticObjective, or an objective whose as_quadratic() "
             "returns its QuadraticObjective")

#: the refusal of an objective with neither corrective solver (checked before any step)
_NO_CORRECTIVE = (
    "fully_corrective_frank_wolfe: the corrective step needs an exact solver for f over "
    "the hull of the active atoms, and {name} offers none: pass a {qp} (the internal "
    "QP), or an objective implementing to_cvxpy(x_expression) that returns the cvxpy "
    "expression of f (corrective='cvxpy'); for an objective known only by its value and "
    "gradient, use pairwise_frank_wolfe or away_step_frank_wolfe (minimize(..., "
    "method='pairwise')), which correct with the gradient alone")


class _FullyCorrective(ActiveSetVariant):
    name = "fcfw"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 corrective: str, cvxpy_solver: str | None,
                 cvxpy_options: dict[str, Any] | None) -> None:
        super().__init__(warm, resum_every, sparsify_tol)
        if corrective not in _CORRECTIVE:
            raise ValueError(f"`corrective` must be one of {_CORRECTIVE}, got {corrective!r}")
        self.corrective = corrective
        self.cvxpy_solver = cvxpy_solver
        self.cvxpy_options = dict(cvxpy_options or {})
        self.counts.update({"n_corrective_qp": 0, "n_corrective_cvxpy": 0,
                            "n_corrective_failures": 0, "n_qp_iterations": 0})

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        obj = tracker.objective
        # the hook decides, not the type: a user objective whose as_quadratic() returns
        # its QuadraticObjective gets the QP (on that quadratic), as over blocks
        self.model = gram_model(obj, tracker, "fully_corrective_frank_wolfe")
        structured = self.model is not None
        # keys of the face the last QP solve ended on, checked free of negative curvature
        # there: the next solve starts on it (or on a face of it) and skips that check
        self._checked: set[Any] = set()
        self._concave = False  # a solve met negative curvature (an objective not convex)
        has_cvxpy = callable(getattr(obj, "to_cvxpy", None))
        if self.corrective == "qp" and not structured:
            raise TypeError(
                f"corrective='qp' needs a LeastSquares objective or one whose as_quadratic() "
                f"returns a QuadraticObjective, got {type(obj).__name__}; use "
                "corrective='cvxpy' with an objective that implements to_cvxpy(x_expression)"
            )
        if self.corrective == "cvxpy" or (self.corrective == "auto" and not structured):
            if not has_cvxpy:
                raise TypeError(_NO_CORRECTIVE.format(name=type(obj).__name__, qp=_QP_KINDS))

    def _use_qp(self, k: int) -> bool:
        if self.model is None or self.corrective == "cvxpy":
            return False
        # the QP costs O(k^3) per solve and has no setup; cvxpy pays a fixed setup at
        # any size, so the QP is cheaper until k^3 dwarfs that
        # (benchmarks/README.md, "Measurements behind code choices")
        return self.corrective == "qp" or k <= _QP_MAX_ATOMS or not callable(
            getattr(self.tracker.objective, "to_cvxpy", None))

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        atoms = S.atoms
        w0 = S.weights
        if v.key not in S:
            atoms.append(v)
            w0 = np.append(w0, 0.0)
        if self.model is not None and self._use_qp(len(atoms)):
            rows = self.model.indices(atoms)
            G, lin = self.model.submodel(rows)
            negative = self._curvature_rule(atoms)
            checked = self._checked
            start_checked = all(atoms[i].key in checked for i in np.flatnonzero(w0 > 0))
            self._concave = False
            w, it = _simplex_qp(G, lin, w0, None, negative, start_checked)
            if negative is not None:
                self._checked = (set() if self._concave
                                 else {atoms[i].key for i in np.flatnonzero(w > 0)})
            self.counts["n_corrective_qp"] += 1
            self.counts["n_qp_iterations"] += it
        else:
            wc = cvxpy_weights(tracker.objective, atoms, tracker.x.shape, self.cvxpy_solver,
                               **self.cvxpy_options)
            self.counts["n_corrective_cvxpy"] += 1
            if wc is None:  # fall back to a plain Frank-Wolfe step
                self.counts["n_corrective_failures"] += 1
                return self.fw_step(v)
            w = wc
            w[w < _CVXPY_ZERO * w.max()] = 0.0
            w /= w.sum()
        keep = np.flatnonzero(w > 0)
        terms = tuple((float(w[i]), atoms[i]) for i in keep)
        return Direction(-1.0, terms), 1.0, ("corrective", atoms, w0, w)

    def _curvature_rule(self, atoms: list[Atom]) -> Callable[[np.ndarray, float], bool] | None:
        """What the corrective QP does with negative curvature along a direction ``u`` of
        the weights of ``atoms`` (see :func:`~.simplex_qp._simplex_qp`).

        Its minimizer is exact only where ``f`` is convex on the hull: the stationary
        point of an indefinite face is a saddle or a maximum, where the gap would
        certify a lower bound above ``f*``.  On an objective declared convex the
        curvature is measured again along ``sum u_i a_i`` with the objective's own ``Q``
        and refused as the line searches refuse it (``G``'s entries carry the rounding
        of the products ``<a_i, Q a_j>``); on another the QP descends to a local
        minimum."""
        model = self.model
        if model is None or model.least_squares:  # a Gram matrix of images: semidefinite
            return None
        obj = self.tracker.objective
        if not obj.convex:
            def descend(u: np.ndarray, curv: float) -> bool:
                self._concave = True
                return True
            return descend
        Q, n, who = model.objective.Q, self.tracker.x.size, type(obj).__name__

        def refuse(u: np.ndarray, curv: float) -> bool:
            d = combine_atoms(atoms, u, n)
            Qd = np.asarray(Q @ d, dtype=float).reshape(-1)
            c = float(d @ Qd)
            line_minimizer(0.0, c, _curvature_scale(Q, d, Qd, c, True), True, who)
            return False  # rounding of G's products after all

        return refuse

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if info[0] != "corrective":
            super().after_step(direction, gamma, info)
            return
        _, atoms, w_old, w_new = info
        # x moved to (1 - gamma) x + gamma x_c: the weights move alike
        w = w_new if gamma >= 1.0 else (1.0 - gamma) * w_old + gamma * w_new
        keep = np.flatnonzero(w > 0)
        if keep.size == 0:  # gamma = 0 on a lone new atom: nothing moved
            keep = np.flatnonzero(w_old > 0)
            w = w_old
        self.active = ActiveSet([atoms[i] for i in keep], w[keep] / w[keep].sum(), keep_x=False)
        self.counts["n_drop_steps"] += int(np.count_nonzero((w_old > 0) & ~(w > 0)))
        self.counts["n_fw_steps"] += 1
        if self.model is not None:
            self.model.prune({a.key for a in self.active.atoms})
        self.n_steps += 1
        if self.n_steps % self.resum_every == 0:
            self.maintain()


class _BlockCorrective(Variant):
    """FCFW on a :class:`ProductDomain` with one active set per block.

    The Frank-Wolfe vertex of a product (or Minkowski sum) is the sum of the
    block vertices, and the hull that matters is the *product* of the
    per-block hulls of the block vertices seen: that is the n-slack cutting
    plane of SVMstruct.  The convex hull of the joint vertices, which plain
    FCFW would re-optimize over, is far smaller (one weight per iteration
    instead of one per block and iteration).  A block vertex met stays in
    its block's working set (weight possibly 0), like the constraints of the
    cutting-plane method, until it has had weight exactly 0 after
    ``prune_after`` consecutive corrective solves (then it is dropped; the
    oracle may bring it back later).

    With ``blocks_per_step = m`` smaller than the number of blocks, an
    iteration calls the oracles of the next ``m`` blocks only (in order,
    cyclically) at the current iterate and then re-solves the corrective QP,
    as SVMstruct's n-slack method re-solves its QP every ``-n`` new
    constraints: the later blocks of a pass see the planes the earlier ones
    added.  Such an iteration's gap covers its blocks only (not a
    certificate); the pruning counts are then taken at the end of each cycle
    over the blocks.
    """

    name = "fully_corrective_frank_wolfe"

    def __init__(self, block_start: Any, corrective: str, corrective_tol: float,
                 max_sweeps: int, cvxpy_solver: str | None,
                 cvxpy_options: dict[str, Any] | None, prune_after: int | None = None,
                 blocks_per_step: int | None = None, gap_every: int | None = None) -> None:
        self.block_start = block_start
        self.blocks_per_step = blocks_per_step
        self.gap_every = gap_every
        self.block_calls = 0
        self.prune_after = prune_after
        self.corrective = corrective
        self.corrective_tol = float(corrective_tol)
        self.max_sweeps = int(max_sweeps)
        self.cvxpy_solver = cvxpy_solver
        self.cvxpy_options = dict(cvxpy_options or {})
        self.counts = {"n_corrective_qp": 0, "n_corrective_cvxpy": 0,
                       "n_corrective_failures": 0, "n_qp_iterations": 0,
                       "n_block_atoms": 0, "n_pruned": 0}

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        if not isinstance(lmo, ProductDomain):
            raise TypeError(f"the block-wise fully corrective method needs a ProductDomain, "
                            f"got {lmo!r}")
        super().start(tracker, x0_atom, lmo)
        self.domain = lmo
        self.tracker = tracker
        obj = tracker.objective
        quad = declared_quadratic(obj, "fully_corrective_frank_wolfe", tracker.x.size)
        quadratic = quad is not None
        if self.corrective == "qp" and not quadratic:
            raise TypeError(
                f"corrective='qp' over a ProductDomain needs an objective whose "
                f"as_quadratic() returns a QuadraticObjective, got {type(obj).__name__}; use "
                "corrective='cvxpy' with an objective that implements to_cvxpy(x_expression)")
        if (self.corrective == "cvxpy" or not quadratic) and not callable(
                getattr(obj, "to_cvxpy", None)):
            raise TypeError(_NO_CORRECTIVE.format(
                name=type(obj).__name__,
                qp="QuadraticObjective, or an objective whose as_quadratic() returns one "
                   "(over blocks)"))
        self.qp = (BlockQuadraticQP(quad, tracker.x.size)
                   if quad is not None and self.corrective != "cvxpy" else None)
        self.atoms: list[Atom] = []       # embedded block atoms (flat coordinates)
        self.block_atoms: list[Atom] = []  # the same in block coordinates
        self.blocks: list[int] = []
        self.index: dict[Any, int] = {}
        # the embedded atoms as one CSR table for the corrective QP, grown by the new
        # atoms of each iteration (a Python pass over every atom per solve would cost
        # more than the solve's sweeps on large working sets)
        self.table = stack_atoms([])
        self._cap = (0, 0)  # rows and nonzeros the arrays behind self.table can hold
        # those arrays (self.table's are views of them)
        self._buf = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
        self._pending: list[Atom] = []
        self.batch = lmo.batch_block_oracle()
        for i, a in enumerate(self.block_start):
            self._add(i, a)
        self.w = np.ones(len(self.atoms))
        self.zero_runs = np.zeros(len(self.atoms), dtype=np.int64)  # consecutive zero solves
        self._new: list[tuple[int, Atom, Atom]] = []  # (block, vertex, embedded vertex)
        n_blocks = lmo.n_blocks
        self.step_blocks = (n_blocks if self.blocks_per_step is None
                            else min(int(self.blocks_per_step), n_blocks))
        self.span = (0, n_blocks)  # the blocks of the current iteration
        # seconds of the oracle calls: the last call of every block (a certificate), and
        # per block of the last iteration's (the closing certificate's estimate before one)
        self._all_seconds: float | None = None
        self._block_seconds = 0.0

    def _add(self, i: int, a: Atom, e: Atom | None = None) -> int:
        e = self.domain.embed(i, a) if e is None else e
        j = self.index.get(e.key)
        if j is None:
            j = len(self.atoms)
            self.index[e.key] = j
            self.atoms.append(e)
            self.block_atoms.append(a)
            self.blocks.append(i)
            self._pending.append(e)
        return j

    def _stacked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The table of all atoms (the pending ones appended)."""
        if self._pending:
            # appended in place to arrays of doubling capacity: a copy of the whole table
            # per iteration would cost more than the corrective sweeps of small iterations
            ptr, idx, val = self.table
            p2, i2, v2 = stack_atoms(self._pending)
            k, nnz = ptr.size - 1, ptr[-1]
            k2, nnz2 = k + p2.size - 1, nnz + i2.size
            if k2 + 1 > self._cap[0] or nnz2 > self._cap[1]:
                cap = (max(2 * self._cap[0], k2 + 1), max(2 * self._cap[1], nnz2))
                bp, bi, bv = np.empty(cap[0], np.int64), np.empty(cap[1], np.int64), \
                    np.empty(cap[1])
                bp[: k + 1], bi[:nnz], bv[:nnz] = ptr, idx, val
                self._cap = cap
                self._buf = (bp, bi, bv)
            else:
                bp, bi, bv = self._buf
            bp[k + 1: k2 + 1] = p2[1:] + nnz
            bi[nnz:nnz2], bv[nnz:nnz2] = i2, v2
            self.table = (bp[: k2 + 1], bi[:nnz2], bv[:nnz2])
            self._pending = []
        return self.table

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        lmo = self.domain
        n_blocks = lmo.n_blocks
        lo = self.span[1] % n_blocks
        hi = min(lo + self.step_blocks, n_blocks)
        self.span = (lo, hi)
        # with blocks_per_step, a cycle's first iteration calls every block's oracle every
        # gap_every cycles: a certificate (one more oracle call); only its blocks get planes
        certify = hi - lo == n_blocks or (
            lo == 0 and k > 0 and self.gap_every is not None
            and (k // -(-n_blocks // self.step_blocks)) % self.gap_every == 0)
        which = range(n_blocks) if certify else range(lo, hi)
        tic = time.perf_counter()
        answers = (self.batch(list(which), gradient) if self.batch is not None
                   else [lmo.block_extreme_point(i, gradient) for i in which])
        seconds = time.perf_counter() - tic
        self._block_seconds = seconds / max(1, len(which))
        if certify:
            self._all_seconds = seconds
        new = [(i, a, lmo.embed(i, a)) for i, a in zip(which, answers)]
        self.block_calls += len(new)
        self.n_oracle_calls += int(certify and hi < n_blocks) + int(hi == n_blocks)
        self._new = new[lo:hi] if certify else new
        v, s = self._joint(new, gradient)
        if hi - lo == n_blocks:
            self._fw_vertex = v
            return v, g_dot_x - s, True
        # the iteration's block vertices with the other blocks' points (the direction of
        # the plain Frank-Wolfe fallback); the iteration's gap is its blocks' only
        vs, s_span = self._joint(self._new, gradient) if certify else (v, s)
        mask = self._span_mask(np.asarray(self.blocks, dtype=np.int64))
        rows = np.flatnonzero(mask & (self.w > 0))
        z_dot_g = float(self.w[rows] @ table_dots(self._stacked(), rows, gradient))
        rest = tracker.x.reshape(-1) - table_combine(self._stacked(), np.where(mask, self.w, 0.0),
                                                     tracker.x.size)
        self._fw_vertex = Atom((vs.to_dense().reshape(-1) + rest).reshape(tracker.x.shape))
        if certify:
            return v, g_dot_x - s, True
        return self._fw_vertex, z_dot_g - s_span, False

    @staticmethod
    def _joint(new: list[tuple[int, Atom, Atom]], gradient: np.ndarray) -> tuple[Atom, float]:
        """The sum of the embedded block vertices and its product with the gradient."""
        s = sum(e.dot(gradient) for _, _, e in new)
        v = np.zeros(gradient.size)
        for _, _, e in new:
            e.add_to(v)
        key = ("product", tuple(e.key for _, _, e in new))
        return Atom(v.reshape(gradient.shape), key=key), s

    def closing_seconds(self) -> float:
        # with blocks_per_step the iterations' gaps cover their blocks only: the closing
        # certificate calls every block's oracle (a large share of a short budget),
        # timed when one ran, else the last iteration's rate per block
        # (benchmarks/README.md, "Measurements behind code choices")
        n_blocks = self.domain.n_blocks
        if self.step_blocks >= n_blocks:
            return 0.0
        if self._all_seconds is not None:
            return self._all_seconds
        return self._block_seconds * n_blocks

    def _qp_span(self) -> tuple[int, int] | None:
        """The blocks a corrective solve moves: those of the iteration, all of them at the
        end of a cycle (so that every cycle ends fully corrective)."""
        return None if self.span[1] == self.domain.n_blocks else self.span

    def _span_mask(self, blocks: np.ndarray) -> np.ndarray:
        return (blocks >= self.span[0]) & (blocks < self.span[1])

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        for i, a, e in self._new:
            self._add(i, a, e)
        w0 = np.zeros(len(self.atoms))
        w0[: self.w.size] = self.w
        blocks = np.asarray(self.blocks, dtype=np.int64)
        if self.qp is not None:
            # the restricted gap at w0 is at most the outer gap, so the corrective step is
            # accurate to corrective_tol times the outer gap (an approximate correction
            # in the sense of Lacoste-Julien and Jaggi, 2015, when corrective_tol < 1)
            w, _, sweeps, _ = self.qp.solve_stacked(self._stacked(), blocks, w0.copy(),
                                                    rtol=self.corrective_tol,
                                                    max_sweeps=self.max_sweeps,
                                                    x0=tracker.x.reshape(-1),
                                                    span=self._qp_span())
            self.counts["n_corrective_qp"] += 1
            self.counts["n_qp_iterations"] += sweeps
        else:
            wc = cvxpy_weights(tracker.objective, self.atoms, tracker.x.shape, self.cvxpy_solver,
                               groups=blocks, **self.cvxpy_options)
            self.counts["n_corrective_cvxpy"] += 1
            if wc is None:
                self.counts["n_corrective_failures"] += 1
                return Direction.frank_wolfe(self._fw_vertex), 1.0, ("fw", w0, self._fw_vertex)
            w = wc
        # d = sum (w - w0) a, not x_c - x: near the optimum the step is ~gap^2 and the
        # slope <g, x_c> - <g, x> would drown in cancellation (the step rule then stalls)
        dw = _balanced(w - w0, w, blocks)
        if self.qp is not None:
            delta = table_combine(self._stacked(), dw, tracker.x.size)
        else:
            delta = combine_atoms(self.atoms, dw, tracker.x.size)
        w = w0 + dw
        step = Atom(delta.reshape(tracker.x.shape), key=("corrective", k))
        return Direction(0.0, ((1.0, step),)), 1.0, ("corrective", w0, w)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        kind, w_old, w_new = info
        if kind == "fw":  # weights of the new block vertices are known: one per block
            w = w_old.copy()
            w[self._span_mask(np.asarray(self.blocks, dtype=np.int64))] *= 1.0 - gamma
            for _, _, e in self._new:
                w[self.index[e.key]] += gamma
        else:
            w = w_new if gamma >= 1.0 else (1.0 - gamma) * w_old + gamma * w_new
        self.w = w
        if self.prune_after is not None and self.span[1] == self.domain.n_blocks:
            self._prune(self.prune_after)

    def _prune(self, after: int) -> None:
        """Drop the atoms whose weight has been 0 after ``prune_after`` solves in a row."""
        runs = np.zeros(self.w.size, dtype=np.int64)
        runs[: self.zero_runs.size] = self.zero_runs
        runs = np.where(self.w == 0.0, runs + 1, 0)
        drop = runs >= after
        self.zero_runs = runs
        if not drop.any():
            return
        keep = np.flatnonzero(~drop)
        ptr, idx, val = self._stacked()
        rows = np.repeat(~drop, np.diff(ptr))
        self.table = (np.concatenate(([0], np.cumsum(np.diff(ptr)[keep]))).astype(np.int64),
                      idx[rows], val[rows])
        self.atoms = [self.atoms[j] for j in keep]
        self.block_atoms = [self.block_atoms[j] for j in keep]
        self.blocks = [self.blocks[j] for j in keep]
        self._cap = (0, 0)  # fresh arrays: the next append reallocates
        self.w = self.w[keep]
        self.zero_runs = runs[keep]
        self.index = {a.key: j for j, a in enumerate(self.atoms)}
        self.counts["n_pruned"] += int(drop.sum())

    def info(self) -> dict[str, Any]:
        return {"active_set_size": int(np.count_nonzero(self.w > 0)),
                "block_oracle_calls": self.block_calls,
                "working_set_size": len(self.atoms),
                "n_qp_iterations": self.counts["n_qp_iterations"]}

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        blocks = np.asarray(self.blocks, dtype=np.int64)
        # the atoms of positive weight grouped by block in one sort (a mask per block
        # costs O(blocks x atoms), too much at the end of a long cutting plane run)
        # (benchmarks/README.md, "Measurements behind code choices")
        live = np.flatnonzero(self.w[: blocks.size] > 0)
        live = live[np.argsort(blocks[live], kind="stable")]
        cuts = np.searchsorted(blocks[live], np.arange(self.domain.n_blocks + 1))
        sets = []
        for i in range(self.domain.n_blocks):
            js = live[cuts[i]:cuts[i + 1]]
            sets.append(ActiveSet([self.block_atoms[j] for j in js], self.w[js], keep_x=False))
        extra = dict(self.counts)
        extra["n_block_atoms"] = len(self.atoms)
        extra["block_oracle_calls"] = self.block_calls
        return sets, extra


def _balanced(dw: np.ndarray, w: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """``dw`` with each block's sum moved onto its heaviest atom, so the sum is 0 to
    rounding of the (tiny) changes: a drift of the block sums of ~1e-16 would add
    ``1e-16 * <g, a>`` to the slope, more than the slope itself near the optimum."""
    dw = dw.copy()
    order = np.lexsort((w, blocks))
    last = np.flatnonzero(np.append(blocks[order][1:] != blocks[order][:-1], True))
    heavy = order[last]  # the largest new weight of each block (>= 1/size: stays >= 0)
    sums = np.bincount(blocks, weights=dw, minlength=int(blocks.max(initial=0)) + 1)
    dw[heavy] -= sums[blocks[heavy]]
    return dw


def _block_start(lmo: ProductDomain, x0: Any) -> tuple[list[Atom], np.ndarray]:
    """One start vertex per block (block coordinates) and the joint start point."""
    if x0 is None:
        atoms = [lmo.blocks[i](np.ones(lmo.block_shape(i))) for i in range(lmo.n_blocks)]
    elif isinstance(x0, (list, tuple)) and all(isinstance(a, Atom) for a in x0):
        atoms = list(x0)
        if len(atoms) != lmo.n_blocks:
            raise ShapeError(f"x0: a block start needs one Atom per block ({lmo.n_blocks}), "
                             f"got {len(atoms)}")
        for i, a in enumerate(atoms):
            shape = tuple(lmo.block_shape(i))
            if a.shape != shape:
                raise ShapeError(f"x0: the start atom of block {i} has shape {a.shape}, "
                                 f"expected the block shape {shape}")
    else:
        raise TypeError(
            "x0: fully corrective Frank-Wolfe over a ProductDomain keeps one active set per "
            "block and needs its start as a list of block vertices (one Atom per block, in "
            f"block coordinates) or None, got {type(x0).__name__}; pass blocks=False for "
            "the joint corrective step")
    x = np.zeros(lmo.dim)
    for i, a in enumerate(atoms):
        lmo.embed(i, a).add_to(x)
    return atoms, x

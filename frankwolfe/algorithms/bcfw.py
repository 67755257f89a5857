"""Block-coordinate Frank-Wolfe (BCFW) on product domains.

The domain is a :class:`~frankwolfe.ProductDomain`: blocks ``i = 1..n`` with
their own oracles and coordinate sets ``idx_i`` in one vector ``x``.  Each
block iterate ``z_i`` is stored (one flat array, block after block) and the
objective sees ``x = sum_i E_i z_i``, so the same code runs a Cartesian
product (disjoint ``idx_i``) and a Minkowski sum (overlapping ``idx_i``, the
structured SVM dual in image space).

BCFW is an :class:`~.engine.Engine` whose outer iteration is a pass of block
steps; stopping, certificates, history, callbacks and the result are the
shared driver's (:func:`~.engine.drive`).  Inside a pass three replaceable
strategies meet: the block order (:mod:`.block_orders`), the block step
(:mod:`.block_steps`) and the step rule (the :mod:`frankwolfe.step_size`
objects, called on a :class:`~.block_steps.BlockView` of the iterate).  One
block step costs O(|idx_i|) plus the block oracle: the block gradient comes
from ``objective.partial_gradient(x, idx_i)``, the exact line search from
``objective.exact_step_block`` and the update touches ``x[idx_i]`` only.
Whole passes run in numba when the domain and the objective supply compiled
kernels (:mod:`.compiled_blocks`); the Python and the compiled engines
consume the random stream identically (see :mod:`.block_orders`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np

from .._config import debug_enabled
from ..atoms import Atom
from ..errors import ShapeError
from ..executors import Executor, make_executor
from ..lmo.product import ProductDomain
from ..lmo.simplex import ProbabilitySimplex
from ..monitor import Monitor
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..objectives.base import Objective
from ..result import Result
from ..step_size import Adaptive, Agnostic, ExactStep, ShortStep, StepSize, make_step_size
from .block_orders import BlockOrder, make_block_order
from .block_steps import BlockDirection, BlockStep, BlockView, FWStep, make_block_step
from .block_store import STORAGES, BlockAtomStore, LazyAverage
from ..compiled import (BlockDomainHooks, Picker, compiled_driver, fused_driver,
                        simplex_blocks, structured_direction)
from .engine import Engine, Observation, drive
from .minibatch import MiniBatch

__all__ = ["block_coordinate_frank_wolfe"]

_AVERAGING = (None, "weighted", "uniform", "tail")
_TIME_CHECK_EVERY = 256  # Python steps between clock reads inside a pass
_CHUNK_SECONDS = 0.01  # with a time limit, compiled passes run in chunks of about this long


def _check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    key = value.lower() if isinstance(value, str) else value
    if key not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return key


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _block_vector(atom: Atom, m: int) -> np.ndarray:
    """A block atom as a dense vector over the block's coordinates."""
    if atom.is_sparse:
        v = np.zeros(m)
        v[atom.indices] = atom.values
        return v
    return np.array(atom.to_dense(), dtype=float).reshape(-1)


def _is_active_set(p: Any) -> bool:
    """Whether a block's start is given as ``(Atom, weight)`` pairs."""
    return isinstance(p, (list, tuple)) and len(p) > 0 and all(
        isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], Atom) for e in p)


def _block_rule(spec: str | StepSize | None, objective: Objective, step: BlockStep) -> StepSize:
    """The step rule of the block steps (a :mod:`frankwolfe.step_size` object)."""
    if spec is None:
        if objective.has_exact_step_block:
            rule: StepSize = ExactStep()
        else:
            rule = Adaptive() if step.uses_active_set else Agnostic()
    elif isinstance(spec, (str, StepSize)):
        rule = make_step_size(spec, None)
    else:
        raise TypeError(f"step_size must be a string, a StepSize or None; got "
                        f"{type(spec).__name__}")
    if isinstance(rule, ExactStep) and not objective.has_exact_step_block:
        raise ValueError(
            f"step_size='exact' needs an objective with exact_step_block() or exact_step(); "
            f"{type(objective).__name__} has neither (use 'agnostic', 'short' or 'adaptive')"
        )
    if isinstance(rule, ShortStep):
        L = rule.smoothness if rule.smoothness is not None else objective.smoothness
        if L is None or not (np.isfinite(L) and L > 0):
            raise ValueError(
                "step_size='short' needs a positive smoothness constant: set "
                f"`smoothness` on the objective or pass ShortStep(L); got {L!r}"
            )
    if isinstance(rule, Agnostic) and step.uses_active_set:
        raise ValueError(
            f"step_type={step.name!r} needs a line search ('exact', 'short' or 'adaptive'); "
            "the open-loop step 2n/(k+2n) only suits step_type='fw'"
        )
    rule.reset()
    return rule


class _BlockEngine(Engine):
    """State, block steps and passes of one BCFW run (an outer iteration is a pass)."""

    def __init__(self, objective: Objective, domain: ProductDomain, x0: Any, *,
                 order: BlockOrder, step: BlockStep, rule: StepSize, cache: bool,
                 cache_size: int, cache_factor: float, cache_nu: float, atom_storage: str,
                 averaging: str | None, certify: str, gap_every: int,
                 rng: np.random.Generator, compiled: bool | None,
                 batch: MiniBatch | None = None) -> None:
        self.batch = batch  # mini-batch rounds (None: serial block steps)
        self.f = objective
        self.dom = domain
        self.n = n = domain.n_blocks
        self.order = order
        self.block_step = step
        self.rule = rule
        self.cache = cache
        self.cache_factor = float(cache_factor)
        self.cache_nu = float(cache_nu)
        self.certify_kind = certify
        self.gap_every = gap_every
        self.rng = rng
        self.est = np.full(n, np.inf)  # latest block-gap estimates (+inf: unvisited)
        self.G = np.inf  # latest certified global gap (cache threshold)
        self.k = 0  # block steps done
        self.n_oracle = 0
        self.hits = 0
        self.misses = 0
        self.n_drop = 0
        self.last_gamma = np.nan
        self.cache_size = cache_size
        self.atom_storage = atom_storage
        self.lmos = None  # the Python blocks: built when the Python engine needs them
        self.store = None
        order.start(self.est)
        # per-step calls that cost more than their work, skipped when they do nothing
        self._order_update = None if type(order).update is BlockOrder.update else order.update
        self._plain_fw = not (cache or step.uses_active_set) and \
            type(step).direction is FWStep.direction
        self.kern = None
        self.rounds = None  # the domain's RoundKernels when mini-batch rounds run compiled
        self.reason = self._static_reason() if compiled is not False else "compiled=False"
        self.Z = None
        if self.reason is None:
            self._setup_compiled(x0)
        else:
            self._start(x0)
        self.view = BlockView(objective, self.x)
        self.direction = BlockDirection()
        self.avg = LazyAverage(self.x, averaging) if averaging else None
        self.averaging = averaging
        self.passes = 0
        # time limit: stop a pass early enough for the closing certificate, whose cost is
        # the last certificate's (or, before one, n block steps at the measured rate)
        self.time_up = False
        self._reserve: float | None = None
        # the outer loop: no certificate before the first pass (it would cost a pass and
        # would replace the "unvisited" estimates that gap sampling sweeps first)
        self.fx = float(objective.value(self.certified_point()))
        self.gap = np.inf
        self.certified = False
        if self.kern is not None and self.rounds is None:
            self.batch = None  # rounds of one block in this process: the compiled pass
        if self.batch is not None:
            self.batch.start(self)

    # -- start ------------------------------------------------------------
    def batch_oracle(self) -> Any:
        """The domain's batch block oracle (asked once; ``None``: none)."""
        if not hasattr(self, "_batch_oracle"):
            self._batch_oracle = (self.dom.batch_block_oracle()
                                  if isinstance(self.dom, ProductDomain) else None)
        return self._batch_oracle

    def _python_blocks(self) -> None:
        """Oracles, coordinate sets and offsets of the blocks (a domain may build them
        lazily: a compiled run of its own kernels never asks)."""
        if self.lmos is not None:
            return
        dom, n = self.dom, self.n
        self.lmos = dom.blocks
        self.shapes = [dom.block_shape(i) for i in range(n)]
        self.idx = [np.ascontiguousarray(a, dtype=np.int64) for a in dom.block_indices]
        # contiguous ranges are updated through slices (views, no fancy-index copies)
        self.sel: list[np.ndarray | slice] = []
        for a in self.idx:
            if a.size and a[-1] - a[0] == a.size - 1 and np.all(np.diff(a) == 1):
                self.sel.append(slice(int(a[0]), int(a[-1]) + 1))
            else:
                self.sel.append(a)
        self.sizes = np.array([a.size for a in self.idx], dtype=np.int64)
        self.off = np.concatenate(([0], np.cumsum(self.sizes)))
        if self.cache or self.block_step.uses_active_set:
            self.store = BlockAtomStore(self.sizes, self.cache_size, self.atom_storage)

    def _start(self, x0: Any) -> None:
        self._python_blocks()
        dom, n = self.dom, self.n
        Z = np.empty(int(self.off[-1]))
        if x0 is None and isinstance(dom, BlockDomainHooks):
            x0 = dom.initial_block_points()  # a domain's natural start (e.g. SSVM: w = 0)
        if x0 is None:
            for i in range(n):
                atom = self.lmos[i](np.ones(self.shapes[i]))
                self.n_oracle += 1
                v = _block_vector(atom, int(self.sizes[i]))
                Z[self.off[i]:self.off[i + 1]] = v
                if self.store is not None:
                    self.store.add(i, atom.key, v, 1.0, 0)
        else:
            if isinstance(x0, np.ndarray) and x0.ndim == 1 and x0.dtype != object:
                x0 = np.asarray(x0, dtype=float)
                if x0.shape != (dom.dim,):
                    raise ShapeError(f"x0 has shape {x0.shape}, expected ({dom.dim},)")
                if not dom.disjoint:
                    raise ValueError(
                        "x0: a point of a Minkowski sum (overlapping blocks) does not determine "
                        "the block iterates; pass a list of block points instead"
                    )
                parts = [x0[a] for a in self.idx]
            else:
                parts = list(x0)
                if len(parts) != n:
                    raise ShapeError(f"x0 has {len(parts)} block points, expected {n}")
            for i, p in enumerate(parts):
                if _is_active_set(p):
                    self._start_active_set(i, p, Z)
                    continue
                p = np.asarray(p, dtype=float)
                if p.size != self.sizes[i]:
                    raise ShapeError(
                        f"x0: block {i} has {p.size} entries, expected {int(self.sizes[i])} "
                        f"(shape {self.shapes[i]})"
                    )
                if not np.all(np.isfinite(p)):
                    raise ValueError(f"x0: block {i} contains NaN or inf")
                self.lmos[i].check_feasible(p.reshape(self.shapes[i]), f"x0: block {i}")
                v = p.reshape(-1)
                Z[self.off[i]:self.off[i + 1]] = v
                if self.store is not None:
                    # the start point itself is a point of M_i: a valid (pseudo) atom
                    self.store.add(i, ("x0",), v, 1.0, 0)
        self.Z = Z
        x = np.zeros(dom.dim)
        for i in range(n):
            np.add.at(x, self.idx[i], Z[self.off[i]:self.off[i + 1]])
        self.x = x

    def _start_active_set(self, i: int, atoms: Sequence[tuple[Atom, float]],
                          Z: np.ndarray) -> None:
        """Start block ``i`` at the convex combination ``atoms`` (``(Atom, weight)``
        pairs), which become its active set (a warm start that keeps the atoms)."""
        w = np.array([float(wa) for _, wa in atoms])
        if not (np.all(np.isfinite(w)) and w.min() >= 0.0 and abs(w.sum() - 1.0) <= 1e-9):
            raise ValueError(
                f"x0: block {i}'s active set must have non-negative weights summing to 1, got "
                f"sum {w.sum()!r} and minimum {w.min()!r}"
            )
        w /= w.sum()
        size = int(self.sizes[i])
        v = np.zeros(size)
        for (atom, _), wa in zip(atoms, w):
            if atom.nnz > size or int(np.prod(atom.shape)) != size:
                raise ShapeError(f"x0: an atom of block {i} has shape {atom.shape}, expected "
                                 f"{self.shapes[i]}")
            vec = _block_vector(atom, size)
            v += wa * vec
            if self.store is not None:
                known = atom.key in self.store.keys[i]
                row = self.store.add(i, atom.key, vec, float(wa), 0)
                if known:  # the same atom twice: its weights add up
                    self.store.weights[i][row] += wa
        Z[self.off[i]:self.off[i + 1]] = v

    # -- compiled passes ------------------------------------------------------
    def _wants_rounds(self) -> bool:
        """Whether the run takes mini-batch rounds (not serial block steps)."""
        return self.batch is not None and (self.batch.tau > 1 or self.batch.parallel)

    def _static_reason(self) -> str | None:
        """Why the compiled pass cannot run, as far as options and the objective go."""
        if self._wants_rounds():
            ex = self.batch.executor
            if not ex.in_process and not (ex.serves_rows and callable(
                    getattr(self.batch_oracle(), "rows", None))):
                return (f"mini-batch rounds on {ex!r} run in Python (compiled rounds keep the "
                        "vertices in this process, or take them as table rows from executors "
                        "that serve them, for batch block oracles with `rows`)")
            if not isinstance(self.dom, BlockDomainHooks):
                return ("mini-batch rounds run in Python unless the domain's compiled kernels "
                        "offer round kernels (CompiledBlocks.rounds)")
        if self.order.stepwise and self.order.compiled_tree() is None:
            return (f"the block order {self.order!r} picks block by block in Python "
                    "(orders drawing whole passes and gap sampling are compiled)")
        if self.cache or type(self.block_step).direction is not FWStep.direction:
            return "away / pairwise (or user) block steps and the cache run in Python"
        if self.rule.compiled() is None:
            return f"step_size={self.rule!r} has no compiled form (ExactStep and Agnostic do)"
        if debug_enabled():
            return "debug mode checks every oracle answer in Python"
        if self.f.compiled_block_objective() is None:
            return "the objective offers no compiled kernels (compiled_block_objective)"
        if not isinstance(self.dom, BlockDomainHooks):
            self._python_blocks()
            if not all(type(b) is ProbabilitySimplex for b in self.lmos):
                return ("the domain offers no compiled kernels (BlockDomainHooks) and not "
                        "every block is a ProbabilitySimplex")
            if not all(a.size < 2 or np.all(np.diff(a) > 0) for a in self.idx):
                return "block indices are not sorted"
        return None

    def _setup_compiled(self, x0: Any) -> None:
        """Kernels of the domain and the objective; the start point."""
        okern = self.f.compiled_block_objective()
        if isinstance(self.dom, BlockDomainHooks):
            dkern = self.dom.compiled_blocks(x0)
            if dkern is None:
                self.reason = "the domain's compiled_blocks() declined this start point"
                self._start(x0)
                return
            if self._wants_rounds():
                if dkern.rounds is None:
                    self.reason = ("mini-batch rounds run in Python unless the domain's "
                                   "compiled kernels offer round kernels (CompiledBlocks.rounds)")
                    self._start(x0)
                    return
                if not self.batch.executor.in_process and dkern.rounds.store is None:
                    self.reason = ("mini-batch rounds outside this process run in Python "
                                   "unless the domain's round kernels can store table rows "
                                   "(RoundKernels.store)")
                    self._start(x0)
                    return
                self.rounds = dkern.rounds
            # the domain owns the block iterates in its own parametrization
            x = np.zeros(self.dom.dim)
            dkern.start(x)
            self.x = x
        else:
            self._start(x0)
            idx_flat = np.concatenate(self.idx) if self.idx else np.zeros(0, np.int64)
            dkern = simplex_blocks(self.Z, idx_flat, self.off,
                                   np.array([b.radius for b in self.lmos]))
        self.kern = (dkern, okern)
        self.g = np.array(self.f.gradient(self.x), dtype=float).reshape(-1)
        self._bufs = (np.empty(dkern.max_nnz, dtype=np.int64), np.empty(dkern.max_nnz))
        # fused steps (no direction materialized) when both sides support them
        self._fused = fused_driver(dkern, okern) is not None
        self._h = okern.hessian_diag if self._fused else np.zeros(0)
        self._sd = dkern.layout if self._fused else structured_direction(0, 0, 0, np.zeros((0, 0)))
        kernel, self._rparams = self.rule.compiled()
        self._driver = compiled_driver(dkern, okern, kernel, fused=self._fused,
                                       rounds=self.rounds is not None)
        self._need_sync = True

    def compiled_steps(self, picker: Picker, t0: int, t1: int) -> float:
        """Block steps ``t0 .. t1 - 1`` of ``picker`` in one call of the compiled driver
        (with round kernels: at the vertices stored by the round's oracles); the
        change of f."""
        dkern, okern = self.kern
        avg = self.avg
        if avg is None:
            akind, acc, since, astart = 0, np.zeros(0), np.zeros(0, np.int64), 0
        else:
            akind = 1 if avg.kind == "weighted" else 2
            acc, since, astart = avg.acc, avg.since, avg.start
        idx, val = self._bufs
        args = (t0, t1, picker, dkern.state, okern.data, self._h, self.x, self.g, self._rparams,
                self.k, self.n, akind, acc, since, astart, self._need_sync, idx, val, self._sd)
        run_pass = self._driver[0]
        k, self.last_gamma, df = (run_pass(*args) if self.rounds is None
                                  else run_pass(*args, self.rounds.table))
        self._need_sync = False
        self.n_oracle += int(k) - self.k
        self.k = int(k)
        return float(df)

    def synced_gradient(self) -> np.ndarray:
        """The tracked gradient, with what the domain's fused kernels derive from it
        brought up to date (before a round's oracles read it)."""
        if self._fused and self._need_sync:
            dkern = self.kern[0]
            dkern.sync(dkern.state, self.g)
            self._need_sync = False
        return self.g

    def compiled_pass(self, order: np.ndarray | None, monitor: Monitor) -> float:
        """One compiled pass (stopped early at the time limit); the change of f."""
        n = self.n
        if order is None:  # gap sampling: the tree of the order, one uniform per step
            tree, tsize, degree, nextu = self.order.compiled_tree()
            steps = n
            picker = Picker(1, np.zeros(0, dtype=np.int64), self.rng.random(n), self.est, tree,
                            tsize, degree, nextu)
        else:
            steps = order.size
            picker = Picker(0, order, np.zeros(0), self.est, np.zeros(2), 1, 1.0,
                            np.zeros(1, dtype=np.int64))
        df = 0.0
        t0, chunk = 0, (steps if monitor.time_limit is None else min(steps, _TIME_CHECK_EVERY))
        while t0 < steps:
            t1 = min(steps, t0 + chunk)
            tic = time.perf_counter()
            df += self.compiled_steps(picker, t0, t1)
            t0 = t1
            if monitor.time_limit is not None and t0 < steps:
                rate = chunk / max(time.perf_counter() - tic, 1e-9)  # steps per second
                if self._time_up(monitor, n / rate):
                    break
                # chunks of about _CHUNK_SECONDS: a clock read costs nothing next to them
                chunk = int(min(steps, max(_TIME_CHECK_EVERY, rate * _CHUNK_SECONDS)))
        return float(df)

    def compiled_gap_pass(self, x: np.ndarray, refresh: bool) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` through the block kernels (one oracle call per block)."""
        dkern, _ = self.kern
        certify = self._driver[1]
        fx, g = self.f.value_and_gradient(x)
        g = np.array(g, dtype=float).reshape(-1)
        idx, val = self._bufs
        if self._fused:
            dkern.sync(dkern.state, g)  # the certificate's gradient; the next pass resyncs
            self._need_sync = True
        if self.rounds is None:
            total, scores = certify(dkern.state, g, self.est, refresh, idx, val)
        else:  # the oracles through the round machinery, then the gaps at their vertices
            self.batch.store_vertices(list(range(self.n)), g, certificate=True)
            total, scores = certify(dkern.state, g, self.est, refresh, idx, val,
                                    self.rounds.table)
        self.n_oracle += self.n
        if refresh:
            self.g = g  # also clears the rounding drift of the tracked gradient
            self.order.refresh()
            self.G = max(total, 0.0)
            return float(fx), float(total)
        return float(fx), float(g @ x) - float(scores)

    # -- one block step (the Python engine) ---------------------------------------
    def step(self, i: int, atom: Atom | None = None) -> None:
        """Block step ``i``; ``atom``: its oracle's answer when already asked (a mini-batch
        round asks at the round's point)."""
        f, x, store = self.f, self.x, self.store
        ix, sel = self.idx[i], self.sel[i]
        z = self.Z[self.off[i]:self.off[i + 1]]
        g = f.partial_gradient(x, ix)
        if type(g) is not np.ndarray or g.dtype != np.float64 or g.ndim != 1:
            g = np.asarray(g, dtype=float).reshape(-1)

        # Frank-Wolfe atom: from the cache when its gap is large enough, else the oracle
        s_row = -1
        if self.cache and store.count[i]:
            A, _ = store.rows(i)
            scores = A @ g
            r = int(np.argmin(scores))
            gz = float(g @ z)
            if gz - float(scores[r]) >= max(self.cache_factor * self.est[i],
                                            self.cache_nu * self.G / self.n):
                self.hits += 1
                s_row = r
                d_fw = A[r] - z
        if s_row < 0:
            if atom is None:
                shape = self.shapes[i]
                atom = self.lmos[i](g if len(shape) == 1 else g.reshape(shape))
            self.n_oracle += 1
            if self.cache:
                self.misses += 1
            d_fw = -z
            if atom.is_sparse:
                d_fw[atom.indices] += atom.values
            else:
                d_fw += atom.to_dense().reshape(-1)
        gap_i = -float(g @ d_fw)  # <g, z - s>
        gi = gap_i if gap_i > 0.0 else 0.0
        self.est[i] = gi
        if self._order_update is not None:
            self._order_update(i, gi)

        if self._plain_fw:  # FWStep without active sets: its direction is d_fw (no call)
            kind, a_row, d, gmax = "fw", -1, d_fw, 1.0
        elif store is None:
            kind, a_row, d, gmax = self.block_step.direction(z, g, d_fw, gap_i, None, None)
        else:
            A, W = store.rows(i)
            kind, a_row, d, gmax = self.block_step.direction(z, g, d_fw, gap_i, A, W)
            if s_row < 0:  # a fresh oracle answer joins the block's table
                s_row = store.add(i, atom.key, _block_vector(atom, z.size), 0.0, self.k)
            else:
                store.stamps[i][s_row] = self.k
        slope = -gap_i if d is d_fw else float(g @ d)
        gamma = 0.0
        if slope < 0.0:
            self.view.at(ix, sel, g)
            self.direction.d = d
            gamma = float(self.rule(self.k / self.n, self.view, self.direction, slope, gmax))
        self.last_gamma = gamma
        if gamma > 0.0:
            if self.avg is not None:
                self.avg.touch(x, sel, self.k)
            if store is not None and store.move(i, kind, s_row, a_row, gamma, gmax):
                self.n_drop += 1
            d *= gamma
            z += d
            x[sel] += d
        self.k += 1

    # -- certificates -------------------------------------------------------
    def gap_pass(self, x: np.ndarray, refresh: bool) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` with one oracle call per block.

        With ``refresh`` (``x`` is the last iterate) the block-gap estimates
        are replaced by the exact block gaps and the answers join the cache.
        """
        if self.kern is not None:
            return self.compiled_gap_pass(x, refresh)
        fx, g = self.f.value_and_gradient(x)
        g = np.asarray(g, dtype=float).reshape(-1)
        total = float(g @ x)
        gaps = np.empty(self.n) if refresh else None
        atoms = self.batch.certificate_atoms(g) if self.batch is not None else None
        for i in range(self.n):
            gi = g[self.idx[i]]
            atom = self.lmos[i](gi.reshape(self.shapes[i])) if atoms is None else atoms[i]
            self.n_oracle += 1
            sc = atom.dot(gi)
            total -= sc
            if refresh:
                gaps[i] = float(gi @ self.Z[self.off[i]:self.off[i + 1]]) - sc
                if self.cache:
                    self.store.add(i, atom.key, _block_vector(atom, int(self.sizes[i])), 0.0,
                                   self.k)
        if refresh:
            self.est[:] = np.maximum(gaps, 0.0)
            self.order.refresh()
            self.G = max(total, 0.0)
        return float(fx), total

    def certified_point(self) -> np.ndarray:
        if self.certify_kind == "average":
            return self.avg.value(self.x, self.k)
        return self.x

    def certificate(self) -> tuple[float, float]:
        tic = time.perf_counter()
        out = self.gap_pass(self.certified_point(), refresh=(self.certify_kind == "last"))
        self._reserve = time.perf_counter() - tic
        return out

    def _time_up(self, monitor: Monitor, pass_seconds: float) -> bool:
        """Whether to stop the pass now: the time budget is spent, or would be by the
        closing certificate (``pass_seconds``: n block steps at the measured rate)."""
        reserve = self._reserve if self._reserve is not None else pass_seconds
        if monitor.out_of_time() or monitor.elapsed() + reserve >= monitor.time_limit:
            self.time_up = True
        return self.time_up

    # -- the engine interface --------------------------------------------------------
    def info(self) -> dict[str, Any]:
        calls = self.hits + self.misses
        out = {"effective_passes": self.n_oracle / self.n, "oracle_calls": self.n_oracle,
               "gap_estimate": float(self.est.sum()),
               "cache_hit_rate": (self.hits / calls) if calls else np.nan}
        if self.batch is not None:
            out.update(self.batch.info())
        return out

    def observe(self, p: int) -> Observation | str:
        fx, gap, certified = self.fx, self.gap, self.certified
        if not (np.isfinite(fx) and (np.isfinite(gap) or not certified)):
            return f"the objective or the oracle returned a non-finite value at pass {p}"
        return Observation(fx, gap, certified, self.certified_point(), None, self.last_gamma,
                           self.info(), {"n_block_steps": self.k, "oracle_calls": self.n_oracle,
                                         **(self.batch.info() if self.batch else {})},
                           self.time_up)

    def advance(self, p: int, monitor: Monitor) -> None:
        order = self.order.pass_order(self.rng)
        if order is not None:
            order = np.asarray(order)
            if order.ndim != 1 or order.dtype.kind not in "iu" or (
                    order.size and not (0 <= order.min() and order.max() < self.n)):
                raise ValueError(
                    f"{type(self.order).__name__}.pass_order must return a 1-d integer array "
                    f"of block indices in [0, {self.n}), got {order!r:.80}")
            order = order.astype(np.int64, copy=False)
        if self.batch is not None:
            df = self.batch.run_pass(order, monitor)
        elif self.kern is not None:
            df = self.compiled_pass(order, monitor)
        else:
            if order is None:
                # one uniform number per step, drawn per pass (as the compiled pass)
                unif = self.rng.random(self.n)
                picks = (self.order.next(float(u)) for u in unif)
            else:
                picks = order
            tic = time.perf_counter()
            for t, i in enumerate(picks):
                self.step(int(i))
                if (t + 1) % _TIME_CHECK_EVERY == 0 and monitor.time_limit is not None and \
                        self._time_up(monitor, (time.perf_counter() - tic) * self.n / (t + 1)):
                    break
        self.passes = p + 1
        if self.avg is not None:  # before the certificate: it is about the reported average
            self.avg.end_pass(self.x, self.k, self.passes)
        if self.cache and not np.isfinite(self.G):
            # before any exact pass, the summed estimates serve as the global gap
            s = float(self.est.sum())
            if np.isfinite(s):
                self.G = s
        heuristic = monitor.converged(float(self.est.sum()), self.fx)  # cheap sign of convergence
        if (p + 1) % self.gap_every == 0 or heuristic:
            self.fx, self.gap = self.certificate()
            self.certified = True
        else:
            # the compiled pass reports the exact change of f at the last iterate
            self.fx = (self.fx + df if self.kern is not None and self.certify_kind == "last"
                       else float(self.f.value(self.certified_point())))
            self.certified = False

    def certify(self, last: Observation) -> tuple[float, float]:
        return self.certificate()

    def outputs(self, error: bool) -> dict[str, Any]:
        n = self.n
        x_last = self.x.copy()
        if self.Z is not None:
            block_iterates = [self.Z[self.off[i]:self.off[i + 1]].reshape(self.shapes[i]).copy()
                              for i in range(n)]
        else:  # the domain owns the block iterates (its own parametrization)
            points = self.kern[0].block_points
            block_iterates = points() if points is not None else None
        extra: dict[str, Any] = {
            "x_last": x_last,
            "block_iterates": block_iterates,
            "engine": "compiled" if self.kern is not None else "python",
            "block_order": self.order.name,
            "block_step": self.block_step.name,
            "step_size": repr(self.rule),
            "block_gaps": self.est.copy(),
            "n_block_steps": self.k,
            "effective_passes": self.n_oracle / n,
            "cache_hits": self.hits,
            "cache_misses": self.misses,
            "n_drop_steps": self.n_drop,
        }
        if self.batch is not None:
            extra.update(batch_size=self.batch.tau, rounds=self.batch.rounds,
                         executor=repr(self.batch.executor),
                         oracle_seconds=self.batch.oracle_seconds,
                         certificate_oracle_seconds=self.batch.certificate_seconds)
        if self.store is not None:
            extra["active_set_size"] = self.store.total_active()
            extra["active_sets"] = [self.store.active(i) for i in range(n)]
            extra["atom_store_bytes"] = self.store.nbytes
        if self.avg is not None:
            extra["x_average"] = self.avg.value(self.x, self.k)
            extra["average_window"] = self.avg.window(self.k)
        x_ret = extra["x_average"] if self.certify_kind == "average" else x_last
        out = dict(x=x_ret.copy(), n_oracle_calls=self.n_oracle, n_gradient_calls=self.k,
                   n_function_calls=self.passes, extra=extra)
        if error:
            out.update(fun=self.fx, gap=self.gap)
        return out


#: BCFW's wording of the shared run keywords: an outer iteration is a pass.
_RUN_DOC = """\
max_iter : int, default 100
    Budget of passes (the outer iterations of BCFW); a pass is ``n``
    block steps, and ``Result.nit`` counts passes.
time_limit : float, optional
    Wall-time budget in seconds, counted from the call: validation, set-up
    (the start point, the compiled kernels and their numba compilation on
    first use) and callbacks count.  It is checked within passes (every
    256 Python block steps; compiled passes run in chunks of about 10 ms),
    so a run stops mid-pass, early enough for the closing certificate (one
    oracle call per block, when the stop fell between certificates) to
    fit: its cost is taken from the last certificate pass, or estimated as
    n block steps.
callback : callable, optional
    Called after each pass with an :class:`~frankwolfe.IterationState`
    (``k`` is the pass); return ``False`` to stop.
verbose : bool or int, default False
    Print a table (an int sets the period in passes).
history_every : int, default 1
    Period of the history records, in passes.
progress : bool, default False
    Show a tqdm progress bar over passes."""


@register("bcfw")
@solver(defaults={"max_iter": 100}, doc=_RUN_DOC)
def block_coordinate_frank_wolfe(
    objective: Objective,
    domain: ProductDomain,
    x0: np.ndarray | Sequence[np.ndarray] | None = None,
    *,
    sampling: str | BlockOrder = "uniform",
    step_type: str | BlockStep = "fw",
    step_size: str | StepSize | None = None,
    gap_every: int = 10,
    averaging: str | None = None,
    certify: str = "last",
    cache: bool = False,
    cache_size: int = 100,
    cache_factor: float = 0.25,
    cache_nu: float = 0.01,
    atom_storage: str = "auto",
    gap_degree: float = 1.0,
    random_state: int | np.random.Generator | None = None,
    compiled: bool | None = None,
    batch_size: int | None = None,
    n_jobs: int | None = None,
    executor: Executor | Any = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a product domain, one block at a time.

    Block-coordinate Frank-Wolfe (Lacoste-Julien, Jaggi, Schmidt, Pletscher,
    ICML 2013) with the gapBCFW refinements (Osokin et al., ICML 2016): gap
    sampling, block away / pairwise steps and an oracle cache.  Each step
    picks a block ``i``, reads ``g_i = grad f(x)[idx_i]``, gets
    ``s_i = LMO_i(g_i)`` (or a cached atom) and moves ``z_i`` toward it; the
    aggregate ``x`` changes on ``idx_i`` only.

    Parameters
    ----------
    objective : Objective
        Smooth convex objective of the aggregate ``x``.  Used hooks:
        ``partial_gradient(x, idx)`` (block gradient; make it O(|idx|)),
        ``exact_step_block(x, idx, d, g_idx)`` (block line search) and
        ``value_and_gradient`` (once per certificate pass).
    domain : ProductDomain
        Blocks with disjoint (Cartesian product) or overlapping (Minkowski
        sum) coordinate sets.
    x0 : ndarray or sequence, optional
        Start: a list of block points (any domain) or, for a Cartesian
        product, the full vector.  A block may also be given as its active
        set, a list of ``(Atom, weight)`` pairs (weights summing to 1): the
        block starts at their combination and, with away / pairwise steps,
        keeps them as its atoms (a warm start that loses no structure).
        Default: each block's oracle answer for the all-ones direction.
    sampling : {"uniform", "perm", "gap", "max_gap"} or BlockOrder, default "uniform"
        Block order.  ``"uniform"`` (the analysed one) draws
        ``rng.integers(n, size=n)`` per pass, ``"perm"`` a fresh
        ``rng.permutation(n)`` per pass; ``"gap"`` samples ``i`` with
        probability proportional to ``g_i ** gap_degree`` (latest block-gap
        estimates; unvisited blocks first, in index order); ``"max_gap"``
        takes the largest estimate.  Or an instance of a
        :class:`~frankwolfe.BlockOrder` (e.g. a user's own: implement
        ``pass_order(rng)``).
    step_type : {"fw", "away", "pairwise"} or BlockStep, default "fw"
        Block step (:class:`~frankwolfe.FWStep`, :class:`~frankwolfe.AwayStep`,
        :class:`~frankwolfe.PairwiseStep` or a user's
        :class:`~frankwolfe.BlockStep`).  Away and pairwise steps keep a
        per-block active set of atoms (keys and weights) and take drop steps.
    step_size : str or StepSize, optional
        A :mod:`frankwolfe.step_size` rule, called on a block view of the
        iterate (``k`` counts passes: block steps / n).  ``"exact"`` (default
        when the objective offers ``exact_step_block`` or ``exact_step``),
        ``"agnostic"`` (``2 / (k + 2)`` = ``2n / (steps + 2n)``, default
        otherwise for FW steps), ``"short"`` (needs
        ``objective.smoothness``), ``"adaptive"`` (backtracking; O(dim) per
        trial, default otherwise for away / pairwise steps) or ``"armijo"``.
    gap_every : int, default 10
        A certificate pass (one oracle call per block) every this many passes,
        and whenever the sum of the block-gap estimates meets ``tol`` (or
        ``rtol``); it counts as one effective pass.
    averaging : {None, "weighted", "uniform", "tail"}, default None
        Also keep an average of the iterates: ``"weighted"`` is
        ``xbar <- k/(k+2) xbar + 2/(k+2) x`` per step (BCFW-wavg),
        ``"uniform"`` the plain mean of ``x_0 .. x_K`` (``x_k``: the iterate
        after ``k`` block steps), ``"tail"`` the 0.5-suffix average by the
        doubling trick (BCFW-tavg): after ``P`` passes, ``2^j <= P < 2^(j+1)``,
        the plain mean of the iterates of passes ``2^(j-1) + 1 .. P`` (after
        pass 1: of ``x_0 .. x_n``), between the last half and the last three
        quarters of the run; ``extra["average_window"]`` names the first and
        last averaged iterate.  O(|block|) per step.
    certify : {"last", "average"}, default "last"
        Which iterate the certificate passes (and ``tol``) are about; that
        iterate is returned as ``x``.
    cache : bool, default False
        gapBCFW oracle cache: reuse the best cached atom of block ``i`` when
        its gap is at least ``max(cache_factor * g_i, cache_nu * G / n)``
        (``G``: last certified gap), else call the oracle.
    cache_size : int, default 100
        Bound on the inactive cached atoms per block.
    cache_factor, cache_nu : float
        Cache thresholds (gapBCFW defaults 0.25 and 0.01).
    atom_storage : {"auto", "dense", "sparse"}, default "auto"
        How the per-block atoms of the cache and active sets are stored: rows
        of a dense array, or only their nonzeros (a shortest-path tree over a
        network's links: O(nnz) instead of O(block size) memory per atom).
        ``"auto"`` picks sparse for a block of at least 1024 coordinates whose
        first atom has at most half of them nonzero.  The iterates agree
        up to the order of summation in the atom scores.
    gap_degree : float, default 1
        Exponent of gap sampling.
    random_state : int or numpy.random.Generator, optional
        Seed; the run is reproducible for a fixed seed.
    compiled : bool, optional
        Run whole passes in one numba call.  Available when the domain and
        the objective supply compiled kernels (the protocol of
        :mod:`frankwolfe.algorithms.compiled_blocks`: a domain opts in as a
        ``BlockDomainHooks`` with ``compiled_blocks(x0)``, an objective
        through ``compiled_block_objective()`` or ``as_quadratic()``; built in
        for a :class:`~frankwolfe.QuadraticObjective` over a product of
        :class:`~frankwolfe.ProbabilitySimplex` blocks), with an order that
        draws whole passes or gap sampling, FW steps, no cache, a step rule
        with a compiled form (``"exact"`` or ``"agnostic"``) and debug mode
        off.  A domain may keep its block iterates in its own
        parametrization there (e.g. label marginals); the engine performs the
        same updates as the Python steps (equal up to rounding) and consumes
        the random stream identically.  When the objective's Hessian is
        diagonal and the domain offers fused kernels (curvature and move), no
        direction is materialized.  ``None`` (default): use it when
        available; ``True``: raise when it is not.  ``extra["engine"]`` says
        which engine ran.
    batch_size : int, optional
        Mini-batch BCFW (Wang et al., ICML 2016; :mod:`.minibatch`): each round
        takes the next ``batch_size`` blocks of the order, asks their oracles at
        the same point (in parallel through ``executor``), then applies their
        block steps one after the other, each with its line search at the
        current iterate; certificate passes ask all oracles through the same
        executor.  ``1`` is serial BCFW iterate for iterate (same seed, same
        steps).  Rounds run compiled when the domain's compiled kernels offer
        round kernels (:class:`~frankwolfe.algorithms.compiled_blocks.RoundKernels`;
        the chain SSVM dual does) and the executor runs in this process: the
        oracles of a round in one call per thread, its block steps in one call
        of the compiled driver; otherwise in the Python engine.  (``batch_size``
        None or 1 without a parallel executor is the serial compiled pass.)  Does
        not combine with ``cache``.
    n_jobs : int, optional
        Threads for the oracles of a round (a :class:`~frankwolfe.ThreadExecutor`;
        ``-1``: one per core) when ``executor`` is not given.
    executor : Executor or dask.distributed.Client, optional
        Where the oracles of a round run (:mod:`frankwolfe.executors`): a
        :class:`~frankwolfe.SerialExecutor`, :class:`~frankwolfe.ThreadExecutor`,
        a ``dask.distributed.Client`` (wrapped in a
        :class:`~frankwolfe.DaskExecutor`: the blocks must be picklable) or a
        user's :class:`~frankwolfe.Executor`.  A lost cluster raises
        :class:`~frankwolfe.errors.ExecutorError` with the result so far (its
        last good iterate) as ``err.result``.

    Returns
    -------
    Result
        ``x``, ``fun``, ``gap`` (certified), ``nit`` (passes) and counters;
        ``method`` is ``"bcfw"``.  ``extra`` holds ``engine``, ``block_order``,
        ``block_step`` and ``step_size`` (the configuration), ``x_last``, ``x_average`` and
        ``average_window`` (with averaging),
        ``block_iterates`` (list of block points), ``block_gaps`` (latest
        estimates), ``n_block_steps``, ``effective_passes`` (oracle calls /
        n), ``cache_hits``, ``cache_misses``, ``active_set_size``,
        ``atom_store_bytes`` (memory of the stored atoms) and ``active_sets``
        (with away / pairwise steps or the cache: per block, the ``(key,
        weight)`` of its atoms of positive weight); with
        mini-batches also ``batch_size``, ``rounds``, ``executor``,
        ``oracle_seconds`` and ``certificate_oracle_seconds`` (wall time of the
        oracle phases of the rounds and of the certificate passes), and the history
        a ``rounds`` column.  The
        history has one row per pass with ``effective_passes``,
        ``oracle_calls``, ``time``, ``fun``, ``gap`` (NaN between
        certificates), ``gap_estimate`` (sum of block-gap estimates) and
        ``cache_hit_rate``.

    Notes
    -----
    Per step: O(|idx_i|) plus the objective's block gradient and the block
    oracle; with a cache or an active set add O(rows * |idx_i|) for the
    scores of the stored atoms.  A certificate pass costs one full gradient
    and ``n`` oracle calls.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import (FunctionObjective, ProbabilitySimplex, ProductDomain,
    ...                         block_coordinate_frank_wolfe)
    >>> y = np.array([0.9, 0.3, 0.2, 0.8])
    >>> f = FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y,
    ...                       exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    >>> dom = ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2)])
    >>> res = block_coordinate_frank_wolfe(f, dom, tol=1e-9, random_state=0)
    >>> np.round(res.x, 6)
    array([0.8, 0.2, 0.2, 0.8])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    if not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective, got {type(objective).__name__}")
    if not isinstance(domain, ProductDomain):
        raise TypeError(
            f"domain must be a ProductDomain (blocks with their own oracles), got "
            f"{type(domain).__name__}; wrap a single domain as ProductDomain([lmo])"
        )
    order = make_block_order(sampling, gap_degree)
    step = make_block_step(step_type)
    averaging = _check_choice("averaging", averaging, _AVERAGING)
    certify = _check_choice("certify", certify, ("last", "average"))
    if certify == "average" and averaging is None:
        raise ValueError("certify='average' needs averaging ('weighted', 'uniform' or 'tail')")
    gap_every = _positive_int("gap_every", gap_every)
    cache_size = _positive_int("cache_size", cache_size)
    if not (cache_factor >= 0 and cache_nu >= 0):
        raise ValueError(
            f"cache_factor and cache_nu must be >= 0, got {cache_factor!r}, {cache_nu!r}"
        )
    if atom_storage not in STORAGES:
        raise ValueError(f"atom_storage must be one of {STORAGES}, got {atom_storage!r}")
    if not (np.isfinite(gap_degree) and gap_degree >= 0):
        raise ValueError(f"gap_degree must be a finite number >= 0, got {gap_degree!r}")
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    rule = _block_rule(step_size, objective, step)
    batch = _mini_batch(batch_size, n_jobs, executor, cache)
    # the clock starts here: set-up and compilation count against time_limit
    monitor = options.monitor("bcfw")
    engine = _BlockEngine(objective, domain, x0, order=order, step=step, rule=rule, cache=cache,
                          cache_size=cache_size, cache_factor=cache_factor, cache_nu=cache_nu,
                          atom_storage=atom_storage, averaging=averaging, certify=certify,
                          gap_every=gap_every, rng=rng, compiled=compiled, batch=batch)
    try:
        if compiled and engine.reason is not None:
            raise ValueError(
                f"compiled=True but the compiled pass is not available: {engine.reason}")
        return drive(engine, monitor)
    finally:
        if batch is not None:
            batch.close()


def _mini_batch(batch_size: Any, n_jobs: Any, executor: Any, cache: bool) -> MiniBatch | None:
    """The mini-batch schedule, or ``None`` for serial block steps (``batch_size`` None or
    1 in this process: the compiled pass may then serve)."""
    if batch_size is None and executor is None and n_jobs in (None, 1):
        return None
    tau = 1 if batch_size is None else _positive_int("batch_size", batch_size)
    ex = make_executor(executor, n_jobs)
    if cache:
        raise ValueError("cache=True does not combine with mini-batches (batch_size, n_jobs or "
                         "executor): a round asks its oracles before any cached atom is scored")
    return MiniBatch(tau, ex)

"""Block-coordinate Frank-Wolfe (BCFW) on product domains.

The domain is a :class:`~frankwolfe.ProductDomain`: blocks ``i = 1..n`` with
their own oracles and coordinate sets ``idx_i`` in one vector ``x``.  Each
block iterate ``z_i`` is stored (one flat array, block after block) and the
objective sees ``x = sum_i E_i z_i``, so the same code runs a Cartesian
product (disjoint ``idx_i``) and a Minkowski sum (overlapping ``idx_i``, the
structured SVM dual in image space).

One block step costs O(|idx_i|) plus the block oracle: the block gradient
comes from ``objective.partial_gradient(x, idx_i)``, the line search from
``objective.exact_step_block`` and the update touches ``x[idx_i]`` only.
The loop differs from the single-domain loop of :mod:`.loop` (passes of
block steps, certificates every few passes), but stopping, history, callbacks
and the result go through the shared :class:`~frankwolfe.monitor.Monitor`.

Randomness (documented so that a transcription can replay it): at the start
of each pass ``"uniform"`` draws ``rng.integers(n, size=n)``, ``"perm"``
draws ``rng.permutation(n)`` and ``"gap"`` draws ``u = rng.random(n)``; step
``t`` of a gap-sampling pass takes the first unvisited block, else the block
whose cumulative weight interval holds ``u[t] * sum(weights)``.  The Python
and the compiled engines consume the stream identically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..atoms import Atom
from .._config import debug_enabled
from ..blocks import (BlockAtomStore, CompiledBlocks, CompiledObjective, GapSampler,
                      LazyAverage, compiled_driver, csr_quadratic_kernels, fused_driver,
                      simplex_blocks)
from ..lmo.simplex import ProbabilitySimplex
from ..objectives.quadratic import QuadraticObjective
from ..errors import InfeasibleError, NonConvexError, ShapeError
from ..lmo.product import ProductDomain
from ..monitor import IterationState, Monitor
from ..objectives.base import Objective
from ..result import Result, Status
from ..step_size import Adaptive, Agnostic, ExactStep, ShortStep, StepSize

__all__ = ["block_coordinate_frank_wolfe"]

_SAMPLINGS = ("uniform", "perm", "gap", "max_gap")
_STEP_TYPES = ("fw", "away", "pairwise")
_AVERAGING = (None, "weighted", "uniform", "tail")
_RULES = ("exact", "agnostic", "short", "adaptive")
_TIME_CHECK_EVERY = 256  # steps between clock reads inside a pass


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


class _Rule:
    """The block step-size rule (parameters taken from frankwolfe.step_size)."""

    def __init__(self, spec: str | StepSize | None, objective: Objective, n: int,
                 step_type: str) -> None:
        self.ell, self.L, self.eta, self.tau, self.max_bt = 2.0, None, 0.9, 2.0, 60
        if spec is None:
            if objective.has_exact_step_block:
                kind = "exact"
            else:
                kind = "agnostic" if step_type == "fw" else "adaptive"
        elif isinstance(spec, str):
            kind = _check_choice("step_size", spec, _RULES)
        elif isinstance(spec, ExactStep):
            kind = "exact"
        elif isinstance(spec, Agnostic):
            kind, self.ell = "agnostic", spec.ell
        elif isinstance(spec, ShortStep):
            kind, self.L = "short", spec.smoothness
        elif isinstance(spec, Adaptive):
            kind, self.L, self.eta, self.tau = "adaptive", spec.L0, spec.eta, spec.tau
            self.max_bt = spec.max_backtracks
        else:
            raise TypeError(
                f"step_size must be one of {list(_RULES)}, an ExactStep, Agnostic, ShortStep or "
                f"Adaptive, or None; got {type(spec).__name__}"
            )
        if kind == "exact" and not objective.has_exact_step_block:
            raise ValueError(
                f"step_size='exact' needs an objective with exact_step_block() or exact_step(); "
                f"{type(objective).__name__} has neither (use 'agnostic', 'short' or 'adaptive')"
            )
        if kind == "short":
            self.L = self.L if self.L is not None else objective.smoothness
            if self.L is None or not (np.isfinite(self.L) and self.L > 0):
                raise ValueError(
                    "step_size='short' needs a positive smoothness constant: set "
                    f"`smoothness` on the objective or pass ShortStep(L); got {self.L!r}"
                )
        if kind == "agnostic" and step_type != "fw":
            raise ValueError(
                f"step_type={step_type!r} needs a line search ('exact', 'short' or 'adaptive'); "
                "the open-loop step 2n/(k+2n) only suits step_type='fw'"
            )
        self.kind = kind
        self.n = n


class _BCFW:
    """State and block steps of one run."""

    def __init__(self, objective: Objective, domain: ProductDomain, x0: Any, *,
                 sampling: str, step_type: str, rule: _Rule, cache: bool, cache_size: int,
                 cache_factor: float, cache_nu: float, gap_degree: float,
                 averaging: str | None, rng: np.random.Generator,
                 compiled: bool | None = None) -> None:
        self.f = objective
        self.dom = domain
        self.n = n = domain.n_blocks
        self.sampling = sampling
        self.step_type = step_type
        self.rule = rule
        self.cache = cache
        self.cache_factor = float(cache_factor)
        self.cache_nu = float(cache_nu)
        self.rng = rng
        self.lmos = domain.blocks
        self.shapes = [domain.block_shape(i) for i in range(n)]
        self.idx = [np.ascontiguousarray(a, dtype=np.int64) for a in domain.block_indices]
        # contiguous ranges are updated through slices (views, no fancy-index copies)
        self.sel: list[np.ndarray | slice] = []
        for a in self.idx:
            if a.size and a[-1] - a[0] == a.size - 1 and np.all(np.diff(a) == 1):
                self.sel.append(slice(int(a[0]), int(a[-1]) + 1))
            else:
                self.sel.append(a)
        self.sizes = np.array([a.size for a in self.idx], dtype=np.int64)
        self.off = np.concatenate(([0], np.cumsum(self.sizes)))
        self.est = np.full(n, np.inf)  # latest block-gap estimates
        self.G = np.inf  # latest certified global gap (cache threshold)
        self.k = 0  # block steps done
        self.n_oracle = 0
        self.hits = 0
        self.misses = 0
        self.n_drop = 0
        self.last_gamma = np.nan
        self.store = (BlockAtomStore(self.sizes, cache_size)
                      if (cache or step_type != "fw") else None)
        self.sampler = (GapSampler(self.est, gap_degree, greedy=(sampling == "max_gap"))
                        if sampling in ("gap", "max_gap") else None)
        self.kern: tuple[CompiledBlocks, CompiledObjective] | None = None
        self.reason = self._static_reason() if compiled is not False else "compiled=False"
        self.Z = None
        if self.reason is None:
            self._setup_compiled(x0)
        else:
            self._start(x0)
        self.avg = LazyAverage(self.x, averaging) if averaging else None
        self.tail_next = 1  # next pass at which a "tail" average restarts

    # -- start ------------------------------------------------------------
    def _start(self, x0: Any) -> None:
        dom, n = self.dom, self.n
        Z = np.empty(int(self.off[-1]))
        if x0 is None and hasattr(dom, "initial_block_points"):
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
                p = np.asarray(p, dtype=float)
                if p.size != self.sizes[i]:
                    raise ShapeError(
                        f"x0: block {i} has {p.size} entries, expected {int(self.sizes[i])} "
                        f"(shape {self.shapes[i]})"
                    )
                if not np.all(np.isfinite(p)):
                    raise ValueError(f"x0: block {i} contains NaN or inf")
                try:
                    viol = self.lmos[i].violation(p.reshape(self.shapes[i]))
                except NotImplementedError:
                    viol = 0.0
                if not viol <= 1e-8:
                    raise InfeasibleError(
                        f"x0: block {i} is not in {self.lmos[i]!r}: violation {viol:.3g} > 1e-08"
                    )
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

    # -- compiled passes ------------------------------------------------------
    def _static_reason(self) -> str | None:
        """Why the compiled pass cannot run, as far as options and the objective go."""
        if self.sampling not in ("uniform", "perm", "gap"):
            return f"sampling={self.sampling!r} (only 'uniform', 'perm' and 'gap' are compiled)"
        if self.step_type != "fw" or self.cache:
            return "away / pairwise steps and the cache run in Python"
        if self.rule.kind not in ("exact", "agnostic"):
            return f"step_size={self.rule.kind!r} (only 'exact' and 'agnostic' are compiled)"
        if debug_enabled():
            return "debug mode checks every oracle answer in Python"
        hook = getattr(self.f, "compiled_block_objective", None)
        if hook is None and type(self.f) is not QuadraticObjective:
            return ("the objective offers no compiled kernels (compiled_block_objective) and is "
                    "not a QuadraticObjective")
        if getattr(self.dom, "compiled_blocks", None) is None:
            if not all(type(b) is ProbabilitySimplex for b in self.lmos):
                return ("the domain offers no compiled kernels (compiled_blocks) and not every "
                        "block is a ProbabilitySimplex")
            if not all(a.size < 2 or np.all(np.diff(a) > 0) for a in self.idx):
                return "block indices are not sorted"
        return None

    def _setup_compiled(self, x0: Any) -> None:
        """Kernels of the domain and the objective; the start point."""
        hook = getattr(self.f, "compiled_block_objective", None)
        okern = hook() if hook is not None else None
        if okern is None:
            if type(self.f) is not QuadraticObjective:
                self.reason = "the objective's compiled_block_objective() returned None"
                self._start(x0)
                return
            okern = csr_quadratic_kernels(self.f.Q, self.f.c)
        dhook = getattr(self.dom, "compiled_blocks", None)
        if dhook is not None:
            dkern = dhook(x0)
            if dkern is None:
                self.reason = "the domain's compiled_blocks() declined this start point"
                self._start(x0)
                return
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
        self._driver = compiled_driver(dkern, okern)
        # a fused block step (oracle, line search and update in one kernel) when both
        # sides support it: no direction is materialized
        self._fused = fused_driver(dkern, okern)
        self._need_sync = True

    def compiled_pass(self, order: np.ndarray | None) -> float:
        """One compiled pass; returns the change of f."""
        dkern, okern = self.kern
        run_pass = self._driver[0]
        n = self.n
        if order is None:  # gap sampling: the tree of the sampler, one uniform per step
            smp = self.sampler
            order = np.zeros(0, dtype=np.int64)
            unif = self.rng.random(n)
            tree, tsize, degree = smp.tree, smp.size, smp.degree
            nextu = np.array([smp.next_unvisited], dtype=np.int64)
            mode = 1
        else:
            unif = np.zeros(0)
            tree, tsize, degree = np.zeros(2), 1, 1.0
            nextu = np.zeros(1, dtype=np.int64)
            mode = 0
        avg = self.avg
        if avg is None:
            akind, acc, since, astart = 0, np.zeros(0), np.zeros(0, np.int64), 0
        else:
            akind = 1 if avg.kind == "weighted" else 2
            acc, since, astart = avg.acc, avg.since, avg.start
        idx, val = self._bufs
        if self._fused is not None:
            h, hdim = okern.isotropic
            k, self.last_gamma, df = self._fused(
                order.astype(np.int64, copy=False), unif, mode, dkern.state, self.x, self.g,
                self.est, tree, tsize, degree, nextu, self.rule.kind == "exact", self.rule.ell,
                h, hdim, self.k, n, akind, acc, since, astart, self._need_sync)
            self._need_sync = False
        else:
            k, self.last_gamma, df = run_pass(
                order.astype(np.int64, copy=False), unif, mode, dkern.state, okern.data,
                self.x, self.g, self.est, tree, tsize, degree, nextu,
                self.rule.kind == "exact", self.rule.ell, self.k, n, akind, acc, since,
                astart, idx, val)
        if mode == 1:
            self.sampler.next_unvisited = int(nextu[0])
        self.k = int(k)
        self.n_oracle += n
        return float(df)

    def compiled_gap_pass(self, x: np.ndarray, refresh: bool) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` through the block kernels (one oracle call per block)."""
        dkern, _ = self.kern
        certify = self._driver[1]
        fx, g = self.f.value_and_gradient(x)
        g = np.array(g, dtype=float).reshape(-1)
        idx, val = self._bufs
        if self._fused is not None:
            dkern.sync(dkern.state, g)  # the certificate's gradient; the next pass resyncs
            self._need_sync = True
        total, scores = certify(dkern.state, g, self.est, refresh, idx, val)
        self.n_oracle += self.n
        if refresh:
            self.g = g  # also clears the rounding drift of the tracked gradient
            if self.sampler is not None:
                self.sampler.refresh()
            self.G = max(total, 0.0)
            return float(fx), float(total)
        return float(fx), float(g @ x) - float(scores)

    # -- sampling -----------------------------------------------------------
    def pass_order(self) -> np.ndarray | None:
        """Indices of the next pass (``None``: drawn step by step)."""
        if self.sampling == "uniform":
            return self.rng.integers(self.n, size=self.n)
        if self.sampling == "perm":
            return self.rng.permutation(self.n)
        return None

    # -- one block step ---------------------------------------------------------
    def step(self, i: int) -> None:
        if self.store is None and self.rule.kind in ("exact", "agnostic"):
            self._fw_step(i)
            return
        f, x, store = self.f, self.x, self.store
        ix, sel = self.idx[i], self.sel[i]
        lo, hi = self.off[i], self.off[i + 1]
        z = self.Z[lo:hi]
        m = hi - lo
        g = np.asarray(f.partial_gradient(x, ix), dtype=float).reshape(-1)
        gz = float(g @ z)

        # Frank-Wolfe atom: from the cache when its gap is large enough, else the oracle
        s_row = -1
        s_atom = None
        if self.cache and store.count[i]:
            A, _ = store.rows(i)
            scores = A @ g
            r = int(np.argmin(scores))
            cached_gap = gz - float(scores[r])
            need = max(self.cache_factor * self.est[i], self.cache_nu * self.G / self.n)
            if cached_gap >= need:
                self.hits += 1
                s_row, s_score = r, float(scores[r])
                s_vec = A[r]
        if s_row < 0:
            s_atom = self.lmos[i](g.reshape(self.shapes[i]))
            self.n_oracle += 1
            if self.cache:
                self.misses += 1
            s_score = s_atom.dot(g)
            s_vec = None
        gap_i = gz - s_score
        if self.sampler is not None:
            self.sampler.update(i, max(gap_i, 0.0))
        else:
            self.est[i] = max(gap_i, 0.0)

        # direction d (dense over the block) and largest step
        kind = "fw"
        if self.step_type != "fw":
            A, W = store.rows(i)
            act = np.flatnonzero(W > 0.0)
            ascores = A[act] @ g
            j = int(np.argmax(ascores))
            a_row = int(act[j])
            a_w = float(W[a_row])
            away_gap = float(ascores[j]) - gz
            if self.step_type == "pairwise":
                kind = "pairwise"
            elif away_gap > gap_i and a_w < 1.0:
                kind = "away"
        if s_vec is None and (kind != "fw" or store is not None):
            s_vec = _block_vector(s_atom, m)
        if kind == "fw":
            if s_vec is None:  # sparse oracle answer: d = s - z without densifying s
                d = -z
                if s_atom.is_sparse:
                    d[s_atom.indices] += s_atom.values
                else:
                    d += s_atom.to_dense().reshape(-1)
            else:
                d = s_vec - z
            gmax = 1.0
        elif kind == "pairwise":
            d = s_vec - A[a_row]
            gmax = a_w
        else:
            d = z - A[a_row]
            gmax = a_w / (1.0 - a_w)
        slope = float(g @ d)
        gamma = self._gamma(ix, sel, g, d, slope, gmax) if slope < 0.0 else 0.0
        self.last_gamma = gamma
        if gamma > 0.0:
            if self.avg is not None:
                self.avg.touch(x, sel, self.k)
            d *= gamma
            z += d
            x[sel] += d
        if store is not None:
            self._update_weights(i, kind, gamma, gmax, s_row, s_vec, s_atom,
                                 a_row if kind != "fw" else -1)
        self.k += 1

    def _fw_step(self, i: int) -> None:
        """A plain FW block step (no active set, no cache, exact or open-loop step): the
        same arithmetic as :meth:`step` with the fewest numpy calls, since for small
        blocks each call costs more than its arithmetic."""
        x = self.x
        ix, sel = self.idx[i], self.sel[i]
        z = self.Z[self.off[i]:self.off[i + 1]]
        g = self.f.partial_gradient(x, ix)
        if type(g) is not np.ndarray or g.dtype != np.float64 or g.ndim != 1:
            g = np.asarray(g, dtype=float).reshape(-1)
        shape = self.shapes[i]
        atom = self.lmos[i](g if len(shape) == 1 else g.reshape(shape))
        self.n_oracle += 1
        d = -z
        if atom.is_sparse:
            ai, av = atom.indices, atom.values
            d[ai] += av
        else:
            d += atom.to_dense().reshape(-1)
        slope = float(g @ d)  # = <g, s> - <g, z> = -gap_i
        gap_i = -slope
        if self.sampler is not None:
            self.sampler.update(i, gap_i if gap_i > 0.0 else 0.0)
        else:
            self.est[i] = gap_i if gap_i > 0.0 else 0.0
        gamma = self._gamma(ix, sel, g, d, slope, 1.0) if slope < 0.0 else 0.0
        self.last_gamma = gamma
        if gamma > 0.0:
            if self.avg is not None:
                self.avg.touch(x, sel, self.k)
            d *= gamma
            z += d
            x[sel] += d
        self.k += 1

    def _gamma(self, ix: np.ndarray, sel: Any, g: np.ndarray, d: np.ndarray, slope: float,
               gmax: float) -> float:
        rule = self.rule
        if rule.kind == "exact":
            gamma = float(self.f.exact_step_block(self.x, ix, d, g))
            if np.isnan(gamma):
                raise FloatingPointError("block exact line search returned NaN")
            if gamma < 0.0:
                if self.f.convex:
                    raise NonConvexError(
                        f"block exact line search gave gamma={gamma:.3g} < 0 along a descent "
                        "direction: negative curvature on an objective declared convex"
                    )
                return 0.0
            return min(gmax, gamma)
        if rule.kind == "agnostic":
            nl = rule.ell * self.n
            return min(gmax, nl / (self.k + nl))
        dd = float(d @ d)
        if dd <= 0.0:
            return 0.0
        if rule.kind == "short":
            return min(gmax, -slope / (rule.L * dd))
        return self._adaptive(sel, d, slope, dd, gmax)

    def _adaptive(self, sel: Any, d: np.ndarray, slope: float, dd: float, gmax: float) -> float:
        """Backtracking on one shared estimate of L; O(dim) per trial (full f)."""
        rule, x, f = self.rule, self.x, self.f
        f0 = float(f.value(x))
        slack = 16.0 * np.finfo(float).eps * max(1.0, abs(f0))
        if rule.L is None:
            eps = 1e-3
            g0 = f.gradient(x).reshape(-1)
            x[sel] += eps * d
            g1 = f.gradient(x).reshape(-1)
            x[sel] -= eps * d
            est = float(np.linalg.norm(g1 - g0) / (eps * np.sqrt(dd)))
            rule.L = est if np.isfinite(est) and est > 0 else 1.0
        M = rule.eta * rule.L
        gamma = 0.0
        saved = x[sel].copy()
        for _ in range(rule.max_bt):
            gamma = min(gmax, -slope / (M * dd))
            x[sel] += gamma * d
            ft = float(f.value(x))
            x[sel] = saved
            if ft <= f0 + gamma * slope + 0.5 * gamma * gamma * M * dd + slack:
                rule.L = M
                return gamma
            M *= rule.tau
        return gamma

    def _update_weights(self, i: int, kind: str, gamma: float, gmax: float, s_row: int,
                        s_vec: np.ndarray | None, s_atom: Atom | None, a_row: int) -> None:
        store = self.store
        if s_row < 0:  # a fresh oracle answer joins the block's table
            s_row = store.add(i, s_atom.key, s_vec, 0.0, self.k)
        else:
            store.stamps[i][s_row] = self.k
        if gamma <= 0.0:
            return
        W = store.weights[i][:store.count[i]]
        if kind == "fw":
            W *= 1.0 - gamma
            W[s_row] += gamma
            if gamma >= gmax:  # full step: every other atom drops
                W[:] = 0.0
                W[s_row] = 1.0
        elif kind == "pairwise":
            W[s_row] += gamma
            W[a_row] -= gamma
            if gamma >= gmax:
                W[a_row] = 0.0
                self.n_drop += 1
        else:
            W *= 1.0 + gamma
            W[a_row] -= gamma
            if gamma >= gmax:
                W[a_row] = 0.0
                self.n_drop += 1
        W[W < 1e-15] = 0.0  # rounding residue of dropped atoms

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
        for i in range(self.n):
            gi = g[self.idx[i]]
            atom = self.lmos[i](gi.reshape(self.shapes[i]))
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
            if self.sampler is not None:
                self.sampler.refresh()
            self.G = max(total, 0.0)
        return float(fx), total

    def cache_threshold_fallback(self) -> None:
        """Before any exact pass, use the summed estimates as the global gap."""
        if not np.isfinite(self.G):
            s = float(self.est.sum())
            if np.isfinite(s):
                self.G = s


def block_coordinate_frank_wolfe(
    objective: Objective,
    domain: ProductDomain,
    x0: np.ndarray | Sequence[np.ndarray] | None = None,
    *,
    sampling: str = "uniform",
    step_type: str = "fw",
    step_size: str | StepSize | None = None,
    max_passes: int = 100,
    tol: float = 1e-6,
    time_limit: float | None = None,
    gap_every: int = 10,
    averaging: str | None = None,
    certify: str = "last",
    cache: bool = False,
    cache_size: int = 100,
    cache_factor: float = 0.25,
    cache_nu: float = 0.01,
    gap_degree: float = 1.0,
    random_state: int | np.random.Generator | None = None,
    compiled: bool | None = None,
    callback: Callable[[IterationState], Any] | None = None,
    verbose: bool | int = False,
    progress: bool = False,
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
    x0 : ndarray or sequence of ndarray, optional
        Start: a list of block points (any domain) or, for a Cartesian
        product, the full vector.  Default: each block's oracle answer for the
        all-ones direction.
    sampling : {"uniform", "perm", "gap", "max_gap"}, default "uniform"
        Block order.  ``"uniform"`` (the analysed one) draws
        ``rng.integers(n, size=n)`` per pass, ``"perm"`` a fresh
        ``rng.permutation(n)`` per pass; ``"gap"`` samples ``i`` with
        probability proportional to ``g_i ** gap_degree`` (latest block-gap
        estimates; unvisited blocks first, in index order); ``"max_gap"``
        takes the largest estimate.
    step_type : {"fw", "away", "pairwise"}, default "fw"
        Block step.  Away and pairwise steps keep a per-block active set of
        atoms (keys and weights) and take drop steps.
    step_size : str or StepSize, optional
        ``"exact"`` (default when the objective offers ``exact_step_block``
        or ``exact_step``), ``"agnostic"`` (``2n/(k+2n)``, default otherwise
        for FW steps), ``"short"`` (needs ``objective.smoothness``) or
        ``"adaptive"`` (backtracking; O(dim) per trial, default otherwise for
        away / pairwise steps).  The matching :mod:`frankwolfe.step_size`
        objects are accepted for their parameters.
    max_passes : int, default 100
        Budget of passes; a pass is ``n`` block steps.
    tol : float, default 1e-6
        Stop when the certified gap is at most ``tol``.
    time_limit : float, optional
        Wall-time budget in seconds (checked every 256 steps).
    gap_every : int, default 10
        A certificate pass (one oracle call per block) every this many passes,
        and whenever the sum of the block-gap estimates falls to ``tol``; it
        counts as one effective pass.
    averaging : {None, "weighted", "uniform", "tail"}, default None
        Also keep an average of the iterates: ``"weighted"`` is
        ``xbar <- k/(k+2) xbar + 2/(k+2) x`` per step (BCFW-wavg),
        ``"uniform"`` the plain mean, ``"tail"`` the plain mean since the
        last pass that was a power of two.  O(|block|) per step.
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
    gap_degree : float, default 1
        Exponent of gap sampling.
    random_state : int or numpy.random.Generator, optional
        Seed; the run is reproducible for a fixed seed.
    compiled : bool, optional
        Run whole passes in one numba call.  Available when the domain and
        the objective supply compiled kernels (the protocol of
        :class:`frankwolfe.blocks.CompiledBlocks` / ``CompiledObjective``:
        ``domain.compiled_blocks(x0)`` and
        ``objective.compiled_block_objective()``; built in for a
        :class:`~frankwolfe.QuadraticObjective` over a product of
        :class:`~frankwolfe.ProbabilitySimplex` blocks), with ``"uniform"``,
        ``"perm"`` or ``"gap"`` sampling, FW steps, no cache, ``"exact"`` or
        ``"agnostic"`` steps and debug mode off.  A domain may keep its block
        iterates in its own parametrization there (e.g. label marginals);
        the engine performs the same updates as the Python steps (equal up
        to rounding) and consumes the random stream identically.  When the
        domain also offers a fused ``step`` kernel and the objective declares
        an isotropic Hessian (``CompiledObjective.isotropic``), each block step
        is that one kernel (no direction is materialized).  ``None``
        (default): use it when available; ``True``: raise when it is not.
        ``extra["engine"]`` says which engine ran.
    callback : callable, optional
        Called after each pass with an :class:`~frankwolfe.IterationState`
        (``k`` is the pass); return ``False`` to stop.
    verbose : bool or int
        Print a table (an int sets the period in passes).
    progress : bool
        Show a tqdm progress bar over passes.

    Returns
    -------
    Result
        ``x``, ``fun``, ``gap`` (certified), ``nit`` (passes) and counters.
        ``extra`` holds ``x_last``, ``x_average`` (with averaging),
        ``block_iterates`` (list of block points), ``block_gaps`` (latest
        estimates), ``n_block_steps``, ``effective_passes`` (oracle calls /
        n), ``cache_hits``, ``cache_misses``, ``active_set_size``.  The
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
    if not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective, got {type(objective).__name__}")
    if not isinstance(domain, ProductDomain):
        raise TypeError(
            f"domain must be a ProductDomain (blocks with their own oracles), got "
            f"{type(domain).__name__}; wrap a single domain as ProductDomain([lmo])"
        )
    sampling = _check_choice("sampling", sampling, _SAMPLINGS)
    step_type = _check_choice("step_type", step_type, _STEP_TYPES)
    averaging = _check_choice("averaging", averaging, _AVERAGING)
    certify = _check_choice("certify", certify, ("last", "average"))
    if certify == "average" and averaging is None:
        raise ValueError("certify='average' needs averaging ('weighted', 'uniform' or 'tail')")
    max_passes = int(max_passes)
    if max_passes < 0:
        raise ValueError(f"max_passes must be a non-negative integer, got {max_passes!r}")
    gap_every = _positive_int("gap_every", gap_every)
    cache_size = _positive_int("cache_size", cache_size)
    if not (cache_factor >= 0 and cache_nu >= 0):
        raise ValueError(
            f"cache_factor and cache_nu must be >= 0, got {cache_factor!r}, {cache_nu!r}"
        )
    if not (np.isfinite(gap_degree) and gap_degree >= 0):
        raise ValueError(f"gap_degree must be a finite number >= 0, got {gap_degree!r}")
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    name = f"bcfw[{sampling},{step_type}{',cache' if cache else ''}]"
    monitor = Monitor(name, tol=tol, max_iter=max_passes, time_limit=time_limit,
                      callback=callback, verbose=verbose, progress=progress)
    rule = _Rule(step_size, objective, domain.n_blocks, step_type)
    run = _BCFW(objective, domain, x0, sampling=sampling, step_type=step_type, rule=rule,
                cache=cache, cache_size=cache_size, cache_factor=cache_factor,
                cache_nu=cache_nu, gap_degree=gap_degree, averaging=averaging, rng=rng,
                compiled=compiled)
    n = run.n
    if compiled and run.reason is not None:
        raise ValueError(f"compiled=True but the compiled pass is not available: {run.reason}")
    use_compiled = run.kern is not None

    def certified_point() -> np.ndarray:
        if certify == "average":
            return run.avg.value(run.x, run.k)
        return run.x

    def certificate() -> tuple[float, float]:
        return run.gap_pass(certified_point(), refresh=(certify == "last"))

    def row(p: int, fx: float, gap: float, force: bool = False) -> None:
        calls = run.hits + run.misses
        monitor.record(p, fx, gap, run.last_gamma, force=force,
                       effective_passes=run.n_oracle / n, oracle_calls=run.n_oracle,
                       gap_estimate=float(run.est.sum()),
                       cache_hit_rate=(run.hits / calls) if calls else np.nan)

    p = 0  # passes done
    # no certificate before the first pass: it would cost a pass and would
    # replace the "unvisited" block-gap estimates that gap sampling sweeps first
    fx, gap = float(objective.value(certified_point())), np.inf
    certified = False
    status: Status | None = None
    while True:
        if not (np.isfinite(fx) and (np.isfinite(gap) or not certified)):
            status = Status.ERROR
            break
        row(p, fx, gap if certified else np.nan)
        state = monitor.state(p, certified_point(), fx, gap if certified else np.nan, None,
                              run.last_gamma, n_block_steps=run.k, oracle_calls=run.n_oracle)
        status = monitor.stop_reason(p, gap if certified else np.inf, state)
        if status is not None:
            break
        if averaging == "tail" and p + 1 >= run.tail_next:
            run.avg.restart(run.x, run.k)
            run.tail_next *= 2
        order = run.pass_order()
        sampler = run.sampler
        # gap sampling: one uniform number per step, drawn per pass (as the compiled pass)
        unif = rng.random(n) if (order is None and not use_compiled) else None
        for t in (range(0) if use_compiled else range(n)):
            run.step(int(order[t]) if order is not None else sampler.draw_u(unif[t]))
            if (t + 1) % _TIME_CHECK_EVERY == 0 and monitor.out_of_time():
                break
        df = run.compiled_pass(order) if use_compiled else np.nan
        p += 1
        if run.cache:
            run.cache_threshold_fallback()
        heuristic = float(run.est.sum()) <= monitor.tol  # cheap sign of convergence
        if p % gap_every == 0 or heuristic:
            fx, gap = certificate()
            certified = True
        else:
            # the compiled pass reports the exact change of f: no O(dim) evaluation
            fx = fx + df if use_compiled else float(objective.value(certified_point()))
            certified = False

    if status == Status.ERROR:
        message = f"the objective or the oracle returned a non-finite value at pass {p}"
    else:
        message = None
        if not certified:  # stopped between certificates: certify the returned point
            fx, gap = certificate()
        row(p, fx, gap, force=True)
    x_last = run.x.copy()
    if run.Z is not None:
        block_iterates = [run.Z[run.off[i]:run.off[i + 1]].reshape(run.shapes[i]).copy()
                          for i in range(n)]
    else:  # the domain owns the block iterates (its own parametrization)
        points = run.kern[0].block_points
        block_iterates = points() if points is not None else None
    extra: dict[str, Any] = {
        "x_last": x_last,
        "block_iterates": block_iterates,
        "engine": "compiled" if use_compiled else "python",
        "block_gaps": run.est.copy(),
        "n_block_steps": run.k,
        "effective_passes": run.n_oracle / n,
        "cache_hits": run.hits,
        "cache_misses": run.misses,
        "n_drop_steps": run.n_drop,
    }
    if run.store is not None:
        extra["active_set_size"] = run.store.total_active()
    if averaging:
        extra["x_average"] = run.avg.value(run.x, run.k)
    x_ret = extra["x_average"] if certify == "average" else x_last
    return monitor.finish(x=x_ret.copy(), fun=fx, gap=gap, status=status, nit=p,
                          n_oracle_calls=run.n_oracle, n_gradient_calls=run.k,
                          n_function_calls=p, message=message, extra=extra)

"""The Python block step and the serial Python pass.

One block step costs O(|idx_i|) plus the block oracle: the block gradient
comes from ``objective.partial_gradient(x, idx_i)``, the line search from the
step rule called on a :class:`~..block_steps.BlockView` of the iterate, and
the update touches ``x[idx_i]`` only.  Away / pairwise steps and the gapBCFW
oracle cache keep the blocks' atoms in the state's store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from ...atoms import Atom
from ...lmo.product import check_block_gaps
from ...monitor import INTERRUPTS, ClockReads
from ...step_size import StepSize
from ...step_size.base import checked_step
from ..block_orders import checked_pick
from ..block_steps import AwayStep, BlockDirection, BlockStep, BlockView, FWStep, PairwiseStep
from .passes import (
    Budget,
    Pass,
    batch_values,
    block_gradient,
    check_block_gradient,
    full_gradient,
    probe_values,
    value_and_full_gradient,
)
from .state import BlockState, block_vector

__all__ = ["PythonSteps", "PythonPass"]

_TIME_CHECK_EVERY = 256  # block steps between clock reads inside a pass, at most
_TIME_CHECK_FIRST = 1  # ... before the first one (a slow step is one step past the budget)
_TIME_CHECK_SECONDS = 0.01  # ... aiming at this many seconds between them
_NO_POS = np.zeros(0, dtype=np.int64)  # _block_terms' <g, z> alone
_NO_VAL = np.zeros(0)


@njit(cache=True, nogil=True)
def _block_terms(g, ix, z, pos, val, with_z):  # pragma: no cover - compiled
    """``(<g[ix], z>, <g[ix[pos]], val>)``: a block's certificate terms for a sparse atom
    ``(pos, val)`` over the block's coordinates ``ix``, without gathering ``g[ix]`` (the
    first term only ``with_z``)."""
    gz = 0.0
    if with_z:
        for j in range(ix.size):
            gz += g[ix[j]] * z[j]
    sc = 0.0
    for j in range(pos.size):
        sc += g[ix[pos[j]]] * val[j]
    return gz, sc


@njit(cache=True, nogil=True)
def _seq_dot(a, b):  # pragma: no cover - compiled
    """``<a, b>`` summed in index order (the order of the compiled kernels' sums)."""
    s = 0.0
    for j in range(a.size):
        s += a[j] * b[j]
    return s


@njit(cache=True, nogil=True)
def _active_score(w, scores):  # pragma: no cover - compiled
    """``<g, z> = sum_r w_r <g, a_r>`` over the active rows, in row order."""
    s = 0.0
    for r in range(w.size):
        if w[r] > 0.0:
            s += w[r] * scores[r]
    return s


class PythonSteps:
    """The Python block steps and certificates of a run's state."""

    def __init__(self, state: BlockState, step: BlockStep, rule: StepSize, *, cache: bool,
                 cache_factor: float, cache_nu: float) -> None:
        if state.Z is None:
            raise ValueError("the Python block steps need the Python start (BlockState.start)")
        self.state = state
        self.blocks = b = state.blocks()
        # the blocks' arrays, one attribute away from the step
        self.Z, self.idx, self.sel, self.off = state.Z, b.idx, b.sel, b.off
        self.lmos, self.shapes, self.store = b.lmos, b.shapes, b.store
        # both are called duck-typed: the block step on a SparseRows table, the rule on a
        # BlockView (block_steps and step_size type those arguments as arrays / Tracker)
        self.block_step: Any = step
        self.rule: Any = rule
        self.cache = cache
        self.cache_factor = float(cache_factor)
        self.cache_nu = float(cache_nu)
        self.view = BlockView(state.f, state.x)
        self.direction = BlockDirection()
        # FWStep without active sets: its direction is d_fw (no call per step)
        self._plain_fw = not (cache or step.uses_active_set) and \
            type(step).direction is FWStep.direction
        # blocks of sparse atoms sum in the order of the compiled kernels where the step is
        # theirs and the domain has them (traffic's origins: the two engines then take the
        # same steps to the last bit); elsewhere the old sums, which a dense and a sparse
        # atom table share (the active set's <g, z> made a generic away run on sparse
        # tables stall at gap 0.9 where the dense one converged in 40 passes)
        dom = state.dom
        self._seq = bool(step.matches_compiled_pairwise) and "pairwise" in getattr(
            dom, "compiled_features", frozenset())
        # the table keeps dropped atoms (weight 0: the oracle cache, and rows a later
        # vertex reuses); the built-in steps skip them themselves, any other step sees
        # only the live rows (a naive argmax over all rows picked a dead one: gamma_max
        # = 0, and the block stalled for good)
        self._own_rows = type(step).direction in (AwayStep.direction, PairwiseStep.direction)

    def _live_direction(self, z: np.ndarray, g: np.ndarray, d_fw: np.ndarray, gap: float,
                        A: Any, W: np.ndarray) -> tuple[str, int, np.ndarray, float]:
        """The user block step's ``direction`` on the rows of positive weight; its
        away row mapped back to the table's row."""
        live = np.flatnonzero(W > 0.0)
        every = live.size == W.size
        kind, row, d, gmax = self.block_step.direction(
            z, g, d_fw, gap, A if every else A[live], W if every else W[live])
        name = type(self.block_step).__name__
        if kind == "fw":
            return kind, row, d, gmax
        if kind not in ("away", "pairwise"):
            raise ValueError(f"{name}.direction: the step kind must be 'fw', 'away' or "
                             f"'pairwise', got {kind!r}")
        # a negative row would index from the end: another atom than the step meant
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)) \
                or not 0 <= row < live.size:
            raise ValueError(f"{name}.direction: the away row of a {kind!r} step must index "
                             f"the {live.size} rows it was handed, got {row!r}")
        return kind, int(row) if every else int(live[row]), d, gmax

    def step(self, i: int, atom: Atom | None = None) -> None:
        """Block step ``i``; ``atom``: its oracle's answer when already asked (a mini-batch
        round asks at the round's point)."""
        st = self.state
        f, x, store = st.f, st.x, self.store
        ix, sel = self.idx[i], self.sel[i]
        z = self.Z[self.off[i]:self.off[i + 1]]
        g = block_gradient(f, x, ix)
        check_block_gradient(g, i)

        # a block of sparse atoms sums <g, z> and the scores over its atoms, in the order
        # of the compiled kernels (the compiled steps then take the same steps to the
        # last bit); a dense block sums with BLAS
        seq = False
        scores: np.ndarray | None = None
        gz = 0.0
        if self._seq and store is not None and store.sparse[i] and store.count[i] > 0:
            seq = True
            A, W = store.rows(i)
            scores = np.asarray(A @ g)
            gz = float(_active_score(W, scores))

        # Frank-Wolfe atom: from the cache when its gap is large enough, else the oracle
        s_row = -1
        if self.cache and store is not None and store.count[i]:
            A, _ = store.rows(i)
            if scores is None:
                scores = A @ g
                gz = float(g @ z)
            r = int(np.argmin(scores))
            # a zero factor drops its term (0 * inf would be NaN while est[i] is unknown)
            local = self.cache_factor * st.est[i] if self.cache_factor else 0.0
            if gz - float(scores[r]) >= max(local, self.cache_nu * st.G / st.n):
                st.hits += 1
                s_row = r
                d_fw = A[r] - z
        if s_row < 0:
            if atom is None:
                shape = self.shapes[i]
                atom = self.lmos[i](g if len(shape) == 1 else g.reshape(shape))
            st.n_oracle += 1
            if self.cache:
                st.misses += 1
            d_fw = -z
            if atom.is_sparse:
                d_fw[atom.indices] += atom.values
            else:
                d_fw += atom.to_dense().reshape(-1)
        if seq and s_row >= 0:
            assert scores is not None  # seq scored the rows
            gap_i = gz - float(scores[s_row])
        elif seq and atom is not None and atom.is_sparse:
            gap_i = gz - float(_block_terms(g, ix, z, atom.indices, atom.values, False)[1])
        else:
            gap_i = -float(g @ d_fw)  # <g, z - s>
        gi = gap_i if gap_i > 0.0 else 0.0
        st.est[i] = gi
        if st.order_update is not None:
            st.order_update(i, gi)

        if self._plain_fw:
            kind, a_row, d, gmax = "fw", -1, d_fw, 1.0
        elif store is None:
            kind, a_row, d, gmax = self.block_step.direction(z, g, d_fw, gap_i, None, None)
        else:
            A, W = store.rows(i)
            if self._own_rows:
                kind, a_row, d, gmax = self.block_step.direction(z, g, d_fw, gap_i, A, W)
            else:
                kind, a_row, d, gmax = self._live_direction(z, g, d_fw, gap_i, A, W)
            if s_row < 0:  # a fresh oracle answer joins the block's table
                assert atom is not None  # the oracle answered above
                s_row = store.add(i, atom.key, block_vector(atom, z.size), 0.0, st.k)
            else:
                store.stamp(i, s_row, st.k)
            if kind == "pairwise" and seq:
                # s - a from the two stored rows, not d_fw + (z - a): exact where the
                # atoms agree (the rounding of z would move x there), as the compiled
                # pairwise steps; no step when the away atom is the vertex
                A, _ = store.rows(i)
                d = np.asarray(A[s_row]) - np.asarray(A[a_row]) if s_row != a_row else \
                    np.zeros(z.size)
        slope = -gap_i if d is d_fw else float(_seq_dot(g, d) if seq else g @ d)
        gamma = 0.0
        if slope < 0.0:
            self.view.at(ix, sel, g)
            self.direction.d = d
            gamma = float(self.rule(st.k / st.n, self.view, self.direction, slope, gmax))
            gamma = checked_step(self.rule, gamma, gmax, st.k)
        st.last_gamma = gamma
        if gamma > 0.0:
            if st.avg is not None:
                st.avg.touch(x, sel, st.k)
            if store is not None and store.move(i, kind, s_row, a_row, gamma, gmax):
                st.n_drop += 1
            d *= gamma
            z += d
            x[sel] += d
        st.k += 1

    def joint(self, batch: Sequence[int], atoms: Sequence[Atom]) -> None:
        """One step along the summed Frank-Wolfe directions of a round's blocks, its
        oracle answers ``atoms`` (Wang et al.'s mini-batch update): ``z_i += gamma (s_i -
        z_i)`` for every block of ``batch`` with one ``gamma``, the step rule's along ``D
        = sum_i A_i (s_i - z_i)`` from the current iterate (FW block steps, no cache).
        The round's block steps count ``len(batch)`` steps; the iterate changes at the
        last of them, which is what the average records.  A block drawn twice in a round
        (uniform sampling draws with replacement) moves once: its two answers are one
        oracle's at one point, and two moves of ``gamma`` could leave its domain."""
        st = self.state
        f, x = st.f, st.x
        m = len(batch)
        first: dict[int, Atom] = {}  # each block's first answer, in the round's order
        for i, atom in zip(batch, atoms):
            first.setdefault(i, atom)
        blocks = list(first)
        ixs = [self.idx[i] for i in blocks]
        dirs = []
        for i, atom in first.items():
            d = -self.Z[self.off[i]:self.off[i + 1]]
            if atom.is_sparse:
                d[atom.indices] += atom.values
            else:
                d += atom.to_dense().reshape(-1)
            dirs.append(d)
        # the blocks' coordinates as one sorted set (blocks of a Minkowski sum share some)
        cols = np.concatenate(ixs) if len(blocks) > 1 else ixs[0]
        if cols.size * 8 >= x.size:  # blocks that cover much of x: marks, not a sort
            mark = np.zeros(x.size, dtype=bool)
            mark[cols] = True
            union = np.flatnonzero(mark)
            lut = np.empty(x.size, dtype=np.int64)
            lut[union] = np.arange(union.size)
            pos = lut[cols]
        else:  # a few coordinates of a large x: O(their number), not O(dim)
            union, pos = np.unique(cols, return_inverse=True)
        D: np.ndarray = np.bincount(pos, minlength=union.size,
                                    weights=np.concatenate(dirs) if len(blocks) > 1 else dirs[0])
        g = block_gradient(f, x, union)
        check_block_gradient(g, blocks[0])
        # each block's gap at this point: its estimate for the orders that read them
        at = 0
        for i, d in zip(blocks, dirs):
            gi = -float(g[pos[at:at + d.size]] @ d)
            at += d.size
            st.est[i] = gi if gi > 0.0 else 0.0
            if st.order_update is not None:
                st.order_update(i, st.est[i])
        st.n_oracle += m
        slope = float(g @ D)
        gamma = 0.0
        if slope < 0.0:
            self.view.at(union, union, g)
            self.direction.d = D
            gamma = float(self.rule(st.k / st.n, self.view, self.direction, slope, 1.0))
            gamma = checked_step(self.rule, gamma, 1.0, st.k)
        st.last_gamma = gamma
        if gamma > 0.0:
            if st.avg is not None:  # x_k .. x_{k+m-1} are this point, x_{k+m} the next
                st.avg.touch(x, union, st.k + m - 1)
            x[union] += gamma * D
            for i, d in zip(blocks, dirs):
                self.Z[self.off[i]:self.off[i + 1]] += gamma * d
        st.k += m

    def certificate(self, x: np.ndarray, refresh: bool,
                    ask: Callable[[np.ndarray], Sequence[Atom]] | None = None, *,
                    values: Callable[[np.ndarray], np.ndarray] | None = None,
                    keep: bool = True) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` with one oracle call per block (``ask(g)``: all their
        answers at the gradient ``g``, when another party asks the oracles; ``values(g)``:
        only their values ``<g_i, s_i>``, when no answer is to be kept).  With
        ``refresh`` (``x`` is the last iterate) the block-gap estimates are replaced by
        the exact block gaps and, with ``keep``, the answers join the cache."""
        st, b, Z = self.state, self.blocks, self.Z
        fx, g = value_and_full_gradient(st.f, x)
        total = float(g @ x)
        gaps = np.empty(st.n)
        scores = np.empty(st.n)
        dots = np.empty(st.n)  # <g_i, z_i>, with refresh
        vals = None if values is None else np.asarray(values(g), dtype=float)
        atoms = None if ask is None or vals is not None else ask(g)
        store = b.store if self.cache and keep and vals is None else None
        kept = b.store  # blocks of sparse atoms: the gaps summed as in the steps
        seq = self._seq and refresh and kept is not None and vals is None
        for i in range(st.n):
            z = Z[b.off[i]:b.off[i + 1]]
            if vals is not None:
                sc = float(vals[i])
                gz = _block_terms(g, b.idx[i], z, _NO_POS, _NO_VAL, True)[0] if refresh \
                    else 0.0
                st.n_oracle += 1
                total -= sc
                scores[i] = sc
                dots[i] = gz
                gaps[i] = gz - sc
                continue
            if atoms is not None and atoms[i].is_sparse:
                # the batch oracle's sparse answers: one compiled call, no gathered copy of
                # g per block (with many large blocks the numpy gathers and BLAS dots cost
                # far more than the compiled call)
                # (benchmarks/README.md, "Measurements behind code choices")
                atom = atoms[i]
                gz, sc = _block_terms(g, b.idx[i], z, atom.indices, atom.values, refresh)
            else:
                gi = g[b.idx[i]]
                atom = b.lmos[i](gi.reshape(b.shapes[i])) if atoms is None else atoms[i]
                sc = atom.dot(gi)
                gz = float(gi @ z) if refresh else 0.0
            st.n_oracle += 1
            if seq:
                assert kept is not None  # for the type checker: seq needs it
                seq = bool(kept.sparse[i]) and kept.count[i] > 0 and atom.is_sparse
                if seq:
                    A, W = kept.rows(i)
                    gz = float(_active_score(W, A @ g))
                    sc = float(_block_terms(g, b.idx[i], z, atom.indices, atom.values,
                                            False)[1])
            total -= sc
            scores[i] = sc
            if refresh:
                dots[i] = gz
                gaps[i] = gz - sc
                if store is not None:
                    row = store.keys[i].get(atom.key)
                    if row is not None:  # cached already: no dense vector to build
                        store.stamp(i, row, st.k)
                    elif atom.is_sparse:
                        store.add_sparse(i, atom.key, atom.indices, atom.values, 0.0, st.k)
                    else:
                        store.add(i, atom.key, block_vector(atom, int(b.sizes[i])), 0.0,
                                  st.k)
        # every block's gap >= 0 up to rounding: the sum hides a block oracle that does not
        # minimize behind the other blocks' gaps (a Minkowski sum's average, whose block
        # parts are not kept, is not checked)
        if st.exact and not refresh and st.dom.disjoint:
            dots = st.dom.block_dots(g, x)
        if st.exact and (refresh or st.dom.disjoint):
            check_block_gaps(st.dom, dots, scores, float(fx), st.note_value(float(fx)),
                             f"the certificate after {st.k} block steps")
        if refresh:
            st.est[:] = np.maximum(gaps, 0.0)
            st.order.refresh()
            # G, the cache's threshold: with every block's gap summed as the compiled
            # certificate sums it, the same number to the last bit
            st.G = max(float(_seq_dot(gaps, np.ones(st.n))) if seq else total, 0.0)
            if seq:  # ... and the certified gap as the compiled certificate computes it
                total = float(g @ x) - float(_seq_dot(scores, np.ones(st.n)))
        return float(fx), total


class PythonPass(Pass):
    """Serial Python block steps (clock read every 256 steps under a time limit)."""

    name = "python"
    estimates_certificate = True

    def __init__(self, steps: PythonSteps) -> None:
        self.steps = steps
        self._probed: float | None = None

    def _probe(self) -> float:
        """Seconds of a certificate, estimated before one is timed: a gradient and a few
        block oracles (as the certificate asks them) scaled to ``n`` blocks.  The pass's
        own rate would say little: its steps may cost far more than an oracle call
        (cache and active-set bookkeeping) or far less (cache hits)."""
        if self._probed is None:
            st, b = self.steps.state, self.steps.blocks
            probed = probe_values(st)
            if probed is not None:  # the closing certificate asks for values alone
                seconds, which, g = probed
                tic = time.perf_counter()
                for i in which:
                    z = self.steps.Z[b.off[i]:b.off[i + 1]]
                    _block_terms(g, b.idx[i], z, _NO_POS, _NO_VAL, True)
                self._probed = seconds + (time.perf_counter() - tic) * st.n / len(which)
                return self._probed
            tic = time.perf_counter()
            g = full_gradient(st.f, st.x)
            batch = st.batch_oracle()
            which = list(range(min(8, st.n)))
            mid = time.perf_counter()
            atoms = batch(which, g) if batch is not None else [None] * len(which)
            for i, atom in zip(which, atoms):  # the certificate's work per block
                z = self.steps.Z[b.off[i]:b.off[i + 1]]
                if atom is not None and atom.is_sparse:
                    _block_terms(g, b.idx[i], z, atom.indices, atom.values, True)
                else:
                    gi = g[b.idx[i]]
                    if atom is None:
                        atom = b.lmos[i](gi.reshape(b.shapes[i]))
                    atom.dot(gi)
                    float(gi @ z)
            end = time.perf_counter()
            self._probed = (mid - tic) + (end - mid) * st.n / len(which)
        return self._probed

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st, step = self.steps.state, self.steps.step
        if budget.limited and budget.reserve is None:
            budget.reserve = self._probe()
        if order is None:
            # one uniform number per step, drawn per pass (as the compiled pass)
            unif = st.rng.random(st.n)
            picks: Any = (checked_pick(st.order, st.order.next(float(u)), st.n)
                          for u in unif)
        else:
            picks = order
        limited = budget.limited
        # clock reads about every _TIME_CHECK_SECONDS: with slow steps, a fixed count of
        # steps between reads ran well past the budget
        # (benchmarks/README.md, "Measurements behind code choices")
        reads = ClockReads(_TIME_CHECK_FIRST, _TIME_CHECK_EVERY, _TIME_CHECK_SECONDS)
        for t, i in enumerate(picks):
            step(int(i))
            if limited and reads.due(t + 1):
                if budget.spent(t + 1):
                    break
                reads.read(t + 1)
            if INTERRUPTS.hits:  # Ctrl-C: the driver stops after this block step
                break
        return 0.0

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        # the domain's batch oracle, where it has one, answers all n blocks in one call
        # (for the SSVM chains much faster than the blocks one by one: the closing
        # certificate of a timed run is then what its time budget planned); the closing
        # one keeps no answer (the run ends), so its values alone do where the batch
        # oracle gives them, in a fraction of the time
        # (benchmarks/README.md, "Measurements behind code choices")
        keep = not closing
        batch = self.steps.state.batch_oracle()
        if batch is None:
            return self.steps.certificate(x, refresh, keep=keep)
        which = list(range(self.steps.state.n))
        values = batch_values(self.steps.state)
        if values is not None and not (refresh and keep and self.steps.cache):
            return self.steps.certificate(x, refresh, values=lambda g: values(which, g))
        return self.steps.certificate(x, refresh, lambda g: batch(which, g), keep=keep)


"""Joint rounds over blocks that live on the workers (resident blocks).

Mini-batch rounds in this process hold every block's iterate, so the client's memory
grows with the number of blocks.  With resident blocks (a domain whose
``resident_blocks()`` gives pieces cut by block range, on an executor with
:meth:`~frankwolfe.DaskExecutor.resident`) each worker keeps its blocks' iterates, and
this process keeps only ``x``, its gradient, the Hessian's diagonal and one vector per
shard.  A round (``round_step="joint"``, Wang et al.'s mini-batch update):

1. every shard owning blocks of the round gets the point (its change since the
   version it holds) and returns the sum ``D_s`` of its blocks' Frank-Wolfe directions
   ``A_i (s_i - z_i)`` at their oracle answers, as coordinates and values;
2. the core sums ``D = sum_s D_s`` and takes the step rule's ``gamma`` along ``D``, as
   the compiled driver's joint rounds do in process, then moves ``x`` and ``g``;
3. the shards apply ``gamma`` to their blocks of the round (``z_i += gamma (s_i -
   z_i)``) when the next call reaches them: every call carries the steps of the rounds
   some shard has not applied, by round number (a shard may sit out rounds; a call
   sent again after a fault finds its step applied).

Certificates are the shards' sums of block gaps and vertex scores at one point; the
certificates of the last iterate also compare ``x`` with the sum of the shards' own
block iterates (``Result.extra["resident_drift"]``, the latest: rounding, unless a
fault was mishandled).  A
shard lost with its worker is rebuilt at its initial blocks: its summed contribution
to ``x``, kept here per shard, is taken out, its initial one put in, and the round is
asked again at the new point.  The block-gap estimates keep the last certificate's
(orders drawing whole passes only, as compiled joint rounds).

A piece's loops over its blocks (the sum of step 1, the commits of step 3, the
certificate's sums) are the core's too: :func:`frankwolfe.compiled.resident_kernels`
compiles them over the domain's own kernels, the pass driver's joint round cut at the
step size.

**Local rounds** (``round_step="local"``: CoCoA's pattern of local work between
communications, Jaggi, Smith, Takáč, Terhorst, Krishnan, Hofmann and Jordan, NIPS 2014,
with BCFW as the local solver and a line search to combine): in step 1 each shard
takes serial BCFW steps on its blocks of the round, one after the other, at its own
copy of the point that its steps move (the core's compiled pass driver over the domain's
kernels, the step rule's step sizes), and returns the sum ``D_s`` of its moves
``sum_i A_i (z_i' - z_i)``.  Steps 2 and 3 are those of a joint round: one step size
``gamma`` along ``D = sum_s D_s`` (``gamma = 1`` would add the shards' moves, each
computed without the others'), and each shard's blocks go to ``z_i + gamma (z_i' -
z_i)``, a convex combination of two points of the block.  So f falls at every round
(the line search is exact along ``D``), a worker talks to the client once per round
whatever its number of blocks, and each worker's steps read its own moves at once.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np
from numba import njit

from ...compiled import CERTIFY_REFRESH, PASS, compiled_driver, fused_driver, order_picker
from ...compiled.average import NO_AVERAGE
from ...compiled.pass_state import NO_EXTRAS, PassData, PassVectors, StepScratch
from ...compiled.shares import fold_share_atomic
from ...compiled.touched import Delta
from ...errors import ExecutorError
from ...objectives.base import checked_value
from ...parallel.shared_arrays import SharedSpec, attach
from ...step_size import ExactStep, StepSize
from .passes import Budget, Pass, full_gradient, value_and_full_gradient
from .rounds import Schedule, _stop
from .state import BlockState

__all__ = ["LocalSteps", "ResidentRounds", "ResidentShard"]

_TOKENS = itertools.count(1)


# the client's part of a round in compiled sweeps over the round's coordinates (numpy's
# fancy indexing, a call per array and shard, and a sort of the listed coordinates took
# a large share of a pass) (benchmarks/README.md, "Measurements behind code choices")
@njit(cache=True, nogil=True)
def _gather(acc, mark, coords, vals):  # pragma: no cover - compiled
    """``acc += `` a shard's direction (each coordinate listed once), its support marked."""
    for a in range(coords.size):
        p = coords[a]
        mark[p] = True
        acc[p] += vals[a]


@njit(cache=True, nogil=True)
def _apply(acc, mark, union, x, g, h, gamma):  # pragma: no cover - compiled
    """``x += gamma D``, ``g += gamma h D`` (as the compiled driver's joint step), and
    the scratch cleared."""
    for a in range(union.size):
        p = union[a]
        if gamma > 0.0:
            x[p] += gamma * acc[p]
            g[p] += gamma * h[p] * acc[p]
        acc[p] = 0.0
        mark[p] = False


@njit(cache=True, nogil=True)
def _add_scaled(row, coords, vals, gamma):  # pragma: no cover - compiled
    for a in range(coords.size):
        row[coords[a]] += gamma * vals[a]


class LocalSteps:
    """A shard's local pass (``round_step="local"``): serial BCFW steps over blocks of
    the shard, in the core's compiled pass driver over the piece's kernels
    (``blocks``, fused), at a copy of the point that the steps move, and the sum of
    their moves of ``x``.  The step sizes are the step rule's, as in a serial pass, on
    the piece's blocks (a step count of ``n_local`` a pass); the blocks are left moved
    (the caller keeps their points from before, to combine).

    Parameters
    ----------
    blocks : CompiledBlocks
        The piece's kernels (its block iterates and scratch), fused.
    okern : CompiledObjective
        The objective's kernels, with ``hessian_diag``.
    rule : StepSize
        The run's step rule (with a compiled form).
    n : int
        The number of blocks of the whole run (the step count ``k`` is the run's).
    n_local : int
        The number of the piece's blocks.
    sigma : float, default 1
        The local model's curvature factor: the steps see ``f`` with its Hessian times
        ``sigma`` along their moves (CoCoA+'s ``sigma'``; the number of shards makes
        their moves safe to add).
    shared : ndarray, optional
        The gradient that the steps of other processes move at the same time (lock-free
        passes on resident blocks, :mod:`.resident_lock_free`): the steps read and move
        it, their adds atomic, instead of a copy of the point.
    """

    def __init__(self, blocks: Any, okern: Any, rule: StepSize, n: int, n_local: int,
                 sigma: float = 1.0, shared: np.ndarray | None = None) -> None:
        if fused_driver(blocks, okern) is None:
            raise ValueError("round_step='local' and 'lock_free' on resident blocks need "
                             "the domain's fused kernels for the objective's Hessian "
                             "diagonal")
        compiled = rule.compiled()
        if compiled is None:
            raise ValueError(f"step_size={rule!r} has no compiled form")
        kernel, self.rparams = compiled
        self.driver = compiled_driver(blocks, okern, kernel, fused=True,
                                      exact=isinstance(rule, ExactStep),
                                      shared=shared is not None)
        self.blocks, self.okern = blocks, okern
        self.n, self.n_local = int(n), int(n_local)
        self.h = okern.hessian_diag * float(sigma)
        self.moved = np.zeros(self.h.size)  # the steps' moves of x, zero between calls
        self.g = np.empty(self.h.size) if shared is None else shared
        self.idx = np.empty(blocks.max_nnz, dtype=np.int64)
        self.val = np.empty(blocks.max_nnz)
        self.est = np.zeros(self.n_local)  # the block gaps the steps see (not reported)
        # the driver's records (.compiled.pass_state): the steps move `moved` from `g`
        self.data = PassData(blocks.state, okern.data, self.rparams, self.n_local)
        self.vectors = PassVectors(self.moved, self.g, self.h)
        self.scratch = StepScratch(self.idx, self.val, blocks.layout)
        #: what the driver returned last: (steps taken, last step size, change of f)
        self.last = (0, np.nan, 0.0)

    def run(self, which: np.ndarray, point: np.ndarray, k: int,
            fold: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Steps on the blocks ``which`` (local numbers, in this order) from the gradient
        ``point`` (what the piece derives from it current; the shared gradient itself
        for lock-free steps), the run's step count ``k``: the sum of their moves of
        ``x`` as ``(coords, values)``; with ``fold`` (the shared ``x``) the moves are
        added to it instead, atomically, and nothing is returned (empty arrays)."""
        moved = self.moved
        self._at(point)
        # the step count in the piece's passes (a rule that counts sees a pass a pass)
        k_local = int(k) * self.n_local // max(self.n, 1)
        k1, gamma, df = self.driver(0, which.size, k_local, PASS, False,
                                    order_picker(which, self.est), self.data, self.vectors,
                                    self.scratch, NO_AVERAGE, NO_EXTRAS)
        self.last = (int(k1) - k_local, float(gamma), float(df))
        if fold is not None:
            fold_share_atomic(fold, moved)
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        coords = np.flatnonzero(moved)
        vals = moved[coords]
        moved[coords] = 0.0
        return coords, vals

    def _at(self, point: np.ndarray) -> None:
        """The driver's gradient at ``point`` (itself when shared) and its record of the
        piece current (the piece may have replaced it)."""
        if point is not self.g:
            self.g[:] = point
        if self.data.dstate is not self.blocks.state:
            self.data = self.data._replace(dstate=self.blocks.state)

    def add(self, coords: np.ndarray, vals: np.ndarray, into: np.ndarray) -> None:
        """``into[coords] += vals`` with atomic adds (other processes add to ``into`` at
        the same time; each coordinate listed once)."""
        self.moved[coords] = vals
        fold_share_atomic(into, self.moved)

    def certify(self, point: np.ndarray) -> tuple[float, float]:
        """Every block's gap at the gradient ``point``, by the driver's certificate (each
        into :attr:`est`, clipped at 0): ``(sum of block gaps, sum of vertex scores)``."""
        self._at(point)
        every = np.arange(self.n_local, dtype=np.int64)
        _, total, scores = self.driver(0, every.size, 0, CERTIFY_REFRESH, False,
                                       order_picker(every, self.est), self.data,
                                       self.vectors, self.scratch, NO_AVERAGE, NO_EXTRAS)
        return float(total), float(scores)


class ResidentShard:
    """A worker's share of resident blocks: the domain's piece (its block iterates and
    kernels) behind the core's calls, ``resident(call, local, point)``:

    * ``("start", h, spec[, shared])``: the piece starts at its initial blocks (``h``:
      the Hessian's diagonal, for its directions; ``spec``: ``None``, or for local
      rounds the arguments of :class:`LocalSteps` but the piece's, ``(okern, rule, n,
      sigma)``; ``shared``: for lock-free passes ``(SharedSpec, okern, rule, n)``, the
      point's arrays in shared memory that the piece maps, its kernels then deriving
      from them in the arrays its ``shared_fields()`` lists); its blocks' sum ``sum_i
      A_i z_i`` as ``(coords, values)``;
    * ``("joint", round, steps)``: the summed direction of blocks ``local`` at their
      oracle answers at ``point``, as ``(coords, values)``, each coordinate once;
    * ``("local", round, steps, k)``: serial BCFW steps on blocks ``local`` (in that
      order) from ``point``, the run's step count ``k`` (:class:`LocalSteps`); the sum
      of their moves, as ``(coords, values)``;
    * ``("gaps", steps, held)``: ``(sum of block gaps, sum of vertex scores)`` at
      ``point``, and with ``held`` the blocks' sum after the steps, ``(gaps, scores,
      coords, values)`` (with shared arrays ``(gaps, scores, block gaps)``, the blocks'
      sum added to the shared array ``held``): one call per shard for a certificate and
      its check;
    * ``("lock_free", k)``: serial BCFW steps on blocks ``local`` (in that order) at the
      shared gradient, moving it as other shards do (:mod:`.resident_lock_free`), the
      blocks moved at once and their moves added to the shared ``x`` at the end;
      ``(steps, last step size, change of f, gaps)``, ``gaps`` the block gaps the
      steps found, one per block of ``local`` (the last of a block asked twice);
    * ``("sync",)``: what the piece derives from the shared gradient, rebuilt whole;
    * ``("attach", shared)``: the shared arrays of ``shared`` (as in the start) mapped
      instead of those of before, the blocks kept (after a fault the client makes new
      ones, so that a worker taken for lost writes only to the old);
    * ``("total",)``: the piece's sum ``sum_i A_i z_i`` as ``(coords, values)``.

    With shared arrays an empty ``point`` stands for the shared gradient (nothing
    travels).

    ``steps`` (round -> step size): the steps the core took that some shard has not
    applied; this shard applies the one of the round its blocks last moved in, once (a
    call sent again after a fault finds nothing to apply; a local round the core never
    applied, one asked again, is undone first).  A shard rebuilt or moved (it pickles
    as its piece, which pickles without its iterates) answers ``"reset"`` until it is
    started again.

    The piece has ``start(h)``, ``follow(point, changed)`` (keep what it derives from
    the point current), ``directions(which, point)``, ``commit(which, gamma)`` (``z_i
    += gamma (s_i - z_i)`` at the answers of the last ``directions``), ``gaps(point)``
    and ``total(size)``; for local rounds also ``size`` (its number of blocks),
    ``compiled_blocks()`` (its kernels, fused), ``keep()`` (remember its block iterates)
    and ``blend(gamma)`` (``z_i <- z_i^kept + gamma (z_i - z_i^kept)`` for all of them).
    """

    def __init__(self, piece: Any) -> None:
        self.piece = piece
        self._started = False
        # (round, blocks, local): the round whose step this shard has not applied yet
        self._pending: tuple[int, np.ndarray, bool] | None = None
        self._spec: tuple | None = None
        self._local: LocalSteps | None = None
        self._lock_free: LocalSteps | None = None  # the steps at the shared gradient
        # the shared arrays: g, x (the steps add their moves), held (the sum of the
        # block iterates, for a certificate's check) and what the piece derives
        self._arrays: dict[str, np.ndarray] = {}

    def __reduce__(self) -> Any:
        return ResidentShard, (self.piece,)

    def follow(self, point: np.ndarray, changed: Any = None) -> None:
        if point.size:  # empty: the shared gradient, which the steps keep derived
            self.piece.follow(point, changed)

    def resident(self, call: tuple, local: np.ndarray, point: np.ndarray) -> Any:
        kind = call[0]
        if kind == "start":
            self.piece.start(call[1])
            self._spec = call[2] if len(call) > 2 else None
            self._lock_free = None
            if len(call) > 3 and call[3] is not None:
                self._lock_free = self._attach(*call[3])
            point = self._point(point)
            self._started, self._pending = True, None
            return self.piece.total(point.size)
        if not self._started:
            return "reset"
        point = self._point(point)
        if kind == "lock_free":
            steps = self._lock_free
            if steps is None:
                raise ValueError("ResidentShard: a lock-free pass needs the shared arrays "
                                 "at the start")
            which = np.asarray(local, dtype=np.int64)
            steps.run(which, point, int(call[1]), fold=self._arrays["x"])
            return (*steps.last, steps.est[which])
        if kind == "sync":
            self.piece.follow(point, None)
            return 0  # (None would ask for the whole point)
        if kind == "attach":
            self._lock_free = self._attach(*call[1])
            return 0
        if kind == "total":
            return self.piece.total(point.size)
        if kind == "joint":
            _, rid, steps = call
            self._settle(steps)
            which = np.unique(np.asarray(local, dtype=np.int64))
            out = self.piece.directions(which, point)
            self._pending = (int(rid), which, False)
            return out
        if kind == "local":
            _, rid, steps, k = call
            self._settle(steps)
            which = np.asarray(local, dtype=np.int64)
            out = self._local_steps(which, point, int(k))
            self._pending = (int(rid), which, True)
            return out
        if kind == "gaps":
            _, steps, held = call
            self._settle(steps)
            lf = self._lock_free
            if lf is not None:  # the block gaps too, for the estimates
                gaps = lf.certify(point)
                if not held:
                    return gaps
                # the blocks' sum into the shared array, not through the client
                coords, vals = self.piece.total(point.size)
                lf.add(coords, vals, self._arrays["held"])
                return (*gaps, lf.est.copy())
            gaps = self.piece.gaps(point)
            return (*gaps, *self.piece.total(point.size)) if held else gaps
        raise ValueError(f"ResidentShard: unknown call {kind!r}")

    def _point(self, point: np.ndarray) -> np.ndarray:
        """The point of a call: an empty one stands for the shared gradient."""
        if point.size:
            return point
        if self._lock_free is None:
            raise ValueError("ResidentShard: an empty point stands for the shared gradient, "
                             "and this shard was started without shared arrays")
        return self._lock_free.g

    def _attach(self, spec: SharedSpec, okern: Any, rule: StepSize, n: int) -> LocalSteps:
        """The piece's kernels over the shared arrays, and its steps at the shared
        gradient."""
        self._arrays = arrays = attach(spec)
        self.piece.share({name: arrays[name] for name in self.piece.shared_fields()})
        steps = LocalSteps(self.piece.compiled_blocks(), okern, rule, n, self.piece.size,
                           shared=arrays["g"])
        # the driver compiled (or loaded) now, within the start's deadline, not in the
        # first pass's
        steps.run(np.zeros(0, dtype=np.int64), steps.g, 0)
        return steps

    def _local_steps(self, which: np.ndarray, point: np.ndarray, k: int
                     ) -> tuple[np.ndarray, np.ndarray]:
        if self._local is None:
            if self._spec is None:
                raise ValueError("ResidentShard: a local round needs the objective's kernels "
                                 "and the step rule at the start")
            okern, rule, n, sigma = self._spec
            self._local = LocalSteps(self.piece.compiled_blocks(), okern, rule, n,
                                     self.piece.size, sigma)
        self.piece.keep()
        coords, vals = self._local.run(which, point, k)
        # what the piece derives from the point: back at the point, where the steps
        # moved the gradient (g moves where x does)
        self.piece.follow(point, coords)
        return coords, vals

    def _settle(self, steps: dict[int, float]) -> None:
        pending = self._pending
        if pending is None:
            return
        rid, which, local = pending
        if rid in steps:
            gamma = float(steps[rid])
            if local:
                self.piece.blend(gamma)
            elif gamma > 0.0:
                self.piece.commit(which, gamma)
        elif local:  # the core never took this round (asked again after a fault)
            self.piece.blend(0.0)
        else:
            return
        self._pending = None


class _Shards:
    """The domain's resident blocks, cut by range into :class:`ResidentShard`."""

    def __init__(self, blocks: Any) -> None:
        self.blocks = blocks

    def shard(self, blocks: range) -> ResidentShard:
        return ResidentShard(self.blocks.shard(blocks))


class ResidentRounds(Pass):
    """Joint or local rounds over resident blocks (see the module docstring; ``okern``:
    the objective's kernels, with ``hessian_diag``)."""

    name = "resident"
    exact_df = True
    keeps_sums = True  # each shard's sum of its block iterates, to take out when it is lost

    def __init__(self, state: BlockState, pieces: Any, rule: StepSize, okern: Any,
                 schedule: Schedule) -> None:
        compiled = rule.compiled()
        if compiled is None:
            raise ValueError(f"step_size={rule!r} has no compiled form")
        self.kernel, self.rparams = compiled
        self.state, self.schedule = state, schedule
        ex: Any = schedule.executor  # an executor with resident() (DaskExecutor)
        self.ex = ex
        self.h = np.asarray(okern.hessian_diag, dtype=float)
        self.local = schedule.local
        ex.start([None] * state.n)
        if not ex.use_batch_oracle(_Shards(pieces)):
            raise RuntimeError(f"{ex!r} declined the resident blocks")
        m = int(ex.owner.max()) + 1 if state.n else 0
        self._start = self._start_call(okern, rule, m)
        # each shard's sum_i A_i z_i (lock-free passes find x again from the shards)
        self.sums = np.zeros((m, state.x.size) if self.keeps_sums else (0, 0))
        self._acc = np.zeros(state.x.size)  # a round's summed direction, zero between
        self._mark = np.zeros(state.x.size, dtype=bool)  # and its support
        self._token = next(_TOKENS)
        self._delta: np.ndarray | None = None  # coordinates of g changed since the last call
        self._rounds = itertools.count(1)
        # per shard the round whose step it has not applied yet, and those rounds' steps
        self._unapplied: dict[int, int] = {}
        self._gammas: dict[int, float] = {}
        self.resets = 0
        self.drift = np.nan  # max |x - sum of the shards' block iterates|, latest
        self.g = np.zeros(state.x.size)
        everything = np.arange(state.n, dtype=np.int64)
        for s, _, (coords, vals) in self._call(everything, self._start, fresh=True):
            if self.keeps_sums:
                self.sums[s, coords] += vals
            state.x[coords] += vals
        self.g = full_gradient(state.f, state.x, copy=True)

    def _start_call(self, okern: Any, rule: StepSize, m: int) -> tuple:
        """The call that starts a shard (ResidentShard), for ``m`` shards."""
        # what a shard's local steps run on: they see f's curvature times the number of
        # shards (CoCoA+'s safe sigma' for adding the shards' moves; the line search then
        # shortens their sum less, benchmarks/README.md)
        return ("start", self.h,
                (okern, rule, self.state.n, float(max(m, 1))) if self.local else None)

    def _call(self, which: np.ndarray, call: tuple, fresh: bool = False
              ) -> list[tuple[int, np.ndarray, Any]]:
        """The executor's resident call at the current point, its change since the last
        call's point (all coordinates compared when unknown)."""
        token = next(_TOKENS)
        delta = None if fresh or self._delta is None else \
            Delta(self._token, token, self._delta)
        self._token = token
        self._delta = np.zeros(0, dtype=np.int64)
        return self.ex.resident(which, self.g, call, delta)

    def _restart(self, lost: list[int]) -> None:
        """Shards rebuilt with their initial blocks: their contributions to ``x`` are
        theirs again, and the gradient follows."""
        x = self.state.x
        for s in lost:
            x -= self.sums[s]
            self.sums[s] = 0.0
            self._unapplied.pop(s, None)  # a rebuilt shard has nothing to apply
            blocks = self.ex.shard_blocks(s)
            ((_, _, (coords, vals)),) = self._call(blocks, self._start, fresh=True)
            self.sums[s, coords] += vals
            x[coords] += vals
        self.g = full_gradient(self.state.f, x, copy=True)
        self._delta = None
        self.resets += len(lost)

    def _ask(self, which: np.ndarray, call: tuple) -> list[tuple[int, np.ndarray, Any]]:
        """``call`` on the shards of ``which``, again after restarting any shard found
        rebuilt (its answer ``"reset"``), at most the executor's ``retries + 1``
        times."""
        for _ in range(getattr(self.ex, "retries", 2) + 2):
            answers = self._call(which, call)
            lost = [s for s, _, a in answers if isinstance(a, str) and a == "reset"]
            if not lost:
                return answers
            self._restart(lost)
        raise ExecutorError(f"{self.ex!r}: resident shards were rebuilt in every try of a "
                            "round")

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st = self.state
        if order is None:
            raise ValueError("resident rounds need an order that draws whole passes")
        df = 0.0
        done = 0
        for batch in self.schedule.batches(st, order):
            df += self._round(np.asarray(batch, dtype=np.int64))
            done += len(batch)
            if _stop(budget, done):
                break
        return df

    def _round(self, batch: np.ndarray) -> float:
        st, x, g, h = self.state, self.state.x, self.g, self.h
        rid = next(self._rounds)
        tic = time.perf_counter()
        if self.local:  # each shard's blocks in the order's sequence
            answers = self._ask(batch, ("local", rid, self._steps(), st.k))
        else:  # a block drawn twice moves once
            answers = self._ask(np.unique(batch), ("joint", rid, self._steps()))
        self.schedule.count(tic, False)
        self.schedule.rounds += 1
        parts = [(s, np.asarray(c, dtype=np.int64), np.asarray(v, dtype=float))
                 for s, _, (c, v) in answers]
        # the union in increasing order, read off the marks (O(d) bytes, no sort), and
        # the slope and curvature as numpy's dot products over it
        acc, mark = self._acc, self._mark
        for _, c, v in parts:
            _gather(acc, mark, c, v)
        union = np.flatnonzero(mark)
        D = acc[union]
        slope = float(g[union] @ D)
        curv = float(h[union] @ (D * D))
        gamma = 0.0
        if slope < 0.0:
            gamma = float(self.kernel(self.rparams, st.k / st.n, slope, curv, 1.0))
        m = batch.size
        st.n_oracle += m
        st.last_gamma = gamma
        df = 0.0
        if gamma > 0.0:
            df = gamma * (slope + 0.5 * gamma * curv)
            for s, c, v in parts:
                _add_scaled(self.sums[s], c, v, gamma)
            self._delta = union
        _apply(acc, mark, union, x, g, h, gamma)
        for s, _, _ in parts:  # applied what they had; now this round's blocks
            self._unapplied[s] = rid
        self._gammas = {r: self._gammas.get(r, gamma) for r in set(self._unapplied.values())}
        st.k += m
        return df

    def _held(self, answers: list[tuple[int, np.ndarray, Any]]) -> np.ndarray:
        """The sum of the block iterates the shards hold, from the answers of a
        certificate of the last iterate (the block-gap estimates keep the last
        certificate's here)."""
        held = np.zeros(self.state.x.size)
        for _, _, a in answers:
            held[a[2]] += a[3]
        return held

    def _steps(self) -> dict[int, float]:
        """The step sizes of the rounds some shard has not applied yet (each shard applies
        its own when a call reaches it; a shard may sit out rounds)."""
        return {r: self._gammas[r] for r in set(self._unapplied.values())}

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        st = self.state
        if x is not st.x and not np.array_equal(x, st.x):
            # the blocks the workers hold are those of the last iterate alone
            return checked_value(st.f.value(x), st.f), np.nan
        kept, resets = self.g, self.resets
        fx, self.g = value_and_full_gradient(st.f, x, copy=True)
        self._delta = None  # the certificate's gradient: all coordinates compared
        everything = np.arange(st.n, dtype=np.int64)
        tic = time.perf_counter()
        # with refresh, the shards' sums of their blocks come back in the same call
        answers = self._ask(everything, ("gaps", self._steps(), refresh))
        self.schedule.count(tic, True)
        self._unapplied.clear()
        self._gammas.clear()
        if self.resets != resets:  # shards restarted: x moved, the gaps are at its gradient
            fx = checked_value(st.f.value(st.x), st.f)
        g = self.g
        total = sum(float(a[0]) for _, _, a in answers)
        scores = sum(float(a[1]) for _, _, a in answers)
        st.n_oracle += st.n
        if refresh:
            st.G = max(total, 0.0)
            # x against the shards' own sums of their block iterates
            self.drift = float(np.max(np.abs(st.x - self._held(answers)), initial=0.0))
        elif self.resets == resets:
            self.g, self._delta = kept, None
        return float(fx), float(g @ st.x) - scores

    def info(self) -> dict[str, Any]:
        return self.schedule.info()

    def outputs(self) -> dict[str, Any]:
        out = self.schedule.outputs()
        out["resident_restarts"] = self.resets
        out["resident_drift"] = self.drift
        return out

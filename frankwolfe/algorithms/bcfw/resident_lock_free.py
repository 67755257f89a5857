"""Lock-free passes over resident blocks: the workers of one machine step together on one
gradient in shared memory.

Why: resident joint and local rounds send the point's change to every worker each
round and bring the workers' moves back through the client, and on 16 cores a round
of 8 workers was bound by moving about 40 MB through the client, not by the steps; a
local round's steps also see none of the other workers' (benchmarks/README.md,
``ssvm_local.py``).  Lock-free passes on threads (:mod:`.lock_free`) reached a
certified gap about 4x sooner on 8 threads, but hold every example in one process.
Here each Dask worker holds its examples and block iterates (a resident piece) and
takes whole block steps (oracle, line search, move) on them, all workers at the same
time against one gradient that every worker maps (a file in memory,
:class:`~frankwolfe.parallel.shared_arrays.SharedArrays`), written without locks with
atomic adds: the Hogwild!-style asynchronous parallel BCFW of Wang, Sadhanala, Dai,
Neiswanger, Sra and Xing (ICML 2016) across processes.  Nothing the size of the point
travels in a pass: a worker gets its blocks' order and returns its moves of ``x``.

What is shared, and why the certificates stay honest:

* **Block iterates** stay on the worker that owns them (a contiguous range of blocks
  per shard); only its steps move them, each a Frank-Wolfe step with a step size in
  [0, 1], so every block iterate stays a point of its block whatever the timing.
* **The gradient** ``g`` and what the domain derives from it (the chain SSVM's
  feature-major copy, the arrays its pieces' ``shared_fields()`` list) are in the
  shared files: a step reads the other workers' steps as they land, so its oracle may
  be a few concurrent steps stale; its line search reads the slope at the current
  ``g`` just before the move, as on threads.  The derived arrays are written without
  atomics (a value another worker overwrote with an older one stays until the next
  sync); every shard rebuilds them from ``g`` (``("sync",)``) whenever the client
  writes a fresh gradient, before any certificate reads them.
* **``x``** is shared too: each worker moves a private share during its pass and adds
  it to ``x`` at the end (atomic adds: the workers end at about the same time), so
  nothing the size of the point travels and the client folds nothing.  After a pass
  ``x`` is the aggregate of the workers' block iterates up to rounding
  (``Result.extra["resident_drift"]`` checks it at every certificate that refreshes).
* **Certificates** are computed as for resident rounds: a fresh gradient of ``f`` at
  ``x``, written to the shared file, and every shard's block gaps at it (each block's,
  which become the estimates gap sampling draws from); for the check of ``x``, the
  workers add their sums of block iterates to a shared array rather than send them.

Faults: a worker lost mid-pass takes its blocks' iterates with it (and its share, or
part of it, if it was folding); the other shards' moves of the pass are kept.  The
lost shard is rebuilt at its initial blocks, every shard maps fresh files (a worker
the cluster took for lost but that still runs writes only to the old ones), ``x`` is
summed again from every shard's block iterates (one call; the client keeps no
per-shard sums, whose memory would grow with the workers), and the gradient is
recomputed from ``x``.  A pass is the unit of work: a time limit or
Ctrl-C is seen between passes.

Needs every worker on the client's machine (the files are local; a worker elsewhere
fails with a clear error at the start).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...errors import ExecutorError
from ...parallel.shared_arrays import SharedArrays
from ...step_size import StepSize
from .passes import Budget, full_gradient
from .resident import ResidentRounds, _add_scaled
from .rounds import Schedule
from .state import BlockState

__all__ = ["ResidentLockFree", "shard_draws"]

_SHARED = np.zeros(0)  # the point sent with every call: the shards read the shared one


def shard_draws(est: np.ndarray, degree: float, cuts: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """A pass of gap-sampling draws, each shard's from its own blocks
    ``cuts[s] .. cuts[s + 1] - 1`` and as many as it has: its unvisited blocks first
    (estimate ``+inf``), in index order, then blocks drawn with replacement with
    probability proportional to ``max(g_i, 0) ** degree`` (uniformly where all weigh
    0).  A global draw would give a shard whose blocks have large gaps more steps than
    the others, which then wait for it; per shard, every worker's pass is as long."""
    picks = []
    for s in range(cuts.size - 1):
        lo, hi = int(cuts[s]), int(cuts[s + 1])
        e = est[lo:hi]
        fresh = ~np.isfinite(e)
        first = np.flatnonzero(fresh)
        rest = hi - lo - first.size
        picks.append(lo + first)
        if rest <= 0:
            continue
        w = np.where(fresh, 0.0, np.maximum(e, 0.0)) ** degree
        w[fresh] = 0.0  # (0 ** 0 is 1)
        c = np.cumsum(w)
        if c[-1] > 0.0:
            at = np.searchsorted(c, rng.random(rest) * c[-1], side="right")
            picks.append(lo + np.minimum(at, hi - lo - 1))
        else:
            picks.append(lo + rng.integers(hi - lo, size=rest))
    return np.concatenate(picks) if picks else np.zeros(0, dtype=np.int64)


class ResidentLockFree(ResidentRounds):
    """Lock-free passes on the workers of one machine over resident blocks (module
    docstring); ``okern``: the objective's kernels, with ``hessian_diag``."""

    name = "resident"
    exact_df = False  # the workers' changes of f are not exact: f is taken at the fold
    keeps_sums = False  # x is found again from the shards after a fault

    def __init__(self, state: BlockState, pieces: Any, rule: StepSize, okern: Any,
                 schedule: Schedule) -> None:
        self._pieces = pieces
        self.shared: SharedArrays | None = None
        self.passes = 0
        self.lost = 0  # shards lost in a pass (their steps of that pass dropped)
        self._kernels = (okern, rule)
        super().__init__(state, pieces, rule, okern, schedule)
        self._x[:] = state.x
        state.x = self._x  # the workers add their moves to it

    def _start_call(self, okern: Any, rule: StepSize, m: int) -> tuple:
        return ("start", self.h, None, self._new_arrays())

    def _new_arrays(self) -> tuple:
        """Fresh shared files (those of before closed): the gradient, ``x``, the
        certificates' sum of the block iterates and what the pieces derive from the
        point; what a shard's start or attach call carries to map them."""
        d = self.state.x.size
        if self.shared is not None:
            self.schedule.resources.remove(self.shared)
            self.shared.close()
        self.shared = SharedArrays({"g": ((d,), np.float64), "x": ((d,), np.float64),
                                    "held": ((d,), np.float64),
                                    **self._pieces.shared_fields()})
        self.schedule.resources.append(self.shared)
        arrays = self.shared.arrays
        self._g, self._x, self._sum = arrays["g"], arrays["x"], arrays["held"]
        okern, rule = self._kernels
        return (self.shared.spec(), okern, rule, self.state.n)

    def _every_shard(self) -> np.ndarray:
        """A block of each shard (a call on them reaches every shard once)."""
        return self.ex.shard_cuts()[:-1]

    def _call(self, which: np.ndarray, call: tuple, fresh: bool = False
              ) -> list[tuple[int, np.ndarray, Any]]:
        for _ in range(getattr(self.ex, "retries", 2) + 2):
            if call[0] == "start" or self.g is self._g:
                break
            # a fresh gradient (a certificate's, a restart's): into the shared file, and
            # each piece's feature-major copy rebuilt from it before any reads it
            self._g[:] = self.g
            self.g = self._g
            answers = self.ex.resident(self._every_shard(), _SHARED, ("sync",))
            lost = [s for s, _, a in answers if isinstance(a, str)]
            if lost:  # rebuilt: restarted, with a new gradient to sync
                self._restart(lost)
        else:
            raise ExecutorError(f"{self.ex!r}: resident shards were rebuilt in every try of "
                                "a sync")
        if call[0] == "gaps" and call[2]:
            self._sum[:] = 0.0  # (a try after a fault adds the sums again)
        return self.ex.resident(which, _SHARED, call, None)

    def _restart(self, lost: list[int]) -> None:
        """Shards rebuilt with their initial blocks, and ``x`` summed again from every
        shard's block iterates; the gradient follows.  All shards map fresh files: a
        worker taken for lost that still runs (a false alarm of the cluster's) writes
        only to the files of before."""
        st = self.state
        cuts = self.ex.shard_cuts()
        for _ in range(getattr(self.ex, "retries", 2) + 2):
            self.resets += len(lost)
            self._start = ("start", self.h, None, self._new_arrays())
            for s in lost:
                self.ex.resident(self.ex.shard_blocks(s), _SHARED, self._start, None)
                st.est[cuts[s]:cuts[s + 1]] = np.inf  # unvisited again
            alive = [s for s in range(cuts.size - 1) if s not in lost]
            if alive:
                answers = self.ex.resident(cuts[alive], _SHARED,
                                           ("attach", self._start[3]), None)
                lost = [s for s, _, a in answers if isinstance(a, str)]
                if lost:
                    continue
            answers = self.ex.resident(self._every_shard(), _SHARED, ("total",), None)
            lost = [s for s, _, a in answers if isinstance(a, str)]
            if not lost:
                break
        else:
            raise ExecutorError(f"{self.ex!r}: resident shards were rebuilt in every try of "
                                "a restart")
        st.order.refresh()
        x = st.x = self._x
        for _, _, (coords, vals) in answers:
            _add_scaled(x, np.asarray(coords, dtype=np.int64), np.asarray(vals, dtype=float),
                        1.0)
        self.g = full_gradient(st.f, x, copy=True)

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st = self.state
        sampled = order is None
        if sampled:  # gap sampling: each shard's draws at the current estimates
            tree = st.order.compiled_tree()
            assert tree is not None  # the plan runs stepwise orders compiled only with one
            order = shard_draws(st.est, float(tree[2]), self.ex.shard_cuts(), st.rng)
        order = np.asarray(order, dtype=np.int64)
        tic = time.perf_counter()
        answers = self._call(order, ("lock_free", st.k))
        self.schedule.count(tic, False)
        self.passes += 1
        lost, taken, df = [], 0, 0.0
        for s, pos, answer in answers:
            if isinstance(answer, str):  # "reset": rebuilt after its worker was lost
                lost.append(s)
                continue
            steps, gamma, dfs, gaps = answer
            st.est[order[pos]] = np.maximum(gaps, 0.0)  # as the steps' estimates are
            taken += int(steps)
            df += float(dfs)
            st.last_gamma = float(gamma)
        st.k += taken
        st.n_oracle += taken
        if lost:
            self.lost += len(lost)
            self._restart(lost)
        if sampled:
            st.order.refresh()  # the sum tree from the estimates the steps found
        return df

    def _held(self, answers: list[tuple[int, np.ndarray, Any]]) -> np.ndarray:
        """The sum of the block iterates the workers added to the shared array (zeroed
        for the next certificate); the certificate's exact block gaps become the
        estimates (gap sampling draws from them), as after a serial certificate."""
        cuts, est = self.ex.shard_cuts(), self.state.est
        for s, _, a in answers:
            est[cuts[s]:cuts[s + 1]] = a[2]
        self.state.order.refresh()
        held = self._sum.copy()
        self._sum[:] = 0.0
        return held

    def info(self) -> dict[str, Any]:
        return {"oracle_seconds": self.schedule.oracle_seconds}

    def outputs(self) -> dict[str, Any]:
        out = super().outputs()
        out.update(round_step="lock_free", rounds=self.passes, batch_size=self.state.n,
                   n_shards=int(self.ex.owner.max()) + 1, lost_shards=self.lost)
        return out

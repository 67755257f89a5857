"""Lock-free parallel BCFW: threads take block steps at the same time, each on its own
blocks, against one shared gradient written without locks (Hogwild!, Niu, Recht, Ré and
Wright, NIPS 2011, applied to BCFW: the shared-memory form of the asynchronous parallel
BCFW of Wang, Sadhanala, Dai, Neiswanger, Sra and Xing, ICML 2016).

Why: mini-batch rounds ask a round's oracles in parallel but take its block steps one
after the other on one thread, and on CoNLL-2000 those steps are a large share of a
serial pass, which bounds what any number of threads can gain (benchmarks/README.md,
``ssvm_cores.py`` and "Measurements behind code choices").  Here every thread runs the
compiled pass's whole block step (oracle, line search, move, commit) on its blocks, so
the steps scale with the threads too.

What is shared, and how the certificates stay honest:

* **Block iterates.**  Block ``i`` belongs to thread ``i mod P``: only that thread moves
  it, so every block iterate stays a point of its block (a convex combination of
  vertices), whatever the timing.
* **``x``.**  Each thread moves a private share of ``x``; after the threads the shares
  are folded into ``x`` (:func:`~frankwolfe.compiled.shares.fold_shares`, on the threads
  by coordinate ranges).  ``x`` is then exactly the aggregate of the block iterates, up
  to the order of summation, as after a serial pass.
* **The gradient ``g``** (and what the domain derives from it, e.g. the chain SSVM's
  feature-major copy) is shared, without locks: a step reads the other threads' steps as
  they land, so its oracle and its line search may be a few concurrent steps stale.  Its
  adds are atomic (:func:`~frankwolfe.compiled.atomic.atomic_add`): plain adds lost
  updates wherever all threads write (the chain SSVM's transition and part-of-speech
  weights, which nearly every step moves), and on many threads the steps that read the
  damaged gradient stalled CoNLL-2000 short of the optimum (benchmarks/README.md,
  ``ssvm_cores.py`` and "Measurements behind code choices").  A stale step is still a
  step toward a vertex of its block with a step size in [0, 1], so it stays feasible; it
  may raise f a little, which the next steps undo.  As in a serial pass, ``g`` is kept
  up to date step by step, and recomputed from ``x`` at every certificate.
* **Certificates** are computed at the folded ``x`` with a fresh gradient, each thread
  asking the oracles of its own blocks: the gaps are certified exactly as in a serial
  run.

A pass takes the block order's pass (``pass_order``, or for gap sampling ``n`` draws made
at the pass's start from the estimates of the last steps, unvisited blocks first) and
gives each thread the picks of its blocks, in sequence.  A step rule that counts steps
(``"agnostic"``) sees each thread's count, from the pass's start; the exact line search
counts nothing.  On one thread nothing is shared: the serial pass's driver takes the
steps (serial BCFW's, with ``x`` moved through the share).

Memory: a share of ``x`` per thread (``n_jobs`` vectors of ``x``'s size, mapped as the
threads write them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ...compiled import PASS, order_picker
from ...compiled.shares import fold_shares
from ...compiled.sum_tree import gap_draws
from ...monitor import INTERRUPTS
from ...parallel import Executor, InProcessRounds
from .compiled_pass import CompiledSteps
from .passes import Budget, Pass
from .state import BlockState

__all__ = ["LockFreePass", "threads_of"]

_FIRST_CHUNK = 256  # block steps of a thread's first call of the driver in a pass
_CHUNK_SECONDS = 0.01  # its later calls last about this long: stops are seen that soon


def threads_of(executor: Executor) -> int:
    """The threads a lock-free pass runs on through ``executor`` (its ``n_jobs``)."""
    return max(1, int(getattr(executor, "n_jobs", 1)))


class LockFreePass(Pass):
    """A pass of lock-free block steps on the threads of an in-process executor (module
    docstring); certificates on the same threads."""

    name = "compiled"
    exact_df = False  # the threads' changes of f are not exact: f is taken at the fold

    def __init__(self, state: BlockState, steps: CompiledSteps, executor: Executor) -> None:
        if not isinstance(executor, InProcessRounds):
            raise ValueError(f"round_step='lock_free' runs on threads of this process (n_jobs "
                             f"or a ThreadExecutor), or on the workers of a DaskExecutor "
                             f"for blocks kept on them (a domain with resident_blocks(), "
                             f"e.g. SSVMDual.from_source(..., resident=True)), got "
                             f"executor={executor!r}")
        self.state, self.steps, self.executor = state, steps, executor
        executor.start((), None, None)
        self.n_jobs = P = threads_of(executor)
        x = state.x
        self._shares = np.zeros((P, x.size))
        self._forks = [steps.fork(self._shares[j]) for j in range(P)]
        self._cuts = np.linspace(0, x.size, P + 1).astype(np.int64)
        self._owned = [np.arange(j, state.n, P, dtype=np.int64) for j in range(P)]
        self._stop = [False]  # set by a thread that failed or saw the budget spent
        self.seconds = [0.0, 0.0]  # wall seconds of the passes' threads and of their folds

    def _parallel(self, call: Callable[[int], Any]) -> list[Any]:
        """``call(j)`` for every thread ``j``, on the executor's threads; the first error
        raised after all of them have returned (none is left writing)."""
        errors: list[BaseException] = []

        def shares(which: list[int], _: Any) -> list[Any]:
            out = []
            for j in which:
                try:
                    out.append(call(j))
                except BaseException as e:  # noqa: BLE001 - re-raised below, once all returned
                    errors.append(e)
                    self._stop[0] = True
                    out.append(None)
            return out

        self._stop = [False]
        results = [r for chunk in self.executor.chunks(shares, list(range(self.n_jobs)), None)
                   for r in chunk]
        if errors:
            raise errors[0]
        return results

    def _picks(self, order: np.ndarray | None) -> list[np.ndarray]:
        """Each thread's block steps of the pass, in the order's sequence."""
        st = self.state
        if order is None:  # gap sampling: the pass's draws at the current estimates
            tree = st.order.compiled_tree()
            assert tree is not None  # the plan runs stepwise orders compiled only with one
            order = np.empty(st.n, dtype=np.int64)
            gap_draws(tree[0], tree[1], st.est, tree[3], st.rng.random(st.n), st.n, order)
        owner = order % self.n_jobs
        return [order[owner == j] for j in range(self.n_jobs)]

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st, steps = self.state, self.steps
        picks = self._picks(order)
        g = steps.synced_gradient()
        k0, P = st.k, self.n_jobs
        me = threading.get_ident()
        tic = time.perf_counter()

        def share(j: int) -> tuple[int, float, float]:
            mine, fork = picks[j], self._forks[j]
            picker = order_picker(mine, st.est)
            k, gamma, df, t0 = k0, np.nan, 0.0, 0
            chunk = min(mine.size, _FIRST_CHUNK)
            while t0 < mine.size and not self._stop[0]:
                t1 = min(mine.size, t0 + chunk)
                c0 = time.perf_counter()
                k, gamma, step_df = steps.run_fork(fork, picker, t0, t1, g, k, PASS)
                df += step_df
                t0 = t1
                seconds = max(time.perf_counter() - c0, 1e-9)
                chunk = max(_FIRST_CHUNK, int(chunk / seconds * _CHUNK_SECONDS))
                if threading.get_ident() == me and t0 < mine.size and (INTERRUPTS.hits or (
                        budget.limited and budget.spent(t0 * P, time.perf_counter() - tic))):
                    self._stop[0] = True
            return k - k0, gamma, df

        try:
            done = self._parallel(share)
        finally:
            mid = time.perf_counter()
            self._fold()
            self.seconds[0] += mid - tic
            self.seconds[1] += time.perf_counter() - mid
        taken = sum(int(r[0]) for r in done)
        st.k += taken
        st.n_oracle += taken
        st.last_gamma = float(done[-1][1])
        if order is None:
            st.order.refresh()  # the sum tree from the estimates the steps wrote
        return float(sum(r[2] for r in done))

    def _fold(self) -> None:
        """The threads' shares into ``x``, by coordinate ranges on the threads."""
        x, cuts = self.state.x, self._cuts
        self._parallel(lambda j: fold_shares(x, self._shares, cuts[j], cuts[j + 1]))

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        return self.steps.certificate(x, refresh, sweep=self._sweep)

    def _sweep(self, g: np.ndarray, task: int, est: np.ndarray) -> tuple[float, float]:
        """Every block's oracle at ``g``, each thread asking its own blocks' (their gaps,
        clipped at 0, into ``est`` with ``CERTIFY_REFRESH``)."""
        st, steps = self.state, self.steps

        def share(j: int) -> tuple[int, float, float]:
            mine = self._owned[j]
            if mine.size == 0:  # more threads than blocks (t1 = t0 would ask every block)
                return st.k, 0.0, 0.0
            return steps.run_fork(self._forks[j], order_picker(mine, est), 0, mine.size,
                                  g, st.k, task)

        out = self._parallel(share)
        return float(sum(r[1] for r in out)), float(sum(r[2] for r in out))

    def info(self) -> dict[str, Any]:
        return {"step_seconds": self.seconds[0], "fold_seconds": self.seconds[1]}

    def outputs(self) -> dict[str, Any]:
        return {"round_step": "lock_free", "n_jobs": self.n_jobs,
                "executor": repr(self.executor), **self.info()}

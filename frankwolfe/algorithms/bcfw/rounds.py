"""Mini-batch rounds of block-coordinate Frank-Wolfe (Wang, Sadhanala, Dai, Neiswanger,
Sra, Xing, "Parallel and Distributed Block-Coordinate Frank-Wolfe Algorithms", ICML 2016).

A round takes the next ``tau`` blocks of the block order, asks their oracles
at the same point (all at once, through a :mod:`frankwolfe.parallel`
executor: serial, threads or a Dask cluster), then applies the ``tau`` block
steps one after the other, each with its line search at the current iterate
(the Python block step, handed the oracle's atom).  ``tau = 1`` is serial
BCFW, iterate for iterate: the same random stream, the same steps.

Orders that pick block by block (gap sampling, max-gap) are asked ``tau``
times per round from the round's state; a block picked in the round is held
out of the rest of the round (its estimate set to 0 until its step writes the
new one), so a round does not ask the same block twice at the same point.

Joint rounds (``round_step="joint"``, the update of Wang et al.'s mini-batch
algorithm): the round's blocks move together, ``z_i += gamma (s_i - z_i)`` with one
``gamma`` from the step rule along the summed direction, so the steps of a round cost
one line search, not ``tau`` after one another.  Compiled joint rounds (a domain whose
round kernels offer ``load``, with its fused kernels, and an order drawing whole passes)
sum the round's directions in the driver; the block-gap estimates then keep the last
certificate's.

Certificate passes ask all ``n`` oracles at one point through the same
executor.  The rounds see the run's state and the block step they are
handed, never the engine.

Compiled rounds (a domain whose compiled kernels offer
:class:`~frankwolfe.compiled.RoundKernels`) are two calls: the executor has the
domain store the ``tau`` vertices at the round's point (an
:class:`~frankwolfe.parallel.InProcessRounds` executor: ``point`` once, then
``vertices`` per chunk of blocks, one thread each; a
:class:`~frankwolfe.parallel.RowRounds` executor: the batch oracle's table rows
computed where it runs, stored here), then the core's compiled driver takes
the ``tau`` block steps at those vertices, each with its line search at the
current iterate: the same steps as the Python rounds, up to rounding.

Asynchronous rounds (``staleness`` k >= 1; the asynchronous variant of Wang et al.
with its delay bounded): the oracles of the next k rounds run on a helper thread
while this round's steps are applied, each round's point taken when its oracles are
launched, so a step may use an oracle answer up to ``k`` rounds (plus its own round's
earlier steps) old.  Every answer is still a vertex of its block and every step keeps
its line search at the current iterate, so each step stays feasible and never
increases f; the certificates are asked at one point, as before.  A round is
launched only when its blocks are not among the rounds in flight (gap sampling holds
them out; a pass's order has each block once), and a pass ends with none in flight.
The delays of the steps (block steps applied between a step's point and the step)
are counted (:meth:`Schedule.outputs`).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ...atoms import Atom
from ...compiled import Picker, RoundKernels, Snapshots, TouchLog, order_picker
from ...compiled.sum_tree import gap_pick_round
from ...monitor import INTERRUPTS
from ...parallel import Executor, InProcessRounds, RowRounds, SerialExecutor
from ..block_orders import checked_pick
from .compiled_pass import CompiledSteps
from .passes import (
    Budget,
    Pass,
    block_gradient,
    check_block_gradient,
    full_gradient,
    probe_values,
)
from .state import BlockState, PythonBlocks

__all__ = ["Schedule", "PythonRounds", "CompiledRounds"]


#: ``ask(batch)`` takes a round's point (in the calling thread) and returns the call that
#: answers its oracles at that point (run here, or on the helper thread)
Ask = Callable[[list[int]], Callable[[], Any]]


def _sum_tree(state: BlockState) -> tuple[np.ndarray, int, float, np.ndarray] | None:
    """The sum tree the run's order draws from, when it declares that its draws are the
    tree's (:attr:`~frankwolfe.BlockOrder.draws_by_sum_tree`), else None (an order that
    picks, updates or holds out its own way draws in Python, block by block)."""
    order = state.order
    return order.compiled_tree() if order.draws_by_sum_tree else None


class Schedule:
    """The mini-batch schedule of one run: ``batch_size`` blocks per round, their oracles
    through ``executor``, up to ``staleness`` rounds ahead of the steps; the counters of
    its rounds."""

    def __init__(self, batch_size: int, executor: Executor, staleness: int = 0,
                 joint: bool = False, lock_free: bool = False, local: bool = False) -> None:
        self.tau = int(batch_size)
        self.executor = executor
        self.staleness = int(staleness)
        #: one step along the round's summed block directions instead of a step per block
        self.joint = bool(joint)
        #: no rounds: the executor's threads take block steps at once (:mod:`.lock_free`)
        self.lock_free = bool(lock_free)
        #: each worker's serial steps on its blocks, combined by one step (resident blocks)
        self.local = bool(local)
        self.parallel = not isinstance(executor, SerialExecutor)
        self.rounds = 0
        self.oracle_seconds = 0.0  # wall time of the rounds' oracle phases
        self.certificate_seconds = 0.0  # and of the certificate passes' ones
        self.wait_seconds = 0.0  # what the steps waited for oracles run ahead
        # delays[j]: block steps taken j steps after the point of their oracle answer
        self.delays = np.zeros((self.staleness + 1) * self.tau, dtype=np.int64)
        self._ahead: ThreadPoolExecutor | None = None
        #: what the run's pass holds outside this process (its close() at the end)
        self.resources: list[Any] = []
        # asynchronous rounds' launch points: copies kept current at what was touched
        self._snapshots = Snapshots()

    def run(self, rounds: Iterator[list[int]], ask: Ask,
            apply: Callable[[list[int], Any], None], stop: Callable[[int], bool],
            table: bool = False) -> None:
        """One pass of rounds: the oracles of each round (``ask``), then its steps
        (``apply(batch, answer)``), until ``stop(blocks done)``; with ``staleness`` k
        the oracles of the next k rounds run on the helper thread meanwhile (module
        docstring).  ``table``: the answers are stored per block (compiled rounds), so
        a block of a round not yet applied is asked late, when its round comes."""
        k = self.staleness
        # launched, not applied: (round, answer or future, steps applied at launch,
        # the blocks asked when the round comes)
        pending: deque[tuple[list[int], Any, int, list[int]]] = deque()
        held: Counter[int] = Counter()  # the blocks of those rounds
        applied = 0
        # a round is drawn only when it is launched: orders that pick from the gap
        # estimates (gap sampling) read them after the steps before it
        nxt: list[int] | None = None

        def launch() -> bool:
            nonlocal nxt
            if nxt is None:
                nxt = next(rounds, None)
            if nxt is None:
                return False
            if not k:
                pending.append((nxt, ask(nxt)(), applied, []))
            else:
                late = [i for i in nxt if held[i]] if table else []
                early = [i for i in nxt if not held[i]] if late else nxt
                if self._ahead is None:
                    self._ahead = ThreadPoolExecutor(1, thread_name_prefix="frankwolfe-ahead")
                answer = self._ahead.submit(ask(early)) if early else None
                pending.append((nxt, answer, applied, late))
                if table:
                    held.update(set(nxt))
            nxt = None
            return True

        try:
            while pending or launch():
                batch, answer, at, late = pending.popleft()
                if k:
                    tic = time.perf_counter()
                    answer = None if answer is None else answer.result()
                    self.wait_seconds += time.perf_counter() - tic
                    if late:  # their rows were another round's until now
                        ask(late)()
                    # the next k rounds' oracles run during this round's steps, each at
                    # the point before them
                    while len(pending) < k and launch():
                        pass
                apply(batch, answer)
                self._delays(batch, applied - at, late)
                applied += len(batch)
                self.rounds += 1
                if table:
                    held.subtract(set(batch))
                if stop(applied):
                    break
        finally:
            while pending:  # a pass ends with no oracle running (answers unused)
                answer = pending.popleft()[1]
                if isinstance(answer, Future):
                    answer.exception()

    def _delays(self, batch: list[int], lag: int, late: list[int]) -> None:
        """Count the steps of a round by delay: block steps applied since the point of
        its answer (``lag`` at the round's launch; blocks asked late: at the round).
        Synchronous rounds count nothing (their delays are 0 .. tau - 1 by construction,
        and :meth:`outputs` reports none): np.add.at would cost every round time
        (benchmarks/README.md, "Measurements behind code choices")."""
        if not self.staleness:
            return
        lags = np.arange(len(batch)) + lag
        if late and lag:
            lags[np.isin(np.asarray(batch), np.asarray(late))] -= lag
        self.delays += np.bincount(np.minimum(lags, self.delays.size - 1),
                                   minlength=self.delays.size)

    @property
    def wants_rounds(self) -> bool:
        """Whether the run takes rounds (``batch_size`` 1 in this thread: serial steps)."""
        return self.tau > 1 or self.parallel

    def batches(self, state: BlockState, order: np.ndarray | None) -> Iterator[list[int]]:
        """The rounds of one pass in ``order`` (``None``: the order picks step by step)."""
        tau = self.tau
        if order is not None:
            for a in range(0, order.size, tau):
                yield order[a:a + tau].tolist()
            return
        unif = state.rng.random(state.n)  # one uniform number per step, as the serial pass
        drawn = _sum_tree(state) if tau > 1 else None
        if drawn is not None:
            # the round's draws in one compiled call: two Python calls a block cost far
            # more, serial time no thread takes over
            # (benchmarks/README.md, "Measurements behind code choices")
            tree, size, _, nextu = drawn
            for a in range(0, state.n, tau):
                out = np.empty(min(tau, state.n - a), dtype=np.int64)
                gap_pick_round(tree, size, state.order.est, nextu, unif[a:a + tau], state.n,
                               out)
                yield out.tolist()
            return
        for a in range(0, state.n, tau):
            batch = []
            for u in unif[a:a + tau]:
                i = checked_pick(state.order, state.order.next(float(u)), state.n)
                batch.append(i)
                if tau > 1:  # hold block i out of the rest of the round
                    state.est[i] = 0.0
                    state.order.hold(i)
            yield batch

    def answers(self, which: list[int], dirs: list[np.ndarray] | np.ndarray,
                certificate: bool = False) -> list[Atom]:
        """The oracle answers of blocks ``which`` for their directions (a list) or the
        whole gradient (an array, for executors that ship it whole)."""
        tic = time.perf_counter()
        atoms = (self.executor.map_gradient(which, dirs) if isinstance(dirs, np.ndarray)
                 else self.executor.map(which, dirs))
        self.count(tic, certificate)
        if len(atoms) != len(which):
            raise RuntimeError(f"{self.executor!r}.map returned {len(atoms)} atoms for "
                               f"{len(which)} blocks")
        return atoms

    def store_vertices(self, rk: RoundKernels, which: list[int], g: np.ndarray,
                       certificate: bool = False) -> None:
        """Compiled rounds: the domain stores the vertices of blocks ``which`` at the
        gradient ``g`` (its point computed once, the chunks through the executor), now:
        no step runs meanwhile, so the point needs no copy."""
        self.vertices_call(rk, which, g, certificate, ahead=False)()

    def vertices_call(self, rk: RoundKernels, which: list[int], g: np.ndarray,
                      certificate: bool = False, log: TouchLog | None = None,
                      ahead: bool = True) -> Callable[[], None]:
        """:meth:`store_vertices` in two halves: the round's point, taken now (the
        domain's ``point(g)``, or a copy of ``g`` to ship when oracles run ahead), and
        the returned call that stores the vertices at it.  ``log``: the record of the
        coordinates the steps touched in ``g`` (:class:`~frankwolfe.compiled.TouchLog`),
        closed here: the executor ships the change from it, the copy is brought up to
        date from it (O(touched), not O(d)).  ``ahead``: the call may run while steps
        move ``g`` (asynchronous rounds: the point is then a copy)."""
        ex = self.executor
        snaps = self._snapshots
        if isinstance(ex, InProcessRounds):
            p = rk.point(g)
            held: list[np.ndarray] = []
            if ahead and self.staleness and rk.snapshot is not None:
                if log is not None:
                    log.take()

                def copy(a: np.ndarray, where: Callable[[np.ndarray], np.ndarray] | None = None
                         ) -> np.ndarray:
                    held.append(snaps.take(a, log, where))
                    return held[-1]

                p = rk.snapshot(p, copy)  # its oracles run during the steps before it

            def call() -> None:
                tic = time.perf_counter()
                try:
                    ex.chunks(rk.vertices, which, p)
                finally:
                    for buf in held:
                        snaps.release(buf)
                self.count(tic, certificate)
        elif isinstance(ex, RowRounds) and rk.store is not None:
            store = rk.store
            delta = None if log is None else log.take()
            at = snaps.take(g, log) if ahead and self.staleness else g

            def call() -> None:
                tic = time.perf_counter()
                try:  # rows from where the oracle runs
                    for part, rows in ex.rows(which, at, delta):
                        store(part, rows)
                finally:
                    if at is not g:
                        snaps.release(at)
                self.count(tic, certificate)
        else:
            raise TypeError(f"{ex!r} runs no compiled rounds")
        return call

    def count(self, tic: float, certificate: bool) -> None:
        """Add the seconds since ``tic`` to the oracle phases' (or the certificates')."""
        if certificate:
            self.certificate_seconds += time.perf_counter() - tic
        else:
            self.oracle_seconds += time.perf_counter() - tic

    def info(self) -> dict[str, Any]:
        """The counters an iteration's callback sees."""
        return {"rounds": self.rounds, "oracle_seconds": self.oracle_seconds,
                "oracle_wait_seconds": self.wait_seconds}

    def outputs(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "batch_size": self.tau, "rounds": self.rounds,
            "round_step": "local" if self.local else "joint" if self.joint else "sequential",
            "executor": repr(self.executor), "oracle_seconds": self.oracle_seconds,
            "certificate_oracle_seconds": self.certificate_seconds,
            "staleness": self.staleness}
        if self.staleness:
            steps = int(self.delays.sum())
            lags = np.arange(self.delays.size)
            out.update(delays=self.delays.copy(), oracle_wait_seconds=self.wait_seconds,
                       mean_delay=float(lags @ self.delays) / max(steps, 1),
                       max_delay=int(lags[self.delays > 0].max()) if steps else 0)
        return out

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown(wait=True)
            self._ahead = None
        self._release()
        self.executor.close()

    def _release(self) -> None:
        while self.resources:
            self.resources.pop().close()

    def abort(self) -> None:
        """As :meth:`close`, without waiting for the oracle calls in flight (the run left
        on an exception: see :meth:`~frankwolfe.parallel.base.Executor.abort`)."""
        if self._ahead is not None:
            self._ahead.shutdown(wait=False, cancel_futures=True)
            self._ahead = None
        self._release()
        self.executor.abort()


def _certificate_seconds(state: BlockState, probed: float | None) -> float:
    """What Python rounds keep for the closing certificate before one is timed (the
    engine certifies the first whole pass under a time limit, and then keeps that one's
    time): the domain's batch oracle's values on a sample of blocks scaled to ``n``
    (:func:`.passes.probe_values`), else the start's oracle calls, one per block.  The
    rounds' own rate says little of a certificate, ``n`` oracle calls dispatched at
    once (it overstated a certificate's cost many times, and a timed run stopped far
    short of its budget: benchmarks/README.md, "Measurements behind code choices")."""
    if probed is None:
        p = probe_values(state)
        probed = p[0] if p is not None else (state.start_seconds or 0.0)
    return probed


def _stop(budget: Budget, done: int) -> bool:
    """Whether rounds stop after ``done`` block steps of the pass: an interrupt, or the
    budget spent.  Until a certificate is timed (the engine certifies the first whole
    pass under a time limit) nothing is kept for it: the rounds' rate says little of a
    certificate, ``n`` oracle calls dispatched at once (it overstated a certificate's
    cost many times, and a timed run stopped far short of its budget:
    benchmarks/README.md, "Measurements behind code choices")."""
    return bool(INTERRUPTS.hits) or (budget.limited and budget.spent(done, 0.0))


class PythonRounds(Pass):
    """Rounds of Python block steps (``step(i, atom)``; with the schedule's ``joint``, one
    step ``joint(batch, atoms)`` per round) at oracle answers asked through the executor;
    certificates through it too (``certify(x, refresh, ask)``: ``ask(g)`` answers every
    block's oracle at the gradient ``g``)."""

    name = "python"
    estimates_certificate = True  # see _certificate_seconds

    def __init__(self, state: BlockState, blocks: PythonBlocks,
                 step: Callable[[int, Atom], None],
                 certify: Callable[[np.ndarray, bool, Callable[[np.ndarray], Sequence[Atom]]],
                                   tuple[float, float]],
                 schedule: Schedule,
                 joint: Callable[[list[int], list[Atom]], None] | None = None) -> None:
        if schedule.joint and joint is None:
            raise ValueError("PythonRounds: the schedule takes joint round steps; give "
                             "`joint`")
        self.state, self.blocks, self.schedule = state, blocks, schedule
        self.step, self.certify, self.joint = step, certify, joint
        self._probed: float | None = None
        ex = schedule.executor
        ex.start(blocks.lmos, blocks.idx, blocks.shapes)
        oracle = state.batch_oracle()
        if oracle is not None:
            ex.use_batch_oracle(oracle)

    def _direction(self, g: np.ndarray, i: int) -> np.ndarray:
        shape = self.blocks.shapes[i]
        return g if len(shape) == 1 else g.reshape(shape)

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st, sched, step, idx = self.state, self.schedule, self.step, self.blocks.idx
        f, x = st.f, st.x
        whole = sched.executor.whole_gradient
        # with oracles run ahead the directions must outlive the steps that change x
        own = sched.staleness > 0
        if budget.limited and budget.reserve is None:
            budget.reserve = self._probed = _certificate_seconds(st, self._probed)

        def ask(batch: list[int]) -> Callable[[], list[Atom]]:
            if whole:  # one vector per round for the executor to ship
                dirs: Any = full_gradient(f, x, copy=own)
            else:
                dirs = []
                for i in batch:
                    g = block_gradient(f, x, idx[i], copy=own)
                    check_block_gradient(g, i)
                    dirs.append(self._direction(g, i))
            return lambda: sched.answers(batch, dirs)

        joint = self.joint if sched.joint else None

        def apply(batch: list[int], atoms: list[Atom]) -> None:
            if joint is not None:
                joint([int(i) for i in batch], atoms)
                return
            for i, atom in zip(batch, atoms):
                step(int(i), atom)

        sched.run(sched.batches(st, order), ask, apply, lambda done: _stop(budget, done))
        return 0.0

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        return self.certify(x, refresh, self._atoms)

    def _atoms(self, g: np.ndarray) -> list[Atom]:
        """The oracle answers of all blocks at the full gradient ``g``."""
        n, idx = self.state.n, self.blocks.idx
        dirs = g if self.schedule.executor.whole_gradient else \
            [self._direction(g[idx[i]], i) for i in range(n)]
        return self.schedule.answers(list(range(n)), dirs, certificate=True)

    def info(self) -> dict[str, Any]:
        return self.schedule.info()

    def outputs(self) -> dict[str, Any]:
        return self.schedule.outputs()


class CompiledRounds(Pass):
    """Rounds whose vertices the domain's round kernels store (through the executor) and
    whose block steps the compiled driver takes."""

    name = "compiled"
    exact_df = True
    estimates_certificate = True  # see _probe

    def __init__(self, state: BlockState, steps: CompiledSteps, rk: RoundKernels,
                 schedule: Schedule) -> None:
        self.state, self.steps, self.rk, self.schedule = state, steps, rk, schedule
        self._probed: float | None = None
        ex = schedule.executor
        if isinstance(ex, InProcessRounds):
            ex.start((), None, None)  # the domain's round kernels answer here
            return
        # table rows from the shards of the batch oracle: the blocks' own oracles never
        # run, and the Python blocks (GBs for a large training set) are not built
        ex.start([None] * state.n)
        if not ex.use_batch_oracle(state.batch_oracle()):
            raise RuntimeError(f"{ex!r} declined the batch block oracle that compiled "
                               "rounds outside this process take rows from")

    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        st, sched, steps, rk = self.state, self.schedule, self.steps, self.rk
        tree = st.order.compiled_tree() if order is None else None
        # an executor that ships the point's change, and asynchronous rounds' copies of
        # their points, read the coordinates the steps touched
        log = steps.track() if isinstance(sched.executor, RowRounds) or (
            sched.staleness and rk.snapshot is not None) else None
        df = [0.0]
        if budget.limited and budget.reserve is None:
            budget.reserve = self._probe()

        def ask(batch: list[int]) -> Callable[[], None]:
            return sched.vertices_call(rk, batch, steps.synced_gradient(), log=log)

        def apply(batch: list[int], _: None) -> None:
            which = np.asarray(batch, dtype=np.int64)
            if steps.joint:  # one step for the round (order-drawn passes: mode 0)
                df[0] += steps.joint_round(order_picker(which, st.est), which.size)
                return
            # the picks are made; with gap sampling the steps keep its sum tree current
            picker = (order_picker(which, st.est) if tree is None
                      else Picker(2, which, np.zeros(0), st.est, *tree))
            df[0] += steps.steps(picker, 0, which.size)

        sched.run(sched.batches(st, order), ask, apply, lambda done: _stop(budget, done),
                  table=True)
        return df[0]

    def _probe(self) -> float:
        """What the rounds keep for the closing certificate before one is timed: the
        vertices of a 32nd of the blocks (at least 8) stored at the current point, as the
        certificate stores all ``n`` (a round stores its own blocks' before it reads
        them, so the steps are the same), after one untimed block (a first call's cache
        load), scaled to ``n``.  Keeping nothing overran a short time limit on CoNLL-2000
        by its certificate; the domain's batch oracle, as the Python passes ask it, would
        be built for this alone, itself costly there (benchmarks/README.md, "Measurements
        behind code choices")."""
        if self._probed is None:
            st, sched = self.state, self.schedule
            g = self.steps.synced_gradient()
            which = list(range(min(max(8, st.n // 32), st.n)))
            sched.store_vertices(self.rk, which[:1], g)
            tic = time.perf_counter()
            sched.store_vertices(self.rk, which, g)
            self._probed = (time.perf_counter() - tic) * st.n / len(which)
        return self._probed

    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        return self.steps.certificate(x, refresh, self._store_all)

    def _store_all(self, g: np.ndarray) -> None:
        self.schedule.store_vertices(self.rk, list(range(self.state.n)), g, certificate=True)

    def info(self) -> dict[str, Any]:
        return self.schedule.info()

    def outputs(self) -> dict[str, Any]:
        return self.schedule.outputs()

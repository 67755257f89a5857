"""Mini-batch rounds of block-coordinate Frank-Wolfe (Wang, Sadhanala, Dai, Neiswanger,
Sra, Xing, "Parallel and Distributed Block-Coordinate Frank-Wolfe Algorithms", ICML 2016).

A round takes the next ``tau`` blocks of the block order, asks their oracles
at the same point (all at once, through an :mod:`~frankwolfe.executors`
executor: serial, threads or a Dask cluster), then applies the ``tau`` block
steps one after the other, each with its line search at the current iterate
(the BCFW engine's own block step, handed the oracle's atom).  ``tau = 1`` is
serial BCFW, iterate for iterate: the same random stream, the same steps.

Orders that pick block by block (gap sampling, max-gap) are asked ``tau``
times per round from the round's state; a block picked in the round is held
out of the rest of the round (its estimate set to 0 until its step writes the
new one), so a round does not ask the same block twice at the same point.

Certificate passes ask all ``n`` oracles at one point through the same
executor.  The engine stays :class:`~.bcfw._BlockEngine`: this module only
schedules its oracle calls.

On the compiled engine (a domain whose compiled kernels offer
:class:`~.compiled_blocks.RoundKernels`, an executor of this process) a round
is two calls: the executor has the domain store the ``tau`` vertices at the
round's point (``point`` once, then ``vertices`` per chunk of blocks, one
thread each), then the core's compiled driver takes the ``tau`` block steps
at those vertices (``compiled_driver(..., rounds=True)``), each with its
line search at the current iterate: the same steps as the Python rounds, up
to rounding.  An executor outside this process that ``serves_rows`` (Dask)
runs the same rounds when the round kernels can ``store`` rows and the
domain's batch block oracle computes them (``rows``):
the oracles of a round return their blocks' table rows (opaque to the core),
stored into the domain's table before the compiled block steps.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..atoms import Atom
from ..executors import Executor, SerialExecutor
from ..monitor import Monitor
from ..compiled import Picker

if TYPE_CHECKING:  # pragma: no cover
    from .bcfw import _BlockEngine

__all__ = ["MiniBatch"]


class MiniBatch:
    """The mini-batch schedule of one BCFW run: ``batch_size`` blocks per round, their
    oracles through ``executor``."""

    def __init__(self, batch_size: int, executor: Executor) -> None:
        self.tau = int(batch_size)
        self.executor = executor
        self.parallel = not isinstance(executor, SerialExecutor)
        self.rounds = 0
        self.oracle_seconds = 0.0  # wall time of the rounds' oracle phases
        self.certificate_seconds = 0.0  # and of the certificate passes' ones
        self._eng: _BlockEngine | None = None

    def start(self, engine: _BlockEngine) -> None:
        """Ship the engine's block oracles to the executor (once per run)."""
        self._eng = engine
        if engine.rounds is not None and self.executor.in_process:
            self.executor.start((), None, None)  # the domain's round kernels answer here
            return
        if engine.rounds is not None:
            # table rows from the shards of the batch oracle: the blocks' own oracles never
            # run, and the Python blocks (GBs for a large training set) are not built
            self.executor.start([None] * engine.n)
            if not self.executor.use_batch_oracle(engine.batch_oracle()):
                raise RuntimeError(f"{self.executor!r} declined the batch block oracle that "
                                   "compiled rounds outside this process take rows from")
            return
        engine._python_blocks()
        self.executor.start(engine.lmos, engine.idx, engine.shapes)
        oracle = engine.batch_oracle()
        if oracle is not None:
            self.executor.use_batch_oracle(oracle)

    def close(self) -> None:
        self.executor.close()

    def _direction(self, g: np.ndarray, i: int) -> np.ndarray:
        shape = self._eng.shapes[i]
        return g if len(shape) == 1 else g.reshape(shape)

    def _answers(self, which: list[int], dirs: list[np.ndarray] | np.ndarray,
                 certificate: bool = False) -> list[Atom]:
        """The oracle answers of blocks ``which`` for their directions (a list) or the
        whole gradient (an array, for executors that ship it whole)."""
        tic = time.perf_counter()
        atoms = (self.executor.map_gradient(which, dirs) if isinstance(dirs, np.ndarray)
                 else self.executor.map(which, dirs))
        if certificate:
            self.certificate_seconds += time.perf_counter() - tic
        else:
            self.oracle_seconds += time.perf_counter() - tic
        if len(atoms) != len(which):
            raise RuntimeError(f"{self.executor!r}.map returned {len(atoms)} atoms for "
                               f"{len(which)} blocks")
        return atoms

    def _rounds(self, order: np.ndarray | None) -> Iterator[list[int]]:
        eng, tau = self._eng, self.tau
        if order is not None:
            for a in range(0, order.size, tau):
                yield order[a:a + tau].tolist()
            return
        unif = eng.rng.random(eng.n)  # one uniform number per step, as the serial pass
        for a in range(0, eng.n, tau):
            batch = []
            for u in unif[a:a + tau]:
                i = eng.order.next(float(u))
                batch.append(i)
                if tau > 1:  # hold block i out of the rest of the round
                    eng.est[i] = 0.0
                    if eng._order_update is not None:
                        eng._order_update(i, 0.0)
            yield batch

    def store_vertices(self, which: list[int], g: np.ndarray, certificate: bool = False
                       ) -> None:
        """Compiled rounds: the domain stores the vertices of blocks ``which`` at the
        gradient ``g`` (its point computed once, the chunks through the executor)."""
        rk = self._eng.rounds
        tic = time.perf_counter()
        if self.executor.in_process:
            self.executor.chunks(rk.vertices, which, rk.point(g))
        else:  # the batch oracle's table rows from where it runs, stored here
            for part, rows in self.executor.rows(which, g):
                rk.store(part, rows)
        if certificate:
            self.certificate_seconds += time.perf_counter() - tic
        else:
            self.oracle_seconds += time.perf_counter() - tic

    def _compiled_pass(self, order: np.ndarray | None, monitor: Monitor) -> float:
        eng = self._eng
        tree = eng.order.compiled_tree() if order is None else None
        tic = time.perf_counter()
        done = 0
        df = 0.0
        for batch in self._rounds(order):
            self.store_vertices(batch, eng.synced_gradient())
            which = np.asarray(batch, dtype=np.int64)
            # the picks are made; with gap sampling the steps keep its sum tree current
            picker = (Picker(0, which, np.zeros(0), eng.est, np.zeros(2), 1, 1.0,
                             np.zeros(1, dtype=np.int64)) if tree is None
                      else Picker(2, which, np.zeros(0), eng.est, *tree))
            df += eng.compiled_steps(picker, 0, which.size)
            self.rounds += 1
            done += which.size
            if monitor.time_limit is not None and \
                    eng._time_up(monitor, (time.perf_counter() - tic) * eng.n / done):
                break
        return df

    def run_pass(self, order: np.ndarray | None, monitor: Monitor) -> float:
        """One pass (``n`` block steps, or ``order.size``) in rounds of ``tau``; the change
        of f on the compiled engine (else 0)."""
        eng = self._eng
        if eng.rounds is not None:
            return self._compiled_pass(order, monitor)
        f, x = eng.f, eng.x
        tic = time.perf_counter()
        done = 0
        whole = self.executor.whole_gradient
        for batch in self._rounds(order):
            if whole:  # one vector per round for the executor to ship
                dirs: Any = np.asarray(f.gradient(x), dtype=float).reshape(-1)
            else:
                dirs = []
                for i in batch:
                    g = f.partial_gradient(x, eng.idx[i])
                    if type(g) is not np.ndarray or g.dtype != np.float64 or g.ndim != 1:
                        g = np.asarray(g, dtype=float).reshape(-1)
                    dirs.append(self._direction(g, i))
            for i, atom in zip(batch, self._answers(batch, dirs)):
                eng.step(int(i), atom)
            self.rounds += 1
            done += len(batch)
            if monitor.time_limit is not None and \
                    eng._time_up(monitor, (time.perf_counter() - tic) * eng.n / done):
                break
        return 0.0

    def certificate_atoms(self, g: np.ndarray) -> list[Atom]:
        """The oracle answers of all blocks at the full gradient ``g`` (a certificate)."""
        eng = self._eng
        dirs = g if self.executor.whole_gradient else \
            [self._direction(g[eng.idx[i]], i) for i in range(eng.n)]
        return self._answers(list(range(eng.n)), dirs, certificate=True)

    def info(self) -> dict[str, Any]:
        return {"rounds": self.rounds}

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
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..atoms import Atom
from ..executors import Executor, SerialExecutor
from ..lmo.product import ProductDomain
from ..monitor import Monitor

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
        engine._python_blocks()
        self._eng = engine
        self.executor.start(engine.lmos, engine.idx, engine.shapes)
        oracle = engine.dom.batch_block_oracle() if isinstance(engine.dom, ProductDomain) \
            else None
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

    def run_pass(self, order: np.ndarray | None, monitor: Monitor) -> None:
        """One pass (``n`` block steps, or ``order.size``) in rounds of ``tau``."""
        eng = self._eng
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

    def certificate_atoms(self, g: np.ndarray) -> list[Atom]:
        """The oracle answers of all blocks at the full gradient ``g`` (a certificate)."""
        eng = self._eng
        dirs = g if self.executor.whole_gradient else \
            [self._direction(g[eng.idx[i]], i) for i in range(eng.n)]
        return self._answers(list(range(eng.n)), dirs, certificate=True)

    def info(self) -> dict[str, Any]:
        return {"rounds": self.rounds}

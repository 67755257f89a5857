"""The executor interface, its two optional capabilities, and the serial executor.

Mini-batch block-coordinate Frank-Wolfe (Wang et al., ICML 2016) asks the
oracles of ``tau`` blocks at one point; those calls are independent, so an
executor may run them anywhere.  Every executor answers :meth:`Executor.map`
(a user's implements :meth:`Executor.start` and :meth:`Executor.map`); the blocks of
one batch need not be distinct (uniform rounds draw with replacement).

Compiled mini-batch rounds need more than atoms, and an executor offers it by
also deriving from one of two mixins (the solver tests them with
``isinstance``):

* :class:`InProcessRounds` - runs calls in this process (:meth:`~InProcessRounds.chunks`):
  the domain's round kernels write a chunk of blocks' vertices into the
  domain's memory per call (serial and threads);
* :class:`RowRounds` - computes the batch oracle's table rows where the
  oracle lives (:meth:`~RowRounds.rows`), which the domain's round kernels
  store here (Dask).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..atoms import Atom
from ..errors import ExecutorError

__all__ = ["Executor", "InProcessRounds", "RowRounds", "SerialExecutor"]


# the check-and-set of claim(): one lock for all executors (a lock held by each would stop
# deepcopy, which scikit-learn's clone does)
_HOLD = threading.Lock()


def _free() -> None:
    return None


class _Run:
    """The token of the run that holds an executor.  A copy of the executor (scikit-learn's
    clone deep-copies it, pickle ships it) is held by no run: the token copies as None."""

    def __reduce__(self) -> tuple:
        return (_free, ())

    def __deepcopy__(self, memo: Any) -> None:
        return None


class Executor(ABC):
    """Runs batches of block oracle calls (see the module docstring).

    One run at a time: the run's blocks, a pool or a cluster's shards live on the
    executor from :meth:`start` to :meth:`close`, so a run holds it (:meth:`claim`, the
    solver's call before :meth:`start`, to :meth:`release`, after :meth:`close` or
    :meth:`abort`).  Runs one after the other share an executor; a run that starts while
    another holds it raises :class:`~frankwolfe.errors.ExecutorError`: runs that overlap
    (threads of one process, a scikit-learn search on threads) need one each.
    """

    name: str = "custom"

    #: the run that holds this executor (:meth:`claim` to :meth:`release`), else None
    _run: _Run | None = None

    def claim(self) -> None:
        """Take this executor for one run (called by the solver before :meth:`start`).

        Raises
        ------
        ExecutorError
            When another run holds it: the runs would share its blocks, pool or shards
            (one run's oracles answered from the other's blocks, or its pool shut down by
            the other's :meth:`close`).
        """
        with _HOLD:
            busy = self._run is not None
            if not busy:
                self._run = _Run()
        if busy:
            raise ExecutorError(
                f"{self!r} is in use by another run (an executor serves one run at a "
                "time): give each concurrent run its own executor (n_jobs=..., a new "
                "executor object, or executor=client, which builds a DaskExecutor per run)")

    def release(self) -> None:
        """Give this executor back after a run's :meth:`close` or :meth:`abort` (called by
        the solver whatever happened in the run)."""
        with _HOLD:
            self._run = None

    #: asks for the whole gradient once per round (:meth:`map_gradient`) instead of the
    #: blocks' slices: cheaper to ship when the blocks' coordinates overlap
    whole_gradient: bool = False

    def start(self, blocks: Sequence[Any], indices: Sequence[np.ndarray] | None = None,
              shapes: Sequence[tuple[int, ...]] | None = None) -> None:
        """Once per run, before any :meth:`map`: the block oracles (``blocks[i]`` is the
        LMO of block ``i``), their coordinates ``indices[i]`` in the gradient and the
        shapes of their directions."""
        self.blocks = blocks
        self.indices = indices
        self.shapes = shapes

    @abstractmethod
    def map(self, which: Sequence[int], directions: Sequence[np.ndarray]) -> list[Atom]:
        """``[blocks[i](d) for i, d in zip(which, directions)]``, in that order (the
        directions are the block gradients, already shaped as the blocks expect).

        ``which`` may name a block more than once: a round of ``block_order="uniform"``
        draws its blocks with replacement.  Answer every entry, in order (one answer
        per entry, a repeated block's answers at its same direction); an executor that
        ships or caches per block must not assume the blocks of a round distinct.
        """

    def map_gradient(self, which: Sequence[int], gradient: np.ndarray) -> list[Atom]:
        """As :meth:`map` with the directions ``gradient[indices[i]]`` (reshaped), for
        executors with :attr:`whole_gradient`."""
        if self.indices is None or self.shapes is None:
            raise ValueError(f"{type(self).__name__}.map_gradient needs the blocks' indices "
                             "and shapes (start)")
        indices, shapes = self.indices, self.shapes
        return self.map(which, [gradient[indices[i]].reshape(shapes[i]) for i in which])

    def use_batch_oracle(self, oracle: Any) -> bool:
        """Offered after :meth:`start`: the domain's batch block oracle (see
        :meth:`~frankwolfe.ProductDomain.batch_block_oracle`), a callable ``(which,
        gradient) -> atoms``.  Returns whether this executor uses it (default: no);
        an executor that does sets :attr:`whole_gradient` for this run."""
        return False

    def close(self) -> None:  # noqa: B027 - an optional hook: most executors hold nothing
        """Release what :meth:`start` acquired (called at the end of the run)."""

    def abort(self) -> None:
        """Release at once, without waiting for calls in flight: called instead of
        :meth:`close` when the run leaves on an exception (a second Ctrl-C, an
        oracle's error), whose calls in flight nobody will read.  Default:
        :meth:`close`."""
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class InProcessRounds(ABC):
    """Mixin of executors that run calls in this process: compiled mini-batch rounds,
    whose oracles write the vertices into the domain's memory, need that."""

    @abstractmethod
    def chunks(self, call: Any, which: Sequence[int], arg: Any) -> list[Any]:
        """``[call(chunk, arg) for chunk in ...]`` over contiguous chunks of ``which`` that
        cover it in order, run by this executor."""


class RowRounds(ABC):
    """Mixin of executors that run the batch oracle's ``rows`` where the oracle lives:
    compiled mini-batch rounds then run outside this process too."""

    @abstractmethod
    def rows(self, which: Sequence[int], gradient: np.ndarray, delta: Any = None
             ) -> list[tuple[np.ndarray, Any]]:
        """The batch oracle's (see :meth:`Executor.use_batch_oracle`) ``rows(which_k,
        gradient)`` for pieces ``which_k`` of ``which``, as ``(which_k, rows)`` pairs
        (the rows are the domain's own, opaque: its round kernels' ``store`` writes them
        into its table).  ``delta`` (a :class:`~frankwolfe.compiled.Delta`, optional):
        the coordinates in which ``gradient`` may differ from an earlier point handed
        over, for an executor that ships the change."""


class _InProcess(Executor, InProcessRounds):
    """Executors of this process: they take the domain's batch block oracle."""

    _batch: Any = None

    def start(self, blocks: Sequence[Any], indices: Sequence[np.ndarray] | None = None,
              shapes: Sequence[tuple[int, ...]] | None = None) -> None:
        super().start(blocks, indices, shapes)
        self._batch = None
        self.whole_gradient = False

    def use_batch_oracle(self, oracle: Any) -> bool:
        self._batch = oracle
        self.whole_gradient = oracle is not None
        return self.whole_gradient

    def map(self, which: Sequence[int], directions: Sequence[np.ndarray]) -> list[Atom]:
        blocks = self.blocks
        return [blocks[i](d) for i, d in zip(which, directions)]

    def map_gradient(self, which: Sequence[int], gradient: np.ndarray) -> list[Atom]:
        if self._batch is None:
            return super().map_gradient(which, gradient)
        return [atom for part in self.chunks(self._batch, which, gradient) for atom in part]

    def chunks(self, call: Any, which: Sequence[int], arg: Any) -> list[Any]:
        return [call(which, arg)]


class SerialExecutor(_InProcess):
    """The oracles one after the other, in this thread (in one call of the domain's
    batch block oracle when it offers one)."""

    name = "serial"

"""The executor a run asks for, from the solvers' ``executor`` and ``n_jobs``."""

from __future__ import annotations

from typing import Any

from .base import Executor, SerialExecutor
from .dask import DaskExecutor, _is_client
from .threads import ThreadExecutor, effective_n_jobs

__all__ = ["make_executor"]


def make_executor(executor: Any = None, n_jobs: int | None = None) -> Executor:
    """The :class:`Executor` a method's ``executor`` and ``n_jobs`` arguments ask for.

    Parameters
    ----------
    executor : Executor, dask.distributed.Client or None, default None
        An :class:`Executor` is returned as it is (it serves one run at a time: runs
        that overlap need one each); a ``dask.distributed.Client`` is wrapped in a new
        :class:`DaskExecutor` per call; ``None`` leaves the choice to ``n_jobs``.
    n_jobs : int or None, default None
        With ``executor=None``: the number of threads, counted as scikit-learn does
        (:func:`effective_n_jobs`: ``-1`` all cores, ``-2`` all but one); ``None`` or
        a count of one gives a :class:`SerialExecutor`, more a :class:`ThreadExecutor`.

    Returns
    -------
    Executor
        ``executor`` itself, or a new :class:`DaskExecutor`, :class:`SerialExecutor` or
        :class:`ThreadExecutor`.

    Raises
    ------
    ValueError
        When both ``executor`` and ``n_jobs`` are given (the executor's workers run the
        round, so ``n_jobs`` would be ignored), or ``n_jobs`` is not a valid count.
    TypeError
        When ``executor`` is neither an :class:`Executor`, a client nor ``None``.
    """
    if executor is not None and n_jobs is not None:
        # the executor holds its own workers: n_jobs would be ignored without a word
        raise ValueError(f"give `executor` or `n_jobs`, not both (the executor's workers run "
                         f"the round), got executor={type(executor).__name__} and "
                         f"n_jobs={n_jobs!r}")
    if isinstance(executor, Executor):
        return executor
    if executor is not None:
        if _is_client(executor):
            return DaskExecutor(executor)
        raise TypeError(f"executor must be an Executor, a dask.distributed.Client or None, "
                        f"got {type(executor).__name__}")
    if n_jobs is None or effective_n_jobs(n_jobs) == 1:
        return SerialExecutor()
    return ThreadExecutor(n_jobs)

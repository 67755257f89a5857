"""The executor a run asks for, from the solvers' ``executor`` and ``n_jobs``."""

from __future__ import annotations

from typing import Any

from .base import Executor, SerialExecutor
from .dask import DaskExecutor, _is_client
from .threads import ThreadExecutor, effective_n_jobs

__all__ = ["make_executor"]


def make_executor(executor: Any = None, n_jobs: int | None = None) -> Executor:
    """An :class:`Executor` from ``executor`` (an instance, a ``dask.distributed.Client``
    or ``None``) and ``n_jobs`` (threads when ``executor`` is ``None``, counted as
    scikit-learn does: :func:`~.threads.effective_n_jobs`; 1 or ``None``: serial)."""
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

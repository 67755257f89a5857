"""Executors: where the block oracles of a mini-batch BCFW round run.

* :class:`SerialExecutor` calls them one after the other (the default);
* :class:`ThreadExecutor` splits them over threads of this process;
* :class:`DaskExecutor` runs them on a ``dask.distributed`` cluster.

A user's executor derives from :class:`Executor` and implements ``start`` and
``map``; one that also runs compiled rounds derives from
:class:`InProcessRounds` or :class:`RowRounds` (:mod:`.base`).
"""

from .base import Executor, InProcessRounds, RowRounds, SerialExecutor
from .dask import DaskExecutor
from .make import make_executor
from .threads import ThreadExecutor, effective_n_jobs

__all__ = ["Executor", "InProcessRounds", "RowRounds", "SerialExecutor", "ThreadExecutor",
           "DaskExecutor", "make_executor", "effective_n_jobs"]

"""The checks of the run keywords (``tol``, ``rtol``, ``max_iter``, ``time_limit``,
``callback``, ``verbose``, ``history_every``, ``progress``), written once: for
:class:`~frankwolfe.options.RunOptions`, which a method builds from its keywords first,
and for :class:`~frankwolfe.monitor.Monitor`, which a driver may build without one."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._numbers import as_real, check_flag, is_whole

__all__ = ["check_run_options"]


def check_run_options(*, tol: Any, rtol: Any, max_iter: Any, time_limit: Any, callback: Any,
                      verbose: Any, history_every: Any, progress: Any) -> None:
    """Refuse a run keyword out of its range (``ValueError``), or a ``callback`` that is
    not callable and a ``progress`` that is not a bool (``TypeError``), by name.

    A string or None failed the comparisons with its own message (``int('a')``: "invalid
    literal"), which named no argument; ``as_real`` reads an int beyond the float range
    (``tol=10**400``) as inf, not an ``OverflowError``.
    """
    if not as_real(tol) >= 0:
        raise ValueError(f"tol must be a non-negative number, got {tol!r}")
    if not 0 <= as_real(rtol) < 1:
        raise ValueError(f"rtol must be a number in [0, 1), got {rtol!r}")
    if not is_whole(max_iter):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    if time_limit is not None and not as_real(time_limit) > 0:
        raise ValueError(f"time_limit must be positive seconds or None, got {time_limit!r}")
    check_flag(progress, "progress")
    if not (isinstance(verbose, (bool, np.bool_)) or (
            isinstance(verbose, (int, np.integer)) and verbose >= 0)):
        raise ValueError(f"verbose must be a bool or a non-negative integer (the "
                         f"printing period), got {verbose!r}")
    if not is_whole(history_every, 1):  # 2.5 was truncated to 2
        raise ValueError(f"history_every must be a positive integer, got {history_every!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")

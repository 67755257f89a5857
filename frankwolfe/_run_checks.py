"""The checks of the run keywords (``tol``, ``rtol``, ``max_iter``, ``time_limit``,
``callback``, ``verbose``, ``history_every``, ``progress``), written once: for
:class:`~frankwolfe.options.RunOptions`, which a method builds from its keywords first,
and for :class:`~frankwolfe.monitor.Monitor`, which a driver may build without one."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ._numbers import as_real, check_flag, is_real, is_whole

__all__ = ["check_run_options"]


def _refuse(name: str, want: str, value: Any) -> NoReturn:
    """Raise for ``value`` of the run keyword ``name``: a ``TypeError`` when it is no real
    number (text, None, a list, a bool: :func:`~frankwolfe._numbers.is_real`, as
    ``check_real`` refuses them), else a ``ValueError`` (out of range, NaN, not whole)."""
    if not is_real(value):
        raise TypeError(f"{name} must be {want}, got {value!r} ({type(value).__name__})")
    raise ValueError(f"{name} must be {want}, got {value!r}")


def check_run_options(*, tol: Any, rtol: Any, max_iter: Any, time_limit: Any, callback: Any,
                      verbose: Any, history_every: Any, progress: Any) -> None:
    """Refuse a run keyword by name: of the wrong type (``TypeError``: text, None where
    it is not optional, a list, a bool for a number, a ``callback`` that is not
    callable, a ``progress`` that is not a bool) or of a wrong value (``ValueError``: a
    negative, NaN, ``2.5`` for an integer).

    A string or None failed the comparisons with its own message (``int('a')``: "invalid
    literal"), which named no argument; ``as_real`` reads an int beyond the float range
    (``tol=10**400``) as inf, not an ``OverflowError``.
    """
    if not as_real(tol) >= 0:
        _refuse("tol", "a non-negative number", tol)
    if not 0 <= as_real(rtol) < 1:
        _refuse("rtol", "a number in [0, 1)", rtol)
    if not is_whole(max_iter):
        _refuse("max_iter", "a non-negative integer", max_iter)
    if time_limit is not None and not as_real(time_limit) > 0:
        _refuse("time_limit", "positive seconds or None", time_limit)
    check_flag(progress, "progress")
    if not (isinstance(verbose, (bool, np.bool_)) or (
            isinstance(verbose, (int, np.integer)) and verbose >= 0)):
        # a float (2.7, or 3.0) is a number but no printing period
        _refuse("verbose", "a bool or a non-negative integer (the printing period)", verbose)
    if not is_whole(history_every, 1):  # 2.5 was truncated to 2
        _refuse("history_every", "a positive integer", history_every)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")

"""Library-wide switches.

Debug mode makes every LMO call check its answer (shape and feasibility).
It costs one feasibility test per oracle call, so it is off by default and
on in the test suite.  Turn it on with ``FRANKWOLFE_DEBUG=1`` in the
environment, :func:`set_debug`, or the :func:`debug` context manager.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

_debug: bool = os.environ.get("FRANKWOLFE_DEBUG", "").lower() not in ("", "0", "false", "no")


def debug_enabled() -> bool:
    """Return whether oracle answers are checked on every call."""
    return _debug


def set_debug(flag: bool) -> None:
    """Switch the checking of oracle answers on or off, for the whole process.

    Parameters
    ----------
    flag : bool
        True: every LMO call checks its answer's shape and feasibility; False: no
        checks (the default unless ``FRANKWOLFE_DEBUG`` is set).
    """
    global _debug
    if not isinstance(flag, (bool, np.bool_)):  # bool("no") is True
        raise TypeError(f"set_debug: `flag` must be True or False, got {flag!r}")
    _debug = bool(flag)


@contextmanager
def debug(flag: bool = True) -> Iterator[None]:
    """Context manager that sets debug mode and restores the previous mode on exit.

    Parameters
    ----------
    flag : bool, default True
        The mode inside the ``with`` block (see :func:`set_debug`).

    Yields
    ------
    None

    Examples
    --------
    >>> import frankwolfe as fw
    >>> with fw.debug():
    ...     fw.debug_enabled()
    True
    """
    old = _debug
    set_debug(flag)
    try:
        yield
    finally:
        set_debug(old)

"""Ctrl-C during a run: the process's one flag (:data:`INTERRUPTS`), which the drivers
read between steps."""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["INTERRUPTS"]


class _Interrupts:
    """Ctrl-C during a run: the first SIGINT sets a flag that the driver reads at the end
    of each iteration (a block pass reads it between block steps), the second raises
    ``KeyboardInterrupt`` at once.

    A flag, not a ``KeyboardInterrupt`` caught around the step: the exception could land
    anywhere, half-way through an update of the iterate or inside a numba call's
    wrapper, while the flag lets the step finish.  Python runs signal handlers in the
    main thread only, between bytecodes: a compiled kernel sees the flag when it
    returns.  The handler is installed only by a run in the main thread and only over
    Python's default one (a user's own handler is left alone); runs inside runs share it
    (:meth:`open` counts them), and the last main-thread run to close restores the
    previous handler, whatever runs other threads still have open (a background run
    kept it after the main run had returned, and swallowed the next Ctrl-C; one open
    before the main run kept the main run from installing it).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0
        self._main = 0  # the main thread's open runs
        self._previous: Any = None
        self._installed = False
        #: SIGINTs received while installed
        self.hits = 0

    def _handler(self, signum: int, frame: Any) -> None:
        self.hits += 1
        if self.hits >= 2:
            raise KeyboardInterrupt

    @property
    def requested(self) -> bool:
        """Whether a Ctrl-C asked the runs to stop."""
        return self.hits > 0

    def open(self) -> None:
        """A run starts (in any thread)."""
        with self._lock:
            self._open += 1
            if threading.current_thread() is not threading.main_thread():
                return
            self._main += 1
            if self._main > 1:
                return
            try:
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    self._previous = signal.signal(signal.SIGINT, self._handler)
                    self._installed = True
                    self.hits = 0
            except ValueError:  # not the main interpreter's main thread
                pass

    def close(self) -> None:
        """A run ends: the main thread's last one restores the previous handler and clears
        the flag (as the last run of all does)."""
        with self._lock:
            self._open = max(0, self._open - 1)
            if threading.current_thread() is threading.main_thread():
                self._main = max(0, self._main - 1)
            if self._main:  # main-thread runs still open: theirs the handler and the flag
                return
            if self._installed:
                try:
                    signal.signal(signal.SIGINT, self._previous)
                except ValueError:
                    pass
                self._installed = False
            self.hits = 0


#: the process's one Ctrl-C flag (see :class:`_Interrupts`)
INTERRUPTS = _Interrupts()

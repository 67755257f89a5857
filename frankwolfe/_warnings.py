"""Warnings attributed to the caller's line: the first frame outside the package.

A fixed ``stacklevel`` serves one call path only: the same warning reached through a
wrapper (``minimize``, the ``@solver`` keywords, an estimator's ``fit``) pointed into the
library.  Python 3.12's ``warnings.warn(skip_file_prefixes=...)`` does what
:func:`warn_user` does; the package supports Python 3.11.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

__all__ = ["warn_user", "skip_folder", "FILTERS"]

#: held around the package's code that swaps the process's warnings filters
#: (``catch_warnings``), or calls a library that does (scikit-learn's input validation):
#: two such blocks interleaved on two threads restore each other's lists and leave a
#: filter behind for good (Python 3.11 has no thread-local filters)
FILTERS = threading.Lock()

#: folders whose frames are the library's (the applications add theirs: installed from a
#: clone they live beside the package)
_PREFIXES: list[str] = [os.path.dirname(os.path.abspath(__file__)) + os.sep]


def skip_folder(path: str) -> None:
    """Count frames under the folder of ``path`` (a module's ``__file__``) as the
    library's."""
    folder = os.path.dirname(os.path.abspath(path)) + os.sep
    if folder not in _PREFIXES:
        _PREFIXES.append(folder)


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` at the first frame outside the library (the
    user's line, whatever wrappers the call went through)."""
    prefixes = tuple(_PREFIXES)
    frame = sys._getframe(1)
    level = 2  # the caller of warn_user
    while frame.f_back is not None and frame.f_code.co_filename.startswith(prefixes):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)

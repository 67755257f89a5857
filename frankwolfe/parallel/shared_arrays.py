"""Arrays that the processes of one machine map together: files in memory
(``/dev/shm`` where there is one) written by every process that maps them.

Why files and not :mod:`multiprocessing.shared_memory`: a segment made by one process
and attached by a Dask worker is registered with the worker's resource tracker, which
removes it when that worker exits, while the client still uses it (Python before
3.13); a file in a temporary directory has one owner, the process that made it, which
removes the directory when it is closed or collected.  A worker keeps its mapping of a
file after the directory is removed, so a run that ends while a worker still computes
corrupts nothing.

The owner (:class:`SharedArrays`) writes a random token beside the arrays; a process
that attaches (:func:`attach`) checks it, so a worker on another machine, where the
directory does not exist or holds other files, gets a clear error instead of arrays
nobody else writes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import weakref
from typing import NamedTuple

import numpy as np

from ..compiled.atomic_files import atomic_write

__all__ = ["SharedArrays", "SharedSpec", "attach"]

_MEMORY_DIR = "/dev/shm"
_TOKEN = "token"


class SharedSpec(NamedTuple):
    """What a process needs to map the arrays (picklable): the directory, its token and
    the arrays' names."""

    directory: str
    token: str
    names: tuple[str, ...]


def _home(nbytes: int) -> str | None:
    """A directory in memory with room for ``nbytes`` (a full file system would kill a
    process writing a mapped page with SIGBUS), else the temporary directory's."""
    if os.path.isdir(_MEMORY_DIR) and os.access(_MEMORY_DIR, os.W_OK):
        st = os.statvfs(_MEMORY_DIR)
        if st.f_bavail * st.f_frsize > 2 * nbytes:
            return _MEMORY_DIR
    return None


def _reserve(path: str) -> None:
    """The file's pages taken now where the system can (``posix_fallocate``): a file in
    memory created sparse could meet a full file system at a later write, which kills
    the writing process (SIGBUS) instead of raising."""
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is None:
        return
    with open(path, "r+b") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size:
            fallocate(fh.fileno(), 0, size)


class SharedArrays:
    """Zero-filled arrays in files that other processes of this machine map
    (:func:`attach`), removed by :meth:`close` or when this object is collected.

    Parameters
    ----------
    fields : dict
        ``name -> (shape, dtype)`` of each array.

    Raises
    ------
    OSError
        When the file system has no room for the arrays (the message says how many
        bytes were asked for and where).
    """

    def __init__(self, fields: dict[str, tuple[tuple[int, ...], np.dtype | type]]) -> None:
        nbytes = sum(int(np.prod(shape)) * np.dtype(dt).itemsize
                     for shape, dt in fields.values())
        root = _home(nbytes)
        self.directory = tempfile.mkdtemp(prefix="frankwolfe-shared-", dir=root)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.directory, True)
        free = shutil.disk_usage(self.directory).free
        if free < 2 * nbytes:
            self.close()
            raise OSError(f"SharedArrays: {nbytes} bytes of shared arrays do not fit in "
                          f"{root or tempfile.gettempdir()} ({free} bytes free)")
        self.token = secrets.token_hex(16)
        self.arrays: dict[str, np.ndarray] = {}
        for name, (shape, dt) in fields.items():
            path = os.path.join(self.directory, f"{name}.npy")
            mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dt),
                                           shape=tuple(shape))
            _reserve(path)
            self.arrays[name] = mm.view(np.ndarray)  # numba takes plain arrays
        # last, and whole or not at all: a process that reads the token finds every array
        with atomic_write(os.path.join(self.directory, _TOKEN), "w") as fh:
            fh.write(self.token)

    def spec(self) -> SharedSpec:
        """What :func:`attach` needs, to send to the other processes."""
        return SharedSpec(self.directory, self.token, tuple(self.arrays))

    def close(self) -> None:
        """Remove the files (the mappings held elsewhere stay valid until dropped)."""
        self._finalizer()


def attach(spec: SharedSpec) -> dict[str, np.ndarray]:
    """The arrays of ``spec``, mapped for reading and writing in this process.

    Raises
    ------
    ValueError
        When this process is not on the owner's machine (the directory is missing or
        holds another token), or the owner has closed them.
    """
    try:
        with open(os.path.join(spec.directory, _TOKEN)) as fh:
            token = fh.read()
    except OSError:
        token = None
    if token != spec.token:
        raise ValueError(f"shared arrays in {spec.directory} are not reachable from this "
                         f"process (pid {os.getpid()}): it must run on the machine of the "
                         "process that made them, which must not have closed them")
    return {name: np.load(os.path.join(spec.directory, f"{name}.npy"),
                          mmap_mode="r+").view(np.ndarray) for name in spec.names}

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

An owner killed outright (SIGKILL, the machine's out-of-memory killer) removes nothing,
and files in memory hold their memory until the machine restarts.  So the owner also
writes who it is (its process id and start time, and the machine: host name, boot and
process-id namespace), and every new :class:`SharedArrays` removes the directories of
this user whose owner no longer runs (:func:`sweep_orphans`); a directory of another
machine or container (a temporary directory on a network file system, a ``/dev/shm``
shared between containers) is never judged by this one's processes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import tempfile
import weakref
from typing import NamedTuple

import numpy as np

from ..compiled.atomic_files import atomic_write

__all__ = ["SharedArrays", "SharedSpec", "attach", "sweep_orphans"]

_MEMORY_DIR = "/dev/shm"
_TOKEN = "token"
_OWNER = "owner"
_PREFIX = "frankwolfe-shared-"


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


def _started(pid: int) -> str | None:
    """When process ``pid`` started (its start time in clock ticks since boot, from
    ``/proc``; ``""`` where there is no ``/proc``), or None when no such process runs.
    With the pid it names one process: a pid used again later has another start time."""
    stat = b""
    if os.path.exists("/proc/self/stat"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
        except FileNotFoundError:
            return None
        except OSError:
            pass
    if stat:
        # the fields after the command (in parentheses, which may hold spaces); the
        # start time is field 22 of the whole line
        return stat[stat.rindex(b")") + 2:].split()[19].decode()
    if os.name != "posix":  # (os.kill(pid, 0) ends the process on Windows)
        return ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return ""


def _machine() -> str:
    """This process's machine, as an owner file records it: host name, boot id and
    process-id namespace (``"?"`` for what cannot be read); a process id names a process
    only among those sharing all three."""
    parts = [socket.gethostname() or "?"]
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            parts.append(fh.read().strip() or "?")
    except OSError:
        parts.append("?")
    try:
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        parts.append("?")
    return " ".join(p.replace(" ", "_") for p in parts)


def sweep_orphans(root: str | None = None) -> list[str]:
    """Remove the shared-array directories under ``root`` (default: both places
    :class:`SharedArrays` puts them, ``/dev/shm`` and the temporary directory) that
    belong to this user and whose owner process no longer runs; the directories removed.
    A directory without an owner file (one being made) is left alone."""
    if root is None:
        roots = [_MEMORY_DIR] if _home(0) else []
        return [p for r in roots + [tempfile.gettempdir()] for p in sweep_orphans(r)]
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    here = _machine()
    if "?" in here.split():  # this machine not told apart from another: judge nothing
        return removed
    for entry in entries:
        if not entry.name.startswith(_PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or (
                    uid is not None and entry.stat(follow_symlinks=False).st_uid != uid):
                continue
            with open(os.path.join(entry.path, _OWNER)) as fh:
                fields = fh.read().split()
            pid, started, machine = int(fields[0]), fields[1], " ".join(fields[2:])
        except (OSError, ValueError, IndexError):
            continue
        if machine != here:  # another machine's, or one that recorded no start time
            continue
        now = _started(pid)
        if now is None or (now and now != started):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


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
        sweep_orphans()  # first: an orphan's pages count against the room measured
        root = _home(nbytes)
        self.directory = tempfile.mkdtemp(prefix=_PREFIX, dir=root)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.directory, True)
        pid = os.getpid()
        with atomic_write(os.path.join(self.directory, _OWNER), "w") as fh:
            fh.write(f"{pid} {_started(pid) or '-'} {_machine()}")
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

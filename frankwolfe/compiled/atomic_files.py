"""Atomic file writes: every file the library writes is whole or absent.

:func:`atomic_write` writes to a temporary file in the target's folder, flushes and
fsyncs it, renames it over the target (``os.replace``: atomic on POSIX and Windows
within one file system) and fsyncs the folder where the platform allows it.  A
failure (an exception, a full disk, a check that refuses the content) removes the
temporary file and leaves the old target untouched; a process killed mid-write leaves
the old target and a temporary file named ``.<name>.<random>.tmp``, which the next
write to the same target sweeps once it is an hour old (a younger one may be another
process's write in progress).  Concurrent writers each write their own temporary
file, so the target is always one writer's whole file.

A rewrite keeps what the user set on the old file that a rename would lose: its
permission bits (a model file kept ``chmod 600`` stays private), and a symbolic link
at ``path`` (the link's target is rewritten, the link stays).  An error of the write
itself (a folder that is not writable) names ``path``, not the hidden temporary file.

It lives on the compiled floor, which imports nothing from the rest of the core,
because the generated driver modules (:mod:`.driver_files`) are written with it; the
applications' model files and downloads use it too.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "fsync_folder", "sweep_stale", "STALE_SECONDS"]

#: temporary files of a target older than this are left over from a killed writer
STALE_SECONDS = 3600.0


def _default_mode() -> int:
    """``0o666`` less the process umask (what ``open`` gives a new file; mkstemp gives
    0o600).  The umask is read from /proc where it can be: setting it to read it back
    would race with other threads creating files."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """fsync a folder so that a rename in it survives a power cut (a no-op where the
    platform cannot open folders, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sweep_stale(target: Path, suffix: str = ".tmp", age: float = STALE_SECONDS) -> None:
    """Remove the temporary files of ``target`` (``.<name>.*<suffix>``) older than
    ``age`` seconds: left over from a writer that was killed."""
    now = time.time()
    try:
        candidates = list(target.parent.glob(f".{target.name}.*{suffix}"))
    except OSError:
        return
    for p in candidates:
        try:
            if now - p.stat().st_mtime > age:
                p.unlink()
        except OSError:  # gone meanwhile, or not ours to remove
            pass


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", *,
                 check: Callable[[Path], Any] | None = None, suffix: str = ".tmp",
                 file_mode: int | None = None, newline: str | None = None
                 ) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces
    ``path`` atomically.

    Parameters
    ----------
    path : path
        The target; its folder must exist.
    mode : {"wb", "w"}
        Binary or text.
    check : callable, optional
        Called with the temporary file's path once it is written and synced, before
        the rename; an exception from it keeps the old target and removes the
        temporary file (a downloaded file that does not parse is never kept).
    suffix : str, default ".tmp"
        Of the temporary file's name (``.<name>.<random><suffix>``).
    file_mode : int, optional
        Permission bits of the new file; default those of the file it replaces, else
        those ``open`` would give.
    newline : str, optional
        ``open``'s, for text (``""`` for the csv module).

    Yields
    ------
    file
        The temporary file, open for writing.

    Raises
    ------
    FileNotFoundError
        When the folder of ``path`` does not exist.
    OSError
        Of the write itself (``PermissionError`` for a folder that is not writable),
        naming ``path``.
    """
    # through a symbolic link to the file it names: a rename over the link would
    # replace the link by a regular file
    target = Path(os.path.realpath(path))
    if not target.parent.is_dir():  # else mkstemp names its hidden temporary file
        raise FileNotFoundError(f"{os.fspath(path)}: the folder {str(target.parent)!r} does "
                                "not exist")
    if file_mode is None:
        try:  # a rewrite keeps the old file's bits (chmod 600 stays 600)
            file_mode = stat.S_IMODE(target.stat().st_mode)
        except OSError:  # no file yet
            file_mode = _default_mode()
    sweep_stale(target, suffix)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix,
                                        dir=target.parent)
    except OSError as e:
        raise _naming(e, path) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, mode, newline=newline) as fh:
            yield fh
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as e:  # a full disk: the caller knows the target, not tmp
                raise _naming(e, path) from None
        try:
            os.chmod(tmp, file_mode)
        except OSError as e:
            raise _naming(e, path) from None
        if check is not None:
            check(tmp)
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise _naming(e, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_folder(target.parent)


def _naming(err: OSError, path: str | os.PathLike[str]) -> OSError:
    """``err`` (same class and errno) naming the user's ``path`` in place of the hidden
    temporary file, which is removed before the error is seen."""
    if err.errno is None:  # not the operating system's: no file name to change
        return err
    return type(err)(err.errno, f"{err.strerror} (writing through a temporary file in "
                     f"its folder)", os.fspath(path))

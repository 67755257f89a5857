"""Downloading data files into the data home: deadlines, a size cap, checks before keeping.

A file is streamed to a temporary name in its target folder (with a tqdm progress
bar), checked against its sha256 when one is known or by the caller's parser when
none is, and only then renamed into place (:func:`frankwolfe.compiled.atomic_files.atomic_write`):
an interrupted, refused or failed download leaves nothing behind, and a killed one
leaves a ``.part`` file that the next download of the same file sweeps.  A data set
of several files (CoNLL-2000's archive, the CMU house folder) is staged in a folder
``.<data set>.staging.<host>.<pid>.<random>`` of the data home (:func:`staging_folder`),
removed when the fetch ends; one left by a killed process is swept by the next fetch
of the data set once its process is gone (:func:`sweep_staging`).

Every wait is bounded: the connection by ``connect_timeout``, each read by
``read_timeout``, and the whole transfer by ``deadline`` (a server trickling two
bytes every two seconds never trips a read timeout); a response longer than
``max_bytes`` is refused as soon as it is announced or read.

urllib, not pooch: pooch (as scipy and scikit-image use it) downloads through
``requests`` with one ``timeout`` that bounds the connection and each read, not the
transfer, and has no size cap, so a trickling server or an endless stream keeps it
waiting or writing; both would need a downloader of our own, and what pooch would
add beyond it (its registry, retries, progress) is the few lines here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from frankwolfe.compiled.atomic_files import STALE_SECONDS, atomic_write, fsync_folder

from .home import ENV_HOME

__all__ = ["ENV_URL", "DownloadError", "download", "sha256_of", "replace_folder",
           "staging_folder", "sweep_staging", "DEFAULT_MAX_BYTES", "CONNECT_TIMEOUT",
           "READ_TIMEOUT", "DEADLINE"]

#: a mirror that replaces every origin: ``<mirror>/<data set>/<file>`` (tests, offline sites)
ENV_URL = "FRANKWOLFE_DATA_URL"
#: the largest file a download keeps (the largest data file of the collections is ~100 MB)
DEFAULT_MAX_BYTES = 512 << 20
#: the defaults of :func:`download`'s waits, seconds (read at each call: a site or a
#: test may set them)
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 60.0
DEADLINE = 900.0
_CHUNK = 1 << 16


class DownloadError(OSError):
    """A download failed, ran past its deadline or size cap, or gave a file that does
    not match its checksum or does not parse.

    ``status`` is the HTTP status the server answered with when it refused the file
    (404 for a file it does not have), else ``None``.
    """

    def __init__(self, *args: Any, status: int | None = None) -> None:
        super().__init__(*args)
        self.status = status


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The sha256 hex digest of the file ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _opener(sockets: list[Any]) -> Any:
    """A urllib opener that records the socket of each connection it opens, so that
    every read can be given the time left before the deadline (urllib sets one
    timeout, for the connection and each read alike)."""
    import http.client
    import urllib.request

    class _HTTP(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)

    class _HTTPS(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)

    class _HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(_HTTP, req)

    class _HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(_HTTPS, req)

    return urllib.request.build_opener(_HTTPHandler, _HTTPSHandler)


def download(url: str, target: Path, sha256: str | None, *, progress: bool = True,
             connect_timeout: float | None = None, read_timeout: float | None = None,
             deadline: float | None = None, max_bytes: int | None = None,
             check: Callable[[Path], Any] | None = None) -> Path:
    """Download ``url`` to ``target`` through a temporary file; returns ``target``.

    Parameters
    ----------
    url : str
    target : Path
        Where the file is kept (its folder is created).
    sha256 : str or None
        The published digest; the file is kept only when it matches.
    progress : bool, default True
        A tqdm progress bar.
    connect_timeout, read_timeout : float, seconds, optional
        The longest wait for the connection (and the response's headers), and for
        each read of the body; default :data:`CONNECT_TIMEOUT`, :data:`READ_TIMEOUT`.
    deadline : float, seconds, optional
        The longest the whole download may take; default :data:`DEADLINE`.
    max_bytes : int, optional
        The largest file kept; default :data:`DEFAULT_MAX_BYTES`.
    check : callable, optional
        Called with the temporary file's path before it is kept (a parser: an
        exception from it refuses the file).

    Raises
    ------
    DownloadError
        Naming the URL and the folder where the file can be put by hand, when the
        server cannot be reached, a timeout, the deadline or the size cap is
        passed, the transfer stops early, the sha256 is not ``sha256`` or
        ``check`` refuses the file; nothing is kept then.
    """
    # imported here: every loader imports this module, few calls download, and tqdm.auto
    # and urllib.request bring many modules and much memory at import
    # (benchmarks/README.md, "Measurements behind code choices")
    import http.client
    import urllib.error

    from tqdm.auto import tqdm

    connect_timeout = CONNECT_TIMEOUT if connect_timeout is None else connect_timeout
    read_timeout = READ_TIMEOUT if read_timeout is None else read_timeout
    deadline = DEADLINE if deadline is None else deadline
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    target.parent.mkdir(parents=True, exist_ok=True)
    by_hand = (f"Download it by hand from {url} and put it at {target} (folder "
               f"{target.parent}), or set {ENV_HOME} to a folder that holds it.")
    start = time.monotonic()

    def left() -> float:
        return deadline - (time.monotonic() - start)

    def past_deadline(got: int) -> DownloadError:
        return DownloadError(f"download of {url} passed its deadline of {deadline:g} s "
                             f"({got} bytes received); nothing was kept. {by_hand}")

    def verify(tmp: Path) -> None:
        if sha256 is not None:
            digest = sha256_of(tmp)
            if digest != sha256:
                raise DownloadError(f"{url}: sha256 {digest} does not match the published "
                                    f"{sha256}; the file was not kept. {by_hand}")
        if check is not None:
            try:
                check(tmp)
            except Exception as e:
                why = str(e).replace(str(tmp), url)  # the temporary file is gone: name the URL
                raise DownloadError(f"{url} is not a valid file ({type(e).__name__}: {why}); "
                                    f"it was not kept. {by_hand}") from e

    sockets: list[Any] = []
    got = 0
    # the deadline also while urllib reads the status line and headers, where no read of
    # ours sets a timeout (a server trickling one header byte per read timeout held it for
    # hours): at the deadline a watchdog shuts the connections, which ends any read
    fired = threading.Event()

    def watchdog() -> None:
        fired.set()
        for s in list(sockets):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed already
                pass

    timer = threading.Timer(max(left(), 0.0), watchdog)
    timer.daemon = True
    timer.start()
    try:
        with atomic_write(target, "wb", check=verify, suffix=".part") as out:
            try:
                resp = _opener(sockets).open(url, timeout=min(connect_timeout, max(left(), 0.01)))
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
                if left() <= 0 or fired.is_set():
                    raise past_deadline(0) from e
                raise DownloadError(f"could not download {url}: {e}. {by_hand}",
                                    status=getattr(e, "code", None)) from e
            with resp:
                size = resp.headers.get("Content-Length")
                total = int(size) if size and size.isdigit() else None
                if total is not None and total > max_bytes:
                    raise DownloadError(f"{url} announces {total} bytes, more than the "
                                        f"{max_bytes} a download keeps; nothing was kept. "
                                        f"{by_hand}")
                with tqdm(total=total, unit="B", unit_scale=True, desc=target.name,
                          disable=not progress, leave=False) as bar:
                    while True:
                        remaining = left()
                        if remaining <= 0:
                            raise past_deadline(got)
                        if sockets:
                            sockets[-1].settimeout(min(read_timeout, remaining))
                        try:
                            block = resp.read1(_CHUNK)
                        except TimeoutError as e:
                            if left() <= 0 or fired.is_set():
                                raise past_deadline(got) from e
                            raise DownloadError(f"download of {url} timed out: no data for "
                                                f"{read_timeout:g} s ({got} bytes received); "
                                                f"nothing was kept. {by_hand}") from e
                        except (http.client.HTTPException, OSError, ValueError) as e:
                            if fired.is_set():
                                raise past_deadline(got) from e
                            raise DownloadError(f"could not download {url}: {e}. "
                                                f"{by_hand}") from e
                        if not block:
                            if fired.is_set():  # the watchdog's shutdown, not the end
                                raise past_deadline(got)
                            break
                        got += len(block)
                        if got > max_bytes:
                            raise DownloadError(f"{url} sent more than the {max_bytes} bytes "
                                                f"a download keeps; nothing was kept. {by_hand}")
                        out.write(block)
                        bar.update(len(block))
            if total is not None and got != total:
                raise DownloadError(f"download of {url} stopped after {got} of {total} bytes. "
                                    f"{by_hand}")
    finally:
        timer.cancel()
        for s in sockets:
            s.close()
    return target


def replace_folder(tmp: Path, target: Path) -> None:
    """Move the files of the finished folder ``tmp`` into ``target`` (merging)."""
    target.mkdir(parents=True, exist_ok=True)
    folders = set()
    for src in sorted(tmp.rglob("*")):
        if src.is_file():
            dst = target / src.relative_to(tmp)
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)  # each file was fsynced when it was downloaded
            folders.add(dst.parent)
    for folder in sorted(folders):  # the renames survive a power cut
        fsync_folder(folder)


def _staging_prefix(name: str) -> str:
    return f".{name}.staging."


def _pid_alive(pid: int) -> bool:
    """Whether the process ``pid`` of this host runs (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none; a number no process has
        return False
    except OSError:  # another user's (PermissionError), or no way to ask: kept
        return True
    return True


def sweep_staging(home: Path, name: str, age: float = STALE_SECONDS) -> None:
    """Remove the staging folders of the data set ``name`` in ``home`` left by killed
    fetches: those of this host whose process is gone, and those of another host (a
    data home on shared storage, where its process cannot be asked) untouched for
    ``age`` seconds, as the ``.part`` files of
    :func:`~frankwolfe.compiled.atomic_files.sweep_stale`.  A live fetch's folder is
    never removed."""
    prefix = _staging_prefix(name)
    host = socket.gethostname()
    now = time.time()
    try:
        candidates = [p for p in home.glob(f"{prefix}*") if p.is_dir()]
    except OSError:
        return
    for p in candidates:
        owner, _, pid = p.name[len(prefix):].rpartition(".")[0].rpartition(".")
        try:
            if owner == host and pid.isdigit():
                stale = not _pid_alive(int(pid))
            else:
                stale = now - p.stat().st_mtime > age
        except OSError:  # gone meanwhile
            continue
        if stale:
            shutil.rmtree(p, ignore_errors=True)  # not ours to remove: left as it is


@contextlib.contextmanager
def staging_folder(home: Path, name: str) -> Iterator[Path]:
    """A new folder ``.<name>.staging.<host>.<pid>.<random>`` in ``home`` (created) for
    the files of a fetch until they move into place, removed on the way out.  The
    stale ones of killed fetches are the caller's to sweep (:func:`sweep_staging`), on
    every call, also when nothing is downloaded."""
    home.mkdir(parents=True, exist_ok=True)
    # the host and the pid name the owner: the next fetch removes the folder once the
    # owner is gone (a killed process runs no cleanup of its own)
    tmp = Path(tempfile.mkdtemp(prefix=f"{_staging_prefix(name)}{socket.gethostname()}."
                                       f"{os.getpid()}.", dir=home))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

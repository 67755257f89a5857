"""Downloading data files into the data home: sha256 checks, nothing kept on failure.

A file is streamed to a temporary name in its target folder (with a tqdm
progress bar), checked against its sha256 when one is known, and only then
renamed into place, so an interrupted or corrupted download leaves nothing
behind.  urllib only: no extra dependency.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .home import ENV_HOME

__all__ = ["ENV_URL", "DownloadError", "download", "sha256_of", "replace_folder"]

#: a mirror that replaces every origin: ``<mirror>/<data set>/<file>`` (tests, offline sites)
ENV_URL = "FRANKWOLFE_DATA_URL"
_CHUNK = 1 << 16


class DownloadError(OSError):
    """A download failed or gave a file that does not match its checksum."""


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The sha256 hex digest of the file ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, target: Path, sha256: str | None, *, progress: bool = True,
             timeout: float = 60.0) -> Path:
    """Download ``url`` to ``target`` through a temporary file; returns ``target``.

    Raises
    ------
    DownloadError
        Naming the URL and the folder where the file can be put by hand, when
        the server cannot be reached, the transfer stops early, or the file's
        sha256 is not ``sha256``; nothing is kept then.
    """
    # imported here: every loader imports this module, few calls download (tqdm.auto
    # and urllib.request cost about 20 MB and 70 modules at import)
    import http.client
    import urllib.error
    import urllib.request

    from tqdm.auto import tqdm

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    by_hand = (f"Download it by hand from {url} and put it at {target} (folder "
               f"{target.parent}), or set {ENV_HOME} to a folder that holds it.")
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    size = resp.headers.get("Content-Length")
                    total = int(size) if size and size.isdigit() else None
                    with tqdm(total=total, unit="B", unit_scale=True, desc=target.name,
                              disable=not progress, leave=False) as bar:
                        got = 0
                        for block in iter(lambda: resp.read(_CHUNK), b""):
                            out.write(block)
                            got += len(block)
                            bar.update(len(block))
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
                raise DownloadError(f"could not download {url}: {e}. {by_hand}") from e
            if total is not None and got != total:
                raise DownloadError(f"download of {url} stopped after {got} of {total} bytes. "
                                    f"{by_hand}")
        if sha256 is not None:
            digest = sha256_of(tmp)
            if digest != sha256:
                raise DownloadError(f"{url}: sha256 {digest} does not match the published "
                                    f"{sha256}; the file was not kept. {by_hand}")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def replace_folder(tmp: Path, target: Path) -> None:
    """Move the files of the finished folder ``tmp`` into ``target`` (merging)."""
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted(tmp.rglob("*")):
        if src.is_file():
            dst = target / src.relative_to(tmp)
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)

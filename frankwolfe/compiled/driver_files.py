"""The folder of generated pass drivers: where it is, what names a driver, loading one,
and the sweep of old entries.

A driver (see :mod:`.driver`) is a small module written out under
:func:`drivers_folder`, so that numba caches its functions across processes like any
kernel.  Its file name is a hash of its whole text: the imports of the kernels (their
module names included), the flags, the pass template, the modules of the records it is
called with and a stamp of the sources of every package involved (numba's cache does
not see changes of the functions a cached function calls).  The folder is named for the
Python implementation, numba and frankwolfe versions, so environments sharing
``~/.cache`` never read each other's drivers.

Nothing here is fatal: an unwritable folder, a damaged or vanished file make
:func:`load_driver` return ``None``, and the caller compiles in memory.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from .atomic_files import atomic_write

__all__ = ["DRIVER_PREFIX", "drivers_root", "drivers_folder", "numba_cache_dirs",
           "source_roots", "sources_stamp", "record_modules", "load_driver", "sweep",
           "remove_driver"]

#: module (and file) names of the drivers; ``frankwolfe._numba_hooks`` knows it too
DRIVER_PREFIX = "_fw_pass_"
#: a driver not used for this long is removed by the sweep
MAX_AGE_DAYS = 30.0
_DAY = 86400.0
#: entries younger than this are never removed (a process may be loading them)
_GRACE = 3600.0
#: the most entries one sweep looks at (it stays cheap in a crowded folder)
_SWEEP_LIMIT = 2000


def drivers_root() -> Path:
    """The parent of every environment's driver folder: ``$NUMBA_CACHE_DIR``, else
    ``$XDG_CACHE_HOME``, else ``~/.cache``, then ``frankwolfe/drivers``."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or \
        str(Path.home() / ".cache")
    return Path(base) / "frankwolfe" / "drivers"


@functools.lru_cache(maxsize=1)
def _environment_key() -> str:
    import numba

    try:
        from importlib.metadata import version

        fw = version("frankwolfe")
    except Exception:  # not installed (a bare checkout on sys.path): the stamp still keys
        fw = "src"
    return f"{sys.implementation.cache_tag}-numba{numba.__version__}-fw{fw}"


def drivers_folder() -> Path:
    """This environment's driver folder (under :func:`drivers_root`, named for the
    Python, numba and frankwolfe versions)."""
    return drivers_root() / _environment_key()


def numba_cache_dirs(source_dir: Path) -> list[Path]:
    """The folders where numba may keep the cache of the functions of ``source_dir``:
    its ``__pycache__``, the same under ``$NUMBA_CACHE_DIR``, and numba's user-wide
    folder (used when ``__pycache__`` is not writable)."""
    dirs = [source_dir / "__pycache__"]
    try:
        from numba.core import config
        from numba.core.caching import _CacheLocator
        from numba.misc.appdirs import AppDirs

        sub = _CacheLocator.get_suitable_cache_subpath(str(source_dir / "x.py"))
        user_dir = getattr(config, "CACHE_DIR", "")
        if user_dir:
            dirs.append(Path(user_dir) / sub)
        dirs.append(Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / sub)
    except Exception:  # pragma: no cover - another numba: __pycache__ only
        pass
    return dirs


# -- the key --------------------------------------------------------------------------


def source_roots(modules: Iterable[str]) -> list[Path] | None:
    """The top-level package folder of each module (or the file of a top-level module or
    script), whose sources the stamp covers; ``None`` when a module has no source file."""
    roots = set()
    for mod in modules:
        name = getattr(sys.modules.get(mod), "__file__", None)
        if not name or not name.endswith(".py"):
            return None
        file = Path(name).resolve()
        path = file.parent
        if not (path / "__init__.py").exists():  # a top-level module or script
            roots.add(file)
            continue
        while (path.parent / "__init__.py").exists():
            path = path.parent
        roots.add(path)
    return sorted(roots)


def sources_stamp(roots: Iterable[Path]) -> str:
    """Hash of the path, size and mtime of every source file under ``roots``."""
    files: set[Path] = set()
    for root in roots:
        if root.is_dir():
            files.update(root.rglob("*.py"))
        else:
            files.add(root)
    h = hashlib.sha1()
    for f in sorted(files):
        try:
            st = f.stat()
        except OSError:
            h.update(f"{f}:missing;".encode())
            continue
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def record_modules(*records: Any) -> list[str]:
    """The modules of the classes of ``records`` and of the records inside them (typed
    records are named tuples): numba's cache index names them, so a driver called with
    a record of another module name is another driver."""
    found: set[str] = set()

    def walk(obj: Any, depth: int) -> None:
        if not isinstance(obj, tuple) or depth > 4:
            return
        mod = type(obj).__module__
        if mod != "builtins":
            found.add(mod)
        for item in obj:
            walk(item, depth + 1)

    for rec in records:
        walk(rec, 0)
    return sorted(found)


def _header_value(text: str, key: str) -> str | None:
    prefix = f"# {key}: "
    for line in text.splitlines()[:8]:
        if line.startswith(prefix):
            return line[len(prefix):]
    return None


def header(roots: list[Path], stamp: str, records: list[str]) -> str:
    """The comment lines that open a driver: what the sweep checks, and what keys it."""
    sources = os.pathsep.join(str(r) for r in roots)
    return (f"# sources: {sources}\n# stamp: {stamp}\n"
            f"# records: {', '.join(records) or '-'}\n")


# -- loading --------------------------------------------------------------------------


#: one import of a driver at a time: the module is in sys.modules before its body has
#: run, and a second thread found it there half-made ("no attribute 'run_pass'")
_LOADING = threading.RLock()


def load_driver(text: str) -> ModuleType | None:
    """The driver module of source ``text``, written to (or found in) the driver folder
    and imported; ``None`` when that cannot be done (the caller compiles in memory)."""
    with _LOADING:
        return _load_driver(text)


def _load_driver(text: str) -> ModuleType | None:
    tag = hashlib.sha1(text.encode()).hexdigest()[:20]
    name = f"{DRIVER_PREFIX}{tag}"
    try:
        folder = drivers_folder()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.py"
        loaded = sys.modules.get(name)
        if loaded is not None and getattr(loaded, "__file__", None) == str(path):
            return loaded
        try:
            current = path.read_text()
        except (OSError, UnicodeDecodeError):  # missing, or garbage: written afresh
            current = None
        if current != text:
            # atomic: concurrent processes see whole files, a failed write leaves none;
            # readable by all, as numba's own files: a cache built by one user (a Docker
            # build) serves another
            with atomic_write(path, "w", file_mode=0o644) as fh:
                fh.write(text)
        else:
            _mark_used(path)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - a .py file has one
            return None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    except Exception:  # unwritable folder, a file swept away meanwhile, ...
        return None
    sweep_once(folder)
    return module


def _mark_used(path: Path) -> None:
    """Set the access time of a driver file to now (once a day at most), keeping its
    modification time: numba's source stamp reads the latter, the sweep the former."""
    try:
        st = path.stat()
        now = time.time()
        if now - st.st_atime > _DAY:
            os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))
    except OSError:
        pass


# -- the sweep --------------------------------------------------------------------------

_swept = False


def sweep_once(folder: Path) -> None:
    """:func:`sweep` once per process, and once a day across processes."""
    global _swept
    if _swept:
        return
    _swept = True
    root = folder.parent
    marker = root / ".last_sweep"
    try:
        if time.time() - marker.stat().st_mtime < _DAY:
            return
    except OSError:
        pass
    try:
        marker.touch()  # first: concurrent processes skip their sweep
        sweep(root, keep=folder)
    except OSError:
        pass


def _last_use(path: Path) -> float:
    st = path.stat()
    return max(st.st_atime, st.st_mtime)


def remove_driver(path: Path) -> int:
    """Remove a driver file and numba's cache files of it; the bytes freed."""
    freed = 0
    stem = path.stem
    for d in numba_cache_dirs(path.parent):
        if d.is_dir():
            for f in d.glob(f"{stem}.*"):
                freed += _unlink(f)
    return freed + _unlink(path)


def _unlink(path: Path) -> int:
    try:
        size = path.stat().st_size
        path.unlink()
        return size
    except OSError:
        return 0


def _is_stale(path: Path, stamps: dict[str, str]) -> bool:
    """Whether the sources a driver was generated from have changed since (a new
    driver replaced it); ``stamps`` memoizes the stamps of the sweep."""
    try:
        st = path.stat()
        with path.open() as fh:
            text = fh.read(4096)
        # reading is no use: the access time stays the last use's
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    except UnicodeDecodeError:  # garbage: whoever needs it writes it again
        return True
    except OSError:
        return False
    sources, stamp = _header_value(text, "sources"), _header_value(text, "stamp")
    if sources is None or stamp is None:  # an older layout: the age rule alone decides
        return False
    if sources not in stamps:
        stamps[sources] = sources_stamp(Path(p) for p in sources.split(os.pathsep))
    return stamps[sources] != stamp


def sweep(root: Path, keep: Path | None = None, now: float | None = None,
          max_age_days: float = MAX_AGE_DAYS) -> int:
    """Remove old entries under the drivers ``root``; the bytes freed.

    In each environment folder: drivers not used for ``max_age_days``, drivers whose
    sources changed since they were generated (after an hour without use), numba files
    and temporary files left without their driver.  Folders of other environments
    (``keep`` is this one's) go whole once none of their drivers was used for
    ``max_age_days``; drivers of the unversioned layout (files directly in ``root``,
    written by frankwolfe 0.2.0) one by one on the same rule.  Nothing used within the
    last hour is touched: another process may be loading it.
    """
    now = time.time() if now is None else now
    max_age = max_age_days * _DAY
    freed = 0
    stamps: dict[str, str] = {}
    budget = [_SWEEP_LIMIT]
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"):
        drivers = sorted(folder.glob(f"{DRIVER_PREFIX}*.py"))
        try:
            newest = max((_last_use(p) for p in drivers), default=folder.stat().st_mtime)
        except OSError:
            continue
        if folder != keep and now - newest > max_age:
            for d in numba_cache_dirs(folder)[1:]:
                freed += _remove_tree(d)
            freed += _remove_tree(folder)
        else:
            freed += _sweep_folder(folder, drivers, now, max_age, stamps, budget)
    legacy = sorted(root.glob(f"{DRIVER_PREFIX}*.py"))
    if legacy or (root / "__pycache__").is_dir():
        freed += _sweep_folder(root, legacy, now, max_age, stamps, budget)
    return freed


def _sweep_folder(folder: Path, drivers: list[Path], now: float, max_age: float,
                  stamps: dict[str, str], budget: list[int]) -> int:
    freed = 0
    for path in drivers:
        budget[0] -= 1
        if budget[0] < 0:
            return freed
        try:
            idle = now - _last_use(path)
        except OSError:
            continue
        if idle > max_age or (idle > _GRACE and _is_stale(path, stamps)):
            freed += remove_driver(path)
    for d in numba_cache_dirs(folder):
        freed += _remove_orphans(d, folder, now)
    for tmp in folder.glob(".*.tmp"):
        freed += _unlink(tmp) if _idle(tmp, now) > _GRACE else 0
    return freed


def _idle(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return 0.0


def _remove_orphans(cache_dir: Path, folder: Path, now: float) -> int:
    """numba's files of drivers that are gone (and its leftover temporary files)."""
    if not cache_dir.is_dir():
        return 0
    freed = 0
    for f in cache_dir.glob(f"{DRIVER_PREFIX}*"):
        stem = f.name.split(".", 1)[0]
        if not (folder / f"{stem}.py").exists() and _idle(f, now) > _GRACE:
            freed += _unlink(f)
    return freed


def _remove_tree(path: Path) -> int:
    if not path.is_dir():
        return 0
    size = 0
    for f in path.rglob("*"):
        try:
            size += f.stat().st_size if f.is_file() else 0
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)
    return size

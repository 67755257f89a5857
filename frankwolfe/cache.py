"""Where frankwolfe's compiled code is cached, and clearing it.

Two caches make calls fast from the first one of a process (after the first of all):

* **kernels**: numba's cache of frankwolfe's ``@njit(cache=True)`` functions
  (``.nbi`` index and ``.nbc`` data files).  numba puts them in ``$NUMBA_CACHE_DIR``
  when it is set, else in the ``__pycache__`` folders beside the sources, else (a
  read-only installation) in its user-wide folder (``~/.cache/numba``).
* **drivers**: the generated BCFW pass drivers (:mod:`frankwolfe.compiled.driver`), one
  small module per combination of kernels, under ``$NUMBA_CACHE_DIR``, else
  ``$XDG_CACHE_HOME``, else ``~/.cache``, then ``frankwolfe/drivers/<environment>``
  (``<environment>``: the Python, numba and frankwolfe versions), with numba's cache of
  them beside them.  Drivers not used for 30 days are removed automatically.

Both are safe to delete at any time: what is missing is compiled again on first use.
``python -m frankwolfe.compile --clear`` calls :func:`clear_cache`, and
``python -m frankwolfe.compile --all`` fills the caches ahead of time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .compiled import driver_files

__all__ = ["CacheLocation", "CacheInfo", "cache_info", "clear_cache"]

_NUMBA_SUFFIXES = (".nbi", ".nbc")


@dataclass(frozen=True)
class CacheLocation:
    """One place holding cached compiled code.

    Attributes
    ----------
    kind : str
        ``"kernels"`` (numba's cache of frankwolfe's functions), ``"other kernels"``
        (the same where numba does not look under the current settings, e.g. beside the
        sources while ``$NUMBA_CACHE_DIR`` is set), ``"drivers"`` (this environment's
        pass drivers and numba's cache of them) or ``"other drivers"`` (driver folders
        of other environments, swept after 30 days without use).
    path : pathlib.Path
        The folder (for kernels beside the sources: the package folder whose
        ``__pycache__`` folders hold them).
    files : int
        Number of cache files.
    size : int
        Their size in bytes.
    entries : int
        Compiled functions (numba index files) for kernels; driver modules for drivers.
    """

    kind: str
    path: Path
    files: int
    size: int
    entries: int
    paths: tuple[Path, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class CacheInfo:
    """What :func:`cache_info` found.

    Attributes
    ----------
    locations : tuple of CacheLocation
        The places that hold cache files (empty places are left out).
    drivers_folder : pathlib.Path
        This environment's driver folder (whether it exists or not).
    """

    locations: tuple[CacheLocation, ...]
    drivers_folder: Path

    @property
    def size(self) -> int:
        """Total size in bytes."""
        return sum(loc.size for loc in self.locations)

    @property
    def files(self) -> int:
        """Total number of files."""
        return sum(loc.files for loc in self.locations)

    def __str__(self) -> str:
        if not self.locations:
            return f"frankwolfe cache: empty (drivers go to {self.drivers_folder})"
        lines = [f"frankwolfe cache: {_size(self.size)} in {self.files} files"]
        for loc in self.locations:
            what = "drivers" if loc.kind.endswith("drivers") else "functions"
            lines.append(f"  {loc.kind:<13} {_size(loc.size):>9}  {loc.entries:>4} {what:<9} "
                         f"{loc.path}")
        return "\n".join(lines)


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def _package_roots() -> list[Path]:
    """The folders of frankwolfe's packages: the core and, where they live elsewhere
    (an editable install of a checkout), the applications."""
    core = Path(__file__).resolve().parent
    roots = [core]
    try:
        spec = importlib.util.find_spec("frankwolfe.applications")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(loc).resolve()
        if not path.is_relative_to(core) and path not in roots:
            roots.append(path)
    return roots


def _source_dirs(root: Path) -> list[Path]:
    return sorted({p.parent for p in root.rglob("*.py") if "__pycache__" not in p.parts})


def _kernel_locations() -> list[CacheLocation]:
    from numba.core import config

    # with $NUMBA_CACHE_DIR numba reads only there; the other folders are other settings'
    user_dir = getattr(config, "CACHE_DIR", "")
    groups: dict[tuple[str, Path], list[Path]] = {}
    for root in _package_roots():
        for src in _source_dirs(root):
            in_tree, *elsewhere = driver_files.numba_cache_dirs(src)
            # beside the sources: reported per package; elsewhere: per numba folder
            for cache_dir, label in [(in_tree, root)] + [(d, d.parent) for d in elsewhere]:
                if cache_dir.is_dir():
                    used = not user_dir or cache_dir.is_relative_to(user_dir)
                    found = [f for f in cache_dir.iterdir() if f.suffix in _NUMBA_SUFFIXES]
                    groups.setdefault(("kernels" if used else "other kernels", label),
                                      []).extend(found)
    return [_location(kind, path, files) for (kind, path), files in groups.items() if files]


def _driver_locations() -> list[CacheLocation]:
    root = driver_files.drivers_root()
    here = driver_files.drivers_folder()
    out: list[CacheLocation] = []
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"):
        files = [f for f in folder.rglob("*") if f.is_file()]
        files += _numba_files_elsewhere(folder)
        if files:
            out.append(_location("drivers" if folder == here else "other drivers", folder,
                                 files))
    # the unversioned layout of frankwolfe 0.2.0: drivers directly in the root
    legacy = list(root.glob(f"{driver_files.DRIVER_PREFIX}*"))
    if (root / "__pycache__").is_dir():
        legacy += [f for f in (root / "__pycache__").iterdir() if f.is_file()]
    legacy += _numba_files_elsewhere(root)
    if legacy:
        out.append(_location("other drivers", root, legacy))
    return out


def _numba_files_elsewhere(folder: Path) -> list[Path]:
    """numba's files of the drivers of ``folder`` kept outside it ($NUMBA_CACHE_DIR)."""
    files: list[Path] = []
    for d in driver_files.numba_cache_dirs(folder)[1:]:
        if d.is_dir():
            files += [f for f in d.iterdir() if f.is_file()]
    return files


def _location(kind: str, path: Path, files: list[Path]) -> CacheLocation:
    size = 0
    for f in files:
        try:
            size += f.stat().st_size
        except OSError:  # removed meanwhile
            pass
    if kind.endswith("kernels"):
        entries = sum(f.suffix == ".nbi" for f in files)
    else:
        entries = sum(f.suffix == ".py" and f.name.startswith(driver_files.DRIVER_PREFIX)
                      for f in files)
    return CacheLocation(kind, path, len(files), size, entries, tuple(files))


def cache_info() -> CacheInfo:
    """Where frankwolfe's compiled code is cached, with sizes and entries.

    Returns
    -------
    CacheInfo
        One :class:`CacheLocation` per place holding cache files; ``str()`` of it is a
        short table.

    Examples
    --------
    >>> from frankwolfe.cache import cache_info
    >>> info = cache_info()
    >>> info.size >= 0 and info.drivers_folder.name.startswith("cpython")
    True
    """
    return CacheInfo(tuple(_kernel_locations() + _driver_locations()),
                     driver_files.drivers_folder())


def clear_cache(kernels: bool = True, drivers: bool = True) -> int:
    """Delete frankwolfe's cached compiled code; the bytes freed.

    Safe at any time: a running process keeps what it has loaded, and anything missing
    is compiled again on first use.  Other numba users' caches are not touched, nor
    frankwolfe's kernels where numba does not look under the current settings (the
    ``"other kernels"`` of :func:`cache_info`).

    Parameters
    ----------
    kernels : bool, default True
        Delete numba's cache of frankwolfe's functions.
    drivers : bool, default True
        Delete the driver folders (of every environment under the drivers folder) and
        numba's cache of them.

    Returns
    -------
    int
        Bytes freed.
    """
    freed = 0
    info = cache_info()
    for loc in info.locations:
        if loc.kind == "other kernels" or (loc.kind == "kernels" and not kernels) or \
                (loc.kind.endswith("drivers") and not drivers):
            continue
        for f in loc.paths:
            try:
                size = f.stat().st_size
                f.unlink()
                freed += size
            except OSError:
                pass
        if loc.kind.endswith("drivers") and loc.path != driver_files.drivers_root():
            shutil.rmtree(loc.path, ignore_errors=True)  # the folder's empty subfolders
    if drivers:
        marker = driver_files.drivers_root() / ".last_sweep"
        if marker.exists():
            os.unlink(marker)
    return freed

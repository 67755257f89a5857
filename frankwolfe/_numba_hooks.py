"""frankwolfe's hooks into numba's on-disk cache and compile events.

numba caches a ``cache=True`` function in files named after the source file, and
reads them back with ``pickle``.  Three things go wrong with that for a library
whose kernels are its speed:

* a damaged file (a truncated write, a disk error, garbage) raises from the
  call of the kernel (``UnpicklingError``, ``EOFError``, an LLVM parse error):
  numba catches nothing there;
* the same source file imported under two module names shares one cache
  entry, whose pickled environment names the module it was compiled under; the
  other name then fails with ``ModuleNotFoundError`` (the applications refuse
  any name but ``frankwolfe.applications``, so the checkout's top-level
  ``applications`` cannot be one of them; a user's module can);
* nobody is told that a first call waits for a compilation.

:func:`install` patches numba's ``Cache`` class for frankwolfe's own functions
only (its packages and the generated pass drivers; any other function keeps
numba's behaviour): an unreadable entry is a cache miss (logged as a warning,
compiled again, and the fresh entry written over it), the cache files carry the
full module name, and a function without any writable cache folder (numba
refuses to decorate it) compiles in memory instead.  It also draws numba's
function ids at random (for every function: cached libraries of different
processes must never share a symbol between two different bodies, see
:func:`_random_function_ids`), and makes numba's comparison of compiler flags cheap
with the same results (:func:`_fast_flag_compare`).  It also registers a
listener of numba's ``numba:compile`` events that logs, at INFO on the
``frankwolfe`` logger, one line when one of those functions is about to be
compiled (numba fires the event only after a cache miss, so the line never
lies).  Without numba loaded yet it waits for
numba's import (by the first module that compiles a kernel) rather than importing it
itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["install", "is_ours"]

_LOG = logging.getLogger("frankwolfe")
_TARGET = "numba.core.caching"
#: the generated pass drivers' module names start with this (frankwolfe.compiled.driver)
DRIVER_PREFIX = "_fw_pass_"
_PACKAGE_DIR = Path(__file__).resolve().parent

_installed = False
_lock = threading.Lock()


def is_ours(py_func: Any) -> bool:
    """Whether ``py_func`` is frankwolfe's: a function of the ``frankwolfe`` package (its
    applications included: they import only as ``frankwolfe.applications``) or of a
    generated pass driver."""
    mod = getattr(py_func, "__module__", None) or ""
    return mod.partition(".")[0] == "frankwolfe" or mod.startswith(DRIVER_PREFIX)


def install() -> None:
    """Patch numba's cache for frankwolfe's functions and listen to its compile events
    (idempotent; deferred to numba's import when numba is not loaded yet)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        module = sys.modules.get(_TARGET)
        if module is None:
            sys.meta_path.insert(0, _AfterImport())
            return
    _patch(module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_patch` right after numba's ``caching`` module is executed (before any
    ``@njit(cache=True)`` function exists: numba's dispatcher imports it first)."""

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _TARGET:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and the other finders find the real spec
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _patch(caching: ModuleType) -> None:
    """Wrap ``Cache.__init__``, ``load_overload`` and ``save_overload`` (a numba without
    them keeps its own behaviour) and register the compile listener."""
    cache_cls = getattr(caching, "Cache", None)
    file_cls = getattr(caching, "IndexDataCacheFile", None)
    if cache_cls is None or file_cls is None or getattr(cache_cls, "_fw_patched", False):
        return
    try:
        init, load, save = cache_cls.__init__, cache_cls.load_overload, cache_cls.save_overload
    except AttributeError:  # pragma: no cover - another numba
        return

    def __init__(self: Any, py_func: Any) -> None:
        try:
            init(self, py_func)
        except RuntimeError:
            # no writable cache folder anywhere (numba's "no locator available"): numba
            # refuses the decorator, and importing frankwolfe would fail; compile in
            # memory instead, as a function without cache=True
            null = getattr(caching, "NullCache", None)
            if null is None or not is_ours(py_func):
                raise
            self.__class__ = null
            _no_cache_folder(py_func)
            return
        self._fw_ours = False
        if not is_ours(py_func):
            return
        try:
            # numba names the files after the source file; with the module's full name
            # two import names of one file keep apart entries (see the module docstring)
            impl = self._impl
            qual = getattr(py_func, "__qualname__", py_func.__name__)
            base = impl.get_filename_base(f"{py_func.__module__}.{qual}",
                                          getattr(sys, "abiflags", ""))
            self._cache_file = _process_safe(file_cls)(
                cache_path=self._cache_path, filename_base=base,
                source_stamp=impl.locator.get_source_stamp())
            self._fw_ours = True
        except Exception:  # pragma: no cover - another numba: its own naming stays
            self._fw_ours = True

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        try:
            return load(self, sig, target_context)
        except Exception as exc:
            if not getattr(self, "_fw_ours", False):
                raise
            _LOG.warning("frankwolfe: ignoring an unreadable numba cache entry of %s "
                         "(%s: %s); compiling it again", _name(self), type(exc).__name__, exc)
            return None

    def save_overload(self: Any, sig: Any, data: Any) -> None:
        try:
            return save(self, sig, data)
        except Exception as exc:
            if not getattr(self, "_fw_ours", False):
                raise
            failure = exc
        # numba reads the index before adding to it: an unreadable one is replaced by an
        # empty one (atomically, by numba's writer), then the entry is written again
        try:
            self._cache_file._load_index()
        except Exception:
            try:
                self._cache_file.flush()
                return save(self, sig, data)
            except Exception as exc:
                failure = exc
        _LOG.warning("frankwolfe: could not write the numba cache entry of %s (%s: %s); "
                     "it stays compiled in this process only", _name(self),
                     type(failure).__name__, failure)
        return None

    cache_cls.__init__ = __init__
    cache_cls.load_overload = load_overload
    cache_cls.save_overload = save_overload
    cache_cls._fw_patched = True
    _random_function_ids()
    _fast_flag_compare()
    _listen()


class _RandomIds:
    """An endless iterator of random 63-bit integers (``next`` is all numba calls)."""

    def __iter__(self) -> _RandomIds:
        return self

    def __next__(self) -> int:
        import secrets

        return secrets.randbits(63)


def _random_function_ids() -> None:
    """Draw numba's function ids at random instead of counting them from 1 per process.

    numba puts the id in each compiled function's symbol, and a library loaded from the
    cache keeps the ids of the process that compiled it.  Two processes counting alike
    (pytest-xdist workers, a user's pool) give one id to two different functions of one
    name and argument types (numba's own helpers made per call, such as its sort
    kernels); a third process loading both entries links one body for both, and a
    kernel then runs another's helper (numba issue 10486; seen as garbage sparse
    features in one CI worker).  Random ids keep the symbols of distinct functions
    apart across processes; they change no cache key."""
    bytecode = sys.modules.get("numba.core.bytecode")
    if bytecode is None:
        import importlib

        bytecode = importlib.import_module("numba.core.bytecode")
    ident = getattr(bytecode, "FunctionIdentity", None)
    if ident is not None and hasattr(ident, "_unique_ids"):
        ident._unique_ids = _RandomIds()


def _fast_flag_compare() -> None:
    """Make numba's comparison of compiler flags cheap, with its results unchanged.

    Typing a call through an ``@overload`` looks its implementation up in a dict keyed on
    the compiler flags in force (``TargetConfig``, 45 options).  numba hashes flags by
    their sorted option names (the same hash for all flags of a class) and compares two
    by building both dicts of all 45 values, so every lookup ran that comparison, tens of
    thousands of times in a cold sparse lasso, a visible share of its CPU seconds
    (benchmarks/README.md, "Measurements behind code choices").  Here the hash is numba's value,
    computed once per class; a comparison looks at the options set on either side (an
    option set on neither is the class's one default object on both sides; a value
    copied from another class's flags under a name this class lacks is not one of its
    values, as in numba's ``values()``).  A numba whose flags hash or store their
    options otherwise keeps its own methods."""
    try:
        targetconfig = importlib.import_module("numba.core.targetconfig")
        cls, option = targetconfig.TargetConfig, targetconfig.Option
        numba_hash, numba_eq = cls.__hash__, cls.__eq__
        if getattr(cls, "_fw_fast_compare", False):
            return

        class Probe(cls):  # type: ignore[misc, valid-type]
            __slots__ = ()
            one = option(bool, default=False, doc="")
            two = option(int, default=0, doc="")

        probe = Probe()
        probe.one = True
        if (numba_hash(probe) != hash(tuple(sorted(Probe.options)))
                or set(probe._values) != {"one"} or Probe.options["two"].default != 0):
            return
    except Exception:  # pragma: no cover - another numba
        return
    hashes: dict[type, int] = {}

    def __hash__(self: Any) -> int:
        kind = type(self)
        h = hashes.get(kind)
        if h is None:
            h = hashes[kind] = hash(tuple(sorted(kind.options)))
        return h

    def __eq__(self: Any, other: Any) -> Any:
        if self is other:
            return True
        kind = type(self)
        if type(other) is not kind:
            return numba_eq(self, other)
        mine, theirs = self._values, other._values
        options = kind.options
        for name in mine.keys() | theirs.keys():
            option = options.get(name)
            if option is None:
                continue
            a, b = mine.get(name, option.default), theirs.get(name, option.default)
            if not (a is b or a == b):  # as a dict comparison compares values
                return False
        return True

    cls.__hash__ = __hash__
    cls.__eq__ = __eq__
    cls._fw_fast_compare = True


_safe_classes: dict[type, type] = {}


def _process_safe(file_cls: type) -> type:
    """numba's ``IndexDataCacheFile`` with a data file name of each entry's own.

    numba numbers an index's data files (``name.1.nbc``, ``name.2.nbc``, ...): two
    processes compiling a function for two signatures at once (pytest-xdist workers,
    a user's process pool) both read the index, both take number 1, and the index one
    of them writes last pairs its signature with the machine code the other wrote,
    which then runs with the wrong argument types (seen as wrong results under
    ``make test-min``).  Here each entry's data file has a random name and is written
    before the index that names it, and the index is read again just before it is
    written: a race can lose an entry (compiled again later), never mix two up."""
    safe = _safe_classes.get(file_cls)
    if safe is not None:
        return safe

    class ProcessSafeCacheFile(file_cls):
        def save(self, key: Any, data: Any) -> None:
            import uuid

            name = f"{self._index_name[:-len('.nbi')]}.{uuid.uuid4().hex[:12]}.nbc"
            self._save_data(name, data)
            overloads = self._load_index()
            overloads[key] = name
            self._save_index(overloads)
            self._sweep(set(overloads.values()))

        def _sweep(self, named: set[str]) -> None:
            """Delete this function's data files that its index no longer names (entries
            of older sources), once they are an hour old: younger ones may be another
            process's, written just before its index."""
            import os
            import time

            base = self._index_name[:-len(".nbi")]
            try:
                names = os.listdir(self._cache_path)
            except OSError:
                return
            old = time.time() - 3600
            for n in names:
                if n.startswith(base + ".") and n.endswith(".nbc") and n not in named:
                    path = os.path.join(self._cache_path, n)
                    try:
                        if os.stat(path).st_mtime < old:
                            os.remove(path)
                    except OSError:
                        pass

    _safe_classes[file_cls] = ProcessSafeCacheFile
    return ProcessSafeCacheFile


_warned_no_folder = False


def _no_cache_folder(py_func: Any) -> None:
    global _warned_no_folder
    if not _warned_no_folder:
        _warned_no_folder = True
        _LOG.warning("frankwolfe: no writable folder for numba's cache (from %s on): "
                     "the kernels compile in memory, in every process; set NUMBA_CACHE_DIR "
                     "to a writable folder", getattr(py_func, "__module__", "?"))


def _name(cache: Any) -> str:
    py = getattr(cache, "_py_func", None)
    return f"{getattr(py, '__module__', '?')}.{getattr(py, '__qualname__', '?')}"


# -- compile notices ---------------------------------------------------------------

_depth = threading.local()
#: modules (and driver modules) announced once already in this process
_announced: set[str] = set()


def _listen() -> None:
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - another numba
        return

    class CompileNotices(event.Listener):
        """One INFO line when one of frankwolfe's functions is about to be compiled (the
        outermost compilation only: the kernels a driver calls compile inside it)."""

        def on_start(self, ev: Any) -> None:
            depth = getattr(_depth, "n", 0)
            _depth.n = depth + 1
            if depth == 0:
                _announce(ev.data.get("dispatcher") if isinstance(ev.data, dict) else None)

        def on_end(self, ev: Any) -> None:
            _depth.n = max(getattr(_depth, "n", 1) - 1, 0)

    event.register("numba:compile", CompileNotices())


def _announce(dispatcher: Any) -> None:
    py = getattr(dispatcher, "py_func", None)
    if py is None or not is_ours(py):
        return
    mod = py.__module__ or ""
    # the generated module's docstring names its kernels (frankwolfe.compiled.driver)
    doc = (py.__globals__.get("__doc__") or "the BCFW pass driver").strip()
    key = f"{mod}:{doc}" if mod.startswith(DRIVER_PREFIX) else mod
    if key in _announced:  # one line per module: its kernels compile one after another
        return
    _announced.add(key)
    if mod == f"{DRIVER_PREFIX}memory":  # a kernel without an importable name
        _LOG.info("frankwolfe: compiling %s (in memory: not cached)", doc)
    elif mod.startswith(DRIVER_PREFIX):
        _LOG.info("frankwolfe: compiling %s (first call; cached afterwards)", doc)
    else:
        _LOG.info("frankwolfe: compiling the numba kernels of %s (first call; cached "
                  "afterwards)", mod)


# importing the module installs the hooks (frankwolfe/__init__.py imports it first)
install()

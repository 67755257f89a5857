"""``inner_kernel``: the decorator of numba kernels that only other kernels call.

``njit(cache=True, nogil=True)`` without the two entry points numba builds for a call
from Python (the CPython wrapper, which unboxes every argument, and the C callback):
a kernel that Python never calls compiles and caches without them.  Each wrapper is an
LLVM module of its own, optimized with the kernel's code linked in; for the kernels
under a pass driver they are a noticeable share of a first chain SSVM fit and of a
first lasso (benchmarks/README.md, "Measurements behind code choices").  Calling such
a kernel from Python raises ``TypeError``: give it the plain decorator instead.

Nor does an inner kernel's own code need machine code or whole-module optimization:
numba links each callee's LLVM module into every caller and optimizes the caller's
module with it (inlining across the kernels), so what an inner kernel's library made of
itself on its own, a fully optimized module with all its callees linked in and its
machine code, was never run.  :class:`_InnerLibrary` stops after the per-function
passes: the caller's one optimization covers the whole stack (else each level of the
kernel stack optimizes its callees again, a cost a first sparse lasso pays:
benchmarks/README.md, "Measurements behind code choices"), and the cache keeps the
kernel as LLVM bitcode for the callers a later process compiles.  Where numba's code
library lacks the hooks this needs (another numba), inner kernels compile as plain ones
without entry points.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as ll
import llvmlite.ir as llvmir
from numba import njit
from numba.core import cgutils
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler
from numba.core.registry import CPUDispatcher

__all__ = ["inner_kernel", "InnerKernel"]


class InnerKernel(CPUDispatcher):
    """The dispatcher of an :func:`inner_kernel`: numba code calls it as any other; a call
    from Python raises ``TypeError`` (numba would jump to the missing entry point: a
    segmentation fault)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is an "
                        "inner kernel (frankwolfe.compiled.inner_kernel): compiled without "
                        "an entry point for Python, only numba code can call it")

    def enable_caching(self) -> None:
        if _LAZY:
            self._cache = _InnerCache(self.py_func)
        else:  # pragma: no cover - another numba
            super().enable_caching()


def inner_kernel(fn: Any = None, *, fastmath: bool | set[str] = False) -> Any:
    """Compile ``fn`` as a kernel that only other numba kernels call.

    ``njit(cache=True, nogil=True)`` without the entry points for calls from Python
    (the CPython wrapper and the C callback): each is an LLVM module of its own,
    optimized with the kernel linked in, which a kernel under a pass driver never uses.
    Nor is the kernel optimized as a whole module or turned into machine code on its
    own: its callers link it in and optimize the whole stack once (its cache entry is
    LLVM bitcode).

    Parameters
    ----------
    fn : function, optional
        The kernel (``@inner_kernel``); without it, the decorator
        (``@inner_kernel(fastmath=True)``).
    fastmath : bool or set of str, default False
        numba's ``fastmath`` option: all of LLVM's fast-math flags, or the named ones
        (``{"reassoc", "contract"}`` lets loops of sums vectorize while infinities and
        NaNs keep their meaning).

    Returns
    -------
    InnerKernel, or the decorator
        A numba dispatcher callable from numba code; a call from Python raises
        ``TypeError``.

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> from frankwolfe.compiled import inner_kernel
    >>> @inner_kernel
    ... def _twice(a):
    ...     return 2.0 * a
    >>> @njit
    ... def total(x):
    ...     return _twice(x.sum())
    >>> float(total(np.ones(3)))
    6.0
    """
    # cache=False here: the cache is enabled once below, as the inner kernel's (numba's
    # own would be made first and thrown away, a cache folder probe per kernel at import)
    options: dict[str, Any] = {"cache": False, "nogil": True, "fastmath": fastmath,
                               "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
    if _LAZY:
        options["pipeline_class"] = _InnerCompiler

    def deco(f: Any) -> InnerKernel:
        disp = njit(**options)(f)
        disp.__class__ = InnerKernel  # the same object layout: only the Python call differs
        disp.enable_caching()
        return disp

    return deco if fn is None else deco(fn)


class _InnerLibrary(JITCodeLibrary):
    """numba's code library of an inner kernel: function passes only, no machine code.

    A caller links :meth:`_get_module_for_linking` (this module) into its own and
    optimizes the whole.  The engine gets only the kernel's environment pointers, which
    numba's ``get_executable`` writes after every compilation; the kernel's own symbols
    stay out of it, so its pointer is 0, as for any inner kernel.  A library read back
    from numba's object-code cache entries (made before inner kernels kept bitcode) is
    finalized as numba does.
    """

    @property
    def _from_object_code(self) -> bool:
        # numba enables object caching on the libraries it reads from object-code entries
        return bool(getattr(self, "_object_caching_enabled", False))

    def _optimize_final_module(self) -> None:
        if self._from_object_code:
            super()._optimize_final_module()

    def _finalize_final_module(self) -> None:
        full = self._final_module
        env = None if self._from_object_code else _environment_module(self, full)
        if env is None:  # numba's own way (for a module without environments too)
            super()._finalize_final_module()
            return
        self._verify_declare_only_symbols()
        self._finalize_dynamic_globals()
        self._final_module = env
        try:
            super()._finalize_final_module()
        finally:
            self._final_module = full

    def serialize_using_object_code(self) -> Any:
        # numba's cache calls this for every library; "bitcode" is its other kind
        self._ensure_finalized()
        return (self.name, "bitcode", self._get_module_for_linking().as_bitcode())


def _environment_module(library: _InnerLibrary, full: Any) -> Any:
    """An LLVM module defining only the environment pointers of ``full`` (numba's
    ``.NumbaEnv.`` globals: common, null until numba writes them), or None if ``full``
    has none (numba would then write through a null address)."""
    mod = library.codegen._create_empty_module(f"{library.name}.env")
    for gv in full.global_variables:
        if "NumbaEnv" in gv.name and not gv.is_declaration:
            g = llvmir.GlobalVariable(mod, cgutils.voidptr_t, gv.name)
            g.linkage = "common"
            g.initializer = cgutils.get_null_value(cgutils.voidptr_t)
    return ll.parse_assembly(str(mod)) if mod.global_values else None


class _InnerCompiler(Compiler):
    """numba's compiler pipeline with an :class:`_InnerLibrary` for the kernel."""

    def compile_extra(self, func: Any) -> Any:
        if self.state.library is None:
            self.state.library = _InnerLibrary(self.state.targetctx.codegen(),
                                               func.__qualname__)
        return super().compile_extra(func)


class _InnerCacheImpl(CompileResultCacheImpl):
    """Reads an inner kernel's cache entry back into an :class:`_InnerLibrary` (numba's
    codegen makes its own library class; it is swapped under numba's compiler lock,
    which every cache load holds)."""

    def rebuild(self, target_context: Any, payload: Any) -> Any:
        codegen = target_context.codegen()
        own = codegen._library_class
        codegen._library_class = _InnerLibrary
        try:
            return super().rebuild(target_context, payload)
        finally:
            codegen._library_class = own


class _InnerCache(FunctionCache):
    _impl_class = _InnerCacheImpl


#: whether this numba has what :class:`_InnerLibrary` overrides and calls
_LAZY = all(hasattr(JITCodeLibrary, name) for name in (
    "_optimize_final_module", "_finalize_final_module", "_verify_declare_only_symbols",
    "_finalize_dynamic_globals", "_get_module_for_linking", "_ensure_finalized",
    "serialize_using_object_code")) and hasattr(Compiler, "compile_extra")

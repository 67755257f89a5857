"""``inner_kernel``: the decorator of numba kernels that only other kernels call.

``njit(cache=True, nogil=True)`` without the two entry points numba builds for a call
from Python (the CPython wrapper, which unboxes every argument, and the C callback):
a kernel that Python never calls compiles and caches without them.  Each wrapper is an
LLVM module of its own, optimized with the kernel's code linked in; for the kernels
under a pass driver they cost 0.3-0.6 CPU-s of a first chain SSVM fit and about 1.5 s
of a first lasso (benchmarks/README.md, "First call").  Calling such a kernel from
Python raises ``TypeError``: give it the plain decorator instead.
"""

from __future__ import annotations

from typing import Any

from numba import njit
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


def inner_kernel(fn: Any = None, *, fastmath: bool | set[str] = False) -> Any:
    """Compile ``fn`` as a kernel that only other numba kernels call.

    ``njit(cache=True, nogil=True)`` without the entry points for calls from Python
    (the CPython wrapper and the C callback): each is an LLVM module of its own,
    optimized with the kernel linked in, which a kernel under a pass driver never uses.

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
    options: dict[str, Any] = {"cache": True, "nogil": True, "fastmath": fastmath,
                               "no_cpython_wrapper": True, "no_cfunc_wrapper": True}

    def deco(f: Any) -> InnerKernel:
        disp = njit(**options)(f)
        disp.__class__ = InnerKernel  # the same object layout: only the Python call differs
        return disp

    return deco if fn is None else deco(fn)

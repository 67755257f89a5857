"""``inner_kernel``: the decorator of numba kernels that only other kernels call.

``njit(cache=True, nogil=True)`` without the two entry points numba builds for a call
from Python (the CPython wrapper, which unboxes every argument, and the C callback):
a kernel that Python never calls compiles and caches without them.  Each wrapper is an
LLVM module of its own, optimized with the kernel's code linked in; for the kernels
under a pass driver they cost 0.3-0.6 CPU-s of a first chain SSVM fit and about 1.5 s
of a first lasso (benchmarks/README.md, "First call").  Calling such a kernel from
Python raises numba's ``TypeError``: give it the plain decorator instead.
"""

from __future__ import annotations

from typing import Any

from numba import njit

__all__ = ["inner_kernel"]


def inner_kernel(fn: Any = None, *, fastmath: bool = False) -> Any:
    """``@inner_kernel`` or ``@inner_kernel(fastmath=True)`` (see the module)."""
    deco = njit(cache=True, nogil=True, fastmath=fastmath, no_cpython_wrapper=True,
                no_cfunc_wrapper=True)
    return deco if fn is None else deco(fn)

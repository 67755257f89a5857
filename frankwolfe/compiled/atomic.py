"""An atomic ``a[i] += v`` for kernels whose threads write one array at once (lock-free
passes: a lost update of the shared gradient would mislead every later step's line search
until the pass's fold)."""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add"]


@intrinsic
def atomic_add(typingctx: Any, arr: Any, idx: Any, val: Any) -> Any:  # pragma: no cover
    """``arr[idx] += val`` as one atomic read-modify-write (LLVM's ``atomicrmw fadd``,
    monotonic order: no other access is ordered by it); ``arr`` a float64 array, ``idx``
    in range (not checked)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64):
        return None
    sig = types.void(arr, idx, types.float64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> None:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        value = context.cast(builder, args[2], signature.args[2], types.float64)
        builder.atomic_rmw("fadd", ptr, value, "monotonic")

    return sig, codegen

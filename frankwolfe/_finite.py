"""The finiteness check of arrays, shared by the objectives (gradients) and the LMOs
(directions), which do not import each other."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["all_finite", "check_finite"]

#: below this many entries the entrywise check is the cheaper one (no np.errstate)
_SMALL = 4096


def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of ``a`` is finite.

    A large array: ``a . a`` is NaN or inf when an entry is not (one BLAS pass, no
    temporary); only an overflowing sum needs the entrywise check.  A small one is
    checked entrywise at once: there the ``np.errstate`` that silences the overflow
    costs more than the check, and so does a reduction (``.all()``), hence the first
    False found by ``argmin``.
    """
    if a.size <= _SMALL:
        ok = np.isfinite(a)
        if ok.ndim != 1:
            ok = ok.reshape(-1)
        return bool(ok[ok.argmin()]) if ok.size else True
    flat = a.reshape(-1)
    with np.errstate(over="ignore"):  # an overflow is settled by the entrywise check
        s = np.dot(flat, flat)
    return math.isfinite(s) or bool(np.isfinite(a).all())


def check_finite(where: str, name: str, a: Any) -> None:
    """Raise ``ValueError`` when the dense or scipy.sparse array ``a`` (the argument
    ``name`` of ``where``) has a NaN or infinite entry, naming the first one."""
    sparse = hasattr(a, "tocoo") and not isinstance(a, np.ndarray)
    data = a.data if sparse else np.asarray(a)
    if all_finite(data):
        return
    if sparse:
        coo = a.tocoo()
        k = int(np.flatnonzero(~np.isfinite(coo.data))[0])
        at: Any = tuple(int(c[k]) for c in coo.coords)
        value = coo.data[k]
    else:
        k = int(np.flatnonzero(~np.isfinite(data.reshape(-1)))[0])
        at = tuple(int(i) for i in np.unravel_index(k, data.shape))
        value = data[at]
    where_at = at[0] if len(at) == 1 else at
    raise ValueError(f"{where}: `{name}` contains NaN or inf ({value} at index {where_at}); "
                     f"every entry must be finite")

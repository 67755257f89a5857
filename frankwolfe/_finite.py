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
    # a complex sum: math.isfinite dropped its imaginary part with a ComplexWarning
    finite = bool(np.isfinite(s)) if a.dtype.kind == "c" else math.isfinite(s)
    return finite or bool(np.isfinite(a).all())


def check_finite(where: str, name: str, a: Any) -> None:
    """Raise ``ValueError`` when ``a`` (the argument ``name`` of ``where``) has a NaN or
    infinite entry, naming the first one.

    ``a`` is a dense or scipy.sparse array (any format), or anything ``np.asarray`` takes
    (lists, pandas objects, scalars).  What holds no numbers (text, objects, ragged
    lists) is let through: the caller's own validation names that error.
    """
    sparse = hasattr(a, "tocoo") and not isinstance(a, np.ndarray)
    if sparse:
        if getattr(a, "format", None) not in ("csr", "csc", "coo", "bsr"):
            a = a.tocoo()  # dok has no .data, lil's holds lists, dia's holds padding
        data = a.data
    else:
        try:
            data = np.asarray(a)
        except ValueError:  # a ragged nested list: no single array to check
            return
    if data.dtype.kind not in "fc" or all_finite(data):  # integers are always finite
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

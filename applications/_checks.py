"""Input checks shared by the estimators and loaders of the applications."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from frankwolfe._sparse import issparse

__all__ = ["check_finite", "check_finite_examples"]


def _first_bad(a: Any) -> tuple[tuple[int, ...], Any] | None:
    if issparse(a):
        coo = sp.coo_matrix(a)
        bad = ~np.isfinite(coo.data)
        if not bad.any():
            return None
        k = int(np.argmax(bad))
        return (int(coo.row[k]), int(coo.col[k])), coo.data[k]
    bad = ~np.isfinite(a)
    if not bad.any():
        return None
    pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), a.shape))
    return pos, a[pos]


def _numeric(x: Any) -> Any:
    """``x`` as a float/complex array, or None when it holds no floating-point numbers
    (integer ids can never be NaN or inf)."""
    if issparse(x):
        return x if x.dtype.kind in "fc" else None
    if isinstance(x, np.ndarray):
        return x if x.dtype.kind in "fc" else None
    if isinstance(x, (list, tuple, float)):
        try:
            a = np.asarray(x)
        except ValueError:  # ragged nested lists: nothing numeric to check as one array
            return None
        return a if a.dtype.kind in "fc" else None
    return None


def _bad_entry(x: Any) -> tuple[tuple[int, ...], Any] | None:
    """Position and value of the first NaN / inf of ``x`` (None: all finite or not numeric)."""
    arr = _numeric(x)
    return None if arr is None else _first_bad(arr)


def check_finite(a: Any, name: str, where: str) -> None:
    """Raise a ``ValueError`` naming the first NaN / inf entry of the array ``a``."""
    hit = _bad_entry(a)
    if hit is not None:
        raise ValueError(f"{where}: `{name}` contains {hit[1]} (NaN or inf) at position "
                         f"{hit[0]}; every value must be finite")


def check_finite_examples(X: Sequence[Any], name: str, where: str) -> None:
    """Raise a ``ValueError`` naming the example and the position of the first NaN / inf
    in a sequence of examples (each an array, or a tuple of arrays)."""
    for i, x in enumerate(X):
        parts = x if isinstance(x, tuple) else (x,)
        for j, part in enumerate(parts):
            hit = _bad_entry(part)
            if hit is not None:
                at = f"{name}[{i}]" if len(parts) == 1 else f"{name}[{i}][{j}]"
                raise ValueError(f"{where}: {at} contains {hit[1]} (NaN or inf) at position "
                                 f"{hit[0]}; features must be finite")

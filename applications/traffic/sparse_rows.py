"""Per-block link flows as one sparse array, a row per block (BCFW's block iterates:
a dense link-length array per origin costs origins x links)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["csr_rows"]


def csr_rows(cols: list[np.ndarray], vals: list[np.ndarray], sizes: np.ndarray,
             shape: tuple[int, int]) -> sparse.csr_array:
    """The CSR array of rows ``(cols[i], vals[i])`` (``sizes``: 0, then each row's
    length), with 32-bit indices where they fit (4 bytes a stored link fewer)."""
    indptr = np.cumsum(sizes)
    kind = np.int32 if max(int(indptr[-1]), shape[1]) < np.iinfo(np.int32).max else np.int64
    indices = np.concatenate(cols).astype(kind, copy=False) if cols else np.zeros(0, kind)
    data = np.concatenate(vals) if vals else np.zeros(0)
    return sparse.csr_array((data, indices, indptr.astype(kind)), shape=shape)

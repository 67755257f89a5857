"""``issparse`` for code that then duck-types the sparse array or matrix."""

from __future__ import annotations

import scipy.sparse as sp

__all__ = ["issparse"]


def issparse(x: object) -> bool:
    """Whether ``x`` is a scipy.sparse array or matrix.

    scipy-stubs type :func:`scipy.sparse.issparse` as narrowing its argument to
    an abstract base without ``shape``, ``nnz``, ``tocoo`` and the other
    attributes of the concrete formats; this plain ``bool`` leaves an untyped
    argument untyped, so the formats' attributes can be used in the branch.
    """
    return sp.issparse(x)

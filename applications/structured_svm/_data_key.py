"""Which training set a warm-start state belongs to: a digest of its examples' contents.

A dual state is a point of the dual of one data set: its block points are sums of
``psi_i(y) / (lam n)`` over that set's examples.  Continued on other examples, its dual
value bounds nothing, and a gap computed from it is no certificate; so the estimator
keeps the digest of the data a state was computed on and reuses the state only on data
with the same digest.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["data_key"]


def _feed(h: Any, obj: Any) -> None:
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        if a.dtype.hasobject:
            h.update(b"O")
            for item in a.ravel():
                _feed(h, item)
            return
        h.update(f"a{a.dtype.str}{a.shape}".encode())
        h.update(a.data)
    elif sp.issparse(obj):
        c: Any = obj.tocsr()  # type: ignore[attr-defined]  # every scipy.sparse format has it
        h.update(f"s{c.shape}".encode())
        for part in (c.indptr, c.indices, c.data):
            _feed(h, part)
    elif isinstance(obj, (tuple, list)):
        h.update(f"{type(obj).__name__[0]}{len(obj)}".encode())
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)) or obj is None:
        h.update(f"v{type(obj).__name__}{obj!r}".encode())
    else:  # a user's example type: its pickled bytes (hashed only, never stored or read)
        h.update(b"p")
        h.update(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def data_key(X: Sequence[Any], Y: Sequence[Any]) -> str:
    """A digest of the examples ``X`` and labellings ``Y`` (their values, shapes and
    types; not the containers' identity): equal for equal data sets."""
    h = hashlib.blake2b(digest_size=16)
    _feed(h, list(X))
    _feed(h, list(Y))
    return h.hexdigest()

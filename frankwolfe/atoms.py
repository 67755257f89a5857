"""Atoms: extreme points with an identity.

An LMO answers with an :class:`Atom`: the vertex as an array (dense, or sparse
as flat indices and values) together with a hashable ``key``.  Active-set
methods store atoms by key, so "is this vertex already active?" is a dict
look-up, not a scan.  A plain array returned by a user's LMO is copied (the
oracle may reuse its buffer) and gets a key from a digest of its nonzero
entries, so equal vectors get equal keys.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from ._config import debug_enabled
from ._sparse import issparse
from .errors import OracleError, ShapeError

__all__ = ["Atom", "as_atom"]


# the (empty, read-only) entries of every dense atom
_NO_INDICES = np.zeros(0, dtype=np.int64)
_NO_INDICES.flags.writeable = False
_NO_VALUES = np.zeros(0)
_NO_VALUES.flags.writeable = False


class Atom:
    """An extreme point of a domain, with a hashable identity.

    Parameters
    ----------
    vector : array_like, optional
        The point as a dense array of any shape (vectors, matrices).
    key : hashable, optional
        Identity of the vertex, e.g. ``("e", 3, -1)`` for :math:`-e_3` on the
        l1 ball or a permutation tuple on the Birkhoff polytope.  Derived from
        the vector's bytes when omitted.
    indices, values, shape : optional
        Sparse form: ``values`` at the flat (C-order) positions ``indices``
        of an array of ``shape``.  Give these instead of ``vector``.
    copy : bool, default True
        Whether the atom stores copies of the arrays it is given.  ``False`` is for
        arrays made for this atom alone (an oracle's fresh result): an active set keeps
        atoms for many iterations, so an atom that shared an oracle's reused buffer
        would change with every later answer.

    Raises
    ------
    TypeError
        When ``key`` is not hashable (a list, a dict, an array).

    Notes
    -----
    Algorithms never densify a sparse atom: they use :meth:`dot`,
    :meth:`add_to` and :meth:`sq_norm`, which cost O(nnz).
    """

    __slots__ = ("shape", "_key", "_dense", "indices", "values", "_at")

    shape: tuple[int, ...]
    #: the vector of a dense atom; ``None`` for a sparse one
    _dense: np.ndarray | None
    #: the stored entries of a sparse atom (empty for a dense one, whose entries are
    #: ``_dense``): always arrays, so that code reading them needs no None check
    indices: np.ndarray
    values: np.ndarray
    #: ``(index, value)`` as Python numbers for a sparse atom of one entry (a vertex
    #: ``value * e_index``), else ``None``: a step reads it two or three times, and
    #: numpy's scalar indexing costs more than the arithmetic on a small problem
    _at: tuple[int, float] | None

    def __init__(
        self,
        vector: Any = None,
        key: Hashable | None = None,
        *,
        indices: Any = None,
        values: Any = None,
        shape: tuple[int, ...] | int | None = None,
        copy: bool = True,
    ) -> None:
        if key is not None:
            _check_key(key)
        if vector is not None:
            if indices is not None or values is not None:
                raise ValueError(
                    "Atom: give either `vector` or (`indices`, `values`, `shape`), not both")
            arr = np.array(vector, dtype=float) if copy else np.asarray(vector, dtype=float)
            if shape is not None and arr.shape != _as_shape(shape):
                arr = arr.reshape(_as_shape(shape))
            self._dense = arr
            self.indices = _NO_INDICES
            self.values = _NO_VALUES
            self.shape = arr.shape
            self._at = None
        else:
            if indices is None or values is None or shape is None:
                raise ValueError("Atom: a sparse atom needs `indices`, `values` and `shape`")
            self.shape = shape if type(shape) is tuple else _as_shape(shape)
            # C-contiguous (a reversed path is not): kernels taking atoms then compile
            # once for every oracle, not once more for strided indices
            idx = np.ascontiguousarray(indices, dtype=np.int64)
            val = np.ascontiguousarray(values, dtype=float)
            if copy:  # only the caller's own arrays: a conversion is already a copy
                if idx is indices or np.may_share_memory(idx, indices):
                    idx = idx.copy()
                if val is values or np.may_share_memory(val, values):
                    val = val.copy()
            if idx.ndim != 1:
                idx = idx.ravel()
            if val.ndim != 1:
                val = val.ravel()
            if idx.shape != val.shape:
                raise ShapeError(
                    f"Atom: `indices` has {idx.size} entries but `values` has {val.size}"
                )
            # range check: part of the oracle-answer checks, so debug mode only
            if debug_enabled() and idx.size and (
                idx.min() < 0 or idx.max() >= math.prod(self.shape)
            ):
                size = math.prod(self.shape)
                bad = int(idx[(idx < 0) | (idx >= size)][0])
                raise ShapeError(f"Atom: sparse index {bad} out of range for shape "
                                 f"{self.shape} (valid: 0 to {size - 1})")
            # Coalesce duplicates so norms and keys are well defined; strictly
            # increasing indices (the common case) skip the O(nnz log nnz) sort.
            if idx.size > 1 and not np.all(idx[1:] > idx[:-1]):
                uniq, inv = np.unique(idx, return_inverse=True)
                if uniq.size != idx.size:
                    val = np.bincount(inv, weights=val, minlength=uniq.size)
                    idx = uniq
            self.indices = idx
            self.values = val
            self._dense = None
            self._at = (int(idx[0]), float(val[0])) if idx.size == 1 else None
        self._key = key

    @classmethod
    def sparse(
        cls, indices: Any, values: Any, shape: tuple[int, ...] | int, key: Hashable | None = None,
        *, copy: bool = True,
    ) -> Atom:
        """Build a sparse atom from flat indices and values (``copy`` as in :class:`Atom`)."""
        return cls(indices=indices, values=values, shape=shape, key=key, copy=copy)

    @classmethod
    def vertex(cls, index: int, value: float, shape: tuple[int, ...],
               key: Hashable | None = None) -> Atom:
        """The atom ``value * e_index`` (flat ``index``), as :meth:`sparse` builds it.

        For oracles that compute ``index`` themselves (an argmin): it skips the
        conversions and checks of the constructor, which cost more than the
        oracle's own work on small problems.  ``shape`` must be a tuple of ints
        (an array's ``shape``) and ``0 <= index < prod(shape)``.
        """
        return cls.from_checked(shape, np.array((index,), dtype=np.int64),
                                np.array((value,), dtype=float), key)

    @classmethod
    def from_checked(cls, shape: tuple[int, ...], indices: np.ndarray, values: np.ndarray,
                     key: Hashable | None = None) -> Atom:
        """A sparse atom from entries already in the constructor's form, without its
        conversions and checks.

        For code that rebuilds atoms checked where they were made (an executor
        unpacking a worker's answers): ``shape`` a tuple of ints, ``indices`` 1-d
        int64, strictly increasing and in range, ``values`` 1-d float of the same
        length.
        """
        atom = object.__new__(cls)
        atom.shape = shape
        atom._key = key
        atom._dense = None
        atom.indices = indices
        atom.values = values
        atom._at = (int(indices[0]), float(values[0])) if indices.size == 1 else None
        return atom

    # -- identity ---------------------------------------------------------
    @property
    def key(self) -> Hashable:
        """Hashable identity; a digest of the vector when none was given.

        The digest is that of the vector's nonzero entries (flat positions and values):
        equal vectors get equal keys, whether dense or sparse, with explicit zeros
        stored or not, and with ``-0.0`` where the other has ``0.0``.
        """
        if self._key is None:
            size = math.prod(self.shape)
            if self._dense is not None:
                flat = np.ascontiguousarray(self._dense).reshape(-1)
                # a vector without zeros (a user's dense answer, typically) is hashed as
                # it is: its positions are all of them (gathering them costs more than the
                # hash: benchmarks/README.md, "Measurements behind code choices")
                full = np.count_nonzero(flat) == size
                idx = None if full else np.flatnonzero(flat)
                val = flat if full else flat[idx]
            else:
                keep = self.values != 0.0
                idx, val = self.indices[keep], self.values[keep]
                order = np.argsort(idx, kind="stable")
                idx, val = idx[order], val[order]
                if idx.size == size:  # every position (indices unique): as a full vector
                    idx = None
            h = hashlib.blake2b(digest_size=16)
            h.update(repr(self.shape).encode())
            h.update(b"full" if idx is None else idx.astype(np.int64, copy=False).tobytes())
            h.update(np.ascontiguousarray(val, dtype=float).tobytes())
            self._key = ("vec", h.hexdigest())
        return self._key

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and self.key == other.key

    def __repr__(self) -> str:
        form = "dense" if self._dense is not None else f"sparse nnz={self.indices.size}"
        return f"Atom(key={self._key!r}, shape={self.shape}, {form})"

    # -- linear algebra used by the algorithms ----------------------------
    @property
    def is_sparse(self) -> bool:
        """Whether the atom is stored as (indices, values)."""
        return self._dense is None

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return self.indices.size if self._dense is None else self._dense.size

    def to_dense(self) -> np.ndarray:
        """The atom as a dense array (a new array for sparse atoms)."""
        if self._dense is not None:
            return self._dense
        out = np.zeros(self.shape)
        out.reshape(-1)[self.indices] = self.values
        return out

    def nonzeros(self) -> tuple[np.ndarray, np.ndarray]:
        """``(flat indices, values)`` of the atom's entries: the stored ones of a sparse
        atom, the nonzero ones of a dense atom."""
        if self._dense is None:
            return self.indices, self.values
        flat = self._dense.reshape(-1)
        idx = np.flatnonzero(flat)
        return idx, flat[idx]

    def dot(self, g: np.ndarray) -> float:
        """Inner product ``<g, atom>`` (Frobenius for matrices), O(nnz)."""
        at = self._at
        if at is not None:  # a vertex value * e_i (the usual sparse atom): no fancy indexing
            return float((g if g.ndim == 1 else g.reshape(-1))[at[0]]) * at[1]
        if self._dense is not None:
            return float(np.vdot(g, self._dense))
        return float(np.dot(g.reshape(-1)[self.indices], self.values))

    def add_to(self, out: np.ndarray, alpha: float = 1.0) -> None:
        """In place ``out += alpha * atom`` (``out`` must be C-contiguous)."""
        at = self._at
        if at is not None:  # a vertex: as below, with Python numbers
            (out if out.ndim == 1 else out.reshape(-1))[at[0]] += alpha * at[1]
            return
        if self._dense is not None:
            out += alpha * self._dense
        else:
            # a view: the iterate is kept C-contiguous
            flat = out if out.ndim == 1 else out.reshape(-1)
            flat[self.indices] += alpha * self.values  # indices are unique

    def sq_norm(self) -> float:
        """Squared Euclidean (Frobenius) norm."""
        if self._dense is not None:
            return float(np.vdot(self._dense, self._dense))
        return float(np.dot(self.values, self.values))


class UnhashableKeyError(TypeError):
    """An :class:`Atom` given a ``key`` that is not hashable (so that an LMO's call can
    add its own name to the message: ``oracle``, the LMO that built the atom, once
    named)."""

    oracle: object = None


def _check_key(key: object) -> None:
    """Raise :class:`UnhashableKeyError` naming ``key`` unless it is hashable: active sets
    store atoms by key, where an unhashable one failed far from its source with Python's
    bare message."""
    try:
        hash(key)
    except TypeError:
        raise UnhashableKeyError(f"Atom: `key` must be hashable (a tuple, a string, a number), got "
                        f"{type(key).__name__} {key!r}") from None


def _as_shape(shape: tuple[int, ...] | int) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def as_atom(obj: Any, shape: tuple[int, ...], source: object = "LMO") -> Atom:
    """Normalize an LMO answer (Atom, ndarray, scipy.sparse) to an :class:`Atom`.

    Parameters
    ----------
    obj : Atom, array_like or scipy.sparse matrix/array
        What ``extreme_point`` returned.
    shape : tuple of int
        The shape of the direction, which the answer must have (a sparse
        1×n or n×1 matrix is accepted for a vector of length n).
    source : object
        Who answered, for error messages (its ``repr`` is only built on error).
    """
    if not isinstance(source, str):
        if isinstance(obj, Atom) and obj.shape == tuple(shape):
            return obj  # fast path: the common answer of library LMOs
        source = repr(source)
    shape = tuple(shape)
    size = int(np.prod(shape))
    if isinstance(obj, Atom):
        if obj.shape != shape:
            raise ShapeError(f"{source} returned an atom of shape {obj.shape}, expected {shape}")
        return obj
    if issparse(obj):
        if int(np.prod(obj.shape)) != size or (len(obj.shape) == len(shape) and obj.shape != shape
                                               and len(shape) > 1):
            raise ShapeError(
                f"{source} returned a sparse array of shape {obj.shape}, expected {shape}")
        coo = obj.tocoo()
        coords = coo.coords if hasattr(coo, "coords") else (coo.row, coo.col)
        flat = np.ravel_multi_index(tuple(np.asarray(c) for c in coords), obj.shape)
        # tocoo() of a COO answer is the answer itself: its data may be the oracle's buffer
        return Atom.sparse(flat, coo.data, shape)
    if obj is None:
        raise OracleError(f"{source} returned None; extreme_point must return the minimizing point")
    # a copy: an oracle may answer from a buffer it overwrites on its next call, and the
    # active-set methods keep atoms across calls
    arr = np.array(obj, dtype=float)
    if arr.shape != shape:
        raise ShapeError(f"{source} returned an array of shape {arr.shape}, expected {shape}")
    return Atom(arr, copy=False)

"""Spectral sets of symmetric matrices: the unit spectrahedron (``tr X <= r``) and the Fantope.

Points are symmetric ``n x n`` arrays; only the symmetric part ``(G + G^T) / 2`` of
a direction matters against them.  As in :mod:`frankwolfe.lmo.matrix` (whose
:class:`~frankwolfe.lmo.matrix.Spectrahedron` is the ``tr X = r`` set), small
matrices use a dense ``eigh`` and larger ones ARPACK's ``eigsh`` with a seeded start
vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numbers import check_whole
from .._sparse import issparse
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_radius
from .base import LMO
from .matrix import (
    DENSE_LIMIT,
    _Arpack,
    _as_matrix,
    _dense,
    _start_vector,
)

__all__ = ["UnitSpectrahedron", "Fantope"]


def _smallest_eigs(cls: str, direction: Any, shape: tuple[int, ...] | None,
                   k: int, arpack: _Arpack) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest eigenvalues (ascending) and their eigenvectors (columns) of the
    symmetric part of ``direction`` (``arpack``: the asking oracle's, see ``_Arpack``)."""
    g = _as_matrix(cls, direction, shape, square=True)
    n = g.shape[0]
    if k > n:
        raise ShapeError(f"{cls}: `direction` is {n} x {n}, smaller than k={k}")
    sym = (g + g.T) * 0.5
    # eigsh needs k < n and a non-zero operator; a dense eigh is exact and faster below
    # DENSE_LIMIT (or when most of the spectrum is asked for)
    dense = (not issparse(sym) and n <= DENSE_LIMIT) or k >= n - 1 or 4 * k > n
    if not dense and (sym.nnz if issparse(sym) else np.count_nonzero(sym)) == 0:
        return np.zeros(k), np.eye(n, k)
    if dense:
        vals, vecs = np.linalg.eigh(_dense(sym))
        return vals[:k], vecs[:, :k]
    from scipy.sparse.linalg import eigsh  # pulls in scipy.linalg: only large inputs pay

    out = arpack(lambda **o: eigsh(sym, k=k, which="SA", v0=_start_vector(n), **o), k, n)
    if out is None:
        vals, vecs = np.linalg.eigh(_dense(sym))
        return vals[:k], vecs[:, :k]
    vals, vecs = out
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def _symmetric_violation(x: Any, shape: tuple[int, ...] | None) -> tuple[float, np.ndarray] | None:
    """``(max |X - X^T|, eigenvalues of the symmetric part)``, ``None`` when ``x`` is not
    a square matrix of the domain's shape or not finite."""
    x = _dense(x)
    if x.ndim != 2 or x.shape[0] != x.shape[1] or (shape and x.shape != shape):
        return None
    if not np.all(np.isfinite(x)):
        return None
    asym = float(np.abs(x - x.T).max(initial=0.0))
    lam = np.linalg.eigvalsh((x + x.T) * 0.5) if x.size else np.zeros(0)
    return asym, lam


class UnitSpectrahedron(LMO):
    """The unit spectrahedron ``{X symmetric, X PSD, tr X <= radius}`` of ``n x n`` matrices.

    FrankWolfe.jl's ``UnitSpectrahedronLMO``; :class:`~frankwolfe.lmo.matrix.Spectrahedron`
    is the face ``tr X = radius``.  Vertices: ``0`` (key ``("zero",)``) and
    ``radius * v v^T`` for unit ``v`` (a continuum: automatic keys).  LMO:
    ``radius * v v^T`` for an eigenvector ``v`` of the smallest eigenvalue of the
    symmetric part of the direction when that eigenvalue is negative, ``0``
    otherwise.  Cost: a dense ``eigh``, O(n^3), when ``n <= 50``; otherwise
    ``scipy.sparse.linalg.eigsh(k=1, which="SA")`` with a seeded start vector.

    Parameters
    ----------
    radius : float, default 1.0
        Bound on the trace; positive and finite.
    dim : int, optional
        Size ``n`` of the matrices (otherwise taken from the direction).

    Notes
    -----
    A smallest eigenvalue of exactly ``0`` gives ``0`` (the sparser vertex).
    :meth:`extreme_point` also accepts a ``scipy.sparse`` direction.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import UnitSpectrahedron
    >>> U = UnitSpectrahedron(2.0)
    >>> U(np.diag([1.0, -3.0])).to_dense()
    array([[0., 0.],
           [0., 2.]])
    >>> U(np.eye(2)).to_dense()
    array([[0., 0.],
           [0., 0.]])
    """

    sparse_directions = True  # (its solvers take a scipy.sparse direction as it is)

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self._arpack = _Arpack()
        self.radius = check_radius("UnitSpectrahedron", radius)
        self.dim = None if dim is None else check_whole(dim, "dim", 1, "UnitSpectrahedron")
        self.shape = None if self.dim is None else (self.dim, self.dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        vals, vecs = _smallest_eigs("UnitSpectrahedron", direction, self.shape, 1,
                                    self._arpack)
        shape = tuple(direction.shape)
        if not vals[0] < 0:
            return Atom.sparse([], [], shape, key=("zero",))
        v = vecs[:, 0]
        return Atom(self.radius * np.outer(v, v), copy=False)

    def violation(self, x: np.ndarray) -> float:
        """Largest of ``max |X - X^T|``, ``tr X - radius`` and ``-lambda_min``, over
        ``radius``; ``inf`` for a non-square, misshapen or non-finite ``x``.  O(n^3)."""
        res = _symmetric_violation(x, self.shape)
        if res is None:
            return float("inf")
        asym, lam = res
        neg = max(0.0, -float(lam[0])) if lam.size else 0.0
        return max(asym, float(lam.sum()) - self.radius, neg) / self.radius

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``sqrt(2) * radius`` for ``n >= 2`` (``radius e_1 e_1^T`` and ``radius e_2
        e_2^T``; exact, as for the spectrahedron), ``radius`` for ``n = 1``."""
        n = self.dim if self.dim is not None else (shape[0] if shape else None)
        return self.radius if n == 1 else float(np.sqrt(2.0)) * self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"radius": self.radius, "dim": self.dim}


class Fantope(LMO):
    """The Fantope ``{X symmetric, 0 <= X <= I, tr X = k}`` of ``n x n`` matrices.

    The convex hull of the rank-``k`` orthogonal projectors (Fan's theorem): the
    domain of sparse PCA relaxations and of subspace estimation.  Vertices: the
    projectors ``V V^T`` with ``V`` an ``n x k`` orthonormal frame (a continuum:
    automatic keys).  LMO: the projector onto the eigenvectors of the ``k`` smallest
    eigenvalues of the symmetric part of the direction.  Cost: a dense ``eigh``,
    O(n^3), for ``n <= 50`` or ``k > n / 4``; otherwise
    ``scipy.sparse.linalg.eigsh(k, which="SA")`` with a seeded start vector.

    Parameters
    ----------
    k : int
        The trace (the rank of the vertices); positive, at most ``n``.
    dim : int, optional
        Size ``n`` of the matrices (otherwise taken from the direction).

    Notes
    -----
    ``k = 1`` gives the spectrahedron of trace 1; ``k = n`` the single point ``I``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Fantope
    >>> Fantope(2)(np.diag([3.0, -1.0, 0.5])).to_dense()
    array([[0., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """

    sparse_directions = True  # (its solvers take a scipy.sparse direction as it is)

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, k: int, dim: int | None = None) -> None:
        self._arpack = _Arpack()
        self.k = check_whole(k, "k", 1, "Fantope")
        self.dim = None if dim is None else check_whole(dim, "dim", 1, "Fantope")
        if self.dim is not None and self.k > self.dim:
            raise ValueError(f"Fantope: `k` must be <= `dim`={self.dim}, got k={k!r}")
        self.shape = None if self.dim is None else (self.dim, self.dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        _, vecs = _smallest_eigs("Fantope", direction, self.shape, self.k, self._arpack)
        return Atom(vecs @ vecs.T, copy=False)

    def violation(self, x: np.ndarray) -> float:
        """Largest of ``max |X - X^T|``, ``|tr X - k| / k``, ``-lambda_min`` and
        ``lambda_max - 1``; ``inf`` for a non-square, misshapen or non-finite ``x``.
        O(n^3)."""
        res = _symmetric_violation(x, self.shape)
        if res is None:
            return float("inf")
        asym, lam = res
        if lam.size < self.k:
            return float("inf")
        return max(asym, abs(float(lam.sum()) - self.k) / self.k, -float(lam[0]),
                   float(lam[-1]) - 1.0, 0.0)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``sqrt(2 min(k, n - k))`` (exact: two projectors with subspaces as orthogonal
        as possible); ``sqrt(2 k)``, an upper bound, when ``n`` is unknown."""
        n = self.dim if self.dim is not None else (shape[0] if shape else None)
        m = self.k if n is None else min(self.k, n - self.k)
        return float(np.sqrt(2.0 * m))

    def _repr_params(self) -> dict[str, Any]:
        return {"k": self.k, "dim": self.dim}

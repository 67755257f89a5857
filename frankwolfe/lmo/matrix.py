"""Matrix domains: the Birkhoff polytope, the nuclear-norm ball, the spectrahedron.

Points are 2-D arrays; inner products are Frobenius inner products.  The
oracles of the last two need one extreme singular pair / eigenpair.  Small
matrices use a dense LAPACK decomposition; larger ones use ARPACK
(``svds`` / ``eigsh``) with a fixed, seeded start vector, so a call is
reproducible bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._numbers import check_whole
from .._sparse import issparse
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_radius
from .base import LMO
from .in_face import FACE_TOL, forcing_cost, nonneg_step

__all__ = ["Birkhoff", "NuclearNormBall", "Spectrahedron"]

# Above this smallest dimension a dense decomposition costs more than a few
# Lanczos iterations; below it LAPACK is both faster and exact.
DENSE_LIMIT = 50

# Seed of the ARPACK start vectors (fixed so that answers are reproducible).
_ARPACK_SEED = 20240611


def _start_vector(n: int) -> np.ndarray:
    """A fixed random start vector for ARPACK (random, so it is never
    orthogonal to the wanted vector by structure; fixed, so runs repeat)."""
    return np.random.default_rng(_ARPACK_SEED).standard_normal(n)


def _as_matrix(cls: str, direction: Any, shape: tuple[int, ...] | None,
               square: bool) -> Any:
    """Validate a direction: 2-D (square if asked), of the known shape; keep sparse as is."""
    if not issparse(direction):
        direction = np.asarray(direction, dtype=float)
    dshape = tuple(direction.shape)
    if len(dshape) != 2:
        raise ShapeError(f"{cls}: `direction` must be a 2-D matrix, got shape {dshape}")
    if square and dshape[0] != dshape[1]:
        raise ShapeError(f"{cls}: `direction` must be a square matrix, got shape {dshape}")
    if shape is not None and dshape != shape:
        raise ShapeError(f"{cls}: `direction` has shape {dshape}, expected {shape}")
    data = direction.data if issparse(direction) else direction
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{cls}: `direction` contains NaN or inf")
    top = float(np.abs(data).max(initial=0.0))
    if top > 0.0 and not _SAFE[0] <= top <= _SAFE[1]:
        # by a power of two (exact; the minimizers are the same): the decompositions'
        # sums of products overflow or vanish far from 1 (ARPACK then fails or answers
        # a wrong vector)
        shift = -math.frexp(top)[1]
        if issparse(direction):
            direction = direction.copy()
            direction.data = np.ldexp(direction.data, shift)
        else:
            direction = np.ldexp(direction, shift)
    return direction


#: the range of a direction's largest entry that the decompositions take as it is
_SAFE = (2.0 ** -64, 2.0 ** 64)


def _dense(x: Any) -> np.ndarray:
    return x.toarray() if issparse(x) else np.asarray(x, dtype=float)


class _Arpack:
    """ARPACK (``eigsh`` or ``svds``) for one oracle, which remembers that it failed.

    :meth:`__call__` answers ``call(**options)``, or ``None`` where ARPACK does not
    converge (clustered extreme eigen- or singular values, as near a spectral problem's
    optimum, where it fails often): the oracle then answers with the dense decomposition,
    at once up to ``_DENSE_RESCUE`` (cheaper than a longer ARPACK run), beyond it after
    one more ARPACK run with a larger Krylov space and more iterations.  After a failure
    up to that size the oracle goes dense at once: near an optimum the clusters stay, and
    each failed run costs ARPACK's whole iteration budget (benchmarks/README.md,
    "Measurements behind code choices").
    """

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, call: Callable[..., Any], k: int, size: int) -> Any | None:
        from scipy.sparse.linalg import ArpackError, ArpackNoConvergence

        small = size <= _DENSE_RESCUE
        if small and self.failed:
            return None
        try:
            return call()
        except (ArpackNoConvergence, ArpackError):  # (an Arnoldi basis it cannot build)
            pass
        ncv = min(size - 1, max(2 * k + 1, 64))  # k < ncv < size (svds), <= size (eigsh)
        if small or ncv <= k:
            self.failed = small
            return None
        try:
            return call(ncv=ncv, maxiter=100 * size)
        except (ArpackNoConvergence, ArpackError):
            return None


#: up to this size a non-converged ARPACK call is answered by the dense decomposition
_DENSE_RESCUE = 2000


class Birkhoff(LMO):
    """The Birkhoff polytope: doubly stochastic ``n x n`` matrices.

    ``{X >= 0, X 1 = 1, X^T 1 = 1}``.  Vertices: the ``n!`` permutation
    matrices ``P_sigma`` (``P[i, sigma(i)] = 1``), key ``("perm", sigma)``
    with ``sigma`` a tuple.  LMO: a linear assignment problem on the
    direction matrix (``scipy.optimize.linear_sum_assignment``), O(n^3); the
    answer is a sparse atom with ``n`` entries.

    Parameters
    ----------
    n : int, optional
        Size of the matrices (otherwise taken from the direction).

    Notes
    -----
    A flat direction of ``n^2`` entries (the matrix in C order, as FrankWolfe.jl
    accepts a vector) is accepted too; the answer then has the same flat shape.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Birkhoff
    >>> B = Birkhoff()
    >>> B(np.array([[0.0, 1.0], [1.0, 0.0]])).to_dense()
    array([[1., 0.],
           [0., 1.]])
    >>> B(np.array([1.0, 0.0, 0.0, 1.0])).to_dense()
    array([0., 1., 1., 0.])
    """

    sparse_directions = True  # (its solvers take a scipy.sparse direction as it is)

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, n: int | None = None) -> None:
        self.n = None if n is None else check_whole(n, "n", 1, "Birkhoff")
        self.shape = None if self.n is None else (self.n, self.n)

    def _square(self, x: Any) -> Any:
        """A flat ``n^2`` vector as the ``n x n`` matrix it stores (C order); other
        inputs as they are."""
        if issparse(x) or np.ndim(x) != 1:
            return x
        size = np.size(x)
        n = self.n if self.n is not None else math.isqrt(size)
        if n * n != size:
            expected = f"{n * n} (n={n})" if self.n is not None else "a perfect square"
            raise ShapeError(
                f"Birkhoff: a flat `direction` must have n^2 entries, got {size}; expected "
                f"{expected}"
            )
        return np.asarray(x, dtype=float).reshape(n, n)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        g = _dense(_as_matrix("Birkhoff", self._square(direction), self.shape, square=True))
        n = g.shape[0]
        # imported here: scipy.optimize is slow to import, and only Birkhoff needs it
        # (benchmarks/README.md, "Measurements behind code choices")
        from scipy.optimize import linear_sum_assignment

        _, perm = linear_sum_assignment(g)  # rows come back as 0..n-1
        flat = np.arange(n, dtype=np.int64) * n + perm
        # the answer has the direction's shape: (n, n), or (n^2,) for a flat direction
        return Atom.sparse(flat, np.ones(n), tuple(direction.shape),
                           key=("perm", tuple(perm.tolist())), copy=False)

    def in_face_extreme_point(self, x: np.ndarray, direction: np.ndarray) -> Atom:
        """In-face oracle (:mod:`~frankwolfe.lmo.in_face`): the best permutation inside
        the support of ``x`` (one exists: Birkhoff-von Neumann); O(n^3)."""
        g = np.array(_dense(_as_matrix("Birkhoff", self._square(direction), self.shape,
                                       square=True)), dtype=float)
        X = np.asarray(self._square(np.asarray(x, dtype=float)), dtype=float)
        g[X <= FACE_TOL] = forcing_cost(g, g.shape[0])
        return self.extreme_point(g.reshape(np.shape(direction)))

    def max_step(self, x: np.ndarray, direction: np.ndarray) -> float:
        """Largest ``gamma`` keeping ``x + gamma d >= 0`` (``d`` keeps the row and column
        sums: a difference of vertices)."""
        return nonneg_step(np.asarray(x, dtype=float).reshape(-1),
                           np.asarray(direction, dtype=float).reshape(-1))

    def violation(self, x: np.ndarray) -> float:
        """Largest of the negative part of ``min(X)`` and the row and column sums' distance
        to 1; ``inf`` for a misshapen ``x``.  A flat ``x`` of ``n^2`` entries is read as
        the ``n x n`` matrix (C order)."""
        x = _dense(x)
        if x.ndim == 1:
            n = self.n if self.n is not None else math.isqrt(x.size)
            if n * n != x.size:
                return np.inf
            x = x.reshape(n, n)
        if x.ndim != 2 or x.shape[0] != x.shape[1] or (self.shape and x.shape != self.shape):
            return np.inf
        neg = max(0.0, -float(x.min(initial=0.0)))
        rows = float(np.abs(x.sum(axis=1) - 1.0).max(initial=0.0))
        cols = float(np.abs(x.sum(axis=0) - 1.0).max(initial=0.0))
        return max(neg, rows, cols)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``sqrt(2 n)``: two permutation matrices with no entry in common."""
        n = self.n if self.n is not None else (shape[0] if shape else None)
        return None if n is None else float(np.sqrt(2.0 * n))

    def _repr_params(self) -> dict[str, Any]:
        return {"n": self.n}


class NuclearNormBall(LMO):
    """The nuclear-norm ball ``{X : ||X||_* <= radius}`` of ``m x n`` matrices.

    Vertices: the rank-one matrices ``radius * u v^T`` with unit ``u``,
    ``v`` (a continuum).  LMO: ``-radius * u1 v1^T`` for the top singular
    pair of the direction.  Cost: a dense SVD, O(m n min(m, n)), when
    ``min(m, n) <= 50``; otherwise ``scipy.sparse.linalg.svds(k=1)`` with a
    seeded start vector (a few matrix-vector products, O(nnz) each).
    Dense atom, key derived from its bytes.

    Parameters
    ----------
    radius : float, default 1.0
    shape : tuple of 2 int, optional
        Shape of the matrices (otherwise taken from the direction).

    Notes
    -----
    :meth:`extreme_point` also accepts a ``scipy.sparse`` direction when
    called directly (it then always uses ``svds``).
    """

    sparse_directions = True  # (its solvers take a scipy.sparse direction as it is)

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, radius: float = 1.0, shape: tuple[int, int] | None = None) -> None:
        self._arpack = _Arpack()
        self.radius = check_radius("NuclearNormBall", radius)
        if shape is not None:
            if np.ndim(shape) != 1 or len(shape) != 2:
                raise ValueError(f"NuclearNormBall: `shape` must be a pair (m, n), got {shape!r}")
            self.shape = (check_whole(shape[0], "shape", 1, "NuclearNormBall"),
                          check_whole(shape[1], "shape", 1, "NuclearNormBall"))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        g = _as_matrix("NuclearNormBall", direction, self.shape, square=False)
        m, n = g.shape
        if not issparse(g) and min(m, n) <= DENSE_LIMIT:
            u, _, vt = np.linalg.svd(g, full_matrices=False)
            u1, v1 = u[:, 0], vt[0]
        elif (g.nnz if issparse(g) else np.count_nonzero(g)) == 0:
            # every point is optimal; ARPACK cannot handle a zero operator
            u1, v1 = np.eye(m, 1).ravel(), np.eye(n, 1).ravel()
        elif min(m, n) == 1:  # svds needs k < min(m, n)
            gd = _dense(g)
            u, _, vt = np.linalg.svd(gd, full_matrices=False)
            u1, v1 = u[:, 0], vt[0]
        else:
            from scipy.sparse.linalg import svds  # pulls in scipy.linalg: only large inputs pay

            out = self._arpack(lambda **o: svds(g, k=1, v0=_start_vector(min(m, n)), **o),
                               1, min(m, n))
            u, _, vt = out if out is not None else np.linalg.svd(_dense(g),
                                                                  full_matrices=False)
            u1, v1 = u[:, 0], vt[0]
        return Atom(-self.radius * np.outer(u1, v1), copy=False)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius`` (exact): ``||X||_F <= ||X||_*``, attained at ``+-radius * u v^T``."""
        return 2.0 * self.radius

    def violation(self, x: np.ndarray) -> float:
        x = _dense(x)
        if x.ndim != 2 or (self.shape and x.shape != self.shape):
            return np.inf
        nuc = float(np.linalg.svd(x, compute_uv=False).sum())
        return max(0.0, nuc - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return {"radius": self.radius, "shape": self.shape}


class Spectrahedron(LMO):
    """The spectrahedron ``{X symmetric, X PSD, tr X = trace}`` of ``n x n`` matrices.

    Vertices: ``trace * v v^T`` for unit ``v`` (a continuum).  LMO:
    ``trace * v v^T`` for an eigenvector ``v`` of the smallest eigenvalue
    of the symmetric part ``(G + G^T) / 2`` of the direction (only the
    symmetric part matters against symmetric points).  Cost: a dense
    ``eigh``, O(n^3), when ``n <= 50``; otherwise
    ``scipy.sparse.linalg.eigsh(k=1, which="SA")`` with a seeded start
    vector.  Dense atom, key derived from its bytes.

    Parameters
    ----------
    trace : float, default 1.0
    dim : int, optional
        Size ``n`` of the matrices (otherwise taken from the direction).

    Notes
    -----
    :meth:`extreme_point` also accepts a ``scipy.sparse`` direction when
    called directly.
    """

    sparse_directions = True  # (its solvers take a scipy.sparse direction as it is)

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, trace: float = 1.0, dim: int | None = None) -> None:
        self._arpack = _Arpack()
        self.trace = check_radius("Spectrahedron", trace, "trace")
        self.dim = None if dim is None else check_whole(dim, "dim", 1, "Spectrahedron")
        self.shape = None if self.dim is None else (self.dim, self.dim)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        g = _as_matrix("Spectrahedron", direction, self.shape, square=True)
        n = g.shape[0]
        sym = (g + g.T) * 0.5
        if not issparse(sym) and n <= DENSE_LIMIT:
            _, vecs = np.linalg.eigh(sym)
            v = vecs[:, 0]
        elif (sym.nnz if issparse(sym) else np.count_nonzero(sym)) == 0:
            v = np.eye(n, 1).ravel()  # every point is optimal
        elif n <= 2:  # eigsh needs k < n
            _, vecs = np.linalg.eigh(_dense(sym))
            v = vecs[:, 0]
        else:
            from scipy.sparse.linalg import eigsh  # pulls in scipy.linalg: only large inputs pay

            out = self._arpack(
                lambda **o: eigsh(sym, k=1, which="SA", v0=_start_vector(n), **o), 1, n)
            _, vecs = out if out is not None else np.linalg.eigh(_dense(sym))
            v = vecs[:, 0]
        return Atom(self.trace * np.outer(v, v), copy=False)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``sqrt(2) * trace`` (exact for ``n >= 2``, attained at ``trace * e_1 e_1^T`` and
        ``trace * e_2 e_2^T``): ``||X - Y||_F^2 = ||X||_F^2 + ||Y||_F^2 - 2 <X, Y>`` with
        ``||X||_F <= tr X`` and ``<X, Y> >= 0`` for PSD ``X, Y``.  ``0`` for ``n = 1``."""
        n = self.dim if self.dim is not None else (shape[0] if shape else None)
        if n == 1:
            return 0.0
        return float(np.sqrt(2.0)) * self.trace

    def violation(self, x: np.ndarray) -> float:
        x = _dense(x)
        if x.ndim != 2 or x.shape[0] != x.shape[1] or (self.shape and x.shape != self.shape):
            return np.inf
        asym = float(np.abs(x - x.T).max(initial=0.0))
        tr = abs(float(np.trace(x)) - self.trace)
        lam_min = float(np.linalg.eigvalsh((x + x.T) * 0.5)[0]) if x.size else 0.0
        return max(asym, tr, max(0.0, -lam_min)) / self.trace

    def _repr_params(self) -> dict[str, Any]:
        return {"trace": self.trace, "dim": self.dim}

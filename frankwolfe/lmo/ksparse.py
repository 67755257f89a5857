"""The k-sparse polytope ``conv{x : ||x||_0 <= k, ||x||_inf <= radius}``.

A direction of any shape is treated as a flat vector (C order); answers are
sparse :class:`Atom` s with ``k`` entries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np

from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from .base import LMO
from .hypersimplex import check_k
from .subset import SubsetOracle, sample_distinct

__all__ = ["KSparsePolytope"]



def _own_key(key: object, k: int) -> TypeGuard[tuple[tuple[int, int], ...]]:
    """Whether ``key`` is one of this polytope's vertex keys, ``k`` ``(index, sign)``
    pairs: a start held under a key of its own (``("x0", ...)``, a foreign atom) can
    have ``k`` entries too."""
    return isinstance(key, tuple) and len(key) == k and all(
        isinstance(p, tuple) and len(p) == 2 and not isinstance(p[0], str) for p in key)

class KSparsePolytope(SubsetOracle, LMO):
    """The k-sparse polytope ``conv{x : ||x||_0 <= k, ||x||_inf <= radius}``.

    Equivalently ``{x : ||x||_1 <= k * radius, ||x||_inf <= radius}``.
    Vertices: the points with exactly ``k`` entries equal to ``+-radius`` and
    the rest 0; key = tuple of ``(index, sign)`` pairs sorted by index.  LMO:
    the ``k`` largest ``|g_i|`` get ``-radius * sign(g_i)``; cost O(n) (one
    ``argpartition``), sparse answer with ``k`` entries.  Subset oracle
    (randomized away-step): candidates are sampled vertices, a pair of
    ``(p, k)`` arrays (sorted supports, signs) drawn uniformly; scoring them
    costs O(p k).

    Parameters
    ----------
    k : int
        Sparsity, a positive integer (at most ``dim`` when ``dim`` is given).
    radius : float, default 1.0
        Bound on each entry; positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    When ``dim`` is not given and a direction has ``n < k`` entries, the
    polytope is the box ``[-radius, radius]^n`` and all ``n`` entries are set.
    Ties in ``|g_i|`` are broken by ``argpartition`` (deterministically for a
    given input); a selected ``g_i = 0`` gets ``+radius``, so the answer is
    always a vertex.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import KSparsePolytope
    >>> a = KSparsePolytope(2, radius=3.0)(np.array([0.1, -5.0, 2.0, 1.0]))
    >>> a.key, a.to_dense()
    (((1, 1), (2, -1)), array([ 0.,  3., -3.,  0.]))
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, k: int, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("KSparsePolytope", radius)
        self.shape = dim_shape(dim, "KSparsePolytope")
        self.k = check_k("KSparsePolytope", k, self.shape)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius * sqrt(min(k, n))``: two opposite vertices with ``k`` entries
        ``+-radius`` (all ``n`` entries where a direction has fewer than ``k``)."""
        shape = shape if shape is not None else self.shape
        k = self.k if shape is None else min(self.k, int(np.prod(shape)))
        return 2.0 * self.radius * float(np.sqrt(k))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        n = flat.size
        k = min(self.k, n)
        if k < n:
            idx = np.argpartition(np.abs(flat), n - k)[n - k:]
            idx.sort()
        else:
            idx = np.arange(n)
        signs = np.where(flat[idx] > 0, -1, 1)
        key = tuple(zip(idx.tolist(), signs.tolist()))
        return Atom.sparse(idx, self.radius * signs, direction.shape, key=key, copy=False)

    # -- subset oracle: sampled vertices as (support, signs) ----------------------
    def n_candidates(self, shape: tuple[int, ...]) -> int:
        """Number of vertices, ``C(n, k) 2^k`` (a Python int, possibly huge)."""
        n = int(np.prod(shape))
        k = min(self.k, n)
        return math.comb(n, k) << k

    def candidate_cost(self, shape: tuple[int, ...]) -> int:
        """A vertex has ``k`` entries: scoring one reads ``k`` coordinates."""
        return min(self.k, int(np.prod(shape)))

    def count_candidates(self, candidates: tuple[np.ndarray, np.ndarray]) -> int:
        return int(candidates[0].shape[0])

    def sample_candidates(self, shape: tuple[int, ...], size: int, rng: np.random.Generator,
                          active: Sequence[Atom]) -> tuple[np.ndarray, np.ndarray]:
        """``size`` distinct vertices drawn uniformly outside ``active``: sorted supports
        and signs, two ``(p, k)`` arrays (``p <= size``).  O(size * k log k) while
        ``k^2 <= n`` (rejection of supports with repeats), O(size * n) otherwise."""
        n = int(np.prod(shape))
        k = min(self.k, n)
        taken = [np.asarray([2 * i + (sg > 0) for i, sg in a.key], dtype=np.int64).tobytes()
                 for a in active if _own_key(a.key, k)]
        limit = self.n_candidates(shape) - len(taken)

        def draw(m: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
            if k * k <= n:
                idx = rng.integers(0, n, size=(m, k))
                idx.sort(axis=1)
                bad = np.flatnonzero(np.any(idx[:, 1:] == idx[:, :-1], axis=1))
                while bad.size:  # a repeat has probability <= k^2 / (2n) <= 1/2 per row
                    redo = rng.integers(0, n, size=(bad.size, k))
                    redo.sort(axis=1)
                    idx[bad] = redo
                    bad = bad[np.any(redo[:, 1:] == redo[:, :-1], axis=1)]
            else:
                idx = np.argpartition(rng.random((m, n)), k - 1, axis=1)[:, :k]
                idx.sort(axis=1)
            signs = np.where(rng.random((m, k)) < 0.5, -1, 1).astype(np.int64)
            return (idx, signs), idx * 2 + (signs > 0)

        return sample_distinct(draw, size, taken, limit)

    def extreme_point_among(self, direction: np.ndarray, candidates: Any) -> Atom:
        """The best of the sampled vertices ``candidates = (supports, signs)`` (two
        ``(p, k)`` arrays from :meth:`sample_candidates`); O(p k)."""
        flat = check_direction(self, direction)
        try:
            idx, signs = (np.asarray(c) for c in candidates)
        except (TypeError, ValueError):
            raise ShapeError(f"{self!r}.extreme_point_among: `candidates` must be a pair "
                             "(supports, signs) of (p, k) arrays") from None
        k = min(self.k, flat.size)
        if idx.ndim != 2 or idx.shape != signs.shape or idx.shape[0] == 0 or idx.shape[1] != k:
            raise ShapeError(
                f"{self!r}.extreme_point_among: `candidates` must be two non-empty (p, {k}) "
                f"arrays, got shapes {idx.shape} and {signs.shape}"
            )
        if idx.min() < 0 or idx.max() >= flat.size:
            bad = idx[(idx < 0) | (idx >= flat.size)][0]
            raise ShapeError(f"{self!r}.extreme_point_among: supports must lie in "
                             f"[0, {flat.size}), got {int(bad)}")
        j = int(np.argmin(np.sum(flat[idx] * signs, axis=1)))
        sel, sg = idx[j], signs[j].astype(np.int64)
        key = tuple(zip(sel.tolist(), sg.tolist()))
        return Atom.sparse(sel, self.radius * sg, direction.shape, key=key)

    def violation(self, x: np.ndarray) -> float:
        """Largest relative excess: ``||x||_inf`` over ``radius``, ``||x||_1`` over ``k * radius``.

        ``inf`` for non-finite ``x``.
        """
        a = np.abs(np.asarray(x, dtype=float))
        n1 = float(a.sum())
        if not np.isfinite(n1):
            return float("inf")
        ninf = float(a.max(initial=0.0))
        l1_radius = self.k * self.radius
        return max(0.0, (ninf - self.radius) / self.radius, (n1 - l1_radius) / l1_radius)

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"k": self.k, "radius": self.radius})

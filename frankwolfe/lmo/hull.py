"""The convex hull of a finite list of points (the rows of a matrix)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._finite import check_finite
from .._scaling import binary_exponent
from .._sparse import issparse
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction
from .base import LMO

__all__ = ["ConvexHull"]

#: at most this many row atoms kept per oracle (its answers repeat along a run)
_MAX_KEPT = 1024
#: the products ``<v_i, g>`` are computed as they are while a bound on every partial
#: sum, ``max|g| max_i ||v_i||_1``, lies within ``2**±_RANGE``: far from overflow
#: (2**1024) and from the subnormals (2**-1022), where the ranking of the rows loses bits
_RANGE = 900


def _l1_exponent(V: Any) -> int:
    """The binary exponent of ``max_i ||v_i||_1`` over the rows of ``V`` (dense or CSR),
    computed on ``|V|`` scaled by a power of two so that the sums do not overflow; 0 for
    a zero matrix."""
    data = V.data if issparse(V) else V
    top = float(np.max(np.abs(data), initial=0.0))
    if top == 0.0:
        return 0
    exponent = binary_exponent(top)
    scaled = np.ldexp(np.abs(data), -exponent)
    if issparse(V):
        sums = np.add.reduceat(np.append(scaled, 0.0), V.indptr[:-1])
        sums[np.diff(V.indptr) == 0] = 0.0  # reduceat gives an empty row the next entry
    else:
        sums = scaled.sum(axis=1)
    return exponent + binary_exponent(float(sums.max()))


class ConvexHull(LMO):
    """The convex hull ``conv{v_1, ..., v_m}`` of the rows of a matrix.

    Vertices: the rows (redundant rows, inside the hull, are never strictly better
    than a vertex but may be returned on ties); key ``("row", i)``.  LMO: ``argmin_i
    <v_i, g>``, one matrix-vector product ``V @ g``: cost O(m n) dense, O(nnz(V))
    sparse.  The answer is a sparse atom for a sparse ``V``, a dense one otherwise;
    an atom built once is reused when its row wins again.

    Parameters
    ----------
    vertices : array_like or scipy.sparse matrix, shape (m, n)
        The points, one per row; finite, at least one row.

    Notes
    -----
    Ties go to the smallest row index.  Where ``V @ g`` could overflow or reach the
    subnormals (``max|g| max_i ||v_i||_1`` beyond ``2**±900``) the product is taken
    with ``g`` scaled by a power of two, so the answer holds for a direction of any
    scale.  :meth:`violation` solves an LP (scipy's HiGHS): use it for checks, not in
    a loop.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import ConvexHull
    >>> hull = ConvexHull([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> a = hull(np.array([1.0, -1.0]))
    >>> a.key, a.to_dense()
    (('row', 2), array([0., 2.]))
    """

    def __init__(self, vertices: Any) -> None:
        import scipy.sparse as sp  # frankwolfe._sparse has imported it already

        V: Any
        if issparse(vertices):
            # a private copy: in place, sum_duplicates rewrote the arrays the caller
            # shares (and failed on read-only ones)
            V = sp.csr_array(vertices, dtype=float, copy=True)
            V.sum_duplicates()
            self._sparse = True
        else:
            try:
                V = np.array(vertices, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(
                    f"ConvexHull: `vertices` must be a numeric (m, n) matrix, got {vertices!r}"
                ) from None
            self._sparse = False
        if V.ndim != 2 or V.shape[0] == 0 or V.shape[1] == 0:
            raise ShapeError(
                f"ConvexHull: `vertices` must be a non-empty (m, n) matrix, got shape {V.shape}"
            )
        check_finite("ConvexHull", "vertices", V)
        # the atoms answered are views of these rows (no copy per call): read-only, so an
        # in-place change of an answer (or of a result's atom) cannot move the domain
        for part in (V.data, V.indices, V.indptr) if self._sparse else (V,):
            part.setflags(write=False)
        self.vertices = V
        self._l1_exponent = _l1_exponent(V)
        self.n = int(V.shape[1])
        self.shape = (self.n,)
        self._kept: dict[tuple[int, tuple[int, ...]], Atom] = {}

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        # V @ g may overflow when max|g| max_i ||v_i||_1 nears 1.8e308 (rows at inf tie,
        # a row whose partial sums overflow before they cancel ranks last, and numpy
        # warns) and loses bits in the subnormals: outside the range g is scaled by a
        # power of two (exact barring subnormals), which keeps the ranking.  The bound
        # costs one pass over g; an np.errstate around the product and a check of its
        # values would cost as much
        exponent = binary_exponent(float(np.abs(flat).max()))
        bound = exponent + self._l1_exponent
        if -_RANGE <= bound <= _RANGE:
            i = int(np.argmin(self.vertices @ flat))
        else:
            # to a bound of about 1, no further up than keeps max|g| finite
            shift = min(-bound, 1023 - exponent)
            i = int(np.argmin(self.vertices @ np.ldexp(flat, shift)))
        slot = (i, direction.shape)
        atom = self._kept.get(slot)
        if atom is None:
            if len(self._kept) >= _MAX_KEPT:
                self._kept.clear()
            if self._sparse:
                lo, hi = self.vertices.indptr[i], self.vertices.indptr[i + 1]
                atom = Atom.sparse(self.vertices.indices[lo:hi], self.vertices.data[lo:hi],
                                   direction.shape, key=("row", i), copy=False)
            else:
                atom = Atom(self.vertices[i].reshape(direction.shape), key=("row", i), copy=False)
            self._kept[slot] = atom
        return atom

    def _rows(self) -> np.ndarray:
        return np.asarray(self.vertices.toarray() if self._sparse else self.vertices)

    def violation(self, x: np.ndarray) -> float:
        """``min ||V^T lam - x||_inf`` over the weights ``lam`` of the simplex, over the
        largest ``|v_ij|`` (1 if all are 0); ``inf`` for non-finite ``x``.  Cost: one
        LP with ``m + 1`` variables and ``2 n`` rows (scipy's HiGHS)."""
        flat = np.asarray(x, dtype=float).reshape(-1)
        n = self.n
        if flat.size != n:
            raise ShapeError(f"{self!r}.violation: `x` has {flat.size} entries, expected {n}")
        if not np.all(np.isfinite(flat)):
            return float("inf")
        V = self._rows()
        m = V.shape[0]
        scale = float(np.max(np.abs(V))) or 1.0
        if m == 1:
            return float(np.max(np.abs(V[0] - flat))) / scale
        from scipy.optimize import linprog

        # HiGHS refuses matrix entries above 1e15 and drops those below 1e-9: the LP is
        # homogeneous in (V, x), so far from 1 it is solved for both scaled by a power of
        # two (exact barring subnormals) to a largest entry in [0.5, 1), and t is scaled
        # back; near 1 they go as they are, to the accuracy they had (HiGHS's tolerances
        # are absolute), as payoff matrices do (objectives.saddle.payoffs_in_range)
        exponent = binary_exponent(max(scale, float(np.max(np.abs(flat)))))
        if abs(exponent) <= 10:
            exponent = 0
        V, flat = np.ldexp(V, -exponent), np.ldexp(flat, -exponent)
        # variables (lam, t): min t s.t. -t <= V^T lam - x <= t, sum lam = 1, lam >= 0
        A_ub = np.block([[V.T, -np.ones((n, 1))], [-V.T, -np.ones((n, 1))]])
        b_ub = np.concatenate([flat, -flat])
        A_eq = np.concatenate([np.ones(m), [0.0]])[None, :]
        cost = np.zeros(m + 1)
        cost[-1] = 1.0
        res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0],
                      bounds=(0, None), method="highs")
        if res.status != 0 or res.fun is None:  # the LP is feasible and bounded below by 0
            return float("inf")
        return math.ldexp(max(0.0, float(res.fun)), exponent) / scale

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 max_i ||v_i - c||_2`` with ``c`` the mean row: an upper bound, O(m n)
        (the exact value, the largest distance between two rows, costs O(m^2 n))."""
        V = self._rows()
        return 2.0 * float(np.max(np.linalg.norm(V - V.mean(axis=0), axis=1)))

    def _repr_params(self) -> dict[str, Any]:
        return {"m": int(self.vertices.shape[0]), "n": self.n}

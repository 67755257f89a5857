"""The ellipsoid ``{x : (x - c)^T A (x - c) <= r^2}``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._finite import check_finite
from .._sparse import issparse
from ..atoms import Atom
from ..errors import ShapeError
from ._checks import check_direction, check_radius
from .base import LMO

__all__ = ["Ellipsoid"]


class Ellipsoid(LMO):
    """The ellipsoid ``{x : (x - c)^T A (x - c) <= radius^2}``, ``A`` symmetric positive definite.

    Vertices: its whole boundary (a continuum: automatic keys).  LMO, closed form:
    ``c - radius * A^{-1} g / sqrt(g^T A^{-1} g)``.  ``A = L L^T`` is factored once
    (Cholesky, O(n^3)) and ``L^{-1}`` kept, so a call costs two matrix-vector
    products, O(n^2).  Dense answer.

    Parameters
    ----------
    A : array_like, shape (n, n)
        Symmetric positive definite (symmetric to 1e-10 relative; the symmetric part
        is used).  Dense: its Cholesky factor and that factor's inverse are dense
        anyway (a scipy.sparse matrix is refused; pass ``A.toarray()``).
    center : array_like, shape (n,), optional
        The centre ``c``; the origin by default.
    radius : float, default 1.0
        Positive and finite.

    Notes
    -----
    For the zero direction every point is optimal; the answer is then the centre
    (key ``("center",)``), as :class:`~frankwolfe.lmo.norms.L2Ball` answers ``0``.
    ``A = I`` gives the Euclidean ball around ``c``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Ellipsoid
    >>> E = Ellipsoid(np.diag([1.0, 4.0]), center=[1.0, 0.0])
    >>> E(np.array([0.0, 1.0])).to_dense()
    array([ 1. , -0.5])
    """

    def __init__(self, A: Any, center: Any = None, radius: float = 1.0) -> None:
        if issparse(A):  # the Cholesky factor and L^{-1} are dense whatever A is
            raise ValueError(f"Ellipsoid: `A` must be a dense (n, n) matrix, got a "
                             f"scipy.sparse {type(A).__name__}; pass A.toarray()")
        try:
            M = np.array(A, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"Ellipsoid: `A` must be a numeric (n, n) matrix, got {A!r}") from None
        if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
            raise ShapeError(
                f"Ellipsoid: `A` must be a non-empty square matrix, got shape {M.shape}"
            )
        check_finite("Ellipsoid", "A", M)
        n = M.shape[0]
        asym = float(np.max(np.abs(M - M.T)))
        if asym > 1e-10 * max(1.0, float(np.max(np.abs(M)))):
            raise ValueError(f"Ellipsoid: `A` must be symmetric, got max |A - A^T| = {asym:.3g}")
        M = (M + M.T) * 0.5
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            raise ValueError(
                "Ellipsoid: `A` must be positive definite (its Cholesky factorization fails)"
            ) from None
        from scipy.linalg import solve_triangular  # once, at construction

        self.A = M
        self._L = L
        self._Linv = solve_triangular(L, np.eye(n), lower=True)
        if center is None:
            c = np.zeros(n)
        else:
            try:
                c = np.array(center, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise ValueError(
                    f"Ellipsoid: `center` must be a numeric vector, got {center!r}"
                ) from None
            if c.size != n:
                raise ShapeError(f"Ellipsoid: `center` has {c.size} entries, expected {n}")
            check_finite("Ellipsoid", "center", c)
        self.center = c
        self.radius = check_radius("Ellipsoid", radius)
        self.n = n
        self.shape = (n,)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        m = float(np.max(np.abs(flat), initial=0.0))
        if m == 0.0:
            return Atom(self.center.reshape(direction.shape).copy(), key=("center",), copy=False)
        w = self._Linv @ (flat / m)  # scaled: no overflow in the norm
        s = self.center - (self.radius / float(np.linalg.norm(w))) * (self._Linv.T @ w)
        return Atom(s.reshape(direction.shape), copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||L^T (x - c)||_2 - radius) / radius``; ``inf`` for non-finite ``x``; O(n^2)."""
        flat = np.asarray(x, dtype=float).reshape(-1)
        if flat.size != self.n:
            raise ShapeError(f"{self!r}.violation: `x` has {flat.size} entries, expected "
                             f"{self.n}")
        if not np.all(np.isfinite(flat)):
            return float("inf")
        norm = float(np.linalg.norm(self._L.T @ (flat - self.center)))
        return max(0.0, norm - self.radius) / self.radius

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius / sqrt(lambda_min(A))`` (exact: the longest axis); one ``eigvalsh``,
        O(n^3)."""
        lam = float(np.linalg.eigvalsh(self.A)[0])
        return 2.0 * self.radius / float(np.sqrt(lam))

    def _repr_params(self) -> dict[str, Any]:
        return {"n": self.n, "radius": self.radius}

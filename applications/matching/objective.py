"""The relaxed quadratic assignment objective ``trace(A^T P B P^T)``."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from frankwolfe._sparse import issparse
from frankwolfe.errors import ShapeError
from frankwolfe.objectives.base import Objective
from frankwolfe.objectives.line import line_minimizer

__all__ = ["QAPObjective", "qap_value", "check_qap_matrices", "check_permutation"]


def check_qap_matrices(A: ArrayLike, B: ArrayLike,
                       who: str = "QAP") -> tuple[np.ndarray, np.ndarray]:
    """Validate the flow and distance matrices: finite, square, of one size.

    Returns them as C-contiguous float arrays; a scipy.sparse matrix is densified (the
    relaxation's gradient ``A P B^T + A^T P B`` and the local searches are dense).
    """
    out = []
    for name, M in (("A", A), ("B", B)):
        # np.asarray wrapped a sparse matrix into a 0-d object array ("shape ()")
        raw: Any = M
        M = raw.toarray() if issparse(raw) else np.asarray(raw)
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ShapeError(f"{who}: `{name}` must be a square matrix, got shape {M.shape}")
        if M.shape[0] == 0:
            raise ShapeError(f"{who}: `{name}` is empty (shape {M.shape}); need n >= 1")
        # bool too: a graph's adjacency matrix
        if not (np.issubdtype(M.dtype, np.number) or M.dtype == bool) or np.iscomplexobj(M):
            raise ValueError(f"{who}: `{name}` must be a real numeric matrix, got dtype {M.dtype}")
        M = np.ascontiguousarray(M, dtype=float)
        if not np.all(np.isfinite(M)):
            raise ValueError(f"{who}: `{name}` contains NaN or inf")
        out.append(M)
    if out[0].shape != out[1].shape:
        raise ShapeError(
            f"{who}: `A` and `B` must have the same shape, "
            f"got A {out[0].shape} and B {out[1].shape}"
        )
    return out[0], out[1]


def check_permutation(permutation: ArrayLike, n: int, who: str,
                      name: str = "permutation") -> np.ndarray:
    """``permutation`` as a fresh int64 array, or raise naming ``who`` and ``name``
    unless it is a permutation of ``0..n-1`` (the compiled searches index with it)."""
    raw = np.asarray(permutation)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer)
                                 or (np.issubdtype(raw.dtype, np.floating)
                                     and np.all(np.isfinite(raw)) and np.all(raw == np.rint(raw)))):
        raise ValueError(f"{who}: `{name}` must be integers, a permutation of 0..{n - 1}, "
                         f"got {permutation!r}")
    p = raw.astype(np.int64)
    if p.shape != (n,) or not np.array_equal(np.sort(p), np.arange(n)):
        raise ValueError(f"{who}: `{name}` must be a permutation of 0..{n - 1}, "
                         f"got {permutation!r}")
    return p


def qap_value(A: ArrayLike, B: ArrayLike, permutation: ArrayLike) -> float:
    """The QAP objective of a permutation: ``sum_{i,j} A[i, j] * B[p(i), p(j)]``.

    The convention of QAPLIB and of ``scipy.optimize.quadratic_assignment``: facility
    ``i`` goes to location ``p(i)``.

    Parameters
    ----------
    A, B : array_like of shape (n, n)
        The flow and distance matrices: real, finite, square, of one size.
    permutation : array_like of int, shape (n,)
        ``p``, a permutation of ``0..n-1`` (0-based, as
        :func:`project_to_permutation` returns it).

    Returns
    -------
    float
        The objective value.

    Raises
    ------
    ShapeError
        When ``A`` or ``B`` is not square, is empty, or their shapes differ.
    ValueError
        When ``A`` or ``B`` is not real or not finite, or ``permutation`` is not a
        permutation of ``0..n-1``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.matching import qap_value
    >>> A = np.array([[0, 1], [1, 0]]); B = np.array([[0, 2], [3, 0]])
    >>> qap_value(A, B, [1, 0])
    5.0
    """
    A, B = check_qap_matrices(A, B, "qap_value")
    p = check_permutation(permutation, A.shape[0], "qap_value")
    return float(np.vdot(A, B[p][:, p]))


class QAPObjective(Objective):
    """Koopmans-Beckmann QAP relaxed to doubly stochastic matrices.

    ``f(P) = trace(A^T P B P^T) = <A, P B P^T>``; at a permutation matrix
    ``P[i, p(i)] = 1`` it is ``sum_{i,j} A[i, j] B[p(i), p(j)]``, the
    convention of QAPLIB and of ``scipy.optimize.quadratic_assignment``.

    The objective is quadratic but in general indefinite, so it is declared
    ``convex = False``: the Frank-Wolfe gap then certifies stationarity, not
    optimality.

    Parameters
    ----------
    A, B : (n, n) array_like
        Flow and distance matrices (any real square matrices; asymmetry is fine).

    Notes
    -----
    Gradient ``A P B^T + A^T P B`` (two pairs of n x n products).  As ``f`` is
    homogeneous of degree 2, ``f(P) = <grad f(P), P> / 2``, so value and
    gradient together cost the gradient only.  Along a direction ``D``,
    ``f(P + t D) = f(P) + t <grad f(P), D> + t^2 <A, D B D^T>``: the line
    search is closed form (:meth:`exact_step`).
    """

    convex = False

    def __init__(self, A: ArrayLike, B: ArrayLike) -> None:
        self.A, self.B = check_qap_matrices(A, B, "QAPObjective")
        self.n = self.A.shape[0]
        self.shape = (self.n, self.n)
        # ||grad f(P) - grad f(Q)||_F <= (||A||_2 ||B||_2 + ||A^T||_2 ||B||_2) ||P - Q||_F
        self.smoothness = 2.0 * float(np.linalg.norm(self.A, 2) * np.linalg.norm(self.B, 2))

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            raise ShapeError(f"QAPObjective: `x` must have shape {self.shape}, got {x.shape}")
        return x

    def value(self, x: np.ndarray) -> float:
        """``<A, P B P^T>``."""
        x = self._check(x)
        return float(np.vdot(self.A, x @ self.B @ x.T))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """``A P B^T + A^T P B``."""
        x = self._check(x)
        return self.A @ x @ self.B.T + self.A.T @ x @ self.B

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        g = self.gradient(x)
        return 0.5 * float(np.vdot(g, x)), g

    def curvature(self, direction: np.ndarray) -> float:
        """The coefficient ``<A, D B D^T>`` of ``t^2`` in ``f(P + t D)``."""
        d = np.asarray(direction, dtype=float)
        return float(np.vdot(self.A, d @ self.B @ d.T))

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        """Minimizer of the 1-D quadratic ``f(x + t d)`` over all reals, unclipped.

        ``f(x + t d) = f(x) + s t + a t^2`` with slope ``s = <g, d>`` and
        curvature ``a = <A, D B D^T>`` (:meth:`curvature`), solved by
        :func:`~frankwolfe.objectives.line.line_minimizer`.  With ``a > 0`` the
        stationary point ``-s / (2a)`` is the minimizer.  With ``a <= 0``
        (concave or linear along ``d``, ``a`` within rounding of 0 counting as
        0) the line is unbounded below or linear: ``inf`` when ``s < 0``, which
        the step-size rule clips to ``t_max`` (``f(t_max) - f(0) = t_max (s + a
        t_max) < 0``), ``-inf`` when ``s > 0``; with ``s == 0``, ``inf`` for
        ``a < 0`` and 0 for ``a == 0``.
        """
        slope = float(np.vdot(gradient, direction))
        a = self.curvature(direction)
        # the rounding guard's scale <|A|, |D| |B| |D|^T> (an extra product) matters only
        # where a <= 0: a positive curvature is taken as it is
        scale = 0.0
        if a <= 0:
            d = np.abs(np.asarray(direction, dtype=float))
            scale = 2.0 * float(np.vdot(np.abs(self.A), d @ np.abs(self.B) @ d.T))
        return line_minimizer(slope, 2.0 * a, scale, self.convex, "QAPObjective")

    def hessian_vector_product(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``A V B^T + A^T V B`` (the Hessian is constant)."""
        return self.gradient(v)

    def __repr__(self) -> str:
        return f"QAPObjective(n={self.n})"

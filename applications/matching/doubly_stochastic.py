"""Doubly stochastic matrices: starts, rounding to a permutation, decomposition."""

from __future__ import annotations

import numpy as np

from frankwolfe._random import as_generator
from frankwolfe.errors import InfeasibleError, ShapeError

__all__ = [
    "barycenter",
    "sinkhorn",
    "random_doubly_stochastic",
    "project_to_permutation",
    "birkhoff_decomposition",
]


def barycenter(n: int) -> np.ndarray:
    """The centre ``J / n`` of the Birkhoff polytope (all entries ``1/n``)."""
    return np.full((n, n), 1.0 / n)


def sinkhorn(M: np.ndarray, *, tol: float = 1e-13, max_iter: int = 100_000) -> np.ndarray:
    """Scale a positive matrix to a doubly stochastic one (Sinkhorn-Knopp).

    Parameters
    ----------
    M : (n, n) ndarray
        Entries > 0.
    tol : float
        Stop when every row and column sum is within ``tol`` of 1.
    max_iter : int
        Bound on the alternating row/column normalizations.

    Returns
    -------
    ndarray
        ``diag(r) M diag(c)`` with unit row and column sums.
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ShapeError(f"sinkhorn: `M` must be a square matrix, got shape {M.shape}")
    if not (np.all(np.isfinite(M)) and np.all(M > 0)):
        raise ValueError("sinkhorn: `M` must have finite, strictly positive entries")
    P = M / M.sum(axis=1, keepdims=True)
    for _ in range(max_iter):
        P /= P.sum(axis=0, keepdims=True)
        rows = P.sum(axis=1)
        if np.abs(rows - 1.0).max() <= tol:
            break
        P /= rows[:, None]
    return P


def random_doubly_stochastic(n: int,
                             random_state: int | np.random.Generator | None = None) -> np.ndarray:
    """A random start ``(J/n + K) / 2``, ``K`` the Sinkhorn scaling of a uniform matrix.

    The distribution of ``P0="randomized"`` in
    ``scipy.optimize.quadratic_assignment`` (which scales only to 1e-3;
    here the start is doubly stochastic to rounding).  ``random_state`` is a
    seed or a ``numpy.random.Generator``.
    """
    K = sinkhorn(as_generator(random_state).uniform(size=(n, n)))
    return 0.5 * (barycenter(n) + K)


def project_to_permutation(P: np.ndarray) -> np.ndarray:
    """The permutation ``p`` maximizing ``sum_i P[i, p(i)]`` (Hungarian method).

    This is the nearest permutation matrix to ``P`` in Frobenius norm.
    """
    # scipy.optimize costs ~0.6 s to import: the package's import should not pay it
    from scipy.optimize import linear_sum_assignment

    _, col = linear_sum_assignment(np.asarray(P, dtype=float), maximize=True)
    return col.astype(np.int64)


def check_doubly_stochastic(P: np.ndarray, n: int, name: str = "P0",
                            tol: float = 1e-8) -> np.ndarray:
    """Return ``P`` as a float array, or raise naming ``name`` if it is not doubly stochastic."""
    P = np.array(P, dtype=float)
    if P.shape != (n, n):
        raise ShapeError(f"`{name}` must have shape {(n, n)}, got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"`{name}` contains NaN or inf")
    viol = max(-float(P.min()), float(np.abs(P.sum(axis=0) - 1).max()),
               float(np.abs(P.sum(axis=1) - 1).max()))
    if viol > tol:
        raise InfeasibleError(
            f"`{name}` must be doubly stochastic (entries >= 0, unit row and column sums); "
            f"violation {viol:.3g} > {tol:g}"
        )
    return P


def birkhoff_decomposition(P: np.ndarray, *, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Write a doubly stochastic matrix as a convex combination of permutations.

    Greedy Birkhoff-von Neumann: repeatedly find a permutation inside the
    support of the remainder (an assignment problem that forbids entries
    ``<= tol``), take the smallest entry on it as its weight and subtract.
    Each round zeroes at least one entry, so at most ``n^2 - 2n + 2``
    permutations are used; each round costs one O(n^3) assignment.

    Parameters
    ----------
    P : (n, n) ndarray
        Doubly stochastic.
    tol : float
        Entries at or below this count as zero.

    Returns
    -------
    perms : (k, n) ndarray of int
        Permutations ``p`` (``P_p[i, p(i)] = 1``).
    weights : (k,) ndarray
        Non-negative, summing to 1 (renormalized: the remainder left by
        rounding, at most ``n * tol`` per entry, is spread proportionally).
    """
    from scipy.optimize import linear_sum_assignment  # see project_to_permutation

    R = np.array(P, dtype=float)
    n = R.shape[0]
    rows = np.arange(n)
    perms: list[np.ndarray] = []
    weights: list[float] = []
    for _ in range(n * n):
        support = R > tol
        if not support.any():
            break
        # Forbidden entries cost n + 1, more than any assignment inside the
        # support saves (>= -n), so the optimum stays in the support when
        # one exists; among those it prefers large entries (fewer rounds).
        cost = np.where(support, -R, n + 1.0)
        _, col = linear_sum_assignment(cost)
        if not np.all(support[rows, col]):
            break  # only rounding debris is left
        w = float(R[rows, col].min())
        R[rows, col] -= w
        perms.append(col.astype(np.int64))
        weights.append(w)
    if not perms:
        raise InfeasibleError("birkhoff_decomposition: `P` has no permutation in its support")
    wts = np.asarray(weights)
    return np.asarray(perms), wts / wts.sum()

"""Doubly stochastic matrices: starts, rounding to a permutation, decomposition."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from frankwolfe._numbers import check_real, check_whole
from frankwolfe._random import as_generator
from frankwolfe._warnings import warn_user
from frankwolfe.errors import InfeasibleError, ShapeError
from frankwolfe.lmo.base import feasibility_tolerance

__all__ = [
    "barycenter",
    "sinkhorn",
    "random_doubly_stochastic",
    "project_to_permutation",
    "birkhoff_decomposition",
]


def _check_tol(tol: Any, where: str) -> float:
    return check_real(tol, "tol", where, low=0)


def barycenter(n: int) -> np.ndarray:
    """The centre ``J / n`` of the Birkhoff polytope (all entries ``1/n``).

    Parameters
    ----------
    n : int
        The order, at least 1.

    Returns
    -------
    ndarray of shape (n, n)
        Float64, every entry ``1/n`` (doubly stochastic).

    Raises
    ------
    ValueError
        When ``n`` is not a whole number >= 1.
    """
    n = check_whole(n, "n", 1, "barycenter")
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
        Bound on the alternating row/column normalizations; a ``ConvergenceWarning``
        (scikit-learn's, as every budget that ends a run before its tolerance in the
        package) says how far from doubly stochastic the answer is when it ends the
        scaling before ``tol``.

    Returns
    -------
    ndarray
        ``diag(r) M diag(c)`` with unit row and column sums.
    """
    tol = _check_tol(tol, "sinkhorn")
    check_whole(max_iter, "max_iter", 1, "sinkhorn")
    M = np.asarray(M)
    if M.dtype.kind not in "biuf":
        raise TypeError(f"sinkhorn: `M` must be a real matrix, got dtype {M.dtype}")
    M = M.astype(float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ShapeError(f"sinkhorn: `M` must be a square matrix, got shape {M.shape}")
    bad = ~(np.isfinite(M) & (M > 0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"sinkhorn: `M` must have finite, strictly positive entries, got "
                         f"{float(M[i, j])!r} at ({i}, {j})")
    P = M / M.sum(axis=1, keepdims=True)
    for _ in range(int(max_iter)):
        P /= P.sum(axis=0, keepdims=True)
        rows = P.sum(axis=1)
        if np.abs(rows - 1.0).max() <= tol:
            return P
        P /= rows[:, None]
    cols = float(np.abs(P.sum(axis=0) - 1.0).max())
    if cols > tol:  # rows are exact after the last row scaling; columns are not
        # imported here: scikit-learn is not imported with the application
        from sklearn.exceptions import ConvergenceWarning

        warn_user(f"sinkhorn: max_iter={max_iter} ended the scaling with column sums "
                      f"{cols:.3g} from 1 (tol={tol:g})", ConvergenceWarning)
    return P


def random_doubly_stochastic(n: int,
                             random_state: int | np.random.Generator | None = None) -> np.ndarray:
    """A random start ``(J/n + K) / 2``, ``K`` the Sinkhorn scaling of a uniform matrix.

    The distribution of ``P0="randomized"`` in
    ``scipy.optimize.quadratic_assignment`` (which scales only to 1e-3;
    here the start is doubly stochastic to rounding).

    Parameters
    ----------
    n : int
        The order, at least 1.
    random_state : int, numpy.random.Generator or None, default None
        A seed or a generator (``None``: fresh entropy, a different start each call).

    Returns
    -------
    ndarray of shape (n, n)
        Float64 with entries in ``(0, 1]`` and unit row and column sums to rounding.

    Raises
    ------
    ValueError
        When ``n`` is not a whole number >= 1.
    """
    n = check_whole(n, "n", 1, "random_doubly_stochastic")
    K = sinkhorn(as_generator(random_state).uniform(size=(n, n)))
    return 0.5 * (barycenter(n) + K)


def project_to_permutation(P: ArrayLike) -> np.ndarray:
    """The permutation ``p`` maximizing ``sum_i P[i, p(i)]`` (Hungarian method).

    This is the nearest permutation matrix to ``P`` in Frobenius norm.

    Parameters
    ----------
    P : array_like of shape (n, n)
        A finite square matrix (typically a doubly stochastic Frank-Wolfe iterate).

    Returns
    -------
    ndarray of int64, shape (n,)
        ``p`` with ``p[i]`` the column matched to row ``i`` (0-based); the permutation
        matrix is ``np.eye(n)[p]``.

    Raises
    ------
    ShapeError
        When ``P`` is not a square matrix.
    ValueError
        When ``P`` contains NaN or inf.
    """
    # scipy.optimize is slow to import: the package's import should not pay it
    # (benchmarks/README.md, "Measurements behind code choices")
    from scipy.optimize import linear_sum_assignment

    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ShapeError(f"project_to_permutation: `P` must be a square matrix, got shape "
                         f"{P.shape}")
    bad = ~np.isfinite(P)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"project_to_permutation: `P` contains NaN or inf ({float(P[i, j])!r} at "
                         f"({i}, {j}))")
    _, col = linear_sum_assignment(P, maximize=True)
    return col.astype(np.int64)


def check_doubly_stochastic(P: np.ndarray, n: int | None, name: str = "P0",
                            tol: float = 1e-8, where: str = "") -> np.ndarray:
    """Return ``P`` as a float array, or raise naming ``name`` (after ``where: ``) if it
    is not doubly stochastic (of order ``n``; any square order where ``n`` is None).

    ``tol`` is raised to a few machine epsilons of ``P``'s float type when that is
    coarser than float64 (:func:`~frankwolfe.lmo.base.feasibility_tolerance`): the
    float32 barycenter's row sums are off by ``2.98e-08``."""
    at = f"{where}: " if where else ""
    P = np.array(P)
    if P.dtype.kind not in "biuf":  # a boolean permutation matrix is one
        raise TypeError(f"{at}`{name}` must be a real matrix, got dtype {P.dtype}")
    tol = max(tol, feasibility_tolerance(P))
    P = P.astype(float)
    if n is None and P.ndim == 2 and P.shape[0] == P.shape[1] and P.size:
        n = P.shape[0]
    if P.shape != (n, n):
        expected = "a non-empty square matrix" if n is None else f"shape {(n, n)}"
        raise ShapeError(f"{at}`{name}` must have {expected}, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"{at}`{name}` contains NaN or inf")
    viol = max(-float(P.min()), float(np.abs(P.sum(axis=0) - 1).max()),
               float(np.abs(P.sum(axis=1) - 1).max()))
    if viol > tol:
        raise InfeasibleError(
            f"{at}`{name}` must be doubly stochastic (entries >= 0, unit row and column sums); "
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
        Doubly stochastic (to 1e-6 in each row and column sum and each entry's sign;
        anything else is refused with :class:`~frankwolfe.errors.InfeasibleError`).
    tol : float
        Entries at or below this count as zero; finite, ``>= 0``.

    Returns
    -------
    perms : (k, n) ndarray of int
        Permutations ``p`` (``P_p[i, p(i)] = 1``).
    weights : (k,) ndarray
        Non-negative, summing to 1 (renormalized: the remainder left by
        rounding, at most ``n * tol`` per entry, is spread proportionally).
    """
    from scipy.optimize import linear_sum_assignment  # see project_to_permutation

    tol = _check_tol(tol, "birkhoff_decomposition")
    # the greedy rounds decompose whatever they are given: a matrix that is not doubly
    # stochastic came back as another one
    R = check_doubly_stochastic(P, None, "P", tol=1e-6, where="birkhoff_decomposition")
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

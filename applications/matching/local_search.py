"""2-opt local search for the quadratic assignment problem."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["two_opt", "swap_deltas"]


@njit(cache=True, nogil=True)
def _swap_delta(A, B, p, r, s):
    # Change of sum_ij A[i,j] B[p_i,p_j] when p_r and p_s are exchanged
    # (Burkard-Rendl formula for asymmetric matrices): O(n).
    pr = p[r]
    ps = p[s]
    d = ((A[r, r] - A[s, s]) * (B[ps, ps] - B[pr, pr])
         + (A[r, s] - A[s, r]) * (B[ps, pr] - B[pr, ps]))
    for k in range(p.shape[0]):
        if k == r or k == s:
            continue
        pk = p[k]
        d += ((A[k, r] - A[k, s]) * (B[pk, ps] - B[pk, pr])
              + (A[r, k] - A[s, k]) * (B[ps, pk] - B[pr, pk]))
    return d


@njit(cache=True, nogil=True)
def _all_deltas(A, B, p):
    n = p.shape[0]
    out = np.zeros((n, n))
    for r in range(n):
        for s in range(r + 1, n):
            d = _swap_delta(A, B, p, r, s)
            out[r, s] = d
            out[s, r] = d
    return out


@njit(cache=True, nogil=True)
def _two_opt(A, B, p, tol, max_swaps):
    # Best-improvement 2-opt: each pass scans all n(n-1)/2 swaps (O(n^3))
    # and applies the best one; stops at a 2-opt local minimum.
    n = p.shape[0]
    n_swaps = 0
    total = 0.0
    while n_swaps < max_swaps:
        best = -tol
        br = -1
        bs = -1
        for r in range(n):
            for s in range(r + 1, n):
                d = _swap_delta(A, B, p, r, s)
                if d < best:
                    best = d
                    br = r
                    bs = s
        if br < 0:
            break
        t = p[br]
        p[br] = p[bs]
        p[bs] = t
        total += best
        n_swaps += 1
    return n_swaps, total


def swap_deltas(A: np.ndarray, B: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """All 2-swap changes of the QAP objective at ``permutation``.

    Parameters
    ----------
    A, B : (n, n) ndarray
        Flow and distance matrices.
    permutation : (n,) array of int
        ``p``, 0-based, objective ``sum_{i,j} A[i, j] B[p(i), p(j)]``.

    Returns
    -------
    (n, n) ndarray
        Symmetric; entry ``[r, s]`` is the change when ``p(r)`` and ``p(s)``
        are exchanged (0 on the diagonal).  Cost O(n^3), O(n) per swap.
    """
    A = np.ascontiguousarray(A, dtype=float)
    B = np.ascontiguousarray(B, dtype=float)
    p = np.ascontiguousarray(permutation, dtype=np.int64)
    return _all_deltas(A, B, p)


def two_opt(A: np.ndarray, B: np.ndarray, permutation: np.ndarray, *, tol: float | None = None,
            max_swaps: int = 1_000_000) -> tuple[np.ndarray, int]:
    """Improve a QAP permutation by pairwise exchanges until none helps.

    Best-improvement 2-opt: every pass evaluates all ``n(n-1)/2`` exchanges
    with the O(n) swap-delta formula (numba) and applies the best one.  The
    objective never increases.

    Parameters
    ----------
    A, B : (n, n) ndarray
        Flow and distance matrices.
    permutation : (n,) array of int
        Starting ``p`` (0-based); not modified.
    tol : float, optional
        An exchange must lower the objective by more than ``tol``; default
        ``1e-12 * (sum |A| * max |B| + 1)``, above the rounding of a delta,
        so rounding cannot make the search cycle.
    max_swaps : int
        Bound on the number of exchanges.

    Returns
    -------
    permutation : ndarray of int
        A 2-opt local minimum (or the last one after ``max_swaps``).
    n_swaps : int
        Exchanges applied.
    """
    A = np.ascontiguousarray(A, dtype=float)
    B = np.ascontiguousarray(B, dtype=float)
    p = np.array(permutation, dtype=np.int64)
    if tol is None:
        tol = 1e-12 * (float(np.abs(A).sum()) * float(np.abs(B).max(initial=0.0)) + 1.0)
    n_swaps, _ = _two_opt(A, B, p, float(tol), int(max_swaps))
    return p, int(n_swaps)

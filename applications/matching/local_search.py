"""Local search for the quadratic assignment problem: 2-opt and robust tabu search.

Both move by pairwise exchanges ``p(r) <-> p(s)`` and price them with the
O(n) swap-delta formula of Burkard and Rendl (asymmetric matrices).  The
robust tabu search (Taillard, Parallel Computing 17, 1991) keeps the whole
table of deltas and updates it in O(1) per untouched pair after a move, so
one iteration (choose the best allowed exchange, apply it) costs O(n^2).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from frankwolfe._numbers import check_real, check_whole
from frankwolfe._random import as_generator

from .objective import check_permutation, check_qap_matrices

__all__ = ["two_opt", "swap_deltas", "TabuSearch"]


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
    A, B = check_qap_matrices(A, B, "swap_deltas")
    p = check_permutation(permutation, A.shape[0], "swap_deltas")
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
        ``1e-12 * sum |A| * max |B|``, above the rounding of a delta, so
        rounding cannot make the search cycle.  It is relative: scaling ``A``
        or ``B`` scales it alike and leaves the search unchanged (0 when ``A``
        or ``B`` is zero, where every exchange changes nothing).
    max_swaps : int
        Bound on the number of exchanges.

    Returns
    -------
    permutation : ndarray of int
        A 2-opt local minimum (or the last one after ``max_swaps``).
    n_swaps : int
        Exchanges applied.
    """
    A, B = check_qap_matrices(A, B, "two_opt")
    p = check_permutation(permutation, A.shape[0], "two_opt")
    if tol is not None:
        check_real(tol, "tol", "two_opt", low=0, finite=False)
    max_swaps = check_whole(max_swaps, "max_swaps", 0, "two_opt")
    if tol is None:
        # relative, with no absolute floor: a floor of 1e-12 outweighed every delta once
        # A * B was small (at A, B scaled by 2**-30 no exchange passed it)
        tol = 1e-12 * float(np.abs(A).sum()) * float(np.abs(B).max(initial=0.0))
    # the kernel counts in int64: a larger budget is no budget at all
    n_swaps, _ = _two_opt(A, B, p, float(tol), min(int(max_swaps), np.iinfo(np.int64).max))
    return p, int(n_swaps)


@njit(cache=True, nogil=True)
def _delta_after_move(A, B, p, delta, r, s, u, v):
    # Taillard's O(1) update of delta[r, s] after the exchange (u, v) (p already
    # exchanged), valid when {r, s} and {u, v} are disjoint.
    pr = p[r]
    ps = p[s]
    pu = p[u]
    pv = p[v]
    return (delta[r, s]
            + (A[u, r] - A[u, s] + A[v, s] - A[v, r])
            * (B[pv, pr] - B[pv, ps] + B[pu, ps] - B[pu, pr])
            + (A[r, u] - A[s, u] + A[s, v] - A[r, v])
            * (B[pr, pv] - B[ps, pv] + B[ps, pu] - B[pr, pu]))


@njit(cache=True, nogil=True)
def _tabu_run(A, B, p, delta, tabu, best_p, state, durations, aspiration):
    # Robust tabu search iterations, one per entry of ``durations`` (random tabu
    # tenures drawn by the caller).  ``state`` = [iteration, cost, best cost].
    # Moving p(r) <-> p(s) is tabu when both r would return to a location it
    # left recently and s too; it is allowed anyway when it beats the best cost
    # (aspiration by objective) or when one of the two has not been at that
    # location for ``aspiration`` iterations (diversification).
    n = p.shape[0]
    it = int(state[0])
    cost = state[1]
    best = state[2]
    for t in range(durations.shape[0] // 2):
        it += 1
        br = -1
        bs = -1
        best_delta = np.inf
        aspired_found = False
        for r in range(n):
            for s in range(r + 1, n):
                d = delta[r, s]
                allowed = tabu[r, p[s]] < it or tabu[s, p[r]] < it
                aspired = (tabu[r, p[s]] < it - aspiration or tabu[s, p[r]] < it - aspiration
                           or cost + d < best)
                if aspired and not aspired_found:
                    aspired_found = True
                    best_delta = d
                    br = r
                    bs = s
                elif d < best_delta and (aspired or (allowed and not aspired_found)):
                    best_delta = d
                    br = r
                    bs = s
        if br < 0:  # every exchange is tabu: wait for the tenures to expire
            continue
        tmp = p[br]
        p[br] = p[bs]
        p[bs] = tmp
        cost += best_delta
        # forbid both units to return to the location they just left
        tabu[br, p[bs]] = it + durations[2 * t]
        tabu[bs, p[br]] = it + durations[2 * t + 1]
        if cost < best:
            best = cost
            for r in range(n):  # not best_p[:] = p: see chain/batch.py (its comment)
                best_p[r] = p[r]
        for r in range(n):
            for s in range(r + 1, n):
                if r != br and r != bs and s != br and s != bs:
                    delta[r, s] = _delta_after_move(A, B, p, delta, r, s, br, bs)
                else:
                    delta[r, s] = _swap_delta(A, B, p, r, s)
    state[0] = it
    state[1] = cost
    state[2] = best


class TabuSearch:
    """Robust tabu search (Taillard 1991) for ``min_p sum A[i,j] B[p(i),p(j)]``.

    Each iteration applies the best pairwise exchange that is not tabu (a
    tabu one when it beats the best cost found, or when one of its units
    has avoided the target location for ``aspiration`` iterations).  After
    an exchange, both units are barred from returning to the locations they
    left for a random tenure ``u^3 * 8n`` iterations (``u`` uniform), as in
    Taillard's code.  The table of exchange deltas is updated in O(1) per
    pair untouched by the move, so an iteration costs O(n^2).  Runs can be
    continued (:meth:`run` again) and stopped at a deadline between chunks.

    Parameters
    ----------
    A, B : (n, n) ndarray
        Flow and distance matrices.
    permutation : (n,) array of int
        Start (0-based); not modified.
    random_state : int or numpy.random.Generator, optional
        Seed or generator of the random tenures.

    Attributes
    ----------
    permutation : ndarray of int
        The current permutation.
    best_permutation : ndarray of int
        The best permutation met.
    fun, best_fun : float
        Their objectives, tracked through the deltas (recompute with
        :func:`~frankwolfe.applications.matching.qap_value` for exact values).
    n_iter : int
        Iterations done.
    """

    def __init__(self, A: np.ndarray, B: np.ndarray, permutation: np.ndarray,
                 random_state: int | np.random.Generator | None = None) -> None:
        from .objective import qap_value

        self.A, self.B = check_qap_matrices(A, B, "TabuSearch")
        n = self.A.shape[0]
        p = check_permutation(permutation, n, "TabuSearch")
        self.rng = as_generator(random_state)
        self.permutation = p
        self.best_permutation = p.copy()
        self.delta = _all_deltas(self.A, self.B, p)
        self.tabu = np.zeros((n, n), dtype=np.int64)
        fun = qap_value(self.A, self.B, p)
        self._state = np.array([0.0, fun, fun])
        self.tenure = 8 * n
        self.aspiration = 5 * n * n

    @property
    def n_iter(self) -> int:
        return int(self._state[0])

    @property
    def fun(self) -> float:
        return float(self._state[1])

    @property
    def best_fun(self) -> float:
        return float(self._state[2])

    def run(self, n_iter: int) -> TabuSearch:
        """Do ``n_iter`` more iterations; returns ``self``."""
        if self.permutation.size < 2 or n_iter <= 0:
            return self
        u = self.rng.random(2 * int(n_iter))
        durations = (u * u * u * self.tenure).astype(np.int64)
        _tabu_run(self.A, self.B, self.permutation, self.delta, self.tabu,
                  self.best_permutation, self._state, durations, self.aspiration)
        return self

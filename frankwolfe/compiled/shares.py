"""What lock-free passes fold after their threads: the threads' private shares of ``x``
(and, across processes, a worker's share into the shared ``x``)."""

from __future__ import annotations

from numba import njit

from .atomic import atomic_add

__all__ = ["fold_share_atomic", "fold_shares"]


@njit(cache=True, nogil=True)
def fold_shares(x, shares, lo, hi):  # pragma: no cover - compiled
    """``x[lo:hi] += shares[:, lo:hi].sum(axis=0)``, the rows then zero.  A share's zero
    coordinates are left alone: pages of a share that its thread never wrote stay
    unmapped."""
    for k in range(shares.shape[0]):
        row = shares[k]
        for p in range(lo, hi):
            v = row[p]
            if v != 0.0:
                x[p] += v
                row[p] = 0.0


@njit(cache=True, nogil=True)
def fold_share_atomic(x, share):  # pragma: no cover - compiled
    """``x += share`` with atomic adds (other processes fold theirs into ``x`` at the same
    time), ``share`` then zero; its zero coordinates are skipped."""
    for p in range(share.size):
        v = share[p]
        if v != 0.0:
            atomic_add(x, p, v)
            share[p] = 0.0

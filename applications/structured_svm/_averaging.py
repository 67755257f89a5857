"""Running averages of iterates for the application's own solvers (SSG, extragradient).

``"uniform"``: the plain mean of every iterate; ``"weighted"``: iterate ``x_j``
(``x_0`` first) gets weight proportional to ``j`` (``rho = 2/(k+2)`` after step
``k``, the -wavg variants); ``"tail"``: the 0.5-suffix average by the doubling trick -- epochs
start at iterates 1, 2, 4, 8, ... (1-based) and the reported average is the
mean over the previous epoch and the current one, i.e. over the iterates
``2^(j-1) .. t`` with ``2^j <= t``, which is at least the last half of them
and at most the last three quarters.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RunningAverage", "AVERAGING"]

AVERAGING = ("uniform", "weighted", "tail")


class RunningAverage:
    """Average of a sequence of tuples of arrays (updated in place, O(size) per update).

    Parameters
    ----------
    kind : {"uniform", "weighted", "tail"}
    arrays : tuple of ndarray
        The first iterate's arrays (copied); they define the shapes.
    """

    def __init__(self, kind: str, arrays: tuple[np.ndarray, ...]) -> None:
        if kind not in AVERAGING:
            raise ValueError(f"averaging must be one of {list(AVERAGING)} or None, got {kind!r}")
        self.kind = kind
        self.cur = tuple(np.array(a, dtype=float) for a in arrays)
        self.prev = tuple(np.zeros_like(a) for a in self.cur)
        self.n_cur = 1  # iterates in the current epoch (tail) / in the mean
        self.n_prev = 0
        self.t = 1      # iterates seen (1-based index of the last one)
        self.next_epoch = 2

    def update(self, arrays: tuple[np.ndarray, ...]) -> None:
        """Add the next iterate."""
        self.t += 1
        if self.kind == "weighted":
            rho = 2.0 / self.t  # iterate x_j (x_0 first) gets weight j: rho = 2/(j+1)
        else:
            if self.kind == "tail" and self.t == self.next_epoch:
                self.prev, self.cur = self.cur, self.prev
                self.n_prev, self.n_cur = self.n_cur, 0
                self.next_epoch *= 2
                for c in self.cur:
                    c[...] = 0.0
            self.n_cur += 1
            rho = 1.0 / self.n_cur
        for c, a in zip(self.cur, arrays):
            c += rho * (a - c)

    def value(self) -> tuple[np.ndarray, ...]:
        """The current average (new arrays for "tail", views otherwise)."""
        if self.kind != "tail" or self.n_prev == 0:
            return self.cur
        a = self.n_prev / (self.n_prev + self.n_cur)
        return tuple(a * p + (1.0 - a) * c for p, c in zip(self.prev, self.cur))

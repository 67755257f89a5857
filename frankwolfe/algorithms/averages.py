"""Running averages of iterates, for solvers that keep their own iterate (the structured
SVM's SSG and dual extragradient), and the averaging kinds every averaged method takes
(block-coordinate FW averages lazily: :class:`~frankwolfe.algorithms.bcfw.store.LazyAverage`).

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

__all__ = ["RunningAverage", "ScaledAverage", "WeightedMean", "AVERAGING"]

#: the averaging kinds (``averaging=`` of BCFW, the structured SVM's estimators and SSG)
AVERAGING = ("weighted", "uniform", "tail")


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


class ScaledAverage:
    """The averages of :class:`RunningAverage` over iterates ``w = s v`` kept scaled.

    For solvers whose step shrinks the whole iterate and then changes few
    coordinates (SSG: ``w <- (1 - eta) w + sparse``), stored as a scalar ``s``
    times a vector ``v`` so a step costs O(changed coordinates).  The average
    is kept in the same spirit as ``abar = a_u u + a_v v`` (two scalars and one
    more vector, the lazy averaging of Xu 2011 / Bottou's averaged SGD): adding
    the iterate changes only the scalars, and a change of ``v`` on a few
    coordinates is compensated on the same coordinates of ``u``.  The 0.5-suffix
    ("tail") average keeps the finished epoch as a dense vector (O(d) once per
    epoch, log2 of the steps in all).  Same averages as :class:`RunningAverage`
    up to rounding.

    Parameters
    ----------
    kind : {"uniform", "weighted", "tail"}
    v : ndarray
        The scaled iterate's vector (held by reference: the solver changes it
        in place and reports every change through :meth:`v_changed`,
        :meth:`v_rescaled` and :meth:`v_reset`).
    s : float
        The first iterate is ``s * v``.
    """

    _TINY = 1e-100  # renormalize u before a_u underflows

    def __init__(self, kind: str, v: np.ndarray, s: float) -> None:
        if kind not in AVERAGING:
            raise ValueError(f"averaging must be one of {list(AVERAGING)} or None, got {kind!r}")
        self.kind = kind
        self.v = v
        self.u = np.zeros_like(v)
        self.a_u, self.a_v = 1.0, float(s)  # abar = a_u u + a_v v = the first iterate
        self.prev = np.zeros_like(v)  # tail: the finished epoch's mean (n_prev = 0: none yet)
        self.n_cur, self.n_prev, self.t, self.next_epoch = 1, 0, 1, 2

    def v_changed(self, idx: np.ndarray, delta: np.ndarray) -> None:
        """``v[idx]`` has just been increased by ``delta``: keep the average as it was."""
        if self.a_v != 0.0:
            self.u[idx] -= (self.a_v / self.a_u) * delta

    def v_rescaled(self, factor: float) -> None:
        """``v`` has just been multiplied by ``factor`` (non-zero)."""
        self.a_v /= factor

    def fold(self) -> None:
        """Move the whole average into ``u`` (O(d)), before ``v`` is overwritten."""
        self.u *= self.a_u
        self.u += self.a_v * self.v
        self.a_u, self.a_v = 1.0, 0.0

    def update(self, s: float) -> None:
        """Add the next iterate ``s * v``."""
        self.t += 1
        if self.kind == "weighted":
            rho = 2.0 / self.t
        else:
            if self.kind == "tail" and self.t == self.next_epoch:
                self.prev = self._current()
                self.n_prev, self.n_cur = self.n_cur, 0
                self.next_epoch *= 2
            self.n_cur += 1
            rho = 1.0 / self.n_cur
        if rho >= 1.0:  # the average restarts at this iterate
            self.u[...] = 0.0
            self.a_u, self.a_v = 1.0, s
            return
        self.a_u *= 1.0 - rho
        self.a_v = (1.0 - rho) * self.a_v + rho * s
        if self.a_u < self._TINY:
            self.u *= self.a_u
            self.a_u = 1.0

    def _current(self) -> np.ndarray:
        return self.a_u * self.u + self.a_v * self.v

    def value(self) -> np.ndarray:
        """The current average as a new dense array (O(d))."""
        cur = self._current()
        if self.kind != "tail" or self.n_prev == 0:
            return cur
        a = self.n_prev / (self.n_prev + self.n_cur)
        return a * self.prev + (1.0 - a) * cur


class WeightedMean:
    """Mean of a sequence of tuples of arrays, each with its own weight (updated in place):
    the iterates weighted by their steps ``eta_t`` (Nesterov's average, for which the
    dual extragradient's bound ``D(x, u_hat) / sum eta_t`` holds); equal weights give the
    plain mean.

    Parameters
    ----------
    arrays : tuple of ndarray
        The first member's arrays (copied).
    weight : float
        Its weight.
    """

    def __init__(self, arrays: tuple[np.ndarray, ...], weight: float) -> None:
        self.cur = tuple(np.array(a, dtype=float) for a in arrays)
        self.total = float(weight)

    def update(self, arrays: tuple[np.ndarray, ...], weight: float) -> None:
        """Add ``arrays`` with ``weight``."""
        self.total += weight
        rho = weight / self.total
        for c, a in zip(self.cur, arrays):
            c += rho * (a - c)

    def value(self) -> tuple[np.ndarray, ...]:
        """The weighted mean so far."""
        return self.cur

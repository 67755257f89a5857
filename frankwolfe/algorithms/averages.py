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

__all__ = ["RunningAverage", "ScaledAverage", "WeightedMean", "AVERAGING", "WEIGHTED",
           "UNIFORM", "TAIL"]

#: iterate ``x_j`` (``x_0`` first) weighted by ``j``
WEIGHTED = "weighted"
#: the plain mean of every iterate
UNIFORM = "uniform"
#: the 0.5-suffix average by the doubling trick
TAIL = "tail"
#: the averaging kinds (``averaging=`` of BCFW, the structured SVM's estimators and SSG)
AVERAGING = (WEIGHTED, UNIFORM, TAIL)


class _Schedule:
    """The weights of one averaging kind: which share ``rho`` of the average each new
    iterate takes (``avg <- avg + rho (x - avg)``) and, for :data:`TAIL`, where an epoch
    starts.  Shared by :class:`RunningAverage` and :class:`ScaledAverage`, which keep
    the averaged arrays their own ways.

    Parameters
    ----------
    kind : {"uniform", "weighted", "tail"}
        Refused (``ValueError``) unless one of :data:`AVERAGING`.
    """

    def __init__(self, kind: str) -> None:
        if kind not in AVERAGING:
            raise ValueError(f"averaging must be one of {list(AVERAGING)} or None, got {kind!r}")
        self.kind = kind
        self.n_cur = 1  # iterates in the current epoch (tail) / in the mean
        self.n_prev = 0  # iterates in the finished epoch (tail; 0: none yet)
        self.t = 1      # iterates seen (1-based index of the last one)
        self.next_epoch = 2

    def advance(self) -> tuple[float, bool]:
        """Count the next iterate: ``(rho, new_epoch)``, its share of the current average
        and whether a :data:`TAIL` epoch starts at it (the current average then becomes
        the previous epoch's and restarts empty: ``rho`` is 1)."""
        self.t += 1
        if self.kind == WEIGHTED:
            return 2.0 / self.t, False  # iterate x_j (x_0 first) gets weight j: rho = 2/(j+1)
        new_epoch = self.kind == TAIL and self.t == self.next_epoch
        if new_epoch:
            self.n_prev, self.n_cur = self.n_cur, 0
            self.next_epoch *= 2
        self.n_cur += 1
        return 1.0 / self.n_cur, new_epoch

    def resume(self, t: int) -> None:
        """Count ``t`` iterates seen (the start included), as a schedule that advanced
        from the first: the next iterate takes the share it takes in a run from the
        start."""
        self.t = t
        if self.kind == UNIFORM:
            self.n_cur = t
        elif self.kind == TAIL:
            # epochs start at iterates 1, 2, 4, ...: the current one at the largest power
            # of two <= t, the finished one half as long
            epoch = 1 << (t.bit_length() - 1)
            self.next_epoch = 2 * epoch
            self.n_cur = t - epoch + 1
            self.n_prev = epoch // 2

    def previous_share(self) -> float:
        """The finished epoch's share of the reported average (0 but for :data:`TAIL`
        after its first epoch)."""
        if self.kind != TAIL or self.n_prev == 0:
            return 0.0
        return self.n_prev / (self.n_prev + self.n_cur)


class RunningAverage:
    """Average of a sequence of tuples of arrays (updated in place, O(size) per update).

    Parameters
    ----------
    kind : {"uniform", "weighted", "tail"}
    arrays : tuple of ndarray
        The first iterate's arrays (copied); they define the shapes.
    """

    def __init__(self, kind: str, arrays: tuple[np.ndarray, ...]) -> None:
        self.schedule = _Schedule(kind)
        self.kind = kind
        self.cur = tuple(np.array(a, dtype=float) for a in arrays)
        self.prev = tuple(np.zeros_like(a) for a in self.cur)

    def update(self, arrays: tuple[np.ndarray, ...]) -> None:
        """Add the next iterate."""
        rho, new_epoch = self.schedule.advance()
        if new_epoch:
            self.prev, self.cur = self.cur, self.prev
            for c in self.cur:
                c[...] = 0.0
        for c, a in zip(self.cur, arrays):
            c += rho * (a - c)

    def value(self) -> tuple[np.ndarray, ...]:
        """The current average (new arrays for "tail", views otherwise)."""
        a = self.schedule.previous_share()
        if a == 0.0:
            return self.cur
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
        self.schedule = _Schedule(kind)
        self.kind = kind
        self.v = v
        self.u = np.zeros_like(v)
        self.a_u, self.a_v = 1.0, float(s)  # abar = a_u u + a_v v = the first iterate
        self.prev = np.zeros_like(v)  # tail: the finished epoch's mean (none yet)

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
        rho, new_epoch = self.schedule.advance()
        if new_epoch:
            self.prev = self._current()
        if rho >= 1.0:  # the average restarts at this iterate
            self.u[...] = 0.0
            self.a_u, self.a_v = 1.0, s
            return
        self.a_u *= 1.0 - rho
        self.a_v = (1.0 - rho) * self.a_v + rho * s
        if self.a_u < self._TINY:
            self.u *= self.a_u
            self.a_u = 1.0

    def resume(self, steps: int) -> None:
        """Continue a run: the average, holding its first iterate alone, counts as the
        average of the ``steps + 1`` iterates of ``steps`` steps (every one equal to it),
        so the next iterate takes the share step ``steps + 1`` takes in a run from the
        start (a warm start that continues another run's schedule)."""
        self.schedule.resume(steps + 1)
        if self.kind == TAIL:  # the finished epoch's mean: the same point
            self.prev = self._current()

    def _current(self) -> np.ndarray:
        return self.a_u * self.u + self.a_v * self.v

    def value(self) -> np.ndarray:
        """The current average as a new dense array (O(d))."""
        cur = self._current()
        a = self.schedule.previous_share()
        if a == 0.0:
            return cur
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

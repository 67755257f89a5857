"""The one interface of a BCFW pass, and the time budget a pass runs under.

A pass (Python block steps, the compiled pass, mini-batch rounds of either)
runs ``n`` block steps of the state (:mod:`.state`) under a :class:`Budget`
and computes certificates; :mod:`.plan` chooses the one a run uses, once.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ...errors import ShapeError
from ...monitor import Monitor
from ...objectives.base import NonFiniteGradientError, checked_gradient, checked_value

__all__ = ["Budget", "Pass", "batch_values", "block_gradient", "full_gradient",
           "probe_values", "value_and_full_gradient"]


#: block steps a pass makes before its rate estimates the closing certificate
_MIN_SAMPLE = 64


class Budget:
    """The time budget of one pass: stop early enough for the closing certificate.

    Parameters
    ----------
    monitor : Monitor
        The run's monitor (its time limit; :meth:`~frankwolfe.monitor.Monitor.time_up`).
    n : int
        Blocks: a certificate costs about ``n`` block steps.
    reserve : float or None
        Seconds of the last certificate (``None``: none yet; then ``n`` block steps at
        the rate measured in this pass).
    """

    def __init__(self, monitor: Monitor, n: int, reserve: float | None) -> None:
        self.monitor = monitor
        self.n = n
        self.reserve = reserve
        #: whether there is a time limit at all (passes check nothing otherwise)
        self.limited = monitor.time_limit is not None
        #: whether the pass stopped early for the time limit
        self.up = False
        self._tic = time.perf_counter()
        self._rate: float | None = None  # the lowest seconds per block step measured

    def spent(self, done: int, seconds: float | None = None) -> bool:
        """Whether to stop the pass now, ``done`` block steps in (having taken ``seconds``,
        by default the time since the pass began)."""
        if seconds is None:
            seconds = time.perf_counter() - self._tic
        if self.reserve is not None:
            reserve = self.reserve
        elif done < min(self.n, _MIN_SAMPLE):  # too few steps to tell a rate
            reserve = 0.0
        else:
            # the first measure is a warm-up (cold caches, first touches of the state:
            # several times the later rate), the fastest since is the pass's rate
            # (benchmarks/README.md, "Measurements behind code choices")
            rate = seconds / done
            reserve = 0.0 if self._rate is None else self.n * min(rate, self._rate)
            self._rate = rate if self._rate is None else min(rate, self._rate)
        if self.monitor.time_up(reserve):
            self.up = True
        return self.up


def batch_values(state: Any) -> Any:
    """The values-only batch oracle of ``state``'s domain (``values(which, g)``: the
    answers' ``<g_i, s_i>``, see :meth:`~frankwolfe.ProductDomain.batch_block_oracle`),
    or ``None``."""
    batch = state.batch_oracle()
    values = None if batch is None else getattr(batch, "values", None)
    return values if callable(values) else None


def probe_values(state: Any) -> tuple[float, list[int], np.ndarray] | None:
    """The seconds of a gradient and of the ``n`` oracle answers of a certificate,
    estimated by asking :func:`batch_values` for a 32nd of the blocks (at least 8: a
    batch this large answers at its full rate), after one untimed block (a first call's
    cache load), and scaling; with the blocks asked and the gradient.  ``None`` without
    a values-only batch oracle."""
    values = batch_values(state)
    if values is None:
        return None
    tic = time.perf_counter()
    g = full_gradient(state.f, state.x)
    which = list(range(min(max(8, state.n // 32), state.n)))
    untimed = time.perf_counter()
    values(which[:1], g)  # a first call's cache load or compilation, not to be scaled
    mid = time.perf_counter()
    tic += mid - untimed
    values(which, g)
    end = time.perf_counter()
    return (mid - tic) + (end - mid) * state.n / len(which), which, g


def full_gradient(f: Any, x: np.ndarray, copy: bool = False) -> np.ndarray:
    """``f.gradient(x)`` checked as the tracker checks it
    (:func:`~frankwolfe.objectives.base.checked_gradient`: a complex answer is a
    ``ValueError``, None a ``TypeError``, another shape than ``x``'s a
    :class:`~frankwolfe.errors.ShapeError`); ``copy``: a fresh array, for a caller that
    writes into it (the objective's own array otherwise, when it is a float64 one)."""
    g = checked_gradient(f.gradient(x), x.shape, f)
    return np.array(g) if copy else g


def value_and_full_gradient(f: Any, x: np.ndarray, copy: bool = False
                            ) -> tuple[float, np.ndarray]:
    """``f.value_and_gradient(x)`` checked (:func:`full_gradient`'s checks, and
    :func:`~frankwolfe.objectives.base.checked_value`'s on the value)."""
    fx, g = f.value_and_gradient(x)
    fx = checked_value(fx, f, "value_and_gradient")
    g = checked_gradient(g, x.shape, f, "value_and_gradient")
    return fx, (np.array(g) if copy else g)


def block_gradient(f: Any, x: np.ndarray, indices: np.ndarray, copy: bool = False
                   ) -> np.ndarray:
    """``f.partial_gradient(x, indices)``, checked as :func:`full_gradient`'s answer is
    (an overridden ``partial_gradient`` answers the user's own arrays): a float64 array
    of ``indices``' shape costs two comparisons."""
    g = f.partial_gradient(x, indices)
    if type(g) is not np.ndarray or g.dtype != np.float64:
        g = checked_gradient(g, None, f, "partial_gradient")
    if g.shape != indices.shape:
        raise ShapeError(f"{type(f).__name__}.partial_gradient: the gradient at "
                         f"{indices.size} indices has shape {g.shape}, not "
                         f"{indices.shape}")
    return g.copy() if copy else g


def check_block_gradient(g: np.ndarray, i: int) -> None:
    """Raise :class:`~frankwolfe.objectives.base.NonFiniteGradientError` unless block
    ``i``'s gradient ``g`` is finite (a sum: no array of flags per block step; an
    overflowing sum is checked entry by entry).  The engine then ends the run with
    ``Status.ERROR`` at the point the pass started from (the oracle would refuse the
    direction, and the error would leave with the point that produced it), as for the
    full gradient that a default ``exact_step_block`` finds not finite."""
    if not math.isfinite(float(g.sum())) and not np.isfinite(g).all():
        raise NonFiniteGradientError(f"the objective's gradient is not finite in block {i}")


class Pass(ABC):
    """``n`` block steps of one run (in the block order), and its certificates."""

    #: the engine, as ``Result.extra["engine"]`` names it
    name: str = "python"
    #: whether :meth:`run` returns the exact change of f at the last iterate
    exact_df: bool = False
    #: whether :meth:`run` estimates its certificate's time itself (when no certificate
    #: was timed yet); otherwise the last whole pass's time serves
    estimates_certificate: bool = False

    @abstractmethod
    def run(self, order: np.ndarray | None, budget: Budget) -> float:
        """One pass in ``order`` (``None``: the block order picks step by step), stopped
        early when the budget is spent; the change of f when :attr:`exact_df`."""

    @abstractmethod
    def certificate(self, x: np.ndarray, refresh: bool, closing: bool = False
                    ) -> tuple[float, float]:
        """``(f, gap)`` at ``x`` with one oracle call per block; with ``refresh`` (``x`` is
        the last iterate) the block-gap estimates become the exact block gaps.
        ``closing``: the run's last certificate (its answers need not join a cache)."""

    def info(self) -> dict[str, Any]:
        """History columns of this pass (mini-batch rounds count their rounds)."""
        return {}

    def outputs(self) -> dict[str, Any]:
        """Entries of ``Result.extra`` of this pass."""
        return {}

"""Gradient estimators of stochastic Frank-Wolfe: the part of the method that varies.

An estimator turns mini-batch gradients of a :class:`~frankwolfe.objectives.finite_sum.
FiniteSum` into the direction the oracle is called on, and counts the sample gradients
it spent (one per term of each batch).  :func:`~frankwolfe.stochastic_frank_wolfe`
decides the step; the estimator never moves the iterate.

==============  ==================================================  =====================
word            estimator                                           per iteration
==============  ==================================================  =====================
``"minibatch"``  :class:`MiniBatch`: a fresh batch, growing size    ``b_k`` samples
``"momentum"``   :class:`Momentum` (Mokhtari, Hassani, Karbasi)     ``b`` samples
``"svrf"``       :class:`SVRF` (Hazan & Luo 2016)                   ``2 b`` (+ ``n`` per epoch)
``"sag"``       :class:`SAG` (Negiar et al. 2020, linear models)  ``b`` (+ ``n`` once)
==============  ==================================================  =====================
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from ..objectives.base import checked_gradient
from ..objectives.finite_sum import FiniteSum, LinearModelLoss

__all__ = ["GradientEstimator", "MiniBatch", "Momentum", "SVRF", "SAG", "ESTIMATORS",
           "make_estimator"]

BatchSize = int | Callable[[int], int]


def _batch_rule(batch_size: BatchSize, who: str) -> Callable[[int], int]:
    if callable(batch_size):
        schedule = batch_size

        def checked(k: int) -> int:
            # a schedule's 0 or -5 was read as 1, silently
            b = schedule(k)
            if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) \
                    or b < 1:
                raise ValueError(f"{who}: the `batch_size` schedule answered {b!r} at "
                                 f"iteration {k}; a batch is a positive integer")
            return int(b)

        return checked
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"{who}: `batch_size` must be a positive integer or a callable "
                         f"k -> int, got {batch_size!r}")
    b = int(batch_size)
    return lambda k: b


class GradientEstimator(ABC):
    """What stochastic Frank-Wolfe asks at each iteration: an estimate of the gradient."""

    #: sample gradients spent so far (a full gradient costs ``n``)
    n_sample_gradients: int = 0

    def start(self, objective: FiniteSum, x: np.ndarray, rng: np.random.Generator) -> None:
        """Set up for a run from ``x`` (draws only from ``rng``)."""
        self.objective = objective
        self.rng = rng
        self.n_sample_gradients = 0
        self._order = np.zeros(0, dtype=np.int64)  # this epoch's shuffled samples
        self._next = 0

    @abstractmethod
    def estimate(self, k: int, x: np.ndarray) -> np.ndarray:
        """The gradient estimate at ``x`` for iteration ``k``."""

    def _batch_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The objective's ``batch_gradient(x, indices)``, checked real and of the shape
        of ``x`` (:func:`~frankwolfe.objectives.base.checked_gradient`): a complex one
        lost its imaginary part in the estimate, a wrong shape failed in the oracle."""
        return checked_gradient(self.objective.batch_gradient(x, indices), x.shape,
                                self.objective, "batch_gradient")

    def _batch(self, size: int) -> np.ndarray:
        """The next ``size`` samples by random reshuffling: each epoch visits every
        sample once, in a fresh random order, and the batches run through the epochs
        back to back (every ``n`` consecutive samples drawn are all ``n`` samples).

        A batch that the rest of the epoch cannot fill takes that rest and continues
        into a fresh order for the next epoch, whose first samples are chosen among
        those not in the rest: the samples of a batch are distinct (SAG counted a
        repeated sample's change twice).  A batch of all ``n`` samples at the end of
        an epoch is ``arange(n)``, drawing nothing."""
        n = self.objective.n_samples
        size = min(max(int(size), 1), n)
        self.n_sample_gradients += size
        left = self._order.size - self._next
        if size <= left:
            idx = self._order[self._next:self._next + size]
            self._next += size
            return idx
        if size == n and left == 0:
            return np.arange(n)
        # the next epoch's order is drawn only when this one runs out, so that a batch
        # size dividing n keeps the batches (and runs) that its seeds always gave
        rest = self._order[self._next:]
        order = self.rng.permutation(n)
        need = size - left
        if left:
            first = np.zeros(n, dtype=bool)
            first[np.flatnonzero(~np.isin(order, rest))[:need]] = True
            order = np.concatenate([order[first], order[~first]])
        self._order, self._next = order, need
        return np.concatenate([rest, order[:need]]) if left else order[:need]


class MiniBatch(GradientEstimator):
    """A fresh mini-batch gradient each iteration.

    Without variance reduction the batch must grow for the iterates to converge
    (Hazan & Luo, ICML 2016: ``b_k ~ k`` gives an O(1/sqrt(k))-type rate in the gap,
    ``b_k ~ k^2`` the O(1/k) rate of deterministic FW).

    Parameters
    ----------
    batch_size : int or callable, default ``k -> k + 1``
        The batch size, or a schedule ``k -> b_k`` (capped at ``n``).
    """

    def __init__(self, batch_size: BatchSize | None = None) -> None:
        self.batch_size = (lambda k: k + 1) if batch_size is None else \
            _batch_rule(batch_size, "MiniBatch")

    def estimate(self, k: int, x: np.ndarray) -> np.ndarray:
        return self._batch_gradient(x, self._batch(self.batch_size(k)))


class Momentum(GradientEstimator):
    """Averaged mini-batch gradients, ``d_k = (1 - rho_k) d_{k-1} + rho_k g_k``,
    ``rho_k = 4 / (k + 8)^(2/3)`` (Mokhtari, Hassani, Karbasi, "Stochastic
    conditional gradient methods", JMLR 2020): a constant batch suffices, with
    O(1/k^(1/3)) convergence in expectation.

    Parameters
    ----------
    batch_size : int or callable, default 1
        Samples per iteration (or a schedule).
    """

    def __init__(self, batch_size: BatchSize = 1) -> None:
        self.batch_size = _batch_rule(batch_size, "Momentum")

    def start(self, objective: FiniteSum, x: np.ndarray, rng: np.random.Generator) -> None:
        super().start(objective, x, rng)
        self.d: np.ndarray | None = None

    def estimate(self, k: int, x: np.ndarray) -> np.ndarray:
        g = self._batch_gradient(x, self._batch(self.batch_size(k)))
        if self.d is None:
            self.d = g.copy()
        else:
            rho = min(1.0, 4.0 / (k + 8.0) ** (2.0 / 3.0))
            self.d *= 1.0 - rho
            self.d += rho * g
        return self.d


class SVRF(GradientEstimator):
    """Stochastic variance-reduced Frank-Wolfe (Hazan & Luo, ICML 2016):
    ``g_B(x) - g_B(w) + grad f(w)`` with a snapshot ``w`` whose full gradient is
    recomputed every ``epoch`` iterations.

    Parameters
    ----------
    batch_size : int or callable, default ``k -> min(n, 1 + k_e)``
        Samples per iteration, or a schedule (by default growing with the iteration
        count ``k_e`` inside the epoch, as in the paper).
    epoch : int, optional
        Iterations between snapshots; default ``max(10, n // 10)``.

    Notes
    -----
    The step is the run's open-loop rule on the global counter; Hazan and Luo
    restart ``2/(k+2)`` at each epoch.
    """

    def __init__(self, batch_size: BatchSize | None = None, epoch: int | None = None) -> None:
        self._batch_size = None if batch_size is None else _batch_rule(batch_size, "SVRF")
        if epoch is not None and (isinstance(epoch, bool) or int(epoch) != epoch or epoch < 1):
            raise ValueError(f"SVRF: `epoch` must be a positive integer, got {epoch!r}")
        self.epoch = epoch

    def start(self, objective: FiniteSum, x: np.ndarray, rng: np.random.Generator) -> None:
        super().start(objective, x, rng)
        self.period = self.epoch or max(10, objective.n_samples // 10)
        self.w = x.copy()
        self.mu = np.zeros_like(x)
        self.since = -1  # iterations since the last snapshot (-1: none yet)

    def estimate(self, k: int, x: np.ndarray) -> np.ndarray:
        f = self.objective
        if self.since < 0 or self.since >= self.period:
            self.w = x.copy()
            self.mu = checked_gradient(f.gradient(self.w), x.shape, f)
            self.n_sample_gradients += f.n_samples
            self.since = 0
        size = self._batch_size(k) if self._batch_size is not None else self.since + 1
        idx = self._batch(size)
        self.n_sample_gradients += len(idx)  # the batch at the snapshot as well
        self.since += 1
        return self._batch_gradient(x, idx) - self._batch_gradient(self.w, idx) + self.mu


class SAG(GradientEstimator):
    """Aggregated-gradient (SAG-type) variance reduction for linear models (Negiar,
    Dresdner, Tsai, El Ghaoui, Locatello, Freund, Pedregosa, "Stochastic Frank-Wolfe
    for constrained finite-sum minimization", ICML 2020; copt's ``variant="SAG"``):
    one stored derivative ``alpha_i`` per sample, refreshed for the batch each
    iteration; the estimate ``(1/n) sum_i alpha_i a_i`` is kept up to date in
    ``O(batch nnz)`` and its error vanishes as the iterates converge.  Needs a
    :class:`~frankwolfe.objectives.finite_sum.LinearModelLoss`.

    Parameters
    ----------
    batch_size : int or callable, default 1
        Samples refreshed per iteration.
    init : {"zero", "full"}, default "zero"
        The stored derivatives at the start: zero (as the paper and copt; the
        estimate fills in over the first epoch, no pass spent up front) or a full
        pass at ``x0`` (the first estimate is the true gradient, for one epoch of
        sample gradients).
    """

    def __init__(self, batch_size: BatchSize = 1, init: str = "zero") -> None:
        self.batch_size = _batch_rule(batch_size, "SAG")
        if init not in ("zero", "full"):
            raise ValueError(f"SAG: `init` must be 'zero' or 'full', got {init!r}")
        self.init = init

    def start(self, objective: FiniteSum, x: np.ndarray, rng: np.random.Generator) -> None:
        if not isinstance(objective, LinearModelLoss):
            raise TypeError(f"estimator='sag' needs a LinearModelLoss (one derivative per "
                            f"sample), got {type(objective).__name__}; use 'svrf' or "
                            "'momentum' for other finite sums")
        super().start(objective, x, rng)
        self.alpha: np.ndarray | None = None
        self.r = np.zeros_like(x)

    def estimate(self, k: int, x: np.ndarray) -> np.ndarray:
        f = self.objective
        assert isinstance(f, LinearModelLoss)  # start() checked it
        n = f.n_samples
        if self.alpha is None:
            if self.init == "zero":
                self.alpha = np.zeros(n)
            else:
                idx = np.arange(n)
                self.alpha = f.sample_derivatives(x, idx)
                self.r = f.rows_transpose_dot(idx, self.alpha) / n
                self.n_sample_gradients += n
                return self.r
        idx = self._batch(self.batch_size(k))
        new = f.sample_derivatives(x, idx)
        self.r += f.rows_transpose_dot(idx, new - self.alpha[idx]) / n
        self.alpha[idx] = new
        return self.r


#: The words ``estimator=`` accepts.
ESTIMATORS: dict[str, type[GradientEstimator]] = {
    "minibatch": MiniBatch, "momentum": Momentum, "svrf": SVRF, "sag": SAG}


def make_estimator(spec: str | GradientEstimator, batch_size: BatchSize | None
                   ) -> GradientEstimator:
    """The estimator ``spec`` names (with ``batch_size`` when given), or ``spec`` itself."""
    if isinstance(spec, GradientEstimator):
        if batch_size is not None:
            raise ValueError("pass batch_size to the estimator object, not beside it")
        return spec
    cls = ESTIMATORS.get(spec) if isinstance(spec, str) else None
    if cls is None:
        raise ValueError(f"unknown estimator {spec!r}; choose one of {sorted(ESTIMATORS)} or "
                         "pass a GradientEstimator")
    return cls() if batch_size is None else cls(batch_size)  # type: ignore[call-arg]


def _is_power_of_two(k: int) -> bool:
    return k > 0 and (k & (k - 1)) == 0


def certify_now(k: int, every: int | None) -> bool:
    """Whether iteration ``k`` computes a certified gap: every ``every`` iterations, or
    at ``k = 0, 1, 2, 4, 8, ...`` when ``every`` is None (a logarithmic number of
    full gradients); ``every = 0``: only at ``k = 0``."""
    if every is None:
        return k == 0 or _is_power_of_two(k)
    return k == 0 or (every > 0 and k % every == 0)


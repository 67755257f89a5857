"""Online exponentiated gradient (online-EG) for the chain structured SVM dual.

Collins, Globerson, Koo, Carreras and Bartlett (JMLR 2008): each example keeps a
Gibbs distribution over its labellings, ``alpha_i(y) ∝ exp(theta_i(y))``,
factored on the chain (node and shared transition log-potentials, see
:mod:`.models.chain.expectation`), started uniform (``theta = 0``).  A step on example ``i``
is a multiplicative (mirror-descent) step on ``alpha_i`` for the dual
``Q(alpha) = n (lam/2 ||w||^2 - ell)``:

    theta_i <- theta_i + eta_i * (loss-augmented scores of example i at w),

i.e. ``alpha_i(y) <- alpha_i(y) exp(-eta_i dQ/dalpha_i(y)) / Z``; its marginals
come from one forward-backward.  Step sizes follow the paper's experiments (as
used by Lacoste-Julien et al., ICML 2013): each example's ``eta_i`` starts at
0.5; a step is retried with ``eta_i / 2`` until the dual objective decreases,
at most 2 times during the first pass and 5 times afterwards (no decrease:
the example is left unchanged); an accepted ``eta_i`` is multiplied by 1.05
for the next visit.  Every forward-backward, retries included, counts as an
oracle call in the effective passes.

This is not a Frank-Wolfe method, so it lives in the application; it runs on the
core's driver (:func:`frankwolfe.algorithms.engine.drive`), one outer iteration per
pass of ``n`` example visits (under a time limit a pass may end after any visit).  Its
certificate is the dual point's: ``w`` and the dual value from the marginals (a fresh
sum), the primal by one loss-augmented pass at that ``w`` (the estimator's evaluations).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from frankwolfe import Result, RunOptions
from frankwolfe._random import as_generator
from frankwolfe.algorithms.block_orders import make_block_order
from frankwolfe.algorithms.engine import Engine, Observation, drive
from frankwolfe.monitor import Monitor

from .._lam import check_lam
from ..models.chain.expectation import (
    ChainDualPoint,
    add_expected_features,
    chain_dual_data,
    node_scores,
    transitions,
)
from ..models.chain.forward_backward import chain_marginals
from ._budget import CallBudget, PassClock, budget_options

__all__ = ["online_eg"]


@njit(cache=True, nogil=True)
def _eg_steps(Xf, If, offsets, off, Yf, K, F, uses_ids, gram, goff, lam, order, w, theta,
              theta_e, mu, T, etas, max_halvings, Lmax, budget):  # pragma: no cover - compiled
    """EG steps on the examples of ``order``; updates the point and ``w`` in place.
    Stops before a forward-backward call beyond ``budget`` (the example under way is
    left unchanged, as after a rejected trial).

    Returns ``(forward-backward calls, change of ell * n, whole order done)``.
    """
    n = off.size - 1
    s = np.empty((Lmax, K))
    g = np.empty((Lmax, K))
    node = np.empty((Lmax, K))
    mu_new = np.empty((Lmax, K))
    dmu = np.empty((Lmax, K))
    tr = np.empty((K, K))
    edge = np.empty((K, K))
    T_new = np.empty((K, K))
    dT = np.empty((K, K))
    empty = np.empty((0, K, K))
    scale = 1.0 / (lam * n)
    calls = 0
    dell_total = 0.0
    for i in order:
        lo = off[i]
        L = off[i + 1] - lo
        node_scores(Xf, If, offsets, lo, L, K, F, uses_ids, w, s)
        transitions(w, K, F, tr)
        for t in range(L):
            for k in range(K):
                g[t, k] = s[t, k] + (1.0 / L if k != Yf[lo + t] else 0.0)
        G = gram[goff[i]:goff[i] + L * L]
        eta = etas[i]
        accepted = False
        for trial in range(max_halvings + 1):
            if calls >= budget:
                return calls, dell_total, False
            if trial > 0:
                eta *= 0.5
            for t in range(L):
                for k in range(K):
                    node[t, k] = theta[lo + t, k] + eta * g[t, k]
            for a in range(K):
                for b in range(K):
                    edge[a, b] = theta_e[i, a, b] + eta * tr[a, b]
            chain_marginals(node[:L], edge, mu_new[:L], empty, T_new)
            calls += 1
            # change of f = lam/2 ||w||^2 - ell with dw = -scale * dE[phi]:
            # df = -<w, dE phi>/n + ||dE phi||^2 / (2 lam n^2) - dell
            lin = 0.0
            dl = 0.0
            for t in range(L):
                for k in range(K):
                    v = mu_new[t, k] - mu[lo + t, k]
                    dmu[t, k] = v
                    lin += v * s[t, k]
                yt = Yf[lo + t]
                dl -= dmu[t, yt] / L
            quad = 0.0
            for a in range(K):
                for b in range(K):
                    v = T_new[a, b] - T[i, a, b]
                    dT[a, b] = v
                    lin += v * tr[a, b]
                    quad += v * v
            for k in range(K):
                quad += dmu[0, k] * dmu[0, k] + dmu[L - 1, k] * dmu[L - 1, k]
                for t in range(L):
                    if dmu[t, k] == 0.0:
                        continue
                    acc = 0.0
                    for t2 in range(L):
                        acc += G[t * L + t2] * dmu[t2, k]
                    quad += dmu[t, k] * acc
            df = -lin / n + quad * scale / (2.0 * n) - dl / n
            if df < 0.0:
                accepted = True
                break
        if not accepted:
            etas[i] = eta
            continue
        etas[i] = 1.05 * eta
        add_expected_features(Xf, If, offsets, lo, L, K, F, uses_ids, dmu, dT, -scale, w)
        for t in range(L):
            for k in range(K):
                theta[lo + t, k] = node[t, k]
                mu[lo + t, k] = mu_new[t, k]
        for a in range(K):
            for b in range(K):
                theta_e[i, a, b] = edge[a, b]
                T[i, a, b] = T_new[a, b]
        dell_total += dl
    return calls, dell_total, True


class _OnlineEGEngine(Engine):
    """Online-EG passes; one outer iteration is one pass of ``n`` example visits (its
    retried steps make it cost more than ``n`` forward-backward calls; under a time limit
    it runs in chunks of examples and ends after the chunk during which the time ran out)."""

    times_itself = True  # the clock is read between chunks of visits (PassClock)

    def __init__(self, model: Any, X: Sequence[Any], Y: Sequence[Any], lam: float,
                 eta0: float, block_order: str, rng: np.random.Generator,
                 max_passes: float) -> None:
        self.data = data = chain_dual_data(model, X, Y, "online_eg")
        self.lam, self.rng = lam, rng
        self.n = data.n
        # the core's orders: their documented draws per pass, shared with BCFW
        self.order = make_block_order(block_order)
        self.order.start(np.full(data.n, np.inf))
        self.budget = CallBudget(max_passes, data.n, "online_eg")
        self.gram, self.goff = data.gram()
        self.point = ChainDualPoint(data, lam)
        # the uniform start has closed-form marginals (1/K, (L-1)/K^2): no call counted
        tic = time.perf_counter()
        self.w, self.ell, _ = self.point.image()
        self.image_seconds = time.perf_counter() - tic  # what the closing certificate takes
        self.etas = np.full(self.n, float(eta0))
        self.p = 0
        self.done = True  # the last pass visited all its examples
        self.clock: PassClock | None = None  # set by online_eg() once the monitor runs
        self._image: tuple[np.ndarray, float, float] | None = None  # of the current point

    def observe(self, k: int) -> Observation:
        # f = lam/2 ||w||^2 - ell, the dual objective the steps decrease (ell kept by its
        # changes; the returned values are a fresh sum)
        fun = 0.5 * self.lam * float(self.w @ self.w) - self.ell
        info = self.budget.info()
        time_up = self.clock is not None and self.clock.stopped
        return Observation(fun, np.nan, False, self.w, None, np.nan, info,
                           {**info, "point": self.point, "whole_pass": self.done},
                           time_up=time_up,
                           budget_spent=not (self.done or time_up) or self.budget.left <= 0)

    def advance(self, k: int, monitor: Monitor) -> None:
        data, n, point = self.data, self.n, self.point
        self.p += 1
        self._image = None
        drawn = self.order.pass_order(self.rng)
        assert drawn is not None  # uniform and perm orders draw whole passes
        order = drawn.astype(np.int64)
        clock = self.clock
        done, dell = False, 0.0
        # the whole order in one call without a time limit
        for chunk in (clock.chunks(order) if clock is not None else (order,)):
            c, d, done = _eg_steps(data.Xf, data.If, data.offsets, data.off, data.Yf, data.K,
                                   data.F, data.uses_ids, self.gram, self.goff,
                                   float(self.lam), chunk, self.w, point.theta,
                                   point.theta_e, point.mu, point.T, self.etas,
                                   2 if self.p == 1 else 5, data.Lmax, self.budget.left)
            self.budget.spent += int(c)
            dell += d
            if not done:  # the call budget ended the pass
                break
        self.ell += float(dell) / n
        # False: the call budget (or the time limit, clock.stopped) ended the pass
        self.done = bool(done) and not (clock is not None and clock.stopped)

    def image(self) -> tuple[np.ndarray, float, float]:
        """``(w, ell, dual)`` of the current point, a fresh sum (one pass over the data,
        made once for the certificate and the outputs)."""
        if self._image is None:
            self._image = self.point.image()
        return self._image

    def certify(self, last: Observation) -> tuple[float, float]:
        return -self.image()[2], np.nan

    def outputs(self, error: bool) -> dict[str, Any]:
        w, ell, dual = self.image()
        extra = {"w": w, "ell": ell, "dual": dual, "passes": self.p, "point": self.point,
                 **self.budget.info()}
        out: dict[str, Any] = dict(x=w.copy(), n_oracle_calls=self.budget.spent,
                                   n_gradient_calls=0, n_function_calls=0, extra=extra)
        if error:
            out.update(fun=-dual, gap=np.nan)
        return out


def online_eg(model: Any, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
              max_passes: float = 50, eta0: float = 0.5, block_order: str = "uniform",
              random_state: int | np.random.Generator | None = None,
              run_options: RunOptions | None = None) -> Result:
    """Run online-EG on a chain model, on the core's driver.

    Parameters
    ----------
    model : ChainModel
    X, Y : training sequences and labellings
    lam : float
        Regularization ``> 0``.
    max_passes : float
        Budget of effective passes (forward-backward calls / n, retries included),
        kept exactly: the run stops before the call that would exceed
        ``floor(max_passes * n)`` calls, in the middle of a pass if need be (that
        last, partial pass is counted in ``passes``).
    eta0 : float
        Initial per-example step (the paper's 0.5).
    block_order : {"uniform", "perm"}
        Examples drawn with replacement, or a fresh permutation per pass.
    random_state : int or Generator
    run_options : RunOptions, optional
        The core's run keywords, as a :class:`~frankwolfe.RunOptions`: ``callback`` (an
        :class:`~frankwolfe.IterationState` before the first pass and after each:
        ``state.k`` passes, ``state.x`` the weights, ``state.info`` the
        ``effective_passes``, ``oracle_calls``, ``whole_pass`` (False after a pass the
        budget or the time limit ended midway) and ``point``, the
        :class:`~..models.chain.expectation.ChainDualPoint` whose ``image()`` gives ``(w, ell,
        dual)``; return ``False`` to stop), ``time_limit`` (counted from the call, set-up
        included; checked between chunks of example visits, so a pass may end early:
        ``effective_passes`` counts its calls),
        ``verbose``, ``progress``, ``history_every``.  ``max_iter`` is set from
        ``max_passes`` (one of its own is refused); no gap is certified inside the run,
        so ``tol`` never stops it.

    Returns
    -------
    Result
        ``x`` the weights and ``fun`` minus the dual value (a fresh sum over the final
        marginals); ``gap`` NaN; ``nit`` passes; ``n_oracle_calls`` forward-backward
        calls; ``extra`` (also as ``result["w"]`` etc.): ``w``, ``ell``, ``dual``,
        ``passes``, ``effective_passes``, ``oracle_calls`` and ``point``.
    """
    lam = check_lam(lam, "online_eg")
    if block_order not in ("uniform", "perm"):
        raise ValueError(f"online_eg: `block_order` must be 'uniform' or 'perm', got "
                         f"{block_order!r}")
    if not (np.isfinite(eta0) and eta0 > 0):
        raise ValueError(f"online_eg: `eta0` must be a positive number, got {eta0!r}")
    rng = as_generator(random_state)
    # the clock starts before the set-up (the flattened data, the first marginals): it
    # counts against time_limit
    monitor = budget_options(run_options, max_passes, "online_eg").monitor("online_eg")
    # approximate inference may miss the maximum: its gaps then bound nothing (the
    # estimator certifies with loss_augmented_bound)
    monitor.bounds = not hasattr(model, "loss_augmented_bound")
    engine = _OnlineEGEngine(model, X, Y, float(lam), eta0, block_order, rng, max_passes)
    engine.clock = PassClock(monitor)
    engine.clock.reserve = engine.image_seconds
    return drive(engine, monitor)

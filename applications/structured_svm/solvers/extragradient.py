"""Dual extragradient for the chain structured SVM as a saddle-point problem.

Taskar, Lacoste-Julien and Jordan (JMLR 2006), "Structured prediction, dual
extragradient and Bregman projections" (Nesterov's dual extrapolation).  The
structured SVM is the saddle point

    min_w max_z  L(w, z) = lam/2 ||w||^2 + 1/n sum_i [ell_i(z_i) - <w, psi_i(z_i)>]

over the marginal polytopes ``z_i`` of the chains.  With ``u = (w, z)`` and the
monotone operator ``F(u) = (grad_w L, -grad_z L)``, each iteration runs

    v   = T(u_hat, s)              (prox from the centre: w = s_w / c, z ∝ z_hat exp(n s_z))
    u_t = T(v, -eta F(v))          (the extragradient step)
    s  <- s - eta F(u_t)

and outputs the average of the ``u_t`` (weighted by the steps ``eta_t``).  The ``w``
part is a weighted Euclidean term ``1/2 sum_j c_j w_j^2``; the ``z`` part uses the
entropy (KL) over each example's labellings with weight ``1/n`` (the objective weighs
each example by ``1/n``; this keeps the per-example step from shrinking like
``1/sqrt(n)``), whose prox step is a marginal computation: ``z`` stays a Gibbs
distribution with chain-factored log-potentials (:mod:`.models.chain.expectation`), so
``T`` costs one forward-backward per example.  An iteration costs two passes of
marginals (at ``u_t`` and at the next ``v``), counted as two effective passes.

Geometry.  The rate below is ``D(x*, u_hat) / sum_t eta_t``, so the centre ``u_hat`` and
the weights ``c_j`` are the method's constants.  The default centre of ``z``
(``centre=3``) gives each position's true label the log-odds 3 (``z_hat`` is the Gibbs
distribution without transition potentials: closed-form marginals, no pass), near the
dual optimum of a structured SVM, which puts most mass near the true labellings (BCFW
starts at ``z = delta(y_i)``); the uniform centre (``centre=0``) is ``L_i log K`` away in
KL.  The default weights (``metric="features"``) are ``c_j = c_w m_j`` with ``m_j`` each
coordinate's root mean square over the true joint features (relative, floored at 0.2,
:func:`feature_metric`): the coupling's row ``j`` scales with feature ``j``, and a
frequent feature moved with the step of a rare one is what stops the steps first.  On
OCR-small the feature metric and the default centre each lower the primal of ``w_bar``
markedly, though BCFW-wavg still ends lower (benchmarks/README.md, "Measurements behind
code choices").

Step sizes.  The analysis (Nesterov 2007, as used by Taskar et al.) needs, at every
iteration, with ``v+`` the next prox point ``T(u_hat, s - eta F(u))``,

    eta <F(u) - F(v), u - v+>  <=  D(u, v) + D(v+, u),

``D`` the Bregman distance of the prox (``c_w/2 ||dw||^2 + 1/n sum_i KL``); then
``sum_t eta_t <F(u_t), u_t - x> <= D(x, u_hat)`` for every ``x``, so the ``eta``-weighted
mean of the ``u_t`` has a saddle gap of at most ``D(x, u_hat) / sum_t eta_t``.  A
Lipschitz constant ``Lip`` of ``F`` makes every ``eta <= 1 / Lip`` pass; the default
(``step_size="adaptive"``) instead tests the condition itself, which is far weaker on
real data: the next ``v+`` is the next iteration's prox point anyway, so an accepted
trial costs nothing extra, and the test needs only the points' images and the
per-example log-partitions (each KL between two Gibbs points is ``<mu', theta' -
theta> - log Z' + log Z``, and the potentials differ by ``eta`` times scores whose
expectations are the images; see :func:`_prox_terms`).  A rejected trial (its two
passes of marginals counted, the budget respected) is retried with ``eta / 2``.  An
accepted step sets the next trial by the share ``rho`` of the bound it used (left side
over right side): 30 % larger below 0.3, 5 % larger below 0.6, 20 % smaller above (the
condition binds abruptly: on OCR ``rho`` stays low until a step just short of the largest
accepted one, then rises steeply (benchmarks/README.md, "Measurements behind code
choices"), so the run grows fast while far from the edge and backs off near it instead
of paying two passes for a rejection).  The first trial is 32 times the safe ``1 / Lip``
of the weight ``c_w``.

The fixed steps are ``eta = 1 / Lip`` with ``Lip = lam / c + ||A|| / sqrt(c)`` for the
smallest weight ``c = min_j c_j`` (with the feature metric; ``c = c_w`` without), where
``||A||`` is the norm of the coupling ``z -> 1/n sum_i sum_y z_i(y) psi_i(y)`` from
the norm ``sqrt(1/n sum_i ||z_i||_1^2)`` (distributions over labellings) to the
Euclidean norm of ``w``; ``Lip`` is then the Lipschitz constant of ``F`` in the
norm ``c ||w||^2 + 1/n sum_i ||z_i||_1^2`` (below the weighted one).
``step_size="auto"`` estimates ``||A||`` from the data by a few rounds of the
power method for this (l1, l2) norm (:func:`coupling_norm`: each round one Viterbi
decoding per example and sign), a lower bound of ``||A||`` (the rounds converge in
about four); the safe bound ``sqrt(mean_i R_i^2)`` with ``R_i >= max_y ||psi_i(y)||``
from the feature norms (``step_size="bound"``) is 3.5 times the estimate on OCR-large
and 2.1 times on a small chain.  A number is a fixed step.

Certificates at the averaged point ``(w_bar, z_bar)``: the primal ``P(w_bar)``
(a loss-augmented pass), the dual ``D(z_bar) = ell(z_bar) - lam/2 ||w(z_bar)||^2``,
the certified gap ``P(w_bar) - D(z_bar)`` (it bounds both suboptimalities),
and Taskar et al.'s restricted saddle gap ``max_z L(w_bar, z) - min_{||w|| <= R}
L(w, z_bar)`` with ``R = sqrt(2 P(0) / lam) >= ||w*||``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from frankwolfe import Result, RunOptions
from frankwolfe._random import as_generator
from frankwolfe.algorithms.averages import RunningAverage, WeightedMean
from frankwolfe.algorithms.engine import Engine, Observation, drive
from frankwolfe.monitor import Monitor

from .._lam import check_lam
from ..models.base import model_psi
from ..models.chain.expectation import ChainDualPoint, chain_dual_data
from ._budget import CallBudget, PassClock, budget_options

__all__ = ["dual_extragradient", "restricted_gap", "coupling_norm", "feature_metric"]


def _lipschitz(data: Any, lam: float, c_w: float) -> float:
    """``lam / c_w + sqrt(mean_i R_i^2 / c_w)``, ``R_i`` bounding ``||psi_i(y)||``."""
    if data.uses_ids:
        norms = np.sqrt(np.count_nonzero(data.If, axis=1).astype(float))
    else:
        norms = np.linalg.norm(data.Xf, axis=1)
    per = np.add.reduceat(norms, data.off[:-1])
    L = np.diff(data.off)
    R = 2.0 * np.sqrt(per * per + 2.0 + (L - 1.0) ** 2)  # ||phi(y)|| <= sqrt of this
    return lam / c_w + float(np.sqrt(np.mean(R * R) / c_w))


def coupling_norm(model: Any, X: Sequence[Any], Y: Sequence[Any], rounds: int = 4,
                  random_state: int | np.random.Generator | None = 0) -> float:
    """Power-method estimate of ``||A|| = sup ||1/n sum_i sum_y z_i(y) psi_i(y)||`` over
    ``1/n sum_i ||z_i||_1^2 <= 1``, ``psi_i(y) = phi_i(y) - phi_i(y_i)`` (a lower bound).

    For a direction ``w`` the best ``z`` puts on example ``i`` the weight ``t_i``
    proportional to ``m_i = max_y |<w, psi_i(y)>|`` on the maximizing labelling (two
    Viterbi decodings, at ``w`` and ``-w``); the value is ``sqrt(mean m_i^2) / ||w||``
    and the next direction is ``A z``.
    """
    rng = as_generator(random_state)
    d = model.size_joint_feature
    n = len(X)
    w = rng.standard_normal(d)
    est = 0.0
    for _ in range(rounds):
        m = np.zeros(n)
        parts = []
        for i, (x, y) in enumerate(zip(X, Y)):
            truth = model.score(x, y, w)
            best, part = 0.0, None
            for sign in (1.0, -1.0):
                yh, top = model.decode_with_score(x, sign * w)
                if top - sign * truth > best:  # max_y <sign w, phi(y)> - <sign w, phi(y_i)>
                    best, part = top - sign * truth, (sign, yh)
            m[i] = best
            parts.append(part)
        rms = float(np.sqrt(np.mean(m * m)))
        nw = float(np.linalg.norm(w))
        if rms == 0.0 or nw == 0.0:
            break
        est = max(est, rms / nw)
        v = np.zeros(d)
        for i, part in enumerate(parts):
            if part is not None:  # t_i sign psi_i(y*) with t_i = m_i / rms
                idx, val = model_psi(model, X[i], part[1], Y[i])  # phi(y*) - phi(y_i)
                v[idx] += (m[i] / rms) * part[0] * val
        w = v / n
    return est


def restricted_gap(primal: float, dual: float, w_of_z: np.ndarray, lam: float,
                   radius: float) -> float:
    """``P(w_bar) - min_{||w|| <= radius} L(w, z_bar)``; ``L(w, z_bar) = lam/2 ||w - w(z_bar)||^2
    + D(z_bar)``, minimized at the projection of ``w(z_bar)`` on the ball."""
    excess = max(0.0, float(np.linalg.norm(w_of_z)) - radius)
    return primal - dual - 0.5 * lam * excess * excess


def _prox_excess(lam: float, n: int, c_w: float | np.ndarray, eta: float,
                 phi_true: np.ndarray, v: tuple[np.ndarray, np.ndarray, np.ndarray],
                 u: tuple[np.ndarray, np.ndarray, float, np.ndarray],
                 v_next: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[float, float]:
    """``eta <F(u) - F(v), u - v+> - D(u, v) - D(v+, u)`` and the rounding scale of its terms
    (see :func:`_prox_terms`)."""
    lhs, dist, scale = _prox_terms(lam, n, c_w, eta, phi_true, v, u, v_next)
    return lhs - dist, scale


def _prox_terms(lam: float, n: int, c_w: float | np.ndarray, eta: float, phi_true: np.ndarray,
                v: tuple[np.ndarray, np.ndarray, np.ndarray],
                u: tuple[np.ndarray, np.ndarray, float, np.ndarray],
                v_next: tuple[np.ndarray, np.ndarray, np.ndarray]
                ) -> tuple[float, float, float]:
    """``eta <F(u) - F(v), u - v+>``, ``D(u, v) + D(v+, u)`` and the rounding scale of the terms.

    ``v`` and ``v_next`` are ``(w, w(z), logZ)``, ``u`` is ``(w, w(z), ell(z), logZ)`` (the
    per-example log-partitions of the Gibbs points).  ``D`` is the Bregman distance
    ``1/2 <dw, c_w dw> + 1/n sum_i KL(z_i' || z_i)`` (``c_w`` a number or one weight per
    coordinate); with ``theta_u = theta_v + eta g(w_v)``
    and ``theta_v+ = theta_v + eta g(w_u)`` (``g``: loss-augmented scores) each KL is
    ``<mu', theta' - theta> - log Z' + log Z``, and the expected scores are those of the
    points' images (``E phi = phi_true - lam n w(z)``), so no pass over the data is needed.
    """
    w_v, wz_v, a_v = v
    w_u, wz_u, ell_u, a_u = u
    w_p, wz_p, a_p = v_next
    dw = w_u - w_v
    # F_w = lam (w - w(z)); <F_z(u) - F_z(v), z_u - z_v+> = lam <w_u - w_v, w(z_u) - w(z_v+)>
    lhs = eta * lam * (float((dw - (wz_u - wz_v)) @ (w_u - w_p)) + float(dw @ (wz_u - wz_p)))
    s_u = float(w_v @ (phi_true - lam * n * wz_u)) + n * ell_u  # sum_i <mu_u, g_i(w_v)>
    s_p = float(dw @ (phi_true - lam * n * wz_p))  # sum_i <mu_v+, g_i(w_u) - g_i(w_v)>
    kl_uv = eta * s_u - float(np.sum(a_u - a_v))
    kl_pu = eta * s_p - float(np.sum(a_p - a_u))
    dp = w_p - w_u
    d_uv = 0.5 * float(dw @ (c_w * dw)) + kl_uv / n
    d_pu = 0.5 * float(dp @ (c_w * dp)) + kl_pu / n
    scale = (abs(lhs) + d_uv + d_pu + (eta * (abs(s_u) + abs(s_p)) + float(
        np.sum(np.abs(a_u)) + np.sum(np.abs(a_v)) + np.sum(np.abs(a_p)))) / n)
    return lhs, d_uv + d_pu, scale


_STEP_RULES = ("adaptive", "auto", "bound")
_METRICS = ("features", "euclidean")
# "adaptive": the first trial is 32 times the safe 1 / Lip of "bound" (which is far too
# small on real data), a rejected step is halved.  An accepted step grows by how
# much of the condition it used, ``rho = eta <F(u) - F(v), u - v+> / (D(u, v) + D(v+, u))``
# (accepted: rho <= 1): by 30 % below 0.3, by 5 % below 0.6, and shrinks by 20 % above.  On
# OCR rho stays low until a step just short of the largest accepted one, then rises
# steeply.  A fixed small growth leaves the steps too small and the primal worse; a fixed
# large one spends passes on rejected trials
# (benchmarks/README.md, "Measurements behind code choices").
_START, _SHRINK = 32.0, 0.5
_GROW_FAST, _GROW, _EASE = 1.3, 1.05, 0.8
_RHO_FAST, _RHO_EASE = 0.3, 0.6
# the centre's log-odds of each true label (see ``dual_extragradient``'s ``centre``) and the
# floor of the feature metric's weights, relative to their root mean square
_CENTRE, _METRIC_FLOOR = 3.0, 0.2


def _next_step(eta: float, rho: float) -> float:
    """The next iteration's first trial after ``eta`` was accepted using ``rho`` of the bound."""
    if rho < _RHO_FAST:
        return eta * _GROW_FAST
    return eta * (_GROW if rho < _RHO_EASE else _EASE)


@njit(cache=True, nogil=True)
def _id_feature_squares(If, offsets, off, Yf, K, F, d, Lmax):  # pragma: no cover - compiled
    """``sum_i phi(x_i, y_i) ** 2`` per coordinate of a chain with attribute-id features,
    whose joint features are counts: integers, so the sums are exact in any order (the
    same numbers as the Python loop over ``joint_feature_sparse``)."""
    m2 = np.zeros(d)
    cnt = np.zeros(d)
    touched = np.empty(Lmax * (If.shape[1] + 1) + 2, dtype=np.int64)
    idx = np.empty(If.shape[1] + 3, dtype=np.int64)
    o = K * F
    for i in range(off.size - 1):
        lo, hi = off[i], off[i + 1]
        nt = 0
        for t in range(lo, hi):
            y = Yf[t]
            m = 0
            for j in range(If.shape[1]):
                v = If[t, j]
                if v != 0:
                    idx[m] = y * F + offsets[j] + v - 1
                    m += 1
            if t == lo:
                idx[m] = o + y
                m += 1
            if t == hi - 1:
                idx[m] = o + K + y
                m += 1
            if t + 1 < hi:
                idx[m] = o + 2 * K + y + K * Yf[t + 1]
                m += 1
            for q in range(m):
                c = idx[q]
                if cnt[c] == 0.0:
                    touched[nt] = c
                    nt += 1
                cnt[c] += 1.0
        for q in range(nt):
            c = touched[q]
            m2[c] += cnt[c] * cnt[c]
            cnt[c] = 0.0
    return m2


def feature_metric(model: Any, X: Sequence[Any], Y: Sequence[Any],
                   floor: float = _METRIC_FLOOR, data: Any = None) -> np.ndarray:
    """Per-coordinate weights of the ``w`` geometry: the root mean square over the examples of
    ``phi_j(x_i, y_i)``, over its root mean square over the coordinates, floored at ``floor``.

    A coordinate that is large on many examples moves slowly, a rare one fast (a diagonal
    preconditioner of the coupling, whose ``w`` rows scale with the features); no oracle call.
    ``data``: the chain data of ``(X, Y)``; with attribute-id features the sums run
    compiled (the same numbers as in Python, which is slow on CoNLL-2000:
    benchmarks/README.md, "Measurements behind code choices").
    """
    if data is not None and data.uses_ids:
        m2 = _id_feature_squares(data.If, data.offsets, data.off, data.Yf, data.K, data.F,
                                 data.d, data.Lmax)
    else:
        m2 = np.zeros(model.size_joint_feature)
        for x, y in zip(X, Y):
            idx, val = model.joint_feature_sparse(x, y)
            np.add.at(m2, idx, np.asarray(val, dtype=float) ** 2)
    mean = float(np.mean(m2))
    if mean <= 0.0:
        return np.ones_like(m2)
    return np.maximum(np.sqrt(m2 / mean), floor)


def _set_centre(point: ChainDualPoint, centre: float) -> np.ndarray:
    """Put ``point`` at the prox centre of ``z`` (log-potential ``centre`` on each true label,
    none on the transitions); returns the per-example log-partitions.

    Without transition potentials the positions are independent, so the marginals are in
    closed form: no pass over the data, as for the uniform centre.
    """
    data = point.data
    K, Yf = data.K, data.Yf
    known = np.flatnonzero((Yf >= 0) & (Yf < K))
    point.theta[...] = 0.0
    point.theta_e[...] = 0.0
    point.theta[known, Yf[known]] = centre
    logz_t = np.logaddexp.reduce(point.theta, axis=1)  # per position
    point.mu[...] = np.exp(point.theta - logz_t[:, None])
    for i in range(data.n):  # T_i = sum_t mu_t mu_{t+1}^T
        lo, hi = data.off[i], data.off[i + 1]
        point.T[i] = point.mu[lo:hi - 1].T @ point.mu[lo + 1:hi]
    sums = np.concatenate([[0.0], np.cumsum(logz_t)])
    return sums[data.off[1:]] - sums[data.off[:-1]]


class _ExtragradientEngine(Engine):
    """Dual extragradient iterations; one outer iteration is one accepted step (two
    passes of marginals, plus two per rejected trial of the adaptive step).

    Under a time limit no trial starts that the last one says would end past it (keeping
    the time of the closing certificate), and a trial still under way when the time is
    spent is dropped between chunks of examples (:class:`._budget.PassClock`): the point
    stays the last accepted one's, the calls made count."""

    times_itself = True

    def __init__(self, data: Any, lam: float, eta: float, adaptive: bool,
                 c_w: float | np.ndarray, centre: float, averaging: str | None,
                 budget: CallBudget) -> None:
        self.data, self.lam, self.eta, self.adaptive, self.c_w = data, lam, eta, adaptive, c_w
        self.averaging, self.budget = averaging, budget
        n, d = data.n, data.d
        self.n = n
        # v = T(u_hat, s): ``cur.theta`` is the centre's potentials plus n s_z (the
        # accumulated steps), ``cur.mu``/``cur.T`` its marginals, ``a_v`` its log-partitions
        self.cur = cur = ChainDualPoint(data, lam, refresh=not centre)
        self.a_v = np.diff(data.off) * np.log(data.K)  # uniform: L log K
        if centre:
            self.a_v = _set_centre(cur, centre)
        self.bar = cur.like()  # mu, T: the reported marginals z_bar
        self.avg: RunningAverage | WeightedMean | None = None
        self.s_w = np.zeros(d)
        self.w_v = np.zeros(d)
        tic = time.perf_counter()
        self.wz_v, ell, dual = cur.image()
        self.image_seconds = time.perf_counter() - tic  # what the closing certificate takes
        self.w_bar = np.zeros(d)
        self.w_u, self.mu_u, self.T_u = np.zeros(d), cur.mu.copy(), cur.T.copy()
        self.mu_p, self.T_p, self.a_p = np.empty_like(cur.mu), np.empty_like(cur.T), np.empty(n)
        self.a_u = np.empty(n)
        self.theta_p = (np.empty_like(cur.theta), np.empty_like(cur.theta_e))
        # D(z_bar) = ell(z_bar) - lam/2 ||w(z_bar)||^2 from the average of the images (the
        # images are linear in the marginals): no pass over the data per iteration; at the
        # start bar's marginals are cur's
        self.ell_bar, self.dual_bar = ell, dual
        self._trial_seconds = 0.0  # the last trial's, to start none that would end too late
        self.it = self.rejected = 0
        self.accepted = eta
        self.clock: PassClock | None = None  # set by dual_extragradient() with the monitor
        self.time_up = False  # an iteration was dropped for the time limit
        self._image: tuple[tuple[int, int], tuple[np.ndarray, float, float]] | None = (
            (0, 0), (self.wz_v.copy(), ell, dual))  # bar's image at the start

    def observe(self, k: int) -> Observation:
        info = self.budget.info()
        state = {**info, "w_bar": self.w_bar, "point_bar": self.bar, "w_last": self.w_u,
                 "mu_last": self.mu_u, "T_last": self.T_u}
        return Observation(-self.dual_bar, np.nan, False, self.w_bar, None, self.accepted,
                           {**info, "rejected": self.rejected}, state, time_up=self.time_up,
                           budget_spent=not self.budget.fits(2 * self.n))

    def advance(self, k: int, monitor: Monitor) -> int:
        lam, n, c_w, cur = self.lam, self.n, self.c_w, self.cur
        mu_u, T_u, a_u, mu_p, T_p, a_p = (self.mu_u, self.T_u, self.a_u, self.mu_p, self.T_p,
                                          self.a_p)
        s_w, w_v, wz_v = self.s_w, self.w_v, self.wz_v
        while self.budget.fits(2 * n):
            eta = self.eta
            # u = T(v, -eta F(v)): F_w(v) = lam (w_v - w(z_v)), -F_z(v) = scores(w_v) / n,
            # and the prox weight 1/n of z turns the z step into eta * scores(w_v)
            w_u = w_v - (eta / c_w) * lam * (w_v - wz_v)
            if self.clock is not None and not self.clock.fits(self._trial_seconds):
                self.time_up = True
                return 0
            tic = time.perf_counter()
            if not self._marginals(w_v, eta, mu_u, T_u, a_u) or self._out_of_time(monitor):
                return 0
            wz_u, ell_u, _ = cur.image(mu_u, T_u)
            # s <- s - eta F(u), and the next v (its marginals: the potentials theta_p)
            s_p = s_w - eta * lam * (w_u - wz_u)
            w_p = s_p / c_w
            if not self._marginals(w_u, eta, mu_p, T_p, a_p, self.theta_p):
                return 0
            wz_p, _, _ = cur.image(mu_p, T_p)
            rho = 0.0
            if self.adaptive:
                lhs, dist, scale = _prox_terms(lam, n, c_w, eta, cur.phi_true,
                                               (w_v, wz_v, self.a_v), (w_u, wz_u, ell_u, a_u),
                                               (w_p, wz_p, a_p))
                rho = lhs / dist if dist > 0 else np.inf
                if lhs - dist > 1e-12 * scale:
                    self.eta = eta * _SHRINK
                    self.rejected += 1
                    self._trial_seconds = time.perf_counter() - tic
                    continue
            self._trial_seconds = time.perf_counter() - tic
            self._accept(eta, w_u, wz_u, ell_u, s_p, w_p, wz_p)
            if self.adaptive:
                self.eta = _next_step(eta, rho)
            return 1
        return 0  # no affordable trial was accepted

    def _marginals(self, w: np.ndarray, eta: float, mu: np.ndarray, T: np.ndarray,
                   logz: np.ndarray, theta_out: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> bool:
        """A pass of marginals (``ChainDualPoint.marginals``), its calls counted; under a
        time limit in chunks of examples, False when the time ran out before its end."""
        clock, n = self.clock, self.n
        if clock is None or not clock.limited:
            self.cur.marginals(w, eta, mu, T, logz, theta_out=theta_out)
            self.budget.spent += n
            return True
        done = 0
        for chunk in clock.chunks(np.arange(n)):
            stop = done + chunk.size
            self.cur.marginals(w, eta, mu, T, logz, theta_out=theta_out, start=done,
                               stop=stop)
            done = stop
        self.budget.spent += done
        self.time_up = done < n
        return not self.time_up

    def _out_of_time(self, monitor: Monitor) -> bool:
        """Whether the time limit (less the closing certificate's reserve) is spent: the
        trial under way is then dropped."""
        reserve = self.clock.reserve if self.clock is not None else 0.0
        self.time_up = self.time_up or monitor.time_up(reserve)
        return self.time_up

    def _accept(self, eta: float, w_u: np.ndarray, wz_u: np.ndarray, ell_u: float,
                s_p: np.ndarray, w_p: np.ndarray, wz_p: np.ndarray) -> None:
        cur, bar = self.cur, self.bar
        self.s_w, self.w_v, self.wz_v = s_p, w_p, wz_p
        (cur.theta, cur.theta_e), self.theta_p = self.theta_p, (cur.theta, cur.theta_e)
        cur.mu, self.mu_p = self.mu_p, cur.mu
        cur.T, self.T_p = self.T_p, cur.T
        self.a_v, self.a_p = self.a_p, self.a_v
        self.it += 1
        mu_u, T_u = self.mu_u, self.T_u
        ell = np.array([ell_u])
        if self.averaging is None:
            self.w_bar, bar.mu, bar.T = w_u, mu_u.copy(), T_u.copy()
            wz_bar = wz_u
        else:
            arrays = (w_u, mu_u, T_u, wz_u, ell)
            if self.avg is None:
                self.avg = (WeightedMean(arrays, eta) if self.averaging == "uniform"
                            else RunningAverage(self.averaging, arrays))
            elif isinstance(self.avg, WeightedMean):
                self.avg.update(arrays, eta)
            else:
                self.avg.update(arrays)
            self.w_bar, bar.mu, bar.T, wz_bar, ell_bar = self.avg.value()
            ell_u = float(ell_bar[0])
        self.w_u = w_u
        self.dual_bar = ell_u - 0.5 * self.lam * float(wz_bar @ wz_bar)
        self.accepted = eta

    def _bar_image(self) -> tuple[np.ndarray, float, float]:
        """``bar.image()`` at the end, once for the certificate and the outputs (a pass)."""
        key = (self.it, self.budget.spent)
        if self._image is None or self._image[0] != key:
            self._image = (key, self.bar.image())
        return self._image[1]

    def certify(self, last: Observation) -> tuple[float, float]:
        return -self._bar_image()[2], np.nan

    def outputs(self, error: bool) -> dict[str, Any]:
        w_dual, _, dual = self._bar_image()
        extra = {"w": self.w_bar, "dual": dual, "w_dual": w_dual, "iterations": self.it,
                 "rejected": self.rejected, **self.budget.info(),
                 "step_size": self.accepted if self.it else self.eta,
                 "point_bar": self.bar}
        out: dict[str, Any] = dict(x=np.array(self.w_bar), n_oracle_calls=self.budget.spent,
                                   n_gradient_calls=0, n_function_calls=0, extra=extra)
        if error:
            out.update(fun=-dual, gap=np.nan)
        return out


def dual_extragradient(model: Any, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
                       max_passes: float = 50, step_size: float | str = "adaptive",
                       c_w: float = 1.0, metric: str = "features",
                       centre: float = _CENTRE, averaging: str | None = "uniform",
                       run_options: RunOptions | None = None) -> Result:
    """Run the dual extragradient method on a chain model, on the core's driver.

    Parameters
    ----------
    model : ChainModel
    X, Y : training sequences and labellings
    lam : float
        Regularization ``> 0``.
    max_passes : float
        Budget of effective passes of marginals, kept exactly: an iteration (or a
        rejected trial of the adaptive step) costs two passes, and none starts that
        would exceed ``floor(max_passes * n)`` forward-backward calls.
    step_size : float or {"adaptive", "auto", "bound"}, default "adaptive"
        ``eta``: ``"adaptive"`` backtracks on the local condition of the method's
        analysis (see the module notes), starting at 32 times the safe step of
        ``"bound"`` for the weight ``c_w``, halving a rejected step and growing an
        accepted one by 30 %, 5 % or -20 % as it used below 0.3, below 0.6 or more of
        the condition's bound;
        ``"auto"`` is ``1 / Lip`` from the power-method estimate of the coupling's norm
        (costs ``2 * rounds`` Viterbi passes before the first iteration, not counted as
        passes of marginals); ``"bound"`` is ``1 / Lip`` from the feature norms' safe
        bound; a number is a fixed step.
    c_w : float
        Weight of the prox term of ``w`` against the entropies.
    metric : {"features", "euclidean"}, default "features"
        The prox term of ``w``: ``1/2 sum_j c_w m_j dw_j^2`` with the weights ``m_j`` of
        :func:`feature_metric` (each coordinate's root mean square over the true joint
        features, relative to all, floored at 0.2), or ``c_w/2 ||dw||^2``.  The fixed
        steps (``"auto"``, ``"bound"``) take the smallest weight ``c_w min_j m_j`` as
        ``c_w``, so ``"bound"`` stays safe.
    centre : float, default 3.0
        The prox centre of ``z``: per example the Gibbs distribution with log-potential
        ``centre`` on each position's true label, ``z_hat_i(y) ∝ exp(centre * #{t: y_t =
        y_it})`` (0: uniform).  The rate's constant is ``D(x*, u_hat)`` over the sum of the
        steps, and the structured SVM's dual optimum puts most mass near the true
        labellings, as BCFW's start ``z = delta(y_i)`` does.
    averaging : {"uniform", "tail", "weighted", None}, default "uniform"
        The point reported and certified: the mean of the ``u_t`` weighted by their
        steps (Taskar et al.; its rate is O(1/t) even when the ``u_t`` converge
        faster), the 0.5-suffix mean by the doubling trick, the ``2/(k+2)``-weighted
        mean, or the last ``u_t``.
    run_options : RunOptions, optional
        The core's run keywords, as a :class:`~frankwolfe.RunOptions`: ``callback`` (an
        :class:`~frankwolfe.IterationState` before the first iteration and after each:
        ``state.k`` iterations, ``state.x`` the averaged weights ``w_bar``,
        ``state.info`` the ``effective_passes``, ``oracle_calls``, ``point_bar`` (a
        :class:`~..models.chain.expectation.ChainDualPoint` whose ``mu``/``T`` are the averaged
        marginals: ``image()`` gives ``(w(z_bar), ell, D(z_bar))``) and ``w_bar``;
        ``state.step_size`` the accepted ``eta``; return ``False`` to stop),
        ``time_limit`` (counted from the call, set-up included; checked between chunks
        of examples: an iteration under way when it is spent is dropped, its calls
        counted), ``verbose``, ``progress``,
        ``history_every``.  ``max_iter`` is set from ``max_passes`` (one of its own is
        refused); no gap is certified inside the run, so ``tol`` never stops it.

    Returns
    -------
    Result
        ``x`` = ``w_bar``, ``fun`` = ``-D(z_bar)`` (a fresh sum), ``gap`` NaN, ``nit``
        iterations, ``n_oracle_calls`` forward-backward calls; ``extra`` (also as
        ``result["w"]`` etc.): ``w`` (= ``w_bar``), ``dual`` (``D(z_bar)``), ``w_dual``
        (``w(z_bar)``), ``iterations``, ``rejected`` (trials of the adaptive step
        rejected), ``effective_passes``, ``oracle_calls``, ``step_size`` (the last
        accepted) and ``point_bar``.
    """
    lam = check_lam(lam, "dual_extragradient")
    if averaging is not None and averaging not in ("uniform", "tail", "weighted"):
        raise ValueError("dual_extragradient: `averaging` must be 'uniform', 'tail', "
                         f"'weighted' or None, got {averaging!r}")
    if not (np.isfinite(c_w) and c_w > 0):
        raise ValueError(f"dual_extragradient: `c_w` must be a positive number, got {c_w!r}")
    if metric not in _METRICS:
        raise ValueError("dual_extragradient: `metric` must be 'features' or 'euclidean', "
                         f"got {metric!r}")
    if not (np.isfinite(centre) and centre >= 0):
        raise ValueError("dual_extragradient: `centre` must be a number >= 0, "
                         f"got {centre!r}")
    if isinstance(step_size, str) and step_size not in _STEP_RULES:
        raise ValueError("dual_extragradient: `step_size` must be a positive number, "
                         f"'adaptive', 'auto' or 'bound', got {step_size!r}")
    # the clock starts before the set-up (the flattened data, the metric, the centre): it
    # counts against time_limit
    monitor = budget_options(run_options, max_passes,
                             "dual_extragradient").monitor("dual_extragradient")
    data = chain_dual_data(model, X, Y, "dual_extragradient")
    lam = float(lam)
    adaptive = step_size == "adaptive"
    weights: float | np.ndarray = float(c_w)
    c_min = float(c_w)
    if metric == "features":
        weights = c_w * feature_metric(model, X, Y, data=data)
        c_min = float(np.min(weights))
    if step_size == "auto":
        eta = 1.0 / (lam / c_min + coupling_norm(model, X, Y) / np.sqrt(c_min))
    elif step_size == "bound":
        eta = 1.0 / _lipschitz(data, lam, c_min)
    elif adaptive:
        # a first trial only (the check makes any start safe): the scalar ``c_w``'s, since
        # the feature metric's weights lie around 1 in root mean square
        eta = _START / _lipschitz(data, lam, c_w)
    else:
        eta = float(step_size)
    if not (np.isfinite(eta) and eta > 0):
        raise ValueError(f"dual_extragradient: `step_size` must be a positive number, "
                         f"got {step_size!r}")
    budget = CallBudget(max_passes, data.n, "dual_extragradient")
    engine = _ExtragradientEngine(data, lam, eta, adaptive, weights, float(centre), averaging,
                                  budget)
    engine.clock = PassClock(monitor)
    engine.clock.reserve = engine.image_seconds
    return drive(engine, monitor)

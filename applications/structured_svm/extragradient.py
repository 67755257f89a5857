"""Dual extragradient for the chain structured SVM as a saddle-point problem.

Taskar, Lacoste-Julien and Jordan (JMLR 2006), "Structured prediction, dual
extragradient and Bregman projections" (Nesterov's dual extrapolation).  The
structured SVM is the saddle point

    min_w max_z  L(w, z) = lam/2 ||w||^2 + 1/n sum_i [ell_i(z_i) - <w, psi_i(z_i)>]

over the marginal polytopes ``z_i`` of the chains.  With ``u = (w, z)`` and the
monotone operator ``F(u) = (grad_w L, -grad_z L)``, each iteration runs

    v   = T(u_hat, s)              (prox from the centre: w = s_w / c_w, z ∝ exp(n s_z))
    u_t = T(v, -eta F(v))          (the extragradient step)
    s  <- s - eta F(u_t)

and outputs the average of the ``u_t``.  The ``w`` part is Euclidean (weight
``c_w``); the ``z`` part uses the entropy (KL) over each example's labellings
with weight ``1/n`` (the objective weighs each example by ``1/n``; this keeps the
per-example step from shrinking like ``1/sqrt(n)``), whose prox step is a
marginal computation: ``z`` stays a Gibbs distribution
with chain-factored log-potentials (:mod:`._expectation`), so ``T`` costs one
forward-backward per example.  An iteration costs two passes of marginals
(at ``v`` and at ``u_t``), counted as two effective passes.

The step is ``eta = 1 / Lip`` with ``Lip = lam / c_w + ||A|| / sqrt(c_w)``, where
``||A||`` is the norm of the coupling ``z -> 1/n sum_i sum_y z_i(y) psi_i(y)`` from
the norm ``sqrt(1/n sum_i ||z_i||_1^2)`` (distributions over labellings) to the
Euclidean norm of ``w``; ``Lip`` is then the Lipschitz constant of ``F`` in the
norm ``c_w ||w||^2 + 1/n sum_i ||z_i||_1^2``.  The default (``step_size="auto"``)
estimates ``||A||`` from the data by a few rounds of the power method for this
(l1, l2) norm (:func:`coupling_norm`: each round one Viterbi decoding per example
and sign), a lower bound of ``||A||`` (the rounds converge in about four); the safe bound
``sqrt(mean_i R_i^2)`` with ``R_i >= max_y ||psi_i(y)||`` from the feature norms
(``step_size="bound"``) is 3.5 times the estimate on OCR-large and 2.1 times on a
small chain.  ``1 / Lip`` is the worst-case step of the method's analysis: on small
problems steps ten times larger still converge (``step_size`` as a number).

Certificates at the averaged point ``(w_bar, z_bar)``: the primal ``P(w_bar)``
(a loss-augmented pass), the dual ``D(z_bar) = ell(z_bar) - lam/2 ||w(z_bar)||^2``,
the certified gap ``P(w_bar) - D(z_bar)`` (it bounds both suboptimalities),
and Taskar et al.'s restricted saddle gap ``max_z L(w_bar, z) - min_{||w|| <= R}
L(w, z_bar)`` with ``R = sqrt(2 P(0) / lam) >= ||w*||``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._averaging import RunningAverage
from ._expectation import ChainDualPoint, add_potentials, chain_dual_data

__all__ = ["dual_extragradient", "restricted_gap", "coupling_norm"]


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
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
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
                idx, val = model.psi(X[i], part[1], Y[i])  # phi(y*) - phi(y_i)
                v[idx] += (m[i] / rms) * part[0] * val
        w = v / n
    return est


def restricted_gap(primal: float, dual: float, w_of_z: np.ndarray, lam: float,
                   radius: float) -> float:
    """``P(w_bar) - min_{||w|| <= radius} L(w, z_bar)``; ``L(w, z_bar) = lam/2 ||w - w(z_bar)||^2
    + D(z_bar)``, minimized at the projection of ``w(z_bar)`` on the ball."""
    excess = max(0.0, float(np.linalg.norm(w_of_z)) - radius)
    return primal - dual - 0.5 * lam * excess * excess


def dual_extragradient(model: Any, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
                       max_passes: float = 50, step_size: float | str = "auto",
                       c_w: float = 1.0, averaging: str | None = "uniform",
                       time_limit: float | None = None,
                       callback: Callable[[int, float, dict[str, Any]], Any] | None = None
                       ) -> dict[str, Any]:
    """Run the dual extragradient method on a chain model.

    Parameters
    ----------
    model : ChainModel
    X, Y : training sequences and labellings
    lam : float
        Regularization ``> 0``.
    max_passes : float
        Budget of effective passes (two per iteration).
    step_size : float or {"auto", "bound"}, default "auto"
        ``eta``, or ``1 / Lip`` from the power-method estimate of the coupling's
        norm (``"auto"``, costs ``2 * rounds`` Viterbi passes before the first
        iteration, not counted as passes of marginals) or from the feature norms'
        safe bound (``"bound"``); see the module notes.
    c_w : float
        Weight of the Euclidean prox term of ``w`` against the entropies.
    averaging : {"uniform", "tail", "weighted", None}, default "uniform"
        The point reported and certified: the mean of the ``u_t`` (Taskar et al.;
        its rate is O(1/t) even when the ``u_t`` converge faster), the 0.5-suffix
        mean by the doubling trick, the ``2/(k+2)``-weighted mean, or the last ``u_t``.
    time_limit : float, optional
        Seconds (checked after each iteration).
    callback : callable, optional
        ``callback(iteration, effective_passes, state)`` after each iteration; ``state``
        has ``w_bar`` (averaged weights) and ``point_bar`` (a
        :class:`~._expectation.ChainDualPoint` whose ``mu``/``T`` are the averaged
        marginals: ``image()`` gives ``(w(z_bar), ell, D(z_bar))``).  Return ``False``
        to stop.

    Returns
    -------
    dict
        ``w`` (= ``w_bar``), ``dual`` (``D(z_bar)``), ``w_dual`` (``w(z_bar)``),
        ``iterations``, ``effective_passes``, ``oracle_calls``, ``seconds``,
        ``step_size`` and ``point_bar``.
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"dual_extragradient: `lam` must be a positive number, got {lam!r}")
    if averaging is not None and averaging not in ("uniform", "tail", "weighted"):
        raise ValueError("dual_extragradient: `averaging` must be 'uniform', 'tail', "
                         f"'weighted' or None, got {averaging!r}")
    if not (np.isfinite(c_w) and c_w > 0):
        raise ValueError(f"dual_extragradient: `c_w` must be a positive number, got {c_w!r}")
    data = chain_dual_data(model, X, Y, "dual_extragradient")
    if isinstance(step_size, str):
        if step_size not in ("auto", "bound"):
            raise ValueError("dual_extragradient: `step_size` must be a positive number, "
                             f"'auto' or 'bound', got {step_size!r}")
        if step_size == "auto":
            eta = 1.0 / (lam / c_w + coupling_norm(model, X, Y) / np.sqrt(c_w))
        else:
            eta = 1.0 / _lipschitz(data, lam, c_w)
    else:
        eta = float(step_size)
    if not (np.isfinite(eta) and eta > 0):
        raise ValueError(f"dual_extragradient: `step_size` must be a positive number, "
                         f"got {step_size!r}")
    n, d = data.n, data.d
    acc = ChainDualPoint(data, lam)    # theta: n s_z, the accumulated -eta F_z (centre: uniform)
    bar = ChainDualPoint(data, lam)    # mu, T: the reported (averaged) marginals z_bar
    avg: RunningAverage | None = None
    s_w = np.zeros(d)
    w_bar = np.zeros(d)
    mu_u, T_u = np.empty_like(acc.mu), np.empty_like(acc.T)
    args = (data.Xf, data.If, data.offsets, data.off, data.Yf, data.K, data.F, data.uses_ids)
    calls = 0
    t0 = time.perf_counter()
    it = 0
    while calls / n < max_passes:
        # v = T(u_hat, s): w_v = s_w / c_w, z_v = marginals of n s_z (kept as n s_z)
        w_v = s_w / c_w
        acc.refresh()
        wz_v, _, _ = acc.image()
        # u = T(v, -eta F(v)): F_w(v) = lam (w_v - w(z_v)), -F_z(v) = scores(w_v) / n,
        # and the prox weight 1/n of z turns the z step into eta * scores(w_v)
        w_u = w_v - (eta / c_w) * lam * (w_v - wz_v)
        acc.marginals(w_v, eta, mu_u, T_u)
        calls += 2 * n
        wz_u, _, _ = acc.image(mu_u, T_u)
        # s <- s - eta F(u)
        s_w -= eta * lam * (w_u - wz_u)
        add_potentials(*args, w_u, acc.theta, acc.theta_e, eta, data.Lmax)
        it += 1
        if averaging is None:
            w_bar, bar.mu, bar.T = w_u, mu_u.copy(), T_u.copy()
        else:
            if avg is None:
                avg = RunningAverage(averaging, (w_u, mu_u, T_u))
            else:
                avg.update((w_u, mu_u, T_u))
            w_bar, bar.mu, bar.T = avg.value()
        state = {"w_bar": w_bar, "point_bar": bar, "w_last": w_u, "mu_last": mu_u,
                 "T_last": T_u}
        if callback is not None and callback(it, calls / n, state) is False:
            break
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
    seconds = time.perf_counter() - t0
    w_dual, _, dual = bar.image()
    return {"w": w_bar, "dual": dual, "w_dual": w_dual, "iterations": it,
            "effective_passes": calls / n, "oracle_calls": calls, "seconds": seconds,
            "step_size": eta, "point_bar": bar}

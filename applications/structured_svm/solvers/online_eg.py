"""Online exponentiated gradient (online-EG) for the chain structured SVM dual.

Collins, Globerson, Koo, Carreras and Bartlett (JMLR 2008): each example keeps a
Gibbs distribution over its labellings, ``alpha_i(y) ∝ exp(theta_i(y))``,
factored on the chain (node and shared transition log-potentials, see
:mod:`._expectation`), started uniform (``theta = 0``).  A step on example ``i``
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

This is not a Frank-Wolfe method, so it lives in the application.  Its
certificate is the dual point's: ``w`` and the dual value from the marginals
(a fresh sum), the primal by one loss-augmented pass at that ``w``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from ._expectation import (ChainDualPoint, add_expected_features, chain_dual_data,
                           node_scores, transitions)
from .models._forward_backward import chain_marginals

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


def online_eg(model: Any, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
              max_passes: float = 50, eta0: float = 0.5, sampling: str = "uniform",
              random_state: int | np.random.Generator | None = None,
              time_limit: float | None = None,
              callback: Callable[[int, float, Any], Any] | None = None) -> dict[str, Any]:
    """Run online-EG on a chain model.

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
        last, partial pass is counted in ``passes`` but not shown to ``callback``).
    eta0 : float
        Initial per-example step (the paper's 0.5).
    sampling : {"uniform", "perm"}
        Examples drawn with replacement, or a fresh permutation per pass.
    random_state : int or Generator
    time_limit : float, optional
        Seconds (checked after each pass).
    callback : callable, optional
        ``callback(pass, effective_passes, point)`` after each pass, with ``point`` the
        :class:`~._expectation.ChainDualPoint` (``point.image()`` gives ``(w, ell,
        dual)``); return ``False`` to stop.

    Returns
    -------
    dict
        ``w`` and ``dual`` (of the final dual point, a fresh sum), ``ell``,
        ``passes``, ``effective_passes``, ``oracle_calls``, ``seconds`` and ``point``.
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"online_eg: `lam` must be a positive number, got {lam!r}")
    if sampling not in ("uniform", "perm"):
        raise ValueError(f"online_eg: `sampling` must be 'uniform' or 'perm', got {sampling!r}")
    if not (np.isfinite(eta0) and eta0 > 0):
        raise ValueError(f"online_eg: `eta0` must be a positive number, got {eta0!r}")
    data = chain_dual_data(model, X, Y, "online_eg")
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    n = data.n
    gram, goff = data.gram()
    point = ChainDualPoint(data, lam)
    w, ell, _ = point.image()
    etas = np.full(n, float(eta0))
    calls = 0  # the uniform start has closed-form marginals (1/K, (L-1)/K^2)
    t0 = time.perf_counter()
    p = 0
    budget = int(np.floor(max_passes * n))
    while calls < budget:
        p += 1
        order = rng.integers(n, size=n) if sampling == "uniform" else rng.permutation(n)
        c, _, done = _eg_steps(data.Xf, data.If, data.offsets, data.off, data.Yf, data.K, data.F,
                          data.uses_ids, gram, goff, float(lam), order.astype(np.int64), w,
                          point.theta, point.theta_e, point.mu, point.T, etas,
                          2 if p == 1 else 5, data.Lmax, budget - calls)
        calls += int(c)
        if not done:  # the budget ended the pass: reported by the return value only
            break
        if callback is not None and callback(p, calls / n, point) is False:
            break
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
    seconds = time.perf_counter() - t0
    w, ell, dual = point.image()
    return {"w": w, "ell": ell, "dual": dual, "passes": p, "effective_passes": calls / n,
            "oracle_calls": calls, "seconds": seconds, "point": point}

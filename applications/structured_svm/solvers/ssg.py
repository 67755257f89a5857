"""Stochastic subgradient (SSG) for the structured SVM primal - a baseline.

Pegasos-style steps on ``lam/2 ||w||^2 + 1/n sum_i H_i(w)`` as in BCFWstruct's
``solverSSG.m``: at step ``k`` (from 0) pick ``i``, decode
``y* = argmax_y L_i(y) - <w, psi_i(y)>`` and set

    w <- (1 - 1/(k+1)) w + psi_i(y*) / (lam (k+1))

(a subgradient step of size ``1/(lam (k+1))``).  Averaging variants of the
BCFW paper (Lacoste-Julien et al., ICML 2013, Figure 1 and appendix):
SSG-wavg ``wbar <- (1 - rho) wbar + rho w``, ``rho = 2/(k+2)``; SSG-avg, the
plain mean; SSG-tavg, the 0.5-suffix mean by the doubling trick (see
:mod:`._averaging`).  This is not a Frank-Wolfe method, so it lives in the
application.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._averaging import AVERAGING, ScaledAverage
from .models.base import StructuredModel

__all__ = ["ssg"]

_RENORMALIZE = 1e-9  # fold s into v below this scale (v grows like 1/s)


def ssg(model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], lam: float, *,
        max_passes: int = 50, averaging: bool | str | None = True,
        sampling: str = "uniform",
        w0: np.ndarray | None = None, random_state: int | np.random.Generator | None = None,
        time_limit: float | None = None,
        callback: Callable[[int, np.ndarray, int, float], Any] | None = None) -> dict[str, Any]:
    """Run SSG; returns ``{"w": last, "w_average": wbar or None, "passes": p, "oracle_calls": k}``.

    Parameters
    ----------
    model : StructuredModel
    X, Y : training examples and labellings
    lam : float
        Regularization ``> 0``.
    max_passes : int
        Passes of ``n`` steps.
    averaging : {"weighted", "uniform", "tail"}, bool or None
        Keep an average of the iterates (returned and passed to the callback):
        ``"weighted"`` (SSG-wavg; also ``True``), ``"uniform"`` (SSG-avg), ``"tail"``
        (SSG-tavg); ``False`` / ``None``: none.
    sampling : {"uniform", "perm"}
        ``rng.integers(n, size=n)`` or ``rng.permutation(n)`` per pass.
    w0 : ndarray, optional
        Start (default 0).
    random_state : int or Generator
    time_limit : float, optional
        Seconds (checked after each pass).
    callback : callable, optional
        ``callback(pass, w_reported, oracle_calls, seconds)`` after each pass, where
        ``w_reported`` is the average when ``averaging`` else the last iterate; return
        ``False`` to stop.

    Notes
    -----
    One step costs one oracle call plus O(nnz of ``psi``) and O(size of the
    example's feature support): ``w`` is kept as ``s * v`` (the shrinkage
    scales ``s``; ``v`` is renormalized when ``s`` falls below
    ``_RENORMALIZE``) and the averages lazily (:class:`._averaging.ScaledAverage`).
    The oracle reads ``w`` only on ``model.feature_support(x)``, which is all
    that is formed; when the supports cover more than a quarter of ``w`` (dense
    features, e.g. OCR) the whole ``s * v`` is formed instead, which is cheaper
    than gathering.  The iterates equal those of the dense update
    ``w <- (1 - eta) w + ...`` up to rounding (where two labellings tie to
    rounding, e.g. integer features on weights still zero, either update may
    decode the other one and the runs part).
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"ssg: `lam` must be a positive number, got {lam!r}")
    kind = "weighted" if averaging is True else (averaging or None)
    if kind is not None and kind not in AVERAGING:
        raise ValueError(f"ssg: `averaging` must be one of {list(AVERAGING)}, True, False or "
                         f"None, got {averaging!r}")
    if sampling not in ("uniform", "perm"):
        raise ValueError(f"ssg: sampling must be 'uniform' or 'perm', got {sampling!r}")
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    n, d = len(X), model.size_joint_feature
    v = np.zeros(d) if w0 is None else np.array(w0, dtype=float)
    if v.shape != (d,):
        raise ValueError(f"ssg: `w0` must have shape ({d},), got {v.shape}")
    s = 1.0  # w = s * v
    avg = ScaledAverage(kind, v, s) if kind is not None else None
    w_view = np.zeros(d)  # s * v, exact on the support the oracle reads
    sample = [model.feature_support(X[i]).size for i in range(min(n, 10))]
    gather = float(np.median(sample)) <= d / 4
    k = 0
    t0 = time.perf_counter()
    p = 0
    for p in range(1, max_passes + 1):
        order = rng.integers(n, size=n) if sampling == "uniform" else rng.permutation(n)
        for i in order:
            if gather:
                sup = model.feature_support(X[i])
                w_view[sup] = s * v[sup]
            else:
                np.multiply(v, s, out=w_view)
            ystar = model.loss_augmented_decode(X[i], Y[i], w_view)
            idx, val = model.psi(X[i], Y[i], ystar)
            step = 1.0 / (k + 1)
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
            k += 1
        if callback is not None:
            stop = callback(p, avg.value() if avg is not None else s * v, k,
                            time.perf_counter() - t0)
            if stop is False:
                break
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
    wbar = avg.value() if avg is not None else None
    w = s * v
    return {"w": w, "w_average": wbar, "passes": p, "oracle_calls": k}

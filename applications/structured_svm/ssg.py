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

from ._averaging import AVERAGING, RunningAverage
from .models.base import StructuredModel

__all__ = ["ssg"]


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
    One step costs one oracle call plus O(d) (the shrinkage of ``w`` and the
    average are dense).
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
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float)
    if w.shape != (d,):
        raise ValueError(f"ssg: `w0` must have shape ({d},), got {w.shape}")
    avg = RunningAverage(kind, (w,)) if kind is not None else None
    k = 0
    t0 = time.perf_counter()
    p = 0
    for p in range(1, max_passes + 1):
        order = rng.integers(n, size=n) if sampling == "uniform" else rng.permutation(n)
        for i in order:
            ystar = model.loss_augmented_decode(X[i], Y[i], w)
            idx, val = model.psi(X[i], Y[i], ystar)
            step = 1.0 / (k + 1)
            w *= 1.0 - step
            w[idx] += val * (step / lam)
            if avg is not None:
                avg.update((w,))
            k += 1
        if callback is not None:
            stop = callback(p, avg.value()[0] if avg is not None else w, k,
                            time.perf_counter() - t0)
            if stop is False:
                break
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
    wbar = np.array(avg.value()[0]) if avg is not None else None
    return {"w": w, "w_average": wbar, "passes": p, "oracle_calls": k}

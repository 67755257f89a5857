"""Convergence plots (needs matplotlib: ``pip install frankwolfe[plot]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .result import Result

__all__ = ["plot_convergence"]

_LABELS = {
    "iteration": "iteration",
    "time": "time (s)",
    "gap": "certified Frank-Wolfe gap",
    "fun": "f(x)",
    "primal_gap": "f(x) - f*",
}


def plot_convergence(
    results: Result | Mapping[str, Result],
    x: str = "iteration",
    y: str = "gap",
    f_star: float | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Plot one or several runs' histories on a log scale.

    Parameters
    ----------
    results : Result or mapping of label -> Result
        The runs to draw.
    x : str, default "iteration"
        A history column for the horizontal axis (``"iteration"``, ``"time"``, ...).
    y : str, default "gap"
        A history column, or ``"primal_gap"`` for ``f(x) - f_star``.
    f_star : float, optional
        Optimal value for ``y="primal_gap"``; by default the best certified
        lower bound over the runs (``max dual_bound``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "plot_convergence needs matplotlib: pip install 'frankwolfe[plot]'") from exc
    runs = {results.method: results} if isinstance(results, Result) else dict(results)
    if not runs:
        raise ValueError("plot_convergence: no results to plot")
    if y == "primal_gap" and f_star is None:
        f_star = max(r.dual_bound for r in runs.values())
        if not np.isfinite(f_star):
            raise ValueError(
                "plot_convergence: y='primal_gap' needs f_star (no certified bound found)")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for label, res in runs.items():
        xs = res.history[x]
        ys = res.history["fun"] - f_star if y == "primal_gap" else res.history[y]
        ys = np.asarray(ys, dtype=float)
        keep = np.isfinite(ys) & (ys > 0)
        ax.semilogy(np.asarray(xs)[keep], ys[keep], label=label)
    ax.set_xlabel(_LABELS.get(x, x))
    ax.set_ylabel(_LABELS.get(y, y))
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax

"""Convergence plots (needs matplotlib: ``pip install frankwolfe[plot]``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._numbers import as_real
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
    results: Result | Mapping[str, Result] | Sequence[Result],
    x: str = "iteration",
    y: str = "gap",
    f_star: float | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Plot one or several runs' histories on a log scale.

    Parameters
    ----------
    results : Result, mapping of label -> Result, or sequence of Result
        The runs to draw (a sequence is labelled by the methods' names).
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
    if isinstance(results, Result):
        runs = {results.method: results}
    elif isinstance(results, Mapping):
        runs = dict(results)
    elif isinstance(results, (list, tuple)) and all(isinstance(r, Result) for r in results):
        # a sequence: labelled by method, numbered where methods repeat
        names = [r.method for r in results]
        runs = {(n if names.count(n) == 1 else f"{n} ({i})"): r
                for i, (n, r) in enumerate(zip(names, results))}
    else:
        raise TypeError(f"plot_convergence: `results` must be a Result, a mapping of label -> "
                        f"Result or a list of Results, got {type(results).__name__}")
    if not runs:
        raise ValueError("plot_convergence: no results to plot")
    bad = [k for k, r in runs.items() if not isinstance(r, Result)]
    if bad:
        raise TypeError(f"plot_convergence: `results[{bad[0]!r}]` must be a Result, got "
                        f"{runs[bad[0]]!r:.80}")
    if f_star is not None and not np.isfinite(as_real(f_star)):
        raise ValueError(f"plot_convergence: `f_star` must be a finite real number or None, "
                         f"got {f_star!r}")
    if ax is not None and not (hasattr(ax, "semilogy") and hasattr(ax, "legend")):
        raise TypeError(f"plot_convergence: `ax` must be a matplotlib Axes or None, "
                        f"got {ax!r:.80}")
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
        if ys.size and not keep.any():
            warnings.warn(f"plot_convergence: no positive finite {y!r} values in {label!r} "
                          "to draw on a log scale (for values of any sign, plot the "
                          "history's columns yourself, or y='primal_gap')", UserWarning,
                          stacklevel=2)
        # a run with one value to draw (one certificate, max_iter=0) shows as a marker:
        # a line of one point is invisible
        ax.semilogy(np.asarray(xs)[keep], ys[keep], label=label,
                    marker="o" if int(keep.sum()) == 1 else None)
    ax.set_xlabel(_LABELS.get(x, x))
    ax.set_ylabel(_LABELS.get(y, y))
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax

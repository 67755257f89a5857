"""Convergence plots (needs matplotlib: ``pip install frankwolfe[plot]``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._numbers import check_real
from ._warnings import warn_user
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
        A history column, or ``"primal_gap"`` for ``f(x) - f_star``.  Values of exactly
        0 (a gap certified to be 0) have no place on a log scale: each is marked with a
        downward triangle on the bottom edge of the axes, at its ``x``, in its run's
        colour (the curve itself ends at the last positive value).  Negative and
        non-finite values are left out; a run with no value to draw is warned of
        (``UserWarning``).
    f_star : float, optional
        Optimal value for ``y="primal_gap"``; by default the best certified
        lower bound over the runs (``max dual_bound``).  Refused with another ``y``
        (it would be ignored).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    KeyError
        When a run's history lacks the column ``x`` or ``y`` (``"fun"`` for
        ``y="primal_gap"``), naming the run; checked before any figure is made.
    TypeError
        For ``results``, ``x``, ``y``, ``f_star`` or ``ax`` of the wrong type.
    ValueError
        For no results, an ``f_star`` that is not finite or given with a ``y`` other
        than ``"primal_gap"``, or ``y="primal_gap"`` with no certified bound to take
        ``f_star`` from.
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
    for name, value in (("x", x), ("y", y)):
        if not isinstance(value, str):
            raise TypeError(f"plot_convergence: `{name}` must be a history column name (str), "
                            f"got {value!r} ({type(value).__name__})")
    if f_star is not None:
        f_star = check_real(f_star, "f_star", "plot_convergence")
        if y != "primal_gap":
            raise ValueError(f"plot_convergence: `f_star` serves y='primal_gap' only, got "
                             f"f_star={f_star!r} with y={y!r}")
    # every run's columns before a figure is made: a refused call leaves none open
    for label, res in runs.items():
        for name, column in (("x", x), ("y", "fun" if y == "primal_gap" else y)):
            if column not in res.history:
                raise KeyError(f"plot_convergence: the history of run {label!r} has no "
                               f"column {column!r} (`{name}`); its columns: "
                               f"{res.history.columns}")
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
        xs = np.asarray(res.history[x])
        ys = res.history["fun"] - f_star if y == "primal_gap" else res.history[y]
        ys = np.asarray(ys, dtype=float)
        keep = np.isfinite(ys) & (ys > 0)
        zero = ys == 0
        if ys.size and not keep.any() and not zero.any():
            warn_user(f"plot_convergence: no positive finite {y!r} values in {label!r} "
                          "to draw on a log scale (for values of any sign, plot the "
                          "history's columns yourself, or y='primal_gap')", UserWarning)
        # a run with one value to draw (one certificate, max_iter=0) shows as a marker:
        # a line of one point is invisible
        (line,) = ax.semilogy(xs[keep], ys[keep], label=label,
                              marker="o" if int(keep.sum()) == 1 else None)
        if zero.any():
            # x in data units, y in the axes' (0: the bottom edge): a zero is below
            # every positive value, which a log scale cannot reach
            ax.plot(xs[zero], np.zeros(int(zero.sum())), linestyle="none", marker="v",
                    color=line.get_color(), clip_on=False, transform=ax.get_xaxis_transform(),
                    label=f"_{label} (0)")
    ax.set_xlabel(_LABELS.get(x, x))
    ax.set_ylabel(_LABELS.get(y, y))
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax

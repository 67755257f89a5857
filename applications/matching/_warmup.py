"""Warm-up job of the quadratic assignment (``python -m frankwolfe.compile``; registered
in ``pyproject.toml`` under the entry-point group ``frankwolfe.warmup``)."""

from __future__ import annotations

__all__ = ["qap"]


def qap() -> None:
    """quadratic assignment: solve_qap (FW, restarts, 2-opt and tabu search) on float and
    integer (QAPLIB-like) matrices"""
    import numpy as np

    from .qap import solve_qap

    rng = np.random.default_rng(0)
    n = 7
    A = rng.integers(0, 10, (n, n))
    B = rng.integers(0, 10, (n, n))
    for a, b in ((A, B), (A.astype(float), B.astype(float))):
        solve_qap(a, b, random_state=0, max_iter=10)
        solve_qap(a, b, restarts=1, random_state=0, max_iter=10, local_search="2opt")
        solve_qap(a, b, random_state=0, max_iter=10, time_limit=0.2)

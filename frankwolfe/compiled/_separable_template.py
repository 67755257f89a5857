"""Source of the core's kernels for separable objectives (see
:func:`frankwolfe.compiled.separable.separable_objective`).

Not executed from here: ``separable_objective`` binds the free name ``coord`` to an
objective's per-coordinate kernel ``coord(data, j, xj, want_value) -> (f_j, f_j',
f_j'')`` and compiles the three functions below with numba (written out as a module
that imports ``coord``, so that numba caches them across processes, or in memory when
``coord`` has no importable name).  They serve the compiled pass driver (as the
``line``, ``update`` and ``search`` of a :class:`~frankwolfe.compiled.CompiledObjective`)
and the Python block steps alike, so both take the same steps.
"""
# ruff: noqa: F821 (``coord`` is bound by separable_objective)

import numpy as np

#: the search stops when ``|phi'(gamma)|`` is at most this fraction of the sum of the
#: sizes of its terms: ``gamma`` is then a root to working precision
TOL = 1e-14
#: most Newton / bisection iterations of one search (bisection alone halves the bracket
#: to 1e-30 of its size in 100)
MAX_ITER = 100


def sep_line(data, x, g, idx, val, nnz):  # pragma: no cover - compiled
    """``(phi'(0), phi''(0))`` of ``phi(gamma) = f(x + gamma d)`` for the sparse direction
    ``d = (idx[:nnz], val[:nnz])`` (``g``: the gradient at ``x``)."""
    s = 0.0
    c = 0.0
    no = nnz < 0  # False, but not a literal: one compilation of coord serves all calls
    for a in range(nnz):
        j = idx[a]
        v = val[a]
        _, _, d2 = coord(data, j, x[j], no)
        s += g[j] * v
        c += d2 * v * v
    return s, c


def _slope(data, x, idx, val, nnz, gam):  # pragma: no cover - compiled
    # phi'(gam), phi''(gam) and the size of the terms of phi'
    s = 0.0
    c = 0.0
    size = 0.0
    no = nnz < 0  # False, not a literal (see sep_line)
    for a in range(nnz):
        j = idx[a]
        v = val[a]
        _, d1, d2 = coord(data, j, x[j] + gam * v, no)
        s += d1 * v
        c += d2 * v * v
        size += abs(d1 * v)
    return s, c, size


def sep_search(data, x, idx, val, nnz, gmax):  # pragma: no cover - compiled
    """The minimizer of ``phi(gamma) = f(x + gamma d)`` on ``[0, gmax]`` (``gmax`` may be
    ``inf``): the root of ``phi'`` by Newton steps kept inside a bracket (bisection
    whenever Newton leaves it), from the step of the quadratic model at 0."""
    s0, c0, _ = _slope(data, x, idx, val, nnz, 0.0)
    if not s0 < 0.0 or not gmax > 0.0:
        return 0.0
    lo = 0.0
    hi = gmax
    if hi == np.inf:  # no bound: double until phi' turns non-negative
        hi = 1.0
        while True:
            s_hi, _, _ = _slope(data, x, idx, val, nnz, hi)
            if s_hi >= 0.0 or hi > 1e15:
                break
            lo = hi
            hi *= 2.0
    s_hi, _, _ = _slope(data, x, idx, val, nnz, hi)
    if s_hi <= 0.0:
        return hi
    # near convergence the steps are short and the quadratic model is already accurate
    gam = -s0 / c0 if c0 > 0.0 else 0.5 * (lo + hi)
    if not (lo < gam < hi):
        gam = 0.5 * (lo + hi)
    for _ in range(MAX_ITER):
        s, c, size = _slope(data, x, idx, val, nnz, gam)
        if abs(s) <= TOL * size:
            return gam
        if s > 0.0:
            hi = gam
        else:
            lo = gam
        if hi - lo <= 4e-16 * hi:
            break
        step = s / c if c > 0.0 else np.inf
        nxt = gam - step
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        elif abs(step) <= TOL * gam:
            return nxt
        gam = nxt
    return gam


def sep_update(data, x, g, idx, val, nnz, gamma):  # pragma: no cover - compiled
    """``x += gamma d`` with ``g`` kept equal to the gradient on the direction's support;
    returns the exact change of ``f``."""
    df = 0.0
    yes = nnz >= 0  # True, not a literal (see sep_line)
    for a in range(nnz):
        j = idx[a]
        f0, _, _ = coord(data, j, x[j], yes)
        x[j] += gamma * val[a]
        f1, d1, _ = coord(data, j, x[j], yes)
        g[j] = d1
        df += f1 - f0
    return df

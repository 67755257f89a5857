"""The local LP relaxation of the marginal polytope, solved by HiGHS.

Over node marginals ``mu_i`` (``n x K``) and edge marginals ``mu_e`` (``E x K x K``),
all non-negative::

    max  sum_i <unary_i, mu_i> + sum_e <pairwise_e, mu_e>
    s.t. sum_k mu_i(k) = 1,   sum_b mu_e(a, b) = mu_u(a),   sum_a mu_e(a, b) = mu_v(b).

Its optimum is an upper bound of the best score (the feasible set contains every
labelling's indicator vectors) and equals it on forests and on submodular binary
energies, where the LP has an integral optimum.  Scores are maximized; see
:mod:`.energy`.

Two ways to solve it (``solver=``): ``"highs"`` hands HiGHS the whole LP (``nK +
EK^2`` variables: 222,000 on a 64x64 grid with 5 states, seconds a call);
``"pruned"`` first runs TRW-S to convergence, whose dual bound tends to the LP's
optimum, keeps at each node only the states within ``delta`` of the maximum of its
reparametrized unary, fixes the nodes left with one state, and hands HiGHS the LP of
the free nodes only (a few hundred on a denoising grid).  The pruned optimum, put back
into the whole graph, is a point of the local polytope, so its value is at most the
LP's optimum, and TRW-S's bound is at least that optimum: their difference is a
certified gap.  It is accepted when it is within ``tol``; else ``delta`` grows.
After the last try (or when a quarter of the nodes would stay free, where the pruned
LP costs about what the whole one does) the best point found is returned with its
certified gap ``bound - value``: an approximate optimum, never an infeasible point or a
bound below the optimum (``solver="highs"`` for the exact LP optimum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from frankwolfe._numbers import check_real
from frankwolfe._scaling import lp_cost_shift
from frankwolfe.errors import OracleError

from .energy import check_energy, labelling_score

__all__ = ["LPResult", "local_lp", "FRACTIONAL_TOL", "PRUNE_ABOVE", "SOLVERS"]

#: marginals farther than this from 0 or 1 make a solution fractional (HiGHS's default
#: feasibility tolerance is 1e-7)
FRACTIONAL_TOL = 1e-6
# HiGHS's tolerances are absolute (1e-7 by default): with costs of order 2^-30 every
# labelling passed as optimal.  The LP's solutions are the same for costs c and 2^k c,
# its optimum 2^k times, so HiGHS gets the costs scaled by a power of two (exactly), as
# Polytope's (frankwolfe._scaling.lp_cost_shift): the result is then the same, bit for
# bit, for potentials scaled by any power of two


@dataclass(frozen=True)
class LPResult:
    """What :func:`local_lp` returns.

    Attributes
    ----------
    labels : ndarray of int64, shape (n_nodes,)
        The rounded labelling: the argmax of each node's marginals (ties to the lowest
        state); the LP's own labelling when it is integral.
    score : float
        The score of ``labels``: ``<= bound``.
    bound : float
        The LP optimum, an upper bound of the best score.
    node_marginals : ndarray, shape (n_nodes, n_states)
    edge_marginals : ndarray, shape (n_edges, n_states, n_states)
    fractional : bool
        Whether some marginal is more than :data:`FRACTIONAL_TOL` from 0 and 1 (then
        ``labels`` is a rounding and may not be optimal).
    value : float
        The score of the marginals (``<= bound``): the LP's optimum up to HiGHS's
        tolerance with ``"highs"``; with ``"pruned"``, within ``tol`` of ``bound``
        unless pruning could not get there (``bound - value`` is then the certified
        gap of this approximate optimum).  ``labels`` is certified optimal when the
        marginals are integral and ``value`` reaches ``bound``.
    """

    labels: np.ndarray
    score: float
    bound: float
    node_marginals: np.ndarray
    edge_marginals: np.ndarray
    fractional: bool
    value: float


#: ``"auto"`` hands HiGHS the whole LP below this many variables (``nK + EK^2``), where
#: it takes milliseconds, and prunes above it
PRUNE_ABOVE = 20_000
SOLVERS = ("auto", "highs", "pruned")
#: the pruning thresholds tried in turn, in units of the largest |potential|
_DELTAS = (1e-3, 1e-2, 1e-1)
#: pruning that leaves more than this fraction of the nodes free hands HiGHS the whole LP
_MAX_FREE = 0.25
#: TRW-S's budget before pruning: it stops earlier when its bound stalls; the budget
#: covers the iterations it took on denoising energies
#: (benchmarks/README.md, "Measurements behind code choices")
_TRWS_ITER, _TRWS_TOL = 300, 1e-9


def _highs(u: np.ndarray, p: np.ndarray, e: np.ndarray, allowed: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray, float]:
    """The LP by HiGHS: ``(node, edge, optimum)``; with ``allowed`` (``n x K`` bool), the
    marginals of the states it excludes (and of edge pairs holding one) are fixed to 0."""
    # slow to import: only LP users pay it
    # (benchmarks/README.md, "Measurements behind code choices")
    from scipy.optimize import linprog

    n, K = u.shape
    E = e.shape[0]
    nv = n * K
    # node normalization rows: mu_i(k) -> row i
    rows = [np.repeat(np.arange(n), K)]
    cols = [np.arange(nv)]
    vals = [np.ones(nv)]
    if E:
        ev = nv + np.arange(E * K * K).reshape(E, K, K)
        r0 = n + np.arange(E * K).reshape(E, K)  # sum_b mu_e(a, b) - mu_u(a) = 0
        r1 = n + E * K + np.arange(E * K).reshape(E, K)  # sum_a mu_e(a, b) - mu_v(b) = 0
        rows += [np.broadcast_to(r0[:, :, None], (E, K, K)).ravel(), r0.ravel(),
                 np.broadcast_to(r1[:, None, :], (E, K, K)).ravel(), r1.ravel()]
        cols += [ev.ravel(), (e[:, 0, None] * K + np.arange(K)).ravel(),
                 ev.ravel(), (e[:, 1, None] * K + np.arange(K)).ravel()]
        vals += [np.ones(E * K * K), -np.ones(E * K), np.ones(E * K * K), -np.ones(E * K)]
    n_rows = n + 2 * E * K
    A = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(n_rows, nv + E * K * K))
    b = np.zeros(n_rows)
    b[:n] = 1.0
    c = -np.concatenate([u.ravel(), p.ravel()])
    shift = lp_cost_shift(c)
    c = np.ldexp(c, shift)
    bounds: tuple[float | None, float | None] | np.ndarray = (0, None)
    if allowed is not None:
        keep = np.concatenate([allowed.ravel(), (allowed[e[:, 0], :, None]
                                                 & allowed[e[:, 1], None, :]).ravel()])
        bounds = np.stack([np.zeros(keep.size), np.where(keep, np.inf, 0.0)], axis=1)
    # scipy-stubs types A_eq as dense only; linprog takes scipy.sparse too
    res = linprog(c, A_eq=A, b_eq=b, bounds=bounds,  # type: ignore[call-overload]
                  method="highs")
    if res.status != 0 or res.x is None:
        raise OracleError(f"local_lp: HiGHS found no optimum (status {res.status}: "
                          f"{res.message})")
    x = np.clip(res.x, 0.0, 1.0)
    return x[:nv].reshape(n, K), x[nv:].reshape(E, K, K), math.ldexp(-res.fun, -shift)


def _indicator(labels: np.ndarray, e: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    node = np.zeros((labels.size, K))
    node[np.arange(labels.size), labels] = 1.0
    edge = np.zeros((e.shape[0], K, K))
    edge[np.arange(e.shape[0]), labels[e[:, 0]], labels[e[:, 1]]] = 1.0
    return node, edge


def _pruned(u: np.ndarray, p: np.ndarray, e: np.ndarray, tol: float
            ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(node, edge, bound, value)`` of the pruned LP (see the module's docstring):
    ``node`` and ``edge`` a point of the whole local polytope and ``value`` its score,
    the best of TRW-S's labelling and the pruned LPs tried; ``bound`` (TRW-S's) is >=
    the LP's optimum.  It stops at the first within ``tol``."""
    from .message_passing import _potential_scale, trws_reparametrized

    n, K = u.shape
    t, th = trws_reparametrized(u, p, e, _TRWS_ITER, _TRWS_TOL)
    best = (*_indicator(t.labels, e, K), t.score)
    bound = max(t.bound, t.score)
    # the largest |potential| as the unit, not 1: the gaps scale with the potentials
    # (tiny early in training), and a bound near 0 by cancellation keeps an allowance
    unit = _potential_scale(u, p)
    if bound - t.score <= tol * (unit + abs(bound)):
        # TRW-S's labelling reaches its bound: an integral optimum of the LP
        return best[0], best[1], bound, best[2]
    slack = th.max(axis=1, keepdims=True) - th
    ends = e.T
    for delta in _DELTAS:
        # the thresholds follow the potentials' own scale (tiny early in training)
        allowed = slack <= delta * unit
        free = allowed.sum(axis=1) > 1
        if free.sum() > _MAX_FREE * n:  # about as costly as the whole LP: stop here
            break
        fixed = np.argmax(allowed, axis=1)  # a fixed node's one state
        node = np.zeros((n, K))
        node[~free, fixed[~free]] = 1.0
        # the free nodes' LP: an edge to a fixed node becomes a unary term of the free end
        sub = np.full(n, -1)
        sub[free] = np.arange(int(free.sum()))
        fu, fv = free[ends[0]], free[ends[1]]
        su = u[free].copy()
        one = fu & ~fv
        np.add.at(su, sub[ends[0][one]], p[one, :, fixed[ends[1][one]]])
        one_v = fv & ~fu
        np.add.at(su, sub[ends[1][one_v]], p[one_v, fixed[ends[0][one_v]], :])
        both = fu & fv
        if free.any():
            sn, se, _ = _highs(su, p[both], sub[e[both]], allowed[free])
            node[free] = sn
        edge = node[ends[0], :, None] * node[ends[1], None, :]  # exact where an end is fixed
        if both.any():
            edge[both] = se
        value = float(np.sum(u * node) + np.sum(p * edge))
        if value > best[2]:
            best = (node, edge, value)
        if bound - best[2] <= tol * (unit + abs(bound)):
            break
    bound = max(bound, best[2])  # (rounding: the value of a feasible point is <= LP*)
    return best[0], best[1], bound, best[2]


def local_lp(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
             solver: str = "auto", tol: float = 1e-6) -> LPResult:
    """Solve the local LP relaxation by HiGHS (``scipy.optimize.linprog``, sparse).

    Cost: ``"highs"``: ``nK + EK^2`` variables and ``n + 2EK`` equality rows (3
    non-zeros per edge variable), HiGHS's dual simplex.  ``"pruned"``: TRW-S to
    convergence (300 iterations at most, O(EK^2) each), then HiGHS on the nodes TRW-S
    leaves undecided (see the module's docstring).  ``"auto"``: ``"highs"`` up to
    :data:`PRUNE_ABOVE` variables, ``"pruned"`` above (see Notes for times).
    Guarantee: ``bound`` >= the LP's optimum >= the best score >= ``score``; the
    marginals are a point of the local polytope (up to HiGHS's feasibility tolerance)
    whose ``value`` is the LP's optimum (``"highs"``) or within ``tol * (scale +
    |bound|)`` of ``bound`` where pruning reaches it (``"pruned"``; else ``bound -
    value`` certifies how far it may be), ``scale`` being the largest |potential|;
    exact (integral, not ``fractional``) on forests and on submodular binary energies
    with ``"highs"``.  Potentials scaled by a power of two give the same marginals
    and labelling, and ``bound``, ``score`` and ``value`` scaled exactly (HiGHS gets
    the costs scaled by a power of two to a largest entry in ``[512, 1024)``, as its
    tolerances are absolute).

    Parameters
    ----------
    unary, pairwise, edges
        The energy (see :mod:`.energy`).
    solver : {"auto", "highs", "pruned"}
    tol : float, default 1e-6
        ``"pruned"``: the certified gap accepted, relative to ``scale + |bound|``
        (``scale`` the largest |potential|), as :func:`.trws`'s ``tol`` (the
        loss-augmented maxima of a structured SVM are of order 1, so the oracle's
        shortfall is far below BCFW's gaps, and the certificates use ``bound``).
        TRW-S can stall a little above the LP's optimum (a weak-tree-agreement
        point: 1e-6 relative on some denoising energies).

    Raises
    ------
    frankwolfe.errors.OracleError
        When HiGHS does not report an optimum (naming its status and message).
    ValueError
        An unknown ``solver`` or a ``tol`` that is not a number >= 0.

    Notes
    -----
    What to expect of one call: ``"highs"`` takes a few ms for a 4x4 grid, tens of ms
    for a 50-node grid with 11 states and seconds (8 s measured) for a 64x64 grid with
    5 states, where ``"pruned"`` takes 0.01-1 s.
    """
    if solver not in SOLVERS:
        raise ValueError(f"local_lp: `solver` must be one of {list(SOLVERS)}, got {solver!r}")
    tol = check_real(tol, "tol", "local_lp", low=0)
    u, p, e = check_energy(unary, pairwise, edges, "local_lp")
    n, K = u.shape
    E = e.shape[0]
    if solver == "auto":
        solver = "pruned" if n * K + E * K * K > PRUNE_ABOVE else "highs"
    if solver == "pruned" and E:
        node, edge, bound, value = _pruned(u, p, e, tol)
    else:
        node, edge, bound = _highs(u, p, e)
        value = bound
    fractional = bool(np.any(np.minimum(node, 1.0 - node) > FRACTIONAL_TOL)
                      or np.any(np.minimum(edge, 1.0 - edge) > FRACTIONAL_TOL))
    y = np.argmax(node, axis=1).astype(np.int64)
    return LPResult(y, labelling_score(u, p, e, y), bound, node, edge, fractional, value)

"""The local LP relaxation of the marginal polytope, solved by HiGHS.

Over node marginals ``mu_i`` (``n x K``) and edge marginals ``mu_e`` (``E x K x K``),
all non-negative::

    max  sum_i <unary_i, mu_i> + sum_e <pairwise_e, mu_e>
    s.t. sum_k mu_i(k) = 1,   sum_b mu_e(a, b) = mu_u(a),   sum_a mu_e(a, b) = mu_v(b).

Its optimum is an upper bound of the best score (the feasible set contains every
labelling's indicator vectors) and equals it on forests and on submodular binary
energies, where the LP has an integral optimum.  Scores are maximized; see
:mod:`.energy`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from frankwolfe.errors import OracleError

from .energy import check_energy, labelling_score

__all__ = ["LPResult", "local_lp", "FRACTIONAL_TOL"]

#: marginals farther than this from 0 or 1 make a solution fractional (HiGHS's default
#: feasibility tolerance is 1e-7)
FRACTIONAL_TOL = 1e-6


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
        ``labels`` is a rounding and may not be optimal); when False, ``labels`` is a
        certified optimum (``score`` equals ``bound`` up to the LP tolerance).
    """

    labels: np.ndarray
    score: float
    bound: float
    node_marginals: np.ndarray
    edge_marginals: np.ndarray
    fractional: bool


def local_lp(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray) -> LPResult:
    """Solve the local LP relaxation by HiGHS (``scipy.optimize.linprog``, sparse).

    Cost: ``nK + EK^2`` variables and ``n + 2EK`` equality rows (3 non-zeros per
    edge variable); HiGHS's dual simplex or interior point, polynomial in theory,
    a few ms for a 4x4 grid, tens of ms for a 50-node grid with 11 states.
    Guarantee: ``bound`` >= the best score >= ``score``; exact (integral, not
    ``fractional``) on forests and on submodular binary energies.

    Raises
    ------
    frankwolfe.errors.OracleError
        When HiGHS does not report an optimum (naming its status and message).
    """
    from scipy.optimize import linprog  # ~0.6 s to import: only LP users pay it

    u, p, e = check_energy(unary, pairwise, edges, "local_lp")
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
    # scipy-stubs types A_eq as dense only; linprog takes scipy.sparse too
    res = linprog(c, A_eq=A, b_eq=b, bounds=(0, None),  # type: ignore[call-overload]
                  method="highs")
    if res.status != 0 or res.x is None:
        raise OracleError(f"local_lp: HiGHS found no optimum (status {res.status}: "
                          f"{res.message})")
    x = np.clip(res.x, 0.0, 1.0)
    node = x[:nv].reshape(n, K)
    edge = x[nv:].reshape(E, K, K)
    fractional = bool(np.any(np.minimum(x, 1.0 - x) > FRACTIONAL_TOL))
    y = np.argmax(node, axis=1).astype(np.int64)
    return LPResult(y, labelling_score(u, p, e, y), float(-res.fun), node, edge, fractional)

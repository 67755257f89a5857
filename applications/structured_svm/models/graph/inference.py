"""MAP inference on pairwise graphs as one pluggable choice.

``infer(unary, pairwise, edges, method)`` with ``method`` one of :data:`METHODS`:

===============  ============================================  =======================
method           what runs                                     guarantee
===============  ============================================  =======================
``"exact"``      max-product on forests, else variable         exact (raises when the
                 elimination                                   graph is too wide)
``"lp"``         the local LP relaxation by HiGHS (whole, or   bound >= optimum; exact
                 pruned by a converged TRW-S on large graphs)  on forests and binary
                                                               submodular energies
``"trws"``       compiled TRW-S                                bound >= optimum
``"max-product"`` compiled sequential loopy max-product        exact on forests
``"graph-cut"``  one min cut (binary submodular) or            exact on binary
                 alpha-expansion                               submodular energies
``"auto"``       ``"exact"`` on forests, ``"graph-cut"`` on    as the method chosen
                 binary submodular energies, ``"lp"`` else
===============  ============================================  =======================

Scores are maximized (:mod:`.energy`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from frankwolfe._numbers import as_real, is_real, is_whole

from .energy import check_energy, is_forest, is_submodular_binary
from .exact import exact_elimination, tree_max_product
from .graph_cut import alpha_expansion
from .lp import local_lp
from .message_passing import _potential_scale, max_product, trws

__all__ = ["METHODS", "InferenceResult", "infer", "choose_method", "check_options"]

METHODS = ("auto", "exact", "max-product", "lp", "trws", "graph-cut")


@dataclass(frozen=True)
class InferenceResult:
    """A MAP labelling and what is known of its optimality.

    Attributes
    ----------
    labels : ndarray of int64, shape (n_nodes,)
    score : float
        The score of ``labels``.
    bound : float
        An upper bound of the best score (``score`` itself when exact; ``inf`` when the
        method gives none: alpha-expansion on a non-submodular energy).
    exact : bool
        Whether ``labels`` is certified optimal (``bound == score`` up to rounding).
    method : str
        The method that ran (what ``"auto"`` chose).
    fractional : bool
        ``"lp"`` only: whether the LP optimum was fractional, in which case
        ``labels`` is the argmax of the node marginals (a rounding).
    node_marginals, edge_marginals : ndarray or None
        ``"lp"`` only: the relaxed optimum, ``(n_nodes, K)`` and ``(n_edges, K, K)``.
    """

    labels: np.ndarray
    score: float
    bound: float
    exact: bool
    method: str
    fractional: bool = False
    node_marginals: np.ndarray | None = None
    edge_marginals: np.ndarray | None = None


def choose_method(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray) -> str:
    """What ``"auto"`` runs: ``"exact"`` on a forest, ``"graph-cut"`` on a binary
    submodular energy, ``"lp"`` otherwise (checked arrays of :func:`.check_energy`)."""
    if is_forest(unary.shape[0], edges):
        return "exact"
    if unary.shape[1] == 2 and is_submodular_binary(pairwise):
        return "graph-cut"
    return "lp"


#: each method's options and their kinds ("count": an integer >= 1, "tol": a finite number
#: >= 0, "name": text); "auto" takes any of them and passes on those of its choice
_OPTIONS: dict[str, dict[str, str]] = {
    "exact": {"max_table": "count"},
    "lp": {"solver": "name", "tol": "tol"},
    "trws": {"max_iter": "count", "tol": "tol"},
    "max-product": {"max_iter": "count", "tol": "tol"},
    "graph-cut": {"max_sweeps": "count"},
}
_OPTIONS["auto"] = {k: v for opts in list(_OPTIONS.values()) for k, v in opts.items()}


def check_options(method: str, options: dict[str, Any], where: str) -> None:
    """Refuse options that ``method`` does not take, or of the wrong kind, naming them (a
    model's ``inference_options`` failed only at its first decoding, with Python's own
    ``unexpected keyword`` or ``int()`` error)."""
    known = _OPTIONS.get(method, {})
    for name, value in options.items():
        kind = known.get(name)
        if kind is None:
            raise ValueError(f"{where}: inference {method!r} takes no option {name!r}; its "
                             f"options: {sorted(known)}")
        typed = isinstance(value, str) if kind == "name" else is_real(value)
        if kind == "count":
            ok = typed and is_whole(value, 1)
        else:
            ok = typed and (kind == "name" or math.isfinite(as_real(value)) and value >= 0)
        if not ok:
            want = {"count": "a positive integer", "tol": "a finite number >= 0",
                    "name": "a name"}[kind]
            message = f"{where}: inference option {name!r} must be {want}, got {value!r}"
            if not typed:  # as check_whole and check_real tell a type from a value
                raise TypeError(f"{message} ({type(value).__name__})")
            raise ValueError(message)


def infer(unary: Any, pairwise: Any, edges: Any, method: str = "auto",
          **options: Any) -> InferenceResult:
    """MAP labelling of ``score(y) = sum_i unary[i, y_i] + sum_e pairwise[e, y_u, y_v]``.

    Parameters
    ----------
    unary : array, shape (n_nodes, n_states)
    pairwise : array, shape (n_states, n_states) or (n_edges, n_states, n_states)
    edges : int array, shape (n_edges, 2)
    method : str, default "auto"
        One of :data:`METHODS` (see the module's table).
    **options
        Passed to the method: ``max_iter`` (``"trws"``, ``"max-product"``), ``tol``
        (the relative gap of ``"trws"``, ``"max-product"`` and ``"lp"``), ``max_sweeps``
        (``"graph-cut"``), ``max_table`` (``"exact"`` on a loopy graph), ``solver``
        (``"lp"``: see :func:`.local_lp`).  ``"auto"`` takes any of them and passes on
        those of the method it picks (``tol`` reaches ``"lp"``; ``"exact"`` and
        ``"graph-cut"`` have no ``tol``).

    Raises
    ------
    ValueError
        An unknown method, or malformed potentials / edges (named).
    """
    if method not in METHODS:
        raise ValueError(f"infer: `method` must be one of {list(METHODS)}, got {method!r}")
    check_options(method, options, "infer")  # "auto": any method's options, by name
    u, p, e = check_energy(unary, pairwise, edges, "infer")
    if method == "auto":
        method = choose_method(u, p, e)
        options = {k: v for k, v in options.items() if k in _OPTIONS[method]}
    if method == "exact":
        if is_forest(u.shape[0], e):
            y, s = tree_max_product(u, p, e)
        else:
            y, s = exact_elimination(u, p, e, **options)
        return InferenceResult(y, s, s, True, "exact")
    if method == "lp":
        r = local_lp(u, p, e, **options)
        # integral marginals are optimal only where their value reaches the bound (a
        # pruned LP may stop short of it: see local_lp); the allowance is in units of
        # the largest |potential|, not of 1, which passed every gap of potentials of
        # order 2^-30
        exact = not r.fractional and r.bound - r.score <= 1e-7 * (
            _potential_scale(u, p) + abs(r.bound))
        return InferenceResult(r.labels, r.score, r.bound, exact, "lp",
                               r.fractional, r.node_marginals, r.edge_marginals)
    if method in ("trws", "max-product"):
        m = (trws if method == "trws" else max_product)(u, p, e, **options)
        return InferenceResult(m.labels, m.score, m.bound, m.certified, method)
    g = alpha_expansion(u, p, e, **options)
    return InferenceResult(g.labels, g.score, g.score if g.exact else np.inf, g.exact,
                           "graph-cut")

"""Matching problems on the Birkhoff polytope.

Quadratic assignment (Koopmans-Beckmann) solved as in FAQ: the core's
Frank-Wolfe methods on the relaxation, rounding and 2-opt.

* :func:`solve_qap` - relaxed QAP + Hungarian rounding + restarts + 2-opt;
* :class:`QAPObjective` - ``trace(A^T P B P^T)`` with exact line search;
* :func:`two_opt`, :func:`swap_deltas`, :class:`TabuSearch` - pairwise-exchange local search;
* :func:`read_qaplib`, :func:`read_qaplib_solution` - QAPLIB ``.dat``/``.sln`` files.
"""

from .doubly_stochastic import (
    barycenter,
    birkhoff_decomposition,
    project_to_permutation,
    random_doubly_stochastic,
    sinkhorn,
)
from .local_search import TabuSearch, swap_deltas, two_opt
from .objective import QAPObjective, qap_value
from .qap import QAP_METHODS, QAPResult, QAPRun, solve_qap
from .qaplib import QAPLIBSolution, read_qaplib, read_qaplib_solution

__all__ = [
    "solve_qap", "QAPResult", "QAPRun", "QAP_METHODS",
    "QAPObjective", "qap_value",
    "two_opt", "swap_deltas", "TabuSearch",
    "barycenter", "sinkhorn", "random_doubly_stochastic", "project_to_permutation",
    "birkhoff_decomposition",
    "read_qaplib", "read_qaplib_solution", "QAPLIBSolution",
]

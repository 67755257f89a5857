"""The core's warm-up jobs of ``python -m frankwolfe.compile``.

Each job solves tiny problems through the public functions, with the argument types,
layouts, kernel combinations and driver flags of real first calls (float64 C arrays,
CSR matrices with int32 indices as scipy builds them, the default and the common
step rules), so that numba compiles and caches exactly the specializations those
calls need.  Sizes do not matter to numba, only types: a job takes a fraction of a
second once compiled.  The applications register their jobs through the entry-point
group ``frankwolfe.warmup`` (see :mod:`frankwolfe.compile`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .objectives import LeastSquares, QuadraticObjective

__all__ = ["CORE_JOBS"]


def _quadratic(n: int, seed: int, sparse: bool = False) -> QuadraticObjective:
    import scipy.sparse as sp

    from .objectives import QuadraticObjective

    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    Q = B @ B.T + np.eye(n)
    c = -Q @ rng.dirichlet(np.ones(n))
    return QuadraticObjective(sp.csr_array(Q) if sparse else Q, c)


def _least_squares(m: int, n: int, seed: int, sparse: bool) -> LeastSquares:
    import scipy.sparse as sp

    from .objectives import LeastSquares

    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((m, n))
    dense[rng.random((m, n)) > 0.3] = 0.0
    return LeastSquares(sp.csr_array(dense) if sparse else dense, rng.standard_normal(m))


def simplex_methods() -> None:
    """vanilla, away-step, pairwise and fully corrective FW on the probability simplex
    (dense and sparse quadratics, a large sparse one)"""
    from .algorithms import (
        away_step_frank_wolfe,
        frank_wolfe,
        fully_corrective_frank_wolfe,
        pairwise_frank_wolfe,
    )
    from .lmo import ProbabilitySimplex

    dom = ProbabilitySimplex(dim=6)
    for sparse in (False, True):
        f = _quadratic(6, 0, sparse)
        for method in (frank_wolfe, away_step_frank_wolfe, pairwise_frank_wolfe,
                       fully_corrective_frank_wolfe):
            method(f, dom, max_iter=5)
    # a sparse Q as large as the tracker's sparse products of sparse atoms need
    import scipy.sparse as sp

    from .objectives import QuadraticObjective
    from .objectives.quadratic import _SPARSE_PRODUCT_MIN_N

    n = _SPARSE_PRODUCT_MIN_N
    big = QuadraticObjective(sp.csr_array(sp.diags(np.linspace(1.0, 2.0, n))), -np.ones(n) / n)
    for method in (frank_wolfe, away_step_frank_wolfe, pairwise_frank_wolfe):
        method(big, ProbabilitySimplex(dim=n), max_iter=5)


def l1_least_squares() -> None:
    """vanilla, away-step, pairwise and compiled pairwise FW for least squares over the
    l1 ball and the simplex (dense and CSR designs)"""
    from .algorithms import (
        away_step_frank_wolfe,
        compiled_pairwise_frank_wolfe,
        frank_wolfe,
        pairwise_frank_wolfe,
    )
    from .lmo import L1Ball, ProbabilitySimplex

    for sparse in (False, True):
        f = _least_squares(8, 12, 1, sparse)
        for dom in (L1Ball(1.0), ProbabilitySimplex(dim=12)):
            for method in (frank_wolfe, away_step_frank_wolfe, pairwise_frank_wolfe):
                method(f, dom, max_iter=5)
            compiled_pairwise_frank_wolfe(f, dom, max_iter=20)
            compiled_pairwise_frank_wolfe(f, dom, max_iter=20,
                                          corrective=False)


def bcfw_simplices() -> None:
    """block-coordinate FW over a product of simplices: the compiled pass driver with the
    exact and agnostic step rules, every block order, averaging"""
    from ._config import debug
    from .algorithms import block_coordinate_frank_wolfe
    from .lmo import ProbabilitySimplex, ProductDomain

    n, m = 4, 3
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    with debug(False):  # the compiled pass does not run in debug mode
        for sparse in (False, True):
            f = _quadratic(n * m, 2, sparse)
            for step in ("exact", "agnostic"):
                for order in ("uniform", "perm", "gap"):
                    block_coordinate_frank_wolfe(f, dom, step_size=step, block_order=order,
                                                 averaging="weighted", max_iter=3,
                                                 gap_every=2, random_state=0)
            block_coordinate_frank_wolfe(f, dom, max_iter=3, random_state=0)
            # the Python pass (blocks without compiled kernels): the gradient's rows
            block_coordinate_frank_wolfe(f, dom, max_iter=2, random_state=0, compiled=False)


def box_and_flows() -> None:
    """FW over boxes and the flow polytope of a DAG (compiled shortest paths)"""
    import networkx as nx

    from .algorithms import frank_wolfe
    from .lmo import Box, FlowPolytope, LinfBall

    f = _least_squares(5, 6, 3, False)
    frank_wolfe(f, Box(-np.ones(6), np.ones(6)), max_iter=5)
    frank_wolfe(f, LinfBall(1.0), max_iter=5)
    g = nx.DiGraph([(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4), (2, 4)])
    dom = FlowPolytope(g, source=0, sink=4)
    frank_wolfe(_least_squares(4, g.number_of_edges(), 4, False), dom,
                max_iter=5)


#: the core's jobs by name (``python -m frankwolfe.compile --list`` shows them)
CORE_JOBS: dict[str, Callable[[], None]] = {
    "simplex": simplex_methods,
    "l1-least-squares": l1_least_squares,
    "bcfw-simplices": bcfw_simplices,
    "box-flows": box_and_flows,
}

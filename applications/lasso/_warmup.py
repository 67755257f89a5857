"""Warm-up job of the constrained lasso (``python -m frankwolfe.compile``; registered in
``pyproject.toml`` under the entry-point group ``frankwolfe.warmup``)."""

from __future__ import annotations

__all__ = ["lasso"]


def lasso() -> None:
    """constrained lasso: solve_lasso ("auto": compiled pairwise, dense or sparse; pairwise
    from a large start or a centred sparse design) and a short lasso_path"""
    import numpy as np
    import scipy.sparse as sp

    from .solve import lasso_path, solve_lasso

    rng = np.random.default_rng(0)
    A = rng.standard_normal((10, 16))
    A[rng.random(A.shape) > 0.3] = 0.0
    b = rng.standard_normal(10)
    for design in (A, sp.csr_array(A), sp.csc_array(A)):
        for method in ("auto", "compiled_pairwise", "pairwise"):
            solve_lasso(design, b, 1.0, method=method, max_iter=50)
        lasso_path(design, b, [0.5, 1.0, 2.0], max_iter=50)

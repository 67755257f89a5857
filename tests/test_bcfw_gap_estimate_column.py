"""The history column ``gap_estimate`` is the sum of the block-gap estimates; right after
a certificate of the last iterate they are the exact block gaps, whose sum is the
certified gap <g, x> - sum_i min_{s_i} <g_i, s_i>, recomputed here with the
gradient and the simplex vertices by hand."""
import numpy as np

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)


def test_gap_estimate_after_a_certificate_is_the_sum_of_block_gaps():
    rng = np.random.default_rng(3)
    n, m = 8, 3
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    f = QuadraticObjective(Q, -Q @ y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    res = block_coordinate_frank_wolfe(f, dom, block_order="perm", step_size="exact",
                                       tol=0.0, max_iter=3, gap_every=1, random_state=0)
    x = res.extra["x_last"]
    g = Q @ x + f.c
    G = g.reshape(n, m)
    gaps = (G * x.reshape(n, m)).sum(axis=1) - G.min(axis=1)
    est = res.history["gap_estimate"][-1]
    assert np.isclose(est, np.maximum(gaps, 0).sum(), rtol=1e-9, atol=1e-12)
    assert np.isclose(res.history["gap"][-1], gaps.sum(), rtol=1e-9, atol=1e-12)

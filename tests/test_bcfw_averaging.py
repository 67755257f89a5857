"""BCFW's "tail" average: the 0.5-suffix average of the BCFW paper's appendix (BCFW-tavg).

The iterates ``x_0 .. x_K`` (``x_k`` after ``k`` block steps) are recorded
independently of the averaging code (the Python engine's per-step gradient
requests), and the returned average is compared with their numpy mean over
the window the doubling trick defines, on both engines.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)

N, M = 6, 3  # blocks, simplex size


class Recording(QuadraticObjective):
    """Records the point of every block step's gradient request: ``x_k`` before step ``k``."""

    def __init__(self, Q, c):
        super().__init__(Q, c)
        self.seen: list[np.ndarray] = []

    def partial_gradient(self, x, indices):
        self.seen.append(np.array(x, dtype=float))
        return super().partial_gradient(x, indices)


def problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    dim = N * M
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + 0.1 * np.eye(dim)
    c = rng.standard_normal(dim)
    return Q, c, ProductDomain([ProbabilitySimplex(dim=M) for _ in range(N)])


def doubling_window(P: int) -> tuple[int, int]:
    """First and last iterate averaged after ``P`` passes by the doubling trick: epochs end
    after passes 1, 2, 4, 8, ...; the average is the previous epoch plus the current one."""
    if P == 1:
        return 0, N  # the start and pass 1
    s = 2 ** (int(np.log2(P)) - 1)  # the previous epoch began after pass s
    return s * N + 1, P * N


def run(f, dom, P, compiled, **kw):
    kw = {"gap_every": 10**6, "random_state": 3} | kw
    with fw.debug(False):  # debug mode would keep the Python engine
        return block_coordinate_frank_wolfe(f, dom, averaging="tail", max_iter=P, tol=0.0,
                                            block_order="perm", compiled=compiled, **kw)


@pytest.mark.parametrize("P", [1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 23])
def test_tail_average_is_the_doubling_trick_window_mean(P):
    Q, c, dom = problem()
    rec = Recording(Q, c)
    res_py = run(rec, dom, P, False)
    assert res_py.extra["engine"] == "python"
    iterates = np.array(rec.seen + [res_py.extra["x_last"]])  # x_0 .. x_{P N}
    assert len(iterates) == P * N + 1
    first, last = doubling_window(P)
    ref = iterates[first:last + 1].mean(axis=0)
    if P >= 2:  # the 0.5-suffix property: between the last half and last three quarters
        assert 0.5 <= (last - first + 1) / (P * N) <= 0.75
    res_c = run(QuadraticObjective(Q, c), dom, P, None)
    assert res_c.extra["engine"] == "compiled"
    # the two engines walk the same path (same order, exact steps) up to rounding
    np.testing.assert_allclose(res_c.extra["x_last"], res_py.extra["x_last"], rtol=0, atol=1e-12)
    for res in (res_py, res_c):
        assert res.extra["average_window"] == (first, last)
        np.testing.assert_allclose(res.extra["x_average"], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("compiled", [None, False])
def test_certified_gap_of_tail_average_bounds_its_suboptimality(compiled):
    Q, c, dom = problem(seed=1)
    x = cp.Variable(N * M)
    cons = [x >= 0] + [cp.sum(x[i * M:(i + 1) * M]) == 1 for i in range(N)]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    f_star = prob.value
    f = QuadraticObjective(Q, c)
    for P in (3, 8, 13):
        res = run(f, dom, P, compiled, certify="average", gap_every=1)
        assert res.extra["engine"] == ("python" if compiled is False else "compiled")
        # the certified (returned) point is the reported tail average
        np.testing.assert_array_equal(res.x, res.extra["x_average"])
        assert not np.array_equal(res.x, res.extra["x_last"])
        # the gap recomputed from scratch at the returned point is the certified one
        g = f.gradient(res.x)
        assert g @ res.x - g @ dom(g).to_dense() == pytest.approx(res.gap, rel=1e-9, abs=1e-12)
        tol = 1e-8 * max(1.0, abs(f_star))
        assert -tol <= f.value(res.x) - f_star <= res.gap + tol
        assert res.gap > 1e-6  # not trivially converged: the bound is informative

"""QuadraticObjective's exact step along a direction near the null space of a positive
semidefinite Q (B B^T of rank 2): the curvature d^T Q d is zero up to rounding and may
come out as -2e-17, which counts as zero (a linear line, step +inf, clipped by the
rule), not as a non-convex Hessian, for the full and the block exact step."""

import numpy as np
import pytest

from frankwolfe import QuadraticObjective


def _cases():
    for seed in range(40):
        rng = np.random.default_rng(seed)
        B = rng.standard_normal((6, 2))
        d = np.linalg.svd(B.T)[2][-1]  # B^T d = 0: d^T (B B^T) d = 0 exactly
        Q = B @ B.T
        yield 0.5 * (Q + Q.T), d


@pytest.mark.parametrize("block", [False, True])
def test_rounding_negative_curvature_of_a_psd_quadratic_is_zero(block):
    negative = 0
    for Q, d in _cases():
        f = QuadraticObjective(Q, np.zeros(6))
        g = -np.sign(d) * np.abs(d)  # slope <g, d> = -|d|^2 < 0
        if float(d @ (Q @ d)) > 0:  # a positive rounding curvature is taken as it is
            continue
        negative += 1
        step = (f.exact_step_block(np.zeros(6), np.arange(6), d, g) if block
                else f.exact_step(np.zeros(6), d, g))
        assert step == np.inf  # not a NonConvexError
    assert negative > 0


def test_a_truly_negative_curvature_is_still_refused():
    from frankwolfe.errors import NonConvexError

    f = QuadraticObjective(np.diag([1.0, -1e-3]), np.zeros(2))
    with pytest.raises(NonConvexError, match="negative curvature"):
        f.exact_step(np.zeros(2), np.array([0.0, 1.0]), np.array([0.0, -1.0]))

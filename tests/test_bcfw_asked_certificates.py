"""Certificates that BCFW's block-gap estimates ask for (their sum meets ``tol``) between
the scheduled ones: each costs a pass of oracle calls, counts as one of ``max_iter``'s
passes, and after one that does not confirm ``tol`` the estimates wait 1, 2, 4, ...
passes before asking again.  With an average certified (the estimates are about the
last iterate's steps) they asked for one nearly every pass, which doubled a run's
oracle calls."""

from __future__ import annotations

import math

import numpy as np
import pytest

import frankwolfe as fw


class _CountedSimplex(fw.ProbabilitySimplex):
    calls = 0

    def extreme_point(self, direction):
        _CountedSimplex.calls += 1
        return super().extreme_point(direction)


def _problem(nb: int = 20, k: int = 4):
    c = np.random.default_rng(0).dirichlet(np.ones(k), size=nb).ravel()
    n = nb * k
    # min 1/2 ||x - c||^2 over a product of simplices holding c: the optimum is c
    return fw.QuadraticObjective(np.eye(n), -c), \
        fw.ProductDomain([_CountedSimplex(dim=k) for _ in range(nb)]), c


@pytest.mark.parametrize("block_step", ["fw", "pairwise"])
def test_asked_certificates_count_within_max_iter(block_step):
    obj, dom, _ = _problem()
    nb, max_iter, every = 20, 200, 10
    _CountedSimplex.calls = 0
    res = fw.block_coordinate_frank_wolfe(obj, dom, averaging="weighted", certify="average",
                                          block_step=block_step, max_iter=max_iter,
                                          tol=1e-3, gap_every=every, random_state=0,
                                          compiled=False)
    assert res.status == "max_iter"
    certified = int(np.isfinite(np.asarray(res.history["gap"], dtype=float)).sum())
    scheduled = res.nit // every
    asked = certified - scheduled - 1  # less the closing certificate
    assert asked >= 2  # the estimates asked (else the test shows nothing)
    # waits of 1, 2, 4, ... passes between asked certificates that do not confirm tol
    assert asked <= math.log2(max_iter) + 2
    assert res.nit + asked <= max_iter
    # every oracle call, counted by the blocks themselves: the passes of steps, the
    # asked and the scheduled certificates, and the closing one
    assert _CountedSimplex.calls == pytest.approx(res.extra["effective_passes"] * nb)
    assert _CountedSimplex.calls <= (max_iter + math.ceil(max_iter / every) + 1) * nb


def test_a_run_that_converges_is_certified_at_tol():
    obj, dom, c = _problem()
    res = fw.block_coordinate_frank_wolfe(obj, dom, averaging="weighted", certify="average",
                                          block_step="pairwise", max_iter=500, tol=1e-2,
                                          gap_every=10, random_state=0, compiled=False)
    assert res.status == "converged" and res.gap <= 1e-2
    # the certificate bounds the error: 1/2 ||x - c||^2 = f(x) - f* <= gap
    assert 0.5 * float(np.sum((res.x - c) ** 2)) <= res.gap * (1 + 1e-9) + 1e-15

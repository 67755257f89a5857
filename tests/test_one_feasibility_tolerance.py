"""One feasibility tolerance: a point that check_feasible accepts as a start is
is_feasible by default (is_feasible used 1e-9 where check_feasible accepts 1e-8)."""

from __future__ import annotations

import numpy as np

import frankwolfe as fw
from frankwolfe.lmo.base import FEASIBILITY_TOL


def test_what_check_feasible_accepts_is_feasible():
    d = fw.L1Ball(1.0)
    x = np.array([0.5, 0.5 + 5e-9])  # violation 5e-9: within 1e-8, beyond 1e-9
    d.check_feasible(x)
    assert d.is_feasible(x)
    far = np.array([0.5, 0.5 + 5e-8])
    assert not d.is_feasible(far)
    assert d.violation(far) > FEASIBILITY_TOL


def test_a_float32_start_accepted_is_feasible():
    S = fw.ProbabilitySimplex(dim=3)
    x = np.full(3, 1 / 3, dtype=np.float32)  # off by 2.98e-8: its own rounding
    S.check_feasible(x)
    assert S.violation(x) > FEASIBILITY_TOL
    assert S.is_feasible(x)
    assert not S.is_feasible(x, tol=FEASIBILITY_TOL)

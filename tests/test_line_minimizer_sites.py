"""The applications' closed-form line searches are the core's exact line search
(frankwolfe.objectives.line.line_minimizer): the same steps as the copies they replaced
where the curvature is positive, and the core's rule on flat and concave lines (the
copies answered 0 or +inf where the unclipped minimizer over all reals is -inf)."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe.algorithms.alternating import _Penalized
from frankwolfe.applications.matching.objective import QAPObjective
from frankwolfe.applications.structured_svm.dual import SSVMDualObjective
from frankwolfe.errors import NonConvexError
from frankwolfe.objectives.line import line_minimizer


def _parabola_minimizer(f, x, d):
    """The minimizer of t -> f(x + t d) from three values (the function is quadratic along
    d): an independent check, through values only."""
    f0, f1, fm = f.value(x), f.value(x + d), f.value(x - d)
    a = (f1 + fm - 2.0 * f0) / 2.0  # coefficient of t^2
    b = (f1 - fm) / 2.0             # of t
    return -b / (2.0 * a)


def _objectives(rng):
    yield SSVMDualObjective(0.3, 7), (8,)
    yield QAPObjective(rng.random((4, 4)), rng.random((4, 4))), (4, 4)
    yield _Penalized(None, 3, 4, 0.7), (12,)


def test_exact_steps_minimize_the_line():
    rng = np.random.default_rng(3)
    for f, shape in _objectives(rng):
        checked = 0
        for _ in range(30):
            x, d = rng.normal(size=shape), rng.normal(size=shape)
            want = _parabola_minimizer(f, x, d)
            got = f.exact_step(x, d, f.gradient(x))
            if np.isfinite(got):
                assert got == pytest.approx(want, rel=1e-7, abs=1e-9), type(f).__name__
                checked += 1
        assert checked >= 10


def test_ssvm_block_step_is_the_full_step():
    rng = np.random.default_rng(4)
    f = SSVMDualObjective(0.3, 7)
    for _ in range(20):
        x = rng.normal(size=8)
        idx = np.sort(rng.choice(8, size=4, replace=False))
        v = rng.normal(size=4)
        d = np.zeros(8)
        d[idx] = v
        g = f.gradient(x)
        assert f.exact_step_block(x, idx, v, g[idx]) == pytest.approx(
            f.exact_step(x, d, g), rel=1e-13)


def test_flat_lines_follow_the_core_rule():
    """Zero curvature: +inf for a descent direction, 0 on a flat line, -inf for an ascent
    direction (the unclipped minimizer over all reals)."""
    # QAP with a zero-diagonal flow matrix: D = e_i e_j^T has <A, D B D^T> = A_ii B_jj = 0
    rng = np.random.default_rng(5)
    A = rng.random((3, 3))
    np.fill_diagonal(A, 0.0)
    q = QAPObjective(A, rng.random((3, 3)))
    P = np.full((3, 3), 1.0 / 3.0)
    D = np.zeros((3, 3))
    D[0, 1] = 1.0
    assert q.curvature(D) == 0.0
    g = q.gradient(P)
    assert g[0, 1] > 0
    assert q.exact_step(P, D, g) == -np.inf  # was 0
    assert q.exact_step(P, -D, g) == np.inf
    # the spread of equal moves of every copy is 0 (k = 2: the mean is exact)
    F = _Penalized(None, 2, 3, 1.0)
    x = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    d = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    gx = F.gradient(x)
    slope = float(gx @ d)
    assert slope == 0.0
    assert F.exact_step(x, d, gx) == 0.0  # was +inf
    gx_up = gx + 0.1  # a gradient with <g, d> > 0 along the flat direction
    assert F.exact_step(x, d, gx_up) == -np.inf  # was +inf
    assert F.exact_step(x, d, -gx_up) == np.inf
    s = SSVMDualObjective(0.5, 2)
    e = np.array([0.0, 0.0, 1.0])  # along l only: no curvature
    assert s.exact_step(np.zeros(3), e, s.gradient(np.zeros(3))) == np.inf
    assert s.exact_step(np.zeros(3), -e, s.gradient(np.zeros(3))) == -np.inf


def test_qap_concave_line_and_the_rounding_guard():
    """Negative curvature on the non-convex QAP: an unbounded line (+inf for slope <= 0,
    -inf above); a curvature within rounding of 0 (relative to <|A|, |D| |B| |D|^T>)
    counts as 0."""
    A = np.array([[0.0, 1.0], [1.0, 0.0]])
    B = np.array([[0.0, -1.0], [-1.0, 0.0]])
    q = QAPObjective(A, B)
    P = np.eye(2)
    D = np.array([[1.0, 0.0], [0.0, 0.0]])  # <A, D B D^T> = A_00 B_00 = 0
    D2 = np.array([[1.0, 0.0], [0.0, 1.0]])  # <A, B> = -2 < 0
    g = q.gradient(P)
    assert q.curvature(D2) == -2.0
    slope = float(np.vdot(g, D2))
    assert q.exact_step(P, D2, g) == (np.inf if slope <= 0 else -np.inf)
    assert q.exact_step(P, D, g) == line_minimizer(float(np.vdot(g, D)), 0.0, 1.0, False, "q")
    # a curvature of rounding size: D B D^T is all ones, so a = <A, 1> = sum(A) = 0.5, of
    # which the 1 is lost to rounding beside 1e16: a comes out -0.5
    A = np.array([[1e16, 1.0], [-1e16, -0.5]])
    q = QAPObjective(A, np.ones((2, 2)))
    D = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert np.array_equal(D @ np.ones((2, 2)) @ D.T, np.ones((2, 2)))
    assert q.curvature(D) == -0.5
    assert q.exact_step(P, D, np.zeros((2, 2))) == 0.0  # a flat line; +inf as a < 0 made it


def test_the_convex_rule_is_the_cores():
    with pytest.raises(NonConvexError, match="f: negative curvature"):
        line_minimizer(-1.0, -1.0, 1.0, True, "f")
    assert line_minimizer(-1.0, -1.0, 1.0, False, "f") == np.inf
    assert line_minimizer(-2.0, 4.0, 0.0, True, "f") == 0.5
    assert line_minimizer(1.0, 1e-20, 1.0, True, "f") == -np.inf  # rounding: flat

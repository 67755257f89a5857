"""Away-step Frank-Wolfe's choice between its two directions, on crafted one-iteration
runs: it moves along ``x - a`` only when the away gap ``max_{a active} <g, a> - <g, x>``
exceeds the Frank-Wolfe gap ``<g, x> - min_v <g, v>``.

On the simplex of R^3, start at ``x = w_0 e_0 + w_1 e_1`` (both atoms active) with
``f(x) = L/2 ||x - y||^2``; ``y`` is chosen so that the gradient at the start is
``g = c`` (``y = x - c / L``).  The gaps, the direction and the exact step
``-<g, d> / (L ||d||^2)`` are then hand-computable.
"""

import numpy as np
import pytest

from frankwolfe import (
    ActiveSet,
    FunctionObjective,
    ProbabilitySimplex,
    away_step_frank_wolfe,
)

L = 4.0
E = np.eye(3)


def _one_iteration(w, c):
    x = np.array([w[0], w[1], 0.0])
    c = np.asarray(c, dtype=float)
    y = x - c / L
    f = FunctionObjective(lambda z: 0.5 * L * (z - y) @ (z - y), lambda z: L * (z - y),
                          exact_step=lambda z, d, g: -(g @ d) / (L * (d @ d)))
    lmo = ProbabilitySimplex(dim=3)
    start = ActiveSet([lmo(-E[0]), lmo(-E[1])], list(w))
    res = away_step_frank_wolfe(f, lmo, x0=start, max_iter=1, step_size="exact", tol=0)
    assert res.nit == 1
    return x, res


def _gaps(x, c):
    """(Frank-Wolfe gap, away gap, FW vertex, away atom) at ``x`` with gradient ``c``."""
    gx = float(c @ x)
    active = np.flatnonzero(x > 0)
    a = int(active[np.argmax(c[active])])
    return gx - c.min(), c[a] - gx, int(np.argmin(c)), a


def test_frank_wolfe_step_when_its_gap_is_larger():
    # x = (1/2, 1/2, 0), g = (0, 1, -0.2): FW gap 0.7 > away gap 0.5 (> 0.7 / 2)
    w, c = (0.5, 0.5), np.array([0.0, 1.0, -0.2])
    x, res = _one_iteration(w, c)
    gap, away_gap, v, _ = _gaps(x, c)
    assert (gap, away_gap) == pytest.approx((0.7, 0.5), abs=1e-15)
    assert away_gap < gap < 2 * away_gap  # a test of gap >= 2 away_gap would step away
    assert res.extra["n_fw_steps"] == 1
    assert res.extra["n_away_steps"] == 0
    d = E[v] - x
    gamma = gap / (L * (d @ d))  # -<g, v - x> = gap; 0.7 / 6, below gamma_max = 1
    assert gamma < 1.0
    np.testing.assert_allclose(res.x, x + gamma * d, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.x, [0.5 - 0.35 / 6, 0.5 - 0.35 / 6, 0.7 / 6], rtol=1e-12)


def test_away_step_when_its_gap_is_larger():
    # x = (0.6, 0.4, 0), g = (0, 1, 0.2): away gap 0.6 > FW gap 0.4 (> 0.6 / 2); away
    # atom e_1
    w, c = (0.6, 0.4), np.array([0.0, 1.0, 0.2])
    x, res = _one_iteration(w, c)
    gap, away_gap, _, a = _gaps(x, c)
    assert (gap, away_gap, a) == pytest.approx((0.4, 0.6, 1), abs=1e-15)
    assert gap < away_gap < 2 * gap  # a test of 2 gap >= away_gap would step forward
    assert res.extra["n_away_steps"] == 1
    assert res.extra["n_fw_steps"] == 0
    assert res.extra["n_drop_steps"] == 0
    d = x - E[a]
    gamma = away_gap / (L * (d @ d))  # -<g, x - a> = away gap; 0.6 / 2.88 < gamma_max = 2/3
    assert gamma < w[1] / (1.0 - w[1])
    np.testing.assert_allclose(res.x, x + gamma * d, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.x, [0.725, 0.275, 0.0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.active_set.weights, [0.725, 0.275], rtol=1e-12)

"""The saddle solver's ``err.result`` has the layout of a normal result: ``x`` the
minimizing player's point (its shape), ``extra["y"]`` the maximizing player's; it was
the joint point ``(x, y)`` stacked, without ``extra["y"]``.  Interrupted and time-limit
results, which return normally, have that layout too."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.monitor import INTERRUPTS

M = np.array([[1.0, -1.0, 0.5], [-0.3, 0.8, -1.0], [0.2, -0.5, 0.4]])


class _Sad(fw.SaddleObjective):
    """``x M y + |x|^2/2 - |y|^2/2`` whose ``gradient_x`` raises at call ``boom``."""

    shape_x = (3,)
    shape_y = (3,)

    def __init__(self, boom=-1):
        self.calls = 0
        self.boom = boom

    def value(self, x, y):
        return float(x @ M @ y + 0.5 * x @ x - 0.5 * y @ y)

    def gradient_x(self, x, y):
        self.calls += 1
        if self.calls == self.boom:
            raise RuntimeError("boom")
        return M @ y + x

    def gradient_y(self, x, y):
        return M.T @ x - y


class _Bilinear(fw.BilinearObjective):
    """A bilinear game whose evaluation from the tracked products raises at call ``boom``."""

    def __init__(self, M, boom):
        super().__init__(M)
        self.calls = 0
        self.boom = boom

    def from_products(self, x, y, My, MTx):
        self.calls += 1
        if self.calls == self.boom:
            raise RuntimeError("boom")
        return super().from_products(x, y, My, MTx)


def _domains(nx=3, ny=3):
    return [fw.ProbabilitySimplex(dim=nx), fw.ProbabilitySimplex(dim=ny)]


def _check_layout(res, nx=3, ny=3):
    assert res.x.shape == (nx,)
    assert res.extra["y"].shape == (ny,)
    # both players' points lie on their simplices (not halves of a joint point)
    assert np.isclose(res.x.sum(), 1.0) and np.isclose(res.extra["y"].sum(), 1.0)


@pytest.mark.parametrize("away", [False, True])
def test_error_result_has_the_players_layout(away):
    with pytest.raises(RuntimeError, match="boom") as info:
        fw.minimize(_Sad(boom=4), _domains(), method="saddle", max_iter=30, away=away)
    res = info.value.result
    assert res.status == "error"
    _check_layout(res)
    assert res.dual_bound == res.extra.get("value_lower", -np.inf)
    # the same layout as a run that ends normally
    normal = fw.minimize(_Sad(), _domains(), method="saddle", max_iter=30, away=away)
    _check_layout(normal)
    assert set(normal.extra) >= {"y"}


def test_error_result_of_the_corrective_variant():
    rps = np.array([[0.0, 1.0, -1.0, 0.5], [-1.0, 0.0, 1.0, 0.2], [1.0, -1.0, 0.0, -0.3]])
    with pytest.raises(RuntimeError, match="boom") as info:
        fw.saddle_point_frank_wolfe(_Bilinear(rps, boom=3), *_domains(3, 4),
                                    corrective=True, max_iter=30)
    _check_layout(info.value.result, 3, 4)


def test_second_ctrl_c_result_has_the_players_layout():
    def callback(state):
        if state.k == 3:
            # as after two SIGINTs: the driver aborts at once with the run so far
            INTERRUPTS.hits = 2
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        fw.minimize(_Sad(), _domains(), method="saddle", max_iter=30, tol=0.0,
                    callback=callback)
    res = info.value.result
    assert res.status == "interrupted"
    _check_layout(res)


def test_interrupted_and_time_limit_results_have_the_players_layout():
    def callback(state):
        if state.k == 3:
            raise KeyboardInterrupt  # one Ctrl-C's worth: the run ends, interrupted

    res = fw.minimize(_Sad(), _domains(), method="saddle", max_iter=30, tol=0.0,
                      callback=callback)
    assert res.status == "interrupted"
    _check_layout(res)
    res = fw.minimize(_Sad(), _domains(), method="saddle", max_iter=10**7, tol=0.0,
                      time_limit=0.05)
    assert res.status == "time_limit"
    _check_layout(res)

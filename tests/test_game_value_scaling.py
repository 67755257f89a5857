"""Matrix games at any finite scale: game_value and the restricted games of fully
corrective SP-FW solve ``M / max |M|`` (the value is positively homogeneous) where HiGHS
refused entries of 1e300 ("Model error") and dropped those below 1e-9; and an inner
solver's failure is a FrankWolfeError naming the restricted game."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import frankwolfe as fw
from frankwolfe import RestrictedGameError
from frankwolfe.algorithms import restricted_game
from frankwolfe.algorithms.restricted_game import solve_matrix_game

_GAME = np.array([[3.0, -1.0], [-2.0, 1.0]])  # by hand: x = (3, 4)/7, y = (2, 5)/7, value 1/7


def _reference_value(M):
    """The row player's LP, max_j (x^T M)_j minimized, written out here with scipy."""
    m, n = M.shape
    res = linprog(np.r_[np.zeros(m), 1.0], A_ub=np.c_[M.T, -np.ones(n)], b_ub=np.zeros(n),
                  A_eq=np.r_[np.ones(m), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * m + [(None, None)], method="highs")
    assert res.status == 0
    return res.fun


def test_huge_finite_game_has_value_zero_by_symmetry():
    """A RuntimeError ("linprog failed: Model error") on finite input."""
    v, x, y = fw.game_value(np.array([[1e308, -1e308], [-1e308, 1e308]]))
    assert v == 0.0
    assert np.allclose(x, 0.5, rtol=0, atol=1e-12) and np.allclose(y, 0.5, rtol=0, atol=1e-12)


@pytest.mark.parametrize("c", [1.0, 1e300, 1e-12, 1e-300])
def test_value_scales_with_the_matrix(c):
    v, x, y = fw.game_value(c * _GAME)
    assert v == pytest.approx(c / 7, rel=1e-12)
    assert np.allclose(x, [3 / 7, 4 / 7], rtol=0, atol=1e-12)
    assert np.allclose(y, [2 / 7, 5 / 7], rtol=0, atol=1e-12)


def test_random_game_agrees_with_linprog():
    rng = np.random.default_rng(5)
    M = rng.standard_normal((6, 9)) * 3.0
    v, x, y = fw.game_value(M)
    assert v == pytest.approx(_reference_value(M), rel=1e-9, abs=1e-12)
    # the strategies certify it: x holds every column to v, y every row to v
    assert (x @ M).max() <= v + 1e-9 and (M @ y).min() >= v - 1e-9


def test_restricted_matrix_game_at_any_scale():
    for c in (1.0, 1e300, 1e-200):
        u, v, value = solve_matrix_game(c * _GAME)
        assert value == pytest.approx(c / 7, rel=1e-10)
        assert np.allclose(u, [3 / 7, 4 / 7], atol=1e-10)
        assert np.allclose(v, [2 / 7, 5 / 7], atol=1e-10)
    with pytest.raises(RestrictedGameError, match="not all finite"):
        solve_matrix_game(np.array([[np.inf, 0.0], [0.0, 1.0]]))


def test_corrective_saddle_on_a_huge_game():
    """The restricted game's LP met HiGHS' "Model error" (a RuntimeError) on M of 1e300."""
    c = 1e300
    res = fw.saddle_point_frank_wolfe(fw.BilinearObjective(c * _GAME), fw.ProbabilitySimplex(),
                                      fw.ProbabilitySimplex(), corrective=True, tol=0.0,
                                      max_iter=20)
    assert np.allclose(res.x, [3 / 7, 4 / 7], atol=1e-10)
    assert np.allclose(res.extra["y"], [2 / 7, 5 / 7], atol=1e-10)
    assert res.fun == pytest.approx(c / 7, rel=1e-10)


def test_inner_solver_failure_is_a_named_project_error(monkeypatch):
    """A user reaches the restricted solvers through corrective=True: their failures are
    a FrankWolfeError (and still a RuntimeError) saying which game and solver failed."""
    cp = pytest.importorskip("cvxpy")

    class Failing(cp.Problem):
        def solve(self, *args, **kwargs):
            raise cp.error.SolverError("numerical trouble")

    monkeypatch.setattr(cp, "Problem", Failing)
    L = fw.BilinearObjective(_GAME, mu_x=1.0, mu_y=1.0)
    with pytest.raises(RestrictedGameError, match=r"restricted quadratic game of the \d+ x "
                                                  r"\d+ active vertices: cvxpy's solver "
                                                  r".*numerical trouble.*cvxpy_solver") as info:
        fw.saddle_point_frank_wolfe(L, fw.ProbabilitySimplex(), fw.ProbabilitySimplex(),
                                    corrective=True)
    assert isinstance(info.value, fw.FrankWolfeError)
    assert isinstance(info.value, RuntimeError)
    assert restricted_game.RestrictedGameError is RestrictedGameError

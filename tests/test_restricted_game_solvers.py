"""The restricted-game solvers against closed forms."""
import numpy as np
from lmo_reference import project_simplex

from frankwolfe.algorithms.restricted_game import (
    gram_factor,
    polish_quadratic_game,
    solve_quadratic_game,
)


def test_quadratic_game_with_a_fixed_row_player_is_a_simplex_projection():
    # p = 1: v = argmax h.v - mu/2 |v|^2 on the simplex = projection of h / mu
    h = np.array([0.3, 0.1, -0.2, 0.25])
    for mu in (0.5, 2.0):
        u, v, _ = solve_quadratic_game(h[None, :], None, np.eye(4), 0.0, mu)
        assert np.allclose(u, [1.0])
        assert np.allclose(v, project_simplex(h / mu), atol=1e-7)


def test_polish_rejects_a_support_that_misses_a_better_column():
    # true v = projection of (1, 1) = (1/2, 1/2); the guess (1, 0) is no saddle point
    H = np.array([[1.0, 1.0]])
    out = polish_quadratic_game(H, np.eye(1), np.eye(2), 0.0, 1.0, np.array([1.0]),
                                np.array([1.0, 0.0]))
    assert out is None or np.allclose(out[1], [0.5, 0.5], atol=1e-12)


def test_gram_factor_reproduces_a_graded_spectrum():
    rng = np.random.default_rng(1)
    Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    K = Q @ np.diag([10.0, 1.0, 0.05, 1e-3, 0.0]) @ Q.T
    R = gram_factor(K)
    assert np.allclose(R.T @ R, K, atol=1e-10)

"""The gradient estimators against closed-form gradients of a squared-loss linear
model."""
import numpy as np

from frankwolfe.algorithms.gradient_estimators import SAG, MiniBatch, Momentum
from frankwolfe.objectives.finite_sum import LinearModelLoss

rng0 = np.random.default_rng(3)
A, y = rng0.standard_normal((6, 4)), rng0.standard_normal(6)


def full_gradient(x):  # (1/n) sum_i (a_i.x - y_i) a_i
    return A.T @ (A @ x - y) / A.shape[0]


def test_sag_is_the_full_gradient_after_each_epoch_at_a_fixed_point():
    f = LinearModelLoss(A, y, loss="squared")
    x = np.array([0.3, -0.2, 0.5, 0.1])
    est = SAG(batch_size=2)
    est.start(f, x, np.random.default_rng(0))
    for k in range(6):  # two epochs of 3 batches of 2 (random reshuffling)
        g = est.estimate(k, x)
        if k % 3 == 2:
            assert np.allclose(g, full_gradient(x), atol=1e-12), k


def test_momentum_averages_with_the_documented_weights():
    f = LinearModelLoss(A, y, loss="squared")
    x0, x1 = np.zeros(4), np.array([1.0, -1.0, 0.5, 0.0])
    est = Momentum(batch_size=6)  # full batches: each g_k is the full gradient
    est.start(f, x0, np.random.default_rng(0))
    est.estimate(0, x0)
    d = est.estimate(1, x1)
    rho = 4.0 / 9.0 ** (2.0 / 3.0)
    assert np.allclose(d, (1 - rho) * full_gradient(x0) + rho * full_gradient(x1), atol=1e-12)


def test_minibatch_default_schedule_grows_by_one():
    f = LinearModelLoss(A, y, loss="squared")
    est = MiniBatch()
    est.start(f, np.zeros(4), np.random.default_rng(0))
    for k in range(4):
        est.estimate(k, np.zeros(4))
    assert est.n_sample_gradients == 1 + 2 + 3 + 4

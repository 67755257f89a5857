"""Three mends, each pinned by tests that failed before it.

* ``Adaptive``'s first estimate of ``L`` (a gradient difference's norm over the step)
  squared the entries of the difference: on ``f`` scaled by ``2**-540`` they
  underflowed, the estimate fell back to ``L = 1`` and the run stalled at steps of
  about ``1e-162``; on a huge ``f`` they overflowed.  The docs promise that ``f``
  scaled by a power of two gives the same steps, as the other value-reading rules do.
* ``stochastic_frank_wolfe`` on a ``FiniteSum`` without values failed at its first
  certificate with a bare ``NotImplementedError``; every certificate reports ``f``,
  so such an objective is refused at the start, by name, with the cure.
* Random reshuffling: a batch that the rest of an epoch could not fill drew a new
  order and dropped that rest (``n = 10``, batches of 3: a sample skipped per epoch),
  though the docs say each epoch visits every sample once.
"""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.gradient_estimators import SAG, SVRF, MiniBatch, Momentum

# ---------------------------------------------------------------------------------------
# Adaptive: power-of-two scalings of f give the same steps


class _Scaled(fw.Objective):
    """``2**p * ||A x - b||^2 / 2``: scaling by a power of two rounds nothing, so a
    scale-free rule takes bit for bit the steps of ``p = 0``."""

    def __init__(self, A: np.ndarray, b: np.ndarray, p: int, convex: bool = True) -> None:
        self.A, self.b, self.s = A, b, 2.0 ** p
        self.convex = convex
        self.shape = (A.shape[1],)

    def value(self, x):
        r = self.A @ x - self.b
        return self.s * (0.5 * float(r @ r))

    def gradient(self, x):
        return self.s * (self.A.T @ (self.A @ x - self.b))


def _problem():
    rng = np.random.default_rng(3)
    return rng.standard_normal((30, 20)), rng.standard_normal(30)


def _adaptive_run(objective, method="fw"):
    return fw.minimize(objective, fw.L1Ball(1.0, dim=20), method=method,
                       step_size="adaptive", max_iter=100, tol=0.0)


@pytest.mark.parametrize("convex", [True, False])
@pytest.mark.parametrize("method", ["fw", "pairwise"])
@pytest.mark.parametrize("p", [-600, -300, -40, 40, 300, 600])
def test_adaptive_takes_the_same_steps_on_f_scaled_by_a_power_of_two(p, method, convex):
    A, b = _problem()
    base = _adaptive_run(_Scaled(A, b, 0, convex), method)
    run = _adaptive_run(_Scaled(A, b, p, convex), method)
    steps, base_steps = run.history["step_size"], base.history["step_size"]
    assert run.nit == base.nit
    # NaN-aware: the first row of the history has no step
    assert np.array_equal(steps, base_steps, equal_nan=True), \
        np.nanmax(np.abs(steps - base_steps))
    assert np.array_equal(run.x, base.x)
    assert run.fun == 2.0 ** p * base.fun and run.gap == 2.0 ** p * base.gap


@pytest.mark.parametrize("e", [-270, -150, 150, 270])
def test_adaptive_on_scaled_least_squares_makes_the_unscaled_progress(e):
    """The audit's example: ``LeastSquares(s A, s b)``, ``f`` scaled by ``s**2``."""
    A, b = _problem()
    base = _adaptive_run(fw.LeastSquares(A, b))
    s = 2.0 ** e
    run = _adaptive_run(fw.LeastSquares(s * A, s * b))
    np.testing.assert_allclose(run.history["step_size"][1:], base.history["step_size"][1:],
                               rtol=1e-12, atol=0.0)
    fun = run.fun / s ** 2
    assert base.fun * (1 - 1e-12) <= fun <= base.fun * (1 + 1e-12), (fun, base.fun)
    # the unscaled run's progress, far below f(x0) (the stalled run kept f near f(x0))
    assert 7.0 <= base.fun <= 8.0, base.fun


def test_adaptive_first_estimate_of_a_zero_gradient_change_stays_one():
    """A linear objective: the gradient does not change, and the estimate is the
    fallback ``L = 1`` (the scaling must not divide by a zero largest entry)."""
    c = np.linspace(-1.0, 1.0, 20)
    f = fw.FunctionObjective(lambda x: float(c @ x), lambda x: c.copy(), shape=(20,))
    rule = fw.step_size.Adaptive()
    res = fw.frank_wolfe(f, fw.L1Ball(1.0, dim=20), step_size=rule, max_iter=3, tol=0.0)
    assert res.fun == -1.0


# ---------------------------------------------------------------------------------------
# stochastic_frank_wolfe needs values of f


class _NoValues(fw.FiniteSum):
    n_samples = 20
    shape = (3,)

    def __init__(self) -> None:
        self.calls = 0

    def batch_gradient(self, x, indices):
        self.calls += 1
        return x - 0.1


class _FullValueOnly(_NoValues):
    def value(self, x):
        return 0.5 * float((x - 0.1) @ (x - 0.1))


class _BatchValue(_NoValues):
    def batch_value(self, x, indices):
        return 0.5 * float((x - 0.1) @ (x - 0.1))


@pytest.mark.parametrize("call", ["sfw", "minimize"])
def test_sfw_refuses_a_finite_sum_without_values_at_the_start(call):
    f = _NoValues()
    with pytest.raises(TypeError, match=r"`objective` \(_NoValues\) gives no values of f.*"
                                         r"certificate.*batch_value\(x, indices\).*value\(x\)"):
        if call == "sfw":
            fw.stochastic_frank_wolfe(f, fw.L1Ball(1.0, dim=3), max_iter=20)
        else:
            fw.minimize(f, fw.L1Ball(1.0, dim=3), method="sfw", max_iter=20)
    assert f.calls == 0  # refused before any work


@pytest.mark.parametrize("cls", [_FullValueOnly, _BatchValue])
def test_sfw_runs_on_a_finite_sum_with_values(cls):
    res = fw.stochastic_frank_wolfe(cls(), fw.L1Ball(1.0, dim=3), max_iter=200,
                                    random_state=0)
    # the minimizer 0.1 * ones lies inside the ball, where f = 0
    assert 0.0 <= res.fun <= 1e-2, res.fun
    assert -1e-12 <= res.gap <= 0.5, res.gap


# ---------------------------------------------------------------------------------------
# Random reshuffling: every epoch visits every sample once


class _Recorder(fw.FiniteSum):
    """Records the batches the estimator asks; the full value and gradient (of the
    certificates and SVRF's snapshots) are its own, not batches."""

    def __init__(self, n: int) -> None:
        self.n_samples = n
        self.shape = (3,)
        self.Y = np.random.default_rng(n).standard_normal((n, 3))
        self.seen: list[np.ndarray] = []

    def batch_gradient(self, x, indices):
        self.seen.append(np.array(indices, copy=True))
        return x - self.Y[indices].mean(axis=0)

    def batch_value(self, x, indices):
        return 0.5 * float(np.mean(np.sum((x - self.Y[indices]) ** 2, axis=1)))

    def gradient(self, x):
        return x - self.Y.mean(axis=0)


class _SagRecorder(fw.LinearModelLoss):
    def __init__(self, n: int) -> None:
        rng = np.random.default_rng(n)
        super().__init__(rng.standard_normal((n, 3)), np.sign(rng.standard_normal(n)) + 0.0)
        self.seen: list[np.ndarray] = []

    def sample_derivatives(self, x, indices):
        self.seen.append(np.array(indices, copy=True))
        return super().sample_derivatives(x, indices)


def _estimator(kind: str, b: int):
    return {"momentum": lambda: Momentum(b), "minibatch": lambda: MiniBatch(b),
            "svrf": lambda: SVRF(b, epoch=1000), "sag": lambda: SAG(b),
            "growing": lambda: MiniBatch()}[kind]()


def _batches(kind: str, n: int, b: int, seed, iters: int = 40) -> list[np.ndarray]:
    f = _SagRecorder(n) if kind == "sag" else _Recorder(n)
    fw.stochastic_frank_wolfe(f, fw.L1Ball(1.0, dim=3), estimator=_estimator(kind, b),
                              max_iter=iters, tol=0.0, gap_every=0, random_state=seed)
    # SVRF asks each batch twice, at the iterate and at the snapshot
    return f.seen[::2] if kind == "svrf" else f.seen


CASES = [(n, b) for n in (7, 10, 13) for b in sorted({1, 2, 3, 4, 6, n - 1, n})]


@pytest.mark.parametrize("kind", ["momentum", "minibatch", "svrf", "sag"])
@pytest.mark.parametrize("n, b", CASES)
def test_every_epoch_of_batches_visits_every_sample_once(kind, n, b):
    batches = _batches(kind, n, b, seed=1)
    assert all(len(batch) == min(b, n) for batch in batches)
    _check_epochs(batches, n)


def test_growing_batches_straddling_epochs_visit_every_sample_once():
    """``MiniBatch()``'s sizes ``1, 2, 3, ...`` (capped at ``n``): batches cross epochs
    at every offset, and batches of all ``n`` samples come mid-epoch."""
    for n in (5, 7, 10):
        batches = _batches("growing", n, 0, seed=2, iters=30)
        assert [len(batch) for batch in batches[:n + 2]] == \
            [min(k + 1, n) for k in range(n + 2)]
        _check_epochs(batches, n)


def _check_epochs(batches: list[np.ndarray], n: int) -> None:
    for batch in batches:  # SAG counts a repeated sample's change twice
        assert np.unique(batch).size == batch.size, batch
    flat = np.concatenate(batches)
    epochs = flat.size // n
    assert epochs >= 3, flat.size
    for e in range(epochs):
        block = np.sort(flat[e * n:(e + 1) * n])
        assert np.array_equal(block, np.arange(n)), (e, flat[e * n:(e + 1) * n])


@pytest.mark.parametrize("n, b", [(10, 3), (13, 4), (12, 5)])
def test_batches_are_reproducible_with_random_state(n, b):
    first = np.concatenate(_batches("momentum", n, b, seed=7))
    again = np.concatenate(_batches("momentum", n, b, seed=np.random.default_rng(7)))
    other = np.concatenate(_batches("momentum", n, b, seed=8))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("n, b", [(10, 1), (10, 2), (10, 5), (12, 3), (12, 4), (12, 6)])
def test_a_batch_size_dividing_n_keeps_its_batches(n, b):
    """The epochs are the generator's successive permutations, cut into batches in
    order: the batches (and runs) that these seeds gave before the mend."""
    flat = np.concatenate(_batches("momentum", n, b, seed=4))
    rng = np.random.default_rng(4)
    epochs = -(-flat.size // n)
    expected = np.concatenate([rng.permutation(n) for _ in range(epochs)])[:flat.size]
    assert np.array_equal(flat, expected)


def test_a_batch_of_all_samples_at_an_epoch_end_draws_nothing():
    batches = _batches("momentum", 8, 8, seed=0, iters=5)
    assert all(np.array_equal(batch, np.arange(8)) for batch in batches)

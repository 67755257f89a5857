"""Joint mini-batch rounds: block-step count and the average over the iterates.

With one round per pass (batch_size = n) the iterate is x_0 = y_0 for the first n block
steps, y_1 for the next n, ...; so after P passes the uniform average over x_0..x_{Pn}
is (n * (y_0 + ... + y_{P-1}) + y_P) / (P n + 1), computed here from the per-pass
iterates recorded by the callback (closed form, not the library's average)."""
import numpy as np
import pytest

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)


def _problem(n=12, m=3, seed=4):
    rng = np.random.default_rng(seed)
    dim = n * m
    B = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    Q = B @ B.T + np.eye(dim)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    return QuadraticObjective(Q, -Q @ y), dom


@pytest.mark.parametrize("tau", [4, 12])
def test_joint_rounds_count_every_block_step(tau):
    f, dom = _problem()
    n, passes = 12, 5
    res = block_coordinate_frank_wolfe(f, dom, block_order="perm", batch_size=tau,
                                       round_step="joint", step_size="exact", tol=0.0,
                                       max_iter=passes, random_state=2)
    assert res.extra["round_step"] == "joint"
    assert res.extra["n_block_steps"] == passes * n


def test_joint_round_uniform_average_is_the_mean_of_the_iterates():
    f, dom = _problem()
    n, passes = 12, 5
    x_start = np.concatenate([np.eye(3)[0]] * n)  # each block's LMO(ones) vertex
    res = block_coordinate_frank_wolfe(f, dom, x_start.copy(), block_order="perm",
                                       batch_size=n, round_step="joint",
                                       step_size="exact", tol=0.0, max_iter=passes,
                                       averaging="uniform", random_state=2)
    # the per-pass iterates: rerun pass by pass (deterministic seed, same rng stream)
    ys = [x_start]
    for p in range(1, passes + 1):
        r = block_coordinate_frank_wolfe(f, dom, x_start.copy(), block_order="perm",
                                         batch_size=n, round_step="joint",
                                         step_size="exact", tol=0.0, max_iter=p,
                                         random_state=2)
        ys.append(np.asarray(r.extra["x_last"]))
    np.testing.assert_allclose(ys[-1], res.extra["x_last"], rtol=0, atol=1e-12)
    expected = (n * np.sum(ys[:-1], axis=0) + ys[-1]) / (passes * n + 1)
    np.testing.assert_allclose(res.extra["x_average"], expected, rtol=0, atol=1e-12)

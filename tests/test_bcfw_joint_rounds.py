"""Joint round steps (``round_step="joint"``, Wang et al.'s mini-batch update): one step
along the summed block directions of a round.  Checked against a transcription of the
update on the SSVM dual (a Minkowski sum), against serial BCFW for rounds of one block,
and against cvxpy's optimum."""

from __future__ import annotations

import numpy as np
import pytest
from test_bcfw import cvxpy_solution, simplices_problem, ssvm_problem

from frankwolfe import block_coordinate_frank_wolfe

N, M = 30, 3


@pytest.fixture(scope="module")
def problem():
    f, dom = simplices_problem(N, M, seed=1)
    return f, dom, cvxpy_solution(f, N, M)


# the runs to the cvxpy optimum on 12 blocks: full rounds (tau = n) are batch FW steps,
# sublinear to tol=1e-7 (1800 iterations on 30 blocks, 350-800 on 12); a step 2.5 times
# the line search's fails them alike
N_OPT = 12


@pytest.fixture(scope="module")
def opt_problem():
    f, dom = simplices_problem(N_OPT, M, seed=1)
    return f, dom, cvxpy_solution(f, N_OPT, M)


def test_joint_rounds_are_the_mini_batch_update_on_the_ssvm_dual():
    f, dom, x0, (psis, losses, lam) = ssvm_problem(n=20, d=25, seed=3)
    n, d = len(psis), psis[0].shape[1]
    tau, passes = 7, 4
    res = block_coordinate_frank_wolfe(f, dom, x0, block_order="perm", batch_size=tau,
                                       round_step="joint", step_size="exact", tol=0.0,
                                       max_iter=passes, random_state=9)
    assert res.extra["round_step"] == "joint" and res.extra["engine"] == "python"
    # by hand: per block (w_i, l_i); a round's oracles at one w, one exact step for all
    rng = np.random.default_rng(9)
    W, L = np.zeros((n, d)), np.zeros(n)
    for _ in range(passes):
        order = rng.permutation(n)
        for a in range(0, n, tau):
            batch = order[a:a + tau]
            w = W.sum(axis=0)
            ys = [int(np.argmax(losses[i] - psis[i] @ w)) for i in batch]
            DW = sum(psis[i][y] / (lam * n) - W[i] for i, y in zip(batch, ys))
            DL = sum(losses[i][y] / n - L[i] for i, y in zip(batch, ys))
            slope = lam * w @ DW - DL
            gamma = min(-slope / (lam * DW @ DW), 1.0) if slope < 0 else 0.0
            for i, y in zip(batch, ys):
                W[i] += gamma * (psis[i][y] / (lam * n) - W[i])
                L[i] += gamma * (losses[i][y] / n - L[i])
    np.testing.assert_allclose(res.x[:d], W.sum(axis=0), rtol=0, atol=1e-12)
    assert res.x[d] == pytest.approx(L.sum(), rel=0, abs=1e-12)


@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_joint_rounds_of_one_block_are_serial_bcfw(problem, sampling):
    f, dom, _ = problem
    kw = dict(block_order=sampling, max_iter=6, tol=0.0, gap_every=3, random_state=5,
              averaging="weighted")
    serial = block_coordinate_frank_wolfe(f, dom, compiled=False, **kw)
    joint = block_coordinate_frank_wolfe(f, dom, batch_size=1, round_step="joint", **kw)
    np.testing.assert_array_equal(joint.x, serial.x)
    np.testing.assert_array_equal(joint.extra["x_last"], serial.extra["x_last"])
    np.testing.assert_array_equal(joint.history["gap"], serial.history["gap"])
    assert joint.n_oracle_calls == serial.n_oracle_calls


@pytest.mark.parametrize("tau", [4, N_OPT])
@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_joint_rounds_reach_the_cvxpy_optimum_and_never_increase_f(opt_problem, tau, sampling):
    f, dom, x_ref = opt_problem
    f_star = f.value(x_ref)
    res = block_coordinate_frank_wolfe(f, dom, batch_size=tau, block_order=sampling,
                                       round_step="joint", tol=1e-7, max_iter=5000,
                                       gap_every=5, random_state=0)
    assert res.success, res.message
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    assert np.abs(res.x - x_ref).max() < 1e-3
    blocks = res.x.reshape(N_OPT, M)
    assert blocks.min() >= -1e-15
    np.testing.assert_allclose(blocks.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    fun = res.history["fun"]
    assert np.all(np.diff(fun) <= 1e-12 * np.abs(fun[:-1]).max())


def test_a_block_drawn_twice_in_a_round_moves_once(problem):
    """Uniform sampling draws with replacement: rounds of all n blocks repeat some, and
    a repeated block moving twice by gamma could leave its simplex."""
    f, dom, _ = problem
    res = block_coordinate_frank_wolfe(f, dom, batch_size=N, round_step="joint", tol=0.0,
                                       max_iter=30, random_state=3)
    blocks = res.extra["x_last"].reshape(N, M)
    assert blocks.min() >= -1e-15
    np.testing.assert_allclose(blocks.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert res.n_oracle_calls >= 30 * N  # every draw asked its oracle


def test_joint_round_step_errors_name_the_argument(problem):
    f, dom, _ = problem
    with pytest.raises(ValueError, match="round_step must be one of"):
        block_coordinate_frank_wolfe(f, dom, batch_size=4, round_step="together")
    with pytest.raises(ValueError, match="round_step='joint' is how the blocks"):
        block_coordinate_frank_wolfe(f, dom, round_step="joint")
    with pytest.raises(ValueError, match="needs block_step='fw'"):
        block_coordinate_frank_wolfe(f, dom, batch_size=4, round_step="joint",
                                     block_step="pairwise")


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("tau", [4, 16])
def test_compiled_joint_rounds_take_the_python_joint_steps(ids, tau):
    """Joint rounds in the core's driver (the chain's round kernels: ``load``, fused
    directions summed over the round) against the Python joint rounds at the batch
    oracle's atoms: the same vertices and one step size each round, so the same iterates
    up to rounding, with averaging; 2 threads change nothing; the certified gap brackets
    the optimum a long serial run certifies."""
    from test_ssvm_batch_oracle import _chain, serial_optimum, three_engines

    from frankwolfe.applications.structured_svm.dual import SSVMDual

    model, X, Y = _chain(ids)
    dom = SSVMDual(model, X, Y, 0.05)
    f = dom.dual_objective()
    # the two engines sum a round's directions in different orders (1e-17 apart); the
    # attribute-id data meet a tie in a decoding on the uniform draws of this seed, which
    # such a difference breaks either way, so they draw permutations
    order = "perm" if ids else "uniform"  # uniform draws repeat blocks within rounds
    kw = dict(batch_size=tau, block_order=order, round_step="joint", max_iter=6,
              tol=0.0, gap_every=3, random_state=4, averaging="weighted")
    python, compiled, threads = three_engines(f, dom, **kw)
    assert "compiled joint rounds" in compiled.extra["engine_reason"]
    for res in (compiled, threads):
        assert res.extra["round_step"] == "joint"
        assert res.n_oracle_calls == python.n_oracle_calls
        np.testing.assert_allclose(res.x, python.x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.extra["x_last"], python.extra["x_last"], rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(res.history["gap"], python.history["gap"], rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_array_equal(threads.x, compiled.x)
    f_star, serial_gap = serial_optimum(ids)  # the long serial run, once per ids
    assert -serial_gap - 1e-9 <= compiled.fun - f_star <= compiled.gap + 1e-9


def test_compiled_joint_rounds_without_moved_at_refresh_block_by_block(monkeypatch):
    """A domain whose round kernels have no ``moved_at`` (but whose blocks have
    ``moved``): the driver writes each block's direction again after the step to call
    ``moved``, and the rounds are those of the Python engine as with ``moved_at``."""
    from test_ssvm_batch_oracle import _chain, three_engines

    from frankwolfe.applications.structured_svm.dual import SSVMDual
    from frankwolfe.applications.structured_svm.models.chain import rounds

    monkeypatch.setattr(rounds, "chain_moved_at", None)
    model, X, Y = _chain(True)  # attribute ids: the feature-major gradient copy in use
    dom = SSVMDual(model, X, Y, 0.05)
    f = dom.dual_objective()
    kw = dict(batch_size=4, block_order="perm", round_step="joint", max_iter=4, tol=0.0,
              gap_every=2, random_state=4)
    python, compiled, _ = three_engines(f, dom, **kw)
    assert "compiled joint rounds" in compiled.extra["engine_reason"]
    np.testing.assert_allclose(compiled.x, python.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(compiled.history["gap"], python.history["gap"], rtol=1e-12,
                               atol=1e-12)

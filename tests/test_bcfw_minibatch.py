"""Mini-batch BCFW (Wang et al., ICML 2016): batch_size=1 is serial BCFW, iterate for
iterate; larger batches reach the cvxpy optimum; executors agree; faults keep the iterate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_bcfw import cvxpy_solution, simplices_problem

from frankwolfe import (
    Executor,
    ExecutorError,
    SerialExecutor,
    ThreadExecutor,
    block_coordinate_frank_wolfe,
    debug,
)
from frankwolfe.algorithms.block_orders import GapSampling

N, M = 30, 3


@pytest.fixture(scope="module")
def problem():
    f, dom = simplices_problem(N, M, seed=1)
    return f, dom, cvxpy_solution(f, N, M)


@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_batch_size_one_is_serial_bcfw_python_engine(problem, sampling):
    f, dom, _ = problem
    kw = dict(block_order=sampling, max_iter=6, tol=0.0, gap_every=3, random_state=5,
              averaging="weighted", compiled=False)
    serial = block_coordinate_frank_wolfe(f, dom, **kw)
    batched = block_coordinate_frank_wolfe(f, dom, batch_size=1, **kw)
    assert batched.extra["rounds"] == 6 * N and batched.extra["batch_size"] == 1
    np.testing.assert_array_equal(batched.x, serial.x)
    np.testing.assert_array_equal(batched.extra["x_last"], serial.extra["x_last"])
    np.testing.assert_array_equal(batched.history["gap"], serial.history["gap"])
    assert batched.n_oracle_calls == serial.n_oracle_calls


@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_batch_size_one_is_serial_bcfw_compiled_engine(problem, sampling):
    f, dom, _ = problem
    kw = dict(block_order=sampling, max_iter=6, tol=0.0, random_state=5)
    with debug(False):  # the compiled pass does not run in debug mode
        serial = block_coordinate_frank_wolfe(f, dom, **kw)
        batched = block_coordinate_frank_wolfe(f, dom, batch_size=1, **kw)
    assert serial.extra["engine"] == batched.extra["engine"] == "compiled"
    np.testing.assert_array_equal(batched.x, serial.x)
    # and the Python rounds of one block agree with the compiled pass up to rounding
    python = block_coordinate_frank_wolfe(f, dom, batch_size=1, compiled=False, **kw)
    np.testing.assert_allclose(python.x, serial.x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("tau", [4, 16, N])
@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_mini_batches_reach_the_cvxpy_optimum(problem, tau, sampling):
    f, dom, x_ref = problem
    f_star = f.value(x_ref)
    res = block_coordinate_frank_wolfe(f, dom, batch_size=tau, block_order=sampling, tol=1e-7,
                                       max_iter=3000, random_state=0)
    assert res.success, res.message
    assert res.extra["engine"] == "python"
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    assert np.abs(res.x - x_ref).max() < 1e-3
    assert res.extra["rounds"] == pytest.approx(res.nit * N / tau, abs=res.nit)


def test_threads_give_the_serial_executor_iterates(problem):
    f, dom, _ = problem
    kw = dict(batch_size=8, block_order="gap", max_iter=5, tol=0.0, random_state=2)
    one = block_coordinate_frank_wolfe(f, dom, executor=SerialExecutor(), **kw)
    two = block_coordinate_frank_wolfe(f, dom, n_jobs=2, **kw)
    assert two.extra["executor"] == "ThreadExecutor(n_jobs=2)"
    np.testing.assert_array_equal(one.x, two.x)
    assert one.gap == two.gap


class _Dying(Executor):
    """Answers ``rounds`` rounds, then loses its 'cluster'."""

    def __init__(self, rounds: int) -> None:
        self.left = rounds

    def map(self, which, directions):
        if self.left == 0:
            raise ExecutorError("the cluster went away")
        self.left -= 1
        return [self.blocks[i](d) for i, d in zip(which, directions)]


def test_lost_executor_raises_with_the_last_good_iterate(problem):
    f, dom, _ = problem
    kw = dict(batch_size=5, max_iter=4, tol=0.0, random_state=1)
    with pytest.raises(ExecutorError, match="went away") as info:
        block_coordinate_frank_wolfe(f, dom, executor=_Dying(7), **kw)
    res = info.value.result
    assert not res.success
    # 7 rounds of 5 block steps happened: the same as a run that stops there
    ref = block_coordinate_frank_wolfe(f, dom, executor=_Dying(10 ** 9), **kw)
    assert res.extra["rounds"] == 7 and res.extra["n_block_steps"] == 35
    assert np.all(np.isfinite(res.x))
    blocks = np.asarray(res.x).reshape(N, M)
    np.testing.assert_allclose(blocks.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert ref.extra["rounds"] == 4 * N // 5


class _Recording(Executor):
    """Answers in this thread and records each round's blocks."""

    def __init__(self) -> None:
        self.rounds: list[list[int]] = []

    def map(self, which, directions):
        self.rounds.append(list(which))
        return [self.blocks[i](d) for i, d in zip(which, directions)]


class _OwnGapSampling(GapSampling):
    """A subclass with a ``next`` of its own: its rounds are drawn in Python."""

    def next(self, u):
        return super().next(u)


@pytest.mark.parametrize("order", ["gap", _OwnGapSampling(0.0)])
def test_gap_sampling_rounds_have_distinct_blocks_at_degree_zero(problem, order):
    """``gap_degree=0`` weighs every block 1 (``0 ** 0``, a zero gap too): a block drawn
    into a round is still held out of the rest of it (it weighed 1 there, and rounds
    drew blocks twice), in the compiled draws and in a subclass's Python ones."""
    f, dom, _ = problem
    ex = _Recording()
    block_coordinate_frank_wolfe(f, dom, batch_size=10, block_order=order, gap_degree=0.0,
                                 executor=ex, max_iter=8, tol=0.0, random_state=0)
    rounds = [r for r in ex.rounds if len(r) != N]  # not the certificates' calls
    assert len(rounds) == 8 * N // 10
    assert all(len(set(r)) == len(r) == 10 for r in rounds)
    assert set(rounds[0] + rounds[1] + rounds[2]) == set(range(N))  # the first pass


class _CountingHold(GapSampling):
    """Gap sampling with a ``hold`` of its own: its rounds are drawn in Python, so that
    every hold-out goes through it."""

    held = 0

    def hold(self, i):
        type(self).held += 1
        super().hold(i)


def test_an_order_holding_out_its_own_way_is_asked_for_every_block(problem):
    f, dom, _ = problem
    _CountingHold.held = 0
    block_coordinate_frank_wolfe(f, dom, batch_size=10, block_order=_CountingHold(),
                                 executor=_Recording(), max_iter=2, tol=0.0, random_state=0)
    assert _CountingHold.held == 2 * N


def test_mini_batch_exact_steps_on_least_squares_reach_the_cvxpy_optimum():
    """Least squares over simplices, rounds of 3 (the Python engine), exact steps: a
    block at its own optimum has a gap within rounding of 0, and the objective's exact
    step, summing <g, d> its own way, came out about -1e-17.  That was refused as
    negative curvature (NonConvexError after about 100 passes); it is a zero step."""
    import cvxpy as cp

    from frankwolfe import LeastSquares, ProbabilitySimplex, ProductDomain

    rng = np.random.default_rng(5)
    nb, m = 6, 4
    B = rng.standard_normal((nb * m + 2, nb * m))
    b = rng.standard_normal(nb * m + 2)
    f = LeastSquares(B, b)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(nb)])
    res = block_coordinate_frank_wolfe(f, dom, batch_size=3, tol=0.0, max_iter=400,
                                       random_state=2)
    assert res.extra["engine"] == "python" and res.nit == 400
    x = cp.Variable(nb * m)
    cons = [x >= 0] + [cp.sum(x[k * m:(k + 1) * m]) == 1 for k in range(nb)]
    f_star = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(B @ x - b)), cons).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert -1e-8 <= res.fun - f_star <= res.gap + 1e-8


def test_bad_mini_batch_input(problem):
    f, dom, _ = problem
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got 0"):
        block_coordinate_frank_wolfe(f, dom, batch_size=0)
    # int()'s own errors, or 1: a wrong value, or a wrong type
    for bad, error in ((float("nan"), ValueError), (float("inf"), ValueError),
                       ("4", TypeError), (True, TypeError)):
        with pytest.raises(error, match=rf"batch_size must be a positive integer, got "
                                        rf"{bad!r}"):
            block_coordinate_frank_wolfe(f, dom, batch_size=bad)
    with pytest.raises(TypeError, match="n_jobs must be an integer .* got True"):
        block_coordinate_frank_wolfe(f, dom, n_jobs=True)  # ran serially
    with pytest.raises(ValueError,
                       match=r"n_jobs must be a positive integer or -1 \(all cores\), got 0"):
        block_coordinate_frank_wolfe(f, dom, n_jobs=0)
    with pytest.raises(ValueError, match="cache=True does not combine with mini-batches"):
        block_coordinate_frank_wolfe(f, dom, batch_size=4, cache=True)
    with pytest.raises(TypeError, match="executor must be an Executor, a dask"):
        block_coordinate_frank_wolfe(f, dom, executor="threads")
    with debug(False), pytest.raises(ValueError, match="compiled=True but .* mini-batch rounds"):
        block_coordinate_frank_wolfe(f, dom, batch_size=4, compiled=True)
    assert repr(ThreadExecutor(3)) == "ThreadExecutor(n_jobs=3)"
    # a round is at most a pass, and runs ahead at most the rest of it (10**30 asked numpy
    # for an array of that size, staleness 10**15 for 14 PiB)
    for kw in (dict(batch_size=10**30), dict(batch_size=2, staleness=10**15)):
        res = block_coordinate_frank_wolfe(f, dom, n_jobs=2, max_iter=3, **kw)
        assert np.isfinite(res.gap)
    # n_jobs beside an executor was ignored (n_jobs=8 ran on the executor's 2 threads)
    for n_jobs in (8, 0):
        with pytest.raises(ValueError, match=r"give `executor` or `n_jobs`, not both"):
            block_coordinate_frank_wolfe(f, dom, batch_size=4, executor=ThreadExecutor(2),
                                         n_jobs=n_jobs)


def test_structured_svm_batch_size_one_is_serial_and_threads_agree():
    from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

    X, Y = make_chain(40, n_states=3, n_features=4, random_state=1)
    # max_passes counts the certificate passes too: 10 passes of steps and 2 certificates
    kw = dict(tol=0.0, max_passes=12, gap_every=5, random_state=0, compiled=False)
    serial = StructuredSVM(ChainModel(3, 4), **kw).fit(X, Y)
    one = StructuredSVM(ChainModel(3, 4), batch_size=1, **kw).fit(X, Y)
    np.testing.assert_array_equal(one.w_, serial.w_)
    np.testing.assert_array_equal(one.history_["rounds"], serial.history_["rounds"])
    assert list(serial.history_["rounds"]) == [200, 400]  # a serial block step is a round
    # 2 threads: the same oracle answers, so the same iterates as 1 thread
    t1 = StructuredSVM(ChainModel(3, 4), batch_size=8, n_jobs=1, **kw).fit(X, Y)
    t2 = StructuredSVM(ChainModel(3, 4), batch_size=8, n_jobs=2, **kw).fit(X, Y)
    np.testing.assert_array_equal(t1.w_, t2.w_)
    assert list(t2.history_["rounds"]) == [25, 50]
    with pytest.raises(ValueError, match="batch_size and executor serve solver='bcfw'"):
        StructuredSVM(ChainModel(3, 4), solver="fw", batch_size=4).fit(X, Y)


def test_threads_without_rounds_to_share_are_named(problem):
    """n_jobs=2 without batch_size ran rounds of one block, one oracle at a time on the
    pool (36000 rounds, slower than the serial pass), without a word."""
    f, dom, _ = problem
    with pytest.warns(UserWarning, match=r"n_jobs=2 but rounds of one block"):
        block_coordinate_frank_wolfe(f, dom, n_jobs=2, max_iter=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        block_coordinate_frank_wolfe(f, dom, n_jobs=2, batch_size=4, max_iter=2, random_state=0)
        block_coordinate_frank_wolfe(f, dom, n_jobs=2, staleness=1, max_iter=2, random_state=0)

"""Time budgets (issue 23): ``time_limit`` is kept within 10% plus one step, and used,
by every method and estimator.  A slow oracle (it sleeps) makes the steps' cost known
whatever the machine's load, so the tolerances can be two-sided."""

from __future__ import annotations

import gc
import time
import warnings

import numpy as np
import pytest

import frankwolfe as fw

#: seconds an oracle call sleeps
SLEEP = 0.01
#: the budget of a run
LIMIT = 0.6
#: what a loaded two-core machine may add (scheduling, the closing certificate's sleep)
SLACK = 0.5


class SlowSimplex(fw.ProbabilitySimplex):
    """The probability simplex whose oracle takes at least ``SLEEP`` seconds."""

    def extreme_point(self, direction):
        time.sleep(SLEEP)
        return super().extreme_point(direction)


def _problem(n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((2 * n, n))
    return fw.LeastSquares(A, A @ rng.dirichlet(np.ones(n)) + 0.1 * rng.standard_normal(2 * n))


def _timed(run):
    # a full collection in a long-lived test process (a suite's worker) can take a good
    # part of a second and would count as a step: collect first, and keep the survivors
    # out of the collections the run triggers
    gc.collect()
    gc.freeze()
    try:
        t0 = time.perf_counter()
        res = run()
        return res, time.perf_counter() - t0
    finally:
        gc.unfreeze()


def _check_budget(res, wall: float, step: float, limit: float = LIMIT) -> None:
    """Stopped by the budget, within 10% + one step (+ slack), and after using at least
    half of it; ``loop_time`` (the iterations) within the budget + one step."""
    assert res.status == "time_limit", res.message
    assert 0.5 * limit <= wall <= 1.1 * limit + step + SLACK, wall
    assert res.time <= wall + 1e-6
    loop = res.extra["loop_time"]
    assert 0.5 * limit <= loop <= limit + step + 0.1, loop
    assert np.isfinite(res.gap)


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "rafw", "fcfw", "cfw", "bfw"])
def test_single_domain_methods_keep_the_time_limit(method):
    f = _problem()
    # compile time counts against the limit (documented): compiled before timing
    fw.minimize(f, fw.ProbabilitySimplex(dim=30), method=method, max_iter=3)
    res, wall = _timed(lambda: fw.minimize(f, SlowSimplex(dim=30), method=method, tol=0.0,
                                           max_iter=10**6, time_limit=LIMIT))
    _check_budget(res, wall, step=2 * SLEEP)


def test_slow_iterations_do_not_start_past_the_budget():
    """Iterations of 0.25 s (a slow callback) and a 0.6 s budget: the run stops at the
    iteration that would end past it, not one iteration later."""
    f = _problem()

    def slow(state):
        time.sleep(0.25)

    res, wall = _timed(lambda: fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=30), tol=0.0,
                                              max_iter=100, time_limit=LIMIT, callback=slow))
    assert res.status == "time_limit"
    assert wall <= LIMIT + 0.25 + SLACK
    assert res.extra["loop_time"] <= LIMIT + 0.05
    assert res.nit >= 1


@pytest.mark.parametrize("kw", [
    dict(),
    dict(block_order="gap", block_step="pairwise", cache=True),
    dict(batch_size=5),
    dict(batch_size=5, n_jobs=2),
], ids=["uniform", "gap-pairwise-cache", "minibatch", "minibatch-threads"])
def test_bcfw_uses_and_keeps_the_time_limit(kw):
    """A BCFW pass here costs 40 slow oracle calls (0.4 s); the budget is kept within a
    few block steps, and used (mini-batch and gap-sampling runs used to stop at a
    quarter to two thirds of it)."""
    n_blocks = 40
    rng = np.random.default_rng(1)
    y = rng.random(3 * n_blocks)
    f = fw.QuadraticObjective(np.eye(3 * n_blocks), -y)
    dom = fw.ProductDomain([SlowSimplex(dim=3) for _ in range(n_blocks)])
    limit = 1.5
    # compile time counts against the limit (documented): compiled (or loaded from numba's
    # cache: 0.5-1 s on a loaded machine) before timing
    fw.block_coordinate_frank_wolfe(
        f, fw.ProductDomain([fw.ProbabilitySimplex(dim=3) for _ in range(n_blocks)]),
        max_iter=2, random_state=0, gap_every=2, **kw)
    res, wall = _timed(lambda: fw.block_coordinate_frank_wolfe(
        f, dom, tol=0.0, max_iter=10**6, time_limit=limit, random_state=0, gap_every=2,
        **kw))
    # one step: a round of 5 oracle calls; the closing certificate is kept within it
    assert res.status == "time_limit", res.message
    assert 0.6 * limit <= wall <= 1.1 * limit + 5 * SLEEP + SLACK, wall
    assert res.time <= wall + 1e-6
    assert np.isfinite(res.gap)


def test_compiled_pairwise_keeps_the_time_limit():
    """Was: 0.5 s requested, 19.7 s taken (the clock read between chunks of steps that
    grew costlier); chunks now follow the measured cost of a step.

    Pairwise steps (``corrective=False``): a step costs microseconds, the same each time,
    so the chunk sizing alone decides how far past the budget the run goes.  (A
    corrective round on this problem's faces of ~300 vertices costs 0.1-4 s under load:
    one step under the rule, which would make a wall-time bound measure the machine.)"""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((300, 600))
    f = fw.LeastSquares(A, rng.standard_normal(300))
    dom = fw.L1Ball(5.0, dim=600)
    fw.compiled_pairwise_frank_wolfe(f, dom, max_iter=5, corrective=False)  # compiled first
    res, wall = _timed(lambda: fw.compiled_pairwise_frank_wolfe(
        f, dom, tol=0.0, max_iter=10**9, time_limit=LIMIT, corrective=False))
    assert res.status == "time_limit", res.message
    assert 0.5 * LIMIT <= wall <= 1.1 * LIMIT + SLACK, wall
    assert res.time <= wall + 1e-6
    # the steps' chunks stopped within a few milliseconds of the budget
    assert 0.5 * LIMIT <= res.extra["loop_time"] <= LIMIT + 0.1, res.extra["loop_time"]
    # chunks of many steps were sized, not single steps: most of the loop's time went
    # to the steps (0.97 measured; single steps of a few microseconds: 0.49, the loop's
    # Python and the kernel's dispatch between steps taking the rest; at -O0 a step
    # costs more than a chunk's 2 ms, so single steps are right there).  A ratio of two
    # wall times of one run, so another process's load slows both: against a step cost
    # estimated beforehand, make test-min's -O0 build under the other test worker's
    # load once made 0.19 of the estimated rate
    assert res.extra["step_seconds"] >= 0.8 * res.extra["loop_time"], res.extra


def test_structured_svm_fit_keeps_the_time_limit():
    """The fit's set-up counts; the solver stops within a pass and the fit returns soon
    after (its final evaluation on top)."""
    from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

    X, Y = make_chain(300, n_states=4, n_features=6, length=(4, 9), random_state=0)
    # the fit's set-up is short beside LIMIT: the loop keeps its 0.4 * limit under load,
    # and the wall bound keeps its 1 s of slack
    limit = LIMIT
    for solver in ("bcfw", "cutting_plane", "ssg"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # compiled before timing (a few examples compile the same kernels)
            StructuredSVM(ChainModel(4, 6), solver=solver, max_passes=2).fit(X[:20], Y[:20])
            svm, wall = _timed(lambda s=solver: StructuredSVM(
                ChainModel(4, 6), solver=s, tol=0.0, max_passes=10**5, time_limit=limit,
                random_state=0).fit(X, Y))
        res = svm.result_
        assert res.status == "time_limit", (solver, res.message)
        assert wall <= 1.1 * limit + SLACK + 0.5, (solver, wall)
        assert res.extra["loop_time"] >= 0.5 * limit * 0.8, (solver, res.extra["loop_time"])


def test_qap_time_limit_and_its_reproducible_iteration_budget():
    from frankwolfe.applications.matching import solve_qap

    rng = np.random.default_rng(0)
    a, b = rng.random((20, 20)), rng.random((20, 20))
    solve_qap(a, b, max_iter=2, local_search="tabu", tabu_iter=10)  # compiled first
    res, wall = _timed(lambda: solve_qap(a, b, time_limit=LIMIT, random_state=0))
    assert 0.9 * LIMIT <= wall <= 1.1 * LIMIT + SLACK
    # the iteration budget is reproducible (the time limit is not: it depends on load)
    kw = dict(local_search="tabu", tabu_iter=500, restarts=1, max_iter=10, random_state=3)
    r1, r2 = solve_qap(a, b, **kw), solve_qap(a, b, **kw)
    assert r1.fun == r2.fun and np.array_equal(r1.permutation, r2.permutation)
    assert r1.tabu_iter == 500


def test_block_corrective_keeps_time_for_its_closing_certificate():
    """``fully_corrective_frank_wolfe(blocks=True, blocks_per_step=m)``: an iteration asks
    m block oracles, the closing certificate all of them (1 s here).  The driver keeps
    the certificate's time (``Engine.closing_seconds``) inside the 1 s budget; before, the
    iterations ran to the budget and the certificate came on top, after a start (an
    oracle call per block, 1 s) the clock did not count (5 s for 3)."""
    n_blocks = 100
    rng = np.random.default_rng(3)
    y = rng.random(3 * n_blocks)
    f = fw.QuadraticObjective(np.eye(3 * n_blocks), -y)
    dom = fw.ProductDomain([SlowSimplex(dim=3) for _ in range(n_blocks)])
    limit = 3.0
    # compiled before timing (the corrective QP's kernels)
    fw.fully_corrective_frank_wolfe(
        f, fw.ProductDomain([fw.ProbabilitySimplex(dim=3) for _ in range(n_blocks)]),
        blocks=True, blocks_per_step=5, max_iter=3)

    def run():
        return fw.fully_corrective_frank_wolfe(f, dom, blocks=True, blocks_per_step=5,
                                               tol=0.0, max_iter=10**6, time_limit=limit)

    res, wall = _timed(run)
    # one step: 5 oracle calls and a corrective solve
    assert res.status == "time_limit", res.message
    assert 0.5 * limit <= wall <= 1.1 * limit + 5 * SLEEP + SLACK, wall
    assert res.time <= wall + 1e-6
    assert res.nit >= 1
    assert np.isfinite(res.gap)
    # the iterations stopped early enough for the certificate (n_blocks oracle calls)
    assert res.extra["loop_time"] <= limit - 0.5 * n_blocks * SLEEP, res.extra["loop_time"]


def test_clock_reads_follow_the_step_time_within_their_bounds():
    """The read interval of a pass (core BCFW pass and the SSVM solvers share it): about
    ``seconds`` of steps between reads, never more than ``most`` steps, the first after
    ``first``."""
    from frankwolfe.monitor import ClockReads

    reads = ClockReads(first=2, most=50, seconds=0.02)
    assert not reads.due(1) and reads.due(2)
    time.sleep(0.02)  # 2 steps of >= 10 ms: 0.02 s of steps is at most 2 of them
    reads.read(2)
    assert 1 <= reads.every <= 2 and reads.next == 2 + reads.every
    fast = ClockReads(first=1, most=50, seconds=10.0)
    fast.read(1)  # a step of microseconds: the cap decides
    assert fast.every == 50
    fast.start()
    assert fast.next == 50 and not fast.due(49)

"""Asynchronous mini-batch BCFW (``staleness``): the oracles of the next rounds run while
a round's steps are applied.  It reaches the cvxpy optimum and the serial structured
SVM's certified gap, counts its delays exactly, does not depend on the threads' timing
(the same iterates on every executor), and refuses bad input by name."""

from __future__ import annotations

import numpy as np
import pytest
from test_bcfw import cvxpy_solution, simplices_problem

from frankwolfe import SerialExecutor, ThreadExecutor, block_coordinate_frank_wolfe, debug
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain
from frankwolfe.applications.structured_svm.dual import SSVMDual
from frankwolfe.applications.structured_svm.oracles import batch_primal

N, M = 32, 3


@pytest.fixture(scope="module")
def problem():
    f, dom = simplices_problem(N, M, seed=1)
    return f, dom, cvxpy_solution(f, N, M)


@pytest.mark.parametrize("staleness", [1, 3])
@pytest.mark.parametrize("sampling", ["uniform", "perm", "gap"])
def test_asynchronous_rounds_reach_the_cvxpy_optimum(problem, sampling, staleness):
    f, dom, x_ref = problem
    f_star = f.value(x_ref)
    res = block_coordinate_frank_wolfe(f, dom, batch_size=4, n_jobs=2, staleness=staleness,
                                       block_order=sampling, tol=1e-7, max_iter=3000,
                                       random_state=0)
    assert res.success, res.message
    assert res.extra["staleness"] == staleness and res.extra["max_delay"] > 0
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    assert np.abs(res.x - x_ref).max() < 1e-3


@pytest.mark.parametrize("staleness", [1, 2])
def test_delays_are_counted_step_by_step(problem, staleness):
    """A pass of P rounds of tau blocks in a permutation order: its first round is answered
    at the pass's start; the next ``staleness`` ones were launched then too, and every
    later one before the steps of the ``staleness`` rounds before it."""
    f, dom, _ = problem
    tau, passes = 8, 3
    res = block_coordinate_frank_wolfe(f, dom, batch_size=tau, executor=SerialExecutor(),
                                       staleness=staleness, block_order="perm",
                                       max_iter=passes, tol=0.0, random_state=0,
                                       compiled=False)
    rounds = N // tau
    want = np.zeros((staleness + 1) * tau, dtype=np.int64)
    for r in range(rounds):  # round r waits for min(r, staleness) rounds' steps
        lag = min(r, staleness) * tau
        want[lag:lag + tau] += passes
    np.testing.assert_array_equal(res.extra["delays"], want)
    assert res.extra["rounds"] == passes * rounds
    assert res.extra["mean_delay"] == pytest.approx(
        float(np.arange(want.size) @ want) / want.sum(), rel=1e-12)


def test_asynchronous_rounds_do_not_depend_on_the_threads(problem):
    """Each round's point is taken at a fixed place in the sequence (after the answers of
    the round before, before its steps): one thread or two, the same iterates."""
    f, dom, _ = problem
    kw = dict(batch_size=5, staleness=2, block_order="gap", max_iter=8, tol=0.0,
              random_state=4)
    one = block_coordinate_frank_wolfe(f, dom, executor=SerialExecutor(), **kw)
    two = block_coordinate_frank_wolfe(f, dom, executor=ThreadExecutor(2), **kw)
    np.testing.assert_array_equal(one.x, two.x)
    np.testing.assert_array_equal(one.extra["delays"], two.extra["delays"])
    assert one.gap == two.gap


def _chain_problem(n: int = 80):
    X, Y = make_chain(n, n_states=4, n_features=6, random_state=3)
    return ChainModel(4, 6), X, Y


@pytest.mark.parametrize("sampling", ["uniform", "gap"])
def test_compiled_asynchronous_rounds_are_deterministic_and_honest(sampling):
    """Compiled chain rounds (stored vertices, compiled steps) with oracles run ahead:
    uniform sampling draws blocks of the round in flight (asked late), gap sampling holds
    them out.  The iterates do not depend on the threads, and the certified gap bounds the
    primal computed independently of the run (per-example loss-augmented decoding)."""
    model, X, Y = _chain_problem()
    lam = 1.0 / len(X)
    dom = SSVMDual(model, X, Y, lam)
    f = dom.dual_objective()
    kw = dict(batch_size=16, staleness=1, block_order=sampling, max_iter=6, tol=0.0,
              gap_every=3, random_state=1)
    with debug(False):  # the compiled engine does not run in debug mode
        one = block_coordinate_frank_wolfe(f, dom, executor=SerialExecutor(), **kw)
        two = block_coordinate_frank_wolfe(f, dom, n_jobs=2, **kw)
    assert one.extra["engine"] == two.extra["engine"] == "compiled"
    np.testing.assert_array_equal(one.x, two.x)
    assert one.gap == two.gap and one.extra["max_delay"] >= 16
    w = one.x[:-1]
    primal = batch_primal(model, X, Y, w, lam)["primal"]
    dual = -one.fun
    # weak duality, and the certificate: primal - dual <= gap (both with rounding room)
    assert dual <= primal + 1e-12
    assert primal - dual <= one.gap * (1 + 1e-9) + 1e-12


def test_asynchronous_structured_svm_reaches_the_serial_certified_gap():
    """StructuredSVM with staleness: the same target gap as serial BCFW, and the two
    certificates agree (each dual within the other's primal)."""
    model, X, Y = _chain_problem(120)
    kw = dict(lam=0.1, tol=0.01, max_passes=400, gap_every=5, random_state=0)
    serial = StructuredSVM(model, **kw).fit(X, Y)
    async_ = StructuredSVM(model, batch_size=15, n_jobs=2, staleness=1, **kw).fit(X, Y)
    for svm in (serial, async_):
        assert svm.result_.success and svm.result_.gap <= 0.01
    assert async_.result_.extra["staleness"] == 1 and async_.result_.extra["max_delay"] > 0
    d_s, d_a = -serial.result_.fun, -async_.result_.fun
    p_s, p_a = serial.primal(X, Y), async_.primal(X, Y)
    assert d_a <= p_s + 1e-12 and d_s <= p_a + 1e-12
    assert abs(d_a - d_s) <= serial.result_.gap + async_.result_.gap + 1e-12


def test_bad_staleness_is_named(problem):
    f, dom, _ = problem
    for bad, error in ((-1, ValueError), (1.5, ValueError), ("1", TypeError), (True, TypeError)):
        with pytest.raises(error, match="staleness must be a non-negative integer"):
            block_coordinate_frank_wolfe(f, dom, batch_size=4, staleness=bad)
    with pytest.raises(ValueError, match=r"staleness=2 runs oracles ahead .* batch_size"):
        block_coordinate_frank_wolfe(f, dom, staleness=2)
    model, X, Y = _chain_problem(10)
    with pytest.raises(ValueError, match=r"staleness=1 runs the decodings .* batch_size"):
        StructuredSVM(model, staleness=1).fit(X, Y)
    with pytest.raises(ValueError, match="staleness"):
        StructuredSVM(model, batch_size=4, staleness=-1).fit(X, Y)

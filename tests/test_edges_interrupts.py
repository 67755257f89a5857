"""Ctrl-C during a run (issue 23): the first SIGINT ends the run at the end of the
current iteration with ``status="interrupted"`` and a certified iterate, the second
aborts at once.  Each case runs in a subprocess that receives a real SIGINT."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.monitor import INTERRUPTS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# The child prints READY once a run holds the SIGINT handler (and has run a while), then
# prints its result as JSON with a gap computed independently at the returned point.
_PRELUDE = """
import json, signal, sys, threading, time, warnings
# a user's process: Ctrl-C raises KeyboardInterrupt (a child of a pytest-xdist worker
# may inherit SIGINT ignored, and the run then rightly leaves the handler alone)
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import frankwolfe as fw
from frankwolfe.monitor import INTERRUPTS

def _ready():
    while not INTERRUPTS._installed:
        time.sleep(0.01)
    gate = globals().get("GATE")  # a child that says when it is ready itself
    if gate is not None:
        gate.wait(120)
    time.sleep(0.3)
    print("READY", flush=True)

threading.Thread(target=_ready, daemon=True).start()
"""

_FRANK_WOLFE = """
rng = np.random.default_rng(0)
A = rng.standard_normal((40, 30)); b = rng.standard_normal(40)

class Slow(fw.ProbabilitySimplex):
    def extreme_point(self, direction):
        time.sleep(0.002)
        return super().extreme_point(direction)

res = fw.frank_wolfe(fw.LeastSquares(A, b), Slow(dim=30), tol=0.0, max_iter=10**6,
                     time_limit=60)
x = res.x
g = A.T @ (A @ x - b)
out = dict(status=str(res.status), nit=res.nit, gap=res.gap, fun=res.fun,
           true_gap=float(g @ x - g.min()), true_fun=float(0.5 * np.sum((A @ x - b) ** 2)),
           feasible=bool(abs(x.sum() - 1) < 1e-9 and x.min() >= -1e-12))
print(json.dumps(out), flush=True)
"""

_BCFW = """
rng = np.random.default_rng(1)
n_blocks, m = 300, 4
y = rng.random(n_blocks * m)
f = fw.QuadraticObjective(np.eye(n_blocks * m), -y)

class Slow(fw.ProbabilitySimplex):
    def extreme_point(self, direction):
        time.sleep(0.0005)
        return super().extreme_point(direction)

dom = fw.ProductDomain([Slow(dim=m) for _ in range(n_blocks)])
res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, max_iter=10**6, time_limit=60,
                                      random_state=0, gap_every=10**6)
x = res.x
g = (x - y).reshape(n_blocks, m)
xb = x.reshape(n_blocks, m)
out = dict(status=str(res.status), nit=res.nit, gap=res.gap, fun=res.fun,
           true_gap=float(np.sum(g * xb) - g.min(axis=1).sum()),
           true_fun=float(0.5 * x @ x - y @ x),
           feasible=bool(np.all(np.abs(xb.sum(axis=1) - 1) < 1e-9) and x.min() >= -1e-12))
print(json.dumps(out), flush=True)
"""

_SSVM = """
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

X, Y = make_chain(400, n_states=4, n_features=6, length=(4, 9), random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    # argv[2] "lock_free": lock-free passes on 2 threads (the threads' shares folded)
    kw = dict(round_step="lock_free", n_jobs=2) if sys.argv[2:] == ["lock_free"] else {}
    svm = StructuredSVM(ChainModel(4, 6), solver=sys.argv[1], tol=0.0, max_passes=10**6,
                        time_limit=60, random_state=0, **kw).fit(X, Y)
res = svm.result_
dual = -res.fun
primal = svm.primal(X, Y)
out = dict(status=str(res.status), nit=res.nit, gap=res.gap, fun=res.fun,
           true_gap=float(primal - dual), true_fun=None, feasible=True,
           warned=[str(w.message) for w in caught if "interrupted" in str(w.message)],
           fitted=bool(np.all(np.isfinite(svm.w_))))
print(json.dumps(out), flush=True)
"""


def _run(body: str, tmp_path, *args: str, signals: int = 1) -> subprocess.CompletedProcess:
    """Run the child, send ``signals`` SIGINTs once it is READY; its completed process."""
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(_PRELUDE) + textwrap.dedent(body))
    # from an empty folder: the checkout's top-level `applications` is not importable
    proc = subprocess.Popen([sys.executable, str(script), *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        # READY within 60 s (a cold numba cache compiles first), read with a deadline
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout=60):
                proc.kill()
                pytest.fail(f"the child printed nothing within 60 s: {proc.communicate()[1]}")
        line = proc.stdout.readline()
        assert line.strip() == "READY", (line, proc.stderr.read() if proc.stderr else "")
        for i in range(signals):
            if i:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        # the rest of the run, the closing certificate and the child's checks: on a cold
        # cache (CI's minimum-version suite compiles at -O0 and cannot cache every kernel)
        # this compiles for tens of seconds; the deadline only guards against a hang
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _result(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _check_certified(out: dict, started: bool = True) -> None:
    assert out["status"] == "interrupted"
    assert out["feasible"]
    assert out["nit"] > 0 or not started
    assert np.isfinite(out["gap"])
    # the reported gap is the gap at the returned point, computed independently
    assert out["gap"] == pytest.approx(out["true_gap"], rel=1e-7, abs=1e-9)
    if out["true_fun"] is not None:  # (the SSVM's gap is primal - dual: checked above)
        assert out["fun"] == pytest.approx(out["true_fun"], rel=1e-9, abs=1e-9)


def test_ctrl_c_during_frank_wolfe_returns_the_certified_iterate(tmp_path):
    _check_certified(_result(_run(_FRANK_WOLFE, tmp_path)))


def test_ctrl_c_during_bcfw_returns_the_certified_iterate(tmp_path):
    out = _result(_run(_BCFW, tmp_path))
    _check_certified(out)


@pytest.mark.parametrize("solver", [
    ("bcfw",),
    ("bcfw", "lock_free"),
    # the batch solvers' interrupt path once more (a child process loading the kernels:
    # about 10 CPU-s of CI's budget); the lasso and FW tests here cover the batch loop
    pytest.param(("fw",), marks=pytest.mark.slow)])
def test_ctrl_c_during_structured_svm_fit_keeps_the_weights(tmp_path, solver):
    out = _result(_run(_SSVM, tmp_path, *solver))
    # (on a loaded machine the signal may come before the first iteration ends)
    _check_certified(out, started=False)
    assert out["fitted"]
    assert len(out["warned"]) == 1 and "w_ holds the weights so far" in out["warned"][0]


# covered by test_second_ctrl_c_keeps_the_last_good_iterate_uncertified (FW, two Ctrl-Cs:
# the run raises KeyboardInterrupt, else that child prints no result)
@pytest.mark.slow
def test_second_ctrl_c_aborts_at_once(tmp_path):
    body = _FRANK_WOLFE.replace("time.sleep(0.002)", "time.sleep(0.5)")
    done = _run(body, tmp_path, signals=2)
    assert done.returncode != 0
    assert "KeyboardInterrupt" in done.stderr
    assert "interrupted" not in done.stdout


_BCFW_THREADS_HUNG = """
import os
n, calls = 40, [0]

class Hung(fw.ProbabilitySimplex):
    def extreme_point(self, direction):
        calls[0] += 1
        if calls[0] > n:  # the start's calls answer; every round's oracle then hangs
            time.sleep(60)
        return super().extreme_point(direction)

f = fw.QuadraticObjective(np.eye(4 * n), -np.ones(4 * n) / 3)
dom = fw.ProductDomain([Hung(dim=4) for _ in range(n)])
t0 = time.monotonic()
try:
    fw.block_coordinate_frank_wolfe(f, dom, batch_size=n, n_jobs=2, tol=0.0, max_iter=10**6)
except KeyboardInterrupt:
    print(json.dumps(dict(seconds=time.monotonic() - t0)), flush=True)
    os._exit(0)  # the hung oracle threads would hold the interpreter's exit
"""


# covered by test_second_ctrl_c_with_oracle_threads_in_flight_keeps_the_last_good_iterate
# (the same child and the same `seconds < 30` check, with the result checked too)
@pytest.mark.slow
def test_second_ctrl_c_does_not_wait_for_the_oracle_threads(tmp_path):
    """Threads' oracle chunks in flight (hung here for 60 s): a second Ctrl-C raises at
    once instead of waiting for them to end (the pool was shut down with wait=True)."""
    out = _result(_run(_BCFW_THREADS_HUNG, tmp_path, signals=2))
    assert out["seconds"] < 30, out  # the whole run, start-up included; before: > 60 s


def test_the_handler_is_restored_after_a_run():
    before = signal.getsignal(signal.SIGINT)
    f = fw.QuadraticObjective(np.eye(3), -np.ones(3))
    res = fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), max_iter=5)
    assert res.nit <= 5
    assert signal.getsignal(signal.SIGINT) is before
    assert not INTERRUPTS._installed and INTERRUPTS.hits == 0


def test_a_keyboard_interrupt_raised_in_a_step_returns_the_last_good_iterate():
    """A KeyboardInterrupt that bypasses the flag (a user's own SIGINT handler, or one
    raised by hand) still returns the point from before the step it cut short."""
    y = np.array([0.6, 0.3, 0.1])
    calls = [0]

    def grad(x):
        calls[0] += 1
        if calls[0] == 6:
            raise KeyboardInterrupt
        return x - y

    f = fw.FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), grad)
    res = fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), step_size="agnostic", tol=0.0,
                         max_iter=100)
    assert res.status == "interrupted"
    g = res.x - y
    assert res.gap == pytest.approx(float(g @ res.x - g.min()), rel=1e-12)
    assert abs(res.x.sum() - 1) < 1e-12 and res.x.min() >= 0


@pytest.mark.parametrize("averaging", [None, "weighted"])
def test_a_keyboard_interrupt_from_a_bcfw_callback_returns_a_certified_gap(averaging):
    """BCFW returned gap=nan where the single-domain methods certify the point (the
    interrupt was taken for an oracle failure); checked against the gap by hand."""
    y = np.random.default_rng(0).random(12)
    f = fw.FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y,
                             exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3) for _ in range(4)])

    def stop(state):
        if state.k >= 3:
            raise KeyboardInterrupt

    res = fw.block_coordinate_frank_wolfe(f, dom, max_iter=50, tol=0.0, random_state=0,
                                          averaging=averaging, callback=stop)
    assert res.status == "interrupted"
    g = res.x - y
    gap = sum(float(g[i:i + 3] @ res.x[i:i + 3] - g[i:i + 3].min()) for i in range(0, 12, 3))
    assert gap > 1e-3 and res.gap == pytest.approx(gap, rel=1e-10, abs=1e-14)
    assert res.fun == pytest.approx(f.value(res.x), rel=1e-12)


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "bpcg", "sfw"])
def test_an_interrupted_result_counts_the_iterations_of_the_point_it_returns(method):
    """A KeyboardInterrupt raised by the oracle at the top of an iteration: the point
    returned is an earlier iterate, and ``nit`` is its iteration (the plain run stopped
    at ``max_iter=nit`` returns the same point)."""
    rng = np.random.default_rng(1)
    A, b = rng.standard_normal((40, 30)), rng.standard_normal(40)
    f = fw.QuadraticObjective(A.T @ A, -A.T @ b) if method != "sfw" else \
        fw.LinearModelLoss(A, b, loss="squared")
    calls = [0]

    class Simplex(fw.ProbabilitySimplex):
        def extreme_point(self, g):
            calls[0] += 1
            if calls[0] == 9:
                raise KeyboardInterrupt
            return super().extreme_point(g)

    kw = dict(random_state=0) if method == "sfw" else {}
    res = fw.minimize(f, Simplex(dim=30), method=method, tol=0.0, max_iter=50, **kw)
    assert res.status == "interrupted"
    ref = fw.minimize(f, fw.ProbabilitySimplex(dim=30), method=method, tol=0.0,
                      max_iter=res.nit, **kw)
    assert np.allclose(res.x, ref.x, rtol=0, atol=1e-12)
    assert res.fun == pytest.approx(f.value(res.x), rel=1e-12, abs=1e-12)
    assert f"after {res.nit} iterations" in res.message


def test_the_handler_belongs_to_the_main_threads_runs():
    """A background run open when the main run returned kept the handler (the next
    Ctrl-C was swallowed and stopped the background run); a main run started while a
    background one was open installed none (Ctrl-C cut its iteration short)."""
    import signal
    import threading

    f = fw.QuadraticObjective(np.eye(3), -np.ones(3))
    release, started = threading.Event(), threading.Event()

    def background():
        def hold(state):
            started.set()
            release.wait(30)
            return False
        fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), max_iter=5, callback=hold)

    # Python's own handler, which the runs install theirs over (a process started in the
    # background, as CI's may be, ignores SIGINT: no run installs anything there)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _handler_runs(f, background, started, release)
    finally:
        signal.signal(signal.SIGINT, outer)


def _handler_runs(f, background, started, release):
    import signal
    import threading

    # (1) the background run opens first, inside the main run's callback: the main run's
    # handler is taken down when it returns
    seen = []
    t = threading.Thread(target=background)

    def start_background(state):
        if not t.is_alive():
            t.start()
            assert started.wait(30)
        seen.append(INTERRUPTS._installed)

    fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), max_iter=3, callback=start_background)
    assert seen and all(seen)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # t still open
    # (2) a main run while the background run is open installs the handler
    seen.clear()
    fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), max_iter=3,
                   callback=lambda s: seen.append(INTERRUPTS._installed))
    assert seen and all(seen)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    release.set()
    t.join(30)
    assert not t.is_alive() and INTERRUPTS._open == 0


def test_no_handler_outside_the_main_thread():
    import threading

    seen = []

    def run():
        f = fw.QuadraticObjective(np.eye(3), -np.ones(3))
        seen.append(fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), max_iter=5,
                                   callback=lambda s: seen.append(INTERRUPTS._installed)))

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert seen and not any(v is True for v in seen[:-1])
    assert os.getpid() > 0


_QAP = """
from frankwolfe.applications.matching import solve_qap

rng = np.random.default_rng(0)
a, b = rng.random((40, 40)), rng.random((40, 40))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    res = solve_qap(a, b, max_iter=5, local_search="tabu", tabu_iter=10**9, random_state=0)
p = res.permutation
value = float(np.sum(a * b[np.ix_(p, p)]))
print(json.dumps(dict(perm=sorted(p.tolist()) == list(range(40)), fun=res.fun, value=value,
                      warned=[str(w.message) for w in caught if "interrupted" in str(w.message)],
                      tabu=res.tabu_iter)), flush=True)
"""


def test_ctrl_c_during_solve_qap_returns_the_best_permutation(tmp_path):
    """The tabu search (10**9 iterations asked) stops at Ctrl-C between its chunks."""
    out = _result(_run(_QAP, tmp_path))
    assert out["perm"]
    assert out["fun"] == pytest.approx(out["value"], rel=1e-12)
    assert len(out["warned"]) == 1
    assert 0 <= out["tabu"] < 10**9


_LASSO = """
from frankwolfe.applications.lasso import ConstrainedLasso

rng = np.random.default_rng(0)
A = rng.standard_normal((60, 40)); b = rng.standard_normal(60)

class Slow(fw.L1Ball):
    def extreme_point(self, direction):
        time.sleep(0.002)
        return super().extreme_point(direction)

import frankwolfe.applications.lasso.solve as solve_mod
solve_mod.L1Ball = Slow  # every oracle call of the fit sleeps
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    est = ConstrainedLasso(radius=1.0, tol=0.0, max_iter=10**6, method="fw",
                           fit_intercept=False).fit(A, b)
x = est.coef_
g = A.T @ (A @ x - b)
print(json.dumps(dict(status=str(est.result_.status), gap=est.gap_,
                      true_gap=float(g @ x + np.abs(g).max()),
                      feasible=bool(np.abs(x).sum() <= 1.0 + 1e-9),
                      warned=[str(w.message) for w in caught if "interrupted" in str(w.message)])),
      flush=True)
"""


def test_ctrl_c_during_constrained_lasso_fit_keeps_the_coefficients(tmp_path):
    out = _result(_run(_LASSO, tmp_path))
    assert out["status"] == "interrupted" and out["feasible"]
    assert out["gap"] == pytest.approx(out["true_gap"], rel=1e-6, abs=1e-9)
    assert len(out["warned"]) == 1 and "coef_ holds the coefficients" in out["warned"][0]


_FRANK_WOLFE_TWICE = """
rng = np.random.default_rng(0)
A = rng.standard_normal((40, 30)); b = rng.standard_normal(40)

calls, late = [0], [0]
GATE = threading.Event()  # READY once the run is in the slow oracle calls

class Slow(fw.ProbabilitySimplex):
    def extreme_point(self, direction):
        calls[0] += 1
        late[0] += INTERRUPTS.hits >= 2  # an oracle call after the second Ctrl-C
        if calls[0] > 20:  # some iterations first: a last good iterate past the start
            GATE.set()
            # long: both Ctrl-Cs land in one call on a loaded machine too (the second
            # raises out of the sleep at once)
            time.sleep(10)
        return super().extreme_point(direction)

try:
    fw.frank_wolfe(fw.LeastSquares(A, b), Slow(dim=30), tol=0.0, max_iter=10**6,
                   time_limit=60)
except KeyboardInterrupt as err:
    res = err.result
    x = res.x
    g = A.T @ (A @ x - b)
    out = dict(status=str(res.status), gap=res.gap, fun=res.fun, message=res.message,
               true_fun=float(0.5 * np.sum((A @ x - b) ** 2)), late=late[0],
               true_gap=float(g @ x - g.min()),
               feasible=bool(abs(x.sum() - 1) < 1e-9 and x.min() >= -1e-12),
               notes=getattr(err, "__notes__", []))
    print(json.dumps(out), flush=True)
"""


def test_second_ctrl_c_keeps_the_last_good_iterate_uncertified(tmp_path):
    """The second Ctrl-C raises at once, with the run so far as ``err.result``: a
    feasible point, f and the gap recomputed here (the gap is the one certified at that
    iterate, or NaN), and no oracle called after the second Ctrl-C."""
    out = _result(_run(_FRANK_WOLFE_TWICE, tmp_path, signals=2))
    assert out["status"] == "interrupted"
    assert out["feasible"]
    assert out["late"] == 0
    if not np.isnan(out["gap"]):
        assert out["gap"] == pytest.approx(out["true_gap"], rel=1e-7, abs=1e-9)
    assert out["fun"] == pytest.approx(out["true_fun"], rel=1e-9, abs=1e-12)
    assert "second Ctrl-C" in out["message"]
    # the message says "not certified" exactly when the gap is NaN
    assert ("not certified" in out["message"]) == bool(np.isnan(out["gap"]))
    assert any("err.result" in note for note in out["notes"])


_BCFW_THREADS_HUNG_RESULT = _BCFW_THREADS_HUNG.replace(
    "except KeyboardInterrupt:", "except KeyboardInterrupt as err:").replace(
    "    print(json.dumps(dict(seconds=time.monotonic() - t0)), flush=True)", """\
    res = err.result
    xb = res.x.reshape(n, 4)
    true_fun = float(0.5 * res.x @ res.x - res.x.sum() / 3)
    gb = xb - 1 / 3
    true_gap = float(np.sum(gb * xb) - gb.min(axis=1).sum())
    print(json.dumps(dict(seconds=time.monotonic() - t0, status=str(res.status),
                          gap=res.gap, fun=res.fun, true_fun=true_fun, true_gap=true_gap,
                          feasible=bool(np.allclose(xb.sum(axis=1), 1)
                                        and xb.min() >= -1e-12))), flush=True)""")


def test_second_ctrl_c_with_oracle_threads_in_flight_keeps_the_last_good_iterate(tmp_path):
    out = _result(_run(_BCFW_THREADS_HUNG_RESULT, tmp_path, signals=2))
    assert out["seconds"] < 30, out
    assert out["status"] == "interrupted"
    assert out["feasible"]
    if not np.isnan(out["gap"]):  # NaN: a point between certificates
        assert out["gap"] == pytest.approx(out["true_gap"], rel=1e-7, abs=1e-9)
    assert out["fun"] == pytest.approx(out["true_fun"], rel=1e-9, abs=1e-12)

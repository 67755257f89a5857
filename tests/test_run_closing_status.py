"""The status, fun and gap a run closes with: after an oracle's error, after a
KeyboardInterrupt raised again while the point returned is certified, when a budget ends
a run whose closing certificate meets tol, and when the first observation fails.

The problem is ``f(x) = 1/2 ||x - b||^2`` on the probability simplex (or a product of
simplices for BCFW), whose gap at ``x`` is ``<g, x> - min g`` with ``g = x - b`` (per
block for a product): every value is checked against that closed form.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.monitor import Monitor
from frankwolfe.result import Status

B = np.array([0.9, 0.6, -0.2, 0.3, 0.1])
X0 = np.eye(5)[0]


def _value(x: np.ndarray, b: np.ndarray = B) -> float:
    return 0.5 * float((x - b) @ (x - b))


def _gap(x: np.ndarray, b: np.ndarray = B, block: int | None = None) -> float:
    """The Frank-Wolfe gap of ``1/2 ||x - b||^2`` at ``x`` over a simplex (or a product of
    simplices of ``block`` entries each), by its closed form."""
    g = x - b
    size = block or x.size
    return sum(float(g[i:i + size] @ x[i:i + size] - g[i:i + size].min())
               for i in range(0, x.size, size))


def _objective(b: np.ndarray = B, tick=None) -> fw.FunctionObjective:
    def grad(x):
        if tick is not None:
            tick("grad")
        return x - b

    def value(x):
        if tick is not None:
            tick("value")
        return 0.5 * float((x - b) @ (x - b))

    return fw.FunctionObjective(value, grad, exact_step=lambda x, d, g: -(g @ d) / (d @ d))


class _Simplex(fw.ProbabilitySimplex):
    """The simplex oracle, answering the maximizer (a wrong vertex) from call ``flip_at``
    on, or raising ``fail`` (an exception instance) at the calls in ``fail_at``."""

    def __init__(self, dim: int = 5, *, flip_at: int | None = None, fail=None,
                 fail_at=()) -> None:
        super().__init__(dim=dim)
        self.calls, self.flip_at, self.fail, self.fail_at = 0, flip_at, fail, fail_at
        self.tick = None

    def _answer(self, g, among=None):
        self.calls += 1
        if self.tick is not None:
            self.tick("lmo")
        if self.calls in self.fail_at:
            raise self.fail
        if self.flip_at is not None and self.calls >= self.flip_at:
            g = -g
        return super().extreme_point(g) if among is None else \
            super().extreme_point_among(g, among)

    def extreme_point(self, g):
        return self._answer(g)

    def extreme_point_among(self, g, candidates):
        return self._answer(g, candidates)


UNCERTIFIED_LAST = [dict(method="fw", lazy=True), dict(method="fw", momentum=0.5),
                    dict(method="pairwise", lazy=True), dict(method="bpcg")]


# -- 1. a wrong oracle's negative gap is no certificate -------------------------------------
@pytest.mark.parametrize("kw", UNCERTIFIED_LAST, ids=str)
def test_an_oracle_error_leaves_the_gap_uncertified_not_zero(kw):
    """The oracle answers the maximizer from its 6th call: the run raises OracleError,
    and its result's gap was 0 (the re-asked wrong oracle's negative gap, clamped), a
    false certificate where the true gap is positive."""
    with pytest.raises(fw.OracleError) as info:
        fw.minimize(_objective(), _Simplex(flip_at=6), x0=X0, max_iter=100, **kw)
    res = info.value.result
    assert _gap(res.x) > 1e-7  # what a gap of 0 claimed to certify
    assert np.isnan(res.gap) and res.status == "error"
    assert res.fun == pytest.approx(_value(res.x), rel=1e-12)


def test_an_oracle_right_again_certifies_the_point_an_error_returns():
    """An oracle that failed once (an exception) and answers right when the result is
    certified: the true gap, not NaN."""
    lmo = _Simplex(fail=RuntimeError("once"), fail_at=(6,))
    with pytest.raises(RuntimeError) as info:
        fw.minimize(_objective(), lmo, x0=X0, method="fw", lazy=True, max_iter=100)
    res = info.value.result
    assert res.gap == pytest.approx(_gap(res.x), rel=1e-9, abs=1e-15)
    assert res.gap > 0


@pytest.mark.parametrize("kw", [dict(method="fw", momentum=0.5), dict(method="bpcg")],
                         ids=str)
def test_a_wrong_closing_certificate_is_refused(kw):
    """The oracle answers right during the run and wrong at the closing certificate only
    (its last call): that was a status max_iter with a gap of 0; now an OracleError, as
    the same answer in the loop, and the result's gap is NaN."""
    good = _Simplex()
    ref = fw.minimize(_objective(), good, x0=X0, max_iter=6, tol=0.0, **kw)
    assert ref.status == "max_iter"
    assert ref.gap == pytest.approx(_gap(ref.x), rel=1e-9)
    with pytest.raises(fw.OracleError, match="closing certificate") as info:
        fw.minimize(_objective(), _Simplex(flip_at=good.calls), x0=X0, max_iter=6, tol=0.0,
                    **kw)
    res = info.value.result
    assert np.isnan(res.gap) and np.allclose(res.x, ref.x, rtol=0, atol=1e-15)


# -- 2. a KeyboardInterrupt while the point returned is certified ---------------------------
KBI_METHODS = [dict(method="fw", lazy=True), dict(method="fw", momentum=0.5),
               dict(method="pairwise", lazy=True), dict(method="bpcg"),
               dict(method="dicg", blended=True), dict(method="rafw"),
               dict(method="bcfw"), dict(method="bcfw", gap_every=7)]


def _run(*args, **kw) -> fw.Result:
    """``fw.minimize``; a KeyboardInterrupt escaping it fails the test (rather than
    stopping pytest)."""
    try:
        return fw.minimize(*args, **kw)
    except KeyboardInterrupt:
        pytest.fail("the KeyboardInterrupt escaped the run, with no result")


def _interrupting(after: int, who: str):
    calls = [0]

    def tick(what: str) -> None:
        if what == who:
            calls[0] += 1
            if calls[0] > after:
                raise KeyboardInterrupt

    return tick


@pytest.mark.parametrize("who", ["lmo", "grad"])
@pytest.mark.parametrize("kw", KBI_METHODS, ids=str)
def test_a_keyboard_interrupt_raised_again_while_certifying_returns_the_run(kw, who):
    """The oracle (or the gradient) raises KeyboardInterrupt at every call after the
    ``after``-th: the certificate of the point returned raised it again and it escaped
    with no result.  Now: status interrupted, the last good iterate, its gap certified
    (the closed form) or NaN."""
    bcfw = kw["method"] == "bcfw"
    b = np.random.default_rng(0).random(12)
    x0 = np.tile(np.eye(3)[0], 4) if bcfw else np.eye(12)[0]
    interrupted = 0
    for after in range(1, 16):
        tick = _interrupting(after, who)
        lmos = [_Simplex(3) for _ in range(4)] if bcfw else [_Simplex(12)]
        for lmo in lmos:
            lmo.tick = tick
        domain = fw.ProductDomain(lmos) if bcfw else lmos[0]
        res = _run(_objective(b, tick), domain, x0=x0, max_iter=30, tol=0.0, **kw)
        if res.status != "interrupted":
            continue
        interrupted += 1
        assert res.fun == pytest.approx(_value(res.x, b), rel=1e-12)
        if not np.isnan(res.gap):
            assert res.gap == pytest.approx(_gap(res.x, b, 3 if bcfw else None),
                                            rel=1e-9, abs=1e-14)
        else:
            assert "not certified" in res.message
    assert interrupted >= 5


def test_the_reproducer_of_a_lazy_run_interrupted_from_the_oracle():
    lmo = _Simplex(fail=KeyboardInterrupt(), fail_at=range(6, 10**6))
    res = _run(_objective(), lmo, method="fw", lazy=True, x0=X0, max_iter=100)
    assert res.status == "interrupted"
    assert res.fun == pytest.approx(_value(res.x), rel=1e-12)
    assert np.isnan(res.gap) or res.gap == pytest.approx(_gap(res.x), rel=1e-9)
    assert abs(res.x.sum() - 1) < 1e-12 and res.x.min() >= 0


# -- 3. a budget's stop whose closing certificate meets tol is convergence -------------------
LINEAR = fw.QuadraticObjective(np.zeros((3, 3)), [1.0, -1.0, 0.5])  # f* = -1 at e_2


@pytest.mark.parametrize("kw", [dict(method="rafw", max_iter=3, tol=1e-6),
                                dict(method="rafw", max_iter=3, tol=0.0),
                                dict(method="fw", momentum=0.5, gap_every=10, max_iter=3,
                                     tol=1e-6)], ids=str)
def test_a_closing_certificate_meeting_tol_at_max_iter_is_convergence(kw):
    res = fw.minimize(LINEAR, fw.ProbabilitySimplex(dim=3), **kw)
    c = np.array([1.0, -1.0, 0.5])
    assert res.fun == pytest.approx(-1.0, abs=1e-12)  # the closed-form optimum
    assert res.gap == pytest.approx(float(c @ res.x - c.min()), abs=1e-12)
    assert res.gap <= kw["tol"]
    assert res.status == "converged" and res.success
    assert "<= tol" in res.message and "> tol" not in res.message


def test_a_closing_certificate_meeting_tol_at_the_time_limit_is_convergence():
    """The time limit ends the loop at an uncertified iterate (a callback that takes
    longer than the limit); its closing certificate is 0."""
    def slow(state):
        if state.k == 1:
            time.sleep(0.3)

    res = fw.minimize(LINEAR, fw.ProbabilitySimplex(dim=3), method="rafw", tol=1e-6,
                      time_limit=0.2, callback=slow, max_iter=100)
    c = np.array([1.0, -1.0, 0.5])
    assert res.gap == pytest.approx(float(c @ res.x - c.min()), abs=1e-12)
    assert res.status == "converged" and res.success, res.message


def test_a_budget_stop_above_tol_keeps_its_status_and_says_so_truly():
    res = fw.minimize(_objective(), fw.ProbabilitySimplex(dim=5), x0=X0, method="fw",
                      max_iter=3, tol=1e-9)
    assert res.status == "max_iter" and not res.success
    assert res.gap == pytest.approx(_gap(res.x), rel=1e-9) and res.gap > 1e-9
    assert f"gap {res.gap:.3e} > tol" in res.message


def test_a_callback_stop_keeps_its_status_when_the_gap_meets_tol():
    """The user's stop is the reason the run ended, whatever the closing gap."""
    res = fw.minimize(LINEAR, fw.ProbabilitySimplex(dim=3), method="rafw", tol=1e-6,
                      callback=lambda s: s.k < 1)
    assert res.status == "callback_stop"


@pytest.mark.parametrize("status", [Status.MAX_ITER, Status.TIME_LIMIT])
def test_the_budget_messages_compare_the_gap_with_tol(status):
    m = Monitor("fw", tol=1e-6, max_iter=3, time_limit=1.0)
    assert "gap 0.000e+00 <= tol 1.000e-06" in m.message(status, 3, 0.0)
    assert "gap 1.000e-06 <= tol 1.000e-06" in m.message(status, 3, 1e-6)
    assert "gap 2.000e-06 > tol 1.000e-06" in m.message(status, 3, 2e-6)
    assert "not certified" in m.message(status, 3, np.nan)
    assert "> tol 0.000e+00" not in Monitor("fw", tol=0.0).message(status, 3, 0.0)


# -- 4. a run stopped in its first observation ----------------------------------------------
@pytest.mark.parametrize("fail", [RuntimeError("boom"), KeyboardInterrupt()],
                         ids=["error", "interrupt"])
def test_a_first_oracle_call_failing_returns_f_of_x0_uncertified(fail):
    lmo = _Simplex(fail=fail, fail_at=range(1, 10**6))
    if isinstance(fail, KeyboardInterrupt):
        res = _run(_objective(), lmo, x0=X0, method="fw")
        assert res.status == "interrupted"
    else:
        with pytest.raises(RuntimeError) as info:
            fw.minimize(_objective(), lmo, x0=X0, method="fw")
        res = info.value.result
        assert res.status == "error"
    assert res.fun == _value(X0) == pytest.approx(0.255)
    assert np.isnan(res.gap) and res.nit == 0 and np.array_equal(res.x, X0)


def test_a_first_oracle_answer_not_finite_returns_f_of_x0_uncertified():
    class NaNs(fw.LMO):  # no domain check of its answers: the loop's own
        shape = (5,)

        def extreme_point(self, g):
            return np.full(5, np.nan)

    res = fw.minimize(_objective(), NaNs(), x0=X0, method="fw")
    assert res.status == "error" and res.nit == 0
    assert res.fun == pytest.approx(0.255, rel=1e-15) and np.isnan(res.gap)


def test_a_gradient_not_finite_at_x0_returns_f_of_x0_uncertified():
    f = fw.FunctionObjective(_value, lambda x: np.full(5, np.nan))
    res = fw.minimize(f, fw.ProbabilitySimplex(dim=5), x0=X0, method="fw")
    assert res.status == "error"
    assert res.fun == pytest.approx(0.255, rel=1e-15) and np.isnan(res.gap)


def test_an_oracle_failing_once_at_x0_certifies_it_when_asked_again():
    """The first call fails, the certificate of the result asks again: x0's true gap."""
    lmo = _Simplex(fail=RuntimeError("once"), fail_at=(1,))
    with pytest.raises(RuntimeError) as info:
        fw.minimize(_objective(), lmo, x0=X0, method="fw")
    res = info.value.result
    assert res.fun == pytest.approx(0.255, rel=1e-15)
    assert res.gap == pytest.approx(_gap(X0), rel=1e-12) == 0.7

"""The shared driver (frankwolfe.algorithms.engine): one place for stopping, certificates,
history, callbacks, non-finite values and the Result, for single-domain FW and BCFW."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    Status,
    block_coordinate_frank_wolfe,
    frank_wolfe,
)
from frankwolfe.algorithms.engine import Engine, Observation, drive
from frankwolfe.monitor import Monitor


class Halving(Engine):
    """A toy engine: f_k = 2^-k, certified gap f_k every other iteration (f* = 0)."""

    def __init__(self, bad_at: int | None = None):
        self.k, self.bad_at, self.certifications = 0, bad_at, 0

    def observe(self, k):
        if k == self.bad_at:
            return f"non-finite at {k}"
        f = 0.5 ** k
        return Observation(f, f, k % 2 == 0, np.array([f]), info={"half": k / 2})

    def advance(self, k, monitor):
        self.k += 1

    def certify(self, last):
        self.certifications += 1
        return last.fun, last.fun

    def outputs(self, error):
        out = dict(x=np.array([0.5 ** self.k]), n_oracle_calls=self.k, n_gradient_calls=0,
                   n_function_calls=0)
        if error:
            out.update(fun=np.nan, gap=np.inf)
        return out


def test_drive_stops_on_certified_gap_only():
    res = drive(Halving(), Monitor("toy", tol=0.2, max_iter=100))
    # f_3 = 0.125 <= tol is not certified (odd k): the stop is at k = 4
    assert res.status == Status.CONVERGED and res.nit == 4
    assert np.isnan(res.history["gap"][3]) and res.history["half"][2] == 1.0


def test_drive_certifies_the_returned_point_between_certificates():
    eng = Halving()
    res = drive(eng, Monitor("toy", tol=0.0, max_iter=3))
    assert res.status == Status.MAX_ITER and eng.certifications == 1
    assert res.gap == pytest.approx(0.125, rel=1e-15)


def test_drive_stops_with_error_on_non_finite():
    res = drive(Halving(bad_at=2), Monitor("toy", tol=0.0, max_iter=10))
    assert res.status == Status.ERROR and res.message == "non-finite at 2"


def test_callbacks_of_fw_and_bcfw_see_the_same_kind_of_state():
    n, m = 4, 3
    y = np.random.default_rng(0).dirichlet(np.ones(m), size=n).ravel()
    f = QuadraticObjective(np.eye(n * m), -y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    seen = {}
    for name, run in (("fw", lambda cb: frank_wolfe(f, dom, max_iter=3, tol=0.0, callback=cb)),
                      ("bcfw", lambda cb: block_coordinate_frank_wolfe(
                          f, dom, max_iter=3, tol=0.0, callback=cb, random_state=0))):
        states = []
        res = run(states.append)
        seen[name] = states
        assert [s.k for s in states] == [0, 1, 2, 3]
        assert res.nit == 3 and len(res.history["fun"]) == 4
    assert "n_block_steps" in seen["bcfw"][1].info


@pytest.mark.parametrize("compiled", [True, False])
def test_time_limit_stops_within_a_pass(compiled, monkeypatch):
    """The clock is read within passes (no timing here: the monitor's clock is replaced
    by one whose budget runs out at its second reading, the first inside the pass)."""
    import frankwolfe as fw

    calls = []

    def out_of_time(self):
        calls.append(1)
        return len(calls) >= 2

    monkeypatch.setattr(Monitor, "out_of_time", out_of_time)
    n, m = 1000, 3
    y = np.random.default_rng(1).dirichlet(np.ones(m), size=n).ravel()
    f = QuadraticObjective(np.eye(n * m), -y)
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    with fw.debug(False):
        res = block_coordinate_frank_wolfe(f, dom, max_iter=10, tol=0.0, time_limit=1e9,
                                           random_state=0, compiled=compiled)
    assert res.extra["engine"] == ("compiled" if compiled else "python")
    assert res.status == Status.TIME_LIMIT and res.nit == 1
    # compiled: one chunk; Python: the first clock period (shorter since #23: the pass
    # learns its step rate from a first reading after _TIME_CHECK_FIRST steps), not n = 1000
    from frankwolfe.algorithms.bcfw.python_pass import _TIME_CHECK_FIRST

    assert res.extra["n_block_steps"] == (256 if compiled else _TIME_CHECK_FIRST)
    # the returned point is certified all the same: the gap against f's own minimum (y)
    assert -1e-12 <= res.fun - f.value(y) <= res.gap + 1e-12

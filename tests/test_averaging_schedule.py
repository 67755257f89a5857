"""The averaging kinds' one schedule (averages._Schedule) behind RunningAverage and
ScaledAverage: exact averages of a short sequence, computed by hand in fractions, and
the same bits as the two classes' own schedules before they shared one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from frankwolfe.algorithms.averages import (
    AVERAGING,
    TAIL,
    UNIFORM,
    WEIGHTED,
    RunningAverage,
    ScaledAverage,
)

XS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]  # iterates x_0 .. x_9


def _by_hand(kind, t):
    """The average after t iterates (1-based), exactly."""
    xs = [Fraction(x) for x in XS[:t]]
    if kind == UNIFORM:
        return sum(xs) / t
    if kind == WEIGHTED:  # x_j weighted by j (x_0 by 0 unless alone)
        if t == 1:
            return xs[0]
        return sum(j * x for j, x in enumerate(xs)) / sum(range(t))
    # tail: iterates 2^(J-1) .. t (1-based) with 2^J <= t < 2^(J+1)
    first = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2, 7: 2, 8: 4, 9: 4, 10: 4}[t]
    return sum(xs[first - 1:]) / (t - first + 1)


def test_the_kinds_are_named_constants():
    assert AVERAGING == (WEIGHTED, UNIFORM, TAIL) == ("weighted", "uniform", "tail")


@pytest.mark.parametrize("kind", AVERAGING)
def test_running_and_scaled_averages_match_the_hand_computed_ones(kind):
    run = RunningAverage(kind, (np.array([float(XS[0])]),))
    v = np.array([1.0])
    scaled = ScaledAverage(kind, v, float(XS[0]))
    for t in range(1, len(XS) + 1):
        if t > 1:
            run.update((np.array([float(XS[t - 1])]),))
            scaled.update(float(XS[t - 1]))  # the iterate s * v with v = 1
        want = float(_by_hand(kind, t))
        assert run.value()[0] == pytest.approx(want, rel=4e-16, abs=0.0), (kind, t)
        assert scaled.value()[0] == pytest.approx(want, rel=4e-16, abs=0.0), (kind, t)


class _OldRunning:
    """RunningAverage's update and value as written before the shared schedule."""

    def __init__(self, kind, arrays):
        self.kind = kind
        self.cur = tuple(np.array(a, dtype=float) for a in arrays)
        self.prev = tuple(np.zeros_like(a) for a in self.cur)
        self.n_cur, self.n_prev, self.t, self.next_epoch = 1, 0, 1, 2

    def update(self, arrays):
        self.t += 1
        if self.kind == "weighted":
            rho = 2.0 / self.t
        else:
            if self.kind == "tail" and self.t == self.next_epoch:
                self.prev, self.cur = self.cur, self.prev
                self.n_prev, self.n_cur = self.n_cur, 0
                self.next_epoch *= 2
                for c in self.cur:
                    c[...] = 0.0
            self.n_cur += 1
            rho = 1.0 / self.n_cur
        for c, a in zip(self.cur, arrays):
            c += rho * (a - c)

    def value(self):
        if self.kind != "tail" or self.n_prev == 0:
            return self.cur
        a = self.n_prev / (self.n_prev + self.n_cur)
        return tuple(a * p + (1.0 - a) * c for p, c in zip(self.prev, self.cur))


@pytest.mark.parametrize("kind", AVERAGING)
def test_running_average_keeps_its_bits(kind):
    rng = np.random.default_rng(7)
    xs = rng.normal(size=(70, 6))
    new, old = RunningAverage(kind, (xs[0],)), _OldRunning(kind, (xs[0],))
    for x in xs[1:]:
        new.update((x,))
        old.update((x,))
        np.testing.assert_array_equal(new.value()[0], old.value()[0])


@pytest.mark.parametrize("kind", AVERAGING)
def test_scaled_average_keeps_its_bits(kind):
    """ScaledAverage against the schedule it had (transcribed: the scalars a_u, a_v and
    the tail's epochs) on a scaled iterate that shrinks and changes a few coordinates."""
    rng = np.random.default_rng(8)
    d = 5
    v = rng.normal(size=d)
    s = 1.0
    new = ScaledAverage(kind, v, s)
    # the old one's state, driven by the same calls
    u, a_u, a_v, prev = np.zeros(d), 1.0, s, np.zeros(d)
    n_cur, n_prev, t, next_epoch = 1, 0, 1, 2
    for _ in range(60):
        s *= 0.9
        new.v_rescaled(1.0)  # v unchanged; the scale lives in s
        idx = rng.choice(d, size=2, replace=False)
        delta = rng.normal(size=2)
        if a_v != 0.0:
            u[idx] -= (a_v / a_u) * delta
        new.v_changed(idx, delta)
        v[idx] += delta
        new.update(s)
        t += 1
        if kind == "weighted":
            rho = 2.0 / t
        else:
            if kind == "tail" and t == next_epoch:
                prev = a_u * u + a_v * v
                n_prev, n_cur = n_cur, 0
                next_epoch *= 2
            n_cur += 1
            rho = 1.0 / n_cur
        if rho >= 1.0:
            u[...] = 0.0
            a_u, a_v = 1.0, s
        else:
            a_u *= 1.0 - rho
            a_v = (1.0 - rho) * a_v + rho * s
            if a_u < 1e-100:
                u *= a_u
                a_u = 1.0
        cur = a_u * u + a_v * v
        if kind != "tail" or n_prev == 0:
            want = cur
        else:
            w = n_prev / (n_prev + n_cur)
            want = w * prev + (1.0 - w) * cur
        np.testing.assert_array_equal(new.value(), want)

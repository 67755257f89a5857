"""What the shared loop skips, and what it must not skip.

The loop asks a library domain's oracle past the wrapper that converts array-like
directions (its gradient is already a float ndarray): a user's override of
``extreme_point`` (in a subclass of a subclass, in a mixin, or copying the wrapper's
attributes with ``functools.wraps``) is still the function called.  The adaptive step
asks a failed trial's derivative only when rounding could have made the failure: a
well-scaled convex objective costs one gradient an iteration, where every failed trial
of large implied curvature cost one more.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.lmo.base import LMO, answers_atoms, finite_oracle


def _quadratic(n: int, seed: int = 0) -> fw.QuadraticObjective:
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M.T @ M / n
    return fw.QuadraticObjective(Q, -Q @ rng.dirichlet(np.ones(n)))


def test_a_library_oracle_is_called_past_the_conversion():
    simplex = fw.ProbabilitySimplex()
    raw = type(simplex).extreme_point.__wrapped__
    with fw.debug(False):
        oracle = finite_oracle(simplex)
    assert oracle.__func__ is raw and oracle.__self__ is simplex
    g = np.array([0.3, -1.0, 2.0])
    assert oracle(g).key == simplex.extreme_point(g).key == simplex(g).key


class _Counting(fw.ProbabilitySimplex):
    """A subclass's own answer-atoms override: the loop must call it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> fw.Atom:
        self.calls += 1
        return super().extreme_point(direction)


class _Grandchild(_Counting):
    """A subclass of a subclass, overriding again."""

    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> fw.Atom:
        self.calls += 10
        return super().extreme_point(direction)


class _Inherits(_Counting):
    """A subclass of a subclass that keeps its parent's override."""


class _Copies(_Counting):
    """An override that copies the parent's wrapper's attributes (functools.wraps): the
    copy is no conversion wrapper, and it must not be skipped for the parent's
    implementation."""

    @functools.wraps(_Counting.extreme_point)
    def extreme_point(self, direction: np.ndarray) -> fw.Atom:
        self.calls += 100
        return _Counting.extreme_point(self, direction)


class _Mixin:
    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> fw.Atom:
        self.calls += 1000  # type: ignore[attr-defined]
        return fw.ProbabilitySimplex.extreme_point(self, direction)  # type: ignore[arg-type]


class _Mixed(_Mixin, _Counting):
    """A mixin's extreme_point before the domain's in the MRO."""


@pytest.mark.parametrize("cls, per_call", [(_Counting, 1), (_Grandchild, 11), (_Inherits, 1),
                                           (_Copies, 101), (_Mixed, 1000)])
@pytest.mark.parametrize("method", ["fw", "away"])
def test_overrides_of_extreme_point_are_called_by_the_loop(cls, per_call, method):
    f = _quadratic(8)
    ref = fw.minimize(f, fw.ProbabilitySimplex(), method=method, tol=0.0, max_iter=40)
    lmo = cls()
    with fw.debug(False):  # the shortcut is taken outside debug mode only
        assert finite_oracle(lmo)(np.arange(8.0)).key == ("e", 0)
        lmo.calls = 0
        res = fw.minimize(f, lmo, method=method, tol=0.0, max_iter=40)
    assert lmo.calls == per_call * res.n_oracle_calls > 0
    np.testing.assert_array_equal(res.x, ref.x)


def test_a_direct_call_still_converts_array_likes():
    lmo = _Grandchild()
    v = lmo.extreme_point([0.5, -1, 2])  # a list: converted by the wrapper
    assert v.key == ("e", 1) and lmo.calls == 11


class _NoAtoms(LMO):
    """An extreme_point answering arrays: the loop converts through _answer_finite."""

    def extreme_point(self, direction: np.ndarray) -> np.ndarray:
        v = np.zeros(direction.shape)
        v[int(np.argmin(direction))] = 1.0
        return v


def test_an_array_answering_oracle_keeps_the_converting_path():
    lmo = _NoAtoms()
    with fw.debug(False):
        assert finite_oracle(lmo) == lmo._answer_finite


def _logistic(seed: int = 0) -> tuple[fw.LinearModelLoss, fw.L1Ball, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((400, 30))
    X[:, :5] *= 4.0  # uneven curvature: trials fail far above rounding
    y = np.sign(X @ rng.standard_normal(30) + 0.5 * rng.standard_normal(400))
    x0 = np.zeros(30)
    x0[0] = 5.0
    return fw.LinearModelLoss(X, y), fw.L1Ball(dim=30, radius=5.0), x0


@pytest.mark.parametrize("method", ["fw", "away", "pairwise"])
def test_adaptive_costs_one_gradient_an_iteration_on_a_well_scaled_problem(method):
    f, lmo, x0 = _logistic()
    res = fw.minimize(f, lmo, x0=x0, method=method, step_size=fw.step_size.Adaptive(),
                      tol=0.0, max_iter=200)
    assert res.nit == 200
    # the start's gradient, the initial estimate's, one per accepted step; every failed
    # trial above tau M asked one more before (209 to 212 here)
    assert res.njev == res.nit + 2, (res.njev, res.nit, res.nfev)


def test_an_instance_own_extreme_point_is_the_one_called():
    simplex = fw.ProbabilitySimplex()
    calls = []

    def own(direction: np.ndarray) -> fw.Atom:
        calls.append(1)
        return fw.ProbabilitySimplex.extreme_point(simplex, direction)

    simplex.extreme_point = own  # type: ignore[method-assign]
    with fw.debug(False):
        assert finite_oracle(simplex) is own

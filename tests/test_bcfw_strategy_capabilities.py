"""Strategies declare what the engine may do with them (BlockStep.matches_compiled_pairwise,
BlockOrder.draws_by_sum_tree, BlockOrder.hold); the engine no longer asks their class or
name, so a user's own strategy can declare the same and a subclass that changes a step
or a draw loses it."""

from __future__ import annotations

import numpy as np
import pytest
from traffic_networks import grid_network

import frankwolfe as fw
from frankwolfe import (
    BlockOrder,
    BlockStep,
    Executor,
    GapSampling,
    PairwiseStep,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.applications.traffic import traffic_assignment


class _OwnPairwise(BlockStep):
    """A user's pairwise step (not a PairwiseStep subclass) that says it is the kernels'."""

    name = "own_pairwise"
    uses_active_set = True
    matches_compiled_pairwise = True

    def direction(self, z, g, d_fw, gap, atoms, weights):
        return PairwiseStep.direction(self, z, g, d_fw, gap, atoms, weights)


class _ChangedPairwise(PairwiseStep):
    """A subclass with a direction of its own: not the compiled kernels' step."""

    def direction(self, z, g, d_fw, gap, atoms, weights):
        return super().direction(z, g, d_fw, gap, atoms, weights)


class _RedeclaredPairwise(_ChangedPairwise):
    matches_compiled_pairwise = True


def test_a_mixin_s_method_before_the_declaring_base_turns_the_flag_off():
    """A method taken from a mixin listed before the class that declared the flag is not
    that class's: the engine must call it (it ran the compiled pairwise steps instead,
    and the mixin's direction was never called)."""

    calls = []

    class Logging:
        def direction(self, *args):
            calls.append(1)
            return super().direction(*args)

    class LoggedPairwise(Logging, PairwiseStep):
        pass

    class Holding:
        def hold(self, i):
            return super().hold(i)

    class HeldGap(Holding, GapSampling):
        pass

    class Plain(GapSampling):  # inherits every draw operation: keeps the flag
        pass

    assert LoggedPairwise.direction is not PairwiseStep.direction
    assert not LoggedPairwise.matches_compiled_pairwise
    assert not HeldGap.draws_by_sum_tree and Plain.draws_by_sum_tree
    net = grid_network(3, 4, 4, seed=3)
    res = traffic_assignment(net, "bcfw", block_step=LoggedPairwise(), max_iter=3,
                             compiled=None)
    assert res.extra["engine"] == "python" and len(calls) > 0


def test_the_capabilities_are_declared_on_the_classes():
    assert not BlockStep.matches_compiled_pairwise and PairwiseStep.matches_compiled_pairwise
    assert not fw.FWStep.matches_compiled_pairwise and not fw.AwayStep.matches_compiled_pairwise
    assert not _ChangedPairwise.matches_compiled_pairwise
    assert _RedeclaredPairwise.matches_compiled_pairwise and _OwnPairwise.matches_compiled_pairwise
    assert not BlockOrder.draws_by_sum_tree and GapSampling.draws_by_sum_tree
    assert not fw.MaxGap.draws_by_sum_tree

    class Renamed(PairwiseStep):  # the same steps: keeps it
        name = "renamed"

    class OwnNext(GapSampling):
        def next(self, u):
            return super().next(u)

    class OwnNextSaysSo(OwnNext):
        draws_by_sum_tree = True

    assert Renamed.matches_compiled_pairwise
    assert not OwnNext.draws_by_sum_tree and OwnNextSaysSo.draws_by_sum_tree


def _traffic(step, compiled):
    net = grid_network(3, 4, 4, seed=3)
    with fw.debug(False):
        return traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=6, random_state=0,
                                  compiled=compiled, block_step=step, atom_storage="sparse",
                                  cache=False)


@pytest.mark.parametrize("compiled", [None, False])
def test_a_users_step_that_declares_the_kernels_step_takes_the_builtins_path(compiled):
    """A user's own pairwise step declaring matches_compiled_pairwise runs in the compiled
    pass (it ran in Python: the plan asked isinstance(step, PairwiseStep)) and, in the
    Python pass, sums in the kernels' order (it asked step.name == "pairwise"): the same
    run as the built-in step's, bit for bit."""
    ref = _traffic("pairwise", compiled)
    own = _traffic(_OwnPairwise(), compiled)
    want = "python" if compiled is False else "compiled"
    assert ref.extra["engine"] == want, ref.extra["engine_reason"]
    assert own.extra["engine"] == want, own.extra["engine_reason"]
    np.testing.assert_array_equal(own.x, ref.x)
    assert own.fun == ref.fun and own.gap == ref.gap and own.nit == ref.nit


def test_a_subclass_with_its_own_direction_runs_in_python():
    res = _traffic(_ChangedPairwise(), None)
    assert res.extra["engine"] == "python"
    assert "pairwise (or user) block steps" in res.extra["engine_reason"]


# -- block orders in mini-batch rounds ---------------------------------------------


class _Recording(Executor):
    def __init__(self) -> None:
        self.rounds: list[list[int]] = []

    def map(self, which, directions):
        self.rounds.append(list(which))
        return [self.blocks[i](d) for i, d in zip(which, directions)]


def _problem(nb=12, m=3, seed=4):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((nb * m, nb * m))
    f = QuadraticObjective(M.T @ M / (nb * m) + 0.1 * np.eye(nb * m),
                           rng.standard_normal(nb * m))
    return f, ProductDomain([ProbabilitySimplex(dim=m) for _ in range(nb)])


class _CountingNext(GapSampling):
    """Gap sampling that counts its Python draws and says its draws are still the sum
    tree's (its next is GapSampling's)."""

    draws_by_sum_tree = True
    calls = 0

    def next(self, u):
        type(self).calls += 1
        return super().next(u)


def _rounds(order):
    f, dom = _problem()
    ex = _Recording()
    res = block_coordinate_frank_wolfe(f, dom, batch_size=4, block_order=order, executor=ex,
                                       max_iter=5, tol=0.0, random_state=0, compiled=False)
    return res, [r for r in ex.rounds if len(r) != 12]


def test_an_order_declaring_sum_tree_draws_is_drawn_in_one_compiled_call():
    """The rounds' compiled draws follow the declaration (an isinstance test and the
    identity of next/update/hold chose them): a subclass that redeclares it is never
    asked block by block, and draws the rounds the library's gap sampling draws."""
    _CountingNext.calls = 0
    res, rounds = _rounds(_CountingNext())
    ref, ref_rounds = _rounds("gap")
    assert _CountingNext.calls == 0
    assert rounds == ref_rounds and len(rounds) == 5 * 3
    np.testing.assert_array_equal(res.x, ref.x)


class _HoldingMaxGap(fw.MaxGap):
    """A user's stepwise order with a hold of its own (not gap sampling): a held block
    gets the estimate -inf, below every gap, for the rest of its round."""

    held: list[int] = []

    def hold(self, i):
        type(self).held.append(i)
        self.est[i] = -np.inf


def test_a_users_hold_is_asked_for_every_block_of_a_round():
    """BlockOrder.hold is the engine's hook for every stepwise order: only GapSampling's
    was called (isinstance), other orders were told update(i, 0.0) whatever they had."""
    _HoldingMaxGap.held = []
    _, rounds = _rounds(_HoldingMaxGap())
    assert _HoldingMaxGap.held == [i for r in rounds for i in r] and len(rounds) == 5 * 3
    assert all(len(set(r)) == len(r) for r in rounds)


class _Updates(fw.MaxGap):
    """A stepwise order without a hold of its own, recording what update is told."""

    told: list[tuple[int, float]] = []

    def update(self, i, gap):
        type(self).told.append((i, float(gap)))


def test_the_default_hold_tells_update_a_zero_gap():
    """As the engine did before hold was a hook: every block drawn into a round is told
    update(i, 0.0) before the round's next draw."""
    _Updates.told = []
    _, rounds = _rounds(_Updates())
    told = iter(_Updates.told)
    for i in (i for r in rounds for i in r):
        assert (i, 0.0) in told  # in order: the hold before the step's own update

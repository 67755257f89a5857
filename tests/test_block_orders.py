"""Block orders of BCFW: a user's own order through the public API, the shared sum tree."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import (
    BlockOrder,
    GapSampling,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
    minimize,
)


def projection_problem(n: int = 12, m: int = 4, seed: int = 0):
    """``1/2 ||x - y||^2`` with ``y`` inside the product of simplices: the minimizer is
    ``y`` itself (closed form), the optimal value 0."""
    rng = np.random.default_rng(seed)
    y = rng.dirichlet(np.full(m, 3.0), size=n).ravel()
    f = QuadraticObjective(np.eye(n * m), -y, constant=0.5 * float(y @ y))
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    return f, dom, y


class Cyclic(BlockOrder):
    """Cyclic over a user's list of blocks (the list may repeat or skip blocks)."""

    name = "cyclic"

    def __init__(self, blocks):
        self.blocks = np.asarray(blocks, dtype=np.int64)

    def pass_order(self, rng):
        return self.blocks


@pytest.mark.parametrize("compiled", [True, False])
def test_user_cyclic_order_runs_through_public_api(compiled):
    f, dom, y = projection_problem()
    order = Cyclic(list(range(11, -1, -1)) + [0, 5])  # reversed, then two blocks again
    with fw.debug(False):
        res = block_coordinate_frank_wolfe(f, dom, block_order=order, tol=1e-10, max_iter=500,
                                           gap_every=1, compiled=compiled)
    assert res.success and res.method == "bcfw"
    assert res.extra["block_order"] == "cyclic"
    assert res.extra["engine"] == ("compiled" if compiled else "python")
    np.testing.assert_allclose(res.x, y, atol=1e-4)
    assert -1e-12 <= res.fun <= res.gap + 1e-12  # f* = 0
    # 14 block steps per pass: the counters follow the user's list
    assert res.extra["n_block_steps"] == 14 * res.nit


def test_user_order_through_minimize_equals_both_engines():
    f, dom, _ = projection_problem(seed=1)
    runs = []
    for compiled in (True, False):
        with fw.debug(False):
            runs.append(minimize(f, dom, method="bcfw", block_order=Cyclic(np.arange(12)),
                                 tol=0.0, max_iter=7, compiled=compiled))
    np.testing.assert_allclose(runs[0].x, runs[1].x, rtol=0, atol=1e-12)


def test_bad_user_order_gets_a_clear_error():
    f, dom, _ = projection_problem()
    with pytest.raises(ValueError, match=r"Cyclic.pass_order must return .* in \[0, 12\)"):
        block_coordinate_frank_wolfe(f, dom, block_order=Cyclic([0, 12]), compiled=False)
    # an empty pass: the run spent max_iter passes on no step at all
    with pytest.raises(ValueError, match=r"Cyclic.pass_order must return a non-empty"):
        block_coordinate_frank_wolfe(f, dom, block_order=Cyclic(np.zeros(0, dtype=int)))


def test_gap_sampling_tree_is_shared_and_proportional():
    est = np.array([np.inf, 1.0, np.inf, 3.0, 0.0, 4.0])
    order = GapSampling(degree=2.0)
    order.start(est)
    assert order.next(0.99) == 0  # unvisited blocks first, in index order
    order.update(0, 2.0)
    assert order.next(0.5) == 2
    order.update(2, 0.0)
    tree, size, degree, cursor = order.compiled_tree()  # what compiled passes update
    assert degree == 2.0 and tree[1] == pytest.approx(4 + 1 + 9 + 16, rel=1e-15)
    u = (np.arange(30_000) + 0.5) / 30_000  # a deterministic uniform grid
    freq = np.bincount([order.next(v) for v in u], minlength=6) / u.size
    np.testing.assert_allclose(freq, np.array([4, 1, 0, 9, 0, 16]) / 30.0, atol=1e-3)


def _brute_force_draw(est: np.ndarray, degree: float, u: float,
                      held: frozenset[int] = frozenset()) -> int:
    """Gap sampling without the sum tree: the first unvisited block, else the block where
    the running sum of the weights ``max(est, 0) ** degree`` (0 for the blocks ``held``
    out of a round) passes ``u`` x their total."""
    unvisited = np.flatnonzero(np.isinf(est))
    if unvisited.size:
        return int(unvisited[0])
    w = np.maximum(est, 0.0) ** degree
    w[list(held)] = 0.0
    cum = np.cumsum(w)
    return min(int(np.searchsorted(cum, u * cum[-1], side="right")), est.size - 1)


@pytest.mark.parametrize("degree", [1.0, 2.0, 0.0])
def test_compiled_round_draws_are_the_orders_own_draws(degree):
    """Mini-batch rounds draw a round's blocks in one compiled call: the blocks are those
    of a brute-force inverse-CDF draw over the weights (each pick held out of the rest of
    its round), the estimates and the tree those of the order's ``next`` and ``hold``
    block by block, and a round's blocks are distinct."""
    from frankwolfe.compiled.sum_tree import gap_pick_round

    rng = np.random.default_rng(3)
    n, tau = 37, 8
    est = rng.exponential(size=n)
    est[[4, 9, 30]] = np.inf  # unvisited: drawn first, in index order
    est[[5, 6]] = 0.0
    orders = [GapSampling(degree), GapSampling(degree)]
    for o in orders:
        o.start(est.copy())
    unif = rng.random(3 * tau)
    first: list[int] = []
    for a in range(0, unif.size, tau):
        expected = []
        for u in unif[a:a + tau]:
            i = orders[0].next(float(u))
            assert i == _brute_force_draw(orders[0].est, degree, float(u), frozenset(expected))
            expected.append(i)
            orders[0].hold(i)
        tree, size, _, nextu = orders[1].compiled_tree()
        out = np.empty(tau, dtype=np.int64)
        gap_pick_round(tree, size, orders[1].est, nextu, unif[a:a + tau], n, out)
        assert out.tolist() == expected
        first = first or expected
        assert len(set(expected)) == tau  # at degree 0 too, where update(i, 0) weighs 1
        np.testing.assert_array_equal(orders[1].est, orders[0].est)
        np.testing.assert_array_equal(orders[1].tree, orders[0].tree)
        for i in expected:  # the round's steps give the blocks new estimates
            g = float(rng.exponential())
            orders[0].update(i, g)
            orders[1].update(i, g)
    assert first[:3] == [4, 9, 30]


@pytest.mark.parametrize("degree", [1.0, 2.0])
def test_held_blocks_stay_out_when_every_weight_is_zero(degree):
    """The uniform draw of a tree of weight 0 (every block not held at gap 0) skips the
    held blocks: a round's own picks and those of the rounds in flight (asynchronous
    rounds ask them once), in the compiled round draw and the order's ``next``/``hold``
    alike; with none held it is ``int(u * n)``, as before."""
    from frankwolfe.compiled.sum_tree import gap_pick_round

    n, tau = 10, 4
    unif = np.random.default_rng(0).random(2 * tau)
    for compiled in (True, False):
        order = GapSampling(degree)
        order.start(np.zeros(n))
        assert order.next(0.55) == 5  # nothing held: int(u * n)
        picks: list[int] = []
        for a in range(0, unif.size, tau):  # a round, then the next one (first in flight)
            if compiled:
                tree, size, _, nextu = order.compiled_tree()
                out = np.empty(tau, dtype=np.int64)
                gap_pick_round(tree, size, order.est, nextu, unif[a:a + tau], n, out)
                picks += out.tolist()
            else:
                for u in unif[a:a + tau]:
                    picks.append(order.next(float(u)))
                    order.hold(picks[-1])
        assert len(set(picks)) == 2 * tau, picks
        np.testing.assert_array_equal(order.est, 0.0)  # held blocks read as gap 0


def test_unknown_order_name_lists_choices():
    f, dom, _ = projection_problem()
    with pytest.raises(ValueError, match="block_order must be one of .* or a BlockOrder"):
        block_coordinate_frank_wolfe(f, dom, block_order="zigzag")


class _RoundRobin(fw.BlockOrder):
    """A stepwise order written as docs/extending.md says: pass_order None, next answers
    (no ``stepwise`` attribute)."""

    name = "round-robin"

    def __init__(self, *answer):
        self.answer = answer  # () for the round robin, else (the one answer,)

    def start(self, estimates):
        super().start(estimates)
        self.i = -1

    def pass_order(self, rng):
        return None

    def next(self, u):
        self.i = (self.i + 1) % self.n
        return self.answer[0] if self.answer else self.i


@pytest.mark.parametrize("batch_size", [None, 2])
def test_a_users_stepwise_order_runs_and_its_answers_are_checked(batch_size):
    """It failed on an internal assertion (the order was taken as one of whole passes);
    its answers went unchecked (n + 5: IndexError deep in the pass; 0.7: block 0)."""
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3) for _ in range(4)])
    y = np.linspace(-1.0, 2.0, 12)
    f = fw.QuadraticObjective(np.eye(12), -y)
    kw = {} if batch_size is None else {"batch_size": batch_size}
    res = fw.block_coordinate_frank_wolfe(f, dom, block_order=_RoundRobin(), max_iter=500,
                                          tol=1e-10, block_step="pairwise", **kw)
    assert res.success, res.message
    # the projection of y onto each simplex, computed independently
    want = np.concatenate([_simplex_projection(y[3 * b:3 * b + 3]) for b in range(4)])
    np.testing.assert_allclose(res.x, want, atol=1e-6)
    for bad in (9, -1, 0.7, None, True):
        with pytest.raises(ValueError, match=rf"\.next answered {bad!r}; a block is an "
                                             rf"integer in \[0, 4\)"):
            fw.block_coordinate_frank_wolfe(f, dom, block_order=_RoundRobin(bad), max_iter=3,
                                            **kw)


def _simplex_projection(v):
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u - css / np.arange(1, v.size + 1) > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)

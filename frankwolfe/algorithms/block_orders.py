"""Block orders of block-coordinate Frank-Wolfe: which block the next step updates.

A block order is a small strategy object (FrankWolfe.jl's update order).  It
sees the latest block-gap estimates and nothing else; the engine asks it for
the blocks of each pass.  Two ways to answer:

* :meth:`BlockOrder.pass_order` returns the block indices of a whole pass (an
  integer array of any length), drawn up front: uniform sampling, random
  permutations, a user's cyclic list.  The compiled engine runs such passes
  in numba;
* or it returns ``None`` and the engine asks :meth:`BlockOrder.next` before
  each step, with one uniform number per step (drawn per pass): gap sampling
  and max-gap.  :class:`GapSampling` is also compiled (its sum tree is the
  same numba code in both engines).

Randomness (documented so that a transcription can replay it): at the start
of each pass :class:`UniformSampling` draws ``rng.integers(n, size=n)``,
:class:`Permutation` draws ``rng.permutation(n)`` and :class:`GapSampling`
draws ``u = rng.random(n)``; step ``t`` of a gap-sampling pass takes the
first unvisited block, else the block whose cumulative weight interval holds
``u[t] * sum(weights)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .._numbers import check_real, close_match
from ..compiled.sum_tree import gap_pick, gap_weight, tree_set
from .capabilities import keep_if_inherited

__all__ = ["BlockOrder", "UniformSampling", "Permutation", "GapSampling", "MaxGap",
           "make_block_order", "check_gap_degree", "is_stepwise", "checked_pick"]


# -- the strategies -----------------------------------------------------------------


def checked_pick(order: BlockOrder, i: Any, n: int) -> int:
    """``order.next``'s answer ``i`` as a block index, refused by name unless an integer
    in ``[0, n)`` (past ``n`` it failed deep in the pass, a float was truncated)."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) \
            or not 0 <= i < n:
        raise ValueError(f"{order!r}.next answered {i!r}; a block is an integer in [0, {n})")
    return int(i)


def is_stepwise(order: BlockOrder) -> bool:
    """Whether ``order`` picks block by block: it says so (``stepwise``) or implements
    :meth:`BlockOrder.next` (a user's order written as the docs say, ``pass_order``
    returning None and ``next`` answering, failed on an internal assertion)."""
    return bool(order.stepwise) or type(order).next is not BlockOrder.next


class BlockOrder(ABC):
    """Which blocks a BCFW pass visits.

    Subclass and implement :meth:`pass_order` (a whole pass at once) or, for
    orders that react to every step, return ``None`` there and implement
    :meth:`next`.  :meth:`start` runs once per run; :meth:`update` and
    :meth:`refresh` tell the order about new block-gap estimates (compiled
    passes write the estimates array but do not call :meth:`update`);
    :meth:`hold` keeps a block drawn into a mini-batch round out of the rest of
    the round.

    Attributes
    ----------
    name : str
        Short name (used in ``Result.extra["block_order"]``).
    stepwise : bool
        Picks block by block (:meth:`pass_order` returns ``None``, :meth:`next`
        answers); an order that implements :meth:`next` is read as one
        (:func:`is_stepwise`).
    draws_by_sum_tree : bool
        Whether :meth:`next`, :meth:`update` and :meth:`hold` are exactly the
        operations of the gap-sampling sum tree that :meth:`compiled_tree`
        returns (``gap_pick`` and ``tree_set`` of
        :mod:`frankwolfe.compiled.sum_tree` on it, as :class:`GapSampling`'s
        are): the engine then draws a mini-batch round's blocks in one compiled
        call instead of asking the order block by block.  ``False`` here,
        ``True`` on :class:`GapSampling`; a subclass that overrides one of the
        three methods has it ``False`` unless it declares it again.
    """

    name: str = "custom"
    #: picks block by block (:meth:`pass_order` returns ``None``, :meth:`next` answers);
    #: an order that implements :meth:`next` is read as one (:func:`is_stepwise`)
    stepwise: bool = False
    #: next / update / hold are the sum tree's of :meth:`compiled_tree` (see above)
    draws_by_sum_tree: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # other draw operations (its own, or a mixin's) make the compiled draws another
        # order's, unless the subclass says again that they are its own
        keep_if_inherited(cls, "draws_by_sum_tree", ("next", "update", "hold"))

    def start(self, estimates: np.ndarray) -> None:
        """Start a run; ``estimates`` (length ``n``, ``+inf`` for unvisited blocks) is
        the engine's array of block-gap estimates, kept up to date by the engine."""
        self.est = estimates
        self.n = estimates.size

    @abstractmethod
    def pass_order(self, rng: np.random.Generator) -> np.ndarray | None:
        """The blocks of the next pass (integers in ``[0, n)``, any length), or ``None``
        to be asked step by step through :meth:`next` (``n`` steps)."""

    def next(self, u: float) -> int:
        """The next block, from a uniform number ``u`` in [0, 1) (orders whose
        :meth:`pass_order` returns ``None``)."""
        raise NotImplementedError(f"{type(self).__name__} draws whole passes (pass_order)")

    def update(self, i: int, gap: float) -> None:  # noqa: B027 - an optional hook
        """Block ``i``'s estimate became ``gap`` (already written to the estimates)."""

    def refresh(self) -> None:  # noqa: B027 - an optional hook
        """Every estimate was replaced (after a certificate pass)."""

    def hold(self, i: int) -> None:
        """Hold block ``i`` out of the draws for the rest of a mini-batch round (until its
        next :meth:`update`); the engine has just set its estimate to 0.  The default
        tells :meth:`update` so; an order for which a zero gap still weighs (gap
        sampling at degree 0) overrides it."""
        self.update(i, 0.0)

    def compiled_tree(self) -> tuple[np.ndarray, int, float, np.ndarray] | None:
        """``(tree, size, degree, cursor)`` of a gap-sampling sum tree that compiled
        passes may update in place (see :class:`GapSampling`), or ``None``.  A stepwise
        order without one runs in the Python engine."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class UniformSampling(BlockOrder):
    """Blocks drawn uniformly with replacement, ``n`` per pass (the analysed BCFW)."""

    name = "uniform"

    def pass_order(self, rng: np.random.Generator) -> np.ndarray | None:
        return rng.integers(self.n, size=self.n)


class Permutation(BlockOrder):
    """A fresh random permutation of the blocks every pass."""

    name = "perm"

    def pass_order(self, rng: np.random.Generator) -> np.ndarray | None:
        return rng.permutation(self.n)


class GapSampling(BlockOrder):
    """Block ``i`` with probability proportional to ``g_i ** degree`` (gapBCFW).

    Blocks whose estimate is ``+inf`` (never visited) come first, in index
    order, so the first pass is a deterministic sweep as in gapBCFW.  After
    that one uniform number per step and a sum-tree descent, O(log n).

    Parameters
    ----------
    degree : float, default 1
        Exponent of the gaps, a finite number >= 0.

    Raises
    ------
    TypeError
        If ``degree`` is not a real number.
    ValueError
        If it is negative or not finite.
    """

    name = "gap"
    stepwise = True
    draws_by_sum_tree = True

    def __init__(self, degree: float = 1.0) -> None:
        self.degree = check_gap_degree(degree, "degree", "GapSampling")

    def start(self, estimates: np.ndarray) -> None:
        super().start(estimates)
        self.size = 1 << max(0, int(self.n - 1).bit_length())
        self.tree = np.zeros(2 * self.size)
        self.nextu = np.zeros(1, dtype=np.int64)  # first block that may be unvisited
        self.refresh()

    def pass_order(self, rng: np.random.Generator) -> np.ndarray | None:
        return None

    def next(self, u: float) -> int:
        return int(gap_pick(self.tree, self.size, self.est, self.nextu, u, self.n))

    def draw(self, rng: np.random.Generator) -> int:
        """The next block, drawing its uniform number from ``rng``."""
        return self.next(rng.random())

    def compiled_tree(self) -> tuple[np.ndarray, int, float, np.ndarray] | None:
        return self.tree, self.size, self.degree, self.nextu

    def update(self, i: int, gap: float) -> None:
        self.est[i] = gap
        tree_set(self.tree, self.size, i, gap_weight(gap, self.degree))

    def hold(self, i: int) -> None:
        """Hold block ``i`` out of the draws until its next :meth:`update` (the rest of a
        mini-batch round): weight 0 at every degree, where ``update(i, 0)`` gives
        ``0 ** 0 = 1`` at degree 0; its estimate ``-0.0`` keeps it out of the uniform
        draw that :meth:`next` makes when every weight is 0."""
        self.est[i] = -0.0
        tree_set(self.tree, self.size, i, 0.0)

    def refresh(self) -> None:
        est = self.est
        finite = np.isfinite(est)
        g = np.maximum(np.where(finite, est, 0.0), 0.0)
        self.tree[:] = 0.0
        self.tree[self.size:self.size + self.n] = g if self.degree == 1.0 else g ** self.degree
        lvl = self.size
        while lvl > 1:  # parents level by level, vectorized
            half = lvl // 2
            self.tree[half:lvl] = self.tree[lvl:2 * lvl:2] + self.tree[lvl + 1:2 * lvl:2]
            lvl = half
        self.nextu[0] = 0

    def __repr__(self) -> str:
        return f"GapSampling(degree={self.degree:g})"


class MaxGap(BlockOrder):
    """The block with the largest gap estimate (unvisited blocks first, in index order)."""

    name = "max_gap"
    stepwise = True

    def pass_order(self, rng: np.random.Generator) -> np.ndarray | None:
        return None

    def next(self, u: float) -> int:
        return int(np.argmax(self.est))  # +inf (unvisited) first, lowest index first


_ORDERS: dict[str, type[BlockOrder]] = {"uniform": UniformSampling, "perm": Permutation,
                                         "gap": GapSampling, "max_gap": MaxGap}


def check_gap_degree(value: Any, name: str, where: str = "") -> float:
    """``value`` as the float exponent of gap sampling, finite and >= 0
    (:func:`~frankwolfe._numbers.check_real`: a ``TypeError`` naming ``where`` and
    ``name`` unless it is a real number, a ``ValueError`` unless it is in range)."""
    return check_real(value, name, where, low=0.0)


def make_block_order(spec: Any, gap_degree: float = 1.0) -> BlockOrder:
    """A :class:`BlockOrder` from a name (``"uniform"``, ``"perm"``, ``"gap"``,
    ``"max_gap"``) or an instance (returned as is); ``gap_degree`` is checked
    (:func:`check_gap_degree`) whatever the order."""
    gap_degree = check_gap_degree(gap_degree, "gap_degree")
    if isinstance(spec, BlockOrder):
        return spec
    key = spec.lower() if isinstance(spec, str) else spec
    if key not in _ORDERS:
        raise ValueError(
            f"block_order must be one of {list(_ORDERS)} or a BlockOrder, got {spec!r}"
            f"{close_match(spec, _ORDERS)}"
        )
    return GapSampling(gap_degree) if key == "gap" else _ORDERS[key]()

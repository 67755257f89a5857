"""Block steps of block-coordinate Frank-Wolfe and the block view the step rules read.

A block step (FrankWolfe.jl's update step) chooses the direction of one
block: toward the block's Frank-Wolfe vertex (:class:`FWStep`), away from
its worst active atom (:class:`AwayStep`) or both at once
(:class:`PairwiseStep`).  The step size then comes from the same
:class:`~frankwolfe.step_size.StepSize` objects as everywhere, called on a
:class:`BlockView` of the iterate: the view answers the questions of a
tracker (value, gradient, exact step, trial points) for a direction that
lives on one block's coordinates, in O(|block|) where the objective allows.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .._numbers import close_match
from ..objectives.base import Objective
from .capabilities import keep_if_inherited

__all__ = ["BlockStep", "FWStep", "AwayStep", "PairwiseStep", "make_block_step", "BlockView",
           "BlockDirection"]


class BlockStep(ABC):
    """How one block moves.

    :meth:`direction` sees the block's current point ``z``, its gradient
    ``g``, the Frank-Wolfe direction ``d_fw = s - z`` toward the block's
    vertex ``s`` with its gap ``<g, z - s>``, and (when
    :attr:`uses_active_set`) the block's active atoms (rows) with their
    weights, all positive: the atoms the block's table keeps at weight 0
    (dropped ones, cached vertices) are not handed to a step of one's own,
    so that an argmax over all the rows it gets is an away atom.  It returns
    ``(kind, row, d, gamma_max)``: ``kind`` is ``"fw"``, ``"away"`` or
    ``"pairwise"`` (how the active-set weights change), ``row`` the away
    atom's row among those handed to it (``0 <= row < len(weights)``; ``-1``
    for FW steps), ``d`` the block direction (``d_fw`` itself may be
    returned; the engine scales it in place).

    Attributes
    ----------
    name : str
        Short name (used in ``Result.extra["block_step"]``).
    uses_active_set : bool
        Keeps a per-block active set of atoms (and takes drop steps).
    matches_compiled_pairwise : bool
        Whether :meth:`direction` is the pairwise step of the domains' compiled
        kernels (``"pairwise"`` in
        :attr:`~frankwolfe.compiled.BlockDomainHooks.compiled_features`), as
        :class:`PairwiseStep`'s is: the compiled pass may then take the steps
        in the kernels, and the Python pass sums a sparse block's products in
        the kernels' order (the two engines then take the same steps to the
        last bit).  ``False`` here, ``True`` on :class:`PairwiseStep`; a
        subclass that overrides :meth:`direction` has it ``False`` unless it
        declares it again.
    """

    name: str = "custom"
    #: keeps a per-block active set of atoms (and takes drop steps)
    uses_active_set: bool = False
    #: direction is the compiled kernels' pairwise step (see above)
    matches_compiled_pairwise: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # another direction (its own, or a mixin's) is not the compiled kernels' step,
        # unless the subclass says again that it is
        keep_if_inherited(cls, "matches_compiled_pairwise", ("direction",))

    @abstractmethod
    def direction(self, z: np.ndarray, g: np.ndarray, d_fw: np.ndarray, gap: float,
                  atoms: np.ndarray | None, weights: np.ndarray | None
                  ) -> tuple[str, int, np.ndarray, float]:
        """``(kind, away_row, d, gamma_max)`` of the step of one block.

        Parameters
        ----------
        z : ndarray
            The block's current point (do not modify it).
        g : ndarray
            The gradient's block.
        d_fw : ndarray
            ``s - z`` toward the block's Frank-Wolfe vertex ``s``.
        gap : float
            ``<g, z - s>``.
        atoms : ndarray or table of rows, or None
            With :attr:`uses_active_set`: the block's active atoms, one row each
            (a dense ``(rows, m)`` array, or for a block of sparse atoms a table
            that answers ``atoms @ g`` and ``atoms[r]``); ``None`` otherwise.
            Only atoms of positive weight are handed to a step of one's own
            (the built-in :class:`AwayStep` and :class:`PairwiseStep` see the
            whole table and skip the zero rows themselves).
        weights : ndarray or None
            Their weights (positive), or ``None``.

        Returns
        -------
        kind : {"fw", "away", "pairwise"}
        away_row : int
            The away atom's row in ``atoms`` (``-1`` for ``"fw"``).
        d : ndarray
            The block direction.
        gamma_max : float
            The largest step along ``d`` (``1`` for FW, the away atom's weight
            for pairwise, ``w / (1 - w)`` for away).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _away_atom(z: np.ndarray, g: np.ndarray, atoms: np.ndarray, weights: np.ndarray
               ) -> tuple[int, float]:
    """Row of the active atom with the largest ``<g, a>`` and its away gap
    (``(-1, -inf)`` when no atom is active)."""
    act = np.flatnonzero(weights > 0.0)
    if act.size == 0:
        return -1, -np.inf
    scores = atoms[act] @ g
    j = int(np.argmax(scores))
    return int(act[j]), float(scores[j]) - float(g @ z)


class FWStep(BlockStep):
    """Toward the block's Frank-Wolfe vertex: ``d = s - z``, ``gamma <= 1``."""

    name = "fw"

    def direction(self, z: np.ndarray, g: np.ndarray, d_fw: np.ndarray, gap: float,
                  atoms: np.ndarray | None, weights: np.ndarray | None
                  ) -> tuple[str, int, np.ndarray, float]:
        return "fw", -1, d_fw, 1.0


class AwayStep(BlockStep):
    """The FW step or, when the away gap is larger, away from the worst active atom
    ``a``: ``d = z - a``, ``gamma <= w_a / (1 - w_a)``."""

    name = "away"
    uses_active_set = True

    def direction(self, z: np.ndarray, g: np.ndarray, d_fw: np.ndarray, gap: float,
                  atoms: np.ndarray | None, weights: np.ndarray | None
                  ) -> tuple[str, int, np.ndarray, float]:
        assert atoms is not None and weights is not None  # uses_active_set: the engine keeps them
        row, away_gap = _away_atom(z, g, atoms, weights)
        w = float(weights[row]) if row >= 0 else 1.0
        if away_gap > gap and w < 1.0:
            return "away", row, z - atoms[row], w / (1.0 - w)
        return "fw", -1, d_fw, 1.0


class PairwiseStep(BlockStep):
    """Weight moves from the worst active atom ``a`` to the FW vertex: ``d = s - a``,
    ``gamma <= w_a``."""

    name = "pairwise"
    uses_active_set = True
    matches_compiled_pairwise = True

    def direction(self, z: np.ndarray, g: np.ndarray, d_fw: np.ndarray, gap: float,
                  atoms: np.ndarray | None, weights: np.ndarray | None
                  ) -> tuple[str, int, np.ndarray, float]:
        assert atoms is not None and weights is not None  # uses_active_set: the engine keeps them
        row, _ = _away_atom(z, g, atoms, weights)
        if row < 0:
            return "fw", -1, d_fw, 1.0
        return "pairwise", row, d_fw + (z - atoms[row]), float(weights[row])


_STEPS: dict[str, type[BlockStep]] = {"fw": FWStep, "away": AwayStep, "pairwise": PairwiseStep}


def make_block_step(spec: Any) -> BlockStep:
    """A :class:`BlockStep` from a name (``"fw"``, ``"away"``, ``"pairwise"``) or an
    instance (returned as is)."""
    if isinstance(spec, BlockStep):
        return spec
    key = spec.lower() if isinstance(spec, str) else spec
    if key not in _STEPS:
        raise ValueError(f"block_step must be one of {list(_STEPS)} or a BlockStep, got "
                         f"{spec!r}{close_match(spec, _STEPS)}")
    return _STEPS[key]()


class BlockDirection:
    """A direction on one block's coordinates (``d``: values at the block's indices)."""

    __slots__ = ("d",)

    def __init__(self) -> None:
        self.d = np.zeros(0)

    def dot(self, g: np.ndarray, g_dot_x: float | None = None, x: Any = None) -> float:
        """``<g, d>`` for a block gradient ``g``."""
        return float(g @ self.d)


class BlockView:
    """The iterate as a :class:`~frankwolfe.step_size.StepSize` sees it during one
    block step: the tracker interface restricted to the block's coordinates.

    ``gradient()`` and ``trial_gradient()`` are block gradients (the direction
    is zero elsewhere); ``value()`` and ``trial_value()`` evaluate the whole
    objective (O(dim), only backtracking rules call them).

    Parameters
    ----------
    objective : Objective
    x : ndarray
        The aggregate iterate (shared with the engine, moved by it).
    """

    def __init__(self, objective: Objective, x: np.ndarray) -> None:
        self.objective = objective
        self.x = x
        self.has_exact_step = objective.has_exact_step_block
        self.idx: np.ndarray = np.zeros(0, dtype=np.int64)
        self.sel: Any = self.idx
        self.g = np.zeros(0)
        self._f: float | None = None

    def at(self, idx: np.ndarray, sel: Any, g: np.ndarray) -> None:
        """Look at the block with coordinates ``idx`` (``sel``: the same as a slice when
        contiguous) and block gradient ``g``."""
        self.idx, self.sel, self.g = idx, sel, g
        self._f = None

    # -- the tracker interface --------------------------------------------------
    def value(self) -> float:
        if self._f is None:
            self._f = float(self.objective.value(self.x))
        return self._f

    def gradient(self) -> np.ndarray:
        return self.g

    def exact_step(self, direction: BlockDirection) -> float:
        return float(self.objective.exact_step_block(self.x, self.idx, direction.d, self.g))

    def direction_sq_norm(self, direction: BlockDirection) -> float:
        d = direction.d
        return float(d @ d)

    def _at_trial(self, direction: BlockDirection, gamma: float, what: str) -> Any:
        x, sel = self.x, self.sel
        saved = x[sel].copy()  # restored exactly: no rounding drift from +/- gamma d
        x[sel] += gamma * direction.d
        try:
            if what == "value":
                return float(self.objective.value(x))
            return np.asarray(self.objective.partial_gradient(x, self.idx),
                              dtype=float).reshape(-1)
        finally:
            x[sel] = saved

    def trial_value(self, direction: BlockDirection, gamma: float) -> float:
        return self._at_trial(direction, gamma, "value")

    def trial_gradient(self, direction: BlockDirection, gamma: float) -> np.ndarray:
        return self._at_trial(direction, gamma, "gradient")

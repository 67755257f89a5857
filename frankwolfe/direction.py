"""Search directions as combinations of the iterate and atoms.

Every Frank-Wolfe direction is ``d = x_coef * x + sum_i c_i * a_i`` for a few
atoms ``a_i``: ``v - x`` (Frank-Wolfe), ``x - a`` (away), ``v - a``
(pairwise).  Keeping that form, instead of a dense vector, lets an objective
update its cached products (``A x``, ``Q x``) from per-atom products and lets
sparse atoms stay sparse.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .atoms import Atom

__all__ = ["Direction"]


class Direction(NamedTuple):
    """``d = x_coef * x + sum(c * a for c, a in terms)``.

    Immutable (a named tuple: a method builds one or more per step, and a frozen
    dataclass cost twice as much to build).
    """

    x_coef: float
    terms: tuple[tuple[float, Atom], ...]

    @classmethod
    def frank_wolfe(cls, v: Atom) -> Direction:
        """``v - x``."""
        return cls(-1.0, ((1.0, v),))

    @classmethod
    def away(cls, a: Atom) -> Direction:
        """``x - a``."""
        return cls(1.0, ((-1.0, a),))

    @classmethod
    def pairwise(cls, v: Atom, a: Atom) -> Direction:
        """``v - a``."""
        return cls(0.0, ((1.0, v), (-1.0, a)))

    def dense(self, x: np.ndarray) -> np.ndarray:
        """The direction as a dense array (new array)."""
        d = self.x_coef * x if self.x_coef else np.zeros_like(x)
        for c, a in self.terms:
            a.add_to(d, c)
        return d

    def dot(self, g: np.ndarray, g_dot_x: float | None = None,
            x: np.ndarray | None = None) -> float:
        """``<g, d>``; pass ``g_dot_x`` (or ``x``) when ``x_coef`` is non-zero."""
        s = 0.0
        if self.x_coef:
            if g_dot_x is None:
                g_dot_x = float(np.vdot(g, x))
            s = self.x_coef * g_dot_x
        for c, a in self.terms:
            s += c * a.dot(g)
        return s

    def apply(self, x: np.ndarray, gamma: float) -> None:
        """In place ``x += gamma * d``."""
        if self.x_coef:
            x *= 1.0 + gamma * self.x_coef
        for c, a in self.terms:
            a.add_to(x, gamma * c)

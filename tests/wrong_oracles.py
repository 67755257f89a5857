"""The shared problem of the block-gap tests: ``1/2 ||x - B||^2`` over two simplices of
3, and a block oracle that answers the worst vertex (its block gap negative, hidden in
the product's summed gap by the other block's)."""

from __future__ import annotations

import numpy as np

import frankwolfe as fw

B = np.array([0.9, 0.6, -0.2, 0.3, -0.4, 0.8])
X0 = np.r_[1.0, 0, 0, 1, 0, 0]


class Dist(fw.Objective):
    """``1/2 ||x - B||^2``: gradient ``x - B``."""

    def value(self, x):
        return 0.5 * float((x - B) @ (x - B))

    def gradient(self, x):
        return x - B


class Worst(fw.LMO):
    """The probability simplex's worst vertex: the maximizer of ``<g, .>``."""

    shape = (3,)

    def extreme_point(self, g):
        v = np.zeros(3)
        v[np.argmax(g)] = 1.0
        return v

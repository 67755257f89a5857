"""LMO.diameter: an upper bound on the Euclidean diameter, checked against the vertices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frankwolfe import (LMO, Birkhoff, Box, KSparsePolytope, L1Ball, L2Ball, ProbabilitySimplex,
                        ProductDomain, UnitSimplex)


def vertex_diameter(vertices):
    V = np.array([np.ravel(v) for v in vertices], dtype=float)
    return max(np.linalg.norm(a - b) for a, b in itertools.combinations(V, 2))


def test_polytope_diameters_equal_the_largest_vertex_distance():
    n, r = 4, 1.5
    E = np.eye(n)
    cases = [
        (ProbabilitySimplex(r, dim=n), r * E),
        (UnitSimplex(r, dim=n), np.vstack([r * E, np.zeros(n)])),
        (L1Ball(r, dim=n), np.vstack([r * E, -r * E])),
        (KSparsePolytope(2, r, dim=n),
         [r * (s1 * E[i] + s2 * E[j]) for i, j in itertools.combinations(range(n), 2)
          for s1 in (-1, 1) for s2 in (-1, 1)]),
        (Birkhoff(3), [np.eye(3)[list(p)] for p in itertools.permutations(range(3))]),
    ]
    for dom, vertices in cases:
        d = dom.diameter((n,))
        assert d == pytest.approx(vertex_diameter(vertices), rel=1e-12), dom


def test_ball_product_and_unknown_diameters():
    assert L2Ball(0.5, dim=3).diameter() == pytest.approx(1.0, rel=1e-15)  # two antipodes
    prod = ProductDomain([ProbabilitySimplex(dim=3), L1Ball(2.0, dim=2)])
    assert prod.diameter() == pytest.approx(np.sqrt(2.0 + 16.0), rel=1e-15)
    assert Box(0.0, 1.0, dim=3).diameter() is None  # not implemented: unknown

    class Mine(LMO):
        def extreme_point(self, direction):
            return -np.sign(direction)

    assert Mine().diameter() is None
    mixed = ProductDomain([Mine(), L1Ball(dim=2)], indices=[range(2), range(2, 4)])
    assert mixed.diameter() is None

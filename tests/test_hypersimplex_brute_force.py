"""Hypersimplices against brute force over their vertices (every k-subset).

Belongs in tests/test_lmo_family.py (or tests/test_lmo_diameter.py for the diameter)."""

import itertools

import numpy as np
import pytest

from frankwolfe import HyperSimplex, UnitHyperSimplex


def _vertices(n, k, r, at_most):
    sizes = range(0, k + 1) if at_most else [k]
    for m in sizes:
        for S in itertools.combinations(range(n), m):
            v = np.zeros(n)
            v[list(S)] = r
            yield v


@pytest.mark.parametrize("n,k", [(4, 1), (4, 2), (4, 3), (5, 4), (6, 5), (3, 3)])
@pytest.mark.parametrize("at_most", [False, True])
def test_diameter_is_the_largest_vertex_distance(n, k, at_most):
    r = 1.5
    V = list(_vertices(n, k, r, at_most))
    brute = max(np.linalg.norm(a - b) for a in V for b in V)
    lmo = (UnitHyperSimplex if at_most else HyperSimplex)(k, radius=r, dim=n)
    assert lmo.diameter() == pytest.approx(brute, rel=1e-12)


def test_unit_hypersimplex_prefers_the_sparsest_optimal_vertex():
    # zero entries tie: the optimal vertex of smallest support is the answer (documented)
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = 6
        d = rng.integers(-2, 3, size=n).astype(float)
        for k in (1, 2, 3, 6):
            V = list(_vertices(n, k, 1.0, at_most=True))
            best = min(float(d @ v) for v in V)
            sparsest = min(np.count_nonzero(v) for v in V if float(d @ v) == best)
            a = UnitHyperSimplex(k)(d).to_dense()
            assert float(d @ a) == best
            assert np.count_nonzero(a) == sparsest, (d, k, a)

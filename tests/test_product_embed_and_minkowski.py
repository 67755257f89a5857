"""ProductDomain: block atoms scattered at their block's coordinates (embed), and the
vertex of a Minkowski sum (overlapping blocks) as the sum of the block vertices.
Belongs in tests/test_block_store.py (embed) and tests/test_lmo_family.py (Minkowski);
the answers are brute force over the vertex pairs and explicit scattering."""

import itertools

import numpy as np

from frankwolfe import Box, ProbabilitySimplex, ProductDomain


def test_embed_puts_block_atoms_at_their_coordinates():
    P = ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=3), Box(-1.0, 2.0, dim=2)])
    rng = np.random.default_rng(0)
    for _ in range(10):
        g = rng.standard_normal(P.dim)
        for i in range(P.n_blocks):
            a = P.block_extreme_point(i, g)
            e = P.embed(i, a)
            expected = np.zeros(P.dim)
            expected[P.block_indices[i]] = a.to_dense().reshape(-1)
            np.testing.assert_array_equal(e.to_dense(), expected)
            assert e.dot(g) == float(g[P.block_indices[i]] @ a.to_dense().reshape(-1))


def test_minkowski_sum_vertex_is_the_best_pair_sum():
    idx = [np.array([0, 1, 2]), np.array([1, 2, 3])]
    P = ProductDomain([ProbabilitySimplex(dim=3), ProbabilitySimplex(dim=3)], indices=idx)
    assert not P.disjoint
    E = np.eye(3)
    rng = np.random.default_rng(1)
    for d in [np.array([0.0, -1.0, 0.0, 0.0]), *rng.standard_normal((20, 4))]:
        best, arg = np.inf, None
        for a, b in itertools.product(E, E):
            x = np.zeros(4)
            x[idx[0]] += a
            x[idx[1]] += b
            if d @ x < best:
                best, arg = float(d @ x), x
        s = P(d).to_dense()
        assert float(d @ s) == best
        np.testing.assert_array_equal(s, arg)

"""Birkhoff's in-face oracle against enumeration."""
import itertools

import numpy as np

from frankwolfe import Birkhoff


def test_in_face_permutation_is_the_best_inside_the_support():
    n = 4
    P1, P2 = np.eye(n), np.roll(np.eye(n), 1, axis=1)
    X = 0.5 * (P1 + P2)
    # three cheap face cells that only a permutation leaving the face completes
    g = np.full((n, n), 10.0)
    g[0, 0] = g[1, 2] = g[2, 3] = -10.0
    best = min(sum(g[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n))
               if all(X[i, p[i]] > 0 for i in range(n)))
    v = Birkhoff(n).in_face_extreme_point(X, g).to_dense().reshape(n, n)
    assert np.all(X[v > 0] > 0)
    assert float(np.sum(g * v)) == best

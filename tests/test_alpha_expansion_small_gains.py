"""Alpha-expansion keeps a move whose gain is small but far above rounding (belongs with
tests/test_graph_inference.py).  Independent answer: enumeration of every labelling."""

import itertools

import numpy as np
import pytest

from frankwolfe.applications.structured_svm.models.graph.graph_cut import alpha_expansion


def _brute_force(unary, pairwise, edges):
    n, K = unary.shape
    best = -np.inf
    for y in itertools.product(range(K), repeat=n):
        s = sum(unary[i, y[i]] for i in range(n)) + sum(
            pairwise[e][y[u], y[v]] for e, (u, v) in enumerate(edges))
        best = max(best, s)
    return best


@pytest.mark.parametrize("gain", [5e-4, 1e-6, 1e-9])
def test_a_small_improving_expansion_is_kept(gain):
    # start (the unary argmax) is (0, 1), score 2; the expansion on label 0 moves node 1
    # to 0 and gains w - 0.01 = `gain` (Potts reward w for agreeing)
    w = 0.01 + gain
    unary = np.array([[1.0, 0.99, 0.0], [0.99, 1.0, 0.0]])
    pairwise = np.array([w * np.eye(3)])
    edges = np.array([[0, 1]])
    r = alpha_expansion(unary, pairwise, edges)
    want = _brute_force(unary, pairwise, edges)
    assert want == pytest.approx(2.0 + gain, abs=1e-15)
    assert r.score == pytest.approx(want, abs=1e-14)
    assert r.labels[0] == r.labels[1]

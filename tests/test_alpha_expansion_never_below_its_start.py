"""Alpha-expansion's documented guarantee on non-submodular energies: the score never
falls below that of the unary argmax it starts from, nor rises above the optimum
(belongs with tests/test_graph_inference.py).  Independent answers: both scores written
out by hand, and enumeration of every labelling."""

import itertools

import numpy as np

from frankwolfe.applications.structured_svm.models.graph.graph_cut import alpha_expansion


def _score(u, p, edges, y):
    return sum(u[i, y[i]] for i in range(len(y))) + sum(
        p[e, y[a], y[b]] for e, (a, b) in enumerate(edges))


def test_alpha_expansion_is_between_its_start_and_the_optimum():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n, K = int(rng.integers(2, 6)), int(rng.integers(3, 5))
        edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n)
                          if rng.random() < 0.6] or [(0, 1)])
        u = rng.normal(size=(n, K))
        p = rng.normal(size=(len(edges), K, K)) * 2
        start = _score(u, p, edges, [int(np.argmax(u[i])) for i in range(n)])
        best = max(_score(u, p, edges, y) for y in itertools.product(range(K), repeat=n))
        r = alpha_expansion(u, p, edges)
        assert abs(r.score - _score(u, p, edges, r.labels)) <= 1e-9
        assert start - 1e-9 <= r.score <= best + 1e-9

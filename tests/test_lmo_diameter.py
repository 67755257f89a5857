"""LMO.diameter: an upper bound on the Euclidean diameter, checked against the vertices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frankwolfe import (
    LMO,
    Birkhoff,
    Box,
    FlowPolytope,
    Hypercube,
    KSparsePolytope,
    L1Ball,
    L2Ball,
    LinfBall,
    LpBall,
    NuclearNormBall,
    ProbabilitySimplex,
    ProductDomain,
    Spectrahedron,
    UnitSimplex,
)


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
        # fewer entries than k: the box [-r, r]^n, whose vertices the oracle answers
        (KSparsePolytope(6, r),
         [r * np.array(s) for s in itertools.product([-1.0, 1.0], repeat=n)]),
        (Birkhoff(3), [np.eye(3)[list(p)] for p in itertools.permutations(range(3))]),
        (Box([0.0, -1.0, 2.0, 0.5], [1.0, 1.0, 5.0, 0.5]),
         [np.where(m, [1.0, 1.0, 5.0, 0.5], [0.0, -1.0, 2.0, 0.5])
          for m in itertools.product([False, True], repeat=n)]),
        (Hypercube(dim=n), list(itertools.product([0.0, 1.0], repeat=n))),
        (LinfBall(r, dim=n), [r * np.array(s) for s in itertools.product([-1.0, 1.0], repeat=n)]),
    ]
    for dom, vertices in cases:
        d = dom.diameter((n,))
        assert d == pytest.approx(vertex_diameter(vertices), rel=1e-12), dom


def test_ball_product_and_unknown_diameters():
    assert L2Ball(0.5, dim=3).diameter() == pytest.approx(1.0, rel=1e-15)  # two antipodes
    prod = ProductDomain([ProbabilitySimplex(dim=3), L1Ball(2.0, dim=2)])
    assert prod.diameter() == pytest.approx(np.sqrt(2.0 + 16.0), rel=1e-15)
    assert Box(0.0, 1.0).diameter() is None  # scalar bounds, no dimension: unknown
    assert Box(0.0, 1.0).diameter((3,)) == pytest.approx(np.sqrt(3.0), rel=1e-15)

    class Mine(LMO):
        def extreme_point(self, direction):
            return -np.sign(direction)

    assert Mine().diameter() is None
    mixed = ProductDomain([Mine(), L1Ball(dim=2)], indices=[range(2), range(2, 4)])
    assert mixed.diameter() is None


def _largest_distance_seen(dom, shape, rng, draws=300):
    """Largest distance between LMO answers to random directions (a lower bound)."""
    pts = [np.ravel(dom(rng.standard_normal(shape)).to_dense()) for _ in range(draws)]
    pts += [-p for p in pts] if isinstance(dom, (LpBall, NuclearNormBall)) else []
    P = np.array(pts)
    sq = np.sum(P * P, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * P @ P.T
    return float(np.sqrt(max(d2.max(), 0.0)))


@pytest.mark.parametrize("p", [1.3, 2.0, 3.0, 7.5])
def test_lp_ball_diameter_is_attained_and_never_exceeded(p):
    n, r = 6, 1.7
    dom = LpBall(p, r, dim=n)
    d = dom.diameter()
    # attained by the points the docstring names, both feasible
    x = r * np.eye(n)[0] if p <= 2 else r * n ** (-1.0 / p) * np.ones(n)
    assert dom.violation(x) <= 1e-12 and dom.violation(-x) <= 1e-12
    assert np.linalg.norm(2 * x) == pytest.approx(d, rel=1e-12)
    seen = _largest_distance_seen(dom, (n,), np.random.default_rng(0))
    assert seen <= d * (1 + 1e-12)
    assert LpBall(p, r).diameter() == (None if p > 2 else pytest.approx(2 * r, rel=1e-15))
    if p > 2:
        assert LpBall(p, r).diameter((n,)) == pytest.approx(d, rel=1e-15)


def test_matrix_ball_diameters():
    rng = np.random.default_rng(1)
    nuc = NuclearNormBall(2.0, shape=(3, 4))
    assert nuc.diameter() == pytest.approx(4.0, rel=1e-15)
    assert _largest_distance_seen(nuc, (3, 4), rng) <= 4.0 * (1 + 1e-12)
    spec = Spectrahedron(1.5, dim=3)
    E = np.eye(3)
    pair = 1.5 * (np.outer(E[0], E[0]) - np.outer(E[1], E[1]))
    assert spec.diameter() == pytest.approx(np.linalg.norm(pair), rel=1e-12)
    assert _largest_distance_seen(spec, (3, 3), rng) <= spec.diameter() * (1 + 1e-12)
    assert Spectrahedron(2.0, dim=1).diameter() == 0.0


def test_flow_polytope_diameter_bounds_every_vertex_pair():
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph([(0, 1), (1, 3), (0, 2), (2, 3), (1, 2), (2, 4), (3, 4), (0, 4)])
    paths = [list(zip(p, p[1:])) for p in nx.all_simple_paths(G, 0, 4)]
    value = 2.5
    P = FlowPolytope(G, source=0, sink=4, value=value)
    assert P.method == "path"
    vertices = []
    for path in paths:
        v = np.zeros(P.n_edges)
        v[[P.edge_index[e] for e in path]] = value
        vertices.append(v)
    exact = vertex_diameter(vertices)
    longest = max(len(p) for p in paths)
    # the bound value * sqrt(2 L) holds, and is attained when two longest paths are edge-disjoint
    assert exact <= P.diameter() * (1 + 1e-12)
    assert P.diameter() == pytest.approx(value * np.sqrt(2 * longest), rel=1e-12)
    assert P.diameter() <= exact * np.sqrt(2.0) * (1 + 1e-12)
    # capacitated (LP oracle): vertices from many random costs stay within the bound
    C = FlowPolytope(G, supplies={0: 1.0, 4: -1.0}, capacity=0.6)
    assert C.method == "lp"
    seen = _largest_distance_seen(C, (C.n_edges,), np.random.default_rng(2), draws=60)
    assert 0.0 < seen <= C.diameter() * (1 + 1e-12)

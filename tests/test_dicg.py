"""Decomposition-invariant CG and the in-face oracles: against brute-force enumeration
of the vertices of each minimal face, and cvxpy's optimum."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest

from frankwolfe import (
    Birkhoff,
    Box,
    HyperSimplex,
    L1Ball,
    ProbabilitySimplex,
    QuadraticObjective,
    UnitHyperSimplex,
    UnitSimplex,
    decomposition_invariant_conditional_gradient,
    minimize,
)


def _vertices_and_constraints(name):
    """(domain, vertices as rows, inequality rows G, h with G x <= h, cvxpy constraints)."""
    if name == "simplex":
        n = 5
        V = 2.0 * np.eye(n)
        G, h = -np.eye(n), np.zeros(n)
        return ProbabilitySimplex(2.0, dim=n), V, G, h, lambda x: [x >= 0, cp.sum(x) == 2.0]
    if name == "unit_simplex":
        n = 5
        V = np.vstack([np.zeros(n), np.eye(n)])
        G, h = np.vstack([-np.eye(n), np.ones(n)]), np.r_[np.zeros(n), 1.0]
        return UnitSimplex(dim=n), V, G, h, lambda x: [x >= 0, cp.sum(x) <= 1.0]
    if name == "box":
        n = 5
        lo, up = np.array([-1.0, 0.0, 0.5, -2.0, 0.0]), np.array([1.0, 2.0, 1.5, -1.0, 0.3])
        V = np.array([np.where(bits, up, lo) for bits in itertools.product([0, 1], repeat=n)])
        G, h = np.vstack([-np.eye(n), np.eye(n)]), np.r_[-lo, up]
        return Box(lo, up), V, G, h, lambda x: [x >= lo, x <= up]
    if name == "hypersimplex":
        n, k = 6, 2
        V = np.array([np.isin(np.arange(n), c).astype(float)
                      for c in itertools.combinations(range(n), k)])
        G, h = np.vstack([-np.eye(n), np.eye(n)]), np.r_[np.zeros(n), np.ones(n)]
        return HyperSimplex(k, dim=n), V, G, h, \
            lambda x: [x >= 0, x <= 1, cp.sum(x) == k]
    if name == "unit_hypersimplex":
        n, k = 5, 2
        V = np.array([np.isin(np.arange(n), c).astype(float)
                      for j in range(k + 1) for c in itertools.combinations(range(n), j)])
        G = np.vstack([-np.eye(n), np.eye(n), np.ones((1, n))])
        h = np.r_[np.zeros(n), np.ones(n), float(k)]
        return UnitHyperSimplex(k, dim=n), V, G, h, \
            lambda x: [x >= 0, x <= 1, cp.sum(x) <= k]
    n = 4
    V = np.array([np.eye(n)[list(p)].reshape(-1) for p in itertools.permutations(range(n))])
    G, h = -np.eye(n * n), np.zeros(n * n)

    def cons(x):
        X = cp.reshape(x, (n, n), order="C")
        return [X >= 0, cp.sum(X, axis=0) == 1, cp.sum(X, axis=1) == 1]
    return Birkhoff(n), V, G, h, cons


DOMAINS = ["simplex", "unit_simplex", "box", "hypersimplex", "unit_hypersimplex", "birkhoff"]


def _random_face_point(rng, V):
    """A random convex combination of a few vertices (often on a proper face)."""
    m = int(rng.integers(1, min(4, len(V)) + 1))
    pick = rng.choice(len(V), size=m, replace=False)
    w = rng.dirichlet(np.ones(m))
    return w @ V[pick]


@pytest.mark.parametrize("name", DOMAINS)
def test_in_face_oracle_is_the_best_vertex_of_the_minimal_face(name):
    rng = np.random.default_rng(DOMAINS.index(name))
    dom, V, G, h, _ = _vertices_and_constraints(name)
    shape = (4, 4) if name == "birkhoff" else (V.shape[1],)
    for _ in range(60):
        x = _random_face_point(rng, V)
        c = rng.standard_normal(V.shape[1])
        tight = np.abs(G @ x - h) <= 1e-12
        in_face = np.all(np.abs(V @ G[tight].T - h[tight]) <= 1e-12, axis=1)
        best = float(np.min(V[in_face] @ c))
        atom = dom.in_face_extreme_point(x.reshape(shape), c.reshape(shape))
        a = atom.to_dense().reshape(-1)
        assert float(a @ c) == pytest.approx(best, abs=1e-12)
        # the answer is a vertex of that face
        assert np.any(np.all(np.abs(V[in_face] - a) <= 1e-12, axis=1))


@pytest.mark.parametrize("name", DOMAINS)
def test_max_step_is_the_exact_boundary(name):
    rng = np.random.default_rng(10 + DOMAINS.index(name))
    dom, V, G, h, _ = _vertices_and_constraints(name)
    shape = (4, 4) if name == "birkhoff" else (V.shape[1],)
    for _ in range(60):
        x = _random_face_point(rng, V)
        c = rng.standard_normal(V.shape[1])
        v = dom(c.reshape(shape)).to_dense().reshape(-1)
        a = dom.in_face_extreme_point(x.reshape(shape), -c.reshape(shape)).to_dense().reshape(-1)
        d = v - a
        gmax = dom.max_step(x.reshape(shape), d.reshape(shape))
        if not np.any(d):
            continue
        # the LP: the largest gamma with G (x + gamma d) <= h
        rows = G @ d > 1e-15
        ref = float(np.min((h[rows] - G[rows] @ x) / (G[rows] @ d))) if rows.any() else np.inf
        assert gmax == pytest.approx(ref, rel=1e-12, abs=1e-14)
        assert gmax >= 1.0 - 1e-12 or not np.allclose(x, a)  # from a vertex: all the way


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("variant", ["plain", "blended", "lazy"])
def test_dicg_reaches_the_cvxpy_optimum(seed, variant):
    rng = np.random.default_rng(seed)
    name = DOMAINS[seed % len(DOMAINS)]
    dom, V, G, h, cons = _vertices_and_constraints(name)
    d = V.shape[1]
    M = rng.standard_normal((d, d))
    Q, c = M.T @ M / d + 0.1 * np.eye(d), rng.standard_normal(d)
    x = cp.Variable(d)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons(x))
    prob.solve(solver=cp.CLARABEL)
    kw = {"plain": {}, "blended": {"blended": True},
          "lazy": {"blended": True, "lazy": True}}[variant]
    res = decomposition_invariant_conditional_gradient(QuadraticObjective(Q, c), dom, tol=1e-9,
                                                       max_iter=50000, **kw)
    assert res.status == "converged", res.message
    assert -1e-7 <= res.fun - prob.value <= res.gap + 1e-7
    assert dom.violation(res.x) <= 1e-10


def test_dicg_from_an_interior_start_and_by_name():
    rng = np.random.default_rng(5)
    M = rng.standard_normal((36, 36))
    f = QuadraticObjective(M.T @ M / 36 + np.eye(36), rng.standard_normal(36))
    # the barycentre: a point no active-set method could start from without a decomposition
    res = minimize(f, Birkhoff(), method="dicg", x0=np.full(36, 1.0 / 6), tol=1e-9)
    assert res.status == "converged" and res.method == "dicg"
    assert res.extra["n_in_face_calls"] >= res.nit  # one away vertex per iteration


def test_dicg_refuses_domains_without_an_in_face_oracle():
    f = QuadraticObjective(np.eye(4), np.ones(4))
    with pytest.raises(TypeError, match="in-face"):
        decomposition_invariant_conditional_gradient(f, L1Ball(1.0, dim=4))
    with pytest.raises(ValueError, match="blended"):
        decomposition_invariant_conditional_gradient(f, ProbabilitySimplex(dim=4), lazy=True)

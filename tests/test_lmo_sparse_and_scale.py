"""Domains at the edges of their input: scipy.sparse directions for oracles that work on
dense ones, directions far from 1 for the matrix decompositions, non-finite directions
for the duals, points of another shape with the domain's number of entries, and scalar
bounds with ``dim``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw

G = np.array([[3.0, 1.0, -2.0, 5.0, -4.0]])

VECTOR_DOMAINS = [
    fw.L1Ball(), fw.L2Ball(), fw.LinfBall(), fw.Hypercube(), fw.ProbabilitySimplex(),
    fw.UnitSimplex(), fw.HyperSimplex(2), fw.UnitHyperSimplex(2), fw.KSparsePolytope(2),
    fw.KNormBall(2), fw.LpBall(3.0), fw.ScaledL1Ball(-1.0, 2.0), fw.Box(-1.0, 2.0),
    fw.OrderedWeightedL1Ball([3.0, 2.0, 1.0, 1.0, 0.5]), fw.ConvexHull(np.eye(5)),
]


@pytest.mark.parametrize("dom", VECTOR_DOMAINS, ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("kind", [sp.csr_array, sp.csr_matrix, sp.coo_array])
def test_a_sparse_direction_gets_the_dense_directions_answer(dom, kind):
    """The value <g, v> of the answer (ties may pick another vertex) equals the dense
    direction's, and the answer is a point of the domain."""
    dense = dom(G).to_dense()
    for answer in (dom(kind(G)), dom.extreme_point(kind(G))):
        v = np.asarray(fw.Atom(answer).to_dense() if not isinstance(answer, fw.Atom)
                       else answer.to_dense())
        assert v.size == G.size
        assert np.vdot(G, v) == pytest.approx(np.vdot(G, dense), rel=1e-12, abs=1e-12)
        assert dom.violation(v.reshape(-1)) <= 1e-12


def test_hypersimplex_sparse_direction_takes_the_smallest_entry():
    # the independent answer: the smallest entry of G is -4 at index 4
    v = fw.HyperSimplex(1)(sp.csr_array(G)).to_dense()
    np.testing.assert_array_equal(v, [[0, 0, 0, 0, 1]])


def test_matrix_domains_still_take_sparse_directions_as_they_are():
    g = sp.random(60, 55, density=0.05, random_state=0, format="csr")
    s = np.linalg.svd(g.toarray(), compute_uv=False)[0]
    v = fw.NuclearNormBall()(g).to_dense()
    assert np.vdot(g.toarray(), v) == pytest.approx(-s, rel=1e-9)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e307])
@pytest.mark.parametrize("n", [51, 70])
def test_spectral_oracles_at_any_scale(scale, n):
    """Past the dense limit (ARPACK), a direction far from 1 gets the answer of the same
    direction at scale 1: the eigenvector of the smallest eigenvalue (numpy's eigh)."""
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    S = (A + A.T) / 2
    lo = np.linalg.eigvalsh(S)
    for dom, best in ((fw.Spectrahedron(), lo[0]), (fw.UnitSpectrahedron(), min(lo[0], 0.0)),
                      (fw.Fantope(2), lo[0] + lo[1])):
        X = dom(A * scale).to_dense()
        assert np.vdot(S, X) == pytest.approx(best, rel=1e-8, abs=1e-10)
        assert dom.violation(X) <= 1e-9


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_nuclear_norm_ball_at_any_scale(scale):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((60, 55))
    X = fw.NuclearNormBall()(A * scale).to_dense()
    top = np.linalg.svd(A, compute_uv=False)[0]
    assert np.vdot(A, X) == pytest.approx(-top, rel=1e-9)


def test_a_constant_tiny_direction_gives_a_point_of_the_spectrahedron():
    X = fw.Spectrahedron()(np.full((51, 51), 1e-300)).to_dense()
    assert np.trace(X) == pytest.approx(1.0, rel=1e-12)
    assert np.linalg.eigvalsh(X)[0] >= -1e-12
    assert abs(X.sum()) <= 1e-9  # the all-ones matrix's smallest eigenvalue is 0


@pytest.mark.parametrize("dom", [fw.Box(0.0, 1.0), fw.HyperSimplex(1), fw.UnitHyperSimplex(1),
                                 fw.ProbabilitySimplex(), fw.UnitSimplex(), fw.LinfBall()],
                         ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_dual_solutions_refuse_non_finite_directions(dom, bad):
    with pytest.raises(ValueError, match=r"`direction` must be finite, got .* at index 1"):
        dom.dual_solution([1.0, bad, 2.0])
    # and a finite one still gets its certificate: min over the domain of <d, x>
    d = np.array([1.0, -0.5, 2.0])
    assert dom.dual_solution(d).value == pytest.approx(np.vdot(d, dom(d).to_dense()),
                                                       abs=1e-12)


def test_answers_of_another_shape_with_the_domains_entries_are_feasible():
    D = fw.L1Ball(dim=6)
    a = D(np.arange(6.0).reshape(2, 3) - 2)
    assert a.shape == (2, 3) and D.is_feasible(a.to_dense())
    assert not D.is_feasible(np.zeros(5)) and not D.is_feasible(np.zeros((2, 2)))
    B = fw.Box(np.zeros((2, 3)), 1.0)
    assert B.is_feasible(B(np.ones(6)).to_dense())
    assert not B.is_feasible(np.full(6, 2.0))


def test_scaled_l1_ball_with_scalar_bounds_and_dim():
    D = fw.ScaledL1Ball(-1.0, 1.0, dim=3)
    assert D.is_feasible(np.zeros(3)) and D.is_feasible([0.5, -0.5, 0.0])
    assert not D.is_feasible(np.full(3, 0.5))  # gauge 1.5
    assert D.violation(np.full(3, 0.5)) == pytest.approx(0.5)
    with pytest.raises(fw.ShapeError, match=r"`x` has 4 entries, expected 3"):
        D.violation(np.zeros(4))
    # min 1/2 ||x - c||^2 with c inside: the optimum is c itself
    c = np.array([0.2, -0.1, 0.3])
    res = fw.frank_wolfe(fw.QuadraticObjective(np.eye(3), -c), D, x0=np.zeros(3), tol=1e-8)
    assert res.status == "converged"
    np.testing.assert_allclose(res.x, c, atol=1e-3)

"""Vector-domain LMOs: simplices, l1/l2/lp/linf balls, boxes, hypercube, k-sparse polytope.

Every answer is checked against something written here independently of the
oracle: the vertex set enumerated with itertools (small n), the closed-form
optimal value (Hölder's inequality and its polyhedral special cases), random
feasible points, and cvxpy.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import frankwolfe
from frankwolfe import (
    LMO,
    Box,
    FunctionObjective,
    Hypercube,
    InfeasibleError,
    KSparsePolytope,
    L1Ball,
    L2Ball,
    LinfBall,
    LpBall,
    OracleError,
    ProbabilitySimplex,
    ShapeError,
    UnitSimplex,
    frank_wolfe,
)

REL = 1e-12  # relative accuracy required of the optimal value


# -- independent descriptions of each domain ------------------------------------


def box_bounds(n: int, r: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the test box: varied widths, and a degenerate coordinate when n >= 3."""
    lo = r * (-1.5 + 0.7 * np.arange(n))
    up = lo + r * (1.0 + 0.3 * np.arange(n))
    if n >= 3:
        up[1] = lo[1]
    return lo, up


def lp_norm(x: np.ndarray, p: float) -> float:
    """||x||_p from its definition, scaled by max|x_i| so extreme entries are safe."""
    a = np.abs(np.ravel(x))
    m = a.max(initial=0.0)
    if m == 0:
        return 0.0
    return float(m * np.sum((a / m) ** p) ** (1.0 / p))


def top_k_abs_sum(g: np.ndarray, k: int) -> float:
    return float(np.sort(np.abs(g))[::-1][:k].sum())


@dataclass(frozen=True)
class Case:
    """A domain with independent oracles for feasibility, vertices and the optimal value."""

    name: str
    make: Callable[[int, float], LMO]
    feasible: Callable[[np.ndarray, float], bool]  # written from the set's definition
    value: Callable[[np.ndarray, float], float]  # closed-form min_{s in M} <g, s>
    vertices: Callable[[int, float], np.ndarray] | None  # rows; None for smooth balls
    p: float | None = None  # exponent for lp balls

    def __repr__(self) -> str:
        return self.name


def _tol(r: float) -> float:
    return 1e-12 * max(1.0, r)


def _ksparse_vertices(n: int, r: float, k: int) -> np.ndarray:
    # conv{||x||_0 <= k, ||x||_inf <= r}: the generating points are the sign patterns
    # of the box on each support of size <= k; enumerate them all.
    pts = [v for v in itertools.product((-r, 0.0, r), repeat=n) if np.count_nonzero(v) <= k]
    return np.array(pts)


def _box_vertices(n: int, r: float) -> np.ndarray:
    lo, up = box_bounds(n, r)
    return np.array(list(itertools.product(*zip(lo, up))))


CASES = [
    Case(
        "ProbabilitySimplex",
        lambda n, r: ProbabilitySimplex(r),
        lambda x, r: bool(x.min() >= -_tol(r) and abs(x.sum() - r) <= _tol(r)),
        lambda g, r: r * float(g.min()),
        lambda n, r: r * np.eye(n),
    ),
    Case(
        "UnitSimplex",
        lambda n, r: UnitSimplex(r),
        lambda x, r: bool(x.min() >= -_tol(r) and x.sum() <= r + _tol(r)),
        lambda g, r: r * min(float(g.min()), 0.0),
        lambda n, r: np.vstack([np.zeros(n), r * np.eye(n)]),
    ),
    Case(
        "L1Ball",
        lambda n, r: L1Ball(r),
        lambda x, r: bool(np.abs(x).sum() <= r + _tol(r)),
        lambda g, r: -r * float(np.abs(g).max()),
        lambda n, r: np.vstack([r * np.eye(n), -r * np.eye(n)]),
    ),
    Case(
        "LinfBall",
        lambda n, r: LinfBall(r),
        lambda x, r: bool(np.abs(x).max() <= r + _tol(r)),
        lambda g, r: -r * float(np.abs(g).sum()),
        lambda n, r: np.array(list(itertools.product((-r, r), repeat=n))),
    ),
    Case(
        "Box",
        lambda n, r: Box(*box_bounds(n, r)),
        lambda x, r: bool(np.all(x >= box_bounds(x.size, r)[0] - _tol(r))
                          and np.all(x <= box_bounds(x.size, r)[1] + _tol(r))),
        lambda g, r: float(np.minimum(g * box_bounds(g.size, r)[0],
                                      g * box_bounds(g.size, r)[1]).sum()),
        _box_vertices,
    ),
    Case(
        "BoxScalar",
        lambda n, r: Box(-0.5 * r, 2.0 * r),
        lambda x, r: bool(x.min() >= -0.5 * r - _tol(r) and x.max() <= 2 * r + _tol(r)),
        lambda g, r: float(np.minimum(-0.5 * r * g, 2.0 * r * g).sum()),
        lambda n, r: np.array(list(itertools.product((-0.5 * r, 2.0 * r), repeat=n))),
    ),
    Case(
        "Hypercube",
        lambda n, r: Hypercube(),
        lambda x, r: bool(x.min() >= 0.0 and x.max() <= 1.0),
        lambda g, r: float(np.minimum(g, 0.0).sum()),
        lambda n, r: np.array(list(itertools.product((0.0, 1.0), repeat=n))),
    ),
    Case(
        "KSparse2",
        lambda n, r: KSparsePolytope(2, r),
        lambda x, r: bool(np.abs(x).max() <= r + _tol(r) and np.abs(x).sum() <= 2 * r + _tol(r)),
        lambda g, r: -r * top_k_abs_sum(g, 2),
        lambda n, r: _ksparse_vertices(n, r, 2),
    ),
    Case(
        "KSparse3",
        lambda n, r: KSparsePolytope(3, r),
        lambda x, r: bool(np.abs(x).max() <= r + _tol(r) and np.abs(x).sum() <= 3 * r + _tol(r)),
        lambda g, r: -r * top_k_abs_sum(g, 3),
        lambda n, r: _ksparse_vertices(n, r, 3),
    ),
    Case(
        "L2Ball",
        lambda n, r: L2Ball(r),
        lambda x, r: lp_norm(x, 2.0) <= r * (1 + 1e-12),
        lambda g, r: -r * lp_norm(g, 2.0),
        None,
        p=2.0,
    ),
]
for _p in (1.1, 1.5, 3.0, 10.0):
    CASES.append(
        Case(
            f"LpBall{_p}",
            (lambda p: lambda n, r: LpBall(p, r))(_p),
            (lambda p: lambda x, r: lp_norm(x, p) <= r * (1 + 1e-12))(_p),
            (lambda p: lambda g, r: -r * lp_norm(g, p / (p - 1.0)))(_p),
            None,
            p=_p,
        )
    )
POLYTOPES = [c for c in CASES if c.vertices is not None]
BALLS = [c for c in CASES if c.vertices is None]
RADII = [1.0, 2.5, 1e-3]


def random_directions(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Generic, integer-valued (ties) and zero-containing directions."""
    return [
        rng.standard_normal(n),
        rng.standard_normal(n) * 1e3,
        rng.integers(-2, 3, n).astype(float),
        np.where(rng.random(n) < 0.5, 0.0, rng.standard_normal(n)),
    ]


def random_feasible_points(case: Case, n: int, r: float, rng: np.random.Generator,
                           m: int = 400) -> np.ndarray:
    """Points of the domain sampled from its definition, including boundary points."""
    u = rng.standard_normal((m, n))
    t = rng.random((m, 1))
    t[: m // 2] = 1.0  # half of them on the boundary, where the minimum lives
    name = case.name
    if name == "ProbabilitySimplex":
        return r * rng.dirichlet(np.ones(n), m)
    if name == "UnitSimplex":
        return r * t * rng.dirichlet(np.ones(n), m)
    if name == "L1Ball":
        return r * t * u / np.abs(u).sum(axis=1, keepdims=True)
    if name == "LinfBall":
        return r * np.clip(2 * u, -1, 1)
    if name == "Box":
        lo, up = box_bounds(n, r)
        return lo + (up - lo) * np.clip(rng.random((m, n)) * 1.4 - 0.2, 0, 1)
    if name == "BoxScalar":
        return -0.5 * r + 2.5 * r * np.clip(rng.random((m, n)) * 1.4 - 0.2, 0, 1)
    if name == "Hypercube":
        return np.clip(rng.random((m, n)) * 1.4 - 0.2, 0, 1)
    if name.startswith("KSparse"):
        k = int(name[-1])
        x = r * np.clip(2 * u, -1, 1)
        return x * np.minimum(1.0, k * r / np.abs(x).sum(axis=1, keepdims=True))
    p = case.p
    norms = np.array([lp_norm(row, p) for row in u])[:, None]
    return r * t * u / norms


def assert_optimal(case: Case, lmo: LMO, g: np.ndarray, r: float) -> np.ndarray:
    """Call the oracle, check feasibility (two ways) and the optimal value; return s."""
    atom = lmo(g)
    s = atom.to_dense()
    assert s.shape == g.shape
    assert case.feasible(s.ravel(), r), f"{case.name}: answer {s} infeasible"
    assert lmo.is_feasible(s)
    best = case.value(g.ravel(), r)
    scale = max(1.0, r * float(np.abs(g).sum()), abs(best))
    assert float(np.vdot(g, s)) <= best + REL * scale
    assert atom.dot(g) == pytest.approx(float(np.vdot(g, s)), rel=1e-12, abs=1e-300)
    return s


# -- optimality -----------------------------------------------------------------


@pytest.mark.parametrize("r", RADII)
@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_polytope_answer_is_an_optimal_vertex_by_enumeration(case: Case, r: float) -> None:
    rng = np.random.default_rng(0)
    for n in range(1, 7):
        lmo = case.make(n, r)
        verts = case.vertices(n, r)
        assert all(case.feasible(v, r) for v in verts)
        for g in random_directions(rng, n):
            s = assert_optimal(case, lmo, g, r)
            brute = float((verts @ g).min())
            assert float(g @ s) <= brute + REL * max(1.0, abs(brute))
            assert float(g @ s) >= brute - REL * max(1.0, abs(brute))
            # the answer is one of the enumerated vertices
            assert np.min(np.abs(verts - s).max(axis=1)) <= 1e-15 * max(1.0, r)


@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_polytope_keys_identify_vertices(case: Case) -> None:
    rng = np.random.default_rng(1)
    n, r = 5, 1.5
    lmo = case.make(n, r)
    seen: dict = {}
    for _ in range(300):
        g = rng.integers(-2, 3, n).astype(float) * rng.random()
        atom = lmo(g)
        hash(atom.key)
        v = tuple(atom.to_dense())
        if atom.key in seen:
            assert seen[atom.key] == v
        seen[atom.key] = v
    # different vectors have different keys
    assert len(set(seen.values())) == len(seen)


@pytest.mark.parametrize("r", RADII)
@pytest.mark.parametrize("case", BALLS, ids=repr)
def test_ball_answer_attains_hoelder_bound_and_beats_random_points(case: Case, r: float) -> None:
    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 7, 50):
        lmo = case.make(n, r)
        pts = random_feasible_points(case, n, r, rng)
        assert all(case.feasible(x, r) for x in pts)
        for g in random_directions(rng, n):
            if not g.any():
                continue
            s = assert_optimal(case, lmo, g, r)
            q = case.p / (case.p - 1.0)
            hoelder = -r * float(np.sum(np.abs(g) ** q) ** (1.0 / q))
            assert float(g @ s) == pytest.approx(hoelder, rel=REL)
            assert lp_norm(s, case.p) == pytest.approx(r, rel=1e-13)  # on the sphere
            assert float(g @ s) <= float((pts @ g).min()) + REL * r * np.abs(g).sum()


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_large_n_against_closed_form_and_random_feasible_points(case: Case) -> None:
    rng = np.random.default_rng(3)
    n, r = 300, 1.7
    lmo = case.make(n, r)
    pts = random_feasible_points(case, n, r, rng)
    assert all(case.feasible(x, r) for x in pts)
    for g in random_directions(rng, n):
        s = assert_optimal(case, lmo, g, r)
        assert float(g @ s) == pytest.approx(case.value(g, r), rel=REL, abs=REL * r)
        assert float(g @ s) <= float((pts @ g).min()) + REL * r * np.abs(g).sum()


@settings(max_examples=40, deadline=None)
@given(
    g=arrays(np.float64, st.integers(1, 6),
             elements=st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)),
    r=st.sampled_from([0.3, 1.0, 7.0]),
)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_property_optimal_over_random_directions(case: Case, g: np.ndarray, r: float) -> None:
    n = g.size
    lmo = case.make(n, r)
    s = assert_optimal(case, lmo, g, r)
    if case.vertices is not None:
        brute = float((case.vertices(n, r) @ g).min())
        assert float(g @ s) <= brute + REL * max(1.0, abs(brute), r * np.abs(g).sum())
    elif g.any():
        q = case.p / (case.p - 1.0)
        assert float(g @ s) == pytest.approx(-r * lp_norm(g, q), rel=1e-11)


def test_cvxpy_agrees_on_lp_ball_and_k_sparse_polytope() -> None:
    rng = np.random.default_rng(4)
    n, r = 25, 2.0
    g = rng.standard_normal(n)
    x = cp.Variable(n)
    for p in (1.5, 3.0):
        prob = cp.Problem(cp.Minimize(g @ x), [cp.pnorm(x, p) <= r])
        prob.solve(solver=cp.CLARABEL)
        s = LpBall(p, r)(g).to_dense()
        assert float(g @ s) == pytest.approx(prob.value, rel=1e-6)
        # the oracle is exact, the solver is accurate to about 1e-8
        assert float(g @ s) <= prob.value + 1e-8 * max(1.0, abs(prob.value))
    k = 4
    prob = cp.Problem(cp.Minimize(g @ x), [cp.norm1(x) <= k * r, cp.norm_inf(x) <= r])
    prob.solve(solver=cp.HIGHS)
    s = KSparsePolytope(k, r)(g).to_dense()
    assert float(g @ s) == pytest.approx(prob.value, rel=1e-9)
    assert np.count_nonzero(s) == k


# -- numerics -------------------------------------------------------------------


@pytest.mark.parametrize("p", [1.0 + 1e-9, 1.001, 1.5, 2.0, 7.0, 1e3, 1e8])
@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_lp_ball_extreme_exponents_and_magnitudes(p: float, scale: float) -> None:
    rng = np.random.default_rng(5)
    g = rng.standard_normal(40) * scale
    g[3] = 0.0
    g[7] = scale * 1e-8  # a tiny entry next to huge ones
    r = 3.0
    lmo = L2Ball(r) if p == 2.0 else LpBall(p, r)
    s = lmo(g).to_dense()  # RuntimeWarnings from frankwolfe are errors (pyproject)
    assert np.all(np.isfinite(s))
    assert lp_norm(s, p) <= r * (1 + 1e-12)
    q = p / (p - 1.0)
    val = float(np.dot(g / scale, s)) * scale  # <g, s> without over/underflow
    bound = -r * lp_norm(g, q)
    assert val >= bound * (1 + 1e-12)  # Hölder: nothing beats the bound
    assert val == pytest.approx(bound, rel=1e-9)


def test_lp_ball_limits_approach_l1_and_linf_vertices() -> None:
    g = np.array([0.5, -2.0, 1.0])
    # p -> inf: the answer tends to -sign(g) (LinfBall); p -> 1: to the L1Ball vertex
    assert np.allclose(LpBall(1e9)(g).to_dense(), -np.sign(g), atol=1e-6)
    assert np.allclose(LpBall(1 + 1e-9)(g).to_dense(), [0.0, 1.0, 0.0], atol=1e-12)


def test_subnormal_direction_on_l2_ball() -> None:
    s = L2Ball(5.0)(np.array([3e-310, -4e-310])).to_dense()
    assert np.allclose(s, [-3.0, 4.0], rtol=1e-10)


@pytest.mark.parametrize("lmo", [L2Ball(), LpBall(3.0)], ids=repr)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_direction_is_refused_by_smooth_balls(lmo: LMO, bad: float) -> None:
    with pytest.raises(ValueError, match="`direction` must be finite"):
        lmo(np.array([1.0, bad]))


# -- zero direction and ties ----------------------------------------------------


def test_zero_direction_answers() -> None:
    z = np.zeros(4)
    for lmo in (L2Ball(2.0), LpBall(3.0, 2.0)):
        a = lmo(z)
        assert a.key == ("zero",) and not a.to_dense().any()
    assert np.array_equal(ProbabilitySimplex(2.0)(z).to_dense(), [2.0, 0, 0, 0])
    assert UnitSimplex()(z).key == ("zero",)
    assert np.array_equal(L1Ball(2.0)(z).to_dense(), [2.0, 0, 0, 0])
    assert np.array_equal(LinfBall(2.0)(z).to_dense(), [-2.0] * 4)
    assert np.array_equal(Box([0, 1, 2, 3], [5, 5, 5, 5])(z).to_dense(), [0, 1, 2, 3])
    a = Hypercube()(z)
    assert a.key == Box(0.0, 1.0)(z).key and a.nnz == 0
    s = KSparsePolytope(2, 1.5)(z).to_dense()  # still a vertex: k entries at +radius
    assert sorted(s) == [0, 0, 1.5, 1.5]


def test_tie_breaking_rules_documented() -> None:
    g = np.array([1.0, -1.0, 1.0, 0.0])
    assert L1Ball()(g).key == ("e", 0, -1)  # smallest index among max |g_i|
    assert ProbabilitySimplex()(np.array([2.0, -1.0, -1.0])).key == ("e", 1)
    assert UnitSimplex()(np.array([2.0, 0.0, 3.0])).key == ("zero",)  # tie 0 vs e_1
    assert np.array_equal(Box(-1.0, 2.0)(g).to_dense(), [-1.0, 2.0, -1.0, -1.0])  # g=0 -> lower
    assert np.array_equal(Hypercube()(g).indices, [1])
    a = KSparsePolytope(2)(np.array([3.0, -3.0, 3.0, 1.0]))
    assert a.dot(np.array([3.0, -3.0, 3.0, 1.0])) == -6.0
    assert len(a.key) == 2 and all(i in (0, 1, 2) for i, _ in a.key)


def test_degenerate_box_coordinate_has_one_key() -> None:
    box = Box([0.0, 1.0], [2.0, 1.0])
    a, b = box(np.array([1.0, 1.0])), box(np.array([1.0, -1.0]))
    assert np.array_equal(a.to_dense(), b.to_dense()) and a.key == b.key
    c = box(np.array([-1.0, 1.0]))
    assert c.key != a.key


# -- atoms, shapes, debug mode ---------------------------------------------------


def test_sparse_atoms_where_the_vertex_is_sparse() -> None:
    g = np.random.default_rng(6).standard_normal(1000)
    for lmo, nnz in ((L1Ball(), 1), (ProbabilitySimplex(), 1), (KSparsePolytope(7), 7),
                     (Hypercube(), int((g < 0).sum()))):
        a = lmo(g)
        assert a.is_sparse and a.nnz == nnz
    k = KSparsePolytope(3)(np.array([0.0, 5.0, -1.0, 4.0, -6.0]))
    assert k.key == ((1, -1), (3, -1), (4, 1))
    assert np.array_equal(k.to_dense(), [0, -1, 0, -1, 1])


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_matrix_directions_are_flattened(case: Case) -> None:
    g = np.random.default_rng(7).standard_normal((3, 4))
    lmo = case.make(12, 1.3)
    a, b = lmo(g), lmo(g.ravel())
    assert a.shape == (3, 4)
    assert np.array_equal(a.to_dense().ravel(), b.to_dense())
    assert a.key == b.key or case.vertices is None  # smooth balls key on shape + bytes


def test_box_with_matrix_bounds() -> None:
    lo = -np.arange(6.0).reshape(2, 3)
    box = Box(lo, 1.0)
    assert box.shape == (2, 3)
    g = np.array([[1.0, -1.0, 0.0], [-2.0, 3.0, 1.0]])
    assert np.array_equal(box(g).to_dense(), np.where(g < 0, 1.0, lo))
    assert box.is_feasible(np.zeros((2, 3))) and not box.is_feasible(np.zeros(5))
    # six entries in another shape are taken flat, as the oracle takes directions (and
    # answers a flat direction with a flat point)
    assert box.is_feasible(np.zeros(6)) and box.is_feasible(box(g.ravel()).to_dense())
    assert not box.is_feasible(np.full(6, 2.0))


@pytest.mark.parametrize("lmo", [L2Ball(dim=3), LpBall(3, dim=3), LinfBall(dim=3),
                                 Box([0, 0, 0], 1), Hypercube(3), KSparsePolytope(2, dim=3),
                                 L1Ball(dim=3), ProbabilitySimplex(dim=3), UnitSimplex(dim=3)],
                         ids=repr)
def test_direction_of_wrong_size_is_refused(lmo: LMO) -> None:
    with pytest.raises(ShapeError, match=r"`direction` has shape \(4,\).*expected 3 entries"):
        lmo(np.ones(4))
    assert lmo.initial_point().shape == (3,)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_debug_mode_checks_every_answer(case: Case) -> None:
    rng = np.random.default_rng(8)
    lmo = case.make(6, 2.0)
    with frankwolfe.debug(True):
        for _ in range(20):
            lmo(rng.standard_normal(6) * 10.0 ** rng.integers(-8, 8))

    class Broken(type(lmo)):  # answers twice the vertex: outside every domain here
        def extreme_point(self, direction):
            s = super().extreme_point(direction).to_dense()
            return 2.0 * s + (0.0 if s.any() else 1.0)

    broken = Broken.__new__(Broken)
    broken.__dict__.update(lmo.__dict__)
    with frankwolfe.debug(True), pytest.raises(OracleError, match="outside its domain"):
        broken(np.array([1.0, -2.0, 0.5, 3.0, -1.0, 0.2]))


# -- feasibility, violation, repr, bad arguments ---------------------------------


@pytest.mark.parametrize("lmo, inside, outside, viol", [
    (ProbabilitySimplex(2.0), [0.5, 1.5], [0.5, 1.6], 0.05),
    (UnitSimplex(2.0), [0.5, 1.0], [-0.2, 1.0], 0.1),
    (L1Ball(2.0), [1.0, -1.0], [1.0, -1.2], 0.1),
    (L2Ball(5.0), [3.0, -4.0], [3.0, -4.0 * 1.1], None),
    (LpBall(3.0, 2.0), [2.0, 0.0], [2.0, 1.0], None),
    (LinfBall(2.0), [2.0, -2.0], [2.0, -2.5], 0.25),
    (Box([0.0, -1.0], [1.0, 3.0]), [1.0, 3.0], [1.0, 3.4], 0.1),
    (Hypercube(), [1.0, 0.0], [1.0, -0.5], 0.5),
    (KSparsePolytope(1, 2.0), [1.0, -1.0], [2.0, -1.0], 0.5),
    (KSparsePolytope(2, 2.0), [2.0, -2.0], [2.2, 0.0], 0.1),
], ids=repr)
def test_is_feasible_and_relative_violation(lmo, inside, outside, viol) -> None:
    assert lmo.is_feasible(np.array(inside)) and lmo.violation(np.array(inside)) == 0.0
    assert not lmo.is_feasible(np.array(outside))
    if viol is not None:
        assert lmo.violation(np.array(outside)) == pytest.approx(viol, rel=1e-12)
    assert not lmo.is_feasible(np.array([np.nan, 0.0]))
    assert lmo.violation(np.array([np.inf, 0.0])) == np.inf


def test_smooth_ball_violations_are_relative() -> None:
    assert L2Ball(1000.0).violation(np.array([0.0, 1010.0])) == pytest.approx(0.01, rel=1e-12)
    x = np.array([1e200, 1e200])  # ||x||_3 = 2^(1/3) 1e200 without overflow
    assert LpBall(3.0, 1e200).violation(x) == pytest.approx(2 ** (1 / 3) - 1, rel=1e-12)
    assert L2Ball(dim=2).is_feasible(np.zeros(2)) and not L2Ball(dim=2).is_feasible(np.zeros(3))


def test_repr() -> None:
    assert repr(L2Ball(2.0, dim=3)) == "L2Ball(radius=2.0, dim=3)"
    assert repr(LpBall(3)) == "LpBall(p=3.0, radius=1.0)"
    assert repr(LinfBall()) == "LinfBall(radius=1.0)"
    assert repr(Box(0, 1, dim=2)) == "Box(lower=0.0, upper=1.0, dim=2)"
    assert repr(Box([0, 1], 2)) == "Box(lower=array([0., 1.]), upper=array([2., 2.]))"
    assert repr(Box(np.arange(10.0), 9)) == (
        "Box(lower=array(shape=(10,), min=0, max=9), upper=array(shape=(10,), min=9, max=9))"
    )
    assert repr(Hypercube()) == "Hypercube()" and repr(Hypercube(4)) == "Hypercube(dim=4)"
    assert repr(KSparsePolytope(2, dim=5)) == "KSparsePolytope(k=2, radius=1.0, dim=5)"
    assert repr(L1Ball(3.0)) == "L1Ball(radius=3.0)"
    assert repr(ProbabilitySimplex(dim=4)) == "ProbabilitySimplex(radius=1.0, dim=4)"
    assert repr(UnitSimplex()) == "UnitSimplex(radius=1.0)"


@pytest.mark.parametrize("make, err, fragment", [
    (lambda: ProbabilitySimplex(-1.0), ValueError, "ProbabilitySimplex: `radius` must be positive"),
    (lambda: UnitSimplex(0.0), ValueError, "UnitSimplex: `radius` must be positive"),
    (lambda: L1Ball(np.inf), ValueError, "L1Ball: `radius` must be positive and finite, got inf"),
    (lambda: L2Ball(-2.0), ValueError, "L2Ball: `radius` must be positive and finite, got -2.0"),
    (lambda: L2Ball("big"), ValueError, "got 'big'"),
    (lambda: L2Ball(dim=0), ValueError, "L2Ball: `dim` must be a positive integer, got 0"),
    (lambda: L1Ball(dim=2.5), ValueError, "`dim` must be a positive integer, got 2.5"),
    (lambda: LpBall(3.0, radius=np.nan), ValueError, "LpBall: `radius` must be positive"),
    (lambda: LpBall(1), ValueError, "use L1Ball for p = 1"),
    (lambda: LpBall(np.inf), ValueError, "use LinfBall (or Box) for p = inf"),
    (lambda: LpBall(0.5), ValueError, "got 0.5 (p < 1 is not a norm ball)"),
    (lambda: LpBall(np.nan), ValueError, "`p` must satisfy 1 < p < inf"),
    (lambda: LpBall("two"), ValueError, "`p` must be a number"),
    (lambda: LinfBall(0), ValueError, "LinfBall: `radius` must be positive"),
    (lambda: Box(1.0, 0.0), ValueError, "Box: `lower` must be <= `upper`, got lower=1 > upper=0"),
    (lambda: Box([0, 2], [1, 1]), ValueError, "lower=2 > upper=1 at flat index 1"),
    (lambda: Box(0, np.inf), ValueError, "Box: `upper` must be finite"),
    (lambda: Box([np.nan, 0], 1), ValueError, "Box: `lower` must be finite"),
    (lambda: Box([0, 0], [1, 1, 1]), ShapeError, "do not broadcast"),
    (lambda: Box([0, 0], 1, dim=3), ShapeError, "`dim`=3 does not match the bounds' shape (2,)"),
    (lambda: Box([], 1.0), ShapeError, "must not be empty, got shape (0,)"),
    (lambda: Box("a", 1), ValueError, "Box: `lower` must be a number or an array of numbers"),
    (lambda: Box(0, 1, dim=-1), ValueError, "Box: `dim` must be a positive integer"),
    (lambda: Hypercube(dim=0), ValueError, "Hypercube: `dim` must be a positive integer"),
    (lambda: KSparsePolytope(0), ValueError, "`k` must be a positive integer, got 0"),
    (lambda: KSparsePolytope(2.5), ValueError, "`k` must be a positive integer, got 2.5"),
    (lambda: KSparsePolytope(5, dim=3), ValueError, "`k` must be <= `dim`=3, got k=5"),
    (lambda: KSparsePolytope(2, radius=-1), ValueError, "KSparsePolytope: `radius` must be"),
])
def test_invalid_arguments(make, err, fragment) -> None:
    with pytest.raises(err) as info:
        make()
    assert fragment in str(info.value)


def test_k_larger_than_direction_gives_the_box_vertex() -> None:
    g = np.array([1.0, -2.0, 0.5])
    assert np.array_equal(KSparsePolytope(10, 2.0)(g).to_dense(), [-2.0, 2.0, -2.0])


# -- in a solver ------------------------------------------------------------------


@pytest.mark.parametrize("lmo, project", [
    (L2Ball(2.0), lambda y: y * min(1.0, 2.0 / np.linalg.norm(y))),
    (Box(np.linspace(-1, 0, 8), 1.0), lambda y: np.clip(y, np.linspace(-1, 0, 8), 1.0)),
    (Hypercube(), lambda y: np.clip(y, 0.0, 1.0)),
    (LinfBall(0.5), lambda y: np.clip(y, -0.5, 0.5)),
], ids=["L2Ball", "Box", "Hypercube", "LinfBall"])
def test_frank_wolfe_projection_matches_closed_form(lmo, project) -> None:
    y = np.random.default_rng(9).standard_normal(8) * 2.0
    f = FunctionObjective(
        lambda x: 0.5 * float((x - y) @ (x - y)), lambda x: x - y, smoothness=1.0,
        exact_step=lambda x, d, g: -float(g @ d) / float(d @ d), shape=8,
    )
    res = frank_wolfe(f, lmo, tol=1e-10, max_iter=20000)
    # 1-strong convexity: ||x - x*||^2 / 2 <= f(x) - f* <= gap
    assert np.linalg.norm(res.x - project(y)) <= np.sqrt(2 * res.gap) + 1e-12
    assert res.gap <= 1e-10
    assert lmo.is_feasible(res.x)


def test_infeasible_start_is_reported() -> None:
    f = FunctionObjective(lambda x: float(x @ x), lambda x: 2 * x, shape=3)
    with pytest.raises(InfeasibleError):
        frank_wolfe(f, L2Ball(1.0), x0=np.array([1.0, 1.0, 0.0]))


def test_an_integer_radius_of_a_simplex_without_dim_warns_it_is_a_radius():
    """ProbabilitySimplex(5) is the simplex whose coordinates sum to 5, not the simplex in
    dimension 5: the likely slip is named, and a float radius or dim= says what is meant."""
    import warnings

    for cls in (ProbabilitySimplex, UnitSimplex):
        with pytest.warns(UserWarning, match=rf"{cls.__name__}\(5\): the first argument is "
                                             rf"the radius .* {cls.__name__}\(dim=5\)"):
            lmo = cls(5)
        assert lmo.radius == 5.0 and lmo.shape is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cls(5.0), cls(1), cls(dim=5), cls(3, dim=4), cls(np.float64(2))

"""Fully corrective Frank-Wolfe on a quadratic declared convex that is not.

The corrective QP's active-set method takes the stationary point of each face for its
minimizer; on an indefinite face that is a saddle or a maximum.  The concave quadratic
below (f* = -0.4 at e_0) stalled at its start with a lower bound of 0 > f*, where every
other method raised NonConvexError: the QP now measures the curvature of the faces it
works on and refuses the negative one the same way.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms import simplex_qp as qp_module
from frankwolfe.algorithms.simplex_qp import simplex_qp

C5 = np.array([0.1, 0.2, 0.3, 0.4, 0.5])


def _true_minimum(Q: np.ndarray, c: np.ndarray) -> float:
    """min 1/2 x^T Q x + c^T x over the simplex, any symmetric Q: the minimizer is a
    stationary point of the affine hull of its support, so every face's stationary
    point that lies in the face is a candidate (2^n - 1 faces; Q is generic, so each
    face's KKT system is regular)."""
    n = c.size
    best = np.inf
    for size in range(1, n + 1):
        for face in itertools.combinations(range(n), size):
            F = list(face)
            K = np.zeros((size + 1, size + 1))
            K[:size, :size] = Q[np.ix_(F, F)]
            K[:size, size] = K[size, :size] = 1.0
            z = np.linalg.solve(K, np.append(-c[F], 1.0))[:size]
            if z.min() >= -1e-12:
                x = np.zeros(n)
                x[F] = z
                best = min(best, 0.5 * x @ Q @ x + c @ x)
    return best


def _hull_curvature(Q: np.ndarray, F: np.ndarray) -> float:
    """Least eigenvalue of Q on the directions of the face F (sum zero)."""
    Z = np.vstack([np.eye(F.size - 1), -np.ones(F.size - 1)])
    return float(np.linalg.eigvalsh(Z.T @ Q[np.ix_(F, F)] @ Z)[0])


def _indefinite(seed: int, n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """A symmetric Q with one eigenvalue of -3 (the others in [0.5, 2]) whose negative
    curvature shows on the simplex's hull, and a linear term of the same size."""
    rng = np.random.default_rng(seed)
    while True:
        U, _ = np.linalg.qr(rng.standard_normal((n, n)))
        ev = rng.uniform(0.5, 2.0, n)
        ev[0] = -3.0
        Q = U @ np.diag(ev) @ U.T
        Q = 0.5 * (Q + Q.T)
        if _hull_curvature(Q, np.arange(n)) < -0.5:
            return Q, 0.5 * rng.standard_normal(n)


# -- the audit's example --------------------------------------------------------------


@pytest.mark.parametrize("corrective_solver", ["auto", "qp", "cvxpy"])
def test_concave_quadratic_raises_for_every_corrective_solver(corrective_solver):
    if corrective_solver == "cvxpy":
        pytest.importorskip("cvxpy")
    f = fw.QuadraticObjective(-np.eye(5), C5)  # concave, convex=True by default
    with pytest.raises(fw.NonConvexError, match="negative curvature") as info:
        fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=5), x0=np.full(5, 0.2),
                                        corrective=corrective_solver)
    assert "declared convex" in str(info.value) and "convex=False" in str(info.value)
    assert info.value.result.status == "error"


def test_the_message_is_that_of_the_other_methods():
    f = fw.QuadraticObjective(-np.eye(5), C5)
    messages = []
    for method in ("fcfw", "away", "pairwise"):
        with pytest.raises(fw.NonConvexError) as info:
            fw.minimize(f, fw.ProbabilitySimplex(dim=5), x0=np.full(5, 0.2), method=method)
        messages.append(str(info.value).split(" = ")[0])
    assert len(set(messages)) == 1
    assert messages[0] == "QuadraticObjective: negative curvature d^T H d"


def test_declared_non_convex_descends_instead_of_stalling_at_a_maximum():
    # the stationary point of the start's face is the maximum of f on the simplex's hull
    f = fw.QuadraticObjective(-np.eye(5), C5, convex=False)
    res = fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=5), x0=np.full(5, 0.2))
    assert res.status == "converged"
    assert res.fun == pytest.approx(-0.4, abs=1e-12)
    assert res.dual_bound == -np.inf


# -- concave and indefinite quadratics -------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_concave_quadratics_raise_from_any_start_that_moves(seed):
    # concave: every face has negative curvature, f* is the best vertex.  Starts: the
    # barycentre, a random interior point, and each vertex whose gap is positive (a
    # vertex with gap <= 0 is a local minimum where no method can see the curvature)
    rng = np.random.default_rng(seed)
    n = 5
    M = rng.standard_normal((n, n))
    Q = -(M @ M.T / n + 0.2 * np.eye(n))
    c = rng.standard_normal(n)
    f = fw.QuadraticObjective(Q, c)
    starts = [np.full(n, 1.0 / n), rng.dirichlet(np.ones(n))]
    for i in range(n):
        g = Q[:, i] + c
        if g[i] - g.min() > 1e-9:
            starts.append(np.eye(n)[i])
    assert len(starts) > 2
    for x0 in starts:
        with pytest.raises(fw.NonConvexError, match="negative curvature"):
            fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=n), x0=x0)


@pytest.mark.parametrize("seed", range(8))
def test_indefinite_quadratics_never_certify_a_bound_above_the_minimum(seed):
    # from a start in the simplex's interior the QP's first face is the whole simplex,
    # where Q has negative curvature: the run must refuse it (and must never return a
    # lower bound above the true minimum, found face by face)
    Q, c = _indefinite(seed)
    n = c.size
    f_star = _true_minimum(Q, c)
    rng = np.random.default_rng(100 + seed)
    for x0 in (np.full(n, 1.0 / n), rng.dirichlet(np.ones(n))):
        try:
            res = fw.fully_corrective_frank_wolfe(fw.QuadraticObjective(Q, c),
                                                  fw.ProbabilitySimplex(dim=n), x0=x0)
        except fw.NonConvexError:
            continue
        assert res.dual_bound <= f_star + 1e-9, (res.status, res.fun, res.dual_bound, f_star)
        pytest.fail(f"no NonConvexError from an indefinite start face (f* = {f_star})")


@pytest.mark.parametrize("seed", range(8))
def test_indefinite_quadratics_from_a_face_raise_when_the_face_is_indefinite(seed):
    Q, c = _indefinite(seed)
    n = c.size
    rng = np.random.default_rng(200 + seed)
    F = np.sort(rng.choice(n, 4, replace=False))
    x0 = np.zeros(n)
    x0[F] = rng.dirichlet(np.ones(F.size))
    f = fw.QuadraticObjective(Q, c)
    if _hull_curvature(Q, F) < -1e-6:
        with pytest.raises(fw.NonConvexError):
            fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=n), x0=x0)
        return
    try:  # a convex face: the run may end at a local minimum no local method tells apart
        res = fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=n), x0=x0)
    except fw.NonConvexError:
        return
    F_end = np.flatnonzero(res.x > 0)
    assert F_end.size == 1 or _hull_curvature(Q, F_end) >= -1e-9  # not a saddle


# -- the QP itself ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_simplex_qp_never_returns_a_saddle_of_its_face(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 16))
    U, _ = np.linalg.qr(rng.standard_normal((k, k)))
    ev = rng.uniform(0.1, 2.0, k)
    ev[: 1 + seed % 2] = -rng.uniform(0.1, 3.0, 1 + seed % 2)
    G = U @ np.diag(ev) @ U.T
    G = 0.5 * (G + G.T)
    lin = rng.standard_normal(k)
    w0 = None if seed % 3 == 0 else rng.dirichlet(np.ones(k))
    try:
        w, _ = simplex_qp(G, lin, w0)
    except fw.NonConvexError as err:
        assert "`G` is not positive semidefinite" in str(err)
        return
    F = np.flatnonzero(w > 0)
    assert F.size == 1 or _hull_curvature(G, F) >= -1e-9


def test_simplex_qp_refuses_negative_curvature_on_its_start_face():
    # the start's face is the whole simplex, whose stationary point is f's maximum there
    with pytest.raises(fw.NonConvexError, match="`G` is not positive semidefinite"):
        simplex_qp(-np.eye(5), C5, np.full(5, 0.2))
    with pytest.raises(fw.NonConvexError, match="`G` is not positive semidefinite"):
        simplex_qp(-0.1 * np.eye(5), C5, np.eye(5)[4])  # from a vertex: along the first step


@pytest.mark.parametrize("seed", range(12))
def test_simplex_qp_semidefinite_is_no_negative_curvature(seed):
    # rank-deficient Gram matrices at every scale, from interior starts (a factorized
    # start face): their zero curvature, to rounding, is no negative curvature
    rng = np.random.default_rng(seed)
    k = 20
    B = rng.standard_normal((k, 1 + seed % 5)) * 10.0 ** (seed % 4 - 2)
    G = B @ B.T
    lin = rng.standard_normal(k) * 10.0 ** (seed % 3 - 1)
    w, _ = simplex_qp(G, lin, rng.dirichlet(np.ones(k)))
    grad = G @ w + lin
    assert grad.min() >= grad @ w - 1e-9 * (np.abs(grad).max() + 1.0)  # KKT


# -- convex problems: unchanged -----------------------------------------------------------


def _cvxpy_minimum(Q: np.ndarray, c: np.ndarray) -> float:
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(c.size, nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x),
                      [cp.sum(x) == 1])
    prob.solve(solver="CLARABEL")
    return float(prob.value)


@pytest.mark.parametrize("rank", [3, 30])
@pytest.mark.parametrize("interior", [False, True])
def test_convex_quadratics_match_cvxpy(rank, interior):
    rng = np.random.default_rng(rank)
    n = 30
    B = rng.standard_normal((n, rank))
    Q = B @ B.T / rank
    c = rng.standard_normal(n)
    ref = _cvxpy_minimum(Q, c)
    x0 = np.full(n, 1.0 / n) if interior else None
    res = fw.fully_corrective_frank_wolfe(fw.QuadraticObjective(Q, c),
                                          fw.ProbabilitySimplex(dim=n), x0=x0, tol=1e-10)
    assert res.status == "converged"
    assert res.fun == pytest.approx(ref, abs=1e-7)
    assert res.dual_bound <= ref + 1e-7


def test_a_convex_run_checks_only_along_its_steps(monkeypatch):
    # the warm-started solves start on the face the last one checked: no factorization
    # of a face after the first, one product with G per face grown
    faces = []
    real = qp_module._is_concave

    def counted(G, F, negative, d=None):
        if d is None:  # a face's check, not a step's
            faces.append(F.size)
        return real(G, F, negative, d)

    monkeypatch.setattr(qp_module, "_is_concave", counted)
    rng = np.random.default_rng(7)
    n = 60
    B = rng.standard_normal((n, 20))
    Q = B @ B.T / 20 + 1e-3 * np.eye(n)
    f = fw.QuadraticObjective(Q, -Q @ rng.dirichlet(np.ones(n)))  # an interior optimum
    res = fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=n), tol=1e-10)
    assert res.status == "converged" and res.extra["n_corrective_qp"] > 10
    assert [p for p in faces if p > 1] == []
    res = fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=n), x0=np.full(n, 1 / n),
                                          tol=1e-10)
    assert res.status == "converged"
    assert [p for p in faces if p > 1] == [n]  # the interior start's face, once

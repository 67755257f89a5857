"""The sparse fast paths of the loop and the least-squares tracker, checked with dense numpy.

Sparse ``A^T A a`` products (:class:`SparseProduct`), the certificate on a sparse
design, the last good iterate kept as the entries a sparse move changed, and the
finiteness check by one dot product.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from frankwolfe import (
    Atom,
    Direction,
    FunctionObjective,
    L1Ball,
    LeastSquares,
    Status,
    pairwise_frank_wolfe,
)
from frankwolfe.algorithms.loop import _all_finite
from frankwolfe.objectives.product_tracker import SparseProduct


def _sparse_problem(seed, m=120, n=3000, density=0.01):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, format="csc", random_state=seed,
                  data_rvs=rng.standard_normal)
    x_true = np.zeros(n)
    x_true[rng.choice(n, 12, replace=False)] = rng.standard_normal(12)
    return A, A @ x_true + 0.01 * rng.standard_normal(m), float(np.abs(x_true).sum())


def test_sparse_hessian_products_and_moves_match_dense_numpy():
    A, b, _ = _sparse_problem(1)
    Ad = A.toarray()
    f = LeastSquares(A, b, refresh_every=10**9)
    tr = f.tracker(np.zeros(A.shape[1]))
    atoms = [Atom.sparse([j], [s], (A.shape[1],), key=("e", j, s))
             for j, s in [(3, 1.0), (700, -2.0), (2999, 0.5)]]
    for a in atoms:
        stored = tr._stored_products(a)[1]
        assert isinstance(stored, SparseProduct)  # a column meets few rows: few entries
        assert stored.indices.size < A.shape[1] // 4
        ref = Ad.T @ (Ad @ a.to_dense())
        np.testing.assert_allclose(stored.to_dense(), ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tr.atom_products(a)[1], ref, rtol=1e-12, atol=1e-12)
    # Frank-Wolfe, pairwise and a three-atom move: the gradient stays A^T (A x - b)
    x = np.zeros(A.shape[1])
    for d, gamma in [(Direction.frank_wolfe(atoms[0]), 1.0),
                     (Direction.pairwise(atoms[1], atoms[0]), 0.3),
                     (Direction(-1.0, ((0.2, atoms[2]), (0.3, atoms[1]), (0.5, atoms[0]))), 0.7)]:
        tr.move(d, gamma)
        x = x + gamma * d.dense(x)
        np.testing.assert_allclose(tr.x, x, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(tr.gradient(), Ad.T @ (Ad @ x - b), rtol=1e-10, atol=1e-10)
        assert tr.value() == pytest.approx(0.5 * np.sum((Ad @ x - b) ** 2), rel=1e-12)


def test_pairwise_gap_on_sparse_design_is_the_gap_at_the_returned_point():
    # the certificate (gradient kept incrementally) must equal the Frank-Wolfe gap of the
    # returned x computed from scratch
    A, b, r = _sparse_problem(2)
    radius = 0.5 * r
    f = LeastSquares(A, b)
    for tol in (1e-3, 1e-8):
        res = pairwise_frank_wolfe(f, L1Ball(radius, dim=A.shape[1]), tol=tol, max_iter=5000)
        g = A.T @ (A @ res.x - b)
        gap = float(g @ res.x + radius * np.abs(g).max())
        scale = radius * float(np.abs(g).max()) + 1.0
        assert abs(res.gap - gap) <= 1e-10 * scale
        assert -1e-10 * scale <= res.gap <= tol + 1e-10 * scale
        assert res.fun == pytest.approx(0.5 * np.sum((A @ res.x - b) ** 2), rel=1e-10)


def test_last_good_iterate_after_sparse_moves_is_exact():
    # the gradient turns NaN once x has four non-zeros: the run returns the iterate
    # before the move that got there (recorded by the callback), not the bad one
    n = 40
    y = np.linspace(1.0, 0.2, n)

    def grad(x):
        g = x - y
        return g if np.count_nonzero(x) < 4 else np.full(n, np.nan)

    f = FunctionObjective(lambda x: 0.5 * float((x - y) @ (x - y)), grad)
    seen = []
    res = pairwise_frank_wolfe(f, L1Ball(3.0, dim=n), tol=1e-12, max_iter=1000,
                               callback=lambda s: seen.append(s.x.copy()))
    assert res.status == Status.ERROR and "not finite" in res.message
    assert np.count_nonzero(res.x) == 3
    np.testing.assert_array_equal(res.x, seen[-1])
    assert np.isfinite(res.fun) and res.fun == pytest.approx(0.5 * np.sum((res.x - y) ** 2))


@pytest.mark.parametrize("values, finite", [
    ([1.0, -2.0, 3.0], True),
    ([1e200, -1e200, 1e250], True),  # the dot product overflows: checked entrywise
    ([1.0, np.nan, 0.0], False),
    ([np.inf, 1.0, 0.0], False),
    ([-np.inf, 1e200, 0.0], False),
])
def test_finiteness_check_by_one_dot_product(values, finite):
    a = np.array(values)
    assert _all_finite(a) is finite
    assert _all_finite(a.reshape(3, 1)) is finite

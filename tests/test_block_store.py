"""Sparse storage of the per-block atoms: the same table and iterates as dense rows."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe import (
    L1Ball,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.algorithms.bcfw.store import BlockAtomStore, SparseRows


def _simplex_projection(y: np.ndarray) -> np.ndarray:
    """Euclidean projection on the probability simplex (sort-based closed form)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    return np.maximum(y - css[k] / (k + 1), 0.0)


def _l1_projection(y: np.ndarray, r: float) -> np.ndarray:
    """Euclidean projection on the l1 ball of radius ``r`` (closed form via the simplex)."""
    if np.abs(y).sum() <= r:
        return y.copy()
    return np.sign(y) * r * _simplex_projection(np.abs(y) / r)


def _random_vectors(rng, m, count, density):
    return [np.where(rng.random(m) < density, rng.standard_normal(m), 0.0) for _ in range(count)]


def test_sparse_table_equals_dense_table_through_evictions():
    """Random adds (new lengths, evictions of inactive rows, repeated keys): the
    sparse pool holds the same rows as the dense array, and the same scores."""
    rng = np.random.default_rng(0)
    m = 50
    dense = BlockAtomStore(np.array([m]), max_size=5, storage="dense")
    sparse = BlockAtomStore(np.array([m]), max_size=5, storage="sparse")
    vecs = _random_vectors(rng, m, 12, 0.2) + [np.zeros(m)]  # an all-zero atom too
    g = rng.standard_normal(m)
    for k in range(200):
        j = int(rng.integers(len(vecs)))
        w = float(rng.random() < 0.2)
        assert dense.add(0, j, vecs[j], w, k) == sparse.add(0, j, vecs[j], w, k)
        if rng.random() < 0.1:  # deactivate everything now and then: rows get evicted
            dense.weights[0][:] = 0.0
            sparse.weights[0][:] = 0.0
        A, W = dense.rows(0)
        S, V = sparse.rows(0)
        assert isinstance(S, SparseRows) and S.shape == A.shape
        np.testing.assert_array_equal(S.toarray(), A)
        np.testing.assert_array_equal(W, V)
        for key, row in dense.keys[0].items():
            np.testing.assert_array_equal(A[row], vecs[key])
        np.testing.assert_allclose(S @ g, A @ g, rtol=1e-13, atol=1e-13 * np.abs(g).sum())
        act = np.flatnonzero(W > 0.0)
        np.testing.assert_allclose(S[act] @ g, A[act] @ g, rtol=1e-13,
                                   atol=1e-13 * np.abs(g).sum())
    assert sparse.count[0] > 5  # evictions and growth were both exercised
    assert sparse.nbytes < dense.nbytes


def test_auto_storage_by_density():
    m = BlockAtomStore.SPARSE_MIN_SIZE
    store = BlockAtomStore(np.array([10, m, m]), max_size=4)
    store.add(0, "a", np.eye(10)[0], 1.0, 0)  # small block: dense
    store.add(1, "a", np.eye(m)[0], 1.0, 0)  # one nonzero: sparse
    store.add(2, "a", np.ones(m), 1.0, 0)  # dense atom: dense
    assert store.sparse.tolist() == [False, True, False]
    with pytest.raises(ValueError, match="atom_storage"):
        BlockAtomStore(np.array([3]), max_size=4, storage="csr")


def _projection_problem(n, m, seed):
    """``1/2 ||x - y||^2`` over a product of simplices and l1 balls: the optimum is
    the blockwise projection of ``y`` (closed form)."""
    rng = np.random.default_rng(seed)
    y = 0.6 * rng.standard_normal(n * m)
    blocks = [ProbabilitySimplex(dim=m) if i % 2 == 0 else L1Ball(dim=m, radius=1.5)
              for i in range(n)]
    x_star = np.concatenate([
        _simplex_projection(y[i * m:(i + 1) * m]) if i % 2 == 0
        else _l1_projection(y[i * m:(i + 1) * m], 1.5) for i in range(n)])
    return QuadraticObjective(np.eye(n * m), -y), ProductDomain(blocks), x_star


@pytest.mark.parametrize("step_type", ["away", "pairwise"])
def test_dense_and_sparse_storage_same_iterates_and_closed_form_optimum(step_type):
    n, m = 8, 40
    f, dom, x_star = _projection_problem(n, m, seed=3)
    runs = {}
    for storage in ("dense", "sparse", "auto"):
        runs[storage] = block_coordinate_frank_wolfe(
            f, dom, block_step=step_type, step_size="exact", block_order="gap", cache=True,
            cache_size=6, max_iter=300, tol=1e-10, gap_every=5, random_state=4,
            atom_storage=storage)
    d, s = runs["dense"], runs["sparse"]
    assert d.success and s.success, (d.message, s.message)
    # the same steps: atom scores differ only in the order of summation
    assert d.nit == s.nit and d.extra["cache_hits"] == s.extra["cache_hits"]
    np.testing.assert_allclose(s.x, d.x, rtol=0, atol=1e-12)
    assert [sorted(k for k, _ in a) for a in s.extra["active_sets"]] == \
        [sorted(k for k, _ in a) for a in d.extra["active_sets"]]
    np.testing.assert_allclose(runs["auto"].x, d.x, rtol=0, atol=1e-12)
    # 1-strongly convex: ||x - x*||^2 <= 2 (f(x) - f*) <= 2 gap
    for r in runs.values():
        assert np.linalg.norm(r.x - x_star) <= np.sqrt(2 * max(r.gap, 0.0)) + 1e-9
        f_star = float(f.value(x_star))
        assert -1e-9 <= r.fun - f_star <= r.gap + 1e-9

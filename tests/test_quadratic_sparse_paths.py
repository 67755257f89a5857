"""QuadraticObjective's sparse-Q paths: the compiled block gradient and sparse products ``Q a``.

``partial_gradient`` of a sparse ``Q`` comes from a numba kernel over the CSR arrays; a
sparse atom's ``Q a`` is cached as a :class:`SparseProduct` when sparse enough.  Both are
checked against dense numpy computations (and the runs against cvxpy optima); the moves
with sparse products against the dense products' moves, to the last bit.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
import frankwolfe.objectives.quadratic as qm
from frankwolfe import QuadraticObjective
from frankwolfe.direction import Direction
from frankwolfe.objectives.product_tracker import SparseProduct

TIGHT = dict(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)


def _sym(n: int, density: float, seed: int) -> sp.csr_array:
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    return sp.csr_array(A + A.T)


def _banded(n: int, seed: int = 0) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    d0, d1, d7 = 3.0 + rng.random(n), -0.5 * rng.random(n - 1), 0.3 * rng.random(n - 7)
    return sp.csr_array(sp.diags([d0, d1, d1, d7, d7], [0, 1, -1, 7, -7], format="csr"))


@pytest.fixture
def sparse_from(monkeypatch):
    """Sparse products from this ``n`` on (``None``: never)."""
    def set_min(n: int | None) -> None:
        monkeypatch.setattr(qm, "_SPARSE_PRODUCT_MIN_N", 10**18 if n is None else n)
    return set_min


# -- partial_gradient ------------------------------------------------------------------
@pytest.mark.parametrize("unsorted", [False, True])
def test_sparse_partial_gradient_matches_scipy_and_dense(unsorted):
    rng = np.random.default_rng(0)
    for seed in range(6):
        n = int(rng.integers(1, 200))
        Q = _sym(n, float(rng.uniform(0.01, 0.3)), seed)
        if unsorted:  # rows with their entries shuffled
            for r in range(n):
                lo, hi = Q.indptr[r], Q.indptr[r + 1]
                perm = rng.permutation(hi - lo)
                Q.indices[lo:hi] = Q.indices[lo:hi][perm]
                Q.data[lo:hi] = Q.data[lo:hi][perm]
            Q.has_sorted_indices = False
        c = rng.standard_normal(n)
        f = QuadraticObjective(Q, c)
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3)
        full = Q.toarray() @ x + c
        for idx in (np.arange(n), np.arange(n // 2, n), rng.permutation(n)[: max(1, n // 3)],
                    rng.integers(0, n, 9), np.zeros(0, dtype=np.int64),
                    -1 - rng.integers(0, n, 3), list(range(min(n, 4)))):
            g = f.partial_gradient(x, idx)
            ix = np.asarray(idx, dtype=np.int64)
            assert g.dtype == np.float64 and g.shape == ix.shape
            # the rounding of scipy's row extraction and product, to the last bit
            np.testing.assert_array_equal(g, f.Q[ix] @ x + f.c[ix])
            np.testing.assert_allclose(g, full[ix], rtol=1e-12,
                                       atol=1e-12 * np.abs(full).max(initial=1.0))


def test_sparse_partial_gradient_of_matrix_points_and_bad_indices():
    n = 12
    Q = _sym(n, 0.3, 1)
    f = QuadraticObjective(Q, np.arange(n, dtype=float), shape=(3, 4))
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(f.partial_gradient(x, [5, 0, 11]),
                               f.gradient(x).reshape(-1)[[5, 0, 11]], rtol=1e-13)
    with pytest.raises(IndexError):
        f.partial_gradient(x, [n])
    with pytest.raises(IndexError):
        f.partial_gradient(x, [-n - 1])


def test_dense_partial_gradient_unchanged():
    rng = np.random.default_rng(2)
    M = rng.standard_normal((9, 9))
    f = QuadraticObjective(M + M.T, rng.standard_normal(9))
    x = rng.standard_normal(9)
    idx = np.array([4, 1, 7])
    np.testing.assert_array_equal(f.partial_gradient(x, idx), f.Q[idx] @ x + f.c[idx])


class _MySimplex(fw.ProbabilitySimplex):
    """A user's own block oracle: no compiled block kernels."""


def test_python_block_pass_on_sparse_q_matches_cvxpy():
    nb, k = 30, 4
    n = nb * k
    Q = _banded(n, 3)
    c = -np.random.default_rng(3).random(n)
    f = QuadraticObjective(Q, c)
    dom = fw.ProductDomain([_MySimplex(dim=k) for _ in range(nb)])
    res = fw.block_coordinate_frank_wolfe(f, dom, compiled=False, block_step="pairwise",
                                          max_iter=3000, tol=1e-10, random_state=0)
    x = cp.Variable(n)
    cons = [x >= 0] + [cp.sum(x[i * k:(i + 1) * k]) == 1 for i in range(nb)]
    f_star = cp.Problem(cp.Minimize(f.to_cvxpy(x)), cons).solve(**TIGHT)
    assert res.fun - f_star <= res.gap + 1e-7
    assert abs(res.fun - f_star) <= 1e-6


# -- sparse products Q a -----------------------------------------------------------------
def test_sparse_products_stored_and_equal_to_dense(sparse_from):
    sparse_from(64)
    n = 200
    Q = _banded(n)
    Q = sp.lil_array(Q)
    Q[0, :] = 1.0  # an arrow: row / column 0 is full
    Q[:, 0] = 1.0
    Q[0, 0] = 500.0
    Q = sp.csr_array(Q)
    f = QuadraticObjective(Q)
    tr = f.tracker(np.full(n, 1.0 / n))
    Qd = Q.toarray()
    atoms = {"vertex": fw.Atom.vertex(5, 1.0, (n,), key="v"),
             "negative": fw.Atom.vertex(199, -2.5, (n,), key="m"),
             "three": fw.Atom.sparse([3, 4, 90], [0.5, -1.0, 2.0], (n,), key="t"),
             "full row": fw.Atom.vertex(0, 1.0, (n,), key="0"),
             "too many": fw.Atom.sparse(np.arange(1, 60), np.ones(59), (n,), key="w"),
             "dense": fw.Atom(np.linspace(0, 1, n), key="d")}
    for name, a in atoms.items():
        stored = tr._stored_products(a)[0]
        assert isinstance(stored, SparseProduct) == (name in ("vertex", "negative", "three"))
        want = Qd @ a.to_dense()
        np.testing.assert_allclose(tr.atom_image(a), want, rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(tr.atom_products(a)[0], want, rtol=1e-15, atol=1e-15)
        if isinstance(stored, SparseProduct):
            assert np.all(np.diff(stored.indices) > 0)
            assert stored.nbytes < 8 * n / 2
    assert tr.cache.nbytes < 4 * 8 * n  # three dense products and three small ones


def test_non_canonical_q_rows_summed(sparse_from):
    sparse_from(8)
    n = 50
    # row 3 holds (3, 7) twice (0.5 + 0.25 = Q[7, 3]), its columns out of order
    cols = [[j] for j in range(n)]
    data = [[1.0] for _ in range(n)]
    cols[3], data[3] = [7, 3, 7], [0.5, 3.0, 0.25]
    cols[7], data[7] = [3, 7], [0.75, 1.0]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in cols])])
    Q2 = sp.csr_array((np.concatenate(data), np.concatenate(cols), indptr), shape=(n, n))
    assert not Q2.has_canonical_format
    f = QuadraticObjective(Q2)
    tr = f.tracker(np.ones(n) / n)
    a = fw.Atom.vertex(3, 2.0, (n,), key="a")
    prod = tr._stored_products(a)[0]
    assert isinstance(prod, SparseProduct)
    assert np.unique(prod.indices).size == prod.indices.size
    np.testing.assert_array_equal(prod.to_dense(), Q2.toarray() @ a.to_dense())


def _atoms(n: int) -> dict:
    e = [fw.Atom.vertex(i, 1.0, (n,), key=("e", i)) for i in range(n)]
    two = fw.Atom.sparse([1, 6], [0.25, 0.75], (n,), key="two")
    dense = fw.Atom(np.random.default_rng(4).dirichlet(np.ones(n)), key="dense")
    wide = fw.Atom.sparse(np.arange(2, n - 2), np.full(n - 4, 1.0 / (n - 4)), (n,), key="wide")
    return {
        "fw": [Direction.frank_wolfe(e[4]), Direction.frank_wolfe(two)],
        "away": [Direction.away(e[2]), Direction.away(two)],
        "pairwise": [Direction.pairwise(e[0], e[5]), Direction.pairwise(two, e[6]),
                     Direction.pairwise(e[3], e[3 + 1])],
        "same index": [Direction.pairwise(e[3], fw.Atom.vertex(3, -0.5, (n,), key="m3"))],
        "sparse and wide": [Direction.pairwise(e[7], wide), Direction.pairwise(wide, two)],
        "sparse and dense": [Direction.pairwise(e[9], dense), Direction.pairwise(dense, two),
                             Direction.frank_wolfe(dense)],
        "three atoms": [Direction(0.0, ((1.0, e[1]), (-0.5, e[8]), (-0.5, two))),
                        Direction(-1.0, ((0.5, e[2]), (0.25, dense), (0.25, e[3])))],
    }


@pytest.mark.parametrize("kind", list(_atoms(40)))
def test_moves_with_sparse_products_round_as_dense_ones(kind, sparse_from):
    n = 40
    Q = _banded(n, 5)
    c = np.random.default_rng(6).standard_normal(n)
    f = QuadraticObjective(Q, c, constant=0.5)
    x0 = np.random.default_rng(7).dirichlet(np.ones(n))
    directions = _atoms(n)[kind]
    sparse_from(None)
    dense = f.tracker(x0)
    sparse_from(8)
    sparse = f.tracker(x0)
    assert sparse._sparse and not dense._sparse
    Qd = Q.toarray()
    for step, d in enumerate(directions * 3):
        gamma = 0.05 + 0.02 * step
        for tr in (dense, sparse):
            tr.slope(d)
        assert sparse.exact_step(d) == dense.exact_step(d)
        assert sparse.trial_value(d, gamma) == dense.trial_value(d, gamma)
        np.testing.assert_array_equal(sparse.trial_gradient(d, gamma),
                                      dense.trial_gradient(d, gamma))
        for tr in (dense, sparse):
            tr.move(d, gamma)
        np.testing.assert_array_equal(sparse.x, dense.x)
        np.testing.assert_array_equal(sparse.gradient(), dense.gradient())
        assert sparse.value() == dense.value()
        # and against the dense computation from x
        x = sparse.x
        np.testing.assert_allclose(sparse.gradient(), Qd @ x + c, rtol=1e-12, atol=1e-12)
        assert sparse.value() == pytest.approx(0.5 * x @ Qd @ x + c @ x + 0.5, rel=1e-12)
    first = directions[0].terms[0][1]
    assert isinstance(sparse._stored_products(first)[0], SparseProduct) == first.is_sparse


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "blended_pairwise",
                                    "fcfw"])
def test_runs_with_sparse_products_match_dense_products_and_cvxpy(method, sparse_from):
    n = 150
    Q = _banded(n, 8)
    c = -5.0 * np.random.default_rng(9).random(n)
    f = QuadraticObjective(Q, c)
    dom = fw.ProbabilitySimplex()
    runs = []
    for min_n in (None, 16):
        sparse_from(min_n)
        runs.append(fw.minimize(f, dom, method=method, tol=1e-9, max_iter=3000))
    dense_run, sparse_run = runs
    np.testing.assert_array_equal(sparse_run.x, dense_run.x)
    assert sparse_run.fun == dense_run.fun
    x = cp.Variable(n)
    f_star = cp.Problem(cp.Minimize(f.to_cvxpy(x)), [x >= 0, cp.sum(x) == 1]).solve(**TIGHT)
    assert sparse_run.fun - f_star <= sparse_run.gap + 1e-7
    if method != "fw":
        assert abs(sparse_run.fun - f_star) <= 1e-6


def test_sparse_products_keep_many_atoms_in_the_cache(sparse_from):
    sparse_from(4096)
    n = 20000
    f = QuadraticObjective(sp.diags(1.0 + np.arange(n) / n, 0, format="csr"),
                           cache_bytes=8 * n * 4)  # room for four dense products
    tr = f.tracker(np.full(n, 1.0 / n))
    for i in range(500):
        tr.atom_image(fw.Atom.vertex(i, 1.0, (n,), key=i))
    assert len(tr.cache) == 500 and tr.n_atom_products == 500

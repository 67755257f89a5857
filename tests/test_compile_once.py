"""Kernels compile one specialization per kind of argument (issue #22).

Each extra numba specialization is a whole compilation on a user's first call.  Three
ways to get one were found in the main jobs: an integer constant passed to a kernel
(numba types the call for the literal first, then for ``int64``), a read-only array
where a writable one was met before (or the reverse), and a strided index array.  The
tests run the jobs' paths and read the dispatchers' signatures: no literal argument
types, one array type per argument.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit, typeof, types
from numba.core.registry import CPUDispatcher

import frankwolfe as fw
from frankwolfe import Atom
from frankwolfe.algorithms import compiled_pairwise, compiled_pairwise_kernels
from frankwolfe.objectives import design_kernels


def _literal_signatures(disp):
    return [sig for sig in disp.signatures if any(isinstance(t, types.Literal) for t in sig)]


def _fresh_tree(module, top: str, argtypes, monkeypatch) -> dict:
    """Compile uncached copies of ``module``'s kernel ``top`` and of the kernels it calls
    through ``module``'s names, for ``argtypes``: the copies' signatures are what typing
    ``top`` asks of each (the cached kernels would load ``top`` whole and type nothing)."""
    fresh = {}
    for name, disp in list(vars(module).items()):
        if isinstance(disp, CPUDispatcher):
            options = {k: v for k, v in disp.targetoptions.items()
                       if k not in ("cache", "nopython")}
            fresh[name] = njit(**options)(disp.py_func)
            monkeypatch.setattr(module, name, fresh[name])
    fresh[top].compile(tuple(argtypes))
    return fresh


def _lasso(sparse: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    m, n = 40, 120
    A = sp.random(m, n, density=0.2, format="csc", random_state=rng) if sparse else \
        rng.standard_normal((m, n))
    x = np.zeros(n)
    x[rng.choice(n, 6, replace=False)] = rng.standard_normal(6)
    return A, A @ x + 0.01 * rng.standard_normal(m)


def test_face_minimizer_compiles_each_kernel_once(monkeypatch):
    A, b = _lasso(True)
    f, lmo = fw.LeastSquares(A, b), fw.L1Ball(2.0, dim=A.shape[1])
    _, _, R = compiled_pairwise._initial_state(f, lmo, None, 1 << 20)
    fresh = _fresh_tree(compiled_pairwise_kernels, "_face_minimizer",
                        (typeof(R), types.int64), monkeypatch)
    for name in ("_cholesky", "_cholesky_solve", "_cholesky_delete"):
        assert len(fresh[name].signatures) == 1, (name, fresh[name].signatures)
        assert _literal_signatures(fresh[name]) == []


@pytest.mark.parametrize("sparse", [False, True])
def test_designs_are_typed_by_kind(sparse):
    A, b = _lasso(sparse)
    D = design_kernels.make_design(A, b)
    assert isinstance(D, design_kernels.SparseDesign if sparse else design_kernels.DenseDesign)
    if sparse:
        assert D.cp.dtype == np.int32 and D.rd.dtype == np.float64
    else:
        assert D.A.flags.c_contiguous and D.A.shape == A.shape
    # the kind is the record's type: a kernel compiles the branch of its kind only
    DR, _ = compiled_pairwise_kernels.make_refs(D, compiled_pairwise._initial_state(
        fw.LeastSquares(A, b), fw.L1Ball(2.0, dim=A.shape[1]), None, 0)[1])
    assert type(typeof(DR)).__name__ == ("_SparseDesignType" if sparse else "_DenseDesignType")
    # and the run reaches the optimum cvxpy finds
    res = fw.minimize(fw.LeastSquares(A, b), fw.L1Ball(2.0, dim=A.shape[1]),
                      method="compiled_pairwise", tol=1e-10, max_iter=20000)
    x = cp.Variable(A.shape[1])
    Ad = A.toarray() if sparse else A
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Ad @ x - b)), [cp.norm1(x) <= 2.0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert res.extra["n_corrective_steps"] > 0
    assert res.fun == pytest.approx(prob.value, rel=1e-7, abs=1e-9)


def test_shortest_path_heap_compiles_once(monkeypatch):
    from frankwolfe.applications.traffic import AllOrNothing, Network, assignment

    net = Network(init_node=[0, 0, 1, 2, 1], term_node=[1, 2, 2, 3, 3],
                  free_flow_time=[1.0, 4.0, 1.0, 1.0, 5.0], capacity=[10.0] * 5,
                  b=[0.15] * 5, power=[4.0] * 5,
                  demand=np.array([[0.0, 0.0, 0.0, 5.0]] + [[0.0] * 4] * 3))
    flow, total = AllOrNothing(net).assign(net.free_flow_time.copy())
    # 0 -> 1 -> 2 -> 3 costs 3, the cheapest route
    np.testing.assert_allclose(flow, [5.0, 0.0, 5.0, 5.0, 0.0], rtol=0, atol=1e-12)
    assert total == pytest.approx(15.0, rel=1e-12)
    fresh = _fresh_tree(assignment, "_all_or_nothing",
                        assignment._all_or_nothing.signatures[0], monkeypatch)
    for name in ("_heap_push", "_heap_pop"):
        assert len(fresh[name].signatures) == 1, (name, fresh[name].signatures)
        assert _literal_signatures(fresh[name]) == []


def test_beckmann_kernels_compile_once_for_writable_and_read_only_flows():
    from frankwolfe.applications.traffic import Beckmann, Network, vdf

    net = Network(init_node=[0, 1], term_node=[1, 0], free_flow_time=[2.0, 3.0],
                  capacity=[10.0, 20.0], b=[0.15, 0.15], power=[4.0, 4.0],
                  demand=np.array([[0.0, 1.0], [1.0, 0.0]]))
    f = Beckmann(net)
    x = np.array([5.0, 7.0])
    g = f.gradient(x)
    before = len(vdf._costs.signatures)
    ro = x.copy()
    ro.flags.writeable = False  # as a callback's State.x
    np.testing.assert_array_equal(f.gradient(ro), g)
    assert len(vdf._costs.signatures) == before
    # BPR: t0 (1 + b (x / c)^4)
    np.testing.assert_allclose(g, [2.0 * (1 + 0.15 * 0.5**4), 3.0 * (1 + 0.15 * 0.35**4)],
                               rtol=1e-14)


def test_sparse_atoms_hold_contiguous_arrays():
    idx = np.arange(10)[::-3]  # strided, decreasing: 9, 6, 3, 0
    val = np.linspace(1.0, 2.0, 8)[::2]
    a = Atom.sparse(idx, val, 10)
    assert a.indices.flags.c_contiguous and a.values.flags.c_contiguous
    np.testing.assert_array_equal(a.to_dense()[[9, 6, 3, 0]], val)
    assert a.to_dense().sum() == pytest.approx(val.sum(), rel=1e-15)

"""The working-set domain (product of hulls of stored atoms) and the compiled pairwise
block steps that run the block corrective QP, against numpy and brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from qp_reference import assert_block_qp_optimal

from frankwolfe import Atom, QuadraticObjective
from frankwolfe.algorithms.corrective import BlockQuadraticQP, stack_atoms, table_combine
from frankwolfe.algorithms.working_set import working_set_blocks
from frankwolfe.compiled import CERTIFY_REFRESH, Picker, compiled_driver, structured_direction
from frankwolfe.compiled.average import NO_AVERAGE
from frankwolfe.compiled.pass_state import NO_EXTRAS, PassData, PassVectors, StepScratch
from frankwolfe.step_size import ExactStep


def _atoms(rng, k, n):
    """Sparse atoms with unsorted and repeated indices (as a user may build them)."""
    atoms, dense = [], np.zeros((k, n))
    for j in range(k):
        idx = rng.integers(0, n, size=rng.integers(1, 6))
        val = rng.standard_normal(idx.size)
        atoms.append(Atom(indices=idx, values=val, shape=n))
        np.add.at(dense[j], idx, val)
    return atoms, dense


def test_stack_atoms_sorts_and_sums_repeated_indices():
    rng = np.random.default_rng(0)
    atoms, dense = _atoms(rng, 30, 9)
    ptr, idx, val = stack_atoms(atoms)
    for j in range(30):
        seg = idx[ptr[j]:ptr[j + 1]]
        assert np.all(np.diff(seg) > 0)
        row = np.zeros(9)
        row[seg] = val[ptr[j]:ptr[j + 1]]
        np.testing.assert_allclose(row, dense[j], rtol=0, atol=1e-14)
    coef = rng.standard_normal(30) * (rng.uniform(size=30) < 0.5)
    np.testing.assert_allclose(table_combine((ptr, idx, val), coef, 9), coef @ dense,
                               rtol=0, atol=1e-13)


def test_working_set_kernels_answer_as_brute_force():
    rng = np.random.default_rng(1)
    n, k = 8, 12
    atoms, dense = _atoms(rng, k, n)
    ptr, idx, val = stack_atoms(atoms)
    blocks = np.array([0] * 5 + [1] * 4 + [2] * 3)
    w = rng.uniform(size=k) * (rng.uniform(size=k) < 0.7)
    w[[0, 5, 9]] += 0.1
    for b in range(3):
        w[blocks == b] /= w[blocks == b].sum()
    members = np.arange(k, dtype=np.int64)
    bptr = np.array([0, 5, 9, 12], dtype=np.int64)
    dk, pair = working_set_blocks(ptr, idx, val, members, bptr, w, n)
    g = rng.standard_normal(n)
    bi, bv = np.empty(dk.max_nnz, dtype=np.int64), np.empty(dk.max_nnz)
    for b in range(3):
        js = np.flatnonzero(blocks == b)
        scores = dense[js] @ g
        s = js[np.argmin(scores)]
        z = w[js] @ dense[js]
        nnz, gap, score = dk.direction(dk.state, b, g, True, bi, bv)
        assert abs(score - scores.min()) <= 1e-12
        assert abs(gap - max(g @ z - scores.min(), 0.0)) <= 1e-12
        d = np.zeros(n)
        d[bi[:nnz]] = bv[:nnz]
        assert np.all(np.diff(bi[:nnz]) > 0)
        np.testing.assert_allclose(d, dense[s] - z, rtol=0, atol=1e-13)
        act = js[w[js] > 0]
        a = act[np.argmax(dense[act] @ g)]
        nnz, gmax = pair.away(dk.state, b, g, bi, bv)
        if a == s:
            assert nnz == 0
            continue
        assert gmax == w[a]
        d = np.zeros(n)
        d[bi[:nnz]] = bv[:nnz]
        np.testing.assert_allclose(d, dense[s] - dense[a], rtol=0, atol=1e-14)
        w_before = w.copy()
        pair.move(dk.state, b, gmax)  # a drop step: the away weight is exactly 0
        assert w[a] == 0.0 and abs(w[s] - (w_before[s] + w_before[a])) <= 1e-15


def test_working_set_runs_the_core_fw_driver():
    # the same kernels serve the core's Frank-Wolfe block driver (its certificate here)
    rng = np.random.default_rng(2)
    n, k = 6, 7
    atoms, dense = _atoms(rng, k, n)
    table = stack_atoms(atoms)
    w = np.array([0.5, 0.5, 0.0, 1.0, 0.2, 0.3, 0.5])
    blocks = np.array([0, 0, 0, 1, 2, 2, 2])
    dk, _ = working_set_blocks(*table, np.arange(k, dtype=np.int64),
                               np.array([0, 3, 4, 7], dtype=np.int64), w, n)
    Q = sp.eye(n, format="csr")
    okern = QuadraticObjective(Q, np.zeros(n)).compiled_block_objective()
    rule, rparams = ExactStep().compiled()
    run_pass = compiled_driver(dk, okern, rule)
    g = rng.standard_normal(n)
    est = np.zeros(3)
    picker = Picker(0, np.zeros(0, dtype=np.int64), np.zeros(0), est, np.zeros(2), 1, 1.0,
                    np.zeros(1, dtype=np.int64))
    x = np.zeros(n)
    k, total, scores = run_pass(0, 0, 5, CERTIFY_REFRESH, False, picker,
                                PassData(dk.state, okern.data, rparams, 3),
                                PassVectors(x, g, np.zeros(0)),
                                StepScratch(np.empty(dk.max_nnz, dtype=np.int64),
                                            np.empty(dk.max_nnz),
                                            structured_direction(0, 0, 0, np.zeros((0, 0)))),
                                NO_AVERAGE, NO_EXTRAS)
    gaps = [w[blocks == b] @ dense[blocks == b] @ g - (dense[blocks == b] @ g).min()
            for b in range(3)]
    assert k == 5 and not x.any()  # no step taken
    assert abs(total - sum(gaps)) <= 1e-12
    np.testing.assert_allclose(est, np.maximum(gaps, 0.0), rtol=0, atol=1e-12)
    assert abs(scores - sum((dense[blocks == b] @ g).min() for b in range(3))) <= 1e-12


@pytest.mark.parametrize("seed", range(2))
def test_block_qp_with_repeated_indices_matches_cvxpy(seed):
    pytest.importorskip("cvxpy")  # the reference optimum of assert_block_qp_optimal
    rng = np.random.default_rng(seed)
    n, k, groups = 9, 16, 3
    atoms, V = _atoms(rng, k, n)
    M = rng.standard_normal((n, 4))
    Q = M @ M.T + 0.1 * np.eye(n)
    c = rng.standard_normal(n)
    blocks = np.sort(rng.integers(0, groups, k))
    blocks[:groups] = np.arange(groups)
    blocks = np.sort(blocks)
    w0 = np.zeros(k)
    for b in range(groups):
        w0[np.flatnonzero(blocks == b)[0]] = 1.0
    w, x, sweeps, gap = BlockQuadraticQP(QuadraticObjective(Q, c), n).solve(
        atoms, blocks, w0, rtol=1e-14, max_sweeps=100000)
    assert_block_qp_optimal(w, x, V, Q, c, blocks, groups)

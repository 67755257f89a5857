"""Fully corrective FW over a product domain with a few blocks' oracles per iteration
(``blocks_per_step``: the n-slack cutting plane re-solving its QP every few new planes),
checked against cvxpy."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from ssvm_reference import ssvm_dual_qp

import frankwolfe as fw
from frankwolfe import Atom, QuadraticObjective
from frankwolfe.algorithms.corrective import BlockQuadraticQP, stack_atoms
from frankwolfe.applications.structured_svm import ChainModel, SSVMDual, make_chain


@pytest.mark.parametrize("seed", range(3))
def test_block_qp_span_moves_only_its_blocks_and_matches_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n, k, groups, span = 10, 24, 5, (1, 3)
    M = rng.standard_normal((n, 4))
    Q = M @ M.T + 0.1 * np.eye(n)
    c = rng.standard_normal(n)
    V = rng.standard_normal((k, n)) * (rng.uniform(size=(k, n)) < 0.5)
    blocks = np.sort(rng.integers(0, groups, k))
    blocks[:groups] = np.arange(groups)
    blocks.sort()
    w0 = np.zeros(k)
    for b in range(groups):  # a random feasible start: the fixed blocks keep it
        js = np.flatnonzero(blocks == b)
        w0[js] = rng.dirichlet(np.ones(js.size))
    qp = BlockQuadraticQP(QuadraticObjective(Q, c), n)
    w, x, _, _ = qp.solve_stacked(stack_atoms([Atom(v) for v in V]), blocks, w0.copy(),
                                  rtol=1e-14, max_sweeps=100000, span=span)
    fixed = (blocks < span[0]) | (blocks >= span[1])
    np.testing.assert_array_equal(w[fixed], w0[fixed])
    wv = cp.Variable(k, nonneg=True)
    xv = V.T @ wv
    cons = [cp.sum(wv[blocks == b]) == 1 for b in range(groups)]
    cons.append(wv[fixed] == w0[fixed])
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(xv, cp.psd_wrap(Q)) + c @ xv), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert np.all(w >= 0)
    np.testing.assert_allclose(np.bincount(blocks, weights=w), 1.0, atol=1e-12)
    np.testing.assert_allclose(x, V.T @ w, atol=1e-10)
    f = 0.5 * x @ Q @ x + c @ x
    scale = 1e-8 * max(1.0, abs(prob.value))
    assert -scale <= f - prob.value <= scale


class _RecordingChain(ChainModel):
    """Records every loss-augmented labelling (the generic, uncompiled oracle path)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def loss_augmented_decode(self, x, y_true, w):
        yhat = super().loss_augmented_decode(x, y_true, w)
        self.calls.append((id(x), tuple(np.asarray(yhat).tolist())))
        return yhat


def _seen(X, Y, calls):
    pos = {id(x): i for i, x in enumerate(X)}
    seen = [{tuple(np.asarray(y).tolist())} for y in Y]
    for xid, yhat in calls:
        seen[pos[xid]].add(yhat)
    return seen


def test_each_step_cuts_planes_at_the_previous_steps_point():
    """Blocks 0-1, then 2-3, then 4-5: a cycle's partial iterations re-optimize their own
    blocks, the cycle's last one re-solves over all blocks (against cvxpy)."""
    X, Y = make_chain(6, n_states=3, n_features=3, length=(2, 4), noise=1.5, random_state=1)
    model = _RecordingChain(3, 3)
    lam, n = 0.1, len(X)
    domain = SSVMDual(model, X, Y, lam)
    start = [domain.blocks[i].vertex(Y[i]) for i in range(n)]
    funs, calls = [], []

    def callback(s):
        funs.append(s.fun)
        calls.append(list(model.calls))

    res = fw.fully_corrective_frank_wolfe(domain.dual_objective(), domain, start, blocks=True,
                                          blocks_per_step=2, corrective_tol=1e-14,
                                          corrective_max_sweeps=10**5, tol=0.0, max_iter=6,
                                          callback=callback)
    assert res.nit == 6
    # the callback sees x_k with the oracle calls made there: those of its two blocks
    assert [len(c) for c in calls] == [2, 4, 6, 8, 10, 12, 14]
    pos = {id(x): i for i, x in enumerate(X)}
    assert [pos[xid] for xid, _ in model.calls[:6]] == [0, 1, 2, 3, 4, 5]
    # x_{k+1} solves the QP over the planes of iterations 0..k
    # iteration 0 moves blocks 0-1, the others hold one plane (the truth) each
    f_ref = ssvm_dual_qp(model, X, Y, lam, _seen(X, Y, calls[0]))
    assert abs(funs[1] - f_ref) <= 1e-9 * max(1.0, abs(f_ref))
    # iteration 1 moves blocks 2-3 only (0-1 keep their weights): between the two optima
    f_ref = ssvm_dual_qp(model, X, Y, lam, _seen(X, Y, calls[1]))
    assert f_ref - 1e-9 <= funs[2] <= funs[1] + 1e-12
    assert funs[2] >= f_ref + 1e-4  # and short of the fully corrective one here
    for it in (2, 5):  # a cycle's end: fully corrective over every block
        f_ref = ssvm_dual_qp(model, X, Y, lam, _seen(X, Y, calls[it]))
        assert abs(funs[it + 1] - f_ref) <= 1e-9 * max(1.0, abs(f_ref))
    # a cycle's iterations are not certified; the returned point is
    assert np.all(np.isnan(res.history["gap"][:6]))
    f_star = ssvm_dual_qp(model, X, Y, lam)
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9


@pytest.mark.parametrize("blocks_per_step", [1, 3])
def test_blocks_per_step_reaches_the_optimum_and_gap_every_stops_it(blocks_per_step):
    X, Y = make_chain(7, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    lam, n = 0.1, len(X)
    domain = SSVMDual(model, X, Y, lam)
    start = [domain.blocks[i].vertex(Y[i]) for i in range(n)]
    f_star = ssvm_dual_qp(model, X, Y, lam)
    res = fw.fully_corrective_frank_wolfe(domain.dual_objective(), domain, start, blocks=True,
                                          blocks_per_step=blocks_per_step, gap_every=2,
                                          prune_after=2, tol=1e-8, max_iter=3000)
    assert res.success, res.message
    assert -1e-9 <= res.fun - f_star <= res.gap + 1e-9
    assert res.gap <= 1e-8
    gaps, funs = res.history["gap"], res.history["fun"]
    cert = np.isfinite(gaps)
    cycle = -(-n // blocks_per_step)
    # certificates at the start of every second cycle (and for the returned point)
    k = np.arange(gaps.size)
    due = set(k[(k > 0) & (k % (2 * cycle) == 0)])
    assert due and due <= set(np.flatnonzero(cert)) <= due | {gaps.size - 1}
    assert np.all(funs[cert] - gaps[cert] <= f_star + 1e-9)
    assert np.all(funs[cert] >= f_star - 1e-9)
    # one oracle call per cycle plus one per certificate
    assert res.extra["block_oracle_calls"] >= n * (res.nit // cycle)


def test_blocks_per_step_and_gap_every_bad_input():
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    domain = SSVMDual(ChainModel(3, 2), X, Y, 0.1)
    start = [domain.blocks[i].vertex(Y[i]) for i in range(len(X))]
    for name in ("blocks_per_step", "gap_every"):
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match=name):
                fw.fully_corrective_frank_wolfe(domain.dual_objective(), domain, start,
                                                blocks=True, max_iter=2, **{name: bad})


def test_estimator_cutting_plane_with_several_steps_per_pass_reaches_cvxpy_optimum():
    """150 examples: the estimator's cutting plane takes two corrective steps per pass
    (100 planes each); the gap_every certificates stop it at tol."""
    from frankwolfe.applications.structured_svm import StructuredSVM

    X, Y = make_chain(150, n_states=2, n_features=2, length=(2, 3), noise=1.0, random_state=3)
    model = ChainModel(2, 2)
    lam = 0.1
    f_ref = ssvm_dual_qp(model, X, Y, lam)
    svm = StructuredSVM(model, lam=lam, solver="cutting_plane", tol=1e-7, gap_every=1,
                        max_passes=200, eval_every=1).fit(X, Y)
    res = svm.result_
    assert res.success, res.message
    assert -1e-9 <= res.fun - f_ref <= res.gap + 1e-9
    assert res.gap <= 1e-7
    h = svm.history_
    # every recorded (certified) gap bounds the true suboptimality of its dual point
    assert np.all(-h["dual"] - f_ref >= -1e-9)
    assert np.all(-h["dual"] - f_ref <= h["gap"] + 1e-9)
    # a pass is 150 oracle calls, each certificate one more pass
    assert np.all(np.diff(h["effective_passes"]) >= 1.0)
    assert h["effective_passes"][-1] > h["passes"][-1]


def test_a_run_whose_closing_certificate_meets_tol_is_converged_not_stalled():
    """blocks_per_step without gap_every certifies only when the run stops: after the
    stall window of zero steps the closing gap was 0 <= tol, and the run still said
    "stalled ... the certified gap stayed at inf".  The optimum checked against cvxpy."""
    rng = np.random.default_rng(31)
    nb, k = 12, 6
    n = nb * k
    B = rng.standard_normal((n // 2, n))
    Q, c = B.T @ B / n + 1e-3 * np.eye(n), rng.standard_normal(n)
    blocks = [fw.ProbabilitySimplex(dim=k) if i % 2 == 0 else fw.L1Ball(1.0, dim=k)
              for i in range(nb)]
    res = fw.fully_corrective_frank_wolfe(QuadraticObjective(Q, c), fw.ProductDomain(blocks),
                                          tol=1e-9, max_iter=500, blocks_per_step=3)
    assert res.status == "converged" and res.gap <= 1e-9, res.message
    x = cp.Variable(n)
    cons = [cp.sum(x[i * k:(i + 1) * k]) == 1 if i % 2 == 0 else
            cp.norm1(x[i * k:(i + 1) * k]) <= 1 for i in range(nb)]
    cons += [x[i * k:(i + 1) * k] >= 0 for i in range(0, nb, 2)]
    f_star = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x),
                        cons).solve(solver=cp.CLARABEL)
    assert abs(res.fun - f_star) <= 1e-7 * max(1.0, abs(f_star))

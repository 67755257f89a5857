"""Online-EG and dual extragradient against the cvxpy dual optimum over all labellings."""

from __future__ import annotations

import numpy as np
import pytest
from ssvm_reference import ssvm_dual_qp

from frankwolfe import RunOptions
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MatchingModel,
    StructuredSVM,
    make_chain,
)
from frankwolfe.applications.structured_svm.oracles import batch_primal
from frankwolfe.applications.structured_svm.solvers.extragradient import dual_extragradient

LAM = 0.1
TOL = 1e-9  # cvxpy/Clarabel solves the reference QP to about 1e-10


@pytest.fixture(scope="module")
def tiny():
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    d_star = -ssvm_dual_qp(model, X, Y, LAM)  # dual optimum = primal optimum
    return model, X, Y, d_star


def _check_certificates(h, d_star):
    """Each recorded gap bounds the true primal and dual suboptimality."""
    for primal, dual, gap in zip(h["primal"], h["dual"], h["gap"]):
        assert -TOL <= d_star - dual <= gap + TOL
        assert -TOL <= primal - d_star <= gap + TOL


def test_online_eg_reaches_dual_optimum(tiny):
    model, X, Y, d_star = tiny
    svm = StructuredSVM(model, lam=LAM, solver="online_eg", max_passes=1500, tol=0,
                        eval_every=25, random_state=0).fit(X, Y)
    h = svm.history_
    assert len(h) >= 10
    _check_certificates(h, d_star)
    assert -TOL <= d_star - h["dual"][-1] <= 1e-5
    # backtracking accepts only steps that decrease the dual objective: monotone dual
    assert np.all(np.diff(h["dual"]) >= -1e-12)
    # retries are counted: effective passes >= passes, and oracle calls = n * effective
    assert np.all(h["effective_passes"] >= h["passes"])
    np.testing.assert_allclose(h["oracle_calls"], np.round(h["effective_passes"] * len(X)))
    # the reported w is the dual point's: its primal is the recorded one
    assert svm.primal(X, Y) == pytest.approx(h["primal"][-1], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("step_size, c_w, passes", [("adaptive", 1.0, 3000), (0.5, 0.25, 12000)])
def test_dual_extragradient_reaches_dual_optimum(tiny, step_size, c_w, passes):
    model, X, Y, d_star = tiny
    rows = []

    def record(s):
        it, state = s.k, s.info
        if it and it % 100 == 0:
            w_dual, _, dual = state["point_bar"].image()
            primal = batch_primal(model, X, Y, state["w_bar"], LAM)["primal"]
            rows.append((primal, dual, primal - dual))
        return None

    out = dual_extragradient(model, X, Y, LAM, max_passes=passes, step_size=step_size, c_w=c_w,
                             averaging="tail", run_options=RunOptions(callback=record))
    h = {k: np.array(v) for k, v in zip(("primal", "dual", "gap"), zip(*rows))}
    assert len(rows) >= 10
    _check_certificates(h, d_star)
    assert -TOL <= d_star - out["dual"] <= 1e-5
    # every trial (two passes of marginals) is counted, within the budget
    assert out["effective_passes"] == 2 * (out["iterations"] + out["rejected"]) <= passes
    assert (out["rejected"] > 0) == (step_size == "adaptive")


def test_dual_extragradient_estimator_certifies_every_row(tiny):
    model, X, Y, d_star = tiny
    svm = StructuredSVM(model, lam=LAM, solver="dual_extragradient", max_passes=400, tol=0,
                        eval_every=20).fit(X, Y)
    h = svm.history_
    _check_certificates(h, d_star)
    # two passes of marginals per iteration and per rejected trial of the adaptive step
    assert h["effective_passes"][-1] == 2 * (h["passes"][-1] + svm.result_["rejected"])
    # the restricted saddle gap (Taskar et al.) never exceeds the certified gap
    for (_it, rg), gap in zip(svm.restricted_gaps_, h["gap"]):
        assert rg <= gap + TOL
    # plain (uniform) averaging is slow but moves towards the optimum
    assert d_star - h["dual"][-1] < 0.5 * (d_star - h["dual"][0])


@pytest.mark.parametrize("solver", ["online_eg", "dual_extragradient"])
def test_models_without_marginals_are_refused(solver):
    X = [np.zeros((2, 2, 2))]
    Y = [np.array([0, 1])]
    with pytest.raises(TypeError, match=f"solver='{solver}'.*marginals"):
        StructuredSVM(MatchingModel(2), solver=solver, max_passes=1).fit(X, Y)


class _ScaledHamming(ChainModel):
    """Another problem on the chain: three times the Hamming loss."""

    def loss(self, y_true, y):
        return 3.0 * super().loss(y_true, y)


class _FastDecoder(ChainModel):
    """ChainModel's problem with a decoder of its own (prediction only)."""

    def decode(self, x, w):
        return super().decode(x, w)


@pytest.mark.parametrize("solver", ["online_eg", "dual_extragradient"])
def test_chain_subclasses_with_another_problem_are_refused(tiny, solver):
    # the expectation kernels compute ChainModel's features and Hamming loss: a subclass
    # overriding the loss trained the plain problem silently (primal 2.14 against the
    # scaled problem's optimum 1.41)
    _, X, Y, d_star = tiny
    with pytest.raises(TypeError, match=rf"solver='{solver}'.*_ScaledHamming overrides loss"):
        StructuredSVM(_ScaledHamming(3, 2), lam=LAM, solver=solver, max_passes=1).fit(X, Y)
    svm = StructuredSVM(_FastDecoder(3, 2), lam=LAM, solver=solver, max_passes=300,
                        tol=1e-7).fit(X, Y)
    _check_certificates(svm.history_, d_star)


def test_online_eg_backtracking_budget(tiny):
    # at most 2 halvings per example on the first pass, 5 afterwards: <= 3n then <= 6n calls
    from frankwolfe.applications.structured_svm import online_eg

    model, X, Y, _ = tiny
    n = len(X)
    effs = []
    online_eg(model, X, Y, LAM, max_passes=40, random_state=1,
              run_options=RunOptions(
                  callback=lambda s: effs.append(s.info["effective_passes"])
                  if s.k and s.info["whole_pass"] else None))
    steps = np.diff(np.concatenate([[0.0], effs]))
    assert 1.0 <= steps[0] <= 3.0
    assert np.all(steps[1:] >= 1.0) and np.all(steps[1:] <= 6.0)
    assert np.any(steps > 1.0)  # some steps were retried (an uninformative run otherwise)
    np.testing.assert_allclose(np.array(effs) * n, np.round(np.array(effs) * n), atol=1e-9)


@pytest.mark.parametrize("max_passes", [1.0, 2.5, 7.3])
def test_online_eg_effective_pass_budget_is_hard(tiny, max_passes):
    # backtracking retries count as oracle calls: the run stops at the call budget
    # floor(max_passes * n), inside a pass if need be, never beyond it
    from frankwolfe.applications.structured_svm import online_eg

    model, X, Y, _ = tiny
    n = len(X)
    effs = []
    out = online_eg(model, X, Y, LAM, max_passes=max_passes, random_state=1,
                    run_options=RunOptions(
                        callback=lambda s: effs.append(s.info["effective_passes"])
                        if s.k else None))
    budget = int(np.floor(max_passes * n))
    assert out["oracle_calls"] == budget  # every trial is one call: the budget is used up
    assert out["effective_passes"] <= max_passes
    assert all(e <= max_passes for e in effs)
    # an estimator's history ends within the budget too
    budget_passes = int(np.ceil(max_passes))
    svm = StructuredSVM(model, lam=LAM, solver="online_eg", max_passes=budget_passes, tol=0,
                        eval_every=1, random_state=1).fit(X, Y)
    h = svm.history_["effective_passes"]
    assert np.all(h <= budget_passes) and h[-1] == budget_passes


def test_coupling_norm_between_brute_force_bounds():
    # ||A|| = sup ||1/n sum_i sum_y z_i(y) psi_i(y)|| over 1/n sum ||z_i||_1^2 <= 1 lies
    # between max_i max_y ||psi_i(y)|| / sqrt(n) (all weight on one example) and
    # sqrt(mean_i max_y ||psi_i(y)||^2) (Cauchy-Schwarz); labellings enumerated
    import itertools

    from frankwolfe.applications.structured_svm.solvers.extragradient import coupling_norm

    X, Y = make_chain(6, n_states=3, n_features=3, length=(2, 4), noise=1.5, random_state=1)
    model = ChainModel(3, 3)
    d = model.size_joint_feature
    R = []
    for x, y in zip(X, Y):
        best = 0.0
        for yy in itertools.product(range(3), repeat=len(y)):
            idx, val = model.psi(x, y, np.array(yy))
            v = np.zeros(d)
            np.add.at(v, idx, val)
            best = max(best, float(np.linalg.norm(v)))
        R.append(best)
    R = np.array(R)
    est = coupling_norm(model, X, Y, rounds=6)
    n = len(X)
    assert R.max() / np.sqrt(n) * (1 - 1e-12) <= est <= np.sqrt(np.mean(R * R)) * (1 + 1e-12)


def test_dual_extragradient_step_size_choices(tiny):
    model, X, Y, d_star = tiny
    runs = {rule: dual_extragradient(model, X, Y, LAM, max_passes=200, step_size=rule)
            for rule in ("adaptive", "auto", "bound")}
    steps = {rule: out["step_size"] for rule, out in runs.items()}
    assert steps["auto"] > steps["bound"]  # the estimate is below the safe bound
    # the local check accepts steps far beyond 1 / Lip, and the dual gets closer to the
    # optimum at equal passes (the old default's 1/Lip is the worst case of the analysis)
    assert steps["adaptive"] > 5 * steps["auto"]
    sub = {rule: d_star - out["dual"] for rule, out in runs.items()}
    assert -TOL <= sub["adaptive"] <= 0.1 * sub["auto"]
    assert -TOL <= sub["auto"] <= sub["bound"]
    for bad in ("big", 0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="step_size"):
            dual_extragradient(model, X, Y, LAM, max_passes=2, step_size=bad)


@pytest.mark.parametrize("max_passes", [1.0, 2.0, 7.3, 40.0])
def test_dual_extragradient_pass_budget_is_hard(tiny, max_passes, monkeypatch):
    # every pass of marginals (rejected trials of the adaptive step included) is counted,
    # and none is started beyond floor(max_passes * n) forward-backward calls
    from frankwolfe.applications.structured_svm.models.chain import expectation as _expectation

    model, X, Y, _ = tiny
    n = len(X)
    passes = []
    real = _expectation.ChainDualPoint.marginals

    def counted(self, *args, **kwargs):
        passes.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_expectation.ChainDualPoint, "marginals", counted)
    out = dual_extragradient(model, X, Y, LAM, max_passes=max_passes)
    # the dual points start at the centre in closed form: the set-up makes no pass (issue
    # 23: it made two uniform ones, then overwrote them)
    done = len(passes)
    assert out["oracle_calls"] == done * n <= np.floor(max_passes * n)
    assert out["effective_passes"] == done == 2 * (out["iterations"] + out["rejected"])
    assert np.floor(max_passes * n) - out["oracle_calls"] < 2 * n  # no affordable trial left
    if max_passes == 40.0:
        assert out["rejected"] > 0  # the budget counted rejected trials (informative run)


@pytest.mark.parametrize("sampling", ["uniform", "perm"])
def test_online_eg_step_scheme_matches_enumerated_reference(sampling):
    # the paper's scheme written out over every labelling (no chain factoring, no Gram
    # matrices): per-example steps from 0.5, halved until the dual objective
    # lam/2 ||w||^2 - ell decreases (at most 2 halvings in the first pass, 5 later; no
    # decrease leaves the example unchanged), an accepted step times 1.05 on the next visit
    import itertools

    from frankwolfe.applications.structured_svm import online_eg

    lam, passes, seed = 0.05, 4, 3
    X, Y = make_chain(5, n_states=3, n_features=2, length=(2, 4), noise=2.0, random_state=2)
    model = ChainModel(3, 2)
    n = len(X)
    phis, losses = [], []
    for x, y in zip(X, Y):
        labs = [np.array(t) for t in itertools.product(range(3), repeat=len(y))]
        phis.append(np.array([model.joint_feature(x, yy) for yy in labs]))
        losses.append(np.array([model.loss(y, yy) for yy in labs]))
    phi_true = sum(model.joint_feature(x, y) for x, y in zip(X, Y))
    p = [np.full(len(loss), 1.0 / len(loss)) for loss in losses]

    def image(p):
        w = (phi_true - sum(q @ P for q, P in zip(p, phis))) / (lam * n)
        ell = sum(q @ loss for q, loss in zip(p, losses)) / n
        return w, ell, lam / 2 * w @ w - ell

    rng = np.random.default_rng(seed)
    etas = np.full(n, 0.5)
    calls, halvings = 0, []
    for k in range(passes):
        order = rng.integers(n, size=n) if sampling == "uniform" else rng.permutation(n)
        for i in order:
            w, _, f = image(p)
            g = phis[i] @ w + losses[i]
            eta = etas[i]
            for trial in range((2 if k == 0 else 5) + 1):
                if trial:
                    eta /= 2
                q = p[i] * np.exp(eta * (g - g.max()))
                q /= q.sum()
                calls += 1
                if image(p[:i] + [q] + p[i + 1:])[2] < f:
                    p[i] = q
                    etas[i] = 1.05 * eta
                    halvings.append(trial)
                    break
            else:
                etas[i] = eta
                halvings.append(-1)
    w_ref, ell_ref, f_ref = image(p)
    assert calls > passes * n and max(halvings) >= 1  # the scheme retried some steps
    out = online_eg(model, X, Y, lam, max_passes=10 * passes, block_order=sampling,
                    random_state=seed, run_options=RunOptions(callback=lambda s: s.k < passes))
    assert out["passes"] == passes and out["oracle_calls"] == calls
    np.testing.assert_allclose(out["w"], w_ref, rtol=0, atol=1e-10)
    assert out["dual"] == pytest.approx(-f_ref, rel=0, abs=1e-12)
    assert out["ell"] == pytest.approx(ell_ref, rel=0, abs=1e-12)


def _gibbs(theta, theta_e, lo, L, K):
    """Every labelling of one example and its probability under chain log-potentials."""
    import itertools

    labs = [np.array(y) for y in itertools.product(range(K), repeat=L)]
    s = np.array([theta[lo + np.arange(L), y].sum() + theta_e[y[:-1], y[1:]].sum() for y in labs])
    p = np.exp(s - s.max())
    return labs, p / p.sum()


@pytest.mark.parametrize("uses_ids", [False, True])
def test_prox_excess_matches_enumeration(uses_ids):
    # the adaptive step's test quantity eta <F(u) - F(v), u - v+> - D(u, v) - D(v+, u),
    # computed from images and log-partitions, against sums over every labelling; also
    # the solver's marginal kernel (potentials theta + eta * loss-augmented scores)
    from frankwolfe.applications.structured_svm.models.chain.expectation import (
        ChainDualPoint,
        chain_dual_data,
    )
    from frankwolfe.applications.structured_svm.solvers.extragradient import _prox_excess

    rng = np.random.default_rng(4)
    K, lam, c_w, eta = 3, 0.2, 0.7, 0.9
    if uses_ids:
        model = ChainModel(K, (1, 3, 2))
        X = [np.column_stack([np.ones(L, dtype=np.int64), rng.integers(0, 4, size=L),
                              rng.integers(0, 3, size=L)]) for L in (1, 3, 4)]
    else:
        model = ChainModel(K, 2)
        X = [rng.normal(size=(L, 2)) for L in (1, 3, 4)]
    Y = [rng.integers(0, K, size=len(x)) for x in X]
    n, d = len(X), model.size_joint_feature
    data = chain_dual_data(model, X, Y, "dual_extragradient")
    pt = ChainDualPoint(data, lam)
    pt.theta[...] = rng.normal(size=pt.theta.shape)
    pt.theta_e[...] = rng.normal(size=pt.theta_e.shape)
    w_v, w_u, w_p = (rng.normal(size=d) for _ in range(3))
    pts = {}
    for name, w, e in (("v", w_v, 0.0), ("u", w_v, eta), ("p", w_u, eta)):
        mu, T, a = np.empty_like(pt.mu), np.empty_like(pt.T), np.empty(n)
        pt.marginals(w, e, mu, T, a)
        wz, ell, _ = pt.image(mu, T)
        pts[name] = (wz, ell, a)
    got, _ = _prox_excess(lam, n, c_w, eta, pt.phi_true, (w_v, pts["v"][0], pts["v"][2]),
                          (w_u, pts["u"][0], pts["u"][1], pts["u"][2]),
                          (w_p, pts["p"][0], pts["p"][2]))
    # the reference: distributions over labellings, g_i(w)(y) = <w, phi_i(y)> + L_i(y)
    ephi = {k: np.zeros(d) for k in "vup"}
    kl_uv = kl_pu = lin_z = 0.0
    for i, (x, y) in enumerate(zip(X, Y)):
        lo, L = int(data.off[i]), len(y)
        labs, p_v = _gibbs(pt.theta, pt.theta_e[i], lo, L, K)
        phis = np.array([np.asarray(model.joint_feature(x, yy).todense() if uses_ids
                                    else model.joint_feature(x, yy)) for yy in labs])
        loss = np.array([model.loss(y, yy) for yy in labs])
        g_v, g_u = phis @ w_v + loss, phis @ w_u + loss
        p_u = p_v * np.exp(eta * (g_v - g_v.max()))
        p_u /= p_u.sum()
        p_p = p_v * np.exp(eta * (g_u - g_u.max()))
        p_p /= p_p.sum()
        for k, p in (("v", p_v), ("u", p_u), ("p", p_p)):
            ephi[k] += p @ phis
        kl_uv += float(p_u @ np.log(p_u / p_v))
        kl_pu += float(p_p @ np.log(p_p / p_u))
        lin_z += float(-(g_u - g_v) / n @ (p_u - p_p))
    phi_true = sum(np.asarray(model.joint_feature(x, y).todense() if uses_ids
                              else model.joint_feature(x, y)) for x, y in zip(X, Y))
    wz = {k: (phi_true - ephi[k]) / (lam * n) for k in "vup"}
    for k in "vup":  # the kernel's marginals and images are the enumeration's
        np.testing.assert_allclose(pts[k][0], wz[k], rtol=0, atol=1e-12)
    lhs = eta * (lam * float((w_u - wz["u"] - w_v + wz["v"]) @ (w_u - w_p)) + lin_z)
    ref = (lhs - 0.5 * c_w * float((w_u - w_v) @ (w_u - w_v)) - kl_uv / n
           - 0.5 * c_w * float((w_p - w_u) @ (w_p - w_u)) - kl_pu / n)
    assert abs(got - ref) <= 1e-10 * max(1.0, abs(ref))

"""Structured SVM training through the core solvers: optimality against independent
solvers (cvxpy's QP over all labellings, scikit-learn's Crammer-Singer SVM), the
compiled and generic BCFW engines, the estimator API."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from ssvm_reference import ssvm_dual_qp

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MulticlassModel,
    SSVMDual,
    SSVMDualObjective,
    StructuredSVM,
    load_conll2000,
    load_ocr,
    make_chain,
    ssg,
)
from frankwolfe.applications.structured_svm.oracles import batch_primal
from frankwolfe.errors import ShapeError

# -- independent reference: the dual QP over all labellings -----------------------


def all_labellings_qp(model, X, Y, lam):
    """Optimal value of the SSVM dual by cvxpy over every labelling of every example."""
    return ssvm_dual_qp(model, X, Y, lam)


@pytest.fixture(scope="module")
def tiny_chain():
    X, Y = make_chain(8, n_states=3, n_features=4, length=(1, 3), noise=1.5, random_state=3)
    model = ChainModel(3, 4)
    lam = 0.1
    return model, X, Y, lam, all_labellings_qp(model, X, Y, lam)


@pytest.mark.parametrize("kw", [
    {"block_order": "gap", "block_step": "pairwise", "cache": True},
    {"block_order": "uniform", "block_step": "away"},
])
def test_tiny_chain_dual_optimum_matches_cvxpy(tiny_chain, kw):
    """Block pairwise / away steps converge linearly: the optimum to 1e-6."""
    model, X, Y, lam, f_ref = tiny_chain
    f = SSVMDualObjective(lam, model.size_joint_feature)
    res = fw.block_coordinate_frank_wolfe(f, SSVMDual(model, X, Y, lam), tol=1e-10,
                                          max_iter=20000, gap_every=5, random_state=0, **kw)
    assert res.success, res.message
    assert res.fun == pytest.approx(f_ref, abs=1e-6)
    # strong duality: the primal objective at w equals minus the dual optimum
    primal = batch_primal(model, X, Y, res.x[:-1], lam)["primal"]
    assert primal == pytest.approx(-f_ref, abs=1e-6)
    assert primal == pytest.approx(-res.fun + res.gap, abs=1e-12)


@pytest.mark.parametrize("compiled", [True, False])
def test_tiny_chain_bcfw_certificate_brackets_cvxpy_optimum(tiny_chain, compiled):
    """Plain BCFW (Frank-Wolfe block steps, sublinear): f - gap <= f* <= f, gap -> 0."""
    model, X, Y, lam, f_ref = tiny_chain
    f = SSVMDualObjective(lam, model.size_joint_feature)
    dom = SSVMDual(model, X, Y, lam, compiled=compiled)
    with fw.debug(False):
        # 300 passes, a certificate every 10 (30 brackets, the gap down 25x): a gap
        # certified at 0.3x fails either way
        res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, max_iter=300, gap_every=10,
                                              random_state=0, compiled=compiled)
    assert res.extra["engine"] == ("compiled" if compiled else "python")
    gaps = res.history["gap"][np.isfinite(res.history["gap"])]
    funs = res.history["fun"][np.isfinite(res.history["gap"])]
    assert np.all(funs - gaps <= f_ref + 1e-12) and np.all(funs >= f_ref - 1e-12)
    assert gaps[-1] < 0.1 * gaps[0]


def test_batch_fw_and_cutting_plane_bracket_cvxpy_optimum(tiny_chain):
    model, X, Y, lam, f_ref = tiny_chain
    for solver, iters in (("fw", 2000), ("cutting_plane", 300)):
        svm = StructuredSVM(model, lam=lam, solver=solver, tol=1e-9, max_passes=iters,
                            eval_every=10**6).fit(X, Y)
        res = svm.result_
        assert res.fun >= f_ref - 1e-9, solver  # a feasible dual point
        assert res.fun - f_ref <= res.gap + 1e-9, solver  # the certificate bounds the true gap
        if solver == "cutting_plane":  # finite convergence; batch FW is sublinear
            assert res.fun - f_ref <= 1e-6


def test_ssg_approaches_the_optimum(tiny_chain):
    model, X, Y, lam, f_ref = tiny_chain
    subopt = []
    for passes in (10, 1000):
        out = ssg(model, X, Y, lam, max_passes=passes, random_state=0)
        subopt.append(batch_primal(model, X, Y, out["w_average"], lam)["primal"] + f_ref)
    assert subopt[0] >= -1e-9 and subopt[1] >= -1e-9  # f_ref = -P*, so P(w) + f_ref >= 0
    assert subopt[1] < 0.1 * subopt[0]


# -- scikit-learn's Crammer-Singer multiclass SVM ---------------------------------


def test_multiclass_matches_linearsvc_crammer_singer():
    from sklearn.datasets import load_digits
    from sklearn.svm import LinearSVC

    digits = load_digits()
    # 40 of the 1797 digits (4 of each class): the Python pairwise engine's block steps
    # are the cost; the certificate and sklearn's primal agree alike (rel. 2e-6), and a
    # 0.9 loss or half pairwise steps miss sklearn's primal by 4% and 13%
    Xd, yd = digits.data[:40] / 16.0, digits.target[:40]
    n = Xd.shape[0]
    C = 0.1
    lam = 1.0 / (C * n)  # sklearn: 1/2 ||W||^2 + C sum_i H_i = (lam/2 ||w||^2 + 1/n sum H_i) / lam
    sk = LinearSVC(C=C, multi_class="crammer_singer", fit_intercept=False, tol=1e-10,
                   max_iter=200000).fit(Xd, yd)
    model = MulticlassModel(10, 64)
    X, Y = list(Xd), [int(v) for v in yd]
    svm = StructuredSVM(model, lam=lam, solver="bcfw_pairwise", tol=1e-6, max_passes=3000,
                        gap_every=5, eval_every=10**6, averaging=False, random_state=0).fit(X, Y)
    p_ours = svm.primal(X, Y)
    p_sk = batch_primal(model, X, Y, sk.coef_.ravel(), lam)["primal"]
    print(f"primal ours {p_ours:.10f}  sklearn {p_sk:.10f}  gap {svm.result_.gap:.2e}")
    assert svm.result_.gap <= 1e-6
    assert abs(p_ours - p_sk) <= 1e-4 * p_sk


# -- engines ----------------------------------------------------------------------------


@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("kw", [{"block_order": "uniform", "averaging": "weighted"},
                                {"block_order": "gap"},
                                {"block_order": "perm", "step_size": "agnostic"}])
def test_compiled_chain_engine_equals_generic(ids, kw):
    if ids:
        X, Y = make_chain(30, n_states=4, n_features=5, n_templates=3, random_state=1)
        model = ChainModel(4, [5, 5, 5])
    else:
        X, Y = make_chain(30, n_states=4, n_features=5, random_state=1)
        model = ChainModel(4, 5)
    lam = 0.02
    f = SSVMDualObjective(lam, model.size_joint_feature)
    runs = {}
    for compiled in (True, False):
        dom = SSVMDual(model, X, Y, lam, compiled=compiled)
        with fw.debug(False):
            runs[compiled] = fw.block_coordinate_frank_wolfe(
                f, dom, tol=0.0, max_iter=12, gap_every=4, random_state=5,
                compiled=compiled, **kw)
    fast, slow = runs[True], runs[False]
    assert fast.extra["engine"] == "compiled" and slow.extra["engine"] == "python"
    np.testing.assert_allclose(fast.x, slow.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.history["fun"], slow.history["fun"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(fast.history["gap"], slow.history["gap"], rtol=1e-9, atol=1e-13)
    if "averaging" in kw:
        np.testing.assert_allclose(fast.extra["x_average"], slow.extra["x_average"], atol=1e-12)


# -- estimator -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chain_data():
    X, Y = make_chain(180, n_states=4, n_features=6, noise=1.2, random_state=0)
    return X[:120], Y[:120], X[120:], Y[120:]


@pytest.fixture
def nodebug():
    """The estimator as users run it: debug checks off, so the compiled engine runs."""
    with fw.debug(False):
        yield


def test_estimator_history_and_prediction(chain_data, nodebug):
    X, Y, Xt, Yt = chain_data
    svm = StructuredSVM(ChainModel(4, 6), max_passes=24, gap_every=5, eval_every=1, tol=0.0,
                        random_state=0).fit(X, Y, Xt, Yt)
    h = svm.history_
    assert list(h["passes"]) == list(range(1, 21))
    # certificate passes every 5 passes are counted as effective passes
    assert h["effective_passes"][-1] == pytest.approx(20 + 4)
    np.testing.assert_allclose(h["primal"] - h["dual"], h["gap"], atol=1e-12)
    assert np.all(h["gap"] >= -1e-12)
    assert np.all(np.diff(h["seconds"]) >= 0)
    assert h["test_error"][-1] == pytest.approx(svm.error(Xt, Yt))
    assert svm.score(Xt, Yt) == pytest.approx(1 - svm.error(Xt, Yt))
    pred = svm.predict(Xt)
    assert len(pred) == len(Xt) and all(p.shape == y.shape for p, y in zip(pred, Yt))
    # prediction is Viterbi at w_: compare with the model's own decoder
    for x, p in zip(Xt[:5], pred[:5]):
        np.testing.assert_array_equal(p, svm.model.decode(x, svm.w_))
    # a weighted-average BCFW run beats the all-zero predictor by far
    assert svm.error(Xt, Yt) < 0.5 * np.mean([np.mean(y != 0) for y in Yt])


def test_estimator_solvers_agree(chain_data, nodebug):
    # 40 of the examples at a larger lambda: every solver still certifies tol; a cutting
    # plane run at 1.02 lambda leaves the intersection as on all 120 at lambda 0.05
    X, Y = chain_data[0][:40], chain_data[1][:40]
    lam = 0.3
    runs = {}
    for solver in ("bcfw", "bcfw_pairwise", "fw", "cutting_plane"):
        svm = StructuredSVM(ChainModel(4, 6), lam=lam, solver=solver, tol=1e-3, max_passes=2000,
                            gap_every=5, eval_every=10**6, random_state=0).fit(X, Y)
        if solver != "fw":  # batch FW is sublinear: it only has to bracket the optimum
            assert svm.result_.success, (solver, svm.result_.message)
        runs[solver] = svm.result_
    # every certified interval [f - gap, f] holds the optimum: they must intersect
    lower = max(r.fun - r.gap for r in runs.values())
    upper = min(r.fun for r in runs.values())
    assert lower <= upper + 1e-12 * max(1.0, abs(upper)), \
        {k: (r.fun, r.gap) for k, r in runs.items()}


def test_save_load_and_warm_start(chain_data, tmp_path, nodebug):
    X, Y, Xt, Yt = chain_data
    a = StructuredSVM(ChainModel(4, 6), lam=0.05, tol=1e-3, max_passes=500, gap_every=2,
                      averaging=False, random_state=0, warm_start=True).fit(X, Y)
    path = tmp_path / "svm.npz"
    a.save(path, include_state=True)
    b = StructuredSVM.load(path)
    np.testing.assert_array_equal(b.w_, a.w_)
    assert [list(p) for p in b.predict(Xt)] == [list(p) for p in a.predict(Xt)]
    assert list(b.history_["primal"]) == list(a.history_["primal"])
    # re-fit at a nearby lambda: from the previous solution, fewer passes than from scratch
    a.set_params(lam=0.04).fit(X, Y)
    cold = StructuredSVM(ChainModel(4, 6), lam=0.04, tol=1e-3, max_passes=500, gap_every=2,
                         averaging=False, random_state=0).fit(X, Y)
    assert a.result_.success
    slack = 1e-12 * max(1.0, abs(cold.result_.fun))  # rounding of two sums of different order
    assert abs(a.result_.fun - cold.result_.fun) <= a.result_.gap + cold.result_.gap + slack
    assert a.result_.nit < cold.result_.nit
    # the loaded estimator carries the dual block state: it warm starts the same way
    b.set_params(lam=0.04).fit(X, Y)
    assert b.result_.nit == a.result_.nit
    np.testing.assert_array_equal(b.w_, a.w_)


def test_warm_start_generic_path_rescales_blocks(chain_data):
    # 40 of the examples at a larger lambda (the Python engine is the cost): the warm
    # and the cold fit still converge to tol, in 72 iterations against 91
    X, Y = chain_data[0][:40], chain_data[1][:40]
    kw = dict(tol=1e-3, max_passes=400, gap_every=2, averaging=False, random_state=0,
              compiled=False)
    a = StructuredSVM(ChainModel(4, 6), lam=0.6, warm_start=True, **kw).fit(X, Y)
    f_first = a.result_.fun
    a.set_params(lam=1.2).fit(X, Y)
    cold = StructuredSVM(ChainModel(4, 6), lam=1.2, **kw).fit(X, Y)
    # the warm start is the rescaled previous point: a feasible point of the new dual whose
    # value follows from (w, l) -> (w lam_old / lam_new, l)
    assert a.result_.success and cold.result_.success
    slack = 1e-12 * max(1.0, abs(cold.result_.fun))  # rounding of two sums of different order
    assert abs(a.result_.fun - cold.result_.fun) <= a.result_.gap + cold.result_.gap + slack
    assert a.result_.nit < cold.result_.nit
    assert f_first < 0


@pytest.mark.parametrize("solver, compiled", [("bcfw", True), ("bcfw", False),
                                              ("bcfw_pairwise", True), ("fw", True)])
def test_warm_start_on_other_data_starts_cold_and_certifies(solver, compiled, nodebug):
    """A dual state is a point of its own data set's dual: continued on other examples (of
    the same size) its dual value exceeded the new optimum and the gap certified nothing.
    The estimator warns and starts cold there; the bracket holds cvxpy's optimum.  On
    the same data (equal arrays, other objects) it continues without a warning."""
    import warnings

    model, lam = ChainModel(2, 3), 0.1
    X1, Y1 = make_chain(6, n_states=2, n_features=3, length=(2, 4), random_state=0)
    X2, Y2 = make_chain(6, n_states=2, n_features=3, length=(2, 4), random_state=5)
    f2 = all_labellings_qp(model, X2, Y2, lam)  # min of the negated dual
    kw = dict(lam=lam, solver=solver, compiled=compiled, tol=0.0, random_state=0,
              averaging=False, warm_start=True)
    svm = StructuredSVM(model, max_passes=30, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X1, Y1)
        svm.set_params(max_passes=5)
        with pytest.warns(UserWarning, match="training data differ"):
            svm.fit(X2, Y2)
        res = svm.result_
        scale = max(1.0, abs(f2))
        assert res.fun >= f2 - 1e-9 * scale  # a feasible dual point of the new data
        assert res.fun - res.gap <= f2 + 1e-9 * scale  # its gap a certificate
        assert svm.primal(X2, Y2) >= -f2 - 1e-9 * scale
        # the same data again, as new arrays: the warm start continues, no warning
        svm.fit(X2, Y2)
        again = StructuredSVM(model, max_passes=30, **kw).fit(X1, Y1)
        again_first = again.result_.fun
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again.fit([x.copy() for x in X1], [y.copy() for y in Y1])
        assert not [w for w in caught if "training data differ" in str(w.message)]
    # averaging off: the dual rises step by step from where the first fit ended
    assert again.history_["dual"][0] >= -again_first - 1e-12 * max(1.0, abs(again_first))


def test_estimator_bad_input(chain_data):
    X, Y, _, _ = chain_data
    model = ChainModel(4, 6)
    with pytest.raises(ValueError, match="solver.*'bcfw'.*Got 'newton'"):
        StructuredSVM(model, solver="newton").fit(X, Y)
    with pytest.raises(ValueError, match=r"'lam' parameter.*range \(0.0, inf\).*Got -1.0"):
        StructuredSVM(model, lam=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="X has 120 examples but Y has 119"):
        StructuredSVM(model).fit(X, Y[:-1])
    with pytest.raises(ValueError, match="X_test and Y_test"):
        StructuredSVM(model).fit(X, Y, X_test=X)
    # before training, not after it (the test error of the last history row)
    with pytest.raises(ValueError, match="X_test has 120 examples but Y_test has 3"):
        StructuredSVM(model, max_passes=10**6).fit(X, Y, X_test=X, Y_test=Y[:3])
    with pytest.raises(AttributeError, match="not fitted"):
        StructuredSVM(model).predict(X)
    fitted = StructuredSVM(model, max_passes=2, tol=1.0).fit(X, Y)
    assert fitted.predict([]) == []  # "ChainData: every sequence needs a position" before
    with pytest.raises(TypeError, match="StructuredModel"):
        StructuredSVM("chain").fit(X, Y)
    with pytest.raises(ValueError, match="Invalid parameter 'C'"):
        StructuredSVM(model).set_params(C=1.0)


# -- small slices of the real data (skipped when ../shared/data is absent) -------------------


def _ocr_or_skip():
    try:
        return load_ocr("ocr2")
    except FileNotFoundError:
        pytest.skip("OCR data not available")


def test_ocr_slice_training():
    Xtr, Ytr, Xte, Yte = _ocr_or_skip()
    X, Y = Xtr[:300], Ytr[:300]
    with fw.debug(False):
        svm = StructuredSVM(ChainModel(26, 129), lam=0.01, max_passes=10, gap_every=5,
                            eval_every=5, tol=0.0, random_state=0).fit(X, Y, Xte[:200], Yte[:200])
    h = svm.history_
    assert svm.result_.extra["engine"] == "compiled"
    assert h["gap"][-1] < h["gap"][0]
    assert h["primal"][-1] == pytest.approx(svm.primal(X, Y), rel=1e-12)
    # 300 words are few, but letters are far better than chance (25/26 error)
    assert h["test_error"][-1] < 0.6


def test_conll_slice_engines_agree():
    try:
        Xtr, Ytr, _, _, info = load_conll2000(return_info=True)
    except FileNotFoundError:
        pytest.skip("CoNLL-2000 data not available")
    model = ChainModel(info["n_states"], info["feature_sizes"])
    # 20 sentences: a Python step 1 + 1e-9 times too long moves x by 1.5e-11 here,
    # 1.9e-11 on 40
    X, Y = Xtr[:20], Ytr[:20]
    lam = 1e-2
    f = SSVMDualObjective(lam, model.size_joint_feature)
    runs = []
    for compiled in (True, False):
        with fw.debug(False):
            runs.append(fw.block_coordinate_frank_wolfe(
                f, SSVMDual(model, X, Y, lam, compiled=compiled), tol=0.0, max_iter=4,
                gap_every=2, averaging="weighted", certify="average", random_state=0,
                compiled=compiled))
    np.testing.assert_allclose(runs[0].x, runs[1].x, atol=1e-12)
    assert runs[0].gap == pytest.approx(runs[1].gap, rel=1e-9)


def test_joint_rounds_reach_the_serial_optimum_within_the_certified_gaps():
    """round_step='joint' (one line search per round of examples) trains to the same
    problem's optimum: the primal values of a joint and a serial fit differ by at most
    the sum of their certified gaps."""
    # 24 examples at lambda 0.2: joint steps 2.5x the line search's miss the serial
    # optimum as on 60 at 0.05
    X, Y = make_chain(24, n_states=3, n_features=4, random_state=0)
    kw = dict(lam=0.2, max_passes=1000, tol=2e-3, gap_every=5, random_state=0)
    serial = StructuredSVM(ChainModel(3, 4), **kw).fit(X, Y)
    joint = StructuredSVM(ChainModel(3, 4), batch_size=8, round_step="joint", **kw).fit(X, Y)
    assert joint.result_.extra["round_step"] == "joint"
    assert joint.result_.extra["engine"] == "python"
    gj, gs = joint.history_["gap"][-1], serial.history_["gap"][-1]
    assert gj <= 2e-3 and gs <= 2e-3
    assert abs(joint.history_["primal"][-1] - serial.history_["primal"][-1]) <= gj + gs + 1e-9
    with pytest.raises(ValueError, match="round_step='joint' is how the examples"):
        StructuredSVM(ChainModel(3, 4), round_step="joint").fit(X, Y)
    with pytest.raises(ValueError, match="round_step"):
        StructuredSVM(ChainModel(3, 4), batch_size=8, round_step="both").fit(X, Y)


@pytest.mark.parametrize("solver", ["cutting_plane", "online_eg", "dual_extragradient"])
def test_warm_start_of_a_solver_without_one_warns(solver):
    """The cutting plane ignored warm_start without a word: a regularization path started
    cold at every step."""
    import warnings

    X, Y = make_chain(12, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), solver=solver, max_passes=4, random_state=0,
                        warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, Y)
        with pytest.warns(UserWarning, match=rf"solver='{solver}' has no warm start"):
            svm.fit(X, Y)


@pytest.mark.parametrize("change", [{"compiled": False}, {"solver": "bcfw_pairwise"}])
def test_a_compiled_warm_state_the_next_solver_cannot_read_warns(change, nodebug):
    """The compiled kernels' state (label marginals) is not the generic steps' block
    points: the next fit started cold without a word."""
    import warnings

    X, Y = make_chain(6, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), lam=0.1, max_passes=5, random_state=0,
                        warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, Y)
        with pytest.warns(UserWarning, match="cannot read .* starts from the true labellings"):
            svm.set_params(**change).fit(X, Y)


@pytest.mark.parametrize("solver", ["bcfw", "fw", "ssg"])
def test_a_warm_start_after_the_model_changed_starts_cold(solver, nodebug):
    import warnings

    X, Y = make_chain(10, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), lam=0.1, solver=solver, max_passes=5,
                        random_state=0, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, Y)
        svm.set_params(model=ChainModel(4, 4))
        with pytest.warns(UserWarning, match="the model changed"):
            svm.fit(X, Y)
        cold = StructuredSVM(ChainModel(4, 4), lam=0.1, solver=solver, max_passes=5,
                             random_state=0).fit(X, Y)
    assert np.array_equal(svm.w_, cold.w_)


def test_a_warm_state_of_the_wrong_shape_or_with_nan_is_refused(nodebug):
    """A (re-signed) model file with a shortened or NaN state array loaded, and failed at
    the next warm fit; the estimator now refuses such a state when it is set (the model
    file reader turns that into a ModelFileError)."""
    X, Y = make_chain(12, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), compiled=False, max_passes=4, tol=1.0,
                        random_state=0).fit(X, Y)
    state = svm.warm_state()
    dim = ChainModel(3, 4).size_joint_feature + 1
    short = {**state, "bcfw": {**state["bcfw"],
                               "points": [p[:-1] for p in state["bcfw"]["points"]]}}
    with pytest.raises(ValueError, match=rf"block point 0 has shape \({dim - 1},\), "
                                         rf"expected \({dim},\)"):
        svm.set_warm_state(short)
    nan = [p.copy() for p in state["bcfw"]["points"]]
    nan[3][0] = np.nan
    with pytest.raises(ValueError, match=r"the array state\['points'\]\[3\] holds NaN or inf"):
        svm.set_warm_state({**state, "bcfw": {**state["bcfw"], "points": nan}})
    svm.set_warm_state(state)  # its own state is taken


@pytest.mark.parametrize("kw", [{}, {"compiled": False}, {"solver": "ssg"},
                                {"solver": "online_eg"}])
def test_a_labelling_that_is_not_1d_is_refused_by_every_path(kw, nodebug):
    # (L, 1) labellings were flattened by the compiled paths and refused by the others
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(n, 2)) for n in (2, 3, 4)]
    Y = [rng.integers(0, 3, size=len(x))[:, None] for x in X]
    with pytest.raises(ShapeError, match="must be 1-D|shape"):
        StructuredSVM(ChainModel(3, 2), max_passes=3, **kw).fit(X, Y)


class _CrashingChain(ChainModel):
    """A chain model whose method ``where`` raises at its ``crash_at``-th call."""

    def __init__(self, n_states, n_features, where, crash_at):
        super().__init__(n_states, n_features)
        self.where, self.crash_at, self.calls = where, crash_at, 0

    def _count(self):
        self.calls += 1
        if self.calls == self.crash_at:
            raise RuntimeError("model crashed")

    def loss_augmented_decode(self, x, y, w):
        if self.where == "decode":
            self._count()
        return super().loss_augmented_decode(x, y, w)

    def feature_supports(self, X, append=None):
        if self.where == "set-up":
            self._count()
        return super().feature_supports(X, append=append)


@pytest.mark.parametrize("where, crash_at, kept", [("set-up", 1, False), ("decode", 25, True)])
def test_a_failed_fit_leaves_one_fit_not_two(where, crash_at, kept):
    """A model's exception mid-fit left the previous fit's w_ beside this fit's lam_,
    n_train_ and empty history_, and save() wrote that mixture as a model."""
    X, Y = make_chain(30, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), lam=0.1, max_passes=5, random_state=0,
                        compiled=False).fit(X, Y)
    w_old, rows = svm.w_.copy(), len(svm.history_["passes"])
    svm.set_params(model=_CrashingChain(3, 4, where, crash_at), lam=0.05)
    with pytest.raises(RuntimeError, match="model crashed") as info:
        svm.fit(X[:20], Y[:20])
    so_far = getattr(info.value, "result", None)
    assert (so_far is not None) == kept
    if not kept:  # nothing of this fit to keep: the previous one, whole
        assert svm.lam_ == 0.1 and svm.n_train_ == 30
        np.testing.assert_array_equal(svm.w_, w_old)
        assert len(svm.history_["passes"]) == rows
    else:  # the run so far, as for a lost cluster: this fit's attributes throughout
        assert svm.lam_ == 0.05 and svm.n_train_ == 20 and svm.result_ is so_far
        assert svm.w_.shape == w_old.shape and not np.array_equal(svm.w_, w_old)

"""LatentGraphCRF and LatentSSVM: imputation and loss-augmented decoding against brute
force, the latent objective against enumeration, CCCP's monotone objective, the warm
start's dual point against a membership LP, a task where hidden states matter, and the
estimator's conventions."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, KFold

from frankwolfe.applications.structured_svm import (
    GraphCRF,
    LatentGraphCRF,
    LatentSSVM,
    StructuredSVM,
    make_latent_blocks,
)
from frankwolfe.applications.structured_svm.latent_ssvm import (
    _shift_warm_state,
    latent_objective,
)
from frankwolfe.applications.structured_svm.models.graph import grid_edges, labelling_score
from frankwolfe.errors import ShapeError

GRAPHS = {
    "path": np.array([[0, 1], [1, 2], [2, 3]]),
    "star": np.array([[0, 1], [0, 2], [0, 3], [3, 4]]),
    "cycle": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
    "grid": grid_edges(2, 3)[0],
    "none": np.zeros((0, 2), dtype=np.int64),
}


def random_example(rng: np.random.Generator, edges: np.ndarray, F: int = 2) -> tuple:
    n = int(edges.max()) + 1 if edges.size else 3
    return rng.normal(size=(n, F)), edges


def all_labellings(n: int, K: int) -> np.ndarray:
    return np.array(list(itertools.product(range(K), repeat=n)), dtype=np.int64)


def brute_scores(model: LatentGraphCRF, x: tuple, w: np.ndarray, hs: np.ndarray
                 ) -> np.ndarray:
    """Scores of the labellings ``hs`` from the potentials (the energy, not the joint
    feature: an independent route to <w, phi(x, h)>)."""
    u, p, e = model.potentials(x, w)
    p = np.broadcast_to(p, (e.shape[0], model.n_states, model.n_states))
    return np.array([labelling_score(u, p, e, h) for h in hs])


def small_models() -> list[LatentGraphCRF]:
    return [LatentGraphCRF(2, 2, 2, inference="exact"),
            LatentGraphCRF(3, 2, 2, inference="exact", directed=True,
                           class_weight=[1.0, 2.0, 0.5]),
            LatentGraphCRF(2, 3, 3, inference="exact")]


# -- the model against enumeration ---------------------------------------------------------
@pytest.mark.parametrize("m", range(3))
def test_latent_is_the_best_consistent_labelling(m: int) -> None:
    rng = np.random.default_rng(100 + m)
    model = small_models()[m]
    k = model.n_hidden_states
    checked = 0
    for name, edges in GRAPHS.items():
        for _ in range(4):
            x = random_example(rng, edges, model.n_features)
            n = x[0].shape[0]
            w = rng.normal(size=model.size_joint_feature)
            y = rng.integers(model.n_labels, size=n)
            h = model.latent(x, y, w)
            assert np.array_equal(h // k, y), name
            consistent = y * k + all_labellings(n, k)
            best = brute_scores(model, x, w, consistent).max()
            assert model.score(x, h, w) == pytest.approx(best, rel=1e-10, abs=1e-10), name
            checked += 1
    assert checked == 20


@pytest.mark.parametrize("m", range(3))
def test_loss_augmented_decode_against_enumeration(m: int) -> None:
    rng = np.random.default_rng(200 + m)
    model = small_models()[m]
    k, cw = model.n_hidden_states, model.label_class_weight
    for name in ("path", "cycle", "none"):
        edges = GRAPHS[name]
        x = random_example(rng, edges, model.n_features)
        n = x[0].shape[0]
        hs = all_labellings(n, model.n_states)
        for _ in range(3):
            w = rng.normal(size=model.size_joint_feature)
            h_true = rng.integers(model.n_states, size=n)
            # the visible Hamming loss written out, independently of the model's loss
            loss = (cw[h_true // k][None, :] * (hs // k != (h_true // k)[None, :])).sum(1) / n
            values = loss + brute_scores(model, x, w, hs)
            h = model.loss_augmented_decode(x, h_true, w)
            got = model.loss(h_true, h) + model.score(x, h, w)
            assert got == pytest.approx(values.max(), rel=1e-10, abs=1e-10), name
            bound, relaxed = model.loss_augmented_bound(x, h_true, w)
            assert bound == pytest.approx(values.max(), rel=1e-10, abs=1e-10)
            assert not relaxed
            # the loss sees visible labels only: another consistent h_true, the same oracle
            other = (h_true // k) * k + rng.integers(k, size=n)
            h2 = model.loss_augmented_decode(x, other, w)
            assert model.loss(other, h2) + model.score(x, h2, w) == pytest.approx(
                values.max(), rel=1e-10, abs=1e-10)


def test_losses_and_relaxed_labellings() -> None:
    rng = np.random.default_rng(3)
    model = LatentGraphCRF(3, 2, 2, class_weight=[1.0, 2.0, 0.5])
    x = random_example(rng, GRAPHS["cycle"])
    n, K = 4, model.n_states
    h_true = np.array([0, 3, 5, 4])
    h = np.array([1, 2, 3, 0])  # node 0 same label, 1 same label, 2 wrong, 3 wrong
    want = (1.0 * 0 + 2.0 * 0 + 0.5 * 1 + 0.5 * 1) / 4
    assert model.loss(h_true, h) == pytest.approx(want, rel=1e-12)
    assert model.label_loss(h_true // 2, h // 2) == pytest.approx(want, rel=1e-12)
    assert model.loss(h_true, h_true) == 0.0
    # a relaxed labelling: linear in the node marginals
    node = np.full((n, K), 1.0 / K)
    edge = np.full((4, K, K), 1.0 / K ** 2)
    relaxed = np.concatenate([node.ravel(), edge.ravel()])
    assert model.loss(h_true, relaxed) == pytest.approx(
        np.mean(model.class_weight[h_true] * (1 - 2 / K)), rel=1e-12)
    assert model.label_from_latent(np.array([0, 1, 2, 5])).tolist() == [0, 0, 1, 2]
    assert model.decode_labels(x, np.zeros(model.size_joint_feature)).shape == (n,)


def test_latent_objective_against_enumeration() -> None:
    rng = np.random.default_rng(4)
    model = LatentGraphCRF(2, 2, 2, inference="exact")
    k, lam = 2, 0.3
    data = [(random_example(rng, GRAPHS[g]), rng.integers(2, size=4 if g != "none" else 3))
            for g in ("path", "cycle", "none")]
    X, Y = [d[0] for d in data], [d[1] for d in data]
    for _ in range(3):
        w = rng.normal(size=model.size_joint_feature)
        total = 0.0
        for x, y in zip(X, Y):
            n = y.size
            hs = all_labellings(n, model.n_states)
            scores = brute_scores(model, x, w, hs)
            loss = (hs // k != y[None, :]).sum(1) / n
            consistent = np.all(hs // k == y[None, :], axis=1)
            total += (loss + scores).max() - scores[consistent].max()
        want = lam / 2 * w @ w + total / len(X)
        got, H = latent_objective(model, X, Y, w, lam)
        assert got == pytest.approx(want, rel=1e-10)
        assert all(np.array_equal(h // k, y) for h, y in zip(H, Y))


def test_init_latent_clusters_within_labels() -> None:
    X, Y = make_latent_blocks(6, 4, 4, noise=0.1, random_state=0)
    model = LatentGraphCRF(2, 2, 2)
    H = model.init_latent(X, Y, random_state=0)
    assert all(np.array_equal(h // 2, y) for h, y in zip(H, Y))
    # well separated clusters: each sub-state is one cluster (the sign of the coordinate
    # that varies within the label), up to the k-means' order of the two
    for c, axis in ((0, 0), (1, 1)):
        f = np.concatenate([x[0][y == c, axis] for x, y in zip(X, Y)])
        s = np.concatenate([h[y == c] % 2 for h, y in zip(H, Y)])
        agree = np.mean(s == (f > 0))
        assert agree in (0.0, 1.0)
    again = model.init_latent(X, Y, random_state=0)
    assert all(np.array_equal(a, b) for a, b in zip(H, again))


# -- the warm start: a dual point of the new problem -----------------------------------
def _in_block_polytope(model: LatentGraphCRF, x: tuple, h_true: np.ndarray, point: np.ndarray,
                       lam: float, n: int) -> bool:
    """Whether ``point`` is a convex combination of the block's vertices ``(psi(h) /
    (lam n), L(h) / n)`` over every hidden labelling ``h`` (an LP)."""
    hs = all_labellings(h_true.size, model.n_states)
    phi_true = model.joint_feature(x, h_true)
    V = np.array([np.append((phi_true - model.joint_feature(x, h)) / (lam * n),
                            model.loss(h_true, h) / n) for h in hs]).T
    A = np.vstack([V, np.ones(V.shape[1])])
    b = np.append(point, 1.0)
    res = linprog(np.zeros(V.shape[1]), A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    return bool(res.status == 0)


def test_shifted_warm_state_is_a_dual_point_of_the_new_labellings() -> None:
    rng = np.random.default_rng(5)
    model = LatentGraphCRF(2, 2, 2, inference="exact")
    edges = np.array([[0, 1], [1, 2]])
    X = [random_example(rng, edges) for _ in range(2)]
    Y = [np.array([0, 1, 1]), np.array([1, 0, 0])]
    H_old = [y * 2 for y in Y]
    H_new = [y * 2 + np.array([1, 0, 1]) for y in Y]
    lam = 0.5
    inner = StructuredSVM(model, lam=lam, max_passes=6, gap_every=3, tol=0.0,
                          random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        inner.fit(X, H_old)
    old = inner.warm_state()["bcfw"]["points"]
    assert all(_in_block_polytope(model, x, h, p, lam, 2) for x, h, p in zip(X, H_old, old))
    # the points left as they were are not in the new blocks' polytopes (so the check
    # below can fail) ...
    assert not all(_in_block_polytope(model, x, h, p, lam, 2)
                   for x, h, p in zip(X, H_new, old))
    _shift_warm_state(inner, model, X, H_old, H_new)
    new = inner.warm_state()["bcfw"]["points"]
    # ... and the shifted ones are
    assert all(_in_block_polytope(model, x, h, p, lam, 2) for x, h, p in zip(X, H_new, new))


# -- CCCP ---------------------------------------------------------------------------------
def small_task(n: int = 12, seed: int = 0) -> tuple[list, list]:
    return make_latent_blocks(n, 3, 3, noise=0.6, random_state=seed)


# noisy enough that the k-means start is not the fixed point: CCCP takes 3 rounds
@pytest.mark.parametrize("shape, seed", [((16, 1, 9), 0), ((12, 3, 3), 1)])
def test_objective_does_not_increase_beyond_the_inner_gaps(shape: tuple, seed: int) -> None:
    X, Y = make_latent_blocks(*shape, noise=1.0 if seed == 0 else 1.5, random_state=seed)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.3,
                          solver="bcfw_pairwise", max_passes=100, tol=1e-4, gap_every=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LatentSSVM(inner, max_rounds=6, tol=0.0, random_state=1).fit(X, Y)
    J, gaps = est.objective_history_, est.inner_gaps_
    assert est.n_rounds_ >= 3 and J.size == est.n_rounds_ + 1
    assert np.all(np.isfinite(gaps)) and np.all(gaps >= -1e-12)
    rise = J[1:] - J[:-1]
    assert np.all(rise <= gaps + 1e-9 * np.abs(J[:-1])), (J, gaps)
    assert J[-1] < J[0] - 0.3  # it learned something
    assert est.converged_ and est.history_["changed"][-1] == 0
    # the recorded objective is the independent one at the returned weights
    assert est.objective(X, Y) == pytest.approx(J[-1], rel=1e-12)
    assert np.allclose(est.history_["objective"], J[1:], rtol=1e-12)
    # latent_ is the imputation at w_ (and, unchanged, what the last round trained on)
    model = est.base_ssvm.model
    assert all(np.array_equal(a, model.latent(x, y, est.w_))
               for a, x, y in zip(est.latent_, X, Y))


@pytest.mark.parametrize("solver, warm", [("fw", True), ("ssg", True), ("bcfw", False)])
def test_other_inner_solvers(solver: str, warm: bool) -> None:
    X, Y = make_latent_blocks(16, 1, 9, noise=1.0, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.3, solver=solver,
                          max_passes=30, tol=1e-3, gap_every=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LatentSSVM(inner, max_rounds=3, tol=0.0, warm_rounds=warm,
                         random_state=1).fit(X, Y)
    J, gaps = est.objective_history_, est.inner_gaps_
    assert J[-1] < 0.5
    if solver == "ssg":  # no certificate: the objective may rise, which ends the loop
        assert np.all(np.isnan(gaps))
    else:
        assert est.n_rounds_ >= 2
        # the last round continued from the one before only with warm rounds
        assert est.base_ssvm_.warm_start is warm
        assert np.all(J[1:] - J[:-1] <= gaps + 1e-9 * np.abs(J[:-1])), (J, gaps)


def test_latent_beats_the_observed_model_where_hidden_states_matter() -> None:
    X, Y = make_latent_blocks(40, 4, 4, noise=0.5, random_state=7)
    Xtr, Ytr, Xte, Yte = X[:20], Y[:20], X[20:], Y[20:]
    observed = StructuredSVM(GraphCRF(2, 2, inference="trws"), lam=1.0, max_passes=20,
                             solver="bcfw_pairwise", tol=1e-3, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="trws"), lam=1.0,
                          solver="bcfw_pairwise", max_passes=20, tol=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        observed.fit(Xtr, Ytr)
        latent = LatentSSVM(inner, max_rounds=5, random_state=0).fit(Xtr, Ytr)
    err_observed = observed.error(Xte, Yte)
    err_latent = latent.error(Xte, Yte)
    assert err_latent < 0.1, err_latent
    assert err_observed > 0.35, err_observed  # chance is 0.5


# -- estimator conventions -----------------------------------------------------------------
def test_estimator_conventions_and_reproducibility() -> None:
    X, Y = small_task(10, seed=2)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.05,
                          max_passes=20, tol=1e-3)
    est = LatentSSVM(inner, max_rounds=3, random_state=3)
    params = est.get_params()
    assert params["base_ssvm__lam"] == 0.05 and params["max_rounds"] == 3
    with pytest.raises(NotFittedError):
        est.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = clone(est).fit(X, Y)
        b = clone(est).fit(X, Y)
    assert np.array_equal(a.w_, b.w_)
    assert np.array_equal(a.objective_history_, b.objective_history_)
    assert inner.get_params()["warm_start"] is False and not hasattr(inner, "w_")
    pred = a.predict(X)
    assert all(p.shape == y.shape and p.max() < 2 for p, y in zip(pred, Y))
    assert a.score(X, Y) == pytest.approx(
        1 - np.mean([np.mean(p != y) for p, y in zip(pred, Y)]), rel=1e-12)
    assert all(np.array_equal(h // 2, p) for h, p in zip(a.predict_latent(X), pred))


def test_the_inner_estimator_saves_and_loads(tmp_path) -> None:
    X, Y = small_task(6, seed=3)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact", class_weight=[1, 2]),
                          lam=0.5, max_passes=10, tol=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LatentSSVM(inner, max_rounds=2, random_state=0).fit(X, Y)
    est.base_ssvm_.save(tmp_path / "inner.npz")
    back = StructuredSVM.load(tmp_path / "inner.npz", models=[LatentGraphCRF])
    assert np.array_equal(back.w_, est.w_)
    assert back.model.model_params() == est.base_ssvm_.model.model_params()
    assert [back.model.decode_labels(x, back.w_).tolist() for x in X] == \
        [p.tolist() for p in est.predict(X)]


def test_grid_search_over_the_inner_lambda() -> None:
    X, Y = small_task(12, seed=4)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), max_passes=10,
                          tol=1e-2)
    search = GridSearchCV(LatentSSVM(inner, max_rounds=2, random_state=0),
                          {"base_ssvm__lam": [0.01, 1.0]}, cv=KFold(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, Y)
    assert search.best_params_["base_ssvm__lam"] in (0.01, 1.0)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.base_ssvm_.lam == search.best_params_["base_ssvm__lam"]


def test_max_rounds_warns() -> None:
    X, Y = make_latent_blocks(16, 1, 9, noise=1.0, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.3,
                          solver="bcfw_pairwise", max_passes=100, tol=1e-4, gap_every=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LatentSSVM(inner, max_rounds=1, tol=0.0, random_state=1).fit(X, Y)
    texts = [str(c.message) for c in caught if c.category is ConvergenceWarning]
    assert any("max_rounds=1 ended CCCP" in t for t in texts), texts
    # the inner run's budget ended above its tol: said once, with the round and its gap
    assert any("inner training of rounds [1]" in t for t in texts), texts
    assert est.n_rounds_ == 1 and not est.converged_


# -- bad inputs --------------------------------------------------------------------------
def test_bad_model_arguments() -> None:
    with pytest.raises(ValueError, match="n_labels"):
        LatentGraphCRF(1, 2)
    with pytest.raises(ValueError, match="n_hidden_states"):
        LatentGraphCRF(2, 2, 0)
    with pytest.raises(ValueError, match="class_weight"):
        LatentGraphCRF(2, 2, 2, class_weight=[1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="inference"):
        LatentGraphCRF(2, 2, 2, inference="magic")
    model = LatentGraphCRF(2, 2, 2)
    x = (np.zeros((3, 2)), np.array([[0, 1], [1, 2]]))
    w = np.zeros(model.size_joint_feature)
    with pytest.raises(ValueError, match=r"`y`\[1\] = 2 is not a label in \[0, 2\)"):
        model.latent(x, np.array([0, 2, 1]), w)
    with pytest.raises(ShapeError, match="one visible label per node"):
        model.latent(x, np.array([0, 1]), w)
    with pytest.raises(ValueError, match="self loop"):
        model.latent((np.zeros((3, 2)), np.array([[0, 0]])), np.array([0, 1, 1]), w)
    with pytest.raises(ValueError, match=r"`Y\[0\]`\[0\] = 5"):
        model.init_latent([x], [np.array([5, 0, 0])])
    assert repr(model) == "LatentGraphCRF(n_labels=2, n_features=2, n_hidden_states=2, " \
                          "inference='auto')"
    params = LatentGraphCRF(3, 2, 2, class_weight=[1, 2, 3]).model_params()
    assert LatentGraphCRF(**params).model_params() == params


def test_bad_estimator_inputs() -> None:
    X, Y = small_task(4, seed=6)
    good = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.1, max_passes=2)
    with pytest.raises(TypeError, match="GraphCRF lacks"):
        LatentSSVM(StructuredSVM(GraphCRF(2, 2))).fit(X, Y)
    with pytest.raises(ValueError, match="'max_rounds' parameter of LatentSSVM"):
        LatentSSVM(good, max_rounds=0).fit(X, Y)
    with pytest.raises(ValueError, match="'base_ssvm' parameter"):
        LatentSSVM(GraphCRF(2, 2)).fit(X, Y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="X has 4 examples but Y has 3"):
        LatentSSVM(good).fit(X, Y[:3])
    bad = [y.copy() for y in Y]
    bad[2][4] = 3
    with pytest.raises(ValueError, match=r"`Y\[2\]`\[4\] = 3 is not a label"):
        LatentSSVM(good).fit(X, bad)
    nan = [(x[0].copy(), x[1]) for x in X]
    nan[1][0][2, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[1\]\[0\] contains nan"):
        LatentSSVM(good).fit(nan, Y)
    with pytest.raises(ValueError, match="make_latent_blocks: `noise`"):
        make_latent_blocks(2, noise=-1.0)


def test_example_runs_quick(tmp_path, capsys) -> None:
    import importlib.util
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    path = Path(__file__).resolve().parents[1] / "examples" / "latent_hidden_states.py"
    spec = importlib.util.spec_from_file_location("latent_hidden_states", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    errors = [float(line.split("test error ")[1].split()[0]) for line in out.splitlines()
              if "test error" in line]
    assert len(errors) == 2 and errors[0] > 0.4 and errors[1] < 0.2, out
    assert (tmp_path / "latent_hidden_states.png").stat().st_size > 10_000

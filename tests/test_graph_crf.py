"""GraphCRF and EdgeFeatureGraphCRF: the feature map against the inference energies, the
loss-augmented oracle against brute force, relaxed (LP) labellings, training."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import (
    DirectionalGridCRF,
    EdgeFeatureGraphCRF,
    GraphCRF,
    GridCRF,
    StructuredSVM,
)
from frankwolfe.applications.structured_svm.datasets import make_noisy_blocks
from frankwolfe.applications.structured_svm.dual import SSVMBlockOracle
from frankwolfe.applications.structured_svm.models.graph import grid_edges, labelling_score
from frankwolfe.applications.structured_svm.oracles import batch_primal, batch_psi_loss
from frankwolfe.errors import ShapeError


def models() -> list[GraphCRF]:
    return [GraphCRF(3, 2, inference="exact"),
            GraphCRF(3, 2, inference="exact", directed=True, class_weight=[1.0, 2.0, 0.5]),
            EdgeFeatureGraphCRF(3, 2, 3, inference="exact", symmetric_edge_features=[0],
                                antisymmetric_edge_features=[2])]


def example(model: GraphCRF, rng: np.random.Generator, h: int = 2, w: int = 3) -> tuple:
    edges, _ = grid_edges(h, w)
    feats = rng.normal(size=(h * w, model.n_features))
    if isinstance(model, EdgeFeatureGraphCRF):
        return feats, edges, rng.normal(size=(edges.shape[0], model.n_edge_features))
    return feats, edges


def all_labellings(n: int, K: int) -> np.ndarray:
    return np.array(list(itertools.product(range(K), repeat=n)), dtype=np.int64)


@pytest.mark.parametrize("k", range(3))
def test_score_is_the_energy_of_the_potentials(k: int) -> None:
    rng = np.random.default_rng(k)
    model = models()[k]
    x = example(model, rng)
    w = rng.normal(size=model.size_joint_feature)
    u, p, e = model.potentials(x, w)
    p = np.broadcast_to(p, (e.shape[0], 3, 3))
    for y in rng.integers(3, size=(10, 6)):
        assert model.score(x, y, w) == pytest.approx(labelling_score(u, p, e, y), rel=1e-12)


@pytest.mark.parametrize("k", range(3))
def test_oracles_against_brute_force(k: int) -> None:
    rng = np.random.default_rng(10 + k)
    model = models()[k]
    x = example(model, rng)
    ys = all_labellings(6, 3)
    for _ in range(3):
        w = rng.normal(size=model.size_joint_feature)
        y_true = rng.integers(3, size=6)
        plain = np.array([model.score(x, y, w) for y in ys])
        aug = plain + np.array([model.loss(y_true, y) for y in ys])
        yd = model.decode(x, w)
        ya = model.loss_augmented_decode(x, y_true, w)
        assert model.score(x, yd, w) == pytest.approx(plain.max(), rel=1e-10, abs=1e-10)
        got = model.score(x, ya, w) + model.loss(y_true, ya)
        assert got == pytest.approx(aug.max(), rel=1e-10, abs=1e-10)
        # psi and the loss agree with the feature map
        idx, val = model.psi(x, y_true, ya)
        dense = np.zeros(model.size_joint_feature)
        dense[idx] = val
        np.testing.assert_allclose(dense, model.joint_feature(x, y_true)
                                   - model.joint_feature(x, ya), atol=1e-12)


def test_hamming_loss_with_class_weights() -> None:
    m = GraphCRF(3, 1, class_weight=[1.0, 2.0, 0.5])
    assert m.loss(np.array([0, 1, 2, 1]), np.array([0, 0, 0, 1])) == pytest.approx(2.5 / 4)
    assert GraphCRF(3, 1).loss(np.array([0, 1, 2, 1]), np.array([0, 0, 0, 1])) == 0.5


def frustrated() -> tuple[GraphCRF, tuple, np.ndarray, np.ndarray]:
    # an odd cycle whose edges all want disagreement: the local LP is fractional
    model = GraphCRF(2, 1, inference="lp")
    x = (np.zeros((3, 1)), np.array([[0, 1], [1, 2], [2, 0]]))
    w = np.zeros(model.size_joint_feature)
    w[2:] = [-1.0, 1.0, 1.0, -1.0]
    return model, x, np.array([0, 0, 0]), w


def test_lp_oracle_returns_relaxed_labellings() -> None:
    model, x, y_true, w = frustrated()
    ya = model.loss_augmented_decode(x, y_true, w)
    assert ya.dtype.kind == "f" and ya.shape == (3 * 2 + 3 * 4,)
    node = ya[:6].reshape(3, 2)
    np.testing.assert_allclose(node, 0.5, atol=1e-6)
    # the loss and the feature map are linear: the mean over the two frustrated
    # labellings that share these marginals' support
    integral = [np.array(v) for v in itertools.product((0, 1), repeat=3)]
    best = max(model.score(x, y, w) + model.loss(y_true, y) for y in integral)
    relaxed = model.score(x, ya, w) + model.loss(y_true, ya)
    assert relaxed > best + 0.5  # the relaxation's optimum is above every labelling's
    assert model.loss(y_true, ya) == pytest.approx(0.5, abs=1e-6)
    # the decoder still returns an integer labelling
    assert model.decode(x, w).dtype.kind == "i"
    # the dual's block oracle takes the relaxed labelling as an atom
    oracle = SSVMBlockOracle(model, x, y_true, np.arange(model.size_joint_feature), 0.1, 4,
                             np.zeros(model.size_joint_feature))
    atom = oracle.vertex(ya)
    want = np.append(model.joint_feature(x, y_true) - model.joint_feature(x, ya), 0.0) / 0.4
    want[-1] = model.loss(y_true, ya) / 4
    np.testing.assert_allclose(atom.to_dense(), want, atol=1e-9)
    assert atom.key != oracle.vertex(np.array([0, 1, 0])).key


def test_lp_training_certifies_the_relaxed_problem() -> None:
    rng = np.random.default_rng(0)
    edges = np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4], [4, 2]])
    X, Y = [], []
    for _ in range(12):
        y = rng.integers(2, size=5)
        y[1] = 1 - y[0]  # disagreement on odd cycles: frustrated, fractional LPs
        X.append((np.c_[rng.normal(size=(5, 1)) + y[:, None], np.ones(5)], edges))
        Y.append(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(GraphCRF(2, 2, inference="lp"), max_passes=12, gap_every=4,
                            random_state=0).fit(X, Y)
    gaps = svm.history_["gap"]
    # the primal uses the same relaxed oracle: weak duality of the relaxed problem
    assert np.all(gaps >= -1e-7) and gaps[-1] < gaps[0]


def test_batch_frank_wolfe_runs_on_graphs() -> None:
    # batch FW takes one step per pass: too few in 10 passes to predict well, but its
    # dual rises and the gap stays a certificate (exact inference on these grids)
    X, Y = make_noisy_blocks(20, 4, 4, 2, noise=1.2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(GraphCRF(2, 3, inference="exact"), solver="fw", max_passes=10,
                            eval_every=2, random_state=0).fit(X, Y)
    dual = svm.history_["dual"]
    assert np.all(np.diff(dual) > 0) and np.all(svm.history_["gap"] >= -1e-10)


@pytest.mark.parametrize("solver", ["bcfw", "bcfw_pairwise", "ssg",
                                    # 8 CPU-s cold (the corrective QP's first use)
                                    pytest.param("cutting_plane", marks=pytest.mark.slow)])
def test_training_beats_independent_nodes(solver: str) -> None:
    X, Y = make_noisy_blocks(30, 5, 5, 2, noise=1.2, random_state=0)
    Xt, Yt = make_noisy_blocks(30, 5, 5, 2, noise=1.2, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(GraphCRF(2, 3, inference="trws"), solver=solver, max_passes=10,
                            random_state=0).fit(X, Y)
    # independent nodes: the argmax of the noisy one-hot features
    unary = np.mean([np.mean(np.argmax(x[0][:, :2], axis=1) != y) for x, y in zip(Xt, Yt)])
    assert svm.error(Xt, Yt) < unary - 0.01, (svm.error(Xt, Yt), unary)
    if solver != "ssg":
        assert svm.history_["gap"][-1] >= -1e-8


@pytest.mark.parametrize("inference", ["trws", "max-product", "graph-cut", "lp"])
def test_every_inference_trains(inference: str) -> None:
    X, Y = make_noisy_blocks(20, 4, 4, 3, noise=1.0, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(GraphCRF(3, 4, inference=inference), max_passes=8,
                            random_state=0).fit(X, Y)
    assert svm.score(X, Y) > 0.7
    assert all(np.asarray(y).dtype.kind == "i" for y in svm.predict(X))


def test_malformed_examples_are_named() -> None:
    m = GraphCRF(2, 2)
    w = np.zeros(m.size_joint_feature)
    f = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"edge 0 = \[0, 5\] has a node outside \[0, 3\)"):
        m.decode((f, np.array([[0, 5]])), w)
    with pytest.raises(ValueError, match="is a self loop"):
        m.decode((f, np.array([[1, 1]])), w)
    with pytest.raises(ShapeError, match=r"`node_features` must have shape \(n, 2\)"):
        m.decode((np.zeros((3, 4)), np.array([[0, 1]])), w)
    with pytest.raises(ValueError, match=r"`node_features` holds inf at position \(1, 0\)"):
        m.decode((np.array([[0, 0], [np.inf, 0], [0, 0]]), np.array([[0, 1]])), w)
    with pytest.raises(ShapeError, match=r"tuple \(node_features, edges\), got a ndarray"):
        m.decode(f, w)
    with pytest.raises(ValueError, match=r"`y`\[1\] = 2 is not a state in \[0, 2\)"):
        m.joint_feature((f, np.array([[0, 1]])), np.array([0, 2, 1]))
    e = EdgeFeatureGraphCRF(2, 2, 3)
    with pytest.raises(ShapeError, match=r"`edge_features` must have shape \(1, 3\)"):
        e.decode((f, np.array([[0, 1]]), np.zeros((2, 3))), np.zeros(e.size_joint_feature))
    with pytest.raises(ValueError, match="`inference` must be one of"):
        GraphCRF(2, 2, inference="qpbo")
    with pytest.raises(ValueError, match="both symmetric and antisymmetric"):
        EdgeFeatureGraphCRF(2, 2, 3, symmetric_edge_features=[1],
                            antisymmetric_edge_features=[1])
    with pytest.raises(ValueError, match="`class_weight` must be 2 finite"):
        GraphCRF(2, 2, class_weight=[1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"X\[0\]\[0\] contains nan"):
            StructuredSVM(m).fit([(np.full((3, 2), np.nan), np.array([[0, 1]]))],
                                 [np.array([0, 1, 0])])


def test_symmetry_options_project_the_weights() -> None:
    rng = np.random.default_rng(5)
    m = EdgeFeatureGraphCRF(3, 2, 3, symmetric_edge_features=[0],
                            antisymmetric_edge_features=[1])
    x = example(m, rng)
    w = rng.normal(size=m.size_joint_feature)
    wp = w[6:].reshape(3, 3, 3)
    _, p, _ = m.potentials((x[0], x[1], np.tile([1.0, 0.0, 0.0], (x[1].shape[0], 1))), w)
    np.testing.assert_allclose(p[0], 0.5 * (wp[0] + wp[0].T))
    _, p, _ = m.potentials((x[0], x[1], np.tile([0.0, 1.0, 0.0], (x[1].shape[0], 1))), w)
    np.testing.assert_allclose(p[0], 0.5 * (wp[1] - wp[1].T))
    assert repr(m).startswith("EdgeFeatureGraphCRF(n_states=3")


@pytest.mark.parametrize("neighborhood", [4, 8])
def test_grid_models_are_graph_models_on_grid_edges(neighborhood: int) -> None:
    rng = np.random.default_rng(neighborhood)
    img = rng.normal(size=(3, 4, 2))
    y = rng.integers(3, size=(3, 4))
    edges, dirs = grid_edges(3, 4, neighborhood)
    flat = img.reshape(12, 2)
    pairs = [(GridCRF(3, 2, neighborhood, inference="exact"),
              GraphCRF(3, 2, inference="exact"), (flat, edges)),
             (DirectionalGridCRF(3, 2, neighborhood, inference="exact"),
              EdgeFeatureGraphCRF(3, 2, 2 if neighborhood == 4 else 4, inference="exact"),
              (flat, edges, np.eye(2 if neighborhood == 4 else 4)[dirs]))]
    for grid, graph, x in pairs:
        assert grid.size_joint_feature == graph.size_joint_feature
        np.testing.assert_array_equal(grid.joint_feature(img, y), graph.joint_feature(x, y.ravel()))
        w = rng.normal(size=grid.size_joint_feature)
        yd = grid.decode(img, w)
        assert yd.shape == (3, 4)
        np.testing.assert_array_equal(yd.ravel(), graph.decode(x, w))
        ya = grid.loss_augmented_decode(img, y, w)
        np.testing.assert_array_equal(ya.ravel(), graph.loss_augmented_decode(x, y.ravel(), w))
        assert grid.loss(y, ya) == graph.loss(y.ravel(), ya.ravel())


def test_grid_crf_trains_on_images() -> None:
    X, Y = make_noisy_blocks(30, 5, 5, 2, noise=1.2, random_state=0)
    imgs = [x[0].reshape(5, 5, 3) for x in X]
    labels = [y.reshape(5, 5) for y in Y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(DirectionalGridCRF(2, 3), max_passes=10, random_state=0).fit(
            imgs, labels)
    unary = np.mean([np.mean(np.argmax(x[:, :, :2], axis=2) != y)
                     for x, y in zip(imgs, labels)])
    assert svm.error(imgs, labels) < unary
    with pytest.raises(ShapeError, match=r"array of shape \(height, width, 3\), got shape"):
        GridCRF(2, 3).decode(np.zeros((4, 3)), np.zeros(10))
    with pytest.raises(ValueError, match="`neighborhood` must be 4 or 8"):
        GridCRF(2, 3, neighborhood=6)


def test_model_files_rebuild_graph_models(tmp_path) -> None:
    X, Y = make_noisy_blocks(8, 4, 4, 2, random_state=0)
    model = GraphCRF(2, 3, inference="trws", class_weight=[1, 2],
                     inference_options={"max_iter": 20})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, max_passes=2).fit(X, Y)
    svm.save(tmp_path / "g.npz")
    back = StructuredSVM.load(tmp_path / "g.npz", models=[GraphCRF])
    assert repr(back.model) == repr(model)
    np.testing.assert_array_equal(back.w_, svm.w_)
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(X), svm.predict(X)))


def test_grid_search_over_lam() -> None:
    from sklearn.model_selection import GridSearchCV, KFold

    X, Y = make_noisy_blocks(12, 4, 4, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(StructuredSVM(GraphCRF(2, 3, inference="trws"), max_passes=3),
                          {"lam": [0.1, 0.01]}, cv=KFold(3)).fit(X, Y)
    assert gs.best_params_["lam"] in (0.1, 0.01) and 0.5 < gs.best_score_ <= 1.0


def test_mini_batch_rounds_on_threads_match_one_thread() -> None:
    # the generic model's rounds run in the Python block engine; the compiled
    # inference releases the GIL, so threads may decode a round's examples at once
    X, Y = make_noisy_blocks(16, 4, 4, 2, random_state=0)
    fits = []
    for n_jobs in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(StructuredSVM(GraphCRF(2, 3, inference="trws"), max_passes=4,
                                      batch_size=4, n_jobs=n_jobs, random_state=0).fit(X, Y))
    np.testing.assert_array_equal(fits[0].w_, fits[1].w_)
    assert fits[0].history_["gap"][-1] == fits[1].history_["gap"][-1] >= -1e-12


# -- certified gaps with approximate inference ----------------------------------------------
def _aug_max(model: GraphCRF, x: tuple, y: np.ndarray, w: np.ndarray) -> float:
    """``max_y L(y_true, y) + <w, phi(x, y)>`` by enumeration (independent of the
    inference code: the energy is read off the potentials, scored for every labelling)."""
    u, p, e = model.potentials(x, w)
    n, K = u.shape
    p = np.broadcast_to(p, (e.shape[0], K, K))
    ys = all_labellings(n, K)
    s = u[np.arange(n), ys].sum(1) + p[np.arange(e.shape[0]), ys[:, e[:, 0]], ys[:, e[:, 1]]].sum(1)
    loss = (model.class_weight[y][None, :] * (ys != y)).sum(1) / n
    return float((s + loss).max())


def _exact_primal(model: GraphCRF, X: list, Y: list, w: np.ndarray, lam: float) -> float:
    hinge = [_aug_max(model, x, y, w) - model.score(x, y, w) for x, y in zip(X, Y)]
    return 0.5 * lam * float(w @ w) + float(np.mean(hinge))


def _frustrated_data(n: int, seed: int) -> tuple[list, list]:
    # 2x3 grids (3^6 labellings), 3 states, labels that disagree with the features in
    # places: the trained pairwise terms are not Potts, the oracles may miss the maximum
    rng = np.random.default_rng(seed)
    edges, _ = grid_edges(2, 3)
    X, Y = [], []
    for _ in range(n):
        y = rng.integers(3, size=6)
        X.append((np.c_[np.eye(3)[y] + rng.normal(scale=1.5, size=(6, 3)), np.ones(6)], edges))
        Y.append(y)
    return X, Y


@pytest.mark.parametrize("method", ["exact", "trws", "max-product", "graph-cut", "lp", "auto"])
def test_bounds_cover_the_loss_augmented_maximum(method: str) -> None:
    model = GraphCRF(3, 4, inference=method, inference_options={"max_iter": 5}
                     if method in ("trws", "max-product") else None)
    X, Y = _frustrated_data(15, 3)
    rng = np.random.default_rng(4)
    missed = 0
    for x, y in zip(X, Y):
        w = 2.0 * rng.normal(size=model.size_joint_feature)
        best = _aug_max(model, x, y, w)
        bound, relaxed = model.loss_augmented_bound(x, y, w)
        assert bound >= best - 1e-9 * (1 + abs(best)), (bound, best)
        assert relaxed == (method in ("lp", "auto"))
        ya = model.loss_augmented_decode(x, y, w)
        missed += model.score(x, ya, w) + model.loss(y, ya) < best - 1e-9
        if method == "exact":
            assert bound == pytest.approx(best, rel=1e-12, abs=1e-12)
    if method == "graph-cut":
        # alpha-expansion misses the maximum here: its hinge is no primal bound
        assert missed > 0


@pytest.mark.parametrize("method", ["trws", "max-product", "graph-cut", "lp"])
def test_reported_gaps_certify_the_exact_problem(method: str) -> None:
    X, Y = _frustrated_data(8, 0)
    lam = 0.01
    model = GraphCRF(3, 4, inference=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, lam=lam, max_passes=6, gap_every=3, tol=1e-9,
                            random_state=0).fit(X, Y)
    primal = _exact_primal(model, X, Y, svm.w_, lam)
    dual = svm.history_["dual"][-1]
    tol = 1e-8 * (1 + abs(primal))
    assert svm.history_["primal"][-1] >= primal - tol
    assert svm.result_.gap == pytest.approx(svm.history_["gap"][-1], rel=1e-9, abs=1e-12)
    assert svm.result_.best_gap <= svm.result_.gap + tol
    if method == "lp":  # a certificate of the relaxed problem (whose primal is above)
        assert svm.gap_certifies_ == "relaxed problem"
        assert svm.result_.extra["gap_certifies"] == "relaxed problem"
        assert svm.result_.gap >= -tol
    else:
        assert svm.gap_certifies_ == "exact problem"
        assert svm.result_.gap >= primal - dual - tol, (svm.result_.gap, primal - dual)
        assert svm.result_.best_gap >= primal - dual - tol - (
            svm.history_["primal"][-1] - svm.history_["primal"].min())
    # the solver's own gaps, from decodings that may miss the maximum, are withdrawn
    assert np.all(np.isnan(svm.result_.history["gap"]))
    assert np.all(np.isnan(svm.result_.extra["block_gaps"]))


def test_primal_bound_where_the_decodings_miss_the_maximum() -> None:
    # at weights where alpha-expansion misses loss-augmented maxima, the primal from its
    # decodings is below the exact primal (its gap would certify nothing); the one from
    # the bounds is above
    X, Y = _frustrated_data(15, 3)
    model = GraphCRF(3, 4, inference="graph-cut")
    w = 2.0 * np.random.default_rng(4).normal(size=model.size_joint_feature)
    exact = _exact_primal(model, X, Y, w, 0.1)
    psi, loss, _ = batch_psi_loss(model, X, Y, w)
    decoded = 0.05 * float(w @ w) + (loss - float(w @ psi)) / len(X)
    out = batch_primal(model, X, Y, w, 0.1)
    assert decoded < exact - 1e-6
    assert out["primal"] >= exact - 1e-9 * (1 + abs(exact))
    assert out["certifies"] == "exact problem"


@pytest.mark.parametrize("method", ["exact", "auto", "trws"])
def test_certified_gap_on_a_tree_is_primal_minus_dual(method: str) -> None:
    X, Y = _frustrated_data(8, 1)
    X = [(f, e[:5]) for f, e in X]  # a spanning tree of the 2x3 grid
    lam = 0.05
    model = GraphCRF(3, 4, inference=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, lam=lam, max_passes=4, gap_every=2, random_state=0).fit(X, Y)
    primal = _exact_primal(model, X, Y, svm.w_, lam)
    want = primal - svm.history_["dual"][-1]
    assert svm.gap_certifies_ == "exact problem"
    assert svm.result_.gap == pytest.approx(want, rel=1e-6, abs=1e-8)
    assert svm.history_["gap"][-1] == pytest.approx(want, rel=1e-6, abs=1e-8)
    assert svm.result_.status == "max_iter" and "certified gap" in svm.result_.message
    # stopped by the certified gap: converged, at the first evaluation within tol
    svm.set_params(tol=1.01 * want, max_passes=40).fit(X, Y)
    assert svm.result_.status == "converged" and svm.result_.gap <= 1.01 * want
    assert len(svm.history_["gap"]) <= 2


def test_inference_options_are_checked_when_the_model_is_built() -> None:
    """They failed at the first decoding, with Python's `unexpected keyword argument`
    or int()'s error; "auto" passes on only the options of the method it picks."""
    with pytest.raises(ValueError, match=r"inference 'trws' takes no option 'bogus'"):
        GraphCRF(3, 4, inference="trws", inference_options={"bogus": 1})
    for bad in ({"max_iter": 0}, {"max_iter": 2.5}, {"tol": -1.0}):
        (name, value), = bad.items()
        with pytest.raises(ValueError, match=rf"inference option '{name}' must be"):
            GraphCRF(3, 4, inference="trws", inference_options=bad)
    for bad in ({"max_iter": "abc"}, {"tol": "0.1"}, {"max_iter": True}):
        (name, value), = bad.items()
        with pytest.raises(TypeError, match=rf"inference option '{name}' must be"):
            GraphCRF(3, 4, inference="trws", inference_options=bad)
    with pytest.raises(ValueError, match=r"'graph-cut' takes no option 'max_iter'"):
        GraphCRF(3, 4, inference="graph-cut", inference_options={"max_iter": 5})
    # "auto" on a loopy graph picks a method that does not take max_iter: not passed on
    model = GraphCRF(3, 4, inference="auto", inference_options={"max_iter": 5, "max_sweeps": 3})
    X, Y = _frustrated_data(4, 3)
    w = np.random.default_rng(0).normal(size=model.size_joint_feature)
    for x in X:
        y = model.decode(x, w)
        assert np.shape(y) == (6,)

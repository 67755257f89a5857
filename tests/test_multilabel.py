"""MultiLabelModel, the Chow-Liu tree and the multi-label generator: decoders against
enumeration of all 2^L labellings, the feature map against a hand formula, the mutual
information against scikit-learn, the tree against networkx and brute force, training
with an independently computed primal, scikit-learn model selection and model files."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import (
    MultiLabelModel,
    StructuredSVM,
    chow_liu_tree,
    make_multilabel_tree,
)
from frankwolfe.applications.structured_svm.models import label_mutual_information
from frankwolfe.errors import ShapeError


def random_tree(L: int, rng: np.random.Generator) -> np.ndarray:
    perm = rng.permutation(L)
    return np.array([[perm[int(rng.integers(k))], perm[k]] for k in range(1, L)])


def hand_score(x, y, w, L, F, edges) -> float:
    """``sum_l y_l <w_l, x> + sum_e W_e[y_i, y_j]`` written out term by term."""
    s = 0.0
    for k in range(L):
        if y[k]:
            s += sum(w[k * F + f] * x[f] for f in range(F))
    for e, (i, j) in enumerate(edges):
        s += w[L * F + 4 * e + 2 * y[i] + y[j]]
    return s


def brute_force(x, w, L, F, edges, y_true=None) -> tuple[np.ndarray, float]:
    """The best labelling and its value over all 2^L labellings (loss-augmented with the
    normalized Hamming loss when ``y_true`` is given)."""
    best, best_y = -np.inf, None
    for y in itertools.product((0, 1), repeat=L):
        v = hand_score(x, y, w, L, F, edges)
        if y_true is not None:
            v += np.mean(np.asarray(y) != y_true)
        if v > best:
            best, best_y = v, np.array(y)
    return best_y, best


STRUCTURES = ["independent", "tree", "forest", "full"]


def make_model(structure: str, L: int, F: int, rng: np.random.Generator,
               inference: str = "auto") -> MultiLabelModel:
    if structure == "tree":
        return MultiLabelModel(L, F, edges=random_tree(L, rng), inference=inference)
    if structure == "forest":
        return MultiLabelModel(L, F, edges=random_tree(L, rng)[:-2], inference=inference)
    return MultiLabelModel(L, F, edges=structure, inference=inference)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_decoders_match_enumeration(structure: str) -> None:
    rng = np.random.default_rng(STRUCTURES.index(structure))
    for trial in range(12):
        L, F = int(rng.integers(2, 7)), int(rng.integers(1, 4))
        model = make_model(structure, L, F, rng)
        edges = model.edges.tolist()
        x = rng.normal(size=F)
        w = rng.normal(size=model.size_joint_feature) * (0.3 if trial % 2 else 2.0)
        y_true = rng.integers(2, size=L)
        y_dec = model.decode(x, w)
        assert y_dec.dtype == np.int64 and y_dec.shape == (L,)
        want, best = brute_force(x, w, L, F, edges)
        np.testing.assert_array_equal(y_dec, want)
        y_aug = model.loss_augmented_decode(x, y_true, w)
        want, best = brute_force(x, w, L, F, edges, y_true)
        np.testing.assert_array_equal(y_aug, want)
        bound, relaxed = model.loss_augmented_bound(x, y_true, w)
        assert bound == pytest.approx(best, rel=1e-9, abs=1e-9) and not relaxed
        assert model.score(x, y_aug, w) == pytest.approx(hand_score(x, y_aug, w, L, F, edges),
                                                         rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("inference", ["lp", "trws", "max-product", "graph-cut", "exact"])
def test_every_inference_on_the_full_label_graph(inference: str) -> None:
    # the exact methods find the optimum; the others bound it from above and decode a
    # labelling no better than it; every method is exact on a tree
    rng = np.random.default_rng(7)
    for _ in range(8):
        L, F = 5, 2
        full = MultiLabelModel(L, F, edges="full", inference=inference)
        tree = MultiLabelModel(L, F, edges=random_tree(L, rng), inference=inference)
        x, y_true = rng.normal(size=F), rng.integers(2, size=L)
        for model in (full, tree):
            w = rng.normal(size=model.size_joint_feature)
            edges = model.edges.tolist()
            _, best = brute_force(x, w, L, F, edges, y_true)
            bound, relaxed = model.loss_augmented_bound(x, y_true, w)
            assert bound >= best - 1e-7
            assert relaxed == (inference == "lp")
            y = model.run_inference(x, w, y_true).labels
            assert hand_score(x, y, w, L, F, edges) + np.mean(y != y_true) <= best + 1e-9
            if model is tree and inference != "graph-cut" or inference == "exact":
                assert bound == pytest.approx(best, abs=1e-6)


def test_auto_beyond_the_exact_limit_may_relax() -> None:
    model = MultiLabelModel(13, 1, edges="full")
    rng = np.random.default_rng(0)
    w = rng.normal(size=model.size_joint_feature)
    bound, relaxed = model.loss_augmented_bound(np.ones(1), np.zeros(13, dtype=int), w)
    assert relaxed and np.isfinite(bound)
    assert MultiLabelModel(12, 1, edges="full").loss_augmented_bound(
        np.ones(1), np.zeros(12, dtype=int), np.zeros(12 + 4 * 66))[1] is False


def test_joint_feature_and_loss_by_hand() -> None:
    L, F = 4, 3
    edges = [[0, 2], [3, 1], [1, 0]]
    model = MultiLabelModel(L, F, edges=edges)
    x = np.array([0.5, -2.0, 3.0])
    y = np.array([1, 0, 1, 1])
    phi = model.joint_feature(x, y)
    want = np.zeros(L * F + 12)
    want[0:3] = x  # label 0 on
    want[6:9] = x  # label 2 on
    want[9:12] = x  # label 3 on
    want[12 + 0 + 2 * 1 + 1] = 1  # edge (0, 2): (1, 1)
    want[12 + 4 + 2 * 1 + 0] = 1  # edge (3, 1): (1, 0)
    want[12 + 8 + 2 * 0 + 1] = 1  # edge (1, 0): (0, 1)
    np.testing.assert_array_equal(phi, want)
    assert model.loss(y, np.array([0, 0, 1, 0])) == 0.5
    assert model.loss(y, y) == 0.0
    w = np.random.default_rng(1).normal(size=model.size_joint_feature)
    assert model.score(x, y, w) == pytest.approx(float(w @ want), rel=1e-12)
    idx, val = model.psi(x, y, np.array([0, 0, 1, 0]))
    dense = np.zeros(model.size_joint_feature)
    dense[idx] = val
    np.testing.assert_allclose(dense, want - model.joint_feature(x, [0, 0, 1, 0]))
    # a feature vector with zeros: the support keeps every table, drops the zero features
    sup = model.feature_support(np.array([0.0, 1.0, 0.0]))
    np.testing.assert_array_equal(sup, [1, 4, 7, 10, *range(12, 24)])


def test_relaxed_labellings_are_linear() -> None:
    L, F = 3, 2
    model = MultiLabelModel(L, F, edges="full")
    x = np.array([1.0, -1.0])

    def marginals(y):
        node = np.eye(2)[y]
        edge = np.zeros((3, 2, 2))
        for e, (i, j) in enumerate(model.edges):
            edge[e, y[i], y[j]] = 1.0
        return np.concatenate([node.ravel(), edge.ravel()])

    y1, y2, t = np.array([1, 0, 1]), np.array([0, 0, 1]), np.array([1, 1, 0])
    mu = 0.25 * marginals(y1) + 0.75 * marginals(y2)
    np.testing.assert_allclose(model.joint_feature(x, mu), 0.25 * model.joint_feature(x, y1)
                               + 0.75 * model.joint_feature(x, y2))
    assert model.loss(t, mu) == pytest.approx(0.25 * model.loss(t, y1) + 0.75 * model.loss(t, y2))


def test_frustrated_full_graph_gives_a_relaxed_labelling() -> None:
    # three labels that each want to differ from the others: an odd cycle, the LP's
    # optimum is fractional (all marginals 1/2) and above every labelling's value
    model = MultiLabelModel(3, 1, edges="full", inference="lp")
    w = np.zeros(model.size_joint_feature)
    w[3:] = np.tile([0.0, 1.0, 1.0, 0.0], 3)
    y = model.loss_augmented_decode(np.ones(1), np.zeros(3, dtype=int), w)
    assert y.dtype.kind == "f" and y.shape == (2 * 3 + 4 * 3,)
    np.testing.assert_allclose(y[:6], 0.5, atol=1e-6)
    _, best = brute_force(np.ones(1), w, 3, 1, model.edges.tolist(), np.zeros(3))
    relaxed = model.score(np.ones(1), y, w) + model.loss(np.zeros(3, dtype=int), y)
    assert relaxed > best + 0.4
    assert model.loss_augmented_bound(np.ones(1), np.zeros(3, dtype=int), w) == \
        pytest.approx((relaxed, True), abs=1e-6)
    assert model.decode(np.ones(1), w).dtype == np.int64


def test_mutual_information_against_sklearn() -> None:
    from sklearn.metrics import mutual_info_score

    _, Y = make_multilabel_tree(300, 6, 4, random_state=3)
    Y[:, 2] = 1  # a constant label: zero information, no NaN
    mi = label_mutual_information(Y)
    for i in range(6):
        for j in range(6):
            assert mi[i, j] == pytest.approx(mutual_info_score(Y[:, i], Y[:, j]),
                                             rel=1e-10, abs=1e-12)


def test_chow_liu_tree_is_a_maximum_spanning_tree() -> None:
    import networkx as nx

    rng = np.random.default_rng(11)
    for _ in range(6):
        L = int(rng.integers(3, 9))
        Y = (rng.random((200, L)) < 0.5).astype(int)
        Y[:, 1:] ^= Y[:, :-1] & (rng.random((200, L - 1)) < 0.6)  # some dependence
        mi = label_mutual_information(Y)
        tree = chow_liu_tree(Y)
        assert tree.shape == (L - 1, 2) and tree.dtype == np.int64
        assert np.all(tree[:, 0] < tree[:, 1])
        g = nx.Graph()
        g.add_weighted_edges_from((i, j, mi[i, j]) for i in range(L) for j in range(i + 1, L))
        ref = nx.maximum_spanning_tree(g)
        ours = sum(mi[i, j] for i, j in tree)
        assert ours == pytest.approx(ref.size(weight="weight"), rel=1e-12)
        assert nx.is_tree(nx.Graph(tree.tolist()))
        if len(np.unique(mi[np.triu_indices(L, 1)])) == L * (L - 1) // 2:  # a unique optimum
            assert {tuple(sorted(e)) for e in ref.edges} == {tuple(e) for e in tree.tolist()}


def test_chow_liu_tree_by_brute_force_on_four_labels() -> None:
    rng = np.random.default_rng(2)
    Y = (rng.random((100, 4)) < 0.4).astype(int)
    Y[:, 3] = Y[:, 0] ^ (rng.random(100) < 0.1)
    Y[:, 2] = Y[:, 3] | (rng.random(100) < 0.2)
    mi = label_mutual_information(Y)
    pairs = list(itertools.combinations(range(4), 2))
    best = -1.0
    for three in itertools.combinations(pairs, 3):
        # 3 distinct edges touching all 4 nodes form a spanning tree (a cycle would need
        # all 3 on 3 nodes)
        if len(set(itertools.chain(*three))) == 4:
            best = max(best, sum(mi[i, j] for i, j in three))
    assert sum(mi[i, j] for i, j in chow_liu_tree(Y)) == pytest.approx(best, rel=1e-12)


def test_generator_follows_its_tree() -> None:
    X, Y, edges = make_multilabel_tree(2000, 7, 5, random_state=0, return_edges=True)
    assert X.shape == (2000, 5) and Y.shape == (2000, 7) and Y.dtype == np.int64
    assert set(np.unique(Y)) == {0, 1}
    assert edges.shape == (6, 2) and np.all(edges[:, 0] < edges[:, 1])
    # a label implies its parent, and every label is sometimes on and sometimes off
    assert np.all(Y[:, edges[:, 1]] <= Y[:, edges[:, 0]])
    assert np.all((Y.mean(axis=0) > 0.02) & (Y.mean(axis=0) < 0.98))
    # the Chow-Liu tree of the labels is the generating tree
    assert {tuple(e) for e in chow_liu_tree(Y).tolist()} == {tuple(e) for e in edges.tolist()}
    X2, Y2 = make_multilabel_tree(2000, 7, 5, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(Y, Y2)
    # without noise the root is the half-space of a linear score: a linear classifier
    # separates it exactly (the children, ANDs of half-spaces, are the ones it cannot)
    from sklearn.svm import LinearSVC

    X0, Y0 = make_multilabel_tree(500, 3, 4, noise=0.0, random_state=1)
    root = LinearSVC(C=1e4, max_iter=100_000).fit(X0, Y0[:, 0])
    assert root.score(X0, Y0[:, 0]) == 1.0
    with pytest.raises(ValueError, match="`noise` must be a finite number >= 0"):
        make_multilabel_tree(10, noise=-1.0)
    with pytest.raises(ValueError, match="`n_labels` must be a positive integer"):
        make_multilabel_tree(10, n_labels=0)


def data(n: int = 60, L: int = 5, F: int = 4, seed: int = 0):
    X, Y = make_multilabel_tree(n, L, F, random_state=seed)
    return np.c_[X, np.ones(n)], Y


def primal_by_enumeration(model: MultiLabelModel, X, Y, w, lam: float) -> float:
    L, F, edges = model.n_labels, model.n_features, model.edges.tolist()
    hinge = [brute_force(x, w, L, F, edges, y)[1] - hand_score(x, y, w, L, F, edges)
             for x, y in zip(X, Y)]
    return 0.5 * lam * float(w @ w) + float(np.mean(hinge))


@pytest.mark.parametrize("edges", ["independent", "tree", "full"])
def test_training_certifies_its_gap(edges: str) -> None:
    X, Y = data()
    model = MultiLabelModel(5, 5, edges=chow_liu_tree(Y) if edges == "tree" else edges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, lam=0.05, max_passes=12, gap_every=4,
                            random_state=0).fit(X, Y)
    primal = primal_by_enumeration(model, X, Y, svm.w_, svm.lam_)
    h = svm.history_
    assert h["primal"][-1] == pytest.approx(primal, rel=1e-9, abs=1e-10)
    assert h["gap"][-1] == pytest.approx(primal - h["dual"][-1], rel=1e-9, abs=1e-10)
    assert 0.0 <= h["gap"][-1] < h["gap"][0]
    assert svm.gap_certifies_ == "exact problem"
    pred = svm.predict(X)
    assert len(pred) == len(X) and all(p.shape == (5,) and p.dtype == np.int64 for p in pred)
    err = np.mean([model.loss(y, p) for y, p in zip(Y, pred)])
    assert svm.score(X, Y) == pytest.approx(1.0 - err, abs=1e-12)


@pytest.mark.parametrize("inference,solver,seed", [("graph-cut", "cutting_plane", 0),
                                                    ("graph-cut", "fw", 0),
                                                    ("trws", "cutting_plane", 1)])
def test_batch_solvers_train_through_an_approximate_oracle(inference, solver, seed) -> None:
    """Graph cut and TRW-S miss the maximum at times: the batch solvers' own gaps then go
    negative, which an exact oracle's never may (it raised OracleError); the estimator's
    gap, from loss_augmented_bound, stays a certificate of the exact problem, checked
    here by enumeration."""
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(8, 3)), rng.integers(0, 2, size=(8, 5))
    model = MultiLabelModel(5, 3, edges="full", inference=inference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(model, lam=0.02, solver=solver, max_passes=60, tol=1e-7,
                            random_state=0).fit(X, Y)
    primal = primal_by_enumeration(model, X, Y, svm.w_, svm.lam_)
    h = svm.history_
    assert h["primal"][-1] >= primal - 1e-9 * (1 + abs(primal))  # a bound of the primal
    assert h["gap"][-1] >= primal - h["dual"][-1] - 1e-9 * (1 + abs(primal))
    # a batch step along a missed maximum is no ascent: such a run ends "stalled" at its
    # certified gap, not "converged"
    assert svm.result_.status in ("stalled", "max_iter")
    assert svm.result_.gap == pytest.approx(h["gap"][-1], rel=1e-12, abs=1e-12)


def test_lp_training_certifies_the_relaxed_problem() -> None:
    X, Y = data(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = StructuredSVM(MultiLabelModel(5, 5, edges="full", inference="lp"), lam=0.05,
                            max_passes=6, gap_every=3, random_state=0).fit(X, Y)
    assert svm.gap_certifies_ == "relaxed problem"
    # the relaxed problem's primal is at least the exact one's (its maxima are larger)
    exact = primal_by_enumeration(svm.model, X, Y, svm.w_, svm.lam_)
    assert svm.history_["primal"][-1] >= exact - 1e-7
    assert np.all(svm.history_["gap"] >= -1e-7)


def test_tree_interactions_beat_independent_labels() -> None:
    # 150 training examples: the tree still wins by 0.13, and
    # with its edge features zeroed it ties the independent labels
    X, Y = make_multilabel_tree(350, 6, 6, random_state=0)
    X = np.c_[X, np.ones(len(X))]
    tr, te = slice(0, 150), slice(150, 350)
    losses = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, edges in (("independent", "independent"), ("tree", chow_liu_tree(Y[tr]))):
            svm = StructuredSVM(MultiLabelModel(6, 7, edges=edges), lam=1e-3, max_passes=15,
                                random_state=0).fit(X[tr], Y[tr])
            losses[name] = 1.0 - svm.score(X[te], Y[te])
    assert losses["tree"] < losses["independent"] - 0.03, losses


def test_grid_search_and_pipeline() -> None:
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, Y = data(60)
    model = MultiLabelModel(5, 5, edges=chow_liu_tree(Y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(StructuredSVM(model, max_passes=5), {"lam": [0.1, 0.01]},
                          cv=KFold(3)).fit(X, Y)
        pipe = make_pipeline(StandardScaler(), StructuredSVM(model, lam=0.01, max_passes=5,
                                                             random_state=0)).fit(X, Y)
        scaled = StandardScaler().fit(X).transform(X)
        direct = StructuredSVM(model, lam=0.01, max_passes=5, random_state=0).fit(scaled, Y)
    means = gs.cv_results_["mean_test_score"]
    assert gs.best_index_ == int(np.argmax(means)) and np.all((0.5 < means) & (means <= 1.0))
    assert [p.tolist() for p in pipe.predict(X)] == [p.tolist() for p in direct.predict(scaled)]


def test_model_files_round_trip(tmp_path) -> None:
    X, Y = data(30)
    for model in (MultiLabelModel(5, 5, edges=chow_liu_tree(Y), inference="trws",
                                  inference_options={"max_iter": 20}),
                  MultiLabelModel(5, 5, edges="full")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm = StructuredSVM(model, max_passes=2).fit(X, Y)
        svm.save(tmp_path / "m.npz")
        back = StructuredSVM.load(tmp_path / "m.npz")  # a built-in model: no models=
        assert repr(back.model) == repr(model)
        np.testing.assert_array_equal(back.model.edges, model.edges)
        np.testing.assert_array_equal(back.w_, svm.w_)
        assert [p.tolist() for p in back.predict(X)] == [p.tolist() for p in svm.predict(X)]


def test_bad_inputs_are_named() -> None:
    m = MultiLabelModel(3, 2, edges=[[0, 1], [1, 2]])
    w = np.zeros(m.size_joint_feature)
    x = np.zeros(2)
    with pytest.raises(ShapeError, match=r"`y` must be a binary vector of shape \(3,\)"):
        m.joint_feature(x, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"`y`\[1\] = 2 is not 0 or 1"):
        m.joint_feature(x, np.array([0, 2, 1]))
    with pytest.raises(ValueError, match=r"`y_true`\[0\] = -1 is not 0 or 1"):
        m.loss_augmented_decode(x, np.array([-1, 0, 1]), w)
    with pytest.raises(ShapeError, match=r"`x` must be a feature vector of shape \(2,\)"):
        m.decode(np.zeros(3), w)
    with pytest.raises(ShapeError, match=r"`w` must have shape \(14,\)"):
        m.decode(x, np.zeros(3))
    with pytest.raises(ValueError, match=r"edge 1 = \[1, 3\] has a node outside \[0, 3\)"):
        MultiLabelModel(3, 2, edges=[[0, 1], [1, 3]])
    with pytest.raises(ValueError, match=r"edge 0 = \[2, 2\] is a self loop"):
        MultiLabelModel(3, 2, edges=[[2, 2]])
    with pytest.raises(ValueError, match=r"edge 2 = \[1, 0\] repeats edge 0 = \[0, 1\]"):
        MultiLabelModel(3, 2, edges=[[0, 1], [1, 2], [1, 0]])
    with pytest.raises(ValueError, match=r"`edges`='tree' needs the tree itself.*chow_liu_tree"):
        MultiLabelModel(3, 2, edges="tree")
    with pytest.raises(ValueError, match="`edges` must be 'independent', 'full' or an array"):
        MultiLabelModel(3, 2, edges="chain")
    with pytest.raises(ShapeError, match=r"`edges` must be an integer array of shape"):
        MultiLabelModel(3, 2, edges=[[0.5, 1.0]])
    with pytest.raises(ValueError, match="`n_labels` must be a positive integer, got 0"):
        MultiLabelModel(0, 2)
    with pytest.raises(ValueError, match="`inference` must be one of"):
        MultiLabelModel(3, 2, inference="qpbo")
    with pytest.raises(ValueError, match=r"`Y`\[1, 0\] = 3 is not 0 or 1"):
        chow_liu_tree(np.array([[0, 1], [3, 0]]))
    with pytest.raises(ShapeError, match=r"`Y` must be a binary array of shape"):
        chow_liu_tree(np.array([0, 1, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ShapeError, match=r"`y_true` must be a binary vector of shape \(3,\)"):
            StructuredSVM(m, max_passes=1).fit([x, x], [np.array([0, 1, 1]), np.array([0, 1])])
    assert repr(m) == "MultiLabelModel(n_labels=3, n_features=2, edges=[[0, 1], [1, 2]])"
    assert m.structure == "tree" and MultiLabelModel(4, 1, edges=[[0, 1]]).structure == "forest"
    assert MultiLabelModel(3, 1, edges="full").structure == "loopy"

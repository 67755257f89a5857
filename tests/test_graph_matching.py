"""Learning graph matching on the CMU house sequence (loader, features, BCFW training)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from frankwolfe.applications.graph_matching import (
    learn_graph_matching,
    matching_accuracy,
    matching_model,
    node_features,
    normalize_histograms,
    pair_dataset,
)
from frankwolfe.applications.structured_svm.datasets import CMUHouse, load_cmu_house
from frankwolfe.errors import ShapeError


@functools.lru_cache(maxsize=1)
def _load(folder: Path) -> CMUHouse:
    return load_cmu_house(folder)


@pytest.fixture
def house(shared_data) -> CMUHouse:
    return _load(shared_data)  # read once per session: the arrays are read-only


def _hungarian_cost(hists: np.ndarray, a: int, b: int, metric: str) -> float:
    """Optimal total histogram distance of frames a, b, computed independently of the package."""
    s = hists / hists.sum(axis=2, keepdims=True)
    cost = cdist(s[a], s[b], metric)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum())


# -- loader -----------------------------------------------------------------------------
def test_loader_shapes_and_counts(house):
    assert house.points.shape == (111, 30, 2)
    assert house.shape_context.shape == (111, 30, 60)
    assert house.adjacency.shape == (111, 30, 30) and house.adjacency.dtype == bool
    assert np.array_equal(house.adjacency, house.adjacency.transpose(0, 2, 1))
    assert not house.adjacency[:, np.arange(30), np.arange(30)].any()
    edges = house.adjacency.sum(axis=(1, 2)) // 2
    assert edges.min() == 78 and edges.max() == 79  # SOURCE.md: 78-79 Delaunay edges
    assert np.array_equal(house.correct, np.arange(30))
    assert np.all(house.shape_context >= 0)
    assert house.points[..., 0].min() == pytest.approx(73.4, abs=0.05)
    assert house.points[..., 1].max() == pytest.approx(369.0, abs=0.05)
    counts = {b: tuple(len(house.pair_list(b, s)) for s in ("train", "validate", "test"))
              for b in (0, 50, 90)}
    assert counts == {0: (37, 37, 37), 50: (21, 20, 20), 90: (7, 7, 7)}


@pytest.mark.parametrize("baseline", [0, 10, 50, 90])
def test_pairs_follow_the_documented_rule(house, baseline):
    # SOURCE.md: pairs (i, i+B), i = 1..111-B, split by (i-1) mod 3
    first = np.arange(111 - baseline)
    for k, split in enumerate(("train", "validate", "test")):
        f = first[first % 3 == k]
        expected = np.stack([f, f + baseline], axis=1)
        assert np.array_equal(house.pair_list(baseline, split), expected)


def test_loader_bad_input(house, tmp_path):
    with pytest.raises(ValueError, match="baseline"):
        house.pair_list(55, "train")
    with pytest.raises(ValueError, match="split"):
        house.pair_list(50, "val")
    with pytest.raises(FileNotFoundError, match="cmu_house"):
        load_cmu_house(tmp_path)


def test_loader_missing_folder_without_shared_data(tmp_path):
    with pytest.raises(FileNotFoundError, match="load_cmu_house"):
        load_cmu_house(tmp_path / "nowhere")


# -- features ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind, metric", [("abs", "cityblock"), ("sq", "sqeuclidean")])
def test_features_with_ones_are_minus_distances(kind, metric):
    rng = np.random.default_rng(0)
    a = normalize_histograms(rng.integers(0, 5, size=(6, 12)))
    b = normalize_histograms(rng.integers(0, 5, size=(4, 12)))
    x = node_features(a, b, kind)
    assert x.shape == (6, 4, 12)
    np.testing.assert_allclose(x @ np.ones(12), -cdist(a, b, metric), atol=1e-14)


def test_normalize_histograms():
    h = np.array([[1.0, 3.0], [0.0, 0.0]])
    np.testing.assert_array_equal(normalize_histograms(h), [[0.25, 0.75], [0.0, 0.0]])
    with pytest.raises(ValueError, match="non-negative"):
        normalize_histograms([[-1.0, 2.0]])


def test_feature_bad_input():
    with pytest.raises(ShapeError, match=r"\(5, 3\) and \(5, 4\)"):
        node_features(np.ones((5, 3)), np.ones((5, 4)))
    with pytest.raises(ValueError, match="kind"):
        node_features(np.ones((5, 3)), np.ones((5, 3)), kind="l2")


def test_normalized_hamming_loss_is_fraction_wrong():
    model = matching_model(3, 30)
    y = np.arange(30)
    y_hat = y.copy()
    y_hat[[0, 1, 2, 3]] = [1, 2, 3, 0]  # a 4-cycle: 4 landmarks wrong
    assert model.loss(y, y_hat) == pytest.approx(4 / 30)


def test_frame_with_itself_gives_identity(house):
    s = normalize_histograms(house.shape_context)
    for f in (0, 55, 110):
        x = node_features(s[f], s[f])
        # independent: Hungarian method on the l1 distances the test computes itself
        rows, cols = linear_sum_assignment(cdist(s[f], s[f], "cityblock"))
        assert np.array_equal(cols[np.argsort(rows)], np.arange(30))
        assert matching_accuracy([x], [np.arange(30)], np.ones(60)) == 1.0


def test_unlearned_matcher_is_optimal_on_house_pairs(house):
    # The unlearned l1 assignment problems of the house pairs have ties (several optimal
    # matchings with different accuracies), so compare optimal values, not matchings.
    model = matching_model(60, 30)
    for kind, metric in (("abs", "cityblock"), ("sq", "sqeuclidean")):
        pairs = house.pair_list(90, "test")
        X, Y = pair_dataset(house, pairs, kind)
        fixed = []
        for (a, b), x in zip(pairs, X):
            y = model.decode(x, np.ones(60))
            assert -x[np.arange(30), y].sum() == pytest.approx(
                _hungarian_cost(house.shape_context, a, b, metric), rel=1e-12)
            fixed.append(np.count_nonzero(y == np.arange(30)) / 30)
        assert matching_accuracy(X, Y, np.ones(60)) == pytest.approx(np.mean(fixed))


# -- learning -------------------------------------------------------------------------------
def test_learning_beats_unlearned_on_house(house):
    r = learn_graph_matching(90, data=house, lams=(1e-3,), max_passes=60, random_state=0)
    assert r.n_pairs == {"train": 7, "validate": 7, "test": 7}
    assert r.learned_test_accuracy >= r.unlearned_test_accuracy
    # the estimator's mean task loss is 1 - accuracy under the normalized Hamming loss
    X, Y = pair_dataset(house, house.pair_list(90, "test"))
    assert r.estimator.error(X, Y) == pytest.approx(1 - r.learned_test_accuracy)


def _synthetic_house(seed: int) -> CMUHouse:
    """Landmarks whose first 4 bins identify them and whose last 12 bins are per-frame noise,
    larger in total: the all-ones l1 matcher is misled, reweighted bins are not."""
    rng = np.random.default_rng(seed)
    n_frames, n, d_id, d_noise = 30, 10, 4, 12
    ident = rng.integers(0, 6, size=(n, d_id)).astype(float)
    hists = np.empty((n_frames, n, d_id + d_noise))
    hists[:, :, :d_id] = ident + rng.integers(0, 2, size=(n_frames, n, d_id))
    hists[:, :, d_id:] = rng.integers(0, 6, size=(n_frames, n, d_noise))
    f = np.arange(n_frames - 1)
    pairs = {}
    for b in range(0, 100, 10):
        for k, split in enumerate(("train", "validate", "test")):
            g = f[f % 3 == k]
            pairs[(b, split)] = np.stack([g, g + 1], axis=1)
    return CMUHouse(points=np.zeros((n_frames, n, 2)), shape_context=hists,
                    adjacency=np.zeros((n_frames, n, n), dtype=bool), correct=np.arange(n),
                    pairs=pairs, folder=Path("."))


def test_learning_finds_informative_bins_on_synthetic_data():
    data = _synthetic_house(1)
    r = learn_graph_matching(10, data=data, lams=(1e-2, 1e-3), max_passes=200, random_state=0)
    assert r.unlearned_test_accuracy < 0.8
    assert r.learned_test_accuracy > r.unlearned_test_accuracy + 0.15
    # the identifying bins get the larger weights
    assert r.w[:4].mean() > r.w[4:].mean()
    assert r.lam in (1e-2, 1e-3)
    assert r.validation_accuracy.shape == (2,)
    # `gap`, as every result of the package calls the certified gap
    assert r.gap == r.estimator.history_["gap"][-1] and not hasattr(r, "duality_gap")


def test_learn_bad_input():
    data = _synthetic_house(0)
    with pytest.raises(ValueError, match="lams"):
        learn_graph_matching(10, data=data, lams=(0.0,))
    with pytest.raises(ValueError, match="baseline"):
        learn_graph_matching(15, data=data)
    with pytest.raises(ShapeError, match="pairs"):
        pair_dataset(data, np.array([0, 1]))
    with pytest.raises(TypeError, match="random_state must be .* got 'seed'"):
        learn_graph_matching(10, data=data, random_state="seed")


def test_example_runs(shared_data, capsys):
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "cmu_house_matching.py"
    spec = importlib.util.spec_from_file_location("cmu_house_matching", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (r,) = mod.main([str(shared_data), "--baselines", "90", "--max-passes", "30"])
    assert r.baseline == 90 and r.lams.size == 5
    row = capsys.readouterr().out.splitlines()[-1].split()
    assert row[0] == "90" and float(row[-2]) == pytest.approx(r.learned_test_accuracy, abs=1e-4)

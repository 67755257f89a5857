"""The Snakes loader (sha256, restricted unpickler, SOURCE.md's counts), its features,
and a short training run (input-dependent edge features beat direction-only ones)."""

from __future__ import annotations

import pickle
import shutil
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import EdgeFeatureGraphCRF, StructuredSVM
from frankwolfe.applications.structured_svm.datasets import Snakes, load_snakes, snakes_examples
from frankwolfe.applications.structured_svm.datasets import snakes as snakes_module


@cache
def _load(home: Path) -> Snakes:
    return load_snakes(home)


def test_counts_and_layout_of_source_md(shared_data: Path) -> None:
    d = _load(shared_data)
    assert (len(d.X_train), len(d.Y_train), len(d.X_test), len(d.Y_test)) == (200, 200, 100, 100)
    cells = [y.size for y in d.Y_train]
    assert (min(cells), max(cells)) == (28, 56)
    assert len({y.shape for y in d.Y_train}) == 26
    for y in d.Y_train:  # each snake label exactly once per training grid
        assert np.array_equal(np.bincount(y.ravel(), minlength=11)[1:], np.ones(10))
    colours = np.unique(np.concatenate([x.reshape(-1, 3) for x in d.X_train]), axis=0)
    assert colours.shape == (5, 3)


def test_features_follow_the_colours(shared_data: Path) -> None:
    d = _load(shared_data)
    feats, edges, ef = snakes_examples(d.X_train[:1])[0]
    h, w = d.Y_train[0].shape
    assert feats.shape == (h * w, 45) and ef.shape == (edges.shape[0], 182)
    np.testing.assert_array_equal(feats.reshape(-1, 9, 5).sum(axis=2), 1.0)
    # the centre of each 3x3 block is the cell's own colour
    own = feats.reshape(-1, 9, 5)[:, 4]
    code = (d.X_train[0] > 127).reshape(-1, 3) @ np.array([1, 2, 4])
    np.testing.assert_array_equal(np.array([1, 2, 3, 4, 6])[own.argmax(axis=1)], code)
    right = np.flatnonzero(ef[:, 180] == 1)
    down = np.flatnonzero(ef[:, 181] == 1)
    assert right.size == h * (w - 1) and down.size == (h - 1) * w
    np.testing.assert_array_equal(ef[right, :45], feats[edges[right, 0]])
    np.testing.assert_array_equal(ef[down, 135:180], feats[edges[down, 1]])
    np.testing.assert_array_equal(ef[right, 90:180], 0.0)
    direction = snakes_examples(d.X_train[:1], "direction")[0][2]
    np.testing.assert_array_equal(direction, ef[:, 180:])


def test_a_changed_file_is_refused_before_unpickling(shared_data: Path, tmp_path: Path) -> None:
    (tmp_path / "snakes").mkdir()
    data = bytearray((shared_data / "snakes" / "snakes.pickle").read_bytes())
    data[100] ^= 1
    (tmp_path / "snakes" / "snakes.pickle").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="has sha256 .* not the published"):
        load_snakes(tmp_path)


class _Evil:
    def __reduce__(self):  # what a hostile pickle would run on plain pickle.load
        return (shutil.rmtree, ("/nonexistent-frankwolfe-test",))


def test_the_unpickler_admits_no_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "snakes").mkdir()
    path = tmp_path / "snakes" / "snakes.pickle"
    path.write_bytes(pickle.dumps({"X_train": [_Evil()]}, protocol=4))
    from frankwolfe.applications.data.download import sha256_of

    monkeypatch.setattr(snakes_module, "SNAKES_SHA256", sha256_of(path))
    with pytest.raises(pickle.UnpicklingError, match="refusing to unpickle shutil.rmtree"):
        load_snakes(tmp_path)
    # arrays, lists and dicts pass; a wrong layout is named
    path.write_bytes(pickle.dumps({"X_train": [np.zeros((2, 2, 3), np.uint8)]}, protocol=4))
    monkeypatch.setattr(snakes_module, "SNAKES_SHA256", sha256_of(path))
    with pytest.raises(ValueError, match="`X_train` and `Y_train` must be lists of 200"):
        load_snakes(tmp_path)


def test_missing_data_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="load_snakes: no data found"):
        load_snakes(tmp_path)
    with pytest.raises(ValueError, match="`edge_features` must be 'input' or 'direction'"):
        snakes_examples([np.zeros((2, 2, 3), np.uint8)], "colour")


@pytest.mark.slow  # two trainings, 6 CPU-s
def test_input_dependent_edges_beat_directions(shared_data: Path) -> None:
    # 40 training grids and 4 passes (the benchmark's 200 and 30 reach 0.98 and more):
    # enough for the input-dependent edges to number the snake's middle cells, which
    # direction-only edges cannot
    d = _load(shared_data)
    yt = np.concatenate([y.ravel() for y in d.Y_test[:40]])
    acc, snake = {}, {}
    for kind in ("input", "direction"):
        X = snakes_examples(d.X_train[:40], kind)
        Xt = snakes_examples(d.X_test[:40], kind)
        model = EdgeFeatureGraphCRF(11, 45, X[0][2].shape[1], inference="trws")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm = StructuredSVM(model, lam=0.01, max_passes=4, gap_every=4,
                                random_state=0).fit(X, [y.ravel() for y in d.Y_train[:40]])
        pred = np.concatenate(svm.predict(Xt))
        acc[kind] = float(np.mean(pred == yt))
        snake[kind] = float(np.mean(pred[yt > 0] == yt[yt > 0]))
    assert acc["input"] > 0.85 and acc["input"] > acc["direction"], acc
    assert snake["input"] > snake["direction"] + 0.08, snake


def _mirror(tmp_path: Path, data: bytes) -> str:
    """A mirror laid out like the data home (``<mirror>/snakes/snakes.pickle``), as a
    file:// URL (no network: the fetcher's downloader reads it like any origin)."""
    (tmp_path / "mirror" / "snakes").mkdir(parents=True)
    (tmp_path / "mirror" / "snakes" / "snakes.pickle").write_bytes(data)
    return (tmp_path / "mirror").as_uri()


def test_fetch_snakes_downloads_checks_and_caches(shared_data: Path, tmp_path: Path) -> None:
    from frankwolfe.applications.fetch import fetch_snakes

    original = (shared_data / "snakes" / "snakes.pickle").read_bytes()
    url = _mirror(tmp_path, original)
    d = fetch_snakes(data_home=tmp_path / "cache", base_url=url)
    ref = _load(shared_data)
    assert (len(d.X_train), len(d.X_test)) == (200, 100)
    np.testing.assert_array_equal(d.Y_test[7], ref.Y_test[7])
    np.testing.assert_array_equal(d.X_train[0], ref.X_train[0])
    assert (tmp_path / "cache" / "snakes" / "snakes.pickle").read_bytes() == original
    # from the cache now: the mirror is gone and nothing is downloaded again
    shutil.rmtree(tmp_path / "mirror")
    assert len(fetch_snakes(data_home=tmp_path / "cache", base_url=url).Y_train) == 200
    assert len(load_snakes(tmp_path / "cache", download_if_missing=True).Y_test) == 100


def test_fetch_snakes_refuses_a_changed_file(shared_data: Path, tmp_path: Path) -> None:
    from frankwolfe.applications.data.download import DownloadError
    from frankwolfe.applications.fetch import fetch_snakes

    data = bytearray((shared_data / "snakes" / "snakes.pickle").read_bytes())
    data[1000] ^= 1  # one bit: the sha256 check must see it before anything is unpickled
    url = _mirror(tmp_path, bytes(data))
    with pytest.raises(DownloadError, match=r"snakes.pickle: sha256 .* does not match the "
                                            r"published .*not kept"):
        fetch_snakes(data_home=tmp_path / "cache", base_url=url)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    with pytest.raises(FileNotFoundError, match="fetch_snakes.*download_if_missing=True"):
        fetch_snakes(data_home=tmp_path / "cache", download_if_missing=False)


def test_fetch_snakes_refuses_a_pickle_with_another_class(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # a hostile file that matched the digest would still be stopped by the unpickler
    from frankwolfe.applications.data import sources
    from frankwolfe.applications.data.download import sha256_of
    from frankwolfe.applications.fetch import fetch_snakes

    data = pickle.dumps({"X_train": [_Evil()], "Y_train": []}, protocol=2)
    url = _mirror(tmp_path, data)
    digest = sha256_of(tmp_path / "mirror" / "snakes" / "snakes.pickle")
    monkeypatch.setitem(sources.SHA256, "snakes/snakes.pickle", digest)
    monkeypatch.setattr(snakes_module, "SNAKES_SHA256", digest)
    with pytest.raises(pickle.UnpicklingError, match="refusing to unpickle shutil.rmtree"):
        fetch_snakes(data_home=tmp_path / "cache", base_url=url)
    # the class is refused whatever module names it, numpy's own included
    data = pickle.dumps({"X_train": [np.random.default_rng(0)]}, protocol=2)
    (tmp_path / "cache" / "snakes" / "snakes.pickle").write_bytes(data)
    monkeypatch.setattr(snakes_module, "SNAKES_SHA256",
                        sha256_of(tmp_path / "cache" / "snakes" / "snakes.pickle"))
    with pytest.raises(pickle.UnpicklingError, match="refusing to unpickle numpy.random"):
        load_snakes(tmp_path / "cache")

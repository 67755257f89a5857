"""Bad input to the applications' helpers and loaders is refused naming the argument and
the offending value (or its position): numpy booleans as flags, the loaders' flags and
data_home, an empty lasso design, and the first bad entry of a matrix or labelling."""

import os
import re

import numpy as np
import pytest

from frankwolfe.applications import fetch
from frankwolfe.applications.data import get_data_home
from frankwolfe.applications.graph_matching import normalize_histograms
from frankwolfe.applications.lasso import alpha_max, penalty_from_radius
from frankwolfe.applications.matching import solve_qap
from frankwolfe.applications.matching.doubly_stochastic import project_to_permutation, sinkhorn
from frankwolfe.applications.structured_svm import (
    ChainModel,
    load_cmu_house,
    load_conll2000,
    load_ocr,
    load_snakes,
    make_chain,
)
from frankwolfe.applications.structured_svm.datasets import cmu_house, snakes
from frankwolfe.applications.structured_svm.datasets.conll_like import make_conll_like
from frankwolfe.applications.structured_svm.models.base import as_sparse_vector
from frankwolfe.applications.structured_svm.models.chain.data import ChainData
from frankwolfe.applications.structured_svm.models.chain.dual_kernels import chain_state
from frankwolfe.errors import ShapeError


def _qap(n=6, seed=0):
    rng = np.random.default_rng(seed)
    A, B = rng.random((n, n)), rng.random((n, n))
    return A + A.T, B + B.T


@pytest.mark.parametrize("flag", [False, True])
def test_solve_qap_local_search_takes_numpy_bools(flag):
    A, B = _qap()
    ref = solve_qap(A, B, local_search=flag, random_state=0)
    res = solve_qap(A, B, local_search=np.bool_(flag), random_state=0)
    assert res.local_search == ref.local_search == ("2opt" if flag else "none")
    assert np.array_equal(res.permutation, ref.permutation)


def test_solve_qap_local_search_of_another_type_is_a_type_error():
    A, B = _qap()
    with pytest.raises(TypeError, match=r"`local_search` must be one of .* got 2 \(int\)"):
        solve_qap(A, B, local_search=2)


LOADERS = [
    ("load_ocr", lambda h: load_ocr(data_home=h)),
    ("load_conll2000", lambda h: load_conll2000(data_home=h)),
    ("load_snakes", lambda h: load_snakes(data_home=h)),
    ("load_cmu_house", lambda h: load_cmu_house(data_home=h)),
    ("fetch_ocr", lambda h: fetch.fetch_ocr(data_home=h, download_if_missing=False)),
    ("fetch_conll2000", lambda h: fetch.fetch_conll2000(data_home=h,
                                                        download_if_missing=False)),
    ("fetch_snakes", lambda h: fetch.fetch_snakes(data_home=h, download_if_missing=False)),
    ("fetch_cmu_house", lambda h: fetch.fetch_cmu_house(data_home=h,
                                                        download_if_missing=False)),
    ("fetch_qaplib", lambda h: fetch.fetch_qaplib("nug12", data_home=h,
                                                  download_if_missing=False)),
    ("get_data_home", get_data_home),
]


@pytest.mark.parametrize("bad", [3, 2.5, b"/tmp", ["/tmp"]], ids=repr)
@pytest.mark.parametrize("name, call", LOADERS, ids=[n for n, _ in LOADERS])
def test_every_loader_refuses_a_data_home_that_is_no_path(name, call, bad):
    with pytest.raises(TypeError, match=r"`data_home` must be a folder \(a str or an "
                                         r"os.PathLike\) or None, got "):
        call(bad)


def test_data_home_takes_str_and_pathlike(tmp_path):
    assert get_data_home(tmp_path) == tmp_path
    assert get_data_home(str(tmp_path)) == tmp_path
    assert os.fspath(get_data_home(None))  # the environment's or the default


@pytest.mark.parametrize("bad", ["x", "no", 1, None])
def test_return_info_must_be_a_bool(tmp_path, bad):
    # refused before any file is looked for (tmp_path holds none) or downloaded
    with pytest.raises(TypeError, match=rf"load_conll2000: `return_info` must be True or "
                                        rf"False, got {bad!r}"):
        load_conll2000(data_home=tmp_path, return_info=bad)
    with pytest.raises(TypeError, match=r"fetch_conll2000: `return_info` must be True"):
        fetch.fetch_conll2000(data_home=tmp_path, return_info=bad)
    with pytest.raises(TypeError, match=r"make_conll_like: `return_info` must be True"):
        make_conll_like(3, random_state=0, return_info=bad)


def test_return_info_takes_numpy_bools():
    out = make_conll_like(3, random_state=0, return_info=np.bool_(True))
    assert len(out) == 3 and out[2]["n_states"] == 22
    assert len(make_conll_like(3, random_state=0, return_info=np.bool_(False))) == 2


@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
def test_penalty_of_an_empty_design_is_refused(shape):
    A, b = np.zeros(shape), np.zeros(shape[0])
    what = "no rows" if shape[0] == 0 else "no columns"
    with pytest.raises(ValueError, match=re.escape(f"alpha_max: `A` has {what} (shape {shape})")):
        alpha_max(A, b)
    with pytest.raises(ValueError, match=rf"penalty_from_radius: `A` has {what}"):
        penalty_from_radius(A, b, np.zeros(shape[1]))


def test_sinkhorn_and_projection_name_the_first_bad_entry():
    M = np.ones((3, 3))
    M[1, 2] = -0.5
    M[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"strictly positive entries, got -0.5 at \(1, 2\)"):
        sinkhorn(M)
    M[1, 2] = 1.0
    with pytest.raises(ValueError, match=r"got nan at \(2, 0\)"):
        sinkhorn(M)
    with pytest.raises(ValueError, match=r"`P` contains NaN or inf \(nan at \(2, 0\)\)"):
        project_to_permutation(M)


def test_normalize_histograms_names_the_first_bad_count():
    h = np.ones((2, 3, 4))
    h[1, 2, 3] = -1.0
    with pytest.raises(ValueError, match=r"got -1.0 at index \(1, 2, 3\)"):
        normalize_histograms(h)
    with pytest.raises(ValueError, match=r"got inf at index 1$"):
        normalize_histograms([1.0, np.inf])


def test_chain_labelling_length_names_the_example_and_both_lengths():
    X, Y = make_chain(4, n_states=3, n_features=2, random_state=0)
    Y = list(Y)
    Y[2] = np.append(Y[2], 0)
    with pytest.raises(ValueError, match=rf"the labelling of example 2 has {len(X[2]) + 1} "
                                         rf"labels but its sequence {len(X[2])} positions"):
        ChainData(ChainModel(3, 2), X, Y)
    # lengths that add up (one label moved from example 0 to example 1) were let through
    Z = list(Y)
    Z[2] = Z[2][:-1]
    Z[0], Z[1] = Z[0][:-1], np.append(Z[1], 0)
    with pytest.raises(ValueError, match=r"the labelling of example 0 has"):
        ChainData(ChainModel(3, 2), X, Z)


def test_chain_state_names_the_bad_label_and_the_warm_shapes():
    X, Y = make_chain(3, n_states=3, n_features=2, random_state=0)
    model = ChainModel(3, 2)
    small = ChainModel(2, 2)  # the same data read with fewer states
    Y2 = [np.minimum(y, 1) for y in Y]
    Y2[1] = Y2[1].copy()
    Y2[1][1] = 2
    with pytest.raises(ValueError, match=r"label 2 at position 1; training"):
        chain_state(small, X, Y2, 1.0)  # ChainData's own check comes first
    n, N = len(X), sum(len(x) for x in X)
    warm = (None, (np.zeros((N, 3)), np.zeros((n + 1, 3, 3)), np.zeros(n)))
    with pytest.raises(ValueError, match=rf"shapes \({N}, 3\), \({n + 1}, 3, 3\), \({n},\), "
                                         rf"expected \({N}, 3\), \({n}, 3, 3\), \({n},\)"):
        chain_state(model, X, Y, 1.0, warm)


def test_snakes_colour_outside_the_five_is_named():
    image = np.zeros((2, 3, 3), dtype=np.uint8)
    image[..., 0] = 255  # red: code 1, one of Snakes' colours
    image[1, 2] = (255, 255, 255)  # white: code 7, none of them
    assert 1 in snakes._COLOUR_CODES and 7 not in snakes._COLOUR_CODES
    with pytest.raises(ValueError, match=r"\[255, 255, 255\] at pixel \(1, 2\)"):
        snakes._one_hot_colours(image)


def test_cmu_house_pair_list_names_the_frame_and_its_line(tmp_path):
    path = tmp_path / "pairs"
    path.write_text("house1 1\nhouse5 2\n\nhouse3 1\n"
                    f"house{cmu_house.N_FRAMES + 1} 2\n")
    with pytest.raises(ValueError, match=rf"frame {cmu_house.N_FRAMES + 1} on line 5"):
        cmu_house._read_pairs(path)


def test_sparse_vector_index_out_of_range_is_named():
    with pytest.raises(ShapeError, match=r"phi: index 7 \(entry 1\) out of range \[0, 5\)"):
        as_sparse_vector((np.array([0, 7, 2]), np.ones(3)), 5, "phi")

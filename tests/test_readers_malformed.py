"""Data-file readers refuse damaged files (a cut last line, an absurd header, content out
of its documented range) with a ValueError naming the file, instead of a silently wrong
result or an allocation sized by an unchecked header.

Independent answers: the numbers written into the files here, and the published copies of
../shared/data (SOURCE.md of each data set)."""

import os
import pickle
import shutil

import numpy as np
import pytest
import scipy.io

from frankwolfe.applications.matching.qaplib import read_qaplib
from frankwolfe.applications.structured_svm.datasets import load_cmu_house, load_ocr
from frankwolfe.applications.traffic import Network, tntp
from frankwolfe.applications.traffic.tntp import (
    load_siouxfalls,
    read_flows,
    read_net,
    read_tntp,
    read_trips,
)

_LINK = "1 2 100 1 1 0.15 4 0 0 1 ;\n"


# -- 1. a net file cut inside its last link --------------------------------------------
def test_a_net_file_cut_inside_its_last_link_is_refused(tmp_path):
    p = tmp_path / "n_net.tntp"
    p.write_text("<NUMBER OF LINKS> 2\n<END OF METADATA>\n" + _LINK + "2 1 100 1 1 0.1")
    with pytest.raises(ValueError, match=r"n_net\.tntp:4: the last link line '2 1 100 1 1 "
                                         r"0\.1' ends with neither ';' nor a line break"):
        read_net(p)
    # whole lines: a closing ';' without a line break, or a line break without ';'
    # (fewer columns than ten stay valid: the others are 0)
    for text in (_LINK + "2 1 100 1 1 0.1 ;", _LINK + "2 1 100 1 1 0.1\n"):
        p.write_text("<NUMBER OF LINKS> 2\n<END OF METADATA>\n" + text)
        links, _ = read_net(p)
        np.testing.assert_array_equal(links["b"], [0.15, 0.1])
        np.testing.assert_array_equal(links["power"], [4.0, 0.0])


def test_load_siouxfalls_checks_the_published_net_and_trips_files(shared_data, tmp_path):
    folder = tmp_path / "tntp" / "SiouxFalls"
    folder.mkdir(parents=True)
    for kind in ("net", "trips", "flow"):
        shutil.copyfile(shared_data / "tntp" / "SiouxFalls" / f"SiouxFalls_{kind}.tntp",
                        folder / f"SiouxFalls_{kind}.tntp")
    net, flows = load_siouxfalls(tmp_path)
    assert (net.n_links, flows.shape) == (76, (76,))  # SOURCE.md: 76 links
    # still parse: a changed BPR coefficient, two trips entries swapped (the total kept)
    for kind, old, new in (("net", "0.15", "0.16"),
                           ("trips", "4 :    500.0;     5 :    200.0;",
                            "4 :    200.0;     5 :    500.0;")):
        path = folder / f"SiouxFalls_{kind}.tntp"
        good = path.read_text()
        path.write_text(good.replace(old, new, 1))
        with pytest.raises(ValueError, match=rf"load_siouxfalls: .*SiouxFalls_{kind}\.tntp "
                                             r"has sha256 \w+, not the published"):
            load_siouxfalls(tmp_path)
        path.write_text(good)


# -- 2. the demand matrix is not sized by an unchecked number ---------------------------
def test_read_trips_refuses_a_zone_count_before_allocating(tmp_path, monkeypatch):
    p = tmp_path / "t_trips.tntp"
    p.write_text("<NUMBER OF ZONES> 1000000\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n")
    with pytest.raises(ValueError, match=r"t_trips\.tntp: <NUMBER OF ZONES> is 1000000: more "
                                         r"than MAX_ZONES = 16384"):
        read_trips(p)
    # zones past the last one named have no trips: legal, the header sizes the matrix
    p.write_text("<NUMBER OF ZONES> 3\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n"
                 "Origin 2\n 1 : 0.0;\n")
    demand, _ = read_trips(p)
    assert demand.shape == (3, 3) and demand[0, 1] == 5.0 and demand.sum() == 5.0
    monkeypatch.setattr(tntp, "MAX_ZONES", 10)  # the test's cap, not 16384
    p.write_text("<END OF METADATA>\nOrigin 11\n 2 : 5.0;\n")
    with pytest.raises(ValueError, match=r"t_trips\.tntp:2: the largest zone number is 11: "
                                         r"more than MAX_ZONES = 10"):
        read_trips(p)
    p.write_text("<NUMBER OF ZONES> 11\n<END OF METADATA>\nOrigin 11\n 2 : 5.0;\n")
    with pytest.raises(ValueError, match=r"<NUMBER OF ZONES> is 11: more than MAX_ZONES"):
        read_trips(p)
    p.write_text("<END OF METADATA>\nOrigin 10\n 2 : 5.0;\n")
    demand, _ = read_trips(p)
    assert demand.shape == (10, 10) and demand[9, 1] == 5.0 and demand.sum() == 5.0


# -- 3. the OCR letters ------------------------------------------------------------------
def _ocr_mat(home, y, fold=None):
    (home / "ocr").mkdir(exist_ok=True)
    y = np.asarray(y, dtype=np.int16).reshape(-1, 1)
    fold = np.zeros_like(y) if fold is None else np.asarray(fold, np.int16).reshape(-1, 1)
    scipy.io.savemat(home / "ocr" / "ocr.mat",
                     {"X": np.zeros((y.size, 128), np.uint8), "y": y, "fold": fold})


@pytest.mark.parametrize("y, match", [
    ([1, 2, -1, 3, 0], r"got -1 on row 2"),  # read as a separator: the word split in two
    ([1, 27, 0], r"got 27 on row 1"),  # read as label 26, past 'z'
])
def test_ocr_mat_labels_outside_their_range_are_refused(tmp_path, y, match):
    _ocr_mat(tmp_path, y)
    with pytest.raises(ValueError, match=r"ocr\.mat: `y` must hold 1\.\.26 .*" + match):
        load_ocr("ocr", tmp_path, source="mat")


def test_ocr_mat_is_checked_against_its_published_digest(tmp_path):
    _ocr_mat(tmp_path, [1, 2, 0, 3, 0])  # well-formed, but not Schmidt's file
    with pytest.raises(ValueError, match=r"load_ocr: .*ocr\.mat has sha256 \w+, not the "
                                         r"published .*2 words read, the OCR letters have "
                                         r"6877"):
        load_ocr("ocr", tmp_path, source="mat")


def test_ocr_mat_letters_of_one_word_in_two_folds_are_refused(tmp_path):
    _ocr_mat(tmp_path, [1, 2, 0], fold=[1, 2, -1])
    with pytest.raises(ValueError, match=r"row 1 \(0-based\) has fold 2 but its word began "
                                         r"in fold 1"):
        load_ocr("ocr", tmp_path, source="mat")


def _pickle(home, data, labels, folds):
    (home / "ocr").mkdir(exist_ok=True)
    d = {"data": data, "labels": labels, "folds": np.asarray(folds)}
    (home / "ocr" / "letters.pickle").write_bytes(pickle.dumps(d, protocol=4))


_W3, _W2 = np.zeros((3, 128), np.uint8), np.zeros((2, 128), np.uint8)


@pytest.mark.parametrize("data, labels, folds, match", [
    ([_W3, _W2], [np.array([0, 1]), np.array([1, 2])], [0, 0],
     r"word 0 \(0-based\) has 3 letters but labels of shape \(2,\)"),
    ([_W3, _W2], [np.array([0, 1, 2]), np.array([40, -3])], [0, 0],
     r"word 1 \(0-based\) has label 40; labels are 0\.\.25"),
    ([_W3, _W2], [np.array([0, 1, 2]), np.array([4, 3])], [0],
     r"2 words but 2 labellings and 1 folds"),
    ([_W3, np.zeros((2, 127), np.uint8)], [np.array([0, 1, 2]), np.array([4, 3])], [0, 1],
     r"word 1 \(0-based\) has pixels of shape \(2, 127\), expected \(letters, 128\)"),
    ([_W3, _W2], [np.array([0, 1, 2]), np.array([4, 3])], [0, 10],
     r"word 1 \(0-based\) has fold 10; folds are 0\.\.9"),
])
def test_ocr_pickle_content_is_checked(tmp_path, data, labels, folds, match):
    _pickle(tmp_path, data, labels, folds)
    with pytest.raises(ValueError, match=r"load_ocr: .*letters\.pickle: " + match):
        load_ocr("ocr", tmp_path, source="pickle")


def test_a_good_small_ocr_pickle_still_loads(tmp_path):
    _pickle(tmp_path, [_W3, _W2], [np.array([0, 1, 2]), np.array([25, 3])], [0, 4])
    X_tr, y_tr, X_te, y_te = load_ocr("ocr", tmp_path, source="pickle")
    assert [y.tolist() for y in y_tr] == [[0, 1, 2]] and [y.tolist() for y in y_te] == [[25, 3]]
    assert X_tr[0].shape == (3, 129) and X_te[0].shape == (2, 129)


# -- 4. a net file with no link ----------------------------------------------------------
@pytest.mark.parametrize("text", ["", "<NUMBER OF ZONES> 2\n<END OF METADATA>\n~ comment\n"])
def test_a_net_file_without_links_is_refused(tmp_path, text):
    p = tmp_path / "e_net.tntp"
    p.write_text(text)
    with pytest.raises(ValueError, match=r"e_net\.tntp: the file holds no link line"):
        read_net(p)


# -- 6. the CMU house set ----------------------------------------------------------------
@pytest.fixture
def house_copy(shared_data, tmp_path):
    if not (shared_data / "cmu_house").is_dir():
        pytest.skip("cmu_house not in the shared data")
    folder = tmp_path / "cmu_house"
    shutil.copytree(shared_data / "cmu_house", folder)
    for root, _, files in os.walk(folder):  # the shared copy is read-only
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return folder


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("damage, match", [
    (lambda d: (d / "correct").write_text("".join(f"{i}\n" for i in range(1, 31))),
     r"correct must be a permutation of 0\.\.29, got \[1, 2, .*\(landmark 0 is missing\)"),
    (lambda d: _edit(d / "adj" / "house001.adj", "0 1 0", "0 0 0"),
     r"house001\.adj: the adjacency must be symmetric, but entry \(\d+, \d+\) is 1, got 0 "
     r"on line 1"),
    (lambda d: _edit(d / "adj" / "house001.adj", "0 1 0", "0 2 0"),
     r"house001\.adj: the adjacency must hold 0 or 1, got 2 on line 1"),
    (lambda d: (d / "pairs" / "houses50_test.txt").write_text(""),
     r"houses50_test\.txt must list the 20 pairs of the test frames \(f, f \+ 50\), got 0"),
    (lambda d: _edit(d / "pairs" / "houses50_test.txt", "houses/house53 ", "houses/house54 "),
     r"houses50_test\.txt: a pair of baseline 50 is frames \(f, f \+ 50\), got frames 3 and "
     r"54 \(lines 1 and 2\)"),
    (lambda d: (d / "label" / "house1").write_bytes((d / "label" / "house1").read_bytes()[:-6]),
     r"label/house1: the last number '\S+' \(line 30\) is not followed by a line break"),
])
def test_cmu_house_content_is_checked(house_copy, damage, match):
    load_cmu_house(house_copy.parent)  # the copy loads before the damage
    damage(house_copy)
    with pytest.raises(ValueError, match=r"load_cmu_house: .*" + match):
        load_cmu_house(house_copy.parent)


# -- 7. node counts and the first through node of a net file -----------------------------
def _net_pair(tmp_path, meta):
    net = tmp_path / "x_net.tntp"
    net.write_text(meta + "<NUMBER OF LINKS> 2\n<END OF METADATA>\n"
                   "1 2 100 1 1 0.15 4 ;\n2 1 100 1 1 0.15 4 ;\n")
    trips = tmp_path / "x_trips.tntp"
    trips.write_text("<NUMBER OF ZONES> 2\n<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n")
    return net, trips


@pytest.mark.parametrize("meta, match", [
    ("<NUMBER OF NODES> 1000000000000\n",
     r"<NUMBER OF NODES> says 1000000000000: more than 16777216 and than the largest node "
     r"the links use \(2\)"),
    ("<NUMBER OF NODES> 1\n", r"<NUMBER OF NODES> says 1 but the links use node 2"),
    ("<NUMBER OF ZONES> 100000\n", r"<NUMBER OF ZONES> says 100000: more than 16384"),
    ("<NUMBER OF NODES> 3\n<NUMBER OF ZONES> 5\n",
     r"<NUMBER OF ZONES> says 5 but <NUMBER OF NODES> 3: zones are the nodes 1\.\.z"),
    ("<FIRST THRU NODE> 99\n", r"<FIRST THRU NODE> must be a node number in 1\.\.2 .*got 99"),
    ("<FIRST THRU NODE> 0\n", r"<FIRST THRU NODE> must be a node number in 1\.\.2 .*got 0"),
])
def test_read_tntp_bounds_node_counts_and_the_first_thru_node(tmp_path, meta, match):
    net, trips = _net_pair(tmp_path, meta)
    with pytest.raises(ValueError, match=r"x_net\.tntp: " + match):
        read_tntp(net, trips)


def test_read_tntp_keeps_whole_headers(tmp_path):
    net, trips = _net_pair(tmp_path, "<NUMBER OF NODES> 2\n<FIRST THRU NODE> 2\n")
    got = read_tntp(net, trips)
    assert (got.n_nodes, got.first_thru_node) == (2, 1)  # TNTP's node 2, 0-based 1
    assert read_tntp(*_net_pair(tmp_path, "")).first_thru_node == 0
    # an isolated node past those the links use is legal
    assert read_tntp(*_net_pair(tmp_path, "<NUMBER OF NODES> 4\n")).n_nodes == 4


def test_network_first_thru_node_lies_among_the_nodes():
    kw = dict(init_node=[0], term_node=[1], free_flow_time=[1.0], capacity=[1.0], b=[0.15],
              power=[4.0], demand=[[0, 1.0], [0, 0]])
    with pytest.raises(ValueError, match=r"`first_thru_node` must lie in \[0, 2\).*got 2"):
        Network(**kw, first_thru_node=2)
    assert Network(**kw, first_thru_node=np.int64(1)).first_thru_node == 1


# -- 8. a QAPLIB file cut inside its last number ----------------------------------------
def test_a_qaplib_file_cut_inside_its_last_number_is_refused(tmp_path):
    p = tmp_path / "x.dat"
    p.write_text("2\n0 1\n1 0\n\n0 35\n35 3")  # was "... 35 36\n": the count is unchanged
    with pytest.raises(ValueError, match=r"x\.dat:6: the last number '3' is not followed by "
                                         r"a line break: a truncated file"):
        read_qaplib(p)
    for end in ("\n", " ", "\r\n"):
        p.write_text("2\n0 1\n1 0\n\n0 35\n35 36" + end)
        A, B = read_qaplib(p)
        np.testing.assert_array_equal(B, [[0, 35], [35, 36]])


# -- 9. a flow file's first data line is not a header ------------------------------------
def test_a_typo_in_the_first_flow_line_is_reported_not_dropped(tmp_path):
    p = tmp_path / "fl.tntp"
    p.write_text("1 2 1O.5 6.0\n2 1 11.0 6.0\n")
    with pytest.raises(ValueError, match=r"fl\.tntp:1: volume must be a finite number, got "
                                         r"'1O\.5'"):
        read_flows(p)
    p.write_text("From To Volume Cost\n1 2 10.5 6.0\n2 1 11.0 6.0\n")
    ends, volume, cost = read_flows(p)
    np.testing.assert_array_equal(ends, [[1, 2], [2, 1]])
    np.testing.assert_array_equal(volume, [10.5, 11.0])
    p.write_text("1 2 10.5 6.0\n2 1 11.0 6.0\n")  # no header: both lines are links
    assert read_flows(p)[1].tolist() == [10.5, 11.0]

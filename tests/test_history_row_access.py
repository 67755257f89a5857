"""Result.history by row: history[i] is row i as a dict (as iterating gives it),
history[a:b] a list of them; column access by name is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.result import History


def _history():
    h = History(("iteration", "fun"))
    h.append_values((0, 3.0))
    h.append_values((1, 2.0))
    h.append(iteration=2, fun=1.5, extra=7.0)  # a new column, back-filled with NaN
    return h


def test_an_int_is_a_row_as_iteration_gives_it():
    h = _history()
    rows = list(h)
    assert len(rows) == 3
    for i in range(-3, 3):
        row = h[i]
        assert row.keys() == rows[i].keys()
        np.testing.assert_equal(list(row.values()), list(rows[i].values()))
    assert h[-1] == {"iteration": 2, "fun": 1.5, "extra": 7.0}
    assert h[0]["iteration"] == 0 and np.isnan(h[0]["extra"])
    assert h[np.int64(1)]["fun"] == 2.0 and h[np.int32(-2)]["fun"] == 2.0


def test_a_slice_is_a_list_of_rows():
    h = _history()
    rows = list(h)
    for s in (slice(None), slice(1, None), slice(None, -1), slice(None, None, -1),
              slice(5, 9), slice(0, 3, 2)):
        got = h[s]
        want = rows[s]
        assert isinstance(got, list) and len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_equal(a, b)


@pytest.mark.parametrize("i", [3, -4, 100])
def test_an_index_out_of_range_is_an_index_error_naming_it_and_the_length(i):
    with pytest.raises(IndexError, match=rf"history: row {i} out of range for a history of 3 "
                                         r"rows"):
        _history()[i]


def test_an_empty_history_has_no_row():
    with pytest.raises(IndexError, match=r"row -1 out of range for a history of 0 rows"):
        History(("a",))[-1]
    assert History(("a",))[:] == []


@pytest.mark.parametrize("key", [1.0, None, True, np.bool_(False), (0, 1)])
def test_other_keys_are_a_type_error_naming_them(key):
    with pytest.raises(TypeError, match=r"history: a key is a column name \(str\), a row "
                                        r"number \(int\) or a slice of rows, got "):
        _history()[key]


def test_columns_by_name_are_unchanged():
    h = _history()
    np.testing.assert_array_equal(h["fun"], [3.0, 2.0, 1.5])
    assert h[np.str_("iteration")].tolist() == [0, 1, 2]
    with pytest.raises(KeyError, match=r"history has no column 'gap'; columns: "
                                       r"\['iteration', 'fun', 'extra'\]"):
        h["gap"]


def test_the_last_row_of_a_run_is_its_result():
    obj = fw.QuadraticObjective(np.eye(3), -np.array([0.2, 0.5, 0.3]))
    res = fw.frank_wolfe(obj, fw.ProbabilitySimplex(dim=3), max_iter=20, tol=0.0)
    last = res.history[-1]
    assert last == list(res.history)[-1]
    assert last["iteration"] == res.nit
    assert last["fun"] == res.fun
    assert res.history[0]["iteration"] == 0

"""A whole-number argument (``check_whole``) and the run keywords (``max_iter``, ``tol``,
``rtol``, ``time_limit``, ``verbose``, ``history_every``) tell a wrong type from a wrong
value as ``check_real`` does: text, None, a list, an array or a bool is a ``TypeError``;
a negative, ``2.5`` for an integer or NaN a ``ValueError``.  Both answered ValueError."""

from __future__ import annotations

import math

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import RunOptions
from frankwolfe._numbers import check_real, check_whole
from frankwolfe.monitor import Monitor

NAN, INF = math.nan, math.inf
WRONG_TYPES = ["3", None, [3], (3,), np.array([3]), np.array(3), True, np.True_, 3 + 0j]


@pytest.mark.parametrize("bad", WRONG_TYPES, ids=repr)
def test_check_whole_wrong_type_is_a_type_error_as_check_real(bad):
    with pytest.raises(TypeError, match=r"Thing: `n` must be a positive integer, got "):
        check_whole(bad, "n", 1, "Thing")
    with pytest.raises(TypeError, match=r"`n` must be a real number"):
        check_real(bad, "n")


@pytest.mark.parametrize("bad", [2.5, 0, -1, NAN, INF, -INF, np.float64(2.5), np.int64(0)],
                         ids=repr)
def test_check_whole_wrong_value_is_a_value_error(bad):
    with pytest.raises(ValueError, match=r"Thing: `n` must be a positive integer, got "):
        check_whole(bad, "n", 1, "Thing")


def test_check_whole_keeps_what_it_accepted():
    assert check_whole(np.int64(3), "n") == 3 and type(check_whole(np.int64(3), "n")) is int
    assert check_whole(np.float64(3.0), "n") == 3
    assert check_whole(3.0, "n") == 3
    assert check_whole(10**30, "n") == 10**30
    assert check_whole(0, "n", 0) == 0
    assert check_whole(None, "n", optional=True) is None
    with pytest.raises(TypeError, match=r"`n` must be a positive integer or None, got 'x'"):
        check_whole("x", "n", optional=True)
    with pytest.raises(ValueError, match=r"`n` must be a positive integer or None, got 0"):
        check_whole(0, "n", optional=True)


_TYPE = [("max_iter", "10"), ("max_iter", None), ("max_iter", [10]), ("max_iter", True),
         ("max_iter", np.array([10])), ("tol", "1e-6"), ("tol", None), ("tol", True),
         ("tol", [1e-6]), ("rtol", "0"), ("rtol", None), ("rtol", np.False_),
         ("time_limit", "5"), ("time_limit", [5.0]), ("time_limit", True),
         ("history_every", "2"), ("history_every", True), ("history_every", None),
         ("verbose", "yes"), ("verbose", None), ("verbose", [1])]
_VALUE = [("max_iter", -1), ("max_iter", 2.5), ("max_iter", NAN), ("max_iter", INF),
          ("tol", -1.0), ("tol", NAN), ("rtol", 1.0), ("rtol", -0.1), ("rtol", NAN),
          ("time_limit", 0.0), ("time_limit", -2), ("time_limit", NAN),
          ("history_every", 0), ("history_every", 1.5), ("verbose", -1), ("verbose", 2.7)]


@pytest.mark.parametrize("name, bad", _TYPE, ids=[f"{n}={b!r}" for n, b in _TYPE])
def test_run_keyword_of_a_wrong_type_is_a_type_error(name, bad):
    for build in (lambda: RunOptions(**{name: bad}), lambda: Monitor("fw", **{name: bad})):
        with pytest.raises(TypeError, match=rf"^{name} must be .*, got .*\({type(bad).__name__}\)"):
            build()
    f = fw.LeastSquares(np.eye(2), np.ones(2))
    with pytest.raises(TypeError, match=rf"^{name} must be "):
        fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=2), **{name: bad})


@pytest.mark.parametrize("name, bad", _VALUE, ids=[f"{n}={b!r}" for n, b in _VALUE])
def test_run_keyword_of_a_wrong_value_is_a_value_error(name, bad):
    with pytest.raises(ValueError, match=rf"^{name} must be .*, got {bad!r}$"):
        RunOptions(**{name: bad})
    f = fw.LeastSquares(np.eye(2), np.ones(2))
    with pytest.raises(ValueError, match=rf"^{name} must be "):
        fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=2), **{name: bad})


def test_run_keywords_keep_numpy_scalars_and_whole_floats():
    opts = RunOptions(max_iter=np.float64(3.0), tol=np.float64(0.0), rtol=np.float32(0.5),
                      time_limit=np.int64(5), history_every=np.int64(2), verbose=np.int64(1))
    assert opts.monitor("fw").max_iter == 3
    assert RunOptions(max_iter=3.0, history_every=2.0, time_limit=None, verbose=True,
                      tol=10**400).max_iter == 3.0
    f = fw.LeastSquares(np.eye(2), np.ones(2))
    res = fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=2), max_iter=np.int64(4), tol=0.0)
    assert res.nit <= 4

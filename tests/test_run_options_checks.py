"""RunOptions refuses a bad run keyword when it is built, with the monitor's message:
RunOptions(tol='a', max_iter=-3) was accepted and refused only by ``.monitor()``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankwolfe import RunOptions
from frankwolfe.monitor import Monitor

_BAD = [("tol", "a"), ("tol", -1.0), ("tol", math.nan), ("tol", None),
        ("rtol", 1.0), ("rtol", "0"), ("max_iter", -3), ("max_iter", 2.5),
        ("max_iter", "10"), ("time_limit", 0.0), ("time_limit", "5"),
        ("callback", 3), ("verbose", -1), ("verbose", "yes"), ("history_every", 0),
        ("history_every", 1.5), ("progress", "no")]


@pytest.mark.parametrize("name,bad", _BAD, ids=[f"{n}={b!r}" for n, b in _BAD])
def test_refused_at_construction_as_the_monitor_refuses(name, bad):
    with pytest.raises((ValueError, TypeError)) as monitor_error:
        Monitor("fw", **{name: bad})
    with pytest.raises(type(monitor_error.value)) as options_error:
        RunOptions(**{name: bad})
    assert str(options_error.value) == str(monitor_error.value)
    assert name in str(options_error.value)


def test_the_reported_case():
    with pytest.raises(TypeError, match=r"tol must be a non-negative number, got 'a' \(str\)"):
        RunOptions(tol="a", max_iter=-3)
    with pytest.raises(ValueError, match=r"max_iter must be a non-negative integer, got -3"):
        RunOptions(max_iter=-3)


def test_valid_values_and_numpy_scalars_kept():
    opts = RunOptions(tol=np.float64(1e-8), rtol=np.float64(0.0), max_iter=np.int64(7),
                      time_limit=np.float64(2.0), verbose=np.int64(3),
                      history_every=np.int64(2), progress=np.bool_(False))
    assert opts.max_iter == 7
    assert opts.monitor("fw").max_iter == 7
    assert RunOptions(max_iter=0, verbose=True, callback=print).max_iter == 0

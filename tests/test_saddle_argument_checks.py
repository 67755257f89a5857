"""saddle_point_frank_wolfe checks each of its arguments up front, whatever the mode:
``nu`` was checked only with step_size='curvature', ``resum_every`` and ``sparsify_tol``
only with away=True, and ``C`` only where a curvature rule was built."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import frankwolfe as fw

_MODES = {"default": {}, "corrective": {"corrective": True}, "away": {"away": True},
          "agnostic": {"step_size": "agnostic"}, "rule object": {"step_size": fw.Agnostic()}}


class _Counting(fw.BilinearObjective):
    calls = 0

    def value_and_gradients(self, x, y):
        type(self).calls += 1
        return super().value_and_gradients(x, y)


def _run(**kw):
    L = _Counting(np.array([[1.0, -1.0, 0.5], [-1.0, 1.0, 0.0]]))
    kw.setdefault("max_iter", 5)
    return fw.saddle_point_frank_wolfe(L, fw.ProbabilitySimplex(), fw.ProbabilitySimplex(),
                                       **kw)


@pytest.mark.parametrize("mode", list(_MODES))
def test_nu_refused_in_every_mode(mode):
    for bad in (math.nan, 2, -1, 0.0, math.inf):
        with pytest.raises(ValueError, match=r"saddle_point_frank_wolfe: `nu` must be in "
                                             r"\(0, 1\], got " + re.escape(repr(bad))):
            _run(nu=bad, **_MODES[mode])
    with pytest.raises(TypeError, match=r"`nu` must be a real number, got '1'"):
        _run(nu="1", **_MODES[mode])


@pytest.mark.parametrize("mode", list(_MODES))
def test_resum_every_and_sparsify_tol_refused_in_every_mode(mode):
    for bad in (0, -5, 2.5, math.nan, "2"):
        with pytest.raises(TypeError if bad == "2" else ValueError,
                           match=r"`resum_every` must be a positive integer, "
                                 r"got " + re.escape(repr(bad))):
            _run(resum_every=bad, **_MODES[mode])
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"`sparsify_tol` must be a finite number >= 0, "
                                             r"got " + re.escape(repr(bad))):
            _run(sparsify_tol=bad, **_MODES[mode])
    with pytest.raises(TypeError, match=r"`sparsify_tol` must be a real number, got '0'"):
        _run(sparsify_tol="0", **_MODES[mode])


@pytest.mark.parametrize("mode", list(_MODES))
def test_c_refused_in_every_mode(mode):
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match=r"`C` \(the curvature constant\) must be "
                                             r"positive and finite"):
            _run(C=bad, **_MODES[mode])
    # text is no number: a TypeError, as for `nu` (it was a ValueError)
    with pytest.raises(TypeError, match=r"`C` \(the curvature constant\) must be a real "
                                        r"number, got '1'"):
        _run(C="1", **_MODES[mode])


def test_refused_before_any_evaluation():
    _Counting.calls = 0
    for kw in ({"nu": np.nan}, {"resum_every": 0}, {"sparsify_tol": -1.0},
               {"nu": 2.0, "corrective": True}):
        with pytest.raises(ValueError):
            _run(**kw)
    assert _Counting.calls == 0


def test_valid_numpy_values_accepted():
    """np.float64 and np.int64 pass where Python's numbers do.  By hand: against x = (p,
    1 - p) the columns pay 2p - 1, 1 - 2p and p/2, whose maximum is least at p = 0.4
    (value 0.2); y = (0, 0.2, 0.8) makes both rows pay 0.2."""
    res = _run(nu=np.float64(0.5), resum_every=np.int64(10), sparsify_tol=np.float64(0.0),
               away=True, C=np.float64(2.0))
    assert res.status in ("max_iter", "converged")
    res = _run(nu=np.float64(0.5), corrective=True, tol=1e-12, max_iter=50)
    assert res.status == "converged"
    assert np.allclose(res.x, [0.4, 0.6], atol=1e-9)
    assert np.allclose(res.extra["y"], [0.0, 0.2, 0.8], atol=1e-9)
    assert res.fun == pytest.approx(0.2, abs=1e-9)

"""Core BCFW takes ``averaging`` as the structured SVM's estimators do: a bool or one of
the kinds, True meaning ``"weighted"`` (``solver_runs._averaging_kind``) and False none.
It refused True and False ("averaging must be one of [None, 'weighted', ...]")."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications.structured_svm.solver_runs import _averaging_kind

Y = np.array([0.9, 0.3, 0.2, 0.8, 0.5, 0.1])


def _run(**kw):
    f = fw.FunctionObjective(lambda x: 0.5 * float((x - Y) @ (x - Y)), lambda x: x - Y,
                             exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2) for _ in range(3)])
    return fw.block_coordinate_frank_wolfe(f, dom, max_iter=7, tol=0.0, gap_every=2,
                                           random_state=3, compiled=False, **kw)


def _same(a, b):
    np.testing.assert_array_equal(a.x, b.x)
    assert a.fun == b.fun and a.gap == b.gap and a.nit == b.nit
    assert a.extra.keys() == b.extra.keys()
    for key in ("x_average", "x_last", "average_window"):
        if key in a.extra:
            np.testing.assert_array_equal(a.extra[key], b.extra[key])
    for col in ("fun", "gap"):
        np.testing.assert_array_equal(np.asarray(a.history[col]), np.asarray(b.history[col]))


def test_the_estimators_meaning_of_true_and_false():
    assert _averaging_kind(True, None) == "weighted" and _averaging_kind(False, "x") is None


@pytest.mark.parametrize("certify", ["last", "average"])
@pytest.mark.parametrize("flag", [True, np.True_])
def test_true_is_weighted_bitwise(certify, flag):
    weighted = _run(averaging="weighted", certify=certify)
    assert "x_average" in weighted.extra
    _same(_run(averaging=flag, certify=certify), weighted)
    if certify == "average":  # the certified point is the average, not the last iterate
        assert not np.array_equal(weighted.x, weighted.extra["x_last"])


@pytest.mark.parametrize("flag", [False, np.False_])
def test_false_is_none_bitwise(flag):
    plain = _run(averaging=None)
    assert "x_average" not in plain.extra
    _same(_run(averaging=flag), plain)
    with pytest.raises(ValueError, match="certify='average' needs averaging"):
        _run(averaging=flag, certify="average")


@pytest.mark.parametrize("bad", [1, 0, 1.0, ["weighted"], ("tail",), b"weighted"], ids=repr)
def test_other_types_are_a_type_error_naming_averaging(bad):
    with pytest.raises(TypeError, match=r"averaging must be one of \[None, 'weighted', "
                                        r"'uniform', 'tail'\], True or False, got "):
        _run(averaging=bad)


def test_an_unknown_word_is_still_a_value_error():
    with pytest.raises(ValueError, match=r"averaging must be one of .*, got 'wavg'"):
        _run(averaging="wavg")
    _same(_run(averaging="Tail"), _run(averaging="tail"))

"""One check of a real parameter (``frankwolfe._numbers.check_real``) for the step rules,
gap sampling's degree and the saddle rules' curvature constant: a TypeError naming the
argument for what is no real number (text, None, a bool), a ValueError for NaN, an
infinity or a value out of range; numpy's scalars taken as Python's."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe._numbers import check_real
from frankwolfe.algorithms.block_orders import check_gap_degree, make_block_order
from frankwolfe.step_size.saddle import curvature_settings


@pytest.mark.parametrize("bad", ["1", None, True, np.bool_(True), 1 + 0j, [1.0]])
def test_non_numbers_are_type_errors(bad):
    with pytest.raises(TypeError, match=re.escape(f"Rule: `a` must be a real number, "
                                                  f"got {bad!r} ({type(bad).__name__})")):
        check_real(bad, "a", "Rule")


@pytest.mark.parametrize("kw, bad, want", [
    ({}, math.nan, "a finite number"),
    ({}, math.inf, "a finite number"),
    ({"low": 0.0}, -1.0, "a finite number >= 0"),
    ({"low": 0.0, "low_open": True}, 0.0, "positive and finite"),
    ({"low": 1.0, "low_open": True}, 1.0, "a finite number > 1"),
    ({"high": 1.0, "high_open": True}, 1.0, "a finite number < 1"),
    ({"low": 0.0, "high": 1.0, "low_open": True}, 0.0, r"in \(0, 1\]"),
    ({"low": 0.0, "high": 1.0, "high_open": True}, 1.0, r"in \[0, 1\)"),
    ({"low": 0.0, "finite": False}, math.nan, "a number >= 0"),
])
def test_out_of_range_is_a_value_error_stating_the_range(kw, bad, want):
    with pytest.raises(ValueError, match=rf"^`a` must be {want}, got {re.escape(repr(bad))}$"):
        check_real(bad, "a", **kw)


def test_values_come_back_as_floats():
    # the interval ends themselves where closed, numpy's scalars, an int past the float range
    assert check_real(0, "a", low=0.0) == 0.0 and type(check_real(0, "a", low=0.0)) is float
    assert check_real(1.0, "a", low=0.0, high=1.0) == 1.0
    assert check_real(np.int64(3), "a") == 3.0 and check_real(np.float32(0.5), "a") == 0.5
    assert check_real(10**400, "a", finite=False) == math.inf
    with pytest.raises(ValueError, match=r"`a` must be a finite number, got 1000"):
        check_real(10**400, "a")
    # without `finite` and without bounds NaN is the caller's to judge (Adaptive's joint rule)
    assert math.isnan(check_real(math.nan, "a", finite=False))


def test_note_follows_the_name():
    with pytest.raises(ValueError, match=r"^W: `C` \(the curvature constant\) must be "
                                         r"positive and finite, got -1$"):
        check_real(-1, "C", "W", low=0.0, low_open=True, note="the curvature constant")


def test_curvature_constant_text_is_a_type_error_as_nu_is():
    """``C="1"`` was a ValueError while ``nu="1"`` beside it was a TypeError."""
    for args in (("1", 1.0), (1.0, "1")):
        with pytest.raises(TypeError, match=r"^where: `(C` \(the curvature constant\)|nu`) "
                                            r"must be a real number"):
            curvature_settings(*args, "where")
    assert curvature_settings(np.int64(2), np.float64(0.5), "w") == (2.0, 0.5)
    assert curvature_settings(None, 1, "w") == (None, 1.0)


@pytest.mark.parametrize("bad", ["1", True, [1.0]])
def test_short_step_smoothness_text_is_a_type_error(bad):
    with pytest.raises(TypeError, match=rf"ShortStep: `smoothness` must be a real number, "
                                        rf"got {re.escape(repr(bad))}"):
        fw.ShortStep(bad)


def test_short_step_keeps_smoothness_as_a_float():
    rule = fw.ShortStep(np.int64(4))
    assert rule.smoothness == 4.0 and type(rule.smoothness) is float
    assert fw.ShortStep(0).smoothness == 0.0 and fw.ShortStep().smoothness is None


def test_gap_degree_one_rule_everywhere():
    assert check_gap_degree(np.int64(0), "d") == 0.0
    for check in (lambda v: check_gap_degree(v, "gap_degree"),
                  lambda v: make_block_order("uniform", v)):
        with pytest.raises(TypeError, match=r"`gap_degree` must be a real number, got 'a'"):
            check("a")
        with pytest.raises(ValueError, match=r"`gap_degree` must be a finite number >= 0, "
                                             r"got inf"):
            check(math.inf)

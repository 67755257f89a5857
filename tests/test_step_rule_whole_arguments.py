"""The whole-number arguments of the step rules (``max_backtracks``, ``max_iter``,
``max_halvings``) follow the one rule of :func:`frankwolfe._numbers.check_whole`: a
non-number (text, a bool, a complex) is a ``TypeError`` naming the rule and the
argument, a number that is not a positive whole one a ``ValueError``, and numpy's
integers and whole floats pass.  These sites raised ``ValueError`` for text."""

from __future__ import annotations

import re

import numpy as np
import pytest

from frankwolfe.step_size import Adaptive, Armijo, Monotonic, Secant

SITES = [(Adaptive, "max_backtracks"), (Armijo, "max_backtracks"), (Secant, "max_iter"),
         (Monotonic, "max_halvings")]


@pytest.mark.parametrize(("rule", "name"), SITES)
@pytest.mark.parametrize("bad", ["5", True, 1 + 2j, None, [3]])
def test_a_non_number_is_a_type_error(rule, name, bad):
    with pytest.raises(TypeError, match=re.escape(f"{rule.__name__}: `{name}` must be a "
                                                  f"positive integer, got {bad!r}")):
        rule(**{name: bad})


@pytest.mark.parametrize(("rule", "name"), SITES)
@pytest.mark.parametrize("bad", [0, -3, 2.5, float("inf"), float("nan"), np.int64(0)])
def test_a_number_out_of_range_is_a_value_error(rule, name, bad):
    with pytest.raises(ValueError, match=f"{rule.__name__}: `{name}` must be a positive "
                                         "integer"):
        rule(**{name: bad})


@pytest.mark.parametrize(("rule", "name"), SITES)
@pytest.mark.parametrize("good", [7, 7.0, np.int64(7), np.float64(7.0), np.int32(7)])
def test_whole_numbers_pass_as_ints(rule, name, good):
    value = getattr(rule(**{name: good}), name)
    assert value == 7 and type(value) is int

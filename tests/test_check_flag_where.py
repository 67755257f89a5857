"""``check_flag(..., where=...)``: a flag refused by the name of its owner as well as its
own, as ``check_whole`` does ("FunctionObjective: `convex` must be True or False, got 1");
the loaders' flags through it (there was a wrapper of their own)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe._numbers import check_flag


def _f(x):
    return 0.0


def _g(x):
    return 0 * x


def test_check_flag_names_where():
    with pytest.raises(TypeError, match=r"^W: `a` must be True or False, got 1$"):
        check_flag(1, "a", where="W")
    with pytest.raises(TypeError, match=r"^W: `a` must be True or False, or None, got 'x'$"):
        check_flag("x", "a", True, where="W")
    with pytest.raises(TypeError, match=r"^`a` must be True or False, got 'x'$"):
        check_flag("x", "a")
    assert check_flag(np.True_, "a", where="W") is True
    assert check_flag(None, "a", optional=True, where="W") is None


@pytest.mark.parametrize("make, owner", [
    (lambda c: fw.FunctionObjective(_f, _g, convex=c), "FunctionObjective"),
    (lambda c: fw.QuadraticObjective(np.eye(2), convex=c), "QuadraticObjective"),
    (lambda c: fw.FiniteSumObjective(_f, _g, 3, convex=c), "FiniteSumObjective"),
    (lambda c: fw.ActiveSet([np.ones(2)], keep_x=c), "ActiveSet"),
], ids=["function", "quadratic", "finite_sum", "active_set"])
def test_owners_are_named(make, owner):
    name = "keep_x" if owner == "ActiveSet" else "convex"
    with pytest.raises(TypeError, match=rf"^{owner}: `{name}` must be True or False, got 1$"):
        make(1)


def test_download_flag_names_the_loader():
    # return_info's loaders: tests/test_applications_bad_input_named.py
    from frankwolfe.applications.data.sources import check_download_flag

    with pytest.raises(TypeError, match=re.escape("load_ocr: `download_if_missing` must be "
                                                  "True or False, got 'no'")):
        check_download_flag("no", "load_ocr")
    assert check_download_flag(np.False_, "load_ocr") is False

"""Every public name's docstring Examples run as a user pastes them into a session that
has imported only numpy and frankwolfe (under pytest's doctest collection they see their
module's globals, and a class used without its import passed there)."""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io

import numpy as np
import pytest

import frankwolfe as fw


def _with_examples():
    for name in fw.__all__:
        obj = getattr(fw, name)
        if ">>>" in (inspect.getdoc(obj) or ""):
            yield name


@pytest.mark.parametrize("name", list(_with_examples()))
def test_examples_run_in_a_fresh_session(name):
    doc = inspect.getdoc(getattr(fw, name)) or ""
    test = doctest.DocTestParser().get_doctest(doc, {"np": np, "fw": fw}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = runner.run(test, out=out.write)
    assert result.failed == 0, out.getvalue()[-2000:]

"""alternating_linear_minimization's verbose output says whose run it is: a line naming
alm and the method that runs it precedes that method's table (headed by its name)."""

from __future__ import annotations

import pytest

from frankwolfe import Box, ProbabilitySimplex, alternating_linear_minimization


@pytest.mark.parametrize("method", ["bcfw", "fw"])
def test_the_alm_table_is_introduced_by_alm(capsys, method):
    res = alternating_linear_minimization(
        None, [ProbabilitySimplex(dim=4), Box(0.0, 0.3, dim=4)], tol=1e-6, max_iter=30,
        verbose=True, method=method, random_state=0 if method == "bcfw" else None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"alm: alternating linear minimization over 2 sets, run by {method}"
    assert out[1] == method  # the inner method's table follows, under its own name
    assert out[2].split()[:2] == ["iter", "time(s)"]
    assert res.method == "alm"


def test_a_quiet_alm_prints_nothing(capsys):
    alternating_linear_minimization(None, [ProbabilitySimplex(dim=3), Box(0.0, 0.5, dim=3)],
                                    max_iter=5, method="fw")
    assert capsys.readouterr().out == ""

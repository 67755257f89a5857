"""Bad arguments of alternating_linear_minimization and GapSampling are refused by name:
the error names the argument and its value (TypeError for a wrong type, ValueError for a
wrong value), and numpy's scalars pass where Python's do."""

from __future__ import annotations

import re

import numpy as np
import pytest

import frankwolfe as fw


@pytest.fixture
def obj():
    return fw.QuadraticObjective(np.eye(4), np.ones(4))


def _sets():
    return [fw.L1Ball(dim=4), fw.Box(0.0, 1.0, dim=4)]


def test_alm_names_domains(obj):
    """One LMO was iterated: "'L1Ball' object is not iterable"."""
    for bad in (fw.L1Ball(dim=4), 3, "ab"):
        with pytest.raises(TypeError, match=r"alternating_linear_minimization: `domains` must "
                                            r"be a sequence of two or more LMOs, got "):
            fw.alternating_linear_minimization(obj, bad)
    with pytest.raises(TypeError, match=r"`domains` must be two or more LMOs"):
        fw.alternating_linear_minimization(obj, [fw.L1Ball(dim=4), 3])


def test_alm_names_method_options(obj):
    """An int was iterated: "'int' object is not iterable"."""
    for bad in (3, [("block_order", "perm")], "perm"):
        with pytest.raises(TypeError, match=re.escape(
                f"`method_options` must be a dict of keywords or None, got {bad!r}")):
            fw.alternating_linear_minimization(obj, _sets(), method_options=bad)
    with pytest.raises(ValueError, match=r"give the run keywords \['max_iter'\] as keywords "
                                         r"of this call, not in method_options"):
        fw.alternating_linear_minimization(obj, _sets(), method_options={"max_iter": 3})
    res = fw.alternating_linear_minimization(obj, tuple(_sets()), max_iter=3,
                                             method_options={"block_order": "perm"},
                                             random_state=0)
    assert res.extra["block_order"] == "perm"


def test_alm_penalty_types(obj):
    with pytest.raises(TypeError, match=r"`penalty` must be a real number, got 'a'"):
        fw.alternating_linear_minimization(obj, _sets(), penalty="a")
    with pytest.raises(TypeError, match=r"`penalty` must be a real number, got True"):
        fw.alternating_linear_minimization(obj, _sets(), penalty=True)
    with pytest.raises(ValueError, match=r"`penalty` must be positive and finite, got -1"):
        fw.alternating_linear_minimization(obj, _sets(), penalty=-1)
    a = fw.alternating_linear_minimization(obj, _sets(), penalty=np.int64(2), max_iter=3,
                                           random_state=0)
    b = fw.alternating_linear_minimization(obj, _sets(), penalty=2.0, max_iter=3,
                                           random_state=0)
    np.testing.assert_array_equal(a.x, b.x)


def test_gap_sampling_names_degree():
    """'a' gave numpy's "ufunc 'isfinite' not supported"; -1 named `gap_degree`."""
    for bad in ("a", None, True, np.bool_(False), [1.0]):
        with pytest.raises(TypeError, match=re.escape(
                f"GapSampling: `degree` must be a real number, got {bad!r}")):
            fw.GapSampling(degree=bad)
    for bad in (-1, -0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=rf"GapSampling: `degree` must be a finite number "
                                             rf">= 0, got {bad!r}"):
            fw.GapSampling(degree=bad)
    assert fw.GapSampling(np.int64(2)).degree == 2.0
    assert fw.GapSampling(np.float64(0.5)).degree == 0.5


def test_bcfw_names_gap_degree():
    f = fw.QuadraticObjective(np.eye(4), np.ones(4))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)])
    with pytest.raises(ValueError, match=r"`gap_degree` must be a finite number >= 0, got -1"):
        fw.block_coordinate_frank_wolfe(f, dom, block_order="gap", gap_degree=-1)
    with pytest.raises(TypeError, match=r"`gap_degree` must be a real number, got 'a'"):
        fw.block_coordinate_frank_wolfe(f, dom, gap_degree="a")

"""Result read like scipy's OptimizeResult: mapping access, keys() and the counters' names."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from frankwolfe import FunctionObjective, ProbabilitySimplex, Result, frank_wolfe


@pytest.fixture(scope="module")
def res() -> Result:
    y = np.array([0.3, -0.2, 0.9, 0.1])
    objective = FunctionObjective(
        lambda x: 0.5 * float(np.sum((x - y) ** 2)), lambda x: x - y, smoothness=1.0,
        shape=y.shape,
    )
    return frank_wolfe(objective, ProbabilitySimplex(), step_size="short", max_iter=50)


def test_mapping_access_matches_attributes(res):
    assert isinstance(res, Mapping)
    for name in ("x", "fun", "gap", "status", "message", "nit", "success", "history", "extra"):
        assert name in res
        assert res[name] is getattr(res, name)
    assert res.get("no_such_key") is None
    with pytest.raises(KeyError, match="no_such_key"):
        res["no_such_key"]


def test_keys_list_fields_and_success_once(res):
    keys = list(res.keys())
    assert keys[:3] == ["x", "fun", "gap"]
    assert "success" in keys and "nit" in keys
    assert len(keys) == len(set(keys)) == len(res)
    d = dict(res)
    assert d.keys() == res.keys()
    assert d["fun"] == res.fun and d["success"] == res.success


def test_scipy_counter_names_are_aliases(res):
    assert res.nfev == res["nfev"] == res.n_function_calls
    assert res.njev == res["njev"] == res.n_gradient_calls
    # aliases are not keys: dict(res) holds each counter once
    assert "nfev" not in res and "nfev" not in res.keys() and "njev" not in list(res)
    assert res.n_gradient_calls > 0


def test_non_string_is_not_a_key(res):
    assert 0 not in res
    assert ["x"] not in res

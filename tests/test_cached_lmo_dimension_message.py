"""A CachedLMO around a domain of no fixed size, reused at another size, says so.

The vertex keys (``("e", 0)``) name a vertex of every dimension, so the cache cannot
hold two shapes: the error names CachedLMO, both shapes and ``clear()`` (the
ActiveSet's own "atom of shape (7,) added to a set of shape (5,)" named neither, and a
vertex whose key was cached at the other size was not even refused).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import CachedLMO, ShapeError

MESSAGE = re.escape("but the cache holds vertices of shape (5,)") + ".*" + re.escape("clear()")


def _cache_of_five() -> CachedLMO:
    lmo = CachedLMO(fw.ProbabilitySimplex())
    fw.frank_wolfe(fw.LeastSquares(np.eye(5), np.arange(5.0)), lmo, x0=np.full(5, 0.2),
                   lazy=True, max_iter=10)
    assert len(lmo) > 0
    return lmo


def test_a_call_at_another_size_names_the_cache_and_clear():
    lmo = _cache_of_five()
    d = np.zeros(7)
    d[6] = -1.0  # a vertex the cache has not seen
    with pytest.raises(ShapeError, match=r"CachedLMO: a vertex of shape \(7,\), " + MESSAGE):
        lmo(d)
    d = np.zeros(7)
    d[0] = -1.0  # ("e", 0): the key of a cached vertex of shape (5,)
    with pytest.raises(ShapeError, match=r"CachedLMO: a vertex of shape \(7,\), " + MESSAGE):
        lmo(d)
    with pytest.raises(ShapeError, match=r"CachedLMO: a direction of shape \(7,\), " + MESSAGE):
        lmo.best_cached(np.ones(7))
    with pytest.raises(ShapeError, match=MESSAGE):
        lmo.initial_point((7,))


def test_a_solve_at_another_size_names_the_cache_and_clear():
    lmo = _cache_of_five()
    objective = fw.LeastSquares(np.eye(7), np.arange(7.0))
    with pytest.raises(ShapeError, match="CachedLMO: .*" + MESSAGE):
        fw.frank_wolfe(objective, lmo, x0=np.full(7, 1 / 7), lazy=True, max_iter=10)
    lmo.clear()  # as the message says: the cache then serves the new size
    res = fw.frank_wolfe(objective, lmo, x0=np.full(7, 1 / 7), lazy=True, max_iter=10)
    assert res.x.shape == (7,)
    atom, _ = lmo.best_cached(np.ones(7))
    assert atom is not None and atom.shape == (7,)


def test_the_same_size_is_served_as_before():
    lmo = _cache_of_five()
    n = lmo.n_calls
    v = lmo(np.array([0.0, 0.0, -1.0, 0.0, 0.0]))
    assert v.key == ("e", 2) and lmo.n_calls == n + 1
    atom, value = lmo.best_cached(np.array([3.0, 2.0, -1.0, 1.0, 4.0]))
    assert atom is not None and atom.shape == (5,) and value <= -1.0

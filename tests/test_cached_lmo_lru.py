"""CachedLMO as a least-recently-used store: a reference model (an OrderedDict LRU) gives
the keys kept after each call.  Belongs in tests/test_lazy.py."""

from collections import OrderedDict

import numpy as np

from frankwolfe import CachedLMO, ProbabilitySimplex


def _e(i, n=5):
    d = np.ones(n)
    d[i] = -1.0
    return d


def test_best_cached_counts_as_a_use():
    # cache of 2: v0, v1 cached; best_cached answers v0 (a use); v2 then evicts the least
    # recently used, v1 -- the reference LRU model below says which keys remain
    n = 5
    lmo = CachedLMO(ProbabilitySimplex(dim=n), cache_size=2)
    ref: OrderedDict = OrderedDict()

    def use(key):
        ref[key] = None
        ref.move_to_end(key)
        while len(ref) > 2:
            ref.popitem(last=False)

    v0 = lmo(_e(0, n))
    use(v0.key)
    v1 = lmo(_e(1, n))
    use(v1.key)
    atom, score = lmo.best_cached(_e(0, n))
    assert atom.key == v0.key and score == -1.0
    use(atom.key)
    v2 = lmo(_e(2, n))
    use(v2.key)
    assert set(ref) == {v0.key, v2.key}
    atom, score = lmo.best_cached(_e(0, n))
    assert atom.key == v0.key and score == -1.0  # v0 was kept
    atom, score = lmo.best_cached(_e(1, n))
    assert atom.key != v1.key and score == 1.0  # v1 was evicted


def test_clear_forgets_every_vertex():
    n = 4
    lmo = CachedLMO(ProbabilitySimplex(dim=n))
    for i in range(n):
        lmo(_e(i, n))
    lmo.clear()
    assert len(lmo) == 0
    assert lmo.best_cached(_e(0, n)) == (None, np.inf)
    lmo(_e(2, n))  # one vertex cached again: the best cached for any direction is it
    atom, score = lmo.best_cached(_e(0, n))
    np.testing.assert_array_equal(atom.to_dense(), np.eye(n)[2])
    assert score == 1.0


def test_a_repeated_vertex_counts_as_a_use():
    n = 5
    lmo = CachedLMO(ProbabilitySimplex(dim=n), cache_size=2)
    v0 = lmo(_e(0, n))
    lmo(_e(1, n))
    lmo(_e(0, n))  # v0 again: now the most recent
    lmo(_e(2, n))  # evicts v1
    atom, score = lmo.best_cached(_e(0, n))
    assert atom.key == v0.key and score == -1.0

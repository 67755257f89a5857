"""SubsetOracle.sample_candidates draws among the candidates NOT in the active set (as
documented), distinct, as many as remain.  Belongs in tests/test_lmo_subset_oracle.py;
the answer is plain set arithmetic."""

import numpy as np
import pytest

from frankwolfe import Box, L1Ball


def _l1_vertex(lmo, n, i, sign):
    d = np.zeros(n)
    d[i] = -sign
    return lmo(d)


@pytest.mark.parametrize("size", [1, 3, 5, 20])
def test_l1_candidates_avoid_the_active_vertices(size):
    n = 10
    lmo = L1Ball(dim=n)
    active = [_l1_vertex(lmo, n, i, s) for i, s in [(0, 1), (3, -1), (4, 1), (7, 1), (9, -1)]]
    taken = {0, 3, 4, 7, 9}
    for seed in range(20):
        c = np.asarray(lmo.sample_candidates((n,), size, np.random.default_rng(seed), active))
        assert len(set(c.tolist())) == c.size
        assert not (set(c.tolist()) & taken)
        assert c.size == min(size, n - len(taken))


def test_box_candidates_avoid_the_active_vertices():
    n = 3
    box = Box(0.0, 1.0, dim=n)
    active = [box(np.array(d, dtype=float)) for d in ([1, 1, 1], [-1, 1, 1], [-1, -1, 1])]
    for seed in range(20):
        B = box.sample_candidates((n,), 8, np.random.default_rng(seed), active)
        pats = {tuple(r) for r in np.asarray(B).tolist()}
        assert len(pats) == len(B) == 2 ** n - len(active)
        for a in active:
            assert tuple((a.to_dense() == 1.0).tolist()) not in pats

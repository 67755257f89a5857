"""TabuSearch's documented tabu rule: after an exchange both units are barred from the
locations they just left (belongs with tests/test_qap.py).  Independent answer: the
exchange read off the permutations before and after one iteration."""

import numpy as np

from frankwolfe.applications.matching import TabuSearch


def test_one_iteration_bars_both_units_from_their_old_locations():
    rng = np.random.default_rng(3)
    for seed in range(10):
        n = 8
        A = rng.integers(0, 10, (n, n)).astype(float)
        B = rng.integers(0, 10, (n, n)).astype(float)
        p0 = rng.permutation(n)
        ts = TabuSearch(A, B, p0, random_state=seed)
        before = ts.permutation.copy()
        ts.run(1)
        moved = np.flatnonzero(ts.permutation != before)
        assert moved.size == 2  # one exchange
        r, s = moved
        assert ts.permutation[r] == before[s] and ts.permutation[s] == before[r]
        # barred from returning: the tenure of (unit, old location) reaches this iteration
        assert ts.tabu[r, before[r]] >= ts.n_iter and ts.tabu[s, before[s]] >= ts.n_iter
        # the locations they moved to are free (no other entry was set)
        assert ts.tabu[r, ts.permutation[r]] == 0 and ts.tabu[s, ts.permutation[s]] == 0

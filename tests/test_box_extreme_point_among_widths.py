"""Box.extreme_point_among with unequal widths: the best sampled vertex by brute force.
Belongs in tests/test_lmo_subset_oracle.py."""

import numpy as np

from frankwolfe import Box


def test_best_candidate_with_unequal_widths():
    rng = np.random.default_rng(5)
    lo = np.array([0.0, -5.0, 1.0, 2.0])
    up = np.array([0.1, 5.0, 1.5, 12.0])
    box = Box(lo, up)
    for _ in range(30):
        g = rng.standard_normal(4)
        B = rng.random((6, 4)) < 0.5
        verts = np.where(B, up, lo)
        best = int(np.argmin(verts @ g))
        a = box.extreme_point_among(g, B)
        np.testing.assert_array_equal(a.to_dense(), verts[best])

"""FlowPolytope reads an edge list of numbers as node indices: one at or past 2**53 (no
longer whole numbers one apart as floats; past 2**63 the cast to int64 wrapped around) is
refused by name instead of a negative index from a wrapped cast."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw


@pytest.mark.parametrize("edges", [[(0, 1e20)], [(0.0, 2.0 ** 53)], [(0, 10 ** 20)],
                                   np.array([(0.0, 1e20)])])
def test_a_node_index_past_2_to_the_53_is_refused(edges):
    with pytest.raises(ValueError, match=r"node indices must be below 2\*\*53"):
        fw.FlowPolytope(edges, source=0, sink=1)


def test_whole_float_indices_below_it_are_indices():
    flow = fw.FlowPolytope(np.array([(0.0, 1.0), (1.0, 2.0), (0.0, 2.0)]), source=0, sink=2)
    # the cheaper of the two paths 0 -> 2, by hand
    np.testing.assert_array_equal(flow(np.array([1.0, 1.0, 3.0])).to_dense(), [1.0, 1.0, 0.0])


def test_a_huge_negative_index_is_named_as_negative():
    with pytest.raises(ValueError, match="must be >= 0, got -1152921504606846976"):
        fw.FlowPolytope([(0, -2 ** 60)], source=0, sink=1)

"""Volume-delay parameter bounds at their edges (belongs with tests/test_traffic_vdf.py).

The conical function's g = (2 alpha - 1) / (2 alpha - 2) is infinite at alpha = 1, so the
documented bound alpha > 1 is strict; INRETS needs alpha < 1 (at alpha = 1 the cost is
flat, t0, below capacity, and the formula's c = 1.1 (1 - alpha) vanishes)."""

import numpy as np
import pytest

from frankwolfe.applications.traffic import Network, VolumeDelayError


def _net(kind, b, power=0.0):
    return Network(init_node=np.array([0]), term_node=np.array([1]),
                   free_flow_time=np.array([1.0]), capacity=np.array([10.0]),
                   b=np.array([b]), power=np.array([power]), demand=np.zeros((2, 2)), vdf=kind)


def test_conical_alpha_one_is_refused():
    with pytest.raises(VolumeDelayError, match="conical"):
        _net("conical", 1.0)
    # just above the bound the costs are finite (g finite)
    net = _net("conical", 1.0 + 1e-6)
    assert np.isfinite(net.link_costs(np.array([5.0]))).all()


def test_inrets_alpha_one_is_refused():
    with pytest.raises(VolumeDelayError, match="inrets"):
        _net("inrets", 1.0)

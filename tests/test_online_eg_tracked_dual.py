"""online-EG's in-run dual value (history) against the cvxpy optimum."""
import numpy as np
from test_extragradient_optimum import _primal_optimum

from frankwolfe.applications.structured_svm import ChainModel, make_chain
from frankwolfe.applications.structured_svm.solvers import online_eg


def test_tracked_dual_stays_below_and_near_the_optimum():
    X, Y = make_chain(6, n_states=2, n_features=3, length=(3, 4), random_state=0)
    model, lam = ChainModel(2, 3), 0.1
    pstar = _primal_optimum(model, X, Y, lam)
    res = online_eg(model, X, Y, lam, max_passes=200, random_state=0)
    assert -res.fun <= pstar + 1e-6 and pstar + res.fun < 2e-2
    tracked = -np.asarray(res.history["fun"], dtype=float)
    assert np.all(tracked <= pstar + 1e-6)  # every row is a dual value D(z_k)
    assert pstar - tracked[-2] < 2e-2

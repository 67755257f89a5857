"""The dual extragradient's ``averaging="uniform"`` point is the mean of the iterates
``u_t`` weighted by their steps ``eta_t`` (the average the method's bound
``D(x, u_hat) / sum_t eta_t`` holds for), not their plain mean: on a run of the adaptive
step rule, whose steps vary, the two differ."""

import numpy as np

from frankwolfe import RunOptions
from frankwolfe.applications.structured_svm import ChainModel, make_chain
from frankwolfe.applications.structured_svm.solvers.extragradient import dual_extragradient


def test_uniform_average_is_weighted_by_the_steps():
    X, Y = make_chain(8, n_states=3, n_features=4, random_state=1)
    model = ChainModel(3, 4)
    seen: list[tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray]] = []

    def record(state):
        if state.k >= 1:  # after each accepted step: its u_t, eta_t and the average so far
            info = state.info
            # the engine fills its arrays in place: copy them
            seen.append((np.array(info["w_last"]), np.array(info["mu_last"]),
                         float(state.step_size), np.array(state.x),
                         np.array(info["point_bar"].mu)))

    res = dual_extragradient(model, X, Y, 0.1, max_passes=20, averaging="uniform",
                             run_options=RunOptions(callback=record))
    assert res.nit == len(seen) >= 5
    w = np.array([s[0] for s in seen])
    mu = np.array([s[1] for s in seen])
    eta = np.array([s[2] for s in seen])
    assert eta.max() > 1.5 * eta.min()  # the adaptive rule moved the step
    for t in range(1, len(seen) + 1):  # the average after every step, by hand
        wt = eta[:t] / eta[:t].sum()
        np.testing.assert_allclose(seen[t - 1][3], wt @ w[:t], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(seen[t - 1][4], np.tensordot(wt, mu[:t], axes=1),
                                   rtol=1e-12, atol=1e-14)
    weighted = (eta / eta.sum()) @ w
    np.testing.assert_allclose(res.x, weighted, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.extra["w"], weighted, rtol=1e-12, atol=1e-14)
    # the plain mean of the same iterates is far from it, so a plain mean would fail above
    plain = w.mean(axis=0)
    assert np.abs(plain - weighted).max() > 1e-2 * np.abs(weighted).max()

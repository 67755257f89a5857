"""Block steps of BCFW and the block view the step-size objects read."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe import (
    Armijo,
    BlockStep,
    ExactStep,
    FWStep,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    ShortStep,
    block_coordinate_frank_wolfe,
)
from frankwolfe.algorithms.block_steps import BlockDirection, BlockView


def projection_problem(n: int = 10, m: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.dirichlet(np.full(m, 3.0), size=n).ravel()
    f = QuadraticObjective(2.0 * np.eye(n * m), -2.0 * y, constant=float(y @ y))
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    return f, dom, y  # f = ||x - y||^2, minimizer y


def test_exact_step_on_block_view_is_the_closed_form():
    f, _, y = projection_problem()
    x = np.full(y.size, 1.0 / 3.0)
    idx = np.arange(3, 6)
    view = BlockView(f, x)
    g = f.partial_gradient(x, idx)
    view.at(idx, slice(3, 6), g)
    d = BlockDirection()
    d.d = np.array([1.0, -0.5, -0.5]) - x[idx] + x[idx]  # any direction on the block
    slope = float(g @ d.d)
    gamma = ExactStep()(0, view, d, slope, np.inf)
    # min_t ||x + t E d - y||^2: t = <y - x, E d> / ||d||^2
    assert gamma == pytest.approx(float((y[idx] - x[idx]) @ d.d) / float(d.d @ d.d), rel=1e-13)
    # trial points leave the iterate exactly as it was
    before = x.copy()
    view.trial_value(d, 0.3)
    view.trial_gradient(d, 0.7)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("rule", [ExactStep(), ShortStep(), "adaptive"])
@pytest.mark.parametrize("step_type", ["fw", "away", "pairwise"])
def test_step_rules_on_block_steps_reach_closed_form_minimizer(rule, step_type):
    f, dom, y = projection_problem()
    res = block_coordinate_frank_wolfe(f, dom, block_step=step_type, step_size=rule, tol=1e-6,
                                       max_iter=3000, random_state=0)
    name = {"short": "ShortStep", "adaptive": "Adaptive"}.get(rule, type(rule).__name__)
    assert res.success and res.extra["step_size"].startswith(name)
    assert -1e-12 <= res.fun <= res.gap + 1e-12
    np.testing.assert_allclose(res.x, y, atol=1e-2)


def test_armijo_backtracks_on_the_block_view():
    f, dom, y = projection_problem(seed=3)
    res = block_coordinate_frank_wolfe(f, dom, block_step="pairwise", step_size=Armijo(),
                                       tol=1e-6, max_iter=3000, random_state=0)
    assert res.success
    assert -1e-12 <= res.fun <= res.gap + 1e-12


class DampedFW(BlockStep):
    """A user's block step: the FW direction, at most half a step."""

    name = "damped"

    def direction(self, z, g, d_fw, gap, atoms, weights):
        return "fw", -1, d_fw, 0.5


def test_user_block_step_runs_in_python_engine():
    f, dom, y = projection_problem(seed=2)
    res = block_coordinate_frank_wolfe(f, dom, block_step=DampedFW(), tol=1e-8,
                                       max_iter=3000, random_state=0)
    assert res.success and res.extra["engine"] == "python"
    assert res.extra["block_step"] == "damped"
    np.testing.assert_allclose(res.x, y, atol=1e-3)


def test_compiled_availability_follows_the_strategies():
    f, dom, _ = projection_problem()
    import frankwolfe as fw

    with fw.debug(False):
        ok = block_coordinate_frank_wolfe(f, dom, max_iter=2, random_state=0)
        assert ok.extra["engine"] == "compiled"
        assert isinstance(FWStep(), BlockStep)
        with pytest.raises(ValueError, match="no compiled form"):
            block_coordinate_frank_wolfe(f, dom, step_size="short", compiled=True)
        with pytest.raises(ValueError, match="picks block by block"):
            block_coordinate_frank_wolfe(f, dom, block_order="max_gap", compiled=True)


def test_block_store_keeps_a_convex_combination_when_residues_are_zeroed():
    # a weight below the residue threshold is zeroed; the rest must be renormalized, or a
    # later away step that drops the dominant atom leaves no active atom at all
    from frankwolfe.algorithms.bcfw.store import BlockAtomStore
    from frankwolfe.algorithms.block_steps import AwayStep

    store = BlockAtomStore(np.array([2]), max_size=10)
    store.add(0, "a", np.array([1.0, 0.0]), 1.0 - 4e-16, 0)
    store.add(0, "b", np.array([0.0, 1.0]), 4e-16, 0)
    store.move(0, "fw", 0, -1, 1e-3, 1.0)  # scales b's weight under the threshold
    W = store.rows(0)[1]
    assert W[1] == 0.0 and W[0] == 1.0  # the one remaining atom carries the whole block
    # so no away step can drop it (an away gap above the FW gap notwithstanding)
    kind, row, d, gmax = AwayStep().direction(np.array([1.0, 0.0]), np.array([1.0, 0.0]),
                                              np.zeros(2), -1.0, *store.rows(0))
    assert kind == "fw"

"""Clipping of line searches to gamma_max."""
import numpy as np
import pytest
from lmo_reference import project_simplex

import frankwolfe as fw
from frankwolfe import (
    Direction,
    FunctionObjective,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    Secant,
    block_coordinate_frank_wolfe,
)


@pytest.mark.parametrize("compiled", [True, False])
def test_bcfw_exact_step_is_clipped_to_the_block(compiled):
    """Targets far outside the simplices: every exact line minimum is beyond gamma_max = 1.
    The answer is the blockwise projection of y (closed form), and x stays feasible."""
    y = np.array([10.0, -10.0, 0.2, 5.0, -3.0, 0.1])
    f = QuadraticObjective(np.eye(6), -y)  # 0.5 ||x||^2 - <y, x>
    dom = ProductDomain([ProbabilitySimplex(dim=3), ProbabilitySimplex(dim=3)])
    x0 = np.full(6, 1.0 / 3.0)
    with fw.debug(False):  # debug mode checks every answer in Python: no compiled pass
        res = block_coordinate_frank_wolfe(f, dom, x0=x0, step_size="exact", tol=1e-10,
                                           max_iter=200, compiled=compiled)
    if compiled:
        assert res.extra["engine"] == "compiled"
    ref = np.concatenate([project_simplex(y[:3]), project_simplex(y[3:])])
    assert np.all(res.x >= -1e-12)
    assert np.allclose(res.x.reshape(2, 3).sum(axis=1), 1.0, atol=1e-12)
    assert np.allclose(res.x, ref, atol=1e-8)


def test_secant_takes_gamma_max_when_the_line_still_descends_there():
    """phi(gamma) = f(x + gamma d) for a quadratic whose line minimum is beyond 1: the
    minimum over [0, 1] is gamma_max = 1 (closed form)."""
    y = np.array([10.0, -10.0, 0.0])
    f = FunctionObjective(lambda x: 0.5 * (x - y) @ (x - y), lambda x: x - y, shape=(3,))
    x0 = np.full(3, 1.0 / 3.0)
    tr = f.tracker(x0)
    v = ProbabilitySimplex()(tr.gradient())
    dd = v.to_dense() - x0
    slope = float((x0 - y) @ dd)
    assert -slope / (dd @ dd) > 1.0
    assert Secant()(0, tr, Direction.frank_wolfe(v), slope, 1.0) == 1.0

"""The bilinear tracker after set_point (SP-AFW's drift resync and decomposed starts)
matches L's closed-form gradients."""
import numpy as np

from frankwolfe import BilinearObjective
from frankwolfe.algorithms.saddle.adapter import _SaddleAdapter


def test_set_point_recomputes_the_products():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 4))
    L = BilinearObjective(M, mu_x=0.5, mu_y=0.25)
    tr = _SaddleAdapter(L, (3,), (4,)).tracker(np.r_[np.ones(3) / 3, np.ones(4) / 4])
    x, y = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(4))
    tr.set_point(np.r_[x, y])
    val, r = tr.value_and_gradient()
    assert np.isclose(val, x @ M @ y + 0.25 * x @ x - 0.125 * y @ y)
    assert np.allclose(r, np.r_[M @ y + 0.5 * x, -(M.T @ x - 0.25 * y)])

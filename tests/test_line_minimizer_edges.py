"""The exact line minimizer at the edges of its documented cases
."""
import numpy as np

from frankwolfe.objectives.line import line_minimizer


def test_concave_line_with_zero_slope_goes_to_gamma_max():
    # phi(g) = -g^2/2 on [0, gamma_max] is smallest at gamma_max: documented +inf
    assert line_minimizer(0.0, -1.0, 1.0, False, "f") == np.inf


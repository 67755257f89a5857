"""frankwolfe._scaling: the documented intervals, checked with exact power-of-two
comparisons.  Belongs in tests/test_lmo_direction_scale.py."""

import numpy as np
import pytest

from frankwolfe._scaling import LP_COST_EXPONENT, binary_exponent, lp_cost_shift


@pytest.mark.parametrize("top", [5e-324, 1e-310, 1e-300, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0,
                                 1023.0, 1024.0, 1e300, 1.7976931348623157e308])
def test_binary_exponent_brackets_the_value(top):
    e = binary_exponent(top)
    assert 0.5 <= np.ldexp(top, -e) < 1.0  # 2**(e - 1) <= top < 2**e, exactly


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_binary_exponent_of_zero_or_non_finite(bad):
    assert binary_exponent(bad) == 0


@pytest.mark.parametrize("scale", [1e-300, 1e-5, 0.7, 1.0, 512.0, 1e12, 1e300])
def test_lp_cost_shift_lands_in_the_range(scale):
    c = np.array([0.25, -1.0, 0.5]) * scale
    k = lp_cost_shift(c)
    top = float(np.max(np.abs(np.ldexp(c, k))))
    assert 2.0 ** (LP_COST_EXPONENT - 1) <= top < 2.0 ** LP_COST_EXPONENT
    assert lp_cost_shift(np.zeros(3)) == 0

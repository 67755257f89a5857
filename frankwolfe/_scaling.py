"""Exact rescaling by powers of two: solvers with absolute tolerances (HiGHS, Clarabel)
and products that may overflow see their data with its largest magnitude in a fixed
range, and the answers are scaled back exactly (barring subnormals), so that a problem
scaled by a power of two is solved bit for bit as the original."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["binary_exponent", "lp_cost_shift", "LP_COST_EXPONENT"]

#: an LP's costs are scaled to a largest magnitude in ``[2**9, 2**10)``: HiGHS's absolute
#: tolerances (1e-7 to 1e-10) counted costs below them as zero and those from 1e20 on as
#: infinite; at ``[0.5, 1)`` its answers near optimal vertices lost accuracy that the
#: certified gaps of the polytope tests saw (-1.2e-11 against a floor of -1e-12)
LP_COST_EXPONENT = 10


def binary_exponent(top: float) -> int:
    """``e`` with ``2**(e - 1) <= top < 2**e`` (:func:`math.frexp`'s exponent): ``top *
    2**-e`` lies in ``[0.5, 1)``; 0 for a zero or non-finite ``top``."""
    return math.frexp(top)[1] if top > 0.0 and math.isfinite(top) else 0


def lp_cost_shift(costs: np.ndarray) -> int:
    """The power of two ``k`` that brings ``max |costs|`` into ``[2**(LP_COST_EXPONENT -
    1), 2**LP_COST_EXPONENT)``: an LP is solved with costs ``costs * 2**k``
    (:func:`numpy.ldexp`) and its value and duals scaled back by ``2**-k``; 0 for zero (or
    non-finite) costs."""
    top = float(np.max(np.abs(costs), initial=0.0))
    return LP_COST_EXPONENT - binary_exponent(top) if top > 0.0 and math.isfinite(top) else 0

"""The exact line search of a quadratic: the minimizer of ``f(x + gamma d)`` over all
reals when ``f`` is quadratic along ``d``.

One rule for every objective with a closed-form :meth:`~frankwolfe.Objective.exact_step`
(the core's quadratic and least-squares objectives, their trackers, and the
applications' quadratics): a curvature within rounding of zero counts as zero, and
negative curvature is refused on a convex-declared objective and read as an unbounded
line on any other.
"""

from __future__ import annotations

import numpy as np

from ..errors import NonConvexError

__all__ = ["line_minimizer"]

_EPS = np.finfo(float).eps


def line_minimizer(slope: float, curvature: float, scale: float, convex: bool, who: str) -> float:
    """Unclipped minimizer of ``phi(gamma) = slope * gamma + curvature * gamma^2 / 2``.

    Parameters
    ----------
    slope : float
        ``<grad f(x), d>``.
    curvature : float
        ``d^T H d``.
    scale : float
        Size of the terms summed into ``curvature`` (``|d|^T |H d|``, and,
        where ``H d`` was itself summed from products that cancel, the size
        of those products, e.g. ``|d|^T |H| |d|``): a curvature within
        rounding of zero (``|curvature| <= 64 eps scale``) counts as zero.
        A caller may pass 0 when ``curvature > 0`` (a positive curvature is
        then taken as it is, and ``scale`` need not be computed).
    convex : bool
        Whether the objective is declared convex.
    who : str
        Name used in the error message.

    Returns
    -------
    float
        ``-slope / curvature`` for positive curvature.  For zero curvature
        the line is linear: ``+inf`` when ``slope < 0`` (the caller clips
        to ``gamma_max``), ``0`` when ``slope == 0``, ``-inf`` when
        ``slope > 0``.  For negative curvature on a non-convex-declared
        objective the line is unbounded below: ``+inf`` if ``slope <= 0``,
        ``-inf`` otherwise (on ``[0, gamma_max]`` a concave line with
        ``slope < 0`` is minimal at ``gamma_max``).

    Raises
    ------
    NonConvexError
        Negative curvature on an objective declared convex.

    Examples
    --------
    >>> from frankwolfe.objectives.line import line_minimizer
    >>> line_minimizer(-2.0, 4.0, 4.0, True, "f")
    0.5
    >>> line_minimizer(-1.0, 0.0, 1.0, True, "f")  # linear along d: clipped by the caller
    inf
    """
    if curvature > 64.0 * _EPS * scale:
        return -slope / curvature
    if curvature < -64.0 * _EPS * scale:
        if convex:
            raise NonConvexError(
                f"{who}: negative curvature d^T H d = {curvature:.6g} along the search direction "
                "on an objective declared convex (the Hessian is not positive semidefinite; pass "
                "convex=False if that is intended)"
            )
        return np.inf if slope <= 0 else -np.inf
    if slope < 0:
        return np.inf
    return 0.0 if slope == 0 else -np.inf

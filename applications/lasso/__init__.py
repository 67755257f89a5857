"""The l1-constrained lasso, solved with the Frank-Wolfe family.

Problem::

    min_x  1/2 ||A x - b||^2   s.t.  ||x||_1 <= radius

on top of :class:`frankwolfe.LeastSquares` (dense or scipy.sparse ``A``;
cached products ``A e_i`` make an iteration O(m + n)) and
:class:`frankwolfe.L1Ball` (vertices ``+-radius e_i``, so an active set is
a signed support).

* :func:`solve_lasso` - one problem, by any method of :func:`frankwolfe.minimize`
  that runs on an l1 ball, under the core's names (``"fw"``, ``"away"``,
  ``"pairwise"``, ``"rafw"``, ``"fcfw"``, ``"bcg"``, ``"bpcg"``, ``"cfw"``, ``"bfw"``,
  ``"compiled_pairwise"``: the core's compiled pairwise method with corrective rounds,
  :func:`frankwolfe.compiled_pairwise_frank_wolfe`; :func:`lasso_methods` lists them
  all), or ``"auto"`` (the default: ``"compiled_pairwise"`` for sparse and dense ``A``
  alike, ``"pairwise"`` where the compiled method cannot run: an option it does not
  take, an intercept's offset, or a warm start of more atoms than its corrective
  rounds track);
* :func:`lasso_path` - a regularization path over radii, each problem warm
  started from the previous solution's active set;
* :func:`penalty_from_radius`, :func:`radius_from_penalty`, :func:`alpha_max`
  - the correspondence with the penalized lasso of scikit-learn,
  ``min 1/(2m) ||A x - b||^2 + alpha ||x||_1``: when its solution ``x_alpha``
  is unique, it solves the constrained problem with ``radius = ||x_alpha||_1``,
  and conversely ``alpha = ||A^T (b - A x)||_inf / m`` at the constrained
  solution (the constraint's Lagrange multiplier over ``m``);
* :class:`ConstrainedLasso` - a scikit-learn style estimator.

The estimator is imported on first access: its module needs scikit-learn, which
``import frankwolfe.applications.lasso`` does not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load as _load
from .._lazy import names as _names
from .solve import (
    LassoPath,
    alpha_max,
    lasso_methods,
    lasso_path,
    penalty_from_radius,
    radius_from_penalty,
    solve_lasso,
    warm_start,
)

if TYPE_CHECKING:  # the lazy name below, as type checkers and documentation tools see it
    from .estimator import ConstrainedLasso

__all__ = [
    "lasso_methods",
    "solve_lasso",
    "lasso_path",
    "LassoPath",
    "warm_start",
    "penalty_from_radius",
    "radius_from_penalty",
    "alpha_max",
    "ConstrainedLasso",
]

#: names whose modules import scikit-learn, imported on first access
_LAZY = {"ConstrainedLasso": ".estimator"}


def __getattr__(name: str) -> Any:
    return _load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return _names(globals(), _LAZY)

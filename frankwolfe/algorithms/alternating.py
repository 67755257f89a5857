"""Alternating linear minimization: optimization over an intersection of sets given by
their oracles, through block-coordinate FW on their product."""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Unpack

import numpy as np

from .._numbers import as_real, is_real, kind_of
from .._warnings import warn_user
from ..lmo.base import LMO, declared_shape
from ..lmo.product import ProductDomain
from ..objectives.base import Objective
from ..objectives.line import line_minimizer
from ..options import RunKeywords, solver
from ..registry import lookup, register
from ..result import Result

__all__ = ["alternating_linear_minimization"]


class _Penalized(Objective):
    """``F(x_1..x_k) = (1/k) sum_i f(x_i) + (penalty / 2k) sum_i ||x_i - mean||^2`` on the
    flat concatenation of the copies (``f = 0`` when no objective is given)."""

    def __init__(self, objective: Objective | None, k: int, d: int, penalty: float) -> None:
        self.f, self.k, self.d, self.penalty = objective, k, d, penalty
        self.shape = (k * d,)
        self.convex = True if objective is None else objective.convex

    def _blocks(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=float).reshape(self.k, self.d)

    def _f_shape(self, xi: np.ndarray) -> np.ndarray:
        shape = self.f.shape if self.f is not None and self.f.shape is not None else None
        return xi.reshape(shape) if shape is not None else xi

    def value(self, x: np.ndarray) -> float:
        X = self._blocks(x)
        spread = X - X.mean(axis=0)
        val = 0.5 * self.penalty * float(np.sum(spread * spread)) / self.k
        if self.f is not None:
            val += sum(float(self.f.value(self._f_shape(xi))) for xi in X) / self.k
        return val

    def gradient(self, x: np.ndarray) -> np.ndarray:
        X = self._blocks(x)
        G = self.penalty * (X - X.mean(axis=0)) / self.k
        if self.f is not None:
            for i, xi in enumerate(X):
                G[i] += np.asarray(self.f.gradient(self._f_shape(xi)), dtype=float).reshape(-1) \
                    / self.k
        return G.reshape(-1)

    @property
    def has_exact_step(self) -> bool:
        return self.f is None

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        # f = 0: F is the quadratic spread, exact along any direction; its curvature sums
        # non-negative terms, so it is its own rounding scale
        D = self._blocks(direction)
        spread = D - D.mean(axis=0)
        curv = self.penalty * float(np.sum(spread * spread)) / self.k
        return line_minimizer(float(np.vdot(gradient, direction)), curv, curv, self.convex,
                              "alternating_linear_minimization")


@register("alm", "alternating_linear_minimization")
@solver()
def alternating_linear_minimization(
    objective: Objective | None,
    domains: Sequence[LMO],
    x0: np.ndarray | None = None,
    *,
    penalty: float = 1.0,
    method: str = "bcfw",
    method_options: dict[str, Any] | None = None,
    random_state: Any = None,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize over the intersection ``C_1 ∩ ... ∩ C_k`` of sets given only by their
    oracles.

    Alternating linear minimization (Braun, Pokutta, Woodstock, 2022): one copy
    ``x_i in C_i`` per set, and a Frank-Wolfe method over the product minimizes

    ``F(x_1..x_k) = (1/k) sum_i f(x_i) + (penalty / 2k) sum_i ||x_i - mean||^2``,

    so each set is touched only through its own oracle; no LP over the intersection
    is needed.  With ``objective=None`` it is a feasibility method (von Neumann's
    alternating projections with oracles in place of projections): the spread goes
    to 0 when the intersection is not empty.  For ``f != 0`` the answer is the
    penalized problem's: a larger ``penalty`` pulls the copies together, at the cost
    of conditioning.

    Parameters
    ----------
    objective : Objective or None
        ``f``; ``None`` for the feasibility problem.
    domains : sequence of LMO
        The sets, each with the same dimension.
    x0 : ndarray, optional
        Start for every copy (feasible for each set); by default each set's vertex.
    penalty : float, default 1.0
        Weight of the spread term, positive.
    method : str, default "bcfw"
        The method run over the product (any name of
        :func:`~frankwolfe.available_methods`: ``"bcfw"``, ``"fw"``, ``"bpcg"``, ...).
        The run keywords mean what they mean to that method: with ``"bcfw"``,
        ``max_iter`` (and ``Result.nit``) counts passes, each of ``k`` block steps (one
        oracle call per set), not single steps (see
        :func:`~frankwolfe.block_coordinate_frank_wolfe`).  With ``verbose``, a line
        ``alm: ... run by <method>`` precedes that method's table.
    method_options : dict, optional
        More keywords of that method (``block_order``, ``step_size``, ...; the run
        keywords are this call's own, refused here); for ``"bcfw"`` the default
        ``block_step`` is ``"pairwise"``.
    random_state : int, numpy.random.Generator or None, optional
        The randomness of a method that draws (``"bcfw"``'s block order,
        ``"rafw"``); refused for one that draws nothing.

    Returns
    -------
    Result
        ``x`` is the mean of the copies (in the objective's shape); ``fun`` and the
        certified ``gap`` are those of the penalized problem ``F``.  ``extra["copies"]``
        holds the copies ``(k, d)``, ``extra["spread"]`` the largest distance of a
        copy to their mean (0 on the intersection), ``extra["objective_at_mean"]``
        ``f(x)``.  With ``objective=None``, ``extra["empty"]`` says whether the
        certificate proves the sets disjoint (the lower bound ``fun - gap`` of the
        spread term above 0; then also the message, and a ``UserWarning``).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Box, ProbabilitySimplex, alternating_linear_minimization
    >>> res = alternating_linear_minimization(
    ...     None, [ProbabilitySimplex(dim=4), Box(0.0, 0.3, dim=4)], tol=1e-10, max_iter=20000)
    >>> bool(res.extra["spread"] < 1e-4)
    True
    """
    # a single set is iterable to nothing that tuple() could name (an LMO, a number)
    if isinstance(domains, (LMO, str, bytes)) or not isinstance(domains, Iterable):
        raise TypeError(f"alternating_linear_minimization: `domains` must be a sequence of two "
                        f"or more LMOs, got {domains!r}")
    doms = tuple(domains)
    if len(doms) < 2 or not all(isinstance(c, LMO) for c in doms):
        raise TypeError(f"alternating_linear_minimization: `domains` must be two or more LMOs, "
                        f"got {domains!r}")
    if method_options is not None and not isinstance(method_options, Mapping):
        raise TypeError(f"alternating_linear_minimization: `method_options` must be a dict of "
                        f"keywords or None, got {method_options!r}")
    if objective is not None and not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective or None, got {kind_of(objective)}")
    if not is_real(penalty):
        raise TypeError(f"alternating_linear_minimization: `penalty` must be a real number, "
                        f"got {penalty!r}")
    if not (math.isfinite(as_real(penalty)) and penalty > 0):
        raise ValueError(f"alternating_linear_minimization: `penalty` must be positive and "
                         f"finite, got {penalty!r}")
    shapes = {s for s in map(declared_shape, doms) if s is not None}
    own = declared_shape(objective) if objective is not None else None
    if own is not None:
        shapes.add(own)
    if x0 is not None:
        shapes.add(np.shape(x0))
    sizes = {int(np.prod(s)) for s in shapes}
    if len(sizes) != 1:
        raise ValueError(f"alternating_linear_minimization: the sets, objective and x0 must "
                         f"share one dimension; got shapes {sorted(shapes)}"
                         if sizes else "alternating_linear_minimization: no set, objective "
                         "or x0 says the dimension; give the sets a `dim`")
    d, k = sizes.pop(), len(doms)
    # each copy in the shape the sets, objective or x0 state (a NuclearNormBall() without
    # its own shape answers matrices only: flat copies were refused)
    common = max(shapes, key=len) if shapes else (d,)
    product = ProductDomain(doms, [np.arange(i * d, (i + 1) * d).reshape(common)
                                   for i in range(k)])
    start = None if x0 is None else np.tile(np.asarray(x0, dtype=float).reshape(-1), k)
    F = _Penalized(objective, k, d, as_real(penalty))
    options = dict(method_options) if method_options is not None else {}
    shared = sorted(set(options) & set(run))
    if shared:
        raise ValueError(f"alternating_linear_minimization: give the run keywords {shared} "
                         "as keywords of this call, not in method_options")
    inner = lookup(method)
    if random_state is not None:
        if "random_state" in options:
            raise ValueError("alternating_linear_minimization: give random_state once, not "
                             "also in method_options")
        if "random_state" not in inspect.signature(inner).parameters:
            raise ValueError(f"alternating_linear_minimization: method {method!r} draws "
                             f"nothing; random_state={random_state!r} does not apply")
        options["random_state"] = random_state
    if inner is lookup("bcfw"):
        # block FW steps with an open-loop rule crawl at O(1/k) here; pairwise block steps
        # with a line search converge linearly on these products of polytopes
        options.setdefault("block_step", "pairwise")
    if run.get("verbose"):
        # the table below is the inner method's (its name heads it): say whose run it is
        print(f"alm: alternating linear minimization over {k} sets, run by {method}",
              file=sys.stdout, flush=True)
    res: Result = inner(F, product, start, **options, **run)
    copies = np.asarray(res.x, dtype=float).reshape(k, d)
    mean = copies.mean(axis=0)
    shape = own if own is not None else next(iter(shapes)) if shapes else (d,)
    extra = dict(res.extra, copies=copies,
                 spread=float(np.max(np.linalg.norm(copies - mean, axis=1))),
                 objective_at_mean=None if objective is None else
                 float(objective.value(mean.reshape(shape))))
    message = res.message
    if objective is None:
        # F >= fun - gap everywhere: above rounding, no point is in every set (a
        # "converged" feasibility run on an empty intersection said nothing of it)
        lower = res.fun - res.gap
        extra["empty"] = bool(np.isfinite(lower) and lower > 1e-12 * (1.0 + abs(res.fun)))
        if extra["empty"]:
            message = (f"{message}; the sets do not intersect: the spread term is at least "
                       f"{lower:.3g} > 0 everywhere (certified)")
            warn_user(f"alternating_linear_minimization: the sets do not intersect (the "
                          f"spread term is at least {lower:.3g} everywhere); x is the mean of "
                          "the nearest copies", UserWarning)
    return dataclasses.replace(res, x=mean.reshape(shape), extra=extra, message=message,
                               method="alm")

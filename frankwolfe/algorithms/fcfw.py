"""Fully corrective Frank-Wolfe (FCFW).

After each Frank-Wolfe vertex, the iterate is re-optimized over the convex
hull of all active atoms (Holloway 1974; Lacoste-Julien and Jaggi, NeurIPS
2015).  On the shared loop this is one step along ``d = x_c - x`` with
``x_c`` the corrective minimizer, so the step rule, the certificate and the
convexity check stay those of every other variant; with the default exact
line search the step is ``gamma = 1``, i.e. ``x`` becomes ``x_c``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..lmo.base import LMO
from ..monitor import IterationState
from ..objectives.base import Objective, Tracker
from ..result import Result
from ..step_size import StepSize
from .active_variant import ActiveSetVariant, split_start
from .corrective import GramModel, cvxpy_weights, has_gram_structure, simplex_qp
from .loop import run_frank_wolfe

__all__ = ["fully_corrective_frank_wolfe"]

#: the exact QP is used (corrective="auto") up to this many active atoms
_QP_MAX_ATOMS = 3000
#: cvxpy weights below this fraction of the largest are zero (interior-point residue)
_CVXPY_ZERO = 1e-9

_CORRECTIVE = ("auto", "qp", "cvxpy")


class _FullyCorrective(ActiveSetVariant):
    name = "fully_corrective_frank_wolfe"

    def __init__(self, warm: ActiveSet | None, resum_every: int, sparsify_tol: float,
                 corrective: str, cvxpy_solver: str | None,
                 cvxpy_options: dict[str, Any] | None) -> None:
        super().__init__(warm, resum_every, sparsify_tol)
        if corrective not in _CORRECTIVE:
            raise ValueError(f"`corrective` must be one of {_CORRECTIVE}, got {corrective!r}")
        self.corrective = corrective
        self.cvxpy_solver = cvxpy_solver
        self.cvxpy_options = dict(cvxpy_options or {})
        self.counts.update({"n_corrective_qp": 0, "n_corrective_cvxpy": 0,
                            "n_corrective_failures": 0, "n_qp_iterations": 0})

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        obj = tracker.objective
        structured = has_gram_structure(obj, tracker)
        has_cvxpy = callable(getattr(obj, "to_cvxpy", None))
        if self.corrective == "qp" and not structured:
            raise TypeError(
                f"corrective='qp' needs a LeastSquares or QuadraticObjective, got "
                f"{type(obj).__name__}; use corrective='cvxpy' with an objective that "
                "implements to_cvxpy(x_expression)"
            )
        if self.corrective == "cvxpy" or (self.corrective == "auto" and not structured):
            if not has_cvxpy:
                raise TypeError(
                    f"fully_corrective_frank_wolfe: {type(obj).__name__} has no to_cvxpy(x) "
                    "method, and only LeastSquares / QuadraticObjective have the exact QP; "
                    "implement to_cvxpy(x_expression) returning the cvxpy expression of f"
                )
        self.model = GramModel(obj, tracker) if structured else None

    def _use_qp(self, k: int) -> bool:
        if self.model is None or self.corrective == "cvxpy":
            return False
        # the QP costs O(k^3) per solve and has no setup; cvxpy costs milliseconds of
        # setup at any size, so the QP is cheaper until k^3 dwarfs that
        return self.corrective == "qp" or k <= _QP_MAX_ATOMS or not callable(
            getattr(self.tracker.objective, "to_cvxpy", None))

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        S = self.active
        atoms = S.atoms
        w0 = S.weights
        if v.key not in S:
            atoms.append(v)
            w0 = np.append(w0, 0.0)
        if self._use_qp(len(atoms)):
            rows = self.model.indices(atoms)
            G, lin = self.model.submodel(rows)
            w, it = simplex_qp(G, lin, w0)
            self.counts["n_corrective_qp"] += 1
            self.counts["n_qp_iterations"] += it
        else:
            w = cvxpy_weights(tracker.objective, atoms, tracker.x.shape, self.cvxpy_solver,
                              **self.cvxpy_options)
            self.counts["n_corrective_cvxpy"] += 1
            if w is None:  # fall back to a plain Frank-Wolfe step
                self.counts["n_corrective_failures"] += 1
                return self.fw_step(v)
            w[w < _CVXPY_ZERO * w.max()] = 0.0
            w /= w.sum()
        keep = np.flatnonzero(w > 0)
        terms = tuple((float(w[i]), atoms[i]) for i in keep)
        return Direction(-1.0, terms), 1.0, ("corrective", atoms, w0, w)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        if info[0] != "corrective":
            super().after_step(direction, gamma, info)
            return
        _, atoms, w_old, w_new = info
        # x moved to (1 - gamma) x + gamma x_c: the weights move alike
        w = w_new if gamma >= 1.0 else (1.0 - gamma) * w_old + gamma * w_new
        keep = np.flatnonzero(w > 0)
        if keep.size == 0:  # gamma = 0 on a lone new atom: nothing moved
            keep = np.flatnonzero(w_old > 0)
            w = w_old
        self.active = ActiveSet([atoms[i] for i in keep], w[keep] / w[keep].sum(), keep_x=False)
        self.counts["n_drop_steps"] += int(np.count_nonzero((w_old > 0) & ~(w > 0)))
        self.counts["n_fw_steps"] += 1
        if self.model is not None:
            self.model.prune({a.key for a in self.active.atoms})
        self.n_steps += 1
        if self.n_steps % self.resum_every == 0:
            self.maintain()


def fully_corrective_frank_wolfe(
    objective: Objective,
    lmo: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    corrective: str = "auto",
    cvxpy_solver: str | None = None,
    cvxpy_options: dict[str, Any] | None = None,
    step_size: str | StepSize | None = None,
    tol: float = 1e-6,
    max_iter: int = 1000,
    time_limit: float | None = None,
    callback: Callable[[IterationState], Any] | None = None,
    verbose: bool | int = False,
    history_every: int = 1,
    progress: bool = False,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
) -> Result:
    """Minimize a smooth convex function with fully corrective Frank-Wolfe.

    Each iteration adds the Frank-Wolfe vertex ``v = LMO(grad f(x))`` to the
    active set and re-solves ``min f(sum_a w_a a)`` over the weights ``w``
    on the simplex of the active atoms; atoms whose weight is zero are
    dropped.  Few outer iterations (each one the price of a small QP), which
    pays off when the oracle or the gradient is expensive.

    Parameters
    ----------
    objective : Objective
        ``LeastSquares`` or ``QuadraticObjective`` (exact corrective QP from
        cached per-atom products), or any objective implementing
        ``to_cvxpy(x_expression)``.
    lmo : LMO
        Linear minimization oracle of the domain.
    x0 : Atom, ActiveSet or ndarray, optional
        As in :func:`~frankwolfe.away_step_frank_wolfe`.
    corrective : {"auto", "qp", "cvxpy"}, default "auto"
        The corrective solver.  ``"qp"``: the exact active-set QP on the
        Gram matrix of the atoms (:func:`~frankwolfe.algorithms.corrective.simplex_qp`),
        O(k^3) per solve for k atoms and no pass over the data.  ``"cvxpy"``:
        ``objective.to_cvxpy`` over the hull (accurate to the solver's
        tolerance, about 1e-8).  ``"auto"``: the QP for quadratic
        objectives up to 3000 active atoms, cvxpy otherwise.
    cvxpy_solver : str, optional
        cvxpy solver name (default: cvxpy's choice).
    cvxpy_options : dict, optional
        Extra keyword arguments of ``Problem.solve``.
    step_size : str or StepSize, optional
        Rule along ``d = x_c - x`` (``gamma_max = 1``); the default exact
        line search gives ``gamma = 1``.
    tol, max_iter, time_limit, callback, verbose, history_every, progress
        As in :func:`~frankwolfe.frank_wolfe`.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``active_set`` is the final :class:`~frankwolfe.ActiveSet`; ``extra``
        counts ``n_corrective_qp``, ``n_corrective_cvxpy``,
        ``n_corrective_failures`` (cvxpy failures, replaced by a Frank-Wolfe
        step), ``n_qp_iterations`` and ``n_drop_steps``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import fully_corrective_frank_wolfe, QuadraticObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = QuadraticObjective(np.eye(3), -y)
    >>> res = fully_corrective_frank_wolfe(f, ProbabilitySimplex(dim=3), tol=1e-12)
    >>> np.round(res.x, 6), res.nit
    (array([0.6, 0.4, 0. ]), 1)
    """
    warm, start = split_start(x0)
    variant = _FullyCorrective(warm, resum_every, sparsify_tol, corrective, cvxpy_solver,
                               cvxpy_options)
    return run_frank_wolfe(
        objective, lmo, variant, start,
        step_size=step_size, tol=tol, max_iter=max_iter, time_limit=time_limit,
        callback=callback, verbose=verbose, history_every=history_every, progress=progress,
    )

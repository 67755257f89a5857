"""Quadratic assignment by Frank-Wolfe on the Birkhoff polytope (FAQ), with restarts, 2-opt
and a robust tabu search polish for time budgets."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from frankwolfe._numbers import check_flag, check_real, check_whole
from frankwolfe._random import as_generator
from frankwolfe._warnings import warn_user
from frankwolfe.active_set import ActiveSet
from frankwolfe.atoms import Atom
from frankwolfe.lmo.base import FEASIBILITY_TOL, feasibility_tolerance
from frankwolfe.lmo.matrix import Birkhoff
from frankwolfe.minimize import minimize
from frankwolfe.monitor import INTERRUPTS, IterationState
from frankwolfe.registry import available_methods
from frankwolfe.step_size import StepSize

from .doubly_stochastic import (
    barycenter,
    birkhoff_decomposition,
    check_doubly_stochastic,
    project_to_permutation,
    random_doubly_stochastic,
)
from .local_search import TabuSearch, two_opt
from .objective import QAPObjective, check_qap_matrices, qap_value

__all__ = ["solve_qap", "QAPResult", "QAPRun", "QAP_METHODS"]

#: relaxation solvers accepted by :func:`solve_qap` (when registered in the core)
QAP_METHODS = ("fw", "away", "pairwise")
_ACTIVE_SET_METHODS = ("away", "pairwise")
_LOCAL_SEARCH = ("auto", "2opt", "tabu", "none")
#: with a time limit and the tabu polish, the Frank-Wolfe runs get this share of the budget
_RELAX_SHARE = 0.2
#: tabu iterations per n when there is no time limit
_TABU_ITER_PER_N = 200


@dataclass
class QAPRun:
    """One Frank-Wolfe run of :func:`solve_qap` (the first start or a restart).

    Attributes
    ----------
    start : str
        ``"barycenter"``, ``"randomized"`` or ``"given"``.
    relaxed_fun : float
        Relaxed objective at the last iterate.
    gap : float
        Frank-Wolfe gap there (a stationarity measure: the relaxation is
        not convex).
    nit : int
        Frank-Wolfe iterations.
    status : str
        Why the run stopped.
    projected_fun : float
        Objective of the rounded permutation, before local search.
    fun : float
        Objective after local search.
    """

    start: str
    relaxed_fun: float
    gap: float
    nit: int
    status: str
    projected_fun: float
    fun: float


@dataclass
class QAPResult:
    """Result of :func:`solve_qap`.

    Attributes
    ----------
    permutation : ndarray of int
        The best permutation ``p`` found (0-based); the objective is
        ``sum_{i,j} A[i, j] * B[p(i), p(j)]`` (``P[i, p(i)] = 1``).
    fun : float
        Its objective.
    x : ndarray
        Relaxed (doubly stochastic) solution of the run that found it.
    relaxed_fun : float
        Relaxed objective at ``x``.
    runs : list of QAPRun
        Every run: the first from ``P0``, then the restarts.
    nit : int
        Frank-Wolfe iterations over all runs.
    time : float
        Wall time in seconds.
    method : str
        The relaxation solver.
    local_search : str
        The local search used (``"2opt"``, ``"tabu"`` or ``"none"``).
    tabu_iter : int
        Iterations of the tabu search polish (0 without it).
    """

    permutation: np.ndarray
    fun: float
    x: np.ndarray
    relaxed_fun: float
    runs: list[QAPRun] = field(default_factory=list)
    nit: int = 0
    time: float = 0.0
    method: str = "fw"
    local_search: str = "2opt"
    tabu_iter: int = 0

    @property
    def col_ind(self) -> np.ndarray:
        """Alias of :attr:`permutation` (the name used by scipy)."""
        return self.permutation

    @property
    def n_runs(self) -> int:
        """Number of Frank-Wolfe runs (1 + restarts done)."""
        return len(self.runs)

    def __repr__(self) -> str:
        return (f"QAPResult(fun={self.fun:.12g}, n={self.permutation.size}, "
                f"runs={self.n_runs}, nit={self.nit}, time={self.time:.3g}s, "
                f"method={self.method!r})")


def _as_active_set(P: np.ndarray) -> ActiveSet:
    """The start of an active-set method: ``P`` as a convex combination of permutations."""
    perms, weights = birkhoff_decomposition(P)
    n = P.shape[0]
    rows = np.arange(n, dtype=np.int64) * n
    atoms = [Atom.sparse(rows + p, np.ones(n), (n, n), key=("perm", tuple(p.tolist())))
             for p in perms]
    return ActiveSet(atoms, weights, keep_x=False)


def _relax_and_round(objective: QAPObjective, lmo: Birkhoff, P0: np.ndarray, start: str,
                     method: str, two_opt_polish: bool, project_iterates: bool, tol: float,
                     max_iter: int, time_limit: float | None, step_size: Any
                     ) -> tuple[QAPRun, np.ndarray, np.ndarray]:
    A, B = objective.A, objective.B
    best: dict[str, Any] = {"fun": np.inf, "perm": None}

    def consider(p: np.ndarray) -> None:
        val = qap_value(A, B, p)
        if val < best["fun"]:
            best["fun"], best["perm"] = val, p

    def round_iterate(state: IterationState) -> None:
        # Every iterate is rounded: the path passes near better permutations
        # than its end point (and through scipy's early-stopped FAQ iterate).
        consider(project_to_permutation(state.x))

    x0: Any = _as_active_set(P0) if method in _ACTIVE_SET_METHODS else P0
    res = minimize(objective, lmo, method=method, x0=x0, step_size=step_size, tol=tol,
                   max_iter=max_iter, time_limit=time_limit,
                   callback=round_iterate if project_iterates else None)
    final = project_to_permutation(res.x)
    consider(final)
    projected = best["fun"]
    candidates = [best["perm"]]
    if not np.array_equal(final, best["perm"]):
        candidates.append(final)
    if two_opt_polish:
        for p in candidates:
            consider(two_opt(A, B, p)[0])
    run = QAPRun(start=start, relaxed_fun=float(res.fun), gap=float(res.gap), nit=int(res.nit),
                 status=str(res.status), projected_fun=float(projected), fun=float(best["fun"]))
    return run, best["perm"], res.x


def solve_qap(
    A: ArrayLike,
    B: ArrayLike,
    *,
    method: str = "fw",
    P0: str | np.ndarray = "barycenter",
    restarts: int = 0,
    random_state: int | np.random.Generator | None = None,
    local_search: bool | str = "auto",
    tabu_iter: int | None = None,
    project_iterates: bool = True,
    tol: float = 1e-6,
    max_iter: int = 100,
    time_limit: float | None = None,
    step_size: str | StepSize | None = "exact",
) -> QAPResult:
    """Approximately solve the quadratic assignment problem ``min_p sum A[i,j] B[p(i),p(j)]``.

    The FAQ approach (Vogelstein et al., PLOS ONE 2015): relax permutation
    matrices to doubly stochastic ones, minimize the relaxed objective
    ``trace(A^T P B P^T)`` (:class:`QAPObjective`, indefinite in general)
    with a Frank-Wolfe method over :class:`~frankwolfe.Birkhoff` with exact
    line search, round to the nearest permutation (Hungarian method), then
    improve the permutation by 2-opt.  Optional restarts from random doubly
    stochastic starts keep the best permutation.  With a time budget, the
    best rounded permutation is polished by a robust tabu search (Taillard
    1991) for the rest of the budget.

    Parameters
    ----------
    A, B : (n, n) array_like
        Flow and distance matrices (real, square, any symmetry).
    method : str, default "fw"
        Relaxation solver: ``"fw"`` (Frank-Wolfe, as FAQ), ``"away"`` or
        ``"pairwise"`` (their start is decomposed into permutations).
    P0 : {"barycenter", "randomized"} or (n, n) ndarray, default "barycenter"
        Start of the first run: ``J/n``, a random ``(J/n + K)/2`` with ``K``
        a Sinkhorn-scaled uniform matrix (both as in
        ``scipy.optimize.quadratic_assignment``), or a doubly stochastic matrix.
    restarts : int, default 0
        Further runs, each from a random start ``(J/n + K)/2``.
    random_state : int or numpy.random.Generator, optional
        Seed or generator for the random starts (and the tabu search).
    local_search : {"auto", "2opt", "tabu", "none"} or bool, default "auto"
        ``"2opt"`` (or True): 2-opt on the rounded permutations of each run.
        ``"tabu"``: a robust tabu search (:class:`TabuSearch`) from the best
        rounded permutation of all runs; with ``time_limit`` the Frank-Wolfe
        runs get a fifth of the budget and the tabu search the rest, without
        it the search does ``tabu_iter`` iterations.  ``"none"`` (or False):
        rounding only.  ``"auto"``: ``"tabu"`` when ``time_limit`` is given,
        ``"2opt"`` otherwise.  Local search can only improve the result.
    tabu_iter : int, optional
        Iteration budget of the tabu search (default ``200 n`` without a
        time limit, unbounded within one).
    project_iterates : bool, default True
        Round every Frank-Wolfe iterate, not only the last, and keep the best
        (one extra assignment problem per iteration).
    tol : float, default 1e-6
        Stop a run when the Frank-Wolfe gap is at most
        ``tol * sum|A| * sum|B| / n^2`` (relative to the size of ``f`` at
        the barycenter).
    max_iter : int, default 100
        Iteration budget of each run.  The relaxation is not convex and the
        gap decays slowly, while rounding and 2-opt decide the quality: with
        many restarts, short runs (5-10 iterations) find more in less time.
    time_limit : float, optional
        Wall-time budget in seconds for the whole call (numba compilation on
        first use included; ``inf``: none, as None): no restart starts after it, and a running
        Frank-Wolfe run stops at it (at a fifth of it when the tabu search
        polishes).  How much work fits in it depends on the machine and its
        load, so a run with a time limit is not reproducible, even with the
        same ``random_state``.  For a reproducible budget leave it None and
        bound the work in iterations: ``max_iter`` and ``restarts`` for the
        relaxation, ``local_search="tabu"`` with ``tabu_iter`` for the
        search.
    step_size : str or StepSize, default "exact"
        Step-size rule of the relaxation solver; ``"exact"`` is the closed
        form of :meth:`QAPObjective.exact_step`.

    Returns
    -------
    QAPResult
        ``permutation``, ``fun``, the relaxed solution ``x`` and per-run
        details in ``runs``.

    Raises
    ------
    ShapeError
        If ``A`` and ``B`` are not square matrices of one size, or ``P0`` has
        the wrong shape.
    InfeasibleError
        If a given ``P0`` is not doubly stochastic.
    ValueError
        For an unknown ``method`` or ``P0`` string, or bad numbers.

    Warns
    -----
    ConvergenceWarning
        (scikit-learn's, as the package's other estimators' Ctrl-C warnings) When Ctrl-C
        ended the call: the best permutation so far is returned.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.matching import solve_qap
    >>> A = np.array([[0, 5, 2], [5, 0, 3], [2, 3, 0]])
    >>> B = np.array([[0, 1, 4], [1, 0, 2], [4, 2, 0]])
    >>> res = solve_qap(A, B)
    >>> res.fun, res.permutation
    (38.0, array([0, 1, 2]))
    """
    t_start = time.perf_counter()
    A, B = check_qap_matrices(A, B, "solve_qap")
    n = A.shape[0]
    method = str(method).lower()
    if method not in QAP_METHODS:
        raise ValueError(f"solve_qap: `method` must be one of {QAP_METHODS}, got {method!r}")
    if method not in available_methods():
        raise ValueError(f"solve_qap: method {method!r} is not registered in this frankwolfe "
                         f"installation (available: {available_methods()})")
    check_whole(restarts, "restarts", 0, "solve_qap")
    check_real(tol, "tol", "solve_qap", low=0)
    check_whole(max_iter, "max_iter", 0, "solve_qap")
    if time_limit is not None:
        check_real(time_limit, "time_limit", "solve_qap", low=0, low_open=True, finite=False)
    check_flag(project_iterates, "project_iterates")
    if time_limit is not None and math.isinf(time_limit):
        # no limit: the tabu search that "auto" picks for a time limit would have neither
        # a deadline nor an iteration budget, and never returned
        time_limit = None
    search = ("2opt" if local_search else "none") \
        if isinstance(local_search, (bool, np.bool_)) else local_search
    if not isinstance(search, str):
        raise TypeError(f"solve_qap: `local_search` must be one of {_LOCAL_SEARCH} or a bool, "
                        f"got {local_search!r} ({type(local_search).__name__})")
    if search not in _LOCAL_SEARCH:
        raise ValueError(f"solve_qap: `local_search` must be one of {_LOCAL_SEARCH} or a bool, "
                         f"got {local_search!r}")
    if search == "auto":
        search = "tabu" if time_limit is not None else "2opt"
    check_whole(tabu_iter, "tabu_iter", 0, "solve_qap", optional=True)
    gen = as_generator(random_state)

    if isinstance(P0, str):
        if P0 == "barycenter":
            start, P_first = "barycenter", barycenter(n)
        elif P0 == "randomized":
            start, P_first = "randomized", random_doubly_stochastic(n, gen)
        else:
            raise ValueError(f"solve_qap: `P0` must be 'barycenter', 'randomized' or an "
                             f"(n, n) doubly stochastic matrix, got {P0!r}")
    else:
        start, P_first = "given", check_doubly_stochastic(P0, n, "P0")
        given = np.asarray(P0)
        if feasibility_tolerance(given) > FEASIBILITY_TOL:
            # a float32 P0 is doubly stochastic to its own rounding only: the solver's
            # start check allows for that when it sees the float32 array (the float64
            # copy holds the same numbers, exactly)
            P_first = P_first.astype(given.dtype)

    objective = QAPObjective(A, B)
    lmo = Birkhoff(n)
    scale = float(np.abs(A).sum() * np.abs(B).sum()) / n**2
    abs_tol = tol * max(scale, np.finfo(float).tiny)

    # Ctrl-C anywhere in the call: the Frank-Wolfe runs and the tabu search stop at their
    # next check (one handler for the whole call, shared with the runs' drivers)
    INTERRUPTS.open()
    try:
        relax_limit = time_limit
        if time_limit is not None and search == "tabu":
            relax_limit = _RELAX_SHARE * time_limit
        best: tuple[float, np.ndarray, np.ndarray, float] | None = None
        runs: list[QAPRun] = []
        for r in range(int(restarts) + 1):
            spent = time.perf_counter() - t_start
            remaining = None if relax_limit is None else relax_limit - spent
            if r > 0 and ((remaining is not None and remaining <= 0) or INTERRUPTS.requested):
                break
            if r == 0:
                P, label = P_first, start
            else:
                P, label = random_doubly_stochastic(n, gen), "randomized"
            run, perm, x = _relax_and_round(
                objective, lmo, P, label, method, search == "2opt", project_iterates, abs_tol,
                int(max_iter), None if remaining is None else max(remaining, 1e-9), step_size)
            runs.append(run)
            if best is None or run.fun < best[0]:
                best = (run.fun, perm, x, run.relaxed_fun)
            if run.status == "interrupted":  # Ctrl-C: no more restarts, no search
                break
        assert best is not None
        fun, perm = best[0], best[1]
        n_tabu = 0
        if search == "tabu" and n >= 2 and not INTERRUPTS.requested:
            deadline = None if time_limit is None else t_start + time_limit
            budget = _TABU_ITER_PER_N * n if tabu_iter is None and deadline is None else tabu_iter
            ts = _tabu_polish(A, B, perm, gen, deadline, budget)
            n_tabu = ts.n_iter
            better = qap_value(A, B, ts.best_permutation)
            if better < fun:
                fun, perm = better, ts.best_permutation.copy()
        if INTERRUPTS.requested:
            # imported here: scikit-learn is not imported with the application
            from sklearn.exceptions import ConvergenceWarning

            warn_user("solve_qap: interrupted (Ctrl-C); returning the best permutation so "
                          "far", ConvergenceWarning)
        return QAPResult(permutation=perm, fun=fun, x=best[2], relaxed_fun=best[3], runs=runs,
                         nit=sum(r.nit for r in runs), time=time.perf_counter() - t_start,
                         method=method, local_search=search, tabu_iter=n_tabu)
    finally:
        INTERRUPTS.close()


def _tabu_polish(A: np.ndarray, B: np.ndarray, perm: np.ndarray, gen: np.random.Generator,
                 deadline: float | None, budget: int | None) -> TabuSearch:
    """Tabu search from ``perm`` until ``deadline`` (perf_counter), ``budget`` iterations
    or Ctrl-C, in chunks of iterations sized to a few milliseconds so the deadline is
    kept."""
    ts = TabuSearch(A, B, perm, random_state=gen)
    _tabu_chunks(ts, deadline, budget, 8)
    return ts


def _tabu_chunks(ts: TabuSearch, deadline: float | None, left: int | None,
                 chunk: int) -> None:
    while left is None or left > 0:
        now = time.perf_counter()
        if INTERRUPTS.requested or (deadline is not None and now >= deadline):
            break
        k = chunk if left is None else min(chunk, left)
        ts.run(k)
        spent = time.perf_counter() - now
        if left is not None:
            left -= k
        if deadline is not None:
            per_iter = max(spent / k, 1e-9)
            # aim at chunks of ~2 ms, never past the deadline
            chunk = int(max(1, min(4 * chunk, 0.002 / per_iter,
                                   (deadline - time.perf_counter()) / per_iter)))
        else:
            chunk = min(4 * chunk, 1 << 16)

"""How :class:`~.estimator.StructuredSVM` runs each of its solvers on the core's driver:
the solve, and how the solver's iterations and points read as passes, oracle calls and
``(w, dual value)`` (:class:`_Run`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import frankwolfe as fw
from frankwolfe import Result, RunOptions, Status

from .dual import SSVMDual
from .oracles import batch_primal
from .solvers import dual_extragradient, online_eg, restricted_gap, ssg
from .solvers._budget import bcfw_step_passes, cp_iterations

#: the estimator (``StructuredSVM``: this module sits below it, so not imported)
Estimator = Any

__all__ = ["SOLVER_RUNS"]

#: new planes between corrective solves of the cutting plane (SVMstruct's -n default)
_CP_BLOCKS_PER_STEP = 100


@dataclass
class _Run:
    """One solver as ``_fit`` runs it: the solve, and how its iterations and points read
    as passes, oracle calls and ``(w, dual value)``."""

    solve: Callable[[RunOptions], Result]
    #: the core's iteration bound for ``max_passes``; None for the own solvers (SSG, online
    #: EG, the dual extragradient), which count calls and set it themselves
    max_iter: int | None
    #: callback info -> ``(w, dual value or None)``; also applied to ``(res.x, res.fun,
    #: res.extra)`` at the end
    point: Callable[[np.ndarray, float, dict[str, Any]], tuple[np.ndarray, float | None]]
    #: iteration ``k`` and the callback's info -> max-oracle calls so far
    calls: Callable[[int, dict[str, Any]], int]
    calls_end: Callable[[Result], int]
    #: iteration ``k`` -> passes done, or None between passes
    passes: Callable[[int], int | None] = lambda k: k
    cycle: int = 1
    after_evaluation: Callable[[float, dict[str, Any]], None] | None = None
    #: the result -> the dual state a warm start continues from, for the estimator to keep
    #: (``{"bcfw": ...}`` or ``{"fw": ...}``, the keys of its ``warm_state``)
    finish: Callable[[Result], dict[str, Any]] | None = None


def _dual_image(x: np.ndarray, fun: float, info: dict[str, Any]) -> tuple[np.ndarray, float]:
    """The SSVM dual's point ``(w, l)`` and objective ``-D``: ``(w, D)``."""
    return x[:-1], -fun


def _run_bcfw(svm: Estimator, X: Any, Y: Any, lam: float, warm: dict[str, Any] | None
              ) -> _Run:
    pairwise = svm.solver == "bcfw_pairwise"
    block_order = svm.block_order or ("gap" if pairwise else "uniform")
    domain = SSVMDual(svm.model, X, Y, lam, compiled=svm.compiled, n_jobs=svm.n_jobs)
    objective = domain.dual_objective()
    if warm is not None:
        # the domain reads its own state: marginals serve its compiled path, image-space
        # points the generic one
        domain.set_warm_start(warm["bcfw"])
    # gapBCFW has no averaging: the average lags behind the linear convergence
    # of pairwise steps and behind gap sampling's focus on the worst blocks
    # (and lock-free passes have none: their threads would all settle one average)
    default_avg = not pairwise and block_order != "gap" and svm.round_step != "lock_free"
    avg = _averaging_kind(svm.averaging, "weighted" if default_avg else None)

    def solve(options: RunOptions) -> Result:
        return fw.block_coordinate_frank_wolfe(
            objective, domain, None, block_order=block_order,
            block_step="pairwise" if pairwise else "fw",
            cache=pairwise, cache_size=50 if pairwise else 100,
            gap_every=int(svm.gap_every), averaging=avg,
            certify="average" if avg else "last", random_state=svm.random_state,
            compiled=None if svm.compiled else False, **options.as_kwargs(),
            **svm._executor())

    def finish(res: Result) -> dict[str, Any]:
        return {"bcfw": domain.export_state(res)}

    return _Run(solve, bcfw_step_passes(int(svm.max_passes), int(svm.gap_every)), _dual_image,
                calls=lambda k, info: int(info["oracle_calls"]),
                calls_end=lambda res: int(res.n_oracle_calls), finish=finish)


def _run_fw(svm: Estimator, X: Any, Y: Any, lam: float, warm: dict[str, Any] | None
            ) -> _Run:
    domain = SSVMDual(svm.model, X, Y, lam, n_jobs=svm.n_jobs)
    objective = domain.dual_objective()
    x0 = np.zeros(domain.dim)
    previous: tuple[np.ndarray, float] | None = warm["fw"] if warm is not None else None
    if previous is not None:
        x_old, lam_old = previous
        x0 = x_old.copy()
        x0[:-1] *= lam_old / lam
    n = len(X)

    def solve(options: RunOptions) -> Result:
        return fw.frank_wolfe(objective, domain, x0, step_size="exact", **options.as_kwargs())

    def finish(res: Result) -> dict[str, Any]:
        return {"fw": (res.x.copy(), lam)}

    # iteration k has made k + 1 batch oracle calls (each certifies its iterate): a budget
    # of P passes is P - 1 iterations
    return _Run(solve, max(0, int(svm.max_passes) - 1), _dual_image,
                calls=lambda k, info: (k + 1) * n,
                calls_end=lambda res: int(res.n_oracle_calls) * n, finish=finish)


def _run_cutting_plane(svm: Estimator, X: Any, Y: Any, lam: float,
                       warm: dict[str, Any] | None) -> _Run:
    # the dual objective declares its quadratic form (as_quadratic): the corrective
    # step then solves the QP over the cutting planes (atoms) exactly
    domain = SSVMDual(svm.model, X, Y, lam, n_jobs=svm.n_jobs)
    objective = domain.dual_objective()
    n = len(X)
    # the corrective QP is re-solved every _CP_BLOCKS_PER_STEP new planes (SVMstruct's
    # n-slack default, its -n 100): a pass is `cycle` iterations of the core
    cycle = -(-n // _CP_BLOCKS_PER_STEP)
    # one working set of labellings per example (n-slack): the corrective QP runs over
    # the product of the per-example hulls, each started at the true labelling (w = 0)
    start = [block.true_vertex() for block in domain.blocks]

    def solve(options: RunOptions) -> Result:
        # the corrective QP to 1e-3 of the outer gap (the same progress per pass as an
        # exact one on OCR, in far less time) within 200 sweeps: at small lambda the QP
        # is ill-conditioned and an unbounded solve took many times as long as the
        # bounded one, which made most of its dual progress
        # (benchmarks/README.md, "Measurements behind code choices")
        return fw.fully_corrective_frank_wolfe(
            objective, domain, start, blocks=True, corrective_tol=1e-3,
            corrective_max_sweeps=200, prune_after=10,
            blocks_per_step=_CP_BLOCKS_PER_STEP, gap_every=int(svm.gap_every),
            **options.as_kwargs())

    return _Run(solve, cp_iterations(int(svm.max_passes), int(svm.gap_every), n, cycle,
                                         _CP_BLOCKS_PER_STEP), _dual_image,
                calls=lambda k, info: int(info["block_oracle_calls"]),
                calls_end=lambda res: int(res.extra["block_oracle_calls"]),
                passes=lambda k: k // cycle if k % cycle == 0 else None, cycle=cycle)


def _run_ssg(svm: Estimator, X: Any, Y: Any, lam: float, warm: dict[str, Any] | None
             ) -> _Run:
    # a warm start continues an SSG fit's step schedule from w_ (its average, or last
    # iterate); without its step count (another solver's w_) the first step has size 1
    # and forgets w_: a cold start
    steps = warm.get("ssg") if warm is not None else None
    w0 = svm.w_ if steps is not None else None

    def solve(options: RunOptions) -> Result:
        return ssg(svm.model, X, Y, lam, max_passes=int(svm.max_passes),
                   averaging=_averaging_kind(svm.averaging, "weighted"),
                   block_order=svm.block_order or "uniform", w0=w0,
                   start_step=steps or 0, random_state=svm.random_state,
                   run_options=options)

    return _Run(solve, None, lambda x, fun, info: (x, None),
                calls=lambda k, info: int(info["oracle_calls"]),
                calls_end=lambda res: int(res.n_oracle_calls))


def _run_online_eg(svm: Estimator, X: Any, Y: Any, lam: float, warm: dict[str, Any] | None
                   ) -> _Run:
    def solve(options: RunOptions) -> Result:
        return online_eg(svm.model, X, Y, lam, max_passes=svm.max_passes,
                         block_order=svm.block_order or "uniform",
                         random_state=svm.random_state, run_options=options)

    def point(x: np.ndarray, fun: float, info: dict[str, Any]) -> tuple[np.ndarray, float]:
        if "dual" in info:  # the result's extra: the image is there already
            return info["w"], info["dual"]
        w, _, dual = info["point"].image()
        return w, dual

    return _Run(_stops_at_tol(svm, solve), None, point,
                calls=lambda k, info: int(info["oracle_calls"]),
                calls_end=lambda res: int(res.n_oracle_calls))


def _run_extragradient(svm: Estimator, X: Any, Y: Any, lam: float,
                       warm: dict[str, Any] | None) -> _Run:
    model = svm.model
    # ||w*|| <= sqrt(2 P(0) / lam): the ball of Taskar et al.'s restricted gap
    p0 = batch_primal(model, X, Y, np.zeros(model.size_joint_feature), lam,
                      svm.n_jobs)["primal"]
    radius = float(np.sqrt(2.0 * p0 / lam))
    svm.restricted_gaps_ = []
    seen: dict[str, Any] = {}

    def solve(options: RunOptions) -> Result:
        return dual_extragradient(model, X, Y, lam, max_passes=svm.max_passes,
                                  averaging=_averaging_kind(svm.averaging, "uniform"),
                                  run_options=options)

    def point(x: np.ndarray, fun: float, info: dict[str, Any]) -> tuple[np.ndarray, float]:
        # the result's extra holds the image already
        w_dual, dual = ((info["w_dual"], info["dual"]) if "w_dual" in info
                        else info["point_bar"].image()[::2])
        seen.update(w_dual=w_dual, dual=dual)
        return x, dual

    def after_evaluation(p: float, info: dict[str, Any]) -> None:
        primal = svm.history_["primal"][-1]
        svm.restricted_gaps_.append((int(p), restricted_gap(primal, seen["dual"],
                                                            seen["w_dual"], lam, radius)))

    return _Run(_stops_at_tol(svm, solve), None, point,
                calls=lambda k, info: int(info["oracle_calls"]),
                calls_end=lambda res: int(res.n_oracle_calls),
                after_evaluation=after_evaluation)


def _stops_at_tol(svm: Estimator, solve: Callable[[RunOptions], Result]
                  ) -> Callable[[RunOptions], Result]:
    """``solve`` of a solver that certifies no gap itself (online EG, the dual
    extragradient), whose run the estimator's callback stops once an evaluation certifies
    a gap within ``tol``: that stop is the run's convergence (as BCFW's own certificate
    makes it), with the evaluation's gaps (``gap = primal - dual``, ``best_gap`` from the
    least primal of the history, ``dual_bound`` minus it).  A stop for any other reason
    is returned as it is."""

    def run(options: RunOptions) -> Result:
        estimator_callback = options.callback
        at_tol: list[bool] = []

        def callback(state: Any) -> bool | None:
            out = estimator_callback(state) if estimator_callback is not None else None
            # the estimator's callback answers False only at a certified gap within tol
            at_tol.append(out is False)
            return out

        res = solve(dataclasses.replace(options, callback=callback))
        if res.status != Status.CALLBACK_STOP or not (at_tol and at_tol[-1]):
            return res
        history = svm.history_
        primal, dual = float(history["primal"][-1]), float(history["dual"][-1])
        best_primal = float(np.min(history["primal"]))
        gap = primal - dual
        return dataclasses.replace(
            res, status=Status.CONVERGED, gap=gap, best_gap=best_primal - dual,
            dual_bound=-best_primal,
            message=f"certified gap {gap:.3e} <= tol {svm.tol:.3e} after {res.nit} "
                    "iterations (the estimator's evaluation)")

    return run


SOLVER_RUNS: dict[str, Callable[[Estimator, Any, Any, float, dict[str, Any] | None], _Run]] = {
    "bcfw": _run_bcfw, "bcfw_pairwise": _run_bcfw, "fw": _run_fw,
    "cutting_plane": _run_cutting_plane, "ssg": _run_ssg, "online_eg": _run_online_eg,
    "dual_extragradient": _run_extragradient}


def _averaging_kind(value: bool | str | None, default: str | None) -> str | None:
    """``averaging`` as the solvers' kind: None -> ``default``, True -> "weighted",
    False -> None, a kind as is."""
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_)):  # np.True_ too: the parameter check passes it
        return "weighted" if value else None
    return value or None


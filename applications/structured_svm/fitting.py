"""One fit of :class:`~.estimator.StructuredSVM`: its set-up, its run and how it ended.

:func:`fit_and_notice` checks the data, decides whether the fit starts warm and sets
the fit's attributes; :func:`run_fit` runs the solver on the core's driver with one
callback (a history row every ``eval_every`` passes, :func:`history_row`) and keeps
the result, the weights and the warm-start state; :class:`FitNotice` says why a run
ended short of ``tol``.  The estimator's ``fit``, ``_fit`` and ``_evaluate`` call them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe import History, IterationState, Result, RunOptions, Status
from frankwolfe._warnings import warn_user
from frankwolfe.monitor import BudgetWords, budget_words

from .._checks import (
    check_feature_names,
    check_finite_examples,
    check_labels,
    check_pair,
    positional,
)
from ._data_key import data_key
from .models.chain.data import chain_data_scope
from .oracles import batch_predict, batch_primal, certified_result, evaluation_seconds, mean_loss
from .solver_runs import SOLVER_RUNS

#: the estimator (``StructuredSVM``: this module sits below it, so not imported)
Estimator = Any

__all__ = ["FitNotice", "fit_and_notice", "run_fit", "history_row"]

#: solvers that start cold whatever warm_start says (warned)
_COLD_SOLVERS = ("cutting_plane", "online_eg", "dual_extragradient")
_COLUMNS = ("passes", "effective_passes", "oracle_calls", "rounds", "seconds", "primal", "dual",
            "gap", "train_error", "test_error")
# what a fit sets: a fit that fails with no run so far to keep restores them as they were
_FIT_ATTRIBUTES = ("lam_", "n_train_", "history_", "w_", "result_", "_eval_time",
                   "_last_eval", "feature_names_in_", "_ssg_steps")


@dataclasses.dataclass(frozen=True)
class FitNotice:
    """Why a fit ended short of ``tol``: what :meth:`~.estimator.StructuredSVM.fit` warns
    of with a ``ConvergenceWarning`` (and :class:`~.LatentSSVM` sums up over its rounds).

    Attributes
    ----------
    reason : {"max_passes", "time_limit", "stalled", "interrupted"}
        The budget that ended the run above ``tol``, a stall (steps of size 0) above
        it, or Ctrl-C.
    gap : float
        The certified duality gap at the end (NaN where none is certified).
    message : str
        The warning's text.
    """

    reason: str
    gap: float
    message: str


def fit_and_notice(svm: Estimator, X: Sequence[Any], Y: Sequence[Any],
                   X_test: Sequence[Any] | None = None, Y_test: Sequence[Any] | None = None,
                   ) -> FitNotice | None:
    """Fit ``svm`` as :meth:`~.estimator.StructuredSVM.fit` does, without its closing warning: the
    notice of a run that ended short of ``tol`` is returned instead (None when it ended
    at ``tol`` or by the callback), for the caller to warn of or to sum up.

    The warnings of the set-up (a warm start that cannot continue) point at the user's
    line (:func:`frankwolfe._warnings.warn_user`).
    """
    started = time.perf_counter()  # the time limit counts the fit's own set-up
    X_in, X_test_in = X, X_test  # their column names, which positional drops
    X, Y = positional(X), positional(Y)
    X_test, Y_test = positional(X_test), positional(Y_test)
    check_pair(X, Y, "StructuredSVM.fit")
    if (X_test is None) != (Y_test is None):
        raise ValueError("StructuredSVM.fit: give both X_test and Y_test, or neither")
    if X_test is not None and Y_test is not None:
        check_pair(X_test, Y_test, "StructuredSVM.fit", ("X_test", "Y_test"), empty=True)
    check_finite_examples(X, "X", "StructuredSVM.fit")
    Y = check_labels(Y, "Y", "StructuredSVM.fit")
    if X_test is not None:
        check_finite_examples(X_test, "X_test", "StructuredSVM.fit")
        Y_test = check_labels(Y_test, "Y_test", "StructuredSVM.fit")
    lam = svm._check(len(X))
    previous: np.ndarray | None = getattr(svm, "w_", None)
    warm = svm.warm_start and previous is not None
    size = 0 if previous is None else previous.size
    if warm and size != int(svm.model.size_joint_feature):
        # set_params(model=...) since: the old state has another dimension
        warn_user(f"StructuredSVM: warm_start=True, but the previous fit's weights "
                      f"have {size} entries and this model's "
                      f"{int(svm.model.size_joint_feature)} (the model changed): this "
                      "fit starts cold", UserWarning)
        svm._forget_state()
        warm = False
    # the data's digest (a pass over every example): asked for a warm start, and for
    # the state a fit leaves (bcfw, fw), not for the other solvers
    svm._data_key = data_key(X, Y) if warm else None
    if warm:
        svm._drop_foreign_state()
        if svm.solver in _COLD_SOLVERS:
            warn_user(f"StructuredSVM: solver={svm.solver!r} has no warm start; "
                          "this fit starts cold (the BCFW solvers, batch FW and SSG "
                          "continue from the previous fit)", UserWarning)
        elif svm.solver == "ssg" and getattr(svm, "_ssg_steps", None) is None:
            warn_user("StructuredSVM: warm_start=True, but solver='ssg' continues "
                          "only an SSG fit's step schedule, and the previous fit was "
                          "another solver's (or its file held no warm-start state): "
                          "this fit starts cold", UserWarning)
    before = {k: v for k, v in svm.__dict__.items() if k in _FIT_ATTRIBUTES}
    svm.lam_ = lam
    svm.n_train_ = len(X)
    svm.history_ = History(_COLUMNS)
    svm._eval_time = 0.0
    svm._last_eval = None
    svm._data = (X, Y, X_test, Y_test)
    try:
        check_feature_names(svm, X_in, reset=True)
        if X_test is not None:
            check_feature_names(svm, X_test_in, reset=False)
        # the fit's conversions of its data sets (the chain model's flat token arrays:
        # training, then every evaluation) are shared within it and dropped with it: kept
        # beyond, they held the model, the examples and copies of their rows alive
        with chain_data_scope():
            svm._fit(X, Y, lam, warm, started)
    except Exception:
        if svm.__dict__.get("result_") is before.get("result_"):
            # no run so far to keep: the previous fit whole, not its weights beside
            # this fit's lam_, n_train_ and empty history (which save() wrote)
            for k in _FIT_ATTRIBUTES:
                svm.__dict__.pop(k, None)
            svm.__dict__.update(before)
        raise
    finally:
        del svm._data
    res = svm.result_
    if res.status == Status.INTERRUPTED:
        return FitNotice("interrupted", res.gap,
                         f"StructuredSVM: interrupted (Ctrl-C) after "
                         f"{res.n_oracle_calls / svm.n_train_:g} passes; w_ holds the "
                         f"weights so far ({res.message})")
    if res.status in (Status.MAX_ITER, Status.TIME_LIMIT) and svm.solver != "ssg":
        budget = "time_limit" if res.status == Status.TIME_LIMIT else "max_passes"
        gap = res.gap if np.isfinite(res.gap) else svm.history_["gap"][-1]
        if not gap <= svm.tol:
            return FitNotice(budget, gap,
                             f"StructuredSVM: the {budget} budget ended the run at duality "
                             f"gap {gap:.3g} > tol={svm.tol}; raise {budget} or tol")
    elif res.status == Status.STALLED and not res.gap <= svm.tol:
        # steps of size 0 with the certified gap above tol: with approximate
        # inference a decoding short of its maximum gives no ascent
        return FitNotice("stalled", res.gap,
                         f"StructuredSVM: the run stalled at duality gap {res.gap:.3g} > "
                         f"tol={svm.tol} ({res.message}); with approximate inference "
                         "try inference='trws' or 'lp'")
    return None


def run_fit(svm: Estimator, X: Any, Y: Any, lam: float, warm: bool, started: float) -> None:
    """Run the solver on the core's driver with one callback (a history row every
    ``eval_every`` passes, stopping at ``tol``); the last row at the end."""
    # the dual state to continue from (None: a cold start), read by the solver's run
    # and replaced by what its finish returns
    start = ({"bcfw": getattr(svm, "_state", None), "fw": getattr(svm, "_fw_x", None),
              "ssg": getattr(svm, "_ssg_steps", None)} if warm else None)
    run = SOLVER_RUNS[svm.solver](svm, X, Y, lam, start)
    n, every = len(X), int(svm.eval_every or svm.gap_every)
    last = [-1]

    def callback(s: IterationState) -> bool | None:
        p = run.passes(s.k)
        if p is None or p == 0 or p % every or p == last[0]:
            return None
        last[0] = p
        calls = run.calls(s.k, s.info)
        w, dual = run.point(s.x, s.fun, s.info)
        gap = svm._evaluate(p, calls / n, calls, s.time - svm._eval_time, w, dual,
                            s.info.get("rounds", s.info.get("n_block_steps", np.nan)))
        if run.after_evaluation is not None:
            run.after_evaluation(p, s.info)
        return False if gap <= svm.tol else None

    limit = svm.time_limit
    if limit is not None:
        # what the set-up (the domain, the start) left of it, less the final history
        # row's evaluation (estimated on a sample), which then fits within it too
        keep = evaluation_seconds(svm.model, X, Y, lam, svm._data[2], svm.n_jobs)
        limit = max(1e-3, limit - (time.perf_counter() - started) - keep)
    bounded = hasattr(svm.model, "loss_augmented_bound")  # the core's gap: certified_result
    options = RunOptions(tol=0.0 if bounded else svm.tol, time_limit=limit,
                         callback=callback, verbose=svm.verbose,
                         progress=bool(svm.progress))
    if run.max_iter is not None:  # None: the own solvers count max_passes themselves
        options = dataclasses.replace(options, max_iter=run.max_iter)
    # the run speaks of its budget as max_passes, the iteration bound above being the
    # estimator's translation of it, and its verbose closing line comes after the
    # estimator's last history row (printed below), not before it
    closing: list[str] = []
    words = BudgetWords("max_passes", int(svm.max_passes), "passes",
                        lambda k, extra: run.calls(k, extra) / n, closing.append)
    try:
        try:
            with budget_words(words):
                res = run.solve(options)
        except Exception as err:
            # the run so far, which the driver attaches (the cluster or client lost, a
            # model's or a callback's exception): w_ and result_ of this fit
            so_far = getattr(err, "result", None)
            if isinstance(so_far, Result):
                try:
                    w = np.array(run.point(so_far.x, so_far.fun, so_far.extra)[0])
                except Exception:
                    pass
                else:
                    svm.result_, svm.w_ = so_far, w
                    svm._ssg_steps = so_far.extra.get("steps") \
                        if svm.solver == "ssg" else None
            raise
        # in max-oracle calls, as the max_passes budget counts them (batch FW's domain
        # answers one call of the core with n of them; the cutting plane's counts blocks)
        res.n_oracle_calls = run.calls_end(res)
        svm.result_ = res
        w, dual = run.point(res.x, res.fun, res.extra)
        svm.w_ = np.array(w)
        # SSG's schedule, which its warm start continues (w_ of another solver has none)
        svm._ssg_steps = int(res.extra["steps"]) if svm.solver == "ssg" else None
        if run.finish is not None:
            kept = run.finish(res)
            if "bcfw" in kept:
                svm._state = kept["bcfw"]
            if "fw" in kept:
                svm._fw_x = kept["fw"]
            svm._warm_data = svm._data_key or data_key(X, Y)
        at = run.passes(res.nit)
        p: float = res.nit / run.cycle if at is None else at
        if p != last[0]:
            calls = res.n_oracle_calls
            svm._evaluate(p, calls / n, calls, res.time - svm._eval_time, svm.w_, dual,
                          res.extra.get("rounds", res.extra.get("n_block_steps", np.nan)))
            if run.after_evaluation is not None:
                run.after_evaluation(p, res.extra)
        if bounded and dual is not None:  # the last row's primal bound, when at this point
            ev = svm._last_eval
            if ev is None or not np.array_equal(ev[0], svm.w_) or ev[1] != dual:
                out = batch_primal(svm.model, X, Y, svm.w_, lam, svm.n_jobs)
                ev = (svm.w_, dual, out["primal"], out["certifies"])
            svm.result_ = certified_result(res, ev[2], svm.history_["primal"], dual, ev[3],
                                           svm.tol)
    finally:
        for line in closing:
            print(line)


def history_row(svm: Estimator, p: float, eff: float, calls: int, seconds: float,
                w: np.ndarray, dual: float | None, rounds: float = np.nan) -> float:
    """Record one history row; returns the duality gap (NaN without a dual value)."""
    t0 = time.perf_counter()
    X, Y, X_test, Y_test = svm._data
    model, nj = svm.model, svm.n_jobs
    w = np.array(w, dtype=float)  # callbacks hand out read-only views
    out = batch_primal(model, X, Y, w, svm.lam_, nj)
    primal = out["primal"]
    gap = primal - dual if dual is not None else np.nan
    svm._last_eval = (w, dual, primal, out["certifies"])
    svm.gap_certifies_ = out["certifies"] if dual is not None else None
    train = mean_loss(model, Y, batch_predict(model, X, w, nj))
    test = (mean_loss(model, Y_test, batch_predict(model, X_test, w, nj))
            if X_test is not None and Y_test is not None else np.nan)
    svm.history_.append(passes=p, effective_passes=eff, oracle_calls=calls,
                        rounds=rounds, seconds=seconds, primal=primal,
                        dual=dual if dual is not None else np.nan, gap=gap,
                        train_error=train, test_error=test)
    if svm.verbose:
        print(f"pass {p:>6g}  eff {eff:>8.2f}  t {seconds:>8.2f}s  primal {primal:.6g}  "
              f"gap {gap:.3e}  train {train:.4f}  test {test:.4f}")
    svm._eval_time += time.perf_counter() - t0
    return gap

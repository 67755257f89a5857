"""Batch oracles over a data set: loss-augmented passes, primal value, predictions.

A model may run them itself (the hook
:meth:`~.models.StructuredModel.batch_oracles`; :class:`~.models.ChainModel`
runs them in numba over flattened token arrays, threads over examples with
``n_jobs``); otherwise they go through its Python methods, with a thread pool
over examples when ``n_jobs != 1`` (useful when the model's oracle releases the
GIL, as numba ``nogil`` kernels and scipy's assignment solver do).

Certified primal values: a model whose loss-augmented decoding may miss the maximum
(approximate inference) offers ``loss_augmented_bound(x, y_true, w) -> (bound,
relaxed)``, an upper bound of ``max_y L(y_true, y) + <w, phi(x, y)>`` (``relaxed``: over
the relaxed labellings its oracle may return); :func:`batch_primal` then bounds the
primal from above with it, so that ``primal - dual`` stays a certified gap.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from frankwolfe import History, Result, Status
from frankwolfe.parallel.threads import effective_n_jobs

from .._checks import check_pair
from .models.base import StructuredModel, model_psi

__all__ = ["batch_psi_loss", "batch_primal", "batch_predict", "mean_loss",
           "evaluation_seconds", "certified_result"]


def _map(fn, items: Sequence[Any], n_jobs: int | None) -> list[Any]:
    workers = effective_n_jobs(n_jobs)
    if workers == 1 or len(items) < 2:
        return [fn(a) for a in items]
    with ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(fn, items, chunksize=max(1, len(items) // (4 * workers))))


def batch_psi_loss(model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], w: np.ndarray,
                   augment: bool = True, n_jobs: int | None = 1
                   ) -> tuple[np.ndarray, float, list[Any]]:
    """``(sum_i psi_i(y*_i), sum_i L_i(y*_i), [y*_i])`` with ``y*_i`` the loss-augmented
    (or, without ``augment``, plain) decoding of every example at ``w``."""
    check_pair(X, Y, "batch_psi_loss", empty=True)
    w = np.asarray(w, dtype=float)
    fast = model.batch_oracles(X, Y)
    if fast is not None:
        return fast.psi_loss(w, augment, n_jobs)
    dec = (lambda i: model.loss_augmented_decode(X[i], Y[i], w)) if augment else \
        (lambda i: model.decode(X[i], w))
    labels = _map(dec, list(range(len(X))), n_jobs)
    psi = np.zeros(model.size_joint_feature)
    loss = 0.0
    for x, y, yh in zip(X, Y, labels):
        idx, val = model_psi(model, x, y, yh)
        psi[idx] += val
        loss += float(model.loss(y, yh))
    return psi, loss, labels


def batch_primal(model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], w: np.ndarray,
                 lam: float, n_jobs: int | None = 1) -> dict[str, Any]:
    """Primal objective ``lam/2 ||w||^2 + 1/n sum_i max_y [L_i(y) - <w, psi_i(y)>]`` at ``w``
    and the quantities of the duality gap.

    Returns a dict with ``primal``, ``hinge`` (per example, or None where only their sum
    is known) and ``certifies``: ``"exact problem"``, or ``"relaxed problem"`` (the mean
    task loss of the plain predictions is *not* included: see :func:`mean_loss`).
    (``sum psi_i`` of the loss-augmented labellings, the FW vertex: :func:`batch_psi_loss`.)

    For a model with ``loss_augmented_bound`` (approximate inference, see the module's
    docstring) ``primal`` is an upper bound of the primal from the inference's bounds,
    ``hinge_i = bound_i - <w, phi(x_i, y_i)>`` (no labelling is decoded); ``certifies``
    is ``"relaxed problem"`` when a bound is over relaxed labellings.
    """
    check_pair(X, Y, "batch_primal")
    w = np.asarray(w, dtype=float)
    n = len(X)
    bound = getattr(model, "loss_augmented_bound", None)
    if bound is not None:
        res = _map(lambda i: bound(X[i], Y[i], w), list(range(n)), n_jobs)
        bounded = np.array([b - model.score(x, y, w) for (b, _), x, y in zip(res, X, Y)])
        return {"primal": 0.5 * lam * float(w @ w) + float(bounded.sum()) / n, "hinge": bounded,
                "certifies": "relaxed problem" if any(r for _, r in res) else "exact problem"}
    fast = model.batch_oracles(X, Y)
    if fast is not None:
        hinge, _ = fast.primal_terms(w, n_jobs)
        total_hinge = float(hinge.sum())
    else:
        psi, loss_sum, labels = batch_psi_loss(model, X, Y, w, True, n_jobs)
        # H_i = L_i(y*) - <w, psi_i(y*)>, summed: loss_sum - <w, psi_sum>
        hinge = None
        total_hinge = loss_sum - float(w @ psi)
    primal = 0.5 * lam * float(w @ w) + total_hinge / n
    return {"primal": primal, "hinge": hinge, "certifies": "exact problem"}


#: what the solvers report of their own gaps (history columns, result extras)
_SOLVER_GAPS = frozenset({"gap", "gap_estimate", "block_gaps"})


def certified_result(res: Result, primal: float, primals: np.ndarray, dual: float,
                     certifies: str, tol: float) -> Result:
    """``res`` of a solver run on the SSVM dual, with the gaps of a primal upper bound.

    With approximate inference the solver's own gaps come from labellings that may miss
    the maximum and certify nothing; here ``gap = primal - dual`` (``primal``: the
    bound of :func:`batch_primal` at the returned ``w``), ``best_gap = best_primal -
    dual`` (``best_primal``: the least of ``primal`` and the earlier bounds ``primals``,
    each an upper bound of the optimum), ``dual_bound = -best_primal`` and
    ``extra["gap_certifies"] = certifies``.  The solver's own gaps (history columns
    ``gap``, ``gap_estimate``; ``extra["block_gaps"]``) become NaN, and a run that the
    solver ended as converged is ``stalled`` when the certified gap is above ``tol``, one
    that the estimator's callback stopped at a certified gap within ``tol`` converged.
    """
    gap = primal - dual
    best_primal = min([primal, *primals])
    history = History(tuple(res.history.columns))
    for row in res.history:
        history.append(**{k: np.nan if k in _SOLVER_GAPS else v for k, v in row.items()})
    extra = {k: np.full(np.shape(v), np.nan) if k in _SOLVER_GAPS else v
             for k, v in res.extra.items()}
    # the solver's message quotes its own gap (and the tol it ran at): reworded
    status, k = res.status, res.nit
    # a budget's stop at a certified gap within tol converged, as the core's closing
    # certificate decides (the solver's own gap said nothing here)
    if status in (Status.CONVERGED, Status.CALLBACK_STOP, Status.MAX_ITER,
                  Status.TIME_LIMIT) and gap <= tol:
        status, reason = Status.CONVERGED, f"converged after {k} iterations"
    elif status == Status.CONVERGED:
        status = Status.STALLED
        reason = (f"stalled after {k} iterations: the solver's decodings gave no ascent "
                  "direction")
    elif status in (Status.MAX_ITER, Status.TIME_LIMIT, Status.INTERRUPTED):
        # the run's own words for its stop (the estimator's budget in passes), without
        # the solver's gap, which the certified one replaces
        reason = res.message.split(";")[0]
    else:
        reason = res.message
    message = (f"{reason}; certified gap {gap:.3e} {'<=' if gap <= tol else '>'} tol "
               f"{tol:.3e}, from the inference's bounds ({certifies})")
    return dataclasses.replace(
        res, gap=gap, best_gap=best_primal - dual, dual_bound=-best_primal, status=status,
        message=message, history=history, extra={**extra, "gap_certifies": certifies})


def batch_predict(model: StructuredModel, X: Sequence[Any], w: np.ndarray,
                  n_jobs: int | None = 1) -> list[Any]:
    """``decode(x, w)`` for every example."""
    w = np.asarray(w, dtype=float)
    fast = model.batch_oracles(X, None)
    if fast is not None:
        return fast.predict(w, n_jobs)
    return _map(lambda x: model.decode(x, w), list(X), n_jobs)


def mean_loss(model: StructuredModel, Y_true: Sequence[Any], Y_pred: Sequence[Any]) -> float:
    """Mean task loss over examples (for chains: the macro-averaged normalized Hamming
    loss that BCFWstruct and gapBCFW report as test error)."""
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"mean_loss: {len(Y_true)} true labellings but {len(Y_pred)} predictions")
    return float(np.mean(model.batch_loss(Y_true, Y_pred)))


def evaluation_seconds(model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], lam: float,
                       X_test: Sequence[Any] | None = None, n_jobs: int | None = 1) -> float:
    """Seconds of one evaluation (:func:`batch_primal`, :func:`batch_predict` and
    :func:`mean_loss` over ``(X, Y)``, :func:`batch_predict` over ``X_test``), estimated
    on two runs of consecutive examples (at the start and in the middle of each set,
    together one in 16 examples, at least 8) and scaled to the set's size: what a time
    budget keeps for the estimator's final history row (about 6 % of an evaluation).

    A first call on one example (numba's compilation or cache load) is not timed, the
    least of three more gives the cost of a call itself (paid once per evaluation: not
    scaled); the cost of an example is the smaller of the two runs' (time lost to
    another process only adds).  Runs of consecutive examples walk the data as the
    evaluation does (examples spread over the set cost 3-4 times as much each on
    CoNLL-2000).  Batch oracles with a ``subset(start, stop)`` method (the chain
    model's) are timed on slices of the set's own, as the evaluation uses them."""
    w = np.zeros(model.size_joint_feature)

    def scaled(Xs: Sequence[Any], Ys: Sequence[Any] | None) -> float:
        n = len(Xs)
        if n == 0:
            return 0.0
        # batch oracles that can be cut time slices of the data set the evaluation uses
        # (built here once, as the evaluation would; a sample of examples as new lists
        # converted them again, which the evaluation does not: the estimate came out
        # several times too large, and the set's converted data left its cache)
        # (benchmarks/README.md, "Measurements behind code choices")
        fast = model.batch_oracles(Xs, Ys)
        cut = fast is not None and callable(getattr(fast, "subset", None))

        def timed(run: range) -> float:
            tic = time.perf_counter()
            ys = None if Ys is None else [Ys[i] for i in run]
            if cut:
                sub = fast.subset(run.start, run.stop)
                pred = sub.predict(w, n_jobs)
                if ys is not None:
                    sub.primal_terms(w, n_jobs)
            else:
                xs = [Xs[i] for i in run]
                pred = batch_predict(model, xs, w, n_jobs)
                if ys is not None:
                    batch_primal(model, xs, ys, w, lam, n_jobs)
            if ys is not None:
                mean_loss(model, ys, pred)
            return time.perf_counter() - tic

        timed(range(0, 1))
        # the least of three: a call slowed by another process would make the runs' cost
        # per example, measured beyond it, too small: under load the estimate fell far
        # short of the evaluation's time
        # (benchmarks/README.md, "Measurements behind code choices")
        one = min(timed(range(0, 1)) for _ in range(3))
        half = max(4, n // 32)
        if n < 2 * half:
            return one * n
        slopes = []
        for lo in (0, n // 2):
            run = range(lo, min(n, lo + half))
            t = timed(run)
            slopes.append(max(t - one, 0.0) / (len(run) - 1))
        per_example = min(slopes)
        return max(one - per_example, 0.0) + per_example * n

    return scaled(X, Y) + (scaled(X_test, None) if X_test is not None else 0.0)

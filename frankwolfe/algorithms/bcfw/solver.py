"""The public block-coordinate Frank-Wolfe solver: checks its options, builds the state,
the pass (:mod:`.plan`) and the engine, and hands them to the shared driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np

from ..._numbers import check_flag, check_real, is_real, is_whole, kind_of
from ..._random import as_generator
from ..._warnings import warn_user
from ...lmo.product import ProductDomain
from ...monitor import gives_bounds
from ...objectives.base import Objective
from ...options import RunKeywords, RunOptions, solver
from ...parallel import Executor, make_executor
from ...registry import register
from ...result import Result
from ...step_size import StepSize, make_step_size
from ..averages import AVERAGING
from ..block_orders import BlockOrder, make_block_order
from ..block_steps import BlockStep, FWStep, make_block_step
from ..engine import drive
from .engine import BlockEngine
from .plan import make_pass
from .rounds import Schedule
from .state import BlockState
from .store import STORAGES

__all__ = ["block_coordinate_frank_wolfe"]

_AVERAGING = (None, *AVERAGING)


def _check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    key = value.lower() if isinstance(value, str) else value
    if key not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return key


def _whole(name: str, value: Any, least: int) -> int:
    """``value`` as an int of at least ``least``: a ``TypeError`` for no real number (text,
    None, a bool), a ``ValueError`` for a wrong one (``0``, ``2.5``, NaN)."""
    if not is_whole(value, least):
        want = "a positive integer" if least == 1 else "a non-negative integer"
        if not is_real(value):
            raise TypeError(f"{name} must be {want}, got {value!r} ({type(value).__name__})")
        raise ValueError(f"{name} must be {want}, got {value!r}")
    return int(value)


def _positive_int(name: str, value: Any) -> int:
    return _whole(name, value, 1)


def _nonnegative_int(name: str, value: Any) -> int:
    return _whole(name, value, 0)


def _averaging(value: Any) -> str | None:
    """``averaging`` as its kind: as the structured SVM's estimators read it, True is
    ``"weighted"`` and False none (numpy's bools too); a word of :data:`AVERAGING` in
    any case."""
    if isinstance(value, (bool, np.bool_)):
        return "weighted" if value else None
    if value is not None and not isinstance(value, str):
        raise TypeError(f"averaging must be one of {list(_AVERAGING)}, True or False, got "
                        f"{value!r} ({type(value).__name__})")
    return _check_choice("averaging", value, _AVERAGING)


_RUN_DOC = """\
max_iter : int, default 100
    Budget of passes (the outer iterations of BCFW); a pass is ``n``
    block steps, and ``Result.nit`` counts passes.  The certificate passes
    every ``gap_every`` passes come on top, counted in
    ``extra["effective_passes"]``; a certificate between them (one the
    block-gap estimates ask for, ``gap_every``, or the first under a
    ``time_limit``) is a pass of the budget, so that
    ``max_iter`` bounds the passes of oracle calls apart from the scheduled
    certificates.  The structured SVM's ``StructuredSVM(max_passes=)``
    counts every certificate within its budget.
time_limit : float, optional
    Wall-time budget in seconds, counted from the call: validation, set-up
    (the start point, the compiled kernels and their numba compilation on
    first use) and callbacks count.  It is checked within passes (every
    256 Python block steps; compiled passes run in chunks of about 10 ms),
    so a run stops mid-pass, early enough for the closing certificate (one
    oracle call per block, when the stop fell between certificates) to
    fit: its cost is taken from the last certificate pass, or estimated as
    n block steps.
callback : callable, optional
    Called after each pass with an :class:`~frankwolfe.IterationState`
    (``k`` is the pass); return ``False`` to stop.
verbose : bool or int, default False
    Print a table (an int sets the period in passes).
history_every : int, default 1
    Period of the history records, in passes.
progress : bool, default False
    Show a tqdm progress bar over passes."""


@register("bcfw")
@solver(defaults={"max_iter": 100}, doc=_RUN_DOC)
def block_coordinate_frank_wolfe(
    objective: Objective,
    domain: ProductDomain,
    x0: np.ndarray | Sequence[np.ndarray] | None = None,
    *,
    block_order: str | BlockOrder = "uniform",
    block_step: str | BlockStep = "fw",
    step_size: str | StepSize | None = None,
    gap_every: int = 10,
    averaging: str | bool | None = None,
    certify: str = "last",
    cache: bool = False,
    cache_size: int = 100,
    cache_factor: float = 0.25,
    cache_nu: float = 0.01,
    atom_storage: str = "auto",
    gap_degree: float = 1.0,
    random_state: int | np.random.Generator | None = None,
    compiled: bool | None = None,
    batch_size: int | None = None,
    n_jobs: int | None = None,
    executor: Executor | Any = None,
    staleness: int = 0,
    round_step: str = "sequential",
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function over a product domain, one block at a time.

    Block-coordinate Frank-Wolfe (Lacoste-Julien, Jaggi, Schmidt, Pletscher,
    ICML 2013) with the gapBCFW refinements (Osokin et al., ICML 2016): gap
    sampling, block away / pairwise steps and an oracle cache.  Each step
    picks a block ``i``, reads ``g_i = grad f(x)[idx_i]``, gets
    ``s_i = LMO_i(g_i)`` (or a cached atom) and moves ``z_i`` toward it; the
    aggregate ``x`` changes on ``idx_i`` only.

    Parameters
    ----------
    objective : Objective
        Smooth convex objective of the aggregate ``x``.  Used hooks:
        ``partial_gradient(x, idx)`` (block gradient; make it O(|idx|)),
        ``exact_step_block(x, idx, d, g_idx)`` (block line search) and
        ``value_and_gradient`` (once per certificate pass).
    domain : ProductDomain
        Blocks with disjoint (Cartesian product) or overlapping (Minkowski
        sum) coordinate sets.
    x0 : ndarray or sequence, optional
        Start: a list of block points (any domain) or, for a Cartesian
        product, the full vector.  A block may also be given as its active
        set, a list of ``(Atom, weight)`` pairs (weights summing to 1): the
        block starts at their combination and, with away / pairwise steps,
        keeps them as its atoms (a warm start that loses no structure).
        Default: each block's oracle answer for the all-ones direction.
    block_order : {"uniform", "perm", "gap", "max_gap"} or BlockOrder, default "uniform"
        Block order.  ``"uniform"`` (the analysed one) draws
        ``rng.integers(n, size=n)`` per pass, ``"perm"`` a fresh
        ``rng.permutation(n)`` per pass; ``"gap"`` samples ``i`` with
        probability proportional to ``g_i ** gap_degree`` (latest block-gap
        estimates; unvisited blocks first, in index order); ``"max_gap"``
        takes the largest estimate.  Or an instance of a
        :class:`~frankwolfe.BlockOrder` (e.g. a user's own: implement
        ``pass_order(rng)``).
    block_step : {"fw", "away", "pairwise"} or BlockStep, default "fw"
        Block step (:class:`~frankwolfe.FWStep`, :class:`~frankwolfe.AwayStep`,
        :class:`~frankwolfe.PairwiseStep` or a user's
        :class:`~frankwolfe.BlockStep`).  Away and pairwise steps keep a
        per-block active set of atoms (keys and weights) and take drop steps.
    step_size : str or StepSize, optional
        A :mod:`frankwolfe.step_size` rule, called on a block view of the
        iterate (``k`` counts passes: block steps / n, a ``float``; a rule that
        indexes a table by ``k`` converts it, ``int(k)``).  ``"exact"`` (default
        when the objective offers ``exact_step_block`` or ``exact_step``),
        ``"agnostic"`` (``2 / (k + 2)`` = ``2n / (steps + 2n)``, default
        otherwise for FW steps), ``"short"`` (needs
        ``objective.smoothness``), ``"adaptive"`` (backtracking; O(dim) per
        trial, default otherwise for away / pairwise steps) or ``"armijo"``.
    gap_every : int, default 10
        A certificate pass (one oracle call per block) every this many passes,
        and whenever the sum of the block-gap estimates meets ``tol`` (or
        ``rtol``); it counts as one effective pass (one asked for by the
        estimates, also as one of ``max_iter``'s).  When such a certificate
        does not confirm ``tol``, the estimates ask again only after 1, 2, 4,
        ... passes: they are the block gaps of the steps, which can meet
        ``tol`` pass after pass while the certified point (an average, or
        the last iterate between its steps) does not.
    averaging : {None, "weighted", "uniform", "tail"} or bool, default None
        Also keep an average of the iterates: ``"weighted"`` is
        ``xbar <- k/(k+2) xbar + 2/(k+2) x`` per step (BCFW-wavg),
        ``"uniform"`` the plain mean of ``x_0 .. x_K`` (``x_k``: the iterate
        after ``k`` block steps), ``"tail"`` the 0.5-suffix average by the
        doubling trick (BCFW-tavg): after ``P`` passes, ``2^j <= P < 2^(j+1)``,
        the plain mean of the iterates of passes ``2^(j-1) + 1 .. P`` (after
        pass 1: of ``x_0 .. x_n``), between the last half and the last three
        quarters of the run; ``extra["average_window"]`` names the first and
        last averaged iterate.  O(|block|) per step.  ``True`` is ``"weighted"``
        (as the structured SVM's estimators read it) and ``False`` none, as
        ``None``.
    certify : {"last", "average"}, default "last"
        Which iterate the certificate passes (and ``tol``) are about; that
        iterate is returned as ``x``.
    cache : bool, default False
        gapBCFW oracle cache: reuse the best cached atom of block ``i`` when
        its gap is at least ``max(cache_factor * g_i, cache_nu * G / n)``
        (``g_i``: the block's latest gap estimate; ``G``: the last certified gap,
        before the first certificate +inf in the first pass and then the sum of the
        estimates; a zero factor drops its term), else call the oracle.
    cache_size : int, default 100
        Bound on the inactive cached atoms per block.
    cache_factor, cache_nu : float
        Cache thresholds (gapBCFW defaults 0.25 and 0.01).
    atom_storage : {"auto", "dense", "sparse"}, default "auto"
        How the per-block atoms of the cache and active sets are stored: rows
        of a dense array, or only their nonzeros (a shortest-path tree over a
        network's links: O(nnz) instead of O(block size) memory per atom).
        ``"auto"`` picks sparse for a block of at least 1024 coordinates whose
        first atom has at most half of them nonzero.  The iterates agree
        up to the order of summation in the atom scores.
    gap_degree : float, default 1
        Exponent of gap sampling.
    random_state : int or numpy.random.Generator, optional
        Seed of the block orders' draws (converted by
        :func:`frankwolfe._random.as_generator`).  A serial run, or one of rounds
        (``batch_size``, ``staleness`` 0), is reproducible for a fixed seed; lock-free
        passes (``round_step="lock_free"`` with ``n_jobs >= 2``) are not, as their
        threads' steps interleave as the timing falls, nor is where ``time_limit``
        ends a run.
    compiled : bool, optional
        Run whole passes in one numba call.  Available when the domain and
        the objective supply compiled kernels (the protocol of
        :mod:`frankwolfe.compiled`: a domain opts in as a
        ``BlockDomainHooks`` with ``compiled_blocks(x0)``, an objective
        through ``compiled_block_objective()`` or ``as_quadratic()``; built in
        for a :class:`~frankwolfe.QuadraticObjective` over a product of
        :class:`~frankwolfe.ProbabilitySimplex` blocks), with an order that
        draws whole passes or gap sampling, FW steps, no cache, a step rule
        with a compiled form (``"exact"`` or ``"agnostic"``) and debug mode
        off.  A domain may keep its block iterates in its own
        parametrization there (e.g. label marginals); the engine performs the
        same updates as the Python steps (equal up to rounding) and consumes
        the random stream identically (except asynchronous rounds under uniform
        sampling, where a block drawn again while in flight is asked at another
        time: docs/cluster.md).  When the objective's Hessian is
        diagonal and the domain offers fused kernels (curvature and move), no
        direction is materialized.  ``None`` (default): use it when
        available; ``True``: raise when it is not.  ``extra["engine"]`` says
        which engine ran (``"compiled"`` or ``"python"``) and
        ``extra["engine_reason"]`` why.
    batch_size : int, optional
        Mini-batch BCFW (Wang et al., ICML 2016; :mod:`.rounds`): each round
        takes the next ``batch_size`` blocks of the order, asks their oracles at
        the same point (in parallel through ``executor``), then applies their
        block steps one after the other, each with its line search at the
        current iterate; certificate passes ask all oracles through the same
        executor.  ``1`` is serial BCFW iterate for iterate (same seed, same
        steps); a ``batch_size`` above the number of blocks ``n`` is taken as ``n``
        (a round is at most a pass; ``extra["batch_size"]`` gives the one that ran).
        Rounds run compiled when the domain's compiled kernels offer
        round kernels (:class:`~frankwolfe.compiled.RoundKernels`;
        the chain SSVM dual does) and the executor runs in this process: the
        oracles of a round in one call per thread, its block steps in one call
        of the compiled driver; otherwise in the Python engine.  (``batch_size``
        None or 1 without a parallel executor is the serial compiled pass.)  Does
        not combine with ``cache``.
    n_jobs : int, optional
        Threads for the oracles of a round (a :class:`~frankwolfe.ThreadExecutor`;
        ``-1``: one per core) when ``executor`` is not given.
    executor : Executor or dask.distributed.Client, optional
        Where the oracles of a round run (:mod:`frankwolfe.parallel`): a
        :class:`~frankwolfe.SerialExecutor`, :class:`~frankwolfe.ThreadExecutor`,
        a ``dask.distributed.Client`` (wrapped in a
        :class:`~frankwolfe.DaskExecutor`: the blocks must be picklable) or a
        user's :class:`~frankwolfe.Executor`.  A lost cluster raises
        :class:`~frankwolfe.errors.ExecutorError` with the result so far (its
        last good iterate) as ``err.result``.
    staleness : int, default 0
        Asynchronous mini-batch BCFW (Wang et al.'s asynchronous variant, its delay
        bounded): the oracles of up to ``staleness`` rounds run ahead, on a helper
        thread, while the current round's steps are applied, each at the point
        where it was launched.  A step may then use an answer up to ``staleness``
        rounds old; each stays a vertex of its block and keeps its line search at
        the current iterate (f never increases), and certificates are asked at one
        point as before.  ``0``: synchronous rounds.  Needs ``batch_size``,
        ``n_jobs`` or ``executor``.  ``extra`` then also holds ``delays``
        (``delays[j]``: steps taken ``j`` block steps after their answer's point),
        ``mean_delay``, ``max_delay`` and ``oracle_wait_seconds``.
    round_step : {"sequential", "joint", "lock_free", "local"}, default "sequential"
        How the blocks of a mini-batch round move.  ``"sequential"``: one block step
        after the other, each with its own line search at the current iterate (a step
        size per block; the steps are serial).  ``"joint"``: Wang et al.'s mini-batch
        update, ``z_i <- z_i + gamma (s_i - z_i)`` for every block of the round with
        one ``gamma``, the step rule's along the summed direction ``sum_i A_i (s_i -
        z_i)`` (one line search per round; where the blocks' directions overlap, the
        shared step can be shorter than theirs).  Needs ``batch_size``, ``n_jobs`` or
        ``executor`` and Frank-Wolfe block steps.  Compiled when the domain's round
        kernels offer ``load`` with fused kernels (the chain SSVM dual) and the order
        draws whole passes (then the block-gap estimates keep the last certificate's);
        otherwise in the Python engine.  ``"lock_free"``: no rounds; the ``n_jobs``
        threads (or a :class:`~frankwolfe.ThreadExecutor`'s) each take whole block steps,
        oracle, line search and move, on their own blocks (block ``i`` on thread ``i mod
        n_jobs``), all at the same time against one shared gradient, without locks
        (Hogwild!-style, its adds atomic; :mod:`frankwolfe.algorithms.bcfw.lock_free`).
        Each thread moves a share of ``x`` of its own, folded into ``x`` after each pass,
        so ``x`` and the certificates are as in a serial run; within a pass a step may
        read a gradient a few concurrent steps stale.  Needs the compiled fused kernels
        with the domain's ``fork`` (the chain SSVM dual), an order that draws whole
        passes or gap sampling (drawn at each pass's start), and no averaging; the
        history then has ``step_seconds`` and ``fold_seconds``.  For blocks kept on the
        workers (``SSVMDual.from_source(..., resident=True)``) on a
        :class:`~frankwolfe.DaskExecutor` whose workers share the client's machine,
        the workers take the lock-free steps, each on its range of blocks, against a
        gradient and an ``x`` in shared memory
        (:mod:`frankwolfe.algorithms.bcfw.resident_lock_free`).  ``"local"``: for blocks
        kept on the workers (a domain with ``resident_blocks()``, e.g.
        ``SSVMDual.from_source(..., resident=True)``, on a
        :class:`~frankwolfe.DaskExecutor`, ``step_size="exact"``): each worker takes
        serial block steps on its blocks of the round at its own copy of the point, and
        one step size, the exact line search's along the sum of the workers' moves,
        combines them (f falls every round); ``batch_size=n``: one round a pass.
        ``extra["round_step"]`` says which ran.  See "Training on a cluster" in the
        documentation for passes to a certified gap.

    Returns
    -------
    Result
        ``x``, ``fun``, ``gap`` (certified), ``nit`` (passes) and counters;
        ``method`` is ``"bcfw"``.  ``extra`` holds ``engine``, ``engine_reason``, ``block_order``,
        ``block_step`` and ``step_size`` (the configuration), ``x_last``, ``x_average`` and
        ``average_window`` (with averaging),
        ``block_iterates`` (list of block points; a domain's compiled kernels may
        answer their own representation, e.g. a sparse array with one row per block:
        see ``BlockState.block_iterates``), ``block_gaps`` (latest
        estimates), ``n_block_steps``, ``effective_passes`` (oracle calls /
        n), ``cache_hits``, ``cache_misses``, ``active_set_size``,
        ``atom_store_bytes`` (memory of the stored atoms) and ``active_sets``
        (with away / pairwise steps or the cache: per block, the ``(key,
        weight)`` of its atoms of positive weight); with
        mini-batches also ``batch_size``, ``rounds``, ``executor``,
        ``oracle_seconds`` and ``certificate_oracle_seconds`` (wall time of the
        oracle phases of the rounds and of the certificate passes), and the history
        a ``rounds`` column.  The
        history has one row per pass with ``effective_passes``,
        ``oracle_calls``, ``time``, ``fun``, ``gap`` (NaN between
        certificates), ``gap_estimate`` (sum of block-gap estimates) and
        ``cache_hit_rate``.

    Notes
    -----
    Per step: O(|idx_i|) plus the objective's block gradient and the block
    oracle; with a cache or an active set add O(rows * |idx_i|) for the
    scores of the stored atoms.  A certificate pass costs one full gradient
    and ``n`` oracle calls.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import (FunctionObjective, ProbabilitySimplex, ProductDomain,
    ...                         block_coordinate_frank_wolfe)
    >>> y = np.array([0.9, 0.3, 0.2, 0.8])
    >>> f = FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y,
    ...                       exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    >>> dom = ProductDomain([ProbabilitySimplex(dim=2), ProbabilitySimplex(dim=2)])
    >>> res = block_coordinate_frank_wolfe(f, dom, tol=1e-9, random_state=0)
    >>> np.round(res.x, 6)
    array([0.8, 0.2, 0.2, 0.8])
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    if not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective, got {kind_of(objective)}")
    if not isinstance(domain, ProductDomain):
        raise TypeError(
            f"domain must be a ProductDomain (blocks with their own oracles), got "
            f"{type(domain).__name__}; wrap a single domain as ProductDomain([lmo])"
        )
    compiled = check_flag(compiled, "compiled", optional=True)
    cache = check_flag(cache, "cache")
    order = make_block_order(block_order, gap_degree)
    step = make_block_step(block_step)
    averaging = _averaging(averaging)
    certify = _check_choice("certify", certify, ("last", "average"))
    if certify == "average" and averaging is None:
        raise ValueError("certify='average' needs averaging ('weighted', 'uniform' or 'tail')")
    gap_every = _positive_int("gap_every", gap_every)
    cache_size = _positive_int("cache_size", cache_size)
    check_real(cache_factor, "cache_factor", "block_coordinate_frank_wolfe", low=0.0,
               finite=False)
    check_real(cache_nu, "cache_nu", "block_coordinate_frank_wolfe", low=0.0, finite=False)
    if atom_storage not in STORAGES:
        raise ValueError(f"atom_storage must be one of {STORAGES}, got {atom_storage!r}")
    rng = as_generator(random_state)
    rule = make_step_size(step_size, context="block", objective=objective, step=step)
    round_step = _check_choice("round_step", round_step,
                               ("sequential", "joint", "lock_free", "local"))
    if round_step != "sequential" and type(step).direction is not FWStep.direction:
        raise ValueError(f"round_step={round_step!r} moves blocks toward their Frank-Wolfe "
                         f"vertices: it needs block_step='fw', got block_step={block_step!r}")
    schedule = _schedule(batch_size, n_jobs, executor, cache, staleness, round_step,
                         domain.n_blocks)
    # the run holds the executor until it returns (one run at a time: the blocks, pool or
    # shards on it are the run's), given back whatever happens
    held = None if schedule is None else schedule.executor
    if held is not None:
        held.claim()
    try:
        # the clock starts here: set-up and compilation count against time_limit
        monitor = options.monitor("bcfw")
        monitor.bounds = gives_bounds(objective, domain)
        try:
            state = BlockState(objective, domain, order, rng,
                               keep_atoms=cache or step.uses_active_set,
                               cache_size=cache_size, atom_storage=atom_storage,
                               averaging=averaging)
            run_pass, reason = make_pass(state, x0, step=step, rule=rule, cache=cache,
                                         cache_factor=cache_factor, cache_nu=cache_nu,
                                         schedule=schedule, compiled=compiled)
            engine = BlockEngine(state, run_pass, reason, certify=certify,
                                 gap_every=gap_every, cache=cache,
                                 labels={"block_order": order.name, "block_step": step.name,
                                         "step_size": repr(rule)})
            if compiled and run_pass.name != "compiled":
                raise ValueError(f"compiled=True but the compiled pass is not available: "
                                 f"{reason}")
            result = drive(engine, monitor)
        except BaseException:
            if schedule is not None:
                schedule.abort()
            raise
        if schedule is not None:
            schedule.close()
        return result
    finally:
        if held is not None:
            held.release()


def _schedule(batch_size: Any, n_jobs: Any, executor: Any, cache: bool,
              staleness: Any = 0, round_step: str = "sequential",
              n_blocks: int | None = None) -> Schedule | None:
    """The mini-batch schedule, or ``None`` for serial block steps (``batch_size`` None or
    1 in this process: the compiled pass may then serve).  A round holds at most the
    ``n_blocks`` of a pass, and rounds run ahead at most the rest of the pass (a pass
    ends with no oracle in flight): larger values are cut to those (``10**30`` asked
    numpy for an array of that size)."""
    ahead = _nonnegative_int("staleness", staleness)
    if round_step == "lock_free":
        if batch_size not in (None, 1) or ahead:
            raise ValueError(f"round_step='lock_free' takes no rounds: give n_jobs, a "
                             f"ThreadExecutor or (for blocks kept on the workers) a "
                             f"DaskExecutor, not batch_size={batch_size!r} or "
                             f"staleness={staleness!r}")
        if cache:
            raise ValueError("cache=True does not combine with round_step='lock_free' (each "
                             "thread's steps ask their oracles)")
        return Schedule(1, make_executor(executor, n_jobs), lock_free=True)
    if isinstance(n_jobs, (bool, np.bool_)):  # True == 1: it ran serially, unasked
        raise TypeError(f"n_jobs must be an integer (threads) or None, got {n_jobs!r}")
    if batch_size is None and executor is None and n_jobs in (None, 1):
        if ahead:
            raise ValueError(f"staleness={staleness!r} runs oracles ahead of the steps of "
                             "mini-batch rounds: give batch_size, n_jobs or executor too")
        if round_step != "sequential":
            raise ValueError(f"round_step={round_step!r} is how the blocks of a mini-batch "
                             "round move: give batch_size, n_jobs or executor too")
        return None
    tau = 1 if batch_size is None else _positive_int("batch_size", batch_size)
    if n_blocks is not None:
        tau = min(tau, n_blocks)
        ahead = min(ahead, -(-n_blocks // tau))
    ex = make_executor(executor, n_jobs)
    if batch_size is None and not ahead and executor is None and getattr(ex, "n_jobs", 1) > 1:
        # rounds of one block, none ahead: one oracle at a time on a pool of threads,
        # slower than the serial pass it replaced
        warn_user(f"block_coordinate_frank_wolfe: n_jobs={n_jobs!r} but rounds of one "
                      "block (no batch_size) and none ahead (staleness=0) run one oracle "
                      "at a time; give batch_size (the number of threads or more), "
                      "staleness, or round_step='lock_free'", UserWarning)
    if cache:
        raise ValueError("cache=True does not combine with mini-batches (batch_size, n_jobs or "
                         "executor): a round asks its oracles before any cached atom is scored")
    return Schedule(tau, ex, ahead, joint=round_step == "joint", local=round_step == "local")

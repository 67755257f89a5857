"""The compiled block protocol: what a domain and an objective supply to run block
passes in numba.

A domain that opts in (:class:`BlockDomainHooks`) answers its own questions through
numba kernels bundled in :class:`CompiledBlocks` (the block oracle and direction, the
commit of a step, and for a fused fast path the curvature of its direction and the
direction in a structured form, :class:`~frankwolfe.compiled.StructuredDirection`,
instead of materialized), optionally with :class:`PairwiseKernels` (pairwise block steps) and
:class:`RoundKernels` (mini-batch rounds); an objective answers its own through
:class:`CompiledObjective` (slope and curvature along a sparse direction, the update
of ``x`` and ``grad f``).  The driver (:mod:`.driver`) owns everything else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .structured import StructuredDirection

__all__ = ["CompiledBlocks", "PairwiseKernels", "RoundKernels", "CompiledObjective",
           "BlockDomainHooks"]


class CompiledBlocks:
    """What a product domain supplies to run BCFW passes in numba.

    Parameters
    ----------
    direction : numba function
        ``direction(state, i, g, want, idx, val) -> (nnz, gap, score)``:
        calls block ``i``'s oracle on the gradient ``g`` (the full shared-space
        gradient, kept up to date by the driver) and returns the block gap
        ``<g, A_i (z_i - s_i)>`` and the vertex score ``<g, A_i s_i>``; when
        ``want`` is true it also writes the direction ``A_i (s_i - z_i)`` as
        ``nnz`` unique indices / values into ``idx`` / ``val``.  It remembers
        ``s_i`` for :attr:`commit` (and :attr:`curvature` / :attr:`step`).
    commit : numba function
        ``commit(state, i, gamma)``: ``z_i <- z_i + gamma (s_i - z_i)`` for
        the vertex of the last ``direction`` call.
    state : NamedTuple
        The domain's typed record of arrays, handed to its kernels.
    max_nnz : int
        Upper bound on ``nnz`` (size of the scratch buffers).
    start : callable
        ``start(x)``: add the aggregate ``sum_i A_i z_i`` of the start point
        to the zero vector ``x`` (Python, once).
    block_points : callable, optional
        ``block_points()``: the block iterates for ``Result.extra`` (any
        object the domain understands again as a warm start).
    describe : numba function, optional
        The fused path, for objectives with a diagonal Hessian ``diag(h)``
        (``CompiledObjective.hessian_diag``): ``describe(state, i, sd)`` writes
        the direction ``d = A_i (s_i - z_i)`` of the last ``direction`` call
        into the :class:`~frankwolfe.compiled.StructuredDirection` ``sd`` (scaled rows of a data
        matrix plus explicit entries: what the domain's structure makes cheap)
        without materializing it; the driver then moves ``x`` and ``g`` along
        it (:func:`~frankwolfe.compiled.apply_direction`).  Goes with ``sync``, ``curvature`` and
        ``layout``.
    sync : numba function, optional
        ``sync(state, g)``: rebuild whatever the domain derives from the
        gradient (e.g. a transposed copy its oracle reads contiguously); called
        by the fused driver whenever ``g`` was replaced.
    curvature : numba function, optional
        ``curvature(state, i, h) -> d^T diag(h) d`` for the direction of the
        last ``direction`` call (computed from the domain's structure).
    accepts : callable, optional
        ``accepts(h) -> bool``: whether the fused kernels handle this
        Hessian diagonal (Python, once; default: any).
    layout : StructuredDirection, optional
        The scratch record ``describe`` writes into (from
        :func:`~frankwolfe.compiled.structured_direction`, sized by the domain).
    moved : numba function, optional
        ``moved(state, sd, g)``: after the driver moved along ``sd``, refresh what
        the domain derives from ``g`` on the direction's support (default: nothing).
    rounds : RoundKernels, optional
        What mini-batch rounds need to run compiled (the oracles of a round asked
        at one point, in parallel, their block steps then taken by the driver).
    pairwise : PairwiseKernels, optional
        The away atom and the weight move of pairwise block steps, for BCFW runs
        with ``block_step="pairwise"`` (the domain keeps its blocks' active sets).
    lookup : numba function, optional
        The oracle cache of gapBCFW (``cache=True``):
        ``lookup(state, i, g, threshold, k, want, idx, val) -> (nnz, gap, score, hit)``
        scores block ``i``'s stored atoms at ``g``; when the best one's gap
        ``<g, z_i - a>`` is at least ``threshold`` it becomes the vertex of the step
        (``hit``, used at step ``k``: the stamp of least-recent use), as after a
        ``direction`` call, else ``hit`` is false and the driver asks the oracle.  The
        driver calls it before every block step (``threshold`` is ``inf`` or NaN when
        nothing may serve: no cache), so the domain knows the step count of the
        ``direction`` call that may follow.
    outputs : callable, optional
        ``outputs()``: entries of ``Result.extra`` the domain's kernels keep (Python,
        once at the end), e.g. ``active_sets`` (each block's ``(key, weight)``
        pairs), ``active_set_size``, ``atom_store_bytes``, ``n_drop_steps``.
    prepare : callable, optional
        ``prepare(steps) -> room``: before each call of the driver's pass (Python): a
        domain whose kernels store what they answer makes room for up to ``steps``
        block steps and returns how many it made room for (at least 1; the driver
        then runs that many and asks again); it may replace :attr:`state` (its
        records hold arrays only, which numba cannot grow).  Certificates store only
        what fits.
    oracle : numba function, optional
        ``oracle(state, i, g) -> (gap, score)``: what ``direction`` answers when
        ``want`` is false (the vertex remembered for ``commit`` the same way), as a
        kernel of its own: the driver calls it wherever it needs no materialized
        direction (the fused steps, the certificates), so a first run compiles
        ``direction``'s emission code only for the steps that use it.  Default:
        ``direction`` with ``want`` false.
    fork : callable, optional
        ``fork() -> (state, layout)``: kernels' state for another thread, sharing
        :attr:`state`'s data and block iterates (and what it derives from the
        gradient) but with scratch of its own, and a :attr:`layout` of its own (the
        fused kernels').  With it (and the fused kernels) lock-free passes run
        (``round_step="lock_free"``: threads take block steps on disjoint blocks at
        once, :mod:`~frankwolfe.algorithms.bcfw.lock_free`).
    """

    def __init__(self, direction, commit, state, max_nnz, start, block_points=None,
                 describe=None, sync=None, curvature=None, accepts=None, layout=None,
                 moved=None, rounds=None, pairwise=None, lookup=None,
                 outputs=None, prepare=None, oracle=None, fork=None) -> None:
        if (describe is None) != (sync is None):
            raise ValueError("CompiledBlocks: `describe` and `sync` go together (give both or "
                             "neither), with `curvature` and `layout`")
        if (describe is None) != (curvature is None) or (describe is None) != (layout is None):
            raise ValueError("CompiledBlocks: `describe`, `sync`, `curvature` and `layout` "
                             "go together")
        if layout is not None and not isinstance(layout, StructuredDirection):
            raise TypeError(f"CompiledBlocks: `layout` must be a StructuredDirection, got "
                            f"{type(layout).__name__}")
        self.direction = direction
        self.commit = commit
        self.state = state
        self.max_nnz = int(max_nnz)
        self.start = start
        self.block_points = block_points
        self.describe = describe
        self.sync = sync
        self.curvature = curvature
        self.layout = layout
        self.moved = moved
        self.accepts = accepts
        self.rounds = rounds
        self.pairwise = pairwise
        self.lookup = lookup
        self.oracle = oracle
        self.outputs = outputs
        self.prepare = prepare
        self.fork = fork

    @property
    def fused(self) -> bool:
        """Whether the domain offers the fused kernels."""
        return self.describe is not None


class PairwiseKernels:
    """What a domain adds to its :class:`CompiledBlocks` for compiled pairwise block
    steps (``compiled_driver(..., pairwise=...)``): a domain whose blocks keep their
    points as weights on stored atoms also answers which active atom ``a`` of block
    ``i`` has the largest score ``<g, a>`` and what ``s_i - a`` is.

    Parameters
    ----------
    away : numba function
        ``away(state, i, g, idx, val) -> (nnz, gamma_max)``: for the vertex ``s_i``
        of the last ``direction`` call, the active atom ``a`` of block ``i`` with the
        largest ``<g, a>``; writes ``s_i - a`` as ``nnz`` sorted unique indices /
        values into ``idx`` / ``val`` and returns the weight of ``a`` (``nnz = 0``:
        no pairwise move, e.g. ``a = s_i``).
    move : numba function
        ``move(state, i, gamma)``: weight ``gamma`` from ``a`` to ``s_i`` (``a`` is
        dropped, its weight exactly 0, when ``gamma`` is ``gamma_max``).
    """

    def __init__(self, away, move) -> None:
        self.away = away
        self.move = move


class RoundKernels:
    """What a domain adds to its :class:`CompiledBlocks` for compiled mini-batch rounds
    (:mod:`~frankwolfe.algorithms.bcfw.rounds`): the oracles of a round's blocks answered
    at the round's point, each block's vertex kept in a table, then the block steps
    taken by the core's driver (``compiled_driver(..., rounds=True)``), each with its
    line search at the current iterate, as in a compiled pass.

    Parameters
    ----------
    point : callable
        ``point(g) -> p``: what the oracles of a round read from the gradient ``g``
        (Python, once per round: e.g. the weights ``g`` stands for), handed to every
        chunk of :attr:`vertices`.  With asynchronous rounds (``staleness``) a round's
        oracles run while later points are taken and while the steps change ``g``:
        ``p`` must not be overwritten by a later ``point`` call, and arrays of the
        domain's state that the steps keep current go through :attr:`snapshot`.
    vertices : callable
        ``vertices(which, p)``: the oracle answers of blocks ``which`` at ``p``, written
        into ``table`` (Python; one numba call that releases the GIL: several threads
        call it at once on disjoint lists).
    recall : numba function
        ``recall(state, table, i, g, want, idx, val) -> (nnz, gap, score)``: as
        :attr:`CompiledBlocks.direction` for the vertex of block ``i`` stored in
        ``table`` (no oracle call): the block gap and vertex score at ``g``, and the
        direction when ``want``; what ``commit`` (and the fused kernels) then read.
    table : NamedTuple
        The typed record of the stored vertices, handed to ``recall``.
    store : callable, optional
        ``store(which, rows)``: write into ``table`` the rows of blocks ``which``
        computed elsewhere (opaque to the core: what the domain's batch block
        oracle's ``rows(which, gradient)`` returns, e.g. on the workers of a
        :class:`~frankwolfe.DaskExecutor`).  With it, rounds run compiled on
        executors outside this process too.
    snapshot : callable, optional
        ``snapshot(p, copy) -> p'``: a point whose arrays the block steps do not change
        (copies of those they keep current), taken for asynchronous rounds, whose
        oracles run during the steps of the round before; without it ``p`` must
        hold no such array (else the oracles read a point between two rounds',
        which depends on the threads' timing).  ``copy(a, where=None)`` is the core's
        copy of such an array ``a``, kept current from the coordinates the steps
        touched (:class:`~frankwolfe.compiled.Snapshots`: O(touched) a round, not a
        whole copy): ``where(index)`` gives the coordinates of ``a`` that may change
        when the gradient's coordinates ``index`` do (None: ``a`` is the gradient's
        layout); the copy is read until the round's oracles return.
    recall_gap : numba function, optional
        ``recall_gap(state, table, i, g) -> (gap, score)``: ``recall`` with ``want``
        false, as a kernel of its own (as :attr:`CompiledBlocks.oracle`): the driver
        calls it wherever it needs no direction, so the direction's code compiles only
        for runs that materialize it.  Default: ``recall`` with ``want`` false.
    load : numba function, optional
        ``load(state, table, i)``: block ``i``'s vertex stored in ``table`` becomes the
        one ``curvature`` / ``describe`` / ``commit`` read, as after ``recall``, without
        scoring it.  With it (and the fused kernels) joint rounds run compiled
        (``round_step="joint"``: the driver sums the round's directions, takes one
        step, then commits every block with it); without it they run in Python.
    moved_at : numba function, optional
        ``moved_at(state, coords, count, g)``: :attr:`CompiledBlocks.moved` for a joint
        round, once: refresh what the domain derives from ``g`` at the coordinates
        ``coords[:count]`` (those the round's step changed).  Without it the driver
        writes each block's direction again to call ``moved`` with it; a domain with
        ``moved`` should give it.
    """

    def __init__(self, point, vertices, recall, table, store=None, snapshot=None,
                 recall_gap=None, load=None, moved_at=None) -> None:
        self.point = point
        self.vertices = vertices
        self.recall = recall
        self.table = table
        self.store = store
        self.snapshot = snapshot
        self.recall_gap = recall_gap
        self.load = load
        self.moved_at = moved_at


class CompiledObjective:
    """What an objective supplies to run BCFW passes in numba.

    Either the objective is quadratic along lines (``f(x + gamma d) = f(x) +
    gamma slope + gamma^2 curv / 2``), which makes the exact step and the exact
    change of ``f`` available from two numbers; or it gives ``search``, its exact
    line search (the core builds the three kernels of a separable objective from
    one per-coordinate kernel: :func:`~frankwolfe.compiled.separable_objective`),
    and ``update`` returns the exact change of ``f``.

    Parameters
    ----------
    line : numba function
        ``line(data, x, g, idx, val, nnz) -> (slope, curv)`` for the sparse
        direction ``(idx[:nnz], val[:nnz])``.
    update : numba function
        ``update(data, x, g, idx, val, nnz, gamma)``: ``x += gamma d`` and the
        gradient ``g`` updated to match.
    data : tuple
        Arrays handed to both kernels.
    hessian_diag : ndarray, optional
        The Hessian's diagonal ``h`` when the Hessian is diagonal: a domain's
        fused kernels (:class:`CompiledBlocks` ``curvature`` / ``step``) then
        compute the curvature from their own structure and move ``x`` and ``g``
        without materializing the direction.
    search : numba function, optional
        ``search(data, x, idx, val, nnz, gamma_max) -> gamma``: the minimizer of ``f``
        along the sparse direction on ``[0, gamma_max]``; with it the driver takes
        exact steps through it (``rule`` serves the other step rules) and ``update``
        returns the exact change of ``f`` (``update(...) -> df``).
    """

    def __init__(self, line, update, data, hessian_diag: np.ndarray | None = None,
                 search=None) -> None:
        if search is not None and hessian_diag is not None:
            raise ValueError("CompiledObjective: `search` (a line search of its own) and "
                             "`hessian_diag` (the fused quadratic steps) exclude each other")
        self.line = line
        self.update = update
        self.data = data
        self.search = search
        self.hessian_diag = (None if hessian_diag is None
                             else np.ascontiguousarray(hessian_diag, dtype=float))


class BlockDomainHooks:
    """Mixin of a product domain with hooks for block-coordinate methods (opt-in):
    its natural start and its compiled block kernels."""

    #: what the compiled kernels serve beyond Frank-Wolfe block steps, asked before
    #: :meth:`compiled_blocks` builds them: ``"pairwise"`` (pairwise block steps,
    #: :class:`PairwiseKernels`), ``"cache"`` (gapBCFW's cache, ``CompiledBlocks.lookup``).
    #: A domain that declares any is called as ``compiled_blocks(x0, cache_size=...,
    #: cache=...)`` (the inactive atoms to keep per block; whether the run uses them as
    #: the cache, and then keeps the answers of certificates too)
    compiled_features: frozenset[str] = frozenset()

    def initial_block_points(self) -> list[np.ndarray] | np.ndarray | None:
        """Block points to start from when the caller gives none: a list, or one array
        of all of them block after block (taken over by the run, without per-block
        checks: cheap for many blocks); ``None``: each block's oracle answer for the
        all-ones direction."""
        return None

    def compiled_blocks(self, x0: Any) -> CompiledBlocks | None:
        """The kernels for a run from ``x0`` (``None``: the domain's own start), or
        ``None`` when they do not apply to this run."""
        return None

    def resident_blocks(self) -> Any:
        """Blocks that live where an executor's workers are, or ``None`` (the default:
        the blocks live in this process).  An object with ``shard(range)`` giving the
        picklable piece of those blocks that one worker keeps, iterates included, with
        the methods :class:`~frankwolfe.algorithms.bcfw.resident.ResidentShard` calls.
        A domain that gives them holds no block iterates here: its runs take resident
        joint or local rounds (:mod:`frankwolfe.algorithms.bcfw.resident`)."""
        return None

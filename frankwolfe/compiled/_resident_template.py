"""Source of the core's compiled halves of a resident joint round (see
:func:`frankwolfe.compiled.driver.resident_kernels`): the calls a shard of blocks kept
on a cluster worker answers (:mod:`frankwolfe.algorithms.bcfw.resident`).  They are
the JOINT branch of ``_pass_template`` cut where the client takes over: the shard sums
its round blocks' directions, the client chooses the one step size for the sum of all
shards', the shard commits its blocks with it.  No step size is chosen here.

Not executed from here: ``resident_kernels`` binds the free names below to a domain's
kernels (``load``, ``curvature``, ``describe``, ``commit`` of its
:class:`~frankwolfe.compiled.CompiledBlocks`; ``recall_gap``, ``moved_at`` of its
:class:`~frankwolfe.compiled.RoundKernels`) and compiles each function with numba, as a
module written out like the pass driver's (so numba caches it on every worker).
"""
# ruff: noqa: F821 (the free names are bound by resident_kernels)


def round_directions(dstate, table, which, h, sd, tr, dx):  # pragma: no cover - compiled
    """``dx += d_i`` for the blocks ``which`` (distinct) at their vertices stored in
    ``table``, the support of the sum listed in ``tr`` (a :class:`.touched.Touched`)."""
    for k in range(which.size):
        i = which[k]
        load(dstate, table, i)
        curvature(dstate, i, h)
        describe(dstate, i, sd)
        touch_direction(sd, tr, dx)


def round_commit(dstate, table, which, gamma):  # pragma: no cover - compiled
    """Move each of the blocks ``which`` towards its stored vertex by ``gamma``."""
    for k in range(which.size):
        i = which[k]
        load(dstate, table, i)
        commit(dstate, i, gamma)


def round_gaps(dstate, table, n, g):  # pragma: no cover - compiled
    """``(sum of the block gaps, sum of the vertex scores)`` of blocks ``0 .. n - 1`` at
    ``g``, their vertices stored in ``table`` at ``g``."""
    total = 0.0
    scores = 0.0
    for i in range(n):
        gap, score = recall_gap(dstate, table, i, g)
        total += gap
        scores += score
    return total, scores


def round_moved(dstate, coords, g):  # pragma: no cover - compiled
    """What the domain derives from ``g``, refreshed at ``coords`` (the coordinates a
    step changed)."""
    moved_at(dstate, coords, coords.size, g)

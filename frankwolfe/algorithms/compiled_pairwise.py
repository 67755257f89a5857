"""Pairwise block steps in numba: the compiled driver's protocol with an away atom.

The compiled pass of :mod:`.compiled_blocks` takes Frank-Wolfe block steps
(``d = s_i - z_i``).  A domain whose blocks keep their points as weights on
stored atoms can also answer the question a pairwise step needs: which active
atom ``a`` of block ``i`` has the largest score ``<g, a>``, and what is
``s_i - a`` (:class:`PairwiseKernels`).  The driver of this module then moves
weight from ``a`` to ``s_i`` (``gamma <= w_a``) with the step rule's numba
kernel and the objective's line and update kernels, exactly as the Python
:class:`~.block_steps.PairwiseStep` does through a ``StepSize``; the domain's
kernels only answer oracle and geometry questions.

Kept beside :func:`~.compiled_blocks.compiled_driver` (same records, same
kernels of the objective and the step rule) rather than inside it while that
driver's update path changes; the two should become one driver with the
block step as an option.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from .compiled_blocks import CompiledBlocks, CompiledObjective

__all__ = ["PairwiseKernels", "compiled_pairwise_driver"]


class PairwiseKernels:
    """What a domain adds to its :class:`~.compiled_blocks.CompiledBlocks` for
    compiled pairwise steps.

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


_DRIVERS: dict = {}


def compiled_pairwise_driver(blocks: CompiledBlocks, pairwise: PairwiseKernels,
                             objective: CompiledObjective, rule: Callable) -> Callable:
    """The (memoized) numba pass of pairwise block steps for these kernels.

    ``run_pass(t0, t1, order, est, dstate, odata, x, g, rparams, k, n, idx, val) ->
    (k, last_gamma, df)`` runs the steps ``t0 .. t1 - 1`` on the blocks
    ``order[t]`` (a pass order drawn up front; gap sampling is the Frank-Wolfe
    driver's only): the block's Frank-Wolfe gap (recorded in ``est``), then,
    when it is positive, the pairwise direction, the step
    ``rule(rparams, k / n, slope, curv, gamma_max)`` along it and the updates of
    ``x``, ``g`` (the objective's kernels) and the weights (``move``).  ``df`` is the
    exact change of ``f``.  Certificates: the ``certify`` of
    :func:`~.compiled_blocks.compiled_driver` (Frank-Wolfe gaps).
    """
    direction, away, move = blocks.direction, pairwise.away, pairwise.move
    line, update = objective.line, objective.update
    key = (direction, away, move, line, update, rule)
    hit = _DRIVERS.get(key)
    if hit is not None:
        return hit

    @njit(nogil=True)
    def run_pass(t0, t1, order, est, dstate, odata, x, g, rparams, k, n, idx,
                 val):  # pragma: no cover - compiled
        gamma = np.nan
        df = 0.0
        for t in range(t0, t1):
            i = order[t]
            _, gap, _ = direction(dstate, i, g, False, idx, val)
            est[i] = gap if gap > 0.0 else 0.0
            gamma = 0.0
            if gap > 0.0:
                nnz, gmax = away(dstate, i, g, idx, val)
                if nnz > 0 and gmax > 0.0:
                    slope, curv = line(odata, x, g, idx, val, nnz)
                    gamma = rule(rparams, k / n, slope, curv, gmax)
                    if gamma > 0.0:
                        df += gamma * (slope + 0.5 * gamma * curv)
                        update(odata, x, g, idx, val, nnz, gamma)
                        move(dstate, i, gamma)
            k += 1
        return k, gamma, df

    _DRIVERS[key] = run_pass
    return run_pass


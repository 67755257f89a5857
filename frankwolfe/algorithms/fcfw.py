"""Fully corrective Frank-Wolfe (FCFW).

After each Frank-Wolfe vertex, the iterate is re-optimized over the convex
hull of all active atoms (Holloway 1974; Lacoste-Julien and Jaggi, NeurIPS
2015).  On the shared loop this is one step along ``d = x_c - x`` with
``x_c`` the corrective minimizer, so the step rule, the certificate and the
convexity check stay those of every other variant; with the default exact
line search the step is ``gamma = 1``, i.e. ``x`` becomes ``x_c``.

This module is the driver (its arguments' checks, the choice of the joint or the
block-wise corrective step); the two variants are in :mod:`.fcfw_variants`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

import numpy as np

from .._numbers import as_real, check_whole
from ..active_set import ActiveSet
from ..atoms import Atom
from ..lmo.base import LMO
from ..lmo.product import ProductDomain
from ..objectives.base import Objective
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import StepSize
from .active_variant import split_start
from .fcfw_variants import _CORRECTIVE, _block_start, _BlockCorrective, _FullyCorrective
from .loop import Variant, run_frank_wolfe

__all__ = ["fully_corrective_frank_wolfe"]


@register("fcfw")
@solver()
def fully_corrective_frank_wolfe(
    objective: Objective,
    domain: LMO,
    x0: np.ndarray | Atom | ActiveSet | Sequence[Atom] | None = None,
    *,
    corrective: str = "auto",
    cvxpy_solver: str | None = None,
    cvxpy_options: dict[str, Any] | None = None,
    blocks: str | bool = "auto",
    corrective_tol: float = 1e-8,
    corrective_max_sweeps: int = 10000,
    prune_after: int | None = None,
    blocks_per_step: int | None = None,
    gap_every: int | None = None,
    step_size: str | StepSize | None = None,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Minimize a smooth convex function with fully corrective Frank-Wolfe.

    Each iteration adds the Frank-Wolfe vertex ``v = LMO(grad f(x))`` to the
    active set and re-solves ``min f(sum_a w_a a)`` over the weights ``w``
    on the simplex of the active atoms; atoms whose weight is zero are
    dropped.  Few outer iterations (each one the price of a small QP), which
    pays off when the oracle or the gradient is expensive.

    Parameters
    ----------
    objective : Objective
        ``LeastSquares`` or ``QuadraticObjective`` (exact corrective QP from
        cached per-atom products), any objective whose
        :meth:`~frankwolfe.Objective.as_quadratic` returns an equivalent
        ``QuadraticObjective`` (the QP runs on that quadratic; values and
        gradients stay the objective's own), or any objective implementing
        ``to_cvxpy(x_expression)``.
    domain : LMO
        The domain, given by its linear minimization oracle.
    x0 : Atom, ActiveSet or ndarray, optional
        As in :func:`~frankwolfe.away_step_frank_wolfe`.
    corrective : {"auto", "qp", "cvxpy"}, default "auto"
        The corrective solver.  ``"qp"``: the exact active-set QP on the
        Gram matrix of the atoms (:func:`~frankwolfe.algorithms.simplex_qp.simplex_qp`),
        O(k^3) per solve for k atoms and no pass over the data.  ``"cvxpy"``:
        ``objective.to_cvxpy`` over the hull (accurate to the solver's
        tolerance, about 1e-8).  ``"auto"``: the QP for quadratic
        objectives up to 3000 active atoms, cvxpy otherwise.
    cvxpy_solver : str, optional
        cvxpy solver name (default: cvxpy's choice).
    cvxpy_options : dict, optional
        Extra keyword arguments of ``Problem.solve``.
    blocks : {"auto", True, False}, default "auto"
        On a :class:`~frankwolfe.ProductDomain` (``"auto"``: whenever it has
        more than one block; ``True``: one block too), keep one working set
        of block vertices per block and re-optimize over the *product* of the
        per-block hulls (one simplex of weights per block; the n-slack
        cutting plane of SVMstruct).
        The hull of the joint vertices (``blocks=False``) is far smaller and
        makes little progress per oracle call.  Block vertices stay in their
        working set with weight 0 once met.  ``x0`` is then ``None`` (each
        block's answer to the all-ones direction) or a list of one start
        :class:`~frankwolfe.Atom` per block, in block coordinates.  For a
        :class:`~frankwolfe.QuadraticObjective` (or an objective whose
        ``as_quadratic()`` returns one) the corrective QP is solved by
        block-coordinate pairwise Frank-Wolfe with exact steps
        (:class:`~frankwolfe.algorithms.corrective.BlockQuadraticQP`); other
        objectives go through cvxpy with one simplex constraint per block.
    corrective_tol : float, default 1e-8
        Block mode, quadratic objectives: the corrective QP stops when its
        restricted Frank-Wolfe gap falls below ``corrective_tol`` times its
        value at the warm start (itself at most the outer gap).  Values below
        1 keep the linear rate of exact corrections; 1e-3 is plenty in
        practice, smaller values match an exact solve.
    corrective_max_sweeps : int, default 10000
        Block mode, quadratic objectives: budget of one corrective solve, in
        sweeps of its block steps (a sweep visits every block holding two
        atoms or more, or, between full sweeps, those holding most of the
        gap).  The solve is warm-started at the previous weights, so a small
        budget still makes the progress of a block-coordinate pass and more;
        it bounds the time of an iteration when the QP is ill-conditioned
        (the n-slack cutting plane at small regularization), at the price of
        a less exact correction.  The certified gap is the outer one either
        way.
    prune_after : int, optional
        Block mode: drop a block vertex from its working set once its weight
        has been exactly 0 after this many consecutive corrective solves
        (inactive cutting planes), so that the working sets, the memory and
        the time of a corrective solve stay bounded; the oracle may add it
        again later.  Default None keeps every vertex met (the working sets
        grow by up to one vertex per block and iteration); 10 is a good
        choice for the n-slack cutting plane (it bounds the OCR working sets
        with the same primal curve).  With ``blocks_per_step``, counted at
        the end of each cycle over the blocks instead.
    blocks_per_step : int, optional
        Block mode: call the oracles of this many blocks per iteration (the
        next ones, cyclically, at the current iterate) before each
        corrective solve, as SVMstruct's n-slack cutting plane re-solves its
        QP every ``-n`` new constraints; a cycle over all blocks then takes
        ``ceil(n_blocks / blocks_per_step)`` iterations and counts as one
        oracle call.  The later blocks of a cycle see the planes of the
        earlier ones, which avoids the zig-zag of planes all cut at one
        point (at the start every block's plane is cut at the same point).
        Such an iteration's gap covers its blocks only and is not a
        certificate (the history shows NaN; the returned point is certified
        by one more oracle call when the run stops, and every ``gap_every``
        cycles).  Default None: all blocks, a certified gap every iteration.
    gap_every : int, optional
        With ``blocks_per_step``: every this many cycles, the first
        iteration of the next cycle calls every block's oracle (its gap is a
        certificate, so ``tol`` can stop the run there; one more oracle call,
        counted); only the iteration's own blocks take their planes from it.
        Default None: no certificate before the run stops.
    step_size : str or StepSize, optional
        Rule along ``d = x_c - x`` (``gamma_max = 1``); the default exact
        line search gives ``gamma = 1``.
    resum_every, sparsify_tol
        Drift control, as in :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``active_set`` is the final :class:`~frankwolfe.ActiveSet`; ``extra``
        counts ``n_corrective_qp``, ``n_corrective_cvxpy``,
        ``n_corrective_failures`` (cvxpy failures, replaced by a Frank-Wolfe
        step), ``n_qp_iterations`` and ``n_drop_steps``.  In block mode
        ``active_set`` is a list of one :class:`~frankwolfe.ActiveSet` per
        block (block coordinates, positive weights), ``n_qp_iterations``
        counts sweeps of the block QP and ``n_block_atoms`` the block
        vertices met.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import fully_corrective_frank_wolfe, QuadraticObjective, ProbabilitySimplex
    >>> y = np.array([0.8, 0.6, -0.2])
    >>> f = QuadraticObjective(np.eye(3), -y)
    >>> res = fully_corrective_frank_wolfe(f, ProbabilitySimplex(dim=3), tol=1e-12)
    >>> np.round(res.x, 6), res.nit
    (array([0.6, 0.4, 0. ]), 1)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    where = "fully_corrective_frank_wolfe"
    # (`in` compared an array elementwise: "truth value ambiguous")
    if not (isinstance(blocks, (bool, np.bool_))
            or (isinstance(blocks, str) and blocks == "auto")):
        raise ValueError(f"{where}: `blocks` must be 'auto', True or False, got {blocks!r}")
    blocks = blocks if isinstance(blocks, str) else bool(blocks)
    if not (isinstance(corrective, str) and corrective in _CORRECTIVE):
        raise ValueError(f"{where}: `corrective` must be one of {_CORRECTIVE}, got "
                         f"{corrective!r}")
    prune_after = check_whole(prune_after, "prune_after", 1, where, optional=True)
    if blocks_per_step is not None and (isinstance(blocks_per_step, bool) or not isinstance(
            blocks_per_step, (int, np.integer)) or blocks_per_step < 1):
        raise ValueError("`blocks_per_step` must be a positive integer or None, got "
                         f"{blocks_per_step!r}")
    if gap_every is not None and (isinstance(gap_every, bool) or not isinstance(
            gap_every, (int, np.integer)) or gap_every < 1):
        raise ValueError(f"`gap_every` must be a positive integer or None, got {gap_every!r}")
    if not 0 < as_real(corrective_tol) < 1:  # NaN for None or text: refused
        raise ValueError(f"{where}: `corrective_tol` must lie in (0, 1), got {corrective_tol!r}")
    if cvxpy_options is not None and not isinstance(cvxpy_options, Mapping):
        # dict(2.5) failed deep in the run, dict(0 or {}) took 0 for "no options"
        raise TypeError(f"{where}: `cvxpy_options` must be a dict of keyword arguments of "
                        f"Problem.solve or None, got {cvxpy_options!r}")
    if isinstance(corrective_max_sweeps, bool) or not isinstance(
            corrective_max_sweeps, (int, np.integer)) or corrective_max_sweeps < 1:
        raise ValueError("`corrective_max_sweeps` must be a positive integer, got "
                         f"{corrective_max_sweeps!r}")
    if cvxpy_solver is not None:
        cvxpy_solver = _check_cvxpy_solver(cvxpy_solver)
    if blocks is True and not isinstance(domain, ProductDomain):
        raise TypeError(f"blocks=True needs a ProductDomain, got {domain!r}")
    # "auto" leaves a one-block product to the joint step (the same hull), but blocks=True
    # keeps its promise there too: a caller with n examples (the n-slack cutting plane)
    # passes the per-block start and reads the block counters for every n, 1 included
    product = isinstance(domain, ProductDomain) and (blocks is True or (
        blocks == "auto" and domain.n_blocks > 1))
    # the clock starts here: the block start (an oracle call per block) counts
    monitor = options.monitor(_FullyCorrective.name)
    if isinstance(domain, ProductDomain) and product:
        block_atoms, start = _block_start(domain, x0)
        variant: Variant = _BlockCorrective(block_atoms, corrective, corrective_tol,
                                            int(corrective_max_sweeps), cvxpy_solver,
                                            cvxpy_options, prune_after, blocks_per_step,
                                            gap_every)
        variant.name = _FullyCorrective.name  # one method name for both modes
    else:
        warm, start = split_start(x0)
        variant = _FullyCorrective(warm, resum_every, sparsify_tol, corrective, cvxpy_solver,
                                   cvxpy_options)
    return run_frank_wolfe(objective, domain, variant, start, step_size=step_size,
                           options=options, monitor=monitor)


def _check_cvxpy_solver(name: Any) -> str:
    """The installed cvxpy solver ``name`` names, in any case (cvxpy 1.6 reads only its
    own, upper-case names): a name cvxpy lacks failed every corrective solve, each
    replaced by a Frank-Wolfe step, silently."""
    import cvxpy as cp

    installed = cp.installed_solvers()
    if not isinstance(name, str) or name.upper() not in installed:
        raise ValueError(f"`cvxpy_solver` must be the name of a solver cvxpy has installed "
                         f"({', '.join(installed)}) or None, got {name!r}")
    return name.upper()

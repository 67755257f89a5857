"""The public function of saddle-point Frank-Wolfe: argument checks, the choice of
variant (SP-FW, SP-AFW or fully corrective) and step rule, and the result in the
players' shapes; ``minimize(method="saddle")`` reaches it with a pair of domains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np

from ..._numbers import check_flag, kind_of
from ...active_set import ActiveSet
from ...atoms import Atom
from ...errors import ShapeError
from ...lmo.base import LMO, as_given, declared_shape, size_advice
from ...lmo.product import ProductDomain
from ...objectives.saddle import BilinearObjective, SaddleObjective
from ...options import RunKeywords, RunOptions, solver
from ...registry import register
from ...result import Result
from ...step_size import StepSize, make_step_size
from ...step_size.saddle import curvature_settings
from ..active_variant import drift_options
from ..fcfw import _check_cvxpy_solver
from ..loop import run_frank_wolfe
from .adapter import _SaddleAdapter
from .corrective import _FullStep, _SaddleCorrective
from .variants import _SaddleAway, _SaddleFW, _SaddleVariant

__all__ = ["saddle_point_frank_wolfe"]


def _side(obj_shape: tuple[int, ...] | None, domain: LMO, start: Any, name: str,
          dname: str) -> tuple[tuple[int, ...], np.ndarray]:
    """Shape of one player's point and its dense start (None: a vertex of the domain)."""
    if not isinstance(domain, LMO):
        raise TypeError(f"`{dname}` must be an LMO, got {kind_of(domain)}")
    dense = None
    if isinstance(start, ActiveSet):
        if len(start) == 0:
            raise ValueError(f"`{name}`: the warm-start ActiveSet is empty")
        dense = np.array(start.copy(keep_x=False).resum(), dtype=float)
    elif isinstance(start, Atom):
        dense = np.array(start.to_dense(), dtype=float)
    elif start is not None:
        dense = np.array(start, dtype=float)
    shape = obj_shape
    for who, s in ((dname, declared_shape(domain)),
                   (f"`{name}`", None if dense is None else dense.shape)):
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
        elif int(np.prod(s)) != int(np.prod(shape)) or (who.startswith("`") and tuple(s) != shape):
            raise ShapeError(f"{who} has shape {tuple(s)} but the objective expects {shape}")
    if shape is None:
        raise ShapeError(
            f"cannot tell the shape of the `{name[0]}` player: neither the objective, `{dname}` "
            f"nor `{name}` gives it; pass `{name}`, or for `{dname}`: {size_advice(domain)}"
        )
    if dense is None:
        dense = np.array(domain.initial_point(shape).to_dense(), dtype=float).reshape(shape)
    return shape, dense


@solver()
def saddle_point_frank_wolfe(
    objective: SaddleObjective,
    domain_x: LMO,
    domain_y: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    y0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    away: bool = False,
    corrective: bool = False,
    cvxpy_solver: str | None = None,
    step_size: str | StepSize | None = None,
    C: float | None = None,
    nu: float = 1.0,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
    **run: Unpack[RunKeywords],
) -> Result:
    """Solve ``min_{x in X} max_{y in Y} L(x, y)`` with saddle-point Frank-Wolfe.

    Each iteration evaluates ``r = (grad_x L, -grad_y L)`` at ``z = (x, y)``,
    calls each player's oracle once, ``s = (LMO_X(grad_x L), LMO_Y(-grad_y L))``,
    certifies the saddle gap ``g = <r, z - s>`` and moves to
    ``z + gamma (s - z)`` (SP-FW).  With ``away=True`` (SP-AFW) each player
    also keeps an active set and the step may instead move away from the
    pair of away vertices, which removes vertices outside the equilibrium's
    support (Gidel, Jebara and Lacoste-Julien, AISTATS 2017).  With
    ``corrective=True`` (fully corrective SP-FW) each player keeps its
    active vertices and, after every joint oracle call, the iterate jumps to
    the exact saddle point of ``L`` restricted to the convex hulls of the
    active vertices: the double-oracle method of game theory, which ends
    after finitely many oracle calls on polytopes.

    Parameters
    ----------
    objective : SaddleObjective
        ``L``, convex in ``x`` and concave in ``y``.
    domain_x, domain_y : LMO
        Oracles of the minimizing player's domain ``X`` and the maximizing
        player's domain ``Y`` (polytopes for SP-AFW).
    x0, y0 : ndarray, Atom or ActiveSet, optional
        Feasible starts; by default a vertex of each domain.  SP-AFW needs a
        vertex (Atom, or an array the oracle returns for ``-x0``), a point of a
        domain with :meth:`~frankwolfe.LMO.decompose` or an ActiveSet.
    away : bool, default False
        Use away steps (SP-AFW).
    corrective : bool, default False
        Fully corrective SP-FW, for a :class:`~frankwolfe.BilinearObjective`
        (any polytope oracles).  The restricted game over ``p`` and ``q``
        active vertices is solved exactly: one linear program
        (:func:`scipy.optimize.linprog`, HiGHS; ``u`` primal, ``v`` dual)
        without the ``mu`` terms, else one small convex QP (cvxpy) whose
        solution is then polished on its support by one linear KKT solve.
        Vertices of zero weight are dropped; a vertex that comes back after
        a drop is kept for good, so each iteration either adds a vertex or
        certifies a zero gap (up to the solver's accuracy, about 1e-12 for
        the LP), and the run ends after at most twice the number of
        vertices of ``X`` and ``Y`` iterations.  Cost per iteration: the two
        oracles, ``O(m q + n p)`` for the products, and the restricted solve.
        ``step_size`` must be left None (the step is ``gamma = 1``).
    cvxpy_solver : str, optional
        cvxpy solver of the quadratic restricted game (default Clarabel), as in
        :func:`~frankwolfe.fully_corrective_frank_wolfe`; checked up front (a name
        cvxpy lacks is an error) even where ``corrective=False`` leaves it unused.
    step_size : str or StepSize, optional
        One of ``"agnostic"``, ``"fictitious"``, ``"curvature"``, ``"local"``,
        ``"saddle_backtracking"`` (the saddle words of
        :func:`~frankwolfe.step_size.make_step_size`), or a
        :class:`~frankwolfe.step_size.StepSize`.
        ``"agnostic"``: ``gamma = 2/(k+2)``.  ``"fictitious"``:
        ``gamma = 1/(k+1)``, which makes ``(x_k, y_k)`` the plain averages of
        the best replies so far (fictitious play).  ``"curvature"``:
        ``gamma = min(gamma_max, nu * g / (2 C))``, :class:`SaddleStep`, with
        the curvature constant ``C``.  ``"local"``: the same with ``C``
        replaced by the curvature of ``L`` along the direction taken,
        ``objective.curvature_along(d_x, d_y)`` (each player's curvature,
        and more where the coupling turns the gradient).
        ``"saddle_backtracking"``: ``C`` estimated along the directions taken
        from values of ``L``, :class:`SaddleBacktracking` (the players' own
        curvature, blind to the coupling: on games whose coupling dominates the
        ``mu`` terms its steps are too long and SP-AFW cycles; use ``"local"``).
        Line-search rules of minimization (``"exact"``, ``"short"``,
        ``"armijo"``) do not apply: ``L`` is not minimized along ``d``.  The
        default is chosen so that SP-AFW reaches its linear rate on strongly
        convex-concave problems without a user-supplied constant:

        1. ``"curvature"`` when ``C`` is passed or ``objective.curvature`` is set;
        2. else, when ``objective.strongly_convex_concave`` (a
           :class:`~frankwolfe.BilinearObjective` with ``mu_x, mu_y > 0``):
           ``"local"`` when the objective implements ``curvature_along`` (a
           :class:`~frankwolfe.BilinearObjective` does:
           ``mu_x ||d_x||^2 + mu_y ||d_y||^2``); else ``"curvature"`` with
           ``C = objective.curvature_constant(domain_x, domain_y)``, that is
           ``smoothness_x D_x^2 + smoothness_y D_y^2`` for the domains'
           Euclidean diameters (``D^2 = 2 r^2`` for a simplex of radius
           ``r``, ``4 r^2`` for an l1 or l2 ball; :meth:`~frankwolfe.LMO.diameter`);
           and ``"saddle_backtracking"`` when a piece is unknown;
        3. else ``"agnostic"`` (a pure bilinear game has ``C = 0``, and no
           step rule gives SP-FW a linear rate there).
    C : float, optional
        Curvature constant of the curvature rule (default:
        ``objective.curvature_constant(domain_x, domain_y)``).
    nu : float, default 1.0
        Damping of the curvature rules (``"curvature"``, ``"local"``,
        ``"saddle_backtracking"``).
    resum_every, sparsify_tol
        Drift control of the SP-AFW active sets, as in
        :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``x`` is the minimizing player's point, ``extra["y"]`` the
        maximizing player's, ``fun = L(x, y)``, ``gap`` the saddle gap
        ``<r, z - s>`` (equal to ``max_y' L(x, y') - min_x' L(x', y)`` for
        bilinear ``L``, an upper bound on it otherwise).  ``extra`` also
        holds the per-player gaps ``gap_x, gap_y`` and a certified bracket
        ``value_lower <= min max L <= value_upper`` (best over the run);
        ``dual_bound`` is ``value_lower`` and ``best_gap`` equals ``gap``.
        For SP-AFW ``active_set`` is the pair of final active sets and
        ``extra`` counts the steps; the history has ``gap_x`` and ``gap_y``
        columns.  With ``corrective=True``, ``active_set`` is the pair of
        supports (positive weights) and ``extra`` has ``n_corrective_lp``,
        ``n_corrective_qp``, ``n_polished``, ``n_atoms_added``, ``n_drops``,
        ``n_pinned`` and ``corrective_time`` (seconds in restricted solves).
        A run stopped by an error (or a second Ctrl-C) carries the run so far
        as ``err.result``, in the same layout.

    Notes
    -----
    ``tol`` and ``rtol`` bound the certified saddle gap.  The callback's
    ``x`` is the joint point ``z = (x.ravel(), y.ravel())`` and its
    ``gradient`` is ``r``.  ``Result.method`` is ``"saddle"`` and
    ``extra["variant"]`` is ``"fw"``, ``"away"`` or ``"corrective"``.

    For a bilinear ``L`` (matrix games) no open-loop rule has a linear
    rate: with ``2/(k+2)`` or ``1/(k+1)`` the gap falls like ``k^-0.45``
    (about 0.1 after 1e4 iterations on random 200x300 games; see
    ``docs/saddle.md``).  Use ``corrective=True`` for accurate equilibria of
    matrix games.  The linear rate of SP-AFW holds for strongly
    convex-concave ``L`` whose strong convexity dominates the coupling
    (``nu > 0`` in Gidel et al.).  For a :class:`~frankwolfe.BilinearObjective`
    ``M y`` and ``M^T x`` are kept from per-vertex columns and rows of ``M``
    (O(m + n) per step for simplex vertices) rather than two full products.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import BilinearObjective, ProbabilitySimplex, saddle_point_frank_wolfe
    >>> M = np.array([[1.0, -1.0], [-1.0, 1.0]])          # matching pennies
    >>> L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    >>> res = saddle_point_frank_wolfe(L, ProbabilitySimplex(), ProbabilitySimplex(),
    ...                                away=True, C=4.0, tol=1e-10)
    >>> np.round(res.x, 6), np.round(res.extra["y"], 6), res.gap <= 1e-10
    (array([0.5, 0.5]), array([0.5, 0.5]), True)
    >>> rps = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
    >>> res = saddle_point_frank_wolfe(BilinearObjective(rps), ProbabilitySimplex(),
    ...                                ProbabilitySimplex(), corrective=True, tol=1e-12)
    >>> bool(np.allclose(res.x, 1 / 3, atol=1e-12)), res.gap <= 1e-12, res.extra["n_corrective_lp"]
    (True, True, 5)
    """
    options = RunOptions(**run)  # @solver passes every run keyword
    # every mode's arguments, whatever the mode reads: nu was checked only by the
    # curvature rule, resum_every and sparsify_tol only by the away variant
    C, nu = curvature_settings(C, nu, "saddle_point_frank_wolfe")
    resum_every, sparsify_tol = drift_options(resum_every, sparsify_tol)
    if cvxpy_solver is not None:  # before any oracle call, whatever the mode
        cvxpy_solver = _check_cvxpy_solver(cvxpy_solver)
    if not isinstance(objective, SaddleObjective):
        raise TypeError(f"objective must be a SaddleObjective, got {type(objective).__name__}")
    shape_x, x_start = _side(declared_shape(objective, "shape_x"), domain_x, x0, "x0",
                             "domain_x")
    shape_y, y_start = _side(declared_shape(objective, "shape_y"), domain_y, y0, "y0",
                             "domain_y")
    adapter = _SaddleAdapter(objective, shape_x, shape_y)
    nx = adapter.nx
    joint = ProductDomain([domain_x, domain_y],
                          indices=[range(nx), range(nx, adapter.n)])
    # in the precision given: a float32 start is allowed its own rounding (the joint
    # start too, when both are given in it)
    x_given, y_given = as_given(x0, x_start), as_given(y0, y_start)
    z0 = np.concatenate([x_given.reshape(-1), y_given.reshape(-1)])
    domain_x.check_feasible(x_given, "`x0`")
    domain_y.check_feasible(y_given, "`y0`")

    away = check_flag(away, "away")
    corrective = check_flag(corrective, "corrective")
    if corrective:
        if away:
            raise ValueError("`corrective=True` and `away=True` exclude each other: the "
                             "corrective step already removes every inactive vertex")
        if not isinstance(objective, BilinearObjective):
            raise TypeError(
                "corrective=True solves the restricted game exactly and needs a "
                f"BilinearObjective, got {type(objective).__name__}"
            )
        if step_size is not None:
            raise ValueError(
                f"corrective=True takes the corrective point whole (gamma = 1); got "
                f"step_size={step_size!r}, leave it None"
            )
        rule: StepSize = _FullStep()
        variant: _SaddleVariant = _SaddleCorrective(
            domain_x, domain_y, adapter,
            (_start_kind(x0, domain_x, shape_x), _start_kind(y0, domain_y, shape_y)), cvxpy_solver)
    elif away:
        rule = _step_rule(step_size, C, nu, objective, domain_x, domain_y)
        variant = _SaddleAway(domain_x, domain_y, adapter,
                              (_start_kind(x0, domain_x, shape_x),
                               _start_kind(y0, domain_y, shape_y)),
                              resum_every, sparsify_tol)
    else:
        rule = _step_rule(step_size, C, nu, objective, domain_x, domain_y)
        variant = _SaddleFW(domain_x, domain_y, adapter)
    try:
        res = run_frank_wolfe(adapter, joint, variant, z0, step_size=rule, options=options)
    except BaseException as err:
        # the run so far rides on the error (an objective's, an oracle's, a second Ctrl-C):
        # in the players' layout too, not the joint point z
        partial = getattr(err, "result", None)
        if isinstance(partial, Result) and np.size(partial.x) == adapter.n:
            _players_result(partial, adapter)
        raise
    return _players_result(res, adapter)


def _players_result(res: Result, adapter: _SaddleAdapter) -> Result:
    """``res`` of the joint run, changed in place to the players' layout: ``x`` the
    minimizing player's point, ``extra["y"]`` the maximizing player's, and the saddle
    bounds as ``dual_bound`` and ``best_gap``."""
    x, y = adapter.split(np.asarray(res.x))
    res.x = np.array(x)
    res.extra["y"] = np.array(y)
    res.dual_bound = float(res.extra.get("value_lower", -np.inf))
    res.best_gap = res.gap
    return res


def _start_kind(start: Any, domain: LMO, shape: tuple[int, ...]) -> Any:
    """What the away variant builds its active set from (an Atom for the default vertex)."""
    if start is None:
        return domain.initial_point(shape)
    return start


def _step_rule(spec: str | StepSize | None, C: float | None, nu: float,
               objective: SaddleObjective, domain_x: LMO, domain_y: LMO) -> StepSize:
    """The rule ``step_size`` names for this game (the saddle words of
    :func:`~frankwolfe.step_size.make_step_size`)."""
    return make_step_size(spec, context="saddle", objective=objective, C=C, nu=nu,
                          domains=(domain_x, domain_y))


@register("saddle", "saddle_point_frank_wolfe")
def _minimize_saddle(objective: SaddleObjective, domain: Sequence[LMO] | ProductDomain,
                     **options: Any) -> Result:
    """``minimize(objective, (domain_x, domain_y), method="saddle", **options)``."""
    if isinstance(domain, ProductDomain):
        if domain.n_blocks != 2 or not domain.disjoint:
            raise ValueError(
                f"method='saddle': `domain` must be a Cartesian ProductDomain of 2 blocks, "
                f"got {domain!r}"
            )
        blocks = domain.blocks
    elif isinstance(domain, (tuple, list)) and len(domain) == 2:
        blocks = tuple(domain)
    else:
        raise TypeError(
            "method='saddle': `domain` must be a pair (domain_x, domain_y) of LMOs or a "
            f"2-block ProductDomain, got {type(domain).__name__}"
        )
    return saddle_point_frank_wolfe(objective, blocks[0], blocks[1], **options)

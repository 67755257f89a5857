"""User-equilibrium traffic assignment with the core Frank-Wolfe methods."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from frankwolfe._numbers import is_real
from frankwolfe._random import check_random_state
from frankwolfe.algorithms.bcfw import block_coordinate_frank_wolfe
from frankwolfe.algorithms.conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from frankwolfe.algorithms.frank_wolfe import frank_wolfe
from frankwolfe.atoms import Atom
from frankwolfe.errors import ShapeError
from frankwolfe.monitor import IterationState, says_stop
from frankwolfe.result import Result, Status

from .assignment import AllOrNothing
from .beckmann import Beckmann
from .blocks import AssignmentBlocks
from .classes import ClassSet, DemandClass, MulticlassBeckmann
from .multiclass import MulticlassBlocks, MulticlassFlows
from .network import Network
from .sparse_rows import csr_rows

__all__ = ["traffic_assignment", "relative_gap", "METHODS", "COMPILED_MIN_LINKS"]

#: links from which ``traffic_assignment(method="bcfw")`` takes compiled block steps
COMPILED_MIN_LINKS = 2000

#: solver names accepted by :func:`traffic_assignment` (``"bcfw"``: block-coordinate FW
#: over origins, :func:`~frankwolfe.block_coordinate_frank_wolfe`)
METHODS: dict[str, Callable[..., Result]] = {
    "fw": frank_wolfe,
    "cfw": conjugate_frank_wolfe,
    "bfw": biconjugate_frank_wolfe,
    "bcfw": block_coordinate_frank_wolfe,
}


#: relative shortfall of ``<w, x>`` under ``sum_od d_od SP_od(w)`` that :func:`relative_gap`
#: takes for rounding (published flows are rounded), not for a flow short of the demand
_GAP_ROUNDING = 1e-3


def relative_gap(network: Network, flow: ArrayLike) -> float:
    """The relative gap of the field, ``(sum_a c_a x_a - sum_od d SP) / sum_a c_a x_a``.

    ``c`` are the link costs at ``flow`` and ``SP`` the shortest-path costs
    under them.  It equals the Frank-Wolfe gap divided by ``sum_a c_a x_a``.

    Parameters
    ----------
    network : Network
        The network: its link costs and its demand ``d``.
    flow : array_like of shape (n_links,)
        Link volumes that carry the network's demand (a solution's ``x``, or a
        published best-known flow).

    Returns
    -------
    float
        The relative gap: >= -1e-3 (a negative one is rounding, of the flows or of
        the sums), 0.0 when the total cost is 0 (costs that are all zero).

    Raises
    ------
    TypeError
        When ``flow`` is not an array of numbers (text).
    ShapeError
        When ``flow`` does not have shape ``(n_links,)``, one volume per link.
    ValueError
        When ``flow`` cannot carry the network's demand.  Link flows do not say
        whether they split into the OD demands (no cheap test exists for
        aggregated flows), so three necessary conditions are checked: flow
        conservation and non-negativity within 1% of the demand; and, for the
        costs ``w`` at ``flow`` and at zero flow (free flow), ``sum_a w_a x_a >=
        sum_od d_od SP_od(w)`` within 0.1% (every OD pair's flow costs at least
        its shortest path).  Zero flows and flows scaled down (0.5x: their gap read
        negative) are refused, rounded published flows pass.  Flows carrying more
        than the demand (scaled up, or with circulations added: on a network whose
        OD matrix is symmetric, 2x meets node balance) pass, with a gap that counts
        the excess as cost.
    """
    aon = AllOrNothing(network)
    try:
        flow = np.asarray(flow, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"relative_gap: `flow` must be link flows (an array of numbers), "
                        f"got {flow!r:.80}") from None
    # before the demand test: a vector of another length failed it by an infinite
    # violation, which named neither its length nor the network's number of links
    if flow.shape != (network.n_links,):
        raise ShapeError(f"relative_gap: `flow` must hold one volume per link, shape "
                         f"({network.n_links},) for the network's {network.n_links} links, "
                         f"got shape {flow.shape}")
    # the gap compares the flows' cost with the shortest paths' for the same demand: of
    # flows that do not carry that demand it certifies nothing (zero flows gave 0.0);
    # published flows are rounded (SiouxFalls' best-known: 2.8e-4), hence 1%
    viol = aon.violation(flow)
    if not viol <= 1e-2:
        raise ValueError(f"relative_gap: `flow` does not carry the network's demand (flow "
                         f"conservation or sign violated by {viol:.3g} of the demand, shape "
                         f"{flow.shape}); the relative gap certifies feasible link flows only")
    # node balance misses what a symmetric demand cancels (zero or scaled flows with it);
    # a flow that carries the demand costs at least its shortest paths under any costs:
    # those at the flow (the gap's own) and those at free flow, which the flow does not
    # move (0.5x: half the free-flow distance the demand must travel)
    costs = network.link_costs(flow)
    tt, sp = _cost_and_shortest(aon, flow, costs, "at `flow`")
    _cost_and_shortest(aon, flow, network.link_costs(np.zeros(network.n_links)), "at free flow")
    return (tt - sp) / tt if tt > 0 else 0.0


def _cost_and_shortest(aon: AllOrNothing, flow: np.ndarray, costs: np.ndarray,
                       where: str) -> tuple[float, float]:
    """``<costs, flow>`` and ``sum_od d_od SP_od(costs)``; refuses the first short of the
    second beyond rounding (:func:`relative_gap`)."""
    _, least = aon.assign(costs)
    total = float(costs @ flow)
    if total < least - _GAP_ROUNDING * abs(least):
        raise ValueError(
            f"relative_gap: `flow` does not carry the network's demand: its cost {where}, "
            f"{total:.6g}, is below the shortest paths' {least:.6g} for the demand (flows "
            f"short of the demand: zero or scaled down); the relative gap certifies "
            f"feasible link flows only")
    return total, float(least)


class _DenseRow:
    """A sparse block point that the core densifies when it copies it into its block
    iterates (``np.asarray``): one dense row at a time, not a dense copy of them all."""

    def __init__(self, row: Any) -> None:
        self.row = row

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.row.toarray(), dtype=dtype).reshape(-1)


def _sparse_rows(points: Any) -> sparse.csr_array:
    """Block points (a list of equal-size arrays, the Python steps' ``block_iterates``)
    as the sparse array of the compiled steps, one row per block."""
    width = int(np.asarray(points[0]).size)
    sizes = np.zeros(len(points) + 1, dtype=np.int64)
    cols, vals = [], []
    for i, z in enumerate(points):
        z = np.asarray(z, dtype=float).reshape(-1)
        j = np.flatnonzero(z)
        cols.append(j)
        vals.append(z[j])
        sizes[i + 1] = j.size
    return csr_rows(cols, vals, sizes, (len(points), width))


def _bcfw_start(domain: AssignmentBlocks | MulticlassBlocks, x0: Any) -> list[Any] | None:
    """Block starts of a bcfw warm start: the trees and weights of a previous run, or
    one link-flow vector per origin (dense arrays, sparse rows, or a sparse array with
    one row per block as ``extra["block_iterates"]``)."""
    if x0 is None:
        return None
    if isinstance(x0, Result):
        blocks = x0.extra.get("block_iterates")
        sets = x0.extra.get("active_sets")
        if sets is not None and len(sets) == domain.n_blocks and all(
                k[:1] in (("tree",), ("path",)) for atoms in sets for k, _ in atoms):
            # the previous trees and weights: the active sets survive the warm start
            owners: list[Any] = list(domain.blocks)  # OriginFlows or ClassOriginFlows
            try:
                return [[(b.atom(k), w) for k, w in atoms] for b, atoms in zip(owners, sets)]
            except ValueError as err:
                raise ValueError(
                    f"traffic_assignment: x0's trees do not fit this network (a link closed, "
                    f"a node or an OD pair added since that run): {err}; start 'bcfw' cold, "
                    "or warm-start 'bfw' from x0.x") from None
        if blocks is None:
            raise ValueError(
                f"traffic_assignment: x0 is a result of method {x0.method!r}, which keeps no "
                "per-block flows; warm-start 'bcfw' from a 'bcfw' result (or start the link "
                "methods from x0.x)"
            )
        x0 = blocks
    if isinstance(x0, np.ndarray) and x0.dtype != object and x0.ndim == 1:
        raise ValueError(
            "traffic_assignment: method 'bcfw' needs per-block flows to start from (a 'bcfw' "
            "Result or one link-flow vector per origin or OD pair); link flows alone do not "
            "determine them: start 'bfw' from link flows instead"
        )
    if sparse.issparse(x0):
        given: Any = x0  # (scipy-stubs type issparse's answer as SparseABC)
        if given.ndim != 2:
            raise ShapeError(
                f"traffic_assignment: a sparse x0 must have one row per block, got shape "
                f"{given.shape}")
        rows = sparse.csr_array(given)
        points: list[Any] = [_DenseRow(rows[i:i + 1]) for i in range(rows.shape[0])]
    else:
        points = [_DenseRow(p) if sparse.issparse(p) else np.asarray(p, dtype=float).reshape(-1)
                  for p in x0]
    if len(points) != domain.n_blocks:
        raise ShapeError(
            f"traffic_assignment: x0 has {len(points)} per-block flow vectors, the network "
            f"has {domain.n_blocks} blocks ({domain.by}s with demand)"
        )
    # as trees (paths) and weights: a start of flows kept as one pseudo-atom per block
    # stayed nearly whole under the pairwise steps, with one class or several (CHANGELOG)
    return domain.trees_of_flows(points)


def _left(common: dict[str, Any], started: float) -> dict[str, Any]:
    """The run keywords with what the set-up left of ``time_limit``."""
    limit = common["time_limit"]
    if limit is None:
        return common
    return dict(common, time_limit=max(1e-3, limit - (time.perf_counter() - started)))


def _link_flows(x0: Any) -> np.ndarray:
    try:
        x = np.asarray(x0)
        if x.dtype.kind not in "biuf":
            raise TypeError
        return x.astype(float)
    except (TypeError, ValueError):
        raise TypeError(f"traffic_assignment: `x0` must be link flows (an array of numbers) "
                        f"or a Result, got {x0!r:.80}") from None


def traffic_assignment(
    network: Network,
    method: str = "bfw",
    *,
    rel_gap: float = 1e-4,
    max_iter: int = 10_000,
    time_limit: float | None = None,
    x0: np.ndarray | Result | Sequence[np.ndarray] | None = None,
    n_jobs: int = 1,
    random_state: int | np.random.Generator | None = None,
    callback: Callable[[IterationState], Any] | None = None,
    verbose: bool | int = False,
    history_every: int = 1,
    classes: Sequence[DemandClass] | None = None,
    **options: Any,
) -> Result:
    """Static user-equilibrium assignment: minimize the Beckmann objective over the flow polytope.

    Parameters
    ----------
    network : Network
        Links, BPR costs and OD demand (e.g. from :func:`read_tntp`).
    method : {"bfw", "cfw", "fw", "bcfw"}, default "bfw"
        Bi-conjugate, conjugate or plain Frank-Wolfe on the link flows, all
        with exact line search on the Beckmann objective; or ``"bcfw"``:
        block-coordinate Frank-Wolfe over origins (:class:`AssignmentBlocks`,
        block atoms: shortest-path trees) with pairwise block steps, gap
        sampling and exact block line search, which converges linearly and
        reaches tight gaps (1e-8 .. 1e-12).
    rel_gap : float, default 1e-4
        Stop when the relative gap of the field,
        ``(sum c_a x_a - sum d SP) / sum c_a x_a``, is at most this.  It is
        the certified Frank-Wolfe gap divided by the total travel time.
    max_iter : int, default 10000
        Budget of iterations (``"bcfw"``: passes over the origins).
    time_limit : float, optional
        As in :func:`frankwolfe.frank_wolfe`, counted from this call's start (the
        start's all-or-nothing assignment included).
    x0 : ndarray, Result or sequence of ndarray, optional
        Warm start.  Link methods: link flows (or a previous :class:`Result`,
        its ``x``).  ``"bcfw"``: a previous ``"bcfw"`` Result of a network
        with the same demand (e.g. before a capacity change) or the link flows
        of every origin (``extra["block_iterates"]``: a sparse array with one row
        per origin; or a list of one link-flow vector per origin, dense or
        sparse).  Default: the
        all-or-nothing flows at free-flow costs.
    n_jobs : int, default 1
        Threads for the all-or-nothing assignment of the whole network
        (shortest paths, parallel over origins); the results do not depend on it
        (:class:`AllOrNothing`: the same bits for every ``n_jobs``).
    random_state : int or numpy.random.Generator, optional
        Seed of the block order of ``"bcfw"`` (the other methods draw nothing); every
        method refuses a malformed one before the set-up (as
        :func:`frankwolfe.block_coordinate_frank_wolfe` would).
    callback, verbose, history_every
        As in :func:`frankwolfe.frank_wolfe`.
    classes : sequence of DemandClass, optional
        A multi-class assignment (:class:`DemandClass`: own demand, ``pce``, ``vot``,
        tolls and banned links; the network's ``demand`` is then not used): the user
        equilibrium of every class in its generalized cost ``t + toll / vot``, on the
        link volumes ``sum_c pce_c x_c`` (:mod:`.classes`).  ``"bcfw"`` has one block
        per class and origin and takes the Python block steps.  Warm starts: a
        previous multi-class Result, or (``"bcfw"``) its ``extra["block_iterates"]``,
        one row per class and origin.  Default: one class, the network's demand.
    **options
        Passed to the solver (``tol`` and ``rtol`` are refused: ``rel_gap`` is the
        stopping test): ``delta`` for the conjugate methods,
        ``step_size``; for ``"bcfw"`` ``blocks`` (``"origin"``, default, or
        ``"od"``: one block per OD pair, path atoms; fewer passes, more
        block steps per pass, see :class:`AssignmentBlocks`), ``block_step`` (default
        ``"pairwise"``), ``block_order`` (default ``"gap"``), ``gap_every``
        (default 5: a certificate every 5 passes), ``cache`` (default True:
        reuse stored trees when good enough), ``cache_size`` (default 20
        inactive trees per block), ``compiled`` (default: the compiled block steps on
        networks of at least ``COMPILED_MIN_LINKS`` (2,000) links, the Python ones below,
        where the compilation would outweigh the run; True or False to choose) and the
        other keywords of :func:`~frankwolfe.block_coordinate_frank_wolfe`.

    Returns
    -------
    Result
        ``x`` are the link flows, ``fun`` the Beckmann objective and ``gap``
        the absolute Frank-Wolfe gap.  ``extra`` adds ``relative_gap``,
        ``link_costs``, ``total_travel_time`` and ``history_relative_gap``
        (``"bcfw"``: one entry per pass, NaN between certificates); for
        ``"bcfw"`` also ``block_iterates`` (the flows of every origin, or OD pair
        with ``blocks="od"``: a ``scipy.sparse.csr_array`` with one row per block over
        its coordinates, the links (with ``classes``: the volumes, then the class's
        flows); a row stores the links of the block's trees only) and
        ``active_sets`` (the trees in use; :func:`route_flows` turns them
        into route flows).  ``status`` is ``converged`` when ``rel_gap`` was
        reached.  With ``classes``: ``x`` are the link volumes ``sum_c pce_c x_c``,
        ``link_costs`` their times ``t(v)``, ``relative_gap`` the overall one, and
        ``extra`` adds per-class tables keyed by class name (``class_flows``,
        ``class_costs``, ``class_total_cost``, ``class_gap``,
        ``class_relative_gap``; see :meth:`ClassSet.gaps`), ``x_classes`` (the
        multi-class vector) and ``classes`` (the names).
    """
    started = time.perf_counter()  # the time limit counts the set-up (the start's oracle)
    try:
        key = method.lower()
        solver = METHODS[key]
    except (KeyError, AttributeError):
        raise ValueError(
            f"traffic_assignment: unknown method {method!r}; choose one of "
            f"{sorted(METHODS)}") from None
    for name in ("tol", "rtol"):
        if name in options:
            # the run's own tests would stop it first ("converged" short of rel_gap), or
            # clash with the tol=0 passed below
            raise TypeError(f"traffic_assignment: the stopping test is `rel_gap` (the gap "
                            f"over the total travel time), not `{name}`; got "
                            f"{name}={options[name]!r}")
    if callback is not None and not callable(callback):
        # the run calls it through its own stopping test: a bad one failed at iteration 0
        raise TypeError(f"traffic_assignment: `callback` must be callable, got "
                        f"{type(callback).__name__}")
    if not isinstance(network, Network):
        raise TypeError(f"traffic_assignment: `network` must be a Network (read_tntp, "
                        f"Network(...)), got {type(network).__name__}")
    # every method, before a domain is built: the link methods draw nothing (the seed
    # is unused but refused by name), and bcfw's own refusal came after its set-up
    check_random_state(random_state, "traffic_assignment: random_state")
    if not (is_real(rel_gap) and rel_gap >= 0):
        raise ValueError(f"traffic_assignment: `rel_gap` must be non-negative, got {rel_gap!r}")
    if time_limit is not None and not (is_real(time_limit) and time_limit > 0):
        # the set-up's share is taken from it before the run checks it
        raise ValueError(f"traffic_assignment: `time_limit` must be positive seconds or None, "
                         f"got {time_limit!r}")
    class_set = None if classes is None else ClassSet(network, classes, n_jobs=n_jobs)
    domain_used: Any = None
    objective = Beckmann(network) if class_set is None else MulticlassBeckmann(class_set)
    rel_history: list[float] = []

    def stop_on_relative_gap(state: IterationState) -> bool | None:
        if np.isfinite(state.gap):
            g = state.gradient if state.gradient is not None else objective.gradient(state.x)
            tt = float(np.vdot(g, state.x))
            rel = state.gap / tt if tt > 0 else 0.0
        else:  # between the certificates of bcfw
            rel = np.nan
        rel_history.append(rel)
        if callback is not None and says_stop(callback(state)):
            return False
        return not rel <= rel_gap

    # tol=0: the loop stops on its own only at an exact optimum; the relative
    # gap (a scale-free test) is checked by the callback
    common: dict[str, Any] = dict(
        tol=0.0, max_iter=max_iter, time_limit=time_limit, callback=stop_on_relative_gap,
        verbose=verbose, history_every=history_every,
    )
    if key == "bcfw" and class_set is None and network.origins().size == 0 and x0 is None:
        # no trip between zones, so no block to move: the zero flow is the equilibrium,
        # which a link method certifies (its oracle's flow is zero) as the link methods
        # answer this network
        key, solver = "fw", METHODS["fw"]
        for name in ("blocks", "block_step", "block_order", "gap_every", "cache",
                     "cache_size", "compiled"):
            options.pop(name, None)
    if key == "bcfw":
        by = options.pop("blocks", "origin")
        if class_set is None:
            domain: AssignmentBlocks | MulticlassBlocks = AssignmentBlocks(network, by=by,
                                                                          n_jobs=n_jobs)
        else:
            if by != "origin" or options.get("compiled"):
                raise ValueError(
                    "traffic_assignment: with `classes`, 'bcfw' takes origin blocks and the "
                    f"Python block steps; got blocks={by!r}, compiled="
                    f"{options.get('compiled')!r}")
            options["compiled"] = False
            domain = MulticlassBlocks(class_set)
            domain_used = domain
        options.setdefault("block_step", "pairwise")
        options.setdefault("block_order", "gap")
        options.setdefault("gap_every", 5)
        # gapBCFW's cache: a block step reuses a stored tree when its gap is large
        # enough, so most steps skip the shortest-path call (benchmarks/README.md,
        # "Measurements behind code choices")
        options.setdefault("cache", True)
        options.setdefault("cache_size", 20)  # inactive trees kept per block (memory)
        # the compiled block steps pay their one-time compilation (long on an empty
        # numba cache) on networks of thousands of links; below that the Python steps
        # reach a tight gap in less time than that compilation
        # (benchmarks/README.md, "Measurements behind code choices")
        options.setdefault("compiled", None if network.n_links >= COMPILED_MIN_LINKS else False)
        start_blocks = _bcfw_start(domain, x0)
        res = solver(objective, domain, start_blocks, random_state=random_state,
                     **_left(common, started), **options)
        points = res.extra.get("block_iterates")
        if isinstance(points, list) and points:
            # the Python steps' block points (views of their dense block iterates, which
            # the result would keep alive) as the compiled steps' sparse array
            res.extra["block_iterates"] = _sparse_rows(points)
    elif class_set is not None:
        mc = MulticlassFlows(class_set)
        start = mc(objective.gradient(np.zeros(class_set.dim))) if x0 is None else \
            _multiclass_start(class_set, x0)
        res = solver(objective, mc, start, step_size=options.pop("step_size", "exact"),
                     **_left(common, started), **options)
    else:
        lmo = AllOrNothing(network, n_jobs=n_jobs)
        if x0 is None:
            flow, _ = lmo.assign(objective.gradient(np.zeros(network.n_links)))
            start = Atom(flow)
        else:
            start = _link_flows(x0.x if isinstance(x0, Result) else x0)
        res = solver(objective, lmo, start, step_size=options.pop("step_size", "exact"),
                     **_left(common, started), **options)
    costs = objective.gradient(res.x)
    tt = float(costs @ res.x)
    rel = res.gap / tt if tt > 0 else 0.0
    if res.status in (Status.CALLBACK_STOP, Status.CONVERGED) and rel <= rel_gap:
        res.status = Status.CONVERGED
        res.message = f"relative gap {rel:.3e} <= rel_gap {rel_gap:.3e} after {res.nit} iterations"
    res.extra.update(relative_gap=rel, link_costs=costs, total_travel_time=tt,
                     history_relative_gap=np.asarray(rel_history))
    if class_set is not None:
        m = network.n_links
        res.extra.update(class_set.gaps(res.x), x_classes=res.x,
                         classes=[c.name for c in class_set.classes],
                         link_costs=costs[:m])
        if isinstance(domain_used, MulticlassBlocks):
            res.extra["block_classes"] = [class_set.classes[c].name
                                          for c in domain_used.block_class]
        res.x = res.x[:m].copy()
    return res


def _multiclass_start(class_set: ClassSet, x0: Any) -> np.ndarray:
    """The multi-class vector of a link method's warm start: a multi-class Result's,
    or the vector itself."""
    if isinstance(x0, Result):
        if "x_classes" not in x0.extra:
            raise ValueError("traffic_assignment: x0 is a Result without classes; a "
                             "multi-class run starts from a multi-class Result")
        x0 = x0.extra["x_classes"]
    start = np.asarray(x0, dtype=float)
    if start.shape != (class_set.dim,):
        raise ShapeError(
            f"traffic_assignment: x0 of a multi-class run must be a multi-class Result or "
            f"its vector of shape ({class_set.dim},) (volumes, then each class's flows), "
            f"got shape {start.shape}")
    return start

"""User-equilibrium traffic assignment with the core Frank-Wolfe methods."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from frankwolfe.algorithms.bcfw import block_coordinate_frank_wolfe
from frankwolfe.algorithms.conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from frankwolfe.algorithms.frank_wolfe import frank_wolfe
from frankwolfe.atoms import Atom
from frankwolfe.errors import ShapeError
from frankwolfe.monitor import IterationState
from frankwolfe.result import Result, Status

from .assignment import AllOrNothing
from .beckmann import Beckmann
from .blocks import AssignmentBlocks
from .network import Network

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


def relative_gap(network: Network, flow: np.ndarray) -> float:
    """The relative gap of the field, ``(sum_a c_a x_a - sum_od d SP) / sum_a c_a x_a``.

    ``c`` are the link costs at ``flow`` and ``SP`` the shortest-path costs
    under them.  It equals the Frank-Wolfe gap divided by ``sum_a c_a x_a``.
    """
    costs = network.link_costs(flow)
    _, sp = AllOrNothing(network).assign(costs)
    tt = float(costs @ flow)
    return (tt - sp) / tt if tt > 0 else 0.0


def _bcfw_start(domain: AssignmentBlocks, x0: Any) -> list[Any] | None:
    """Block starts of a bcfw warm start: the trees and weights of a previous run, or
    one link-flow vector per origin."""
    if x0 is None:
        return None
    if isinstance(x0, Result):
        blocks = x0.extra.get("block_iterates")
        sets = x0.extra.get("active_sets")
        if sets is not None and len(sets) == domain.n_blocks and all(
                k[:1] in (("tree",), ("path",)) for atoms in sets for k, _ in atoms):
            # the previous trees and weights: the active sets survive the warm start
            return [[(b.atom(k), w) for k, w in atoms] for b, atoms in zip(domain.blocks, sets)]
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
    points = [np.asarray(p, dtype=float).reshape(-1) for p in x0]
    if len(points) != domain.n_blocks:
        raise ShapeError(
            f"traffic_assignment: x0 has {len(points)} per-block flow vectors, the network "
            f"has {domain.n_blocks} blocks ({domain.by}s with demand)"
        )
    return points


def _left(common: dict[str, Any], started: float) -> dict[str, Any]:
    """The run keywords with what the set-up left of ``time_limit``."""
    limit = common["time_limit"]
    if limit is None:
        return common
    return dict(common, time_limit=max(1e-3, limit - (time.perf_counter() - started)))


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
    time_limit, callback, verbose, history_every
        As in :func:`frankwolfe.frank_wolfe`; ``time_limit`` counts from this
        call's start (the start's all-or-nothing assignment included).
    x0 : ndarray, Result or sequence of ndarray, optional
        Warm start.  Link methods: link flows (or a previous :class:`Result`,
        its ``x``).  ``"bcfw"``: a previous ``"bcfw"`` Result of a network
        with the same demand (e.g. before a capacity change) or one link-flow
        vector per origin (``extra["block_iterates"]``).  Default: the
        all-or-nothing flows at free-flow costs.
    n_jobs : int, default 1
        Threads for the all-or-nothing assignment of the whole network
        (shortest paths, parallel over origins).
    random_state : int or numpy.random.Generator, optional
        Seed of the block order of ``"bcfw"``.
    **options
        Passed to the solver: ``delta`` for the conjugate methods,
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
        ``"bcfw"`` also ``block_iterates`` (the flows of every origin) and
        ``active_sets`` (the trees in use; :func:`route_flows` turns them
        into route flows).  ``status`` is ``converged`` when ``rel_gap`` was
        reached.
    """
    started = time.perf_counter()  # the time limit counts the set-up (the start's oracle)
    try:
        key = method.lower()
        solver = METHODS[key]
    except (KeyError, AttributeError):
        raise ValueError(
            f"traffic_assignment: unknown method {method!r}; choose one of "
            f"{sorted(METHODS)}") from None
    if not rel_gap >= 0:
        raise ValueError(f"traffic_assignment: `rel_gap` must be non-negative, got {rel_gap!r}")
    objective = Beckmann(network)
    rel_history: list[float] = []

    def stop_on_relative_gap(state: IterationState) -> bool | None:
        if np.isfinite(state.gap):
            g = state.gradient if state.gradient is not None else objective.gradient(state.x)
            tt = float(np.vdot(g, state.x))
            rel = state.gap / tt if tt > 0 else 0.0
        else:  # between the certificates of bcfw
            rel = np.nan
        rel_history.append(rel)
        if callback is not None and callback(state) is False:
            return False
        return not rel <= rel_gap

    # tol=0: the loop stops on its own only at an exact optimum; the relative
    # gap (a scale-free test) is checked by the callback
    common: dict[str, Any] = dict(
        tol=0.0, max_iter=max_iter, time_limit=time_limit, callback=stop_on_relative_gap,
        verbose=verbose, history_every=history_every,
    )
    if key == "bcfw":
        domain = AssignmentBlocks(network, by=options.pop("blocks", "origin"), n_jobs=n_jobs)
        options.setdefault("block_step", "pairwise")
        options.setdefault("block_order", "gap")
        options.setdefault("gap_every", 5)
        # gapBCFW's cache: a block step reuses a stored tree when its gap is large
        # enough, so most steps skip the shortest-path call (benchmarks/README.md,
        # "Measurements behind code choices")
        options.setdefault("cache", True)
        options.setdefault("cache_size", 20)  # inactive trees kept per block (memory)
        # the compiled block steps pay their one-time compilation (about 11 CPU-s on an
        # empty numba cache) on networks of thousands of links; below that the Python
        # steps reach 1e-8 in a second (benchmarks/README.md, "traffic_compiled.py")
        options.setdefault("compiled", None if network.n_links >= COMPILED_MIN_LINKS else False)
        start_blocks = _bcfw_start(domain, x0)
        res = solver(objective, domain, start_blocks, random_state=random_state,
                     **_left(common, started), **options)
    else:
        lmo = AllOrNothing(network, n_jobs=n_jobs)
        if x0 is None:
            flow, _ = lmo.assign(objective.gradient(np.zeros(network.n_links)))
            start: np.ndarray | Atom = Atom(flow)
        else:
            start = np.asarray(x0.x if isinstance(x0, Result) else x0, dtype=float)
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
    return res

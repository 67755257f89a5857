"""User-equilibrium traffic assignment with the core Frank-Wolfe methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from frankwolfe.algorithms.conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from frankwolfe.algorithms.frank_wolfe import frank_wolfe
from frankwolfe.atoms import Atom
from frankwolfe.monitor import IterationState
from frankwolfe.result import Result, Status

from .assignment import AllOrNothing
from .beckmann import Beckmann
from .network import Network

__all__ = ["traffic_assignment", "relative_gap", "METHODS"]

#: solver names accepted by :func:`traffic_assignment`
METHODS: dict[str, Callable[..., Result]] = {
    "fw": frank_wolfe,
    "cfw": conjugate_frank_wolfe,
    "bfw": biconjugate_frank_wolfe,
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


def traffic_assignment(
    network: Network,
    method: str = "bfw",
    *,
    rel_gap: float = 1e-4,
    max_iter: int = 10_000,
    time_limit: float | None = None,
    x0: np.ndarray | None = None,
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
    method : {"bfw", "cfw", "fw"}, default "bfw"
        Bi-conjugate, conjugate or plain Frank-Wolfe, all with exact line
        search on the Beckmann objective.
    rel_gap : float, default 1e-4
        Stop when the relative gap of the field,
        ``(sum c_a x_a - sum d SP) / sum c_a x_a``, is at most this.  It is
        the certified Frank-Wolfe gap divided by the total travel time.
    max_iter, time_limit, callback, verbose, history_every
        As in :func:`frankwolfe.frank_wolfe`.
    x0 : ndarray, optional
        Starting link flows; default the all-or-nothing flows at free-flow costs.
    **options
        Passed to the solver (``delta`` for the conjugate methods, ``step_size``).

    Returns
    -------
    Result
        ``x`` are the link flows, ``fun`` the Beckmann objective and ``gap``
        the absolute Frank-Wolfe gap.  ``extra`` adds ``relative_gap``,
        ``link_costs``, ``total_travel_time`` and ``history_relative_gap``.
        ``status`` is ``converged`` when ``rel_gap`` was reached.
    """
    try:
        solver = METHODS[method.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"traffic_assignment: unknown method {method!r}; choose one of {sorted(METHODS)}") from None
    if not rel_gap >= 0:
        raise ValueError(f"traffic_assignment: `rel_gap` must be non-negative, got {rel_gap!r}")
    objective = Beckmann(network)
    lmo = AllOrNothing(network)
    if x0 is None:
        flow, _ = lmo.assign(objective.gradient(np.zeros(network.n_links)))
        start: np.ndarray | Atom = Atom(flow)
    else:
        start = np.asarray(x0, dtype=float)
    rel_history: list[float] = []

    def stop_on_relative_gap(state: IterationState) -> bool | None:
        tt = float(np.vdot(state.gradient, state.x))
        rel = state.gap / tt if tt > 0 else 0.0
        rel_history.append(rel)
        if callback is not None and callback(state) is False:
            return False
        return not rel <= rel_gap

    # tol=0: the loop stops on its own only at an exact optimum; the relative
    # gap (a scale-free test) is checked by the callback
    res = solver(objective, lmo, start, tol=0.0, max_iter=max_iter, time_limit=time_limit,
                 callback=stop_on_relative_gap, verbose=verbose, history_every=history_every,
                 step_size=options.pop("step_size", "exact"), **options)
    costs = objective.gradient(res.x)
    tt = float(costs @ res.x)
    rel = res.gap / tt if tt > 0 else 0.0
    if res.status in (Status.CALLBACK_STOP, Status.CONVERGED) and rel <= rel_gap:
        res.status = Status.CONVERGED
        res.message = f"relative gap {rel:.3e} <= rel_gap {rel_gap:.3e} after {res.nit} iterations"
    res.extra.update(relative_gap=rel, link_costs=costs, total_travel_time=tt,
                     history_relative_gap=np.asarray(rel_history))
    return res

"""Warm-up job of the traffic assignment (``python -m frankwolfe.compile``; registered
in ``pyproject.toml`` under the entry-point group ``frankwolfe.warmup``)."""

from __future__ import annotations

__all__ = ["traffic"]


def traffic() -> None:
    """traffic assignment: every method (fw, cfw, bfw, bcfw with Python and compiled
    block steps), serial and threaded shortest paths, on a small grid network"""
    import numpy as np

    from .network import Network
    from .solve import METHODS, traffic_assignment

    # a 3 x 3 grid, links both ways; the zones are nodes 0 and 1, at opposite corners,
    # with a demand that congests the shortest path (else a run stops at iteration 0,
    # before the line search)
    label = [0, 2, 3, 4, 5, 6, 7, 8, 1]  # grid position -> node
    tail, head = [], []
    for r in range(3):
        for c in range(3):
            v = 3 * r + c
            for w in ([v + 1] if c < 2 else []) + ([v + 3] if r < 2 else []):
                tail += [label[v], label[w]]
                head += [label[w], label[v]]
    m = len(tail)
    rng = np.random.default_rng(0)
    net = Network(init_node=np.array(tail), term_node=np.array(head),
                  free_flow_time=rng.uniform(1, 3, m), capacity=rng.uniform(50, 100, m),
                  b=np.full(m, 0.15), power=np.full(m, 4.0),
                  demand=np.array([[0.0, 300.0], [200.0, 0.0]]), n_nodes=9)
    for method in METHODS:
        for n_jobs in (1, 2):
            traffic_assignment(net, method, rel_gap=0.0, max_iter=10, n_jobs=n_jobs,
                               random_state=0)
    # bcfw's compiled block steps (the default on networks of thousands of links)
    traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=10, random_state=0, compiled=True)

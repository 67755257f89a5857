"""Synthetic road networks for the traffic tests."""

from __future__ import annotations

import numpy as np

from frankwolfe.applications.traffic import Network


def grid_network(rows: int, cols: int, n_zones: int, seed: int) -> Network:
    """A grid with links both ways, random BPR parameters and demand between the first
    ``n_zones`` nodes (random costs: no two routes tie)."""
    rng = np.random.default_rng(seed)
    tail, head = [], []
    for r in range(rows):
        for c in range(cols):
            v = r * cols + c
            for w in ([v + 1] if c < cols - 1 else []) + ([v + cols] if r < rows - 1 else []):
                tail += [v, w]
                head += [w, v]
    m = len(tail)
    demand = rng.uniform(20, 200, (n_zones, n_zones))
    np.fill_diagonal(demand, 0.0)
    return Network(init_node=np.array(tail), term_node=np.array(head),
                   free_flow_time=rng.uniform(1, 5, m), capacity=rng.uniform(100, 400, m),
                   b=np.full(m, 0.15), power=rng.choice([1.0, 2.5, 4.0], m), demand=demand,
                   n_nodes=rows * cols)

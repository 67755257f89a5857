"""The shortest-path oracle, measured: one all-origins pass, our numba Dijkstra against
scipy.sparse.csgraph.

For every network of ``--data``/tntp: the seconds of one all-or-nothing assignment
(``AllOrNothing.assign``: one Dijkstra per origin with a binary heap, and the loading of
the demand down each tree) at free-flow costs, and of ``scipy.sparse.csgraph.dijkstra``
from the same origins (distances and predecessors only: no loading, so a lower bound of
an all-or-nothing assignment built on it; it passes through every node, ignoring the
network's first through node, and sums the costs of parallel links: 6 pairs on
Berlin-Center).  Then the same all-or-nothing assignment with ``AllOrNothing(n_jobs=2)``:
two threads over chunks of the origins (the numba kernel releases the GIL; each thread
loads its own flow buffer, summed at the end), checked equal to the one-thread flows.
Best of ``--repeats``, alternated.  The oracle of ``bfw``/``cfw``/``fw`` and of
``bcfw``'s start takes ``traffic_assignment(..., n_jobs=)``; ``bcfw``'s block steps
ask one origin at a time (threads do not apply).

Usage::

    python benchmarks/traffic_dijkstra.py [--data DIR] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from scipy.sparse.csgraph import dijkstra  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from traffic_compiled import NETWORKS  # noqa: E402

from frankwolfe.applications.traffic import AllOrNothing, read_tntp  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get(
        "FRANKWOLFE_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    k = args.threads
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"| network | links | origins | numba AON [ms] | scipy dijkstra [ms] | "
          f"scipy / numba | numba AON, {k} threads [ms] | 1 / {k} threads |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (net_file, trips_file) in NETWORKS.items():
        path = Path(args.data) / "tntp"
        if not (path / net_file).exists():
            continue
        net = read_tntp(path / net_file, path / trips_file)
        costs = net.link_costs(np.zeros(net.n_links))
        aon = AllOrNothing(net)
        threaded = AllOrNothing(net, n_jobs=k)
        origins = aon.origins
        graph = csr_matrix((costs, (net.init_node, net.term_node)),
                           shape=(net.n_nodes, net.n_nodes))
        one, _ = aon.assign(costs)  # numba warm-up
        many, _ = threaded.assign(costs)
        np.testing.assert_allclose(many, one, rtol=1e-12, atol=1e-9 * one.max())
        ours, theirs, par = np.inf, np.inf, np.inf
        for _ in range(args.repeats):
            tic = time.perf_counter()
            aon.assign(costs)
            ours = min(ours, time.perf_counter() - tic)
            tic = time.perf_counter()
            dijkstra(graph, directed=True, indices=origins, return_predecessors=True)
            theirs = min(theirs, time.perf_counter() - tic)
            tic = time.perf_counter()
            threaded.assign(costs)
            par = min(par, time.perf_counter() - tic)
        print(f"| {name} | {net.n_links} | {origins.size} | {1e3 * ours:.2f} | "
              f"{1e3 * theirs:.2f} | {theirs / ours:.2f} | {1e3 * par:.2f} | "
              f"{ours / par:.2f} |", flush=True)


if __name__ == "__main__":
    main()

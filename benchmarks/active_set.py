"""Benchmark: the ActiveSet away query and away-step / pairwise iterations.

Two measurements, all data from one seeded numpy Generator:

* away query: ``ActiveSet.scores(g)`` (one stacked product) against a Python
  scan ``[a.dot(g) for a in atoms]``, for k active atoms of dimension n,
  dense atoms (row buffer) and sparse 10-nnz atoms (flat index arrays);
* time per iteration of ``frank_wolfe``, ``away_step_frank_wolfe`` and
  ``pairwise_frank_wolfe`` (plain and blended) on an l1-constrained least
  squares problem (``LeastSquares``, exact steps), with the gap reached.

On a loaded machine set ``OPENBLAS_NUM_THREADS=1``: a threaded mat-vec
competing for the cores is slower than the Python scan.

Usage::

    .venv/bin/python benchmarks/active_set.py          # n up to 10000
    .venv/bin/python benchmarks/active_set.py --quick
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

import frankwolfe as fw
from frankwolfe.objectives.least_squares import LeastSquares


def python_scan(atoms: list[fw.Atom], g: np.ndarray) -> list[float]:
    """The per-atom scan that ActiveSet.scores replaces."""
    return [a.dot(g) for a in atoms]


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def away_query(rng: np.random.Generator, quick: bool) -> None:
    print("away query (seconds per query, best of 5)")
    print(f"{'storage':>8} {'n':>7} {'k':>6} {'vectorized':>11} {'python scan':>12} "
          f"{'speed-up':>9}")
    sizes = [(1000, 100), (1000, 1000)] if quick else [(1000, 100), (1000, 1000), (10000, 1000)]
    for storage in ("dense", "sparse"):
        for n, k in sizes:
            if storage == "dense":
                atoms = [fw.Atom(rng.standard_normal(n)) for _ in range(k)]
            else:
                atoms = [fw.Atom.sparse(rng.choice(n, 10, replace=False),
                                        rng.standard_normal(10), n) for _ in range(k)]
            S = fw.ActiveSet(atoms, rng.dirichlet(np.ones(k)))
            g = rng.standard_normal(n)
            assert np.allclose(S.scores(g), [a.dot(g) for a in atoms])
            t_vec = best_of(partial(S.scores, g))
            t_py = best_of(partial(python_scan, atoms, g))
            print(f"{storage:>8} {n:>7} {k:>6} {t_vec:11.2e} {t_py:12.2e} {t_py / t_vec:9.1f}")


def solvers(rng: np.random.Generator, quick: bool) -> None:
    m, n, s = (400, 1000, 40) if quick else (2000, 5000, 100)
    A = rng.standard_normal((m, n)) / np.sqrt(m)
    x_true = np.zeros(n)
    x_true[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    f = LeastSquares(A, b)
    lmo = fw.L1Ball(0.9 * np.abs(x_true).sum(), dim=n)
    iters = 300 if quick else 1000
    print(f"\nl1-constrained least squares m={m} n={n}, {iters} iterations, exact steps")
    print(f"{'method':>22} {'ms/iter':>8} {'gap':>9} {'|S|':>5}")
    for name, solver, opts in [
        ("frank_wolfe", fw.frank_wolfe, {}),
        ("away_step", fw.away_step_frank_wolfe, {}),
        ("pairwise", fw.pairwise_frank_wolfe, {}),
        ("blended pairwise", fw.pairwise_frank_wolfe, {"blended": True}),
    ]:
        t = time.perf_counter()
        res = solver(f, lmo, tol=0.0, max_iter=iters, step_size="exact", **opts)
        dt = time.perf_counter() - t
        size = len(res.active_set) if res.active_set is not None else "-"
        print(f"{name:>22} {1e3 * dt / max(res.nit, 1):8.3f} {res.gap:9.2e} {size:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    away_query(rng, args.quick)
    solvers(rng, args.quick)


if __name__ == "__main__":
    main()

"""Time per iteration of the shared loop next to a bare numpy Frank-Wolfe loop.

Problem: ``f(x) = 1/2 x^T Q x + b^T x`` over the probability simplex, ``Q = M^T M / n``
PSD (seeded) and ``b = -Q x*`` for a point ``x*`` inside the simplex (the minimizer:
FW zigzags towards it and never certifies a zero gap), ``n`` in ``--dims``.  Each
configuration runs ``--iters`` iterations (fewer at large ``n``) with ``tol=0`` (no
early stop), after one warm-up run (numba compiles, caches fill); the runs alternate
for ``--repeats`` rounds and the best CPU time of each is kept.  Reported: CPU
microseconds per iteration and the ratio library / bare.

* ``bare``: numpy only, the arithmetic of vanilla FW: ``g = Q x + b``, ``f``, the
  vertex ``argmin g``, the gap ``<g, x> - g_i``, the step (exact: ``-<g, d> / d^T Q d``
  clipped to ``[0, 1]``; agnostic: ``2 / (k + 2)``), ``x += gamma d``;
* ``fw``: :func:`frankwolfe.frank_wolfe` with the default step (``"exact"`` on a
  quadratic) and with ``step_size="agnostic"``;
* ``away``, ``pairwise``: the active-set methods (default step), next to the same
  bare vanilla loop (they do more per iteration: the active set's bookkeeping).

The library keeps ``Q x`` from cached columns ``Q e_i`` (O(n) a step) where the bare
loop multiplies by ``Q`` (O(n^2)): at large ``n`` the library is the faster; at
``n = 20`` the arithmetic costs nothing and the ratio is the loop's overhead.

Run: .venv/bin/python benchmarks/loop_overhead.py [--dims 20 200 2000]
     [--iters 20000] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from results_file import write_json  # noqa: E402

import frankwolfe as fw  # noqa: E402


def make_problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, b)``: ``Q = M^T M / n`` (PSD) and ``b = -Q x*``, ``x*`` inside the simplex."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M.T @ M / n
    x_star = rng.dirichlet(np.ones(n))
    return Q, -Q @ x_star


def bare_loop(Q: np.ndarray, b: np.ndarray, iters: int, step: str) -> tuple[np.ndarray, float]:
    """Vanilla FW in plain numpy from ``e_0``; ``(x, last gap)``."""
    n = b.size
    x = np.zeros(n)
    x[0] = 1.0
    gap = np.inf
    for k in range(iters):
        Qx = Q @ x
        g = Qx + b
        f = 0.5 * float(x @ Qx) + float(b @ x)  # noqa: F841 - the library computes it too
        i = int(g.argmin())  # the method: np.argmin adds a Python-level wrapper
        gap = float(g @ x) - float(g[i])
        d = -x
        d[i] += 1.0
        if step == "exact":
            curv = float(d @ (Q[i] - Qx))  # d^T Q d, with Q d = Q e_i - Q x
            gamma = min(1.0, gap / curv) if curv > 0 else 1.0
        else:
            gamma = 2.0 / (k + 2.0)
        x += gamma * d
    return x, gap


def library_run(method: str, Q: np.ndarray, b: np.ndarray, iters: int,
                step: str | None) -> fw.Result:
    f = fw.QuadraticObjective(Q, b)
    x0 = np.zeros(b.size)
    x0[0] = 1.0
    solver = {"fw": fw.frank_wolfe, "away": fw.away_step_frank_wolfe,
              "pairwise": fw.pairwise_frank_wolfe}[method]
    return solver(f, fw.ProbabilitySimplex(), x0, step_size=step, tol=0.0, max_iter=iters)


def best_times(runs: dict, iters: int, repeats: int) -> dict:
    """Best CPU microseconds per iteration of each ``runs[name]()`` over ``repeats`` rounds.

    CPU time (``time.process_time``; every run is single-threaded) and runs that
    alternate within a round: on a shared machine the wall time of a run includes the
    time other processes held the core, and a change of load weighs on all runs alike.
    """
    for run in runs.values():
        run()  # warm-up: numba compiles, caches fill
    best = dict.fromkeys(runs, np.inf)
    for _ in range(repeats):
        for name, run in runs.items():
            tic = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - tic)
    return {name: 1e6 * t / iters for name, t in best.items()}


CONFIGS = (("fw", "exact"), ("fw", "agnostic"), ("away", None), ("pairwise", None))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[20, 200, 2000])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    print(f"{args.iters} iterations, best of {args.repeats}; load {os.getloadavg()[0]:.2f}")
    print(f"{'n':>6} {'method':>9} {'step':>9} {'bare us/it':>11} {'lib us/it':>10} {'ratio':>6}")
    out: dict = {"iters": args.iters, "rows": []}
    for n in args.dims:
        Q, b = make_problem(n)
        # fewer iterations where the bare loop's O(n^2) product dominates
        iters = max(1000, min(args.iters, args.iters * 200 // n))
        runs = {("bare", s): partial(bare_loop, Q, b, iters, s) for s in ("exact", "agnostic")}
        runs.update({(m, s): partial(library_run, m, Q, b, iters, s) for m, s in CONFIGS})
        us = best_times(runs, iters, args.repeats)
        for method, step in CONFIGS:
            ref, lib = us[("bare", step or "exact")], us[(method, step)]
            row = {"n": n, "method": method, "step": step or "default", "iters": iters,
                   "bare_us": ref, "library_us": lib, "ratio": lib / ref}
            out["rows"].append(row)
            print(f"{n:>6} {method:>9} {row['step']:>9} {ref:>11.1f} {lib:>10.1f} "
                  f"{lib / ref:>6.2f}", flush=True)
    if args.json:
        write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()

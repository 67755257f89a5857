"""QAPLIB: our FAQ (core Frank-Wolfe + rounding + 2-opt) side by side with scipy's FAQ.

For each instance in ``<data>/qaplib`` (chr12a, had12, nug12, tai12a), in one run:

* best-known value (the ``.sln`` file, checked against its permutation);
* scipy ``quadratic_assignment(A, B, method="faq")`` from its default start
  (the barycenter ``J/n``) and :func:`solve_qap` from the same start with its
  defaults (best of ``--repeats`` timings each);
* scipy's best of 10 runs from ``P0="randomized"`` and :func:`solve_qap`
  with ``restarts=14, max_iter=5`` (the barycenter run plus 14 random
  starts, 5 Frank-Wolfe iterations each): median objective and median wall
  time over ``--seeds`` seeds (one ``numpy.random.Generator`` per seed);
* an ablation: the best 2-opt local minimum from as many random permutations
  as we have runs (15), to show what the Frank-Wolfe relaxation adds.

Everything runs on one BLAS thread.  The numba 2-opt is compiled (and
cached) before any timing.

Usage::

    python benchmarks/qap.py [--data DIR] [--seeds 11] [--repeats 5] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from functools import partial
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import quadratic_assignment  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from results_file import write_json  # noqa: E402

from frankwolfe.applications.matching import (  # noqa: E402
    qap_value,
    read_qaplib,
    read_qaplib_solution,
    solve_qap,
    two_opt,
)

INSTANCES = ("chr12a", "had12", "nug12", "tai12a")
RESTARTS = 14  # + the barycenter run = 15 runs
RESTART_ITERS = 5
SCIPY_RUNS = 10


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def _gap(value: float, best: float) -> float:
    return 100.0 * (value - best) / best


def _scipy_best_of(A, B, rng: np.random.Generator) -> float:
    options = {"P0": "randomized", "rng": rng}
    return min(quadratic_assignment(A, B, method="faq", options=options).fun
               for _ in range(SCIPY_RUNS))


def _random_two_opt(A, B, rng: np.random.Generator, starts: int) -> float:
    return min(qap_value(A, B, two_opt(A, B, rng.permutation(A.shape[0]))[0])
               for _ in range(starts))


def run(data: Path, seeds: int, repeats: int) -> list[dict]:
    A0, B0 = read_qaplib(data / f"{INSTANCES[0]}.dat")
    solve_qap(A0, B0, max_iter=2)  # compile / load the numba cache
    rows = []
    for name in INSTANCES:
        A, B = read_qaplib(data / f"{name}.dat")
        best = float(read_qaplib_solution(data / f"{name}.sln", A, B).objective)
        sp_fun = ours_fun = None
        sp_t, ours_t = [], []
        for _ in range(repeats):
            ref, t = _timed(quadratic_assignment, A, B, method="faq")
            sp_fun, _ = ref.fun, sp_t.append(t)
            res, t = _timed(solve_qap, A, B)
            ours_fun, _ = res.fun, ours_t.append(t)
        sp10, sp10_t, our_r, our_r_t, abl = [], [], [], [], []
        for seed in range(seeds):
            v, t = _timed(_scipy_best_of, A, B, np.random.default_rng(seed))
            sp10.append(v)
            sp10_t.append(t)
            r, t = _timed(solve_qap, A, B, restarts=RESTARTS, max_iter=RESTART_ITERS,
                          random_state=seed)
            our_r.append(r.fun)
            our_r_t.append(t)
            abl.append(_random_two_opt(A, B, np.random.default_rng(seed), RESTARTS + 1))
        row = {
            "instance": name, "n": int(A.shape[0]), "best_known": best,
            "scipy_faq": float(sp_fun), "scipy_faq_time": min(sp_t),
            "ours_same_start": float(ours_fun), "ours_same_start_time": min(ours_t),
            "scipy_best_of_10": float(np.median(sp10)),
            "scipy_best_of_10_values": [float(v) for v in sp10],
            "scipy_best_of_10_time": float(np.median(sp10_t)),
            "ours_restarts": float(np.median(our_r)),
            "ours_restarts_values": [float(v) for v in our_r],
            "ours_restarts_time": float(np.median(our_r_t)),
            "random_2opt_15": float(np.median(abl)),
            "random_2opt_15_values": [float(v) for v in abl],
        }
        row["same_start_ok"] = row["ours_same_start"] <= row["scipy_faq"]
        row["restarts_gap_ok"] = row["ours_restarts"] <= row["scipy_best_of_10"]
        row["restarts_time_ok"] = row["ours_restarts_time"] <= row["scipy_best_of_10_time"]
        rows.append(row)
    return rows


def _cell(best: float, v: float, t: float | None = None) -> str:
    s = f"{v:.0f} ({_gap(v, best):4.1f}%)"
    return s if t is None else f"{s} {1e3 * t:5.1f}ms"


def print_table(rows: list[dict]) -> None:
    head = (f"{'instance':8} {'best':>7} | {'scipy FAQ':>14} {'ours same':>14} | "
            f"{'scipy best10 (med)':>22} {'ours restarts (med)':>22} | {'rand 2opt':>14}")
    print(head)
    print("-" * len(head))
    for r in rows:
        b = r["best_known"]
        cell = partial(_cell, b)
        print(f"{r['instance']:8} {b:7.0f} | {cell(r['scipy_faq']):>14} "
              f"{cell(r['ours_same_start']):>14} | "
              f"{cell(r['scipy_best_of_10'], r['scipy_best_of_10_time']):>22} "
              f"{cell(r['ours_restarts'], r['ours_restarts_time']):>22} | "
              f"{cell(r['random_2opt_15']):>14}")
    print()
    print("times: same-start columns best of the repeats (in JSON); "
          "restart columns median over seeds")
    for r in rows:
        print(f"{r['instance']:8} same start: scipy {1e3 * r['scipy_faq_time']:.2f} ms, "
              f"ours {1e3 * r['ours_same_start_time']:.2f} ms | "
              f"ours <= scipy same start: {r['same_start_ok']}; "
              f"median gap <= scipy best-of-10: {r['restarts_gap_ok']}; "
              f"time <= scipy best-of-10: {r['restarts_time_ok']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("FRANKWOLFE_DATA", default_data)))
    parser.add_argument("--seeds", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "qap.json")
    args = parser.parse_args()
    folder = args.data / "qaplib"
    if not folder.is_dir():
        sys.exit(f"QAPLIB folder not found: {folder}")
    warnings.simplefilter("ignore", FutureWarning)  # scipy's note on integer rng seeds
    rows = run(folder, args.seeds, args.repeats)
    print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"seeds": args.seeds, "repeats": args.repeats, "restarts": RESTARTS,
            "restart_max_iter": RESTART_ITERS, "scipy_runs": SCIPY_RUNS,
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    write_json(args.out, {"meta": meta, "rows": rows}, indent=2)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()

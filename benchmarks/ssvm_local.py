"""Local rounds on a Dask cluster (``round_step="local"``, resident blocks) against serial
BCFW on CoNLL-2000 at lam = 1/n: seconds per pass and time to a certified gap, in one
run (issue #27).

Rows, one after the other in this process:

* ``serial BCFW``: the compiled pass in this process, gap sampling (the best serial
  order) and ``perm`` (the order of the resident rows);
* ``local W``: resident blocks (``SSVMDual.from_source(..., resident=True)`` over
  :class:`Conll2000Source`: each worker reads the corpus and keeps its range) on a
  ``LocalCluster`` of ``W`` worker processes of one thread, local rounds of ``--tau``
  blocks (``n``: one round a pass), ``perm`` order;
* ``joint W tau``: the same cluster, joint rounds of each ``--joint-tau``;
* ``lock-free W order`` (``--lock-free`` and its block orders): the same cluster,
  lock-free passes on the resident blocks (``round_step="lock_free"``: the workers step
  together on one gradient in shared memory).

Each row: one warm-up fit of one pass (the workers compile), then ``--passes`` passes
without certificates (seconds per pass: the median of the passes after the first), then
a run to a certified gap of ``--target`` x primal (a certificate every ``--gap-every``
passes, counted as a pass) or ``--limit`` seconds, its certificate trace kept.

Run (on the machine to measure, nothing else running)::

    env FRANKWOLFE_DATA=path/to/data OPENBLAS_NUM_THREADS=1 .venv/bin/python \\
        benchmarks/ssvm_local.py --workers 1 2 --limit 120

Writes ``benchmarks/results/ssvm_local.json`` (``--out``: another file).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_file import write_json  # noqa: E402
from ssvm_cores import _tau  # noqa: E402

import frankwolfe as fw  # noqa: E402
from frankwolfe.applications.structured_svm import (  # noqa: E402
    ChainModel,
    Conll2000Source,
    SSVMDual,
)


def _per_pass(f, dom, kw: dict, passes: int) -> list[float]:
    """Wall seconds of each pass of a run without certificates but its last."""
    res = fw.block_coordinate_frank_wolfe(f, dom, max_iter=passes, tol=0.0,
                                          gap_every=10**6, random_state=0, **kw)
    t = np.asarray(res.history["time"], dtype=float)
    return np.diff(t[:passes]).tolist()


def _to_gap(f, dom, kw: dict, seconds: float, target: float, gap_every: int) -> dict:
    """A run until a certified gap of ``target`` x primal or ``seconds``: its certificate
    trace (effective passes, gap, primal, seconds)."""
    n = dom.n
    trace: list = []
    row: dict = {"trace": trace, "reached": False, "time_limit": seconds}

    def certificate(s) -> bool | None:
        if not np.isfinite(s.gap):
            return None
        primal = s.gap - s.fun  # f is the negated dual: gap = primal - dual
        trace.append([s.info["oracle_calls"] / n, float(s.gap), float(primal), float(s.time)])
        if s.gap <= target * primal:
            row.update(reached=True, passes=trace[-1][0], seconds=float(s.time))
            return False
        return None

    res = fw.block_coordinate_frank_wolfe(f, dom, max_iter=10**6, tol=0.0,
                                          gap_every=gap_every, random_state=0,
                                          callback=certificate, time_limit=seconds, **kw)
    row.update(engine=res.extra["engine"], status=str(res.status),
               reason=res.extra.get("engine_reason"))
    return row


def _row(label: str, f, dom, kw: dict, a: argparse.Namespace) -> dict:
    with fw.debug(False):
        fw.block_coordinate_frank_wolfe(f, dom, max_iter=1, tol=0.0, gap_every=10**6,
                                        random_state=0, **kw)  # compile, here and there
        times = _per_pass(f, dom, kw, a.passes)
        out = {"label": label, "pass_seconds": times,
               "median_pass_seconds": float(np.median(times[1:] or times))}
        print(f"{label}: {out['median_pass_seconds']:.3f} s a pass", flush=True)
        if a.limit > 0:
            out["gap"] = _to_gap(f, dom, kw, a.limit, a.target, a.gap_every)
            g = out["gap"]
            last = g["trace"][-1] if g["trace"] else None
            print(f"  to {a.target} x primal: "
                  + (f"{g['seconds']:.1f} s, {g['passes']:.0f} passes" if g["reached"]
                     else f"not in {a.limit:.0f} s (last {last})"), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--tau", nargs="*", default=["n"], help="local rounds' batch sizes")
    ap.add_argument("--joint-tau", nargs="*", default=[], help="joint rounds' batch sizes")
    ap.add_argument("--lock-free", nargs="*", default=[],
                    help="rows of lock-free passes on each cluster: their block orders")
    ap.add_argument("--serial", nargs="*", default=["gap", "perm"],
                    help="serial BCFW rows: their block orders")
    ap.add_argument("--passes", type=int, default=5,
                    help="passes per timed run (>= 2: the last one certifies, untimed)")
    ap.add_argument("--target", type=float, default=0.5)
    ap.add_argument("--gap-every", type=int, default=5)
    ap.add_argument("--limit", type=float, default=120.0, help="seconds of a gap row; 0: none")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ssvm_local.json"))
    a = ap.parse_args()
    if a.passes < 2:  # _per_pass times all passes but the last: one pass times nothing
        ap.error(f"--passes must be at least 2, got {a.passes}")
    from distributed import Client, LocalCluster

    corpus = Conll2000Source()
    model = ChainModel(corpus.n_states, corpus.feature_sizes)
    n = len(corpus)
    lam = 1.0 / n
    data: dict[str, Any] = {"machine": {"cpus": os.cpu_count(),
                                        "python": platform.python_version()},
                            "args": vars(a), "rows": []}
    here = SSVMDual.from_source(model, corpus, lam)
    for order in a.serial:
        data["rows"].append(_row(f"serial BCFW {order}", here.dual_objective(), here,
                                 {"block_order": order, "averaging": None}, a))
        write_json(a.out, data)
    for W in a.workers:
        env = {"OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
        with LocalCluster(n_workers=W, threads_per_worker=1, processes=True,
                          dashboard_address=None, env=env) as lc, Client(lc) as client:
            rows = [(f"local {W} tau={t}", {"batch_size": _tau(t, n), "round_step": "local"})
                    for t in a.tau]
            rows += [(f"joint {W} tau={t}", {"batch_size": _tau(t, n), "round_step": "joint"})
                     for t in a.joint_tau]
            rows += [(f"lock-free {W} {order}", {"round_step": "lock_free",
                                                  "block_order": order})
                     for order in a.lock_free]
            for label, kw in rows:
                dom = SSVMDual.from_source(model, corpus, lam, resident=True)
                kw = {"block_order": "perm", **kw, "averaging": None,
                      "executor": fw.DaskExecutor(client)}
                tic = time.perf_counter()
                data["rows"].append(_row(label, dom.dual_objective(), dom, kw, a))
                data["rows"][-1]["row_seconds"] = time.perf_counter() - tic
                write_json(a.out, data)


if __name__ == "__main__":
    main()

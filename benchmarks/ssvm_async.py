"""Asynchronous mini-batch BCFW (``staleness``) against synchronous rounds and serial BCFW
on CoNLL-2000 (lam = 1/n, tau = n/16): seconds per pass and time to a certified gap,
on threads and on a Dask LocalCluster, in one run; and the cost model recalibrated on
this machine, projected to 16 cores and checked against issue #27's 16-core table.

Two parts (``--part``):

* ``pass``: wall seconds per pass (the mean of passes 2..P of a run with no certificate
  inside, so no compilation and no certificate is counted), rows alternated, the best
  of ``--repeats``: serial BCFW (the compiled pass), compiled rounds on 1 and 2 threads,
  synchronous and asynchronous (staleness 1), and on LocalClusters of 1 and 2 worker
  processes (one thread each), synchronous and asynchronous; joint rounds
  (``round_step="joint"``: one step per round) on 1 and 2 threads and on both clusters;
  the per-step delays of the asynchronous rows.
* ``progress``: the certified gap after ``--passes`` passes (one certificate, at the end)
  for serial BCFW and 2 threads, synchronous, asynchronous and joint.
* ``gap``: wall seconds (certificates included, one every ``--gap-every`` passes) to a
  certified duality gap of ``--target`` x primal, for serial BCFW, 2 threads (sync and
  async) and 2 Dask workers (async).
* ``same-gap``: on ``--data`` (OCR-large or CoNLL), serial BCFW and asynchronous rounds
  of ``--tau`` blocks on 2 threads (staleness 1 and 2) to a certified gap of
  ``--target`` x primal: the passes, the seconds, each run's bracket ``[dual, primal]``
  of the optimum and whether the brackets meet (both runs certify the same optimum: a
  two-sided check), and the staleness distribution (``extra["delays"]``: block steps
  taken j steps after their answer's point).

Run on an otherwise idle machine::

    env OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/ssvm_async.py --part all

Writes ``benchmarks/results/ssvm_async.json`` (``--out``: another file).  The Dask rows
of ``pass`` give the client's search for what changed in the point per round
(``diff_ms_per_round``: from the coordinates the steps touched since 2026-11-27).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_file import write_json  # noqa: E402

import frankwolfe as fw  # noqa: E402
from frankwolfe.applications.structured_svm.dual import SSVMDual  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from ssvm import load  # noqa: E402  (the data sets and their models, as benchmarks/ssvm.py)

RESULTS = ROOT / "benchmarks" / "results"
#: issue #27's table: CoNLL, tau = n/16, seconds per pass on a 16-core machine
ISSUE_16_CORES = {"serial": 0.307, "threads": {1: 0.299, 2: 0.198, 4: 0.235, 8: 0.193, 16: 0.145}}


def _run(f, dom, passes: int, **kw) -> fw.Result:
    with fw.debug(False):  # the compiled engine does not run in debug mode
        return fw.block_coordinate_frank_wolfe(f, dom, max_iter=passes, tol=0.0,
                                               random_state=0, **kw)


def _per_pass(f, dom, passes: int, **kw) -> dict:
    """Seconds per pass after the first (no certificate inside: gap_every huge), and the
    rounds' oracle phase (and the steps' waits for it) over the same passes."""
    seen: dict = {}
    ex = kw.get("executor")

    def record(s):
        seen[s.k] = (s.info.get("oracle_seconds", np.nan),
                     s.info.get("oracle_wait_seconds", np.nan), time.process_time(),
                     getattr(ex, "diff_seconds", np.nan), s.info.get("rounds", 0))

    res = _run(f, dom, passes, gap_every=10**6, callback=record, **kw)
    t = np.asarray(res.history["time"], dtype=float)
    m = passes - 1
    # this process's CPU seconds (a Dask worker's are its own): on a loaded machine the
    # wall seconds of a 1-thread row overstate its cost, its CPU seconds do not
    out = {"pass_seconds": float((t[passes] - t[1]) / m), "engine": res.extra["engine"],
           "oracle_seconds_per_pass": (seen[passes][0] - seen[1][0]) / m,
           "wait_seconds_per_pass": (seen[passes][1] - seen[1][1]) / m,
           "cpu_seconds_per_pass": (seen[passes][2] - seen[1][2]) / m,
           "load_average": os.getloadavg()[0]}
    if hasattr(ex, "diff_seconds") and seen[passes][4] > seen[1][4]:
        # a Dask client's search for what changed in the point, per round
        out["diff_ms_per_round"] = 1e3 * (seen[passes][3] - seen[1][3]) / (
            seen[passes][4] - seen[1][4])
    for key in ("mean_delay", "max_delay"):
        if key in res.extra:
            out[key] = res.extra[key]
    return out


def _cluster(workers: int):
    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    return cluster, distributed.Client(cluster)


def per_pass(repeats: int, passes: int) -> dict:
    model, X, Y = load("conll")
    n = len(X)
    tau = n // 16
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    clusters = {w: _cluster(w) for w in (1, 2)}
    try:
        rows = {"serial BCFW": {},
                "1 thread": dict(batch_size=tau, n_jobs=1),
                "2 threads": dict(batch_size=tau, n_jobs=2),
                "2 threads, async": dict(batch_size=tau, n_jobs=2, staleness=1),
                "1 thread, async": dict(batch_size=tau, n_jobs=1, staleness=1),
                "1 thread, joint": dict(batch_size=tau, n_jobs=1, round_step="joint"),
                "2 threads, joint": dict(batch_size=tau, n_jobs=2, round_step="joint")}
        for w, (_, client) in clusters.items():
            ex = fw.DaskExecutor(client)
            rows[f"Dask {w} worker{'s' * (w > 1)}"] = dict(batch_size=tau, executor=ex)
            rows[f"Dask {w} worker{'s' * (w > 1)}, joint"] = dict(batch_size=tau, executor=ex,
                                                                 round_step="joint")
            rows[f"Dask {w} worker{'s' * (w > 1)}, async"] = dict(batch_size=tau, executor=ex,
                                                                 staleness=1)
        for kw in rows.values():  # compile in this process and on the workers
            _run(f, dom, 1, gap_every=10**6, **kw)
        best: dict = {}
        for _ in range(repeats):
            for label, kw in rows.items():
                r = _per_pass(f, dom, passes, **kw)
                print(label, r, flush=True)
                if label not in best or r["pass_seconds"] < best[label]["pass_seconds"]:
                    best[label] = r
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    serial = best["serial BCFW"]["pass_seconds"]
    for r in best.values():
        r["speedup_vs_serial"] = serial / r["pass_seconds"]
    return {"n": n, "tau": tau, "passes": passes, "repeats": repeats, "rows": best}


def _stop_at(target: float, hit: dict):
    """A callback ending a run at its first certified gap <= ``target`` x primal, which
    writes the passes, seconds, gap and primal there into ``hit``."""
    def stop(s):
        if np.isfinite(s.gap) and s.gap <= target * (s.gap - s.fun):  # gap - f: primal
            hit.update(passes=s.k, seconds=s.time, gap=s.gap, primal=s.gap - s.fun)
            return False
        return None

    return stop


def to_gap(target: float, gap_every: int, max_passes: int) -> dict:
    model, X, Y = load("conll")
    n = len(X)
    tau = n // 16
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    cluster, client = _cluster(2)
    out: dict = {"n": n, "tau": tau, "target": f"{target} x primal", "gap_every": gap_every,
                 "runs": {}}
    try:
        rows = {"serial BCFW": {},
                "2 threads": dict(batch_size=tau, n_jobs=2),
                "2 threads, async": dict(batch_size=tau, n_jobs=2, staleness=1),
                "Dask 2 workers, async": dict(batch_size=tau, executor=fw.DaskExecutor(client),
                                              staleness=1)}
        for kw in rows.values():
            _run(f, dom, 1, gap_every=10**6, **kw)
        for label, kw in rows.items():
            hit: dict = {}
            res = _run(f, dom, max_passes, gap_every=gap_every, callback=_stop_at(target, hit),
                       **kw)
            row = {"reached": bool(hit), "final_gap": res.gap, **hit}
            for key in ("mean_delay", "max_delay"):
                if key in res.extra:
                    row[key] = res.extra[key]
            out["runs"][label] = row
            print(label, row, flush=True)
    finally:
        client.close()
        cluster.close()
    serial = out["runs"]["serial BCFW"].get("seconds")
    for r in out["runs"].values():
        if serial is not None and "seconds" in r:
            r["speedup_vs_serial"] = serial / r["seconds"]
    return out


def same_gap(data: str, target: float, gap_every: int, max_passes: int,
             tau_arg: str) -> dict:
    """Serial BCFW and asynchronous rounds of ``tau_arg`` blocks (an integer or ``n/16``)
    to one certified relative gap on ``data``: the brackets of the optimum and the
    staleness distribution (module docstring)."""
    model, X, Y = load(data)
    n = len(X)
    tau = n // 16 if tau_arg == "n/16" else int(tau_arg)
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    rows = {"serial BCFW": {},
            "2 threads, async (staleness 1)": dict(batch_size=tau, n_jobs=2, staleness=1),
            "2 threads, async (staleness 2)": dict(batch_size=tau, n_jobs=2, staleness=2)}
    out: dict = {"data": data, "n": n, "tau": tau, "target": f"{target} x primal",
                 "gap_every": gap_every, "runs": {}}
    for kw in rows.values():
        _run(f, dom, 1, gap_every=10**6, **kw)
    for label, kw in rows.items():
        hit: dict = {}
        res = _run(f, dom, max_passes, gap_every=gap_every, callback=_stop_at(target, hit), **kw)
        dual = -float(res.fun)
        row = {"reached": bool(hit), "gap": float(res.gap), "dual": dual,
               "primal": dual + float(res.gap), **hit}
        if "delays" in res.extra:
            delays = np.asarray(res.extra["delays"], dtype=np.int64)
            last = int(np.flatnonzero(delays)[-1]) + 1 if delays.any() else 0
            row.update(delays=delays[:last].tolist(), mean_delay=res.extra["mean_delay"],
                       max_delay=res.extra["max_delay"])
        out["runs"][label] = row
        print(label, {k: v for k, v in row.items() if k != "delays"}, flush=True)
    serial = out["runs"]["serial BCFW"]
    for r in out["runs"].values():
        # both brackets hold the optimum: they meet (a tolerance on both sides, for the
        # rounding of two summation orders)
        slack = 1e-9 * max(1.0, abs(serial["primal"]))
        r["brackets_meet"] = bool(max(serial["dual"], r["dual"])
                                  <= min(serial["primal"], r["primal"]) + slack)
        if "seconds" in r and "seconds" in serial:
            r["speedup_vs_serial"] = serial["seconds"] / r["seconds"]
    return out


def progress(passes: int) -> dict:
    """The certified gap after ``passes`` passes (one certificate, at the end) and the
    wall seconds, for serial BCFW and 2 threads, synchronous and asynchronous: how much
    a pass of stale rounds achieves next to a serial one."""
    model, X, Y = load("conll")
    n = len(X)
    tau = n // 16
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    rows = {"serial BCFW": {}, "2 threads": dict(batch_size=tau, n_jobs=2),
            "2 threads, async": dict(batch_size=tau, n_jobs=2, staleness=1),
            "2 threads, joint": dict(batch_size=tau, n_jobs=2, round_step="joint")}
    out: dict = {"n": n, "tau": tau, "passes": passes, "runs": {}}
    for kw in rows.values():
        _run(f, dom, 1, gap_every=10**6, **kw)
    for label, kw in rows.items():
        res = _run(f, dom, passes, gap_every=passes, **kw)
        dual = -res.fun
        out["runs"][label] = {"dual": dual, "gap": res.gap, "primal": res.gap + dual,
                              "relative_gap": res.gap / (res.gap + dual),
                              "seconds": res.time}
        print(label, out["runs"][label], flush=True)
    return out


def cpu_split(repeats: int, passes: int) -> dict:
    """Where a pass's CPU goes, in thread CPU seconds (little disturbed by other load,
    unlike the wall seconds of a shared machine): serial BCFW's pass, and for compiled
    rounds on 1 and 2 threads the oracle phase (each thread's CPU inside the chain round
    oracle, summed, and per round the busiest thread's: the phase's critical path) and
    the rest of the calling thread's CPU (the step phase and the rounds' bookkeeping).
    ``idle_estimate``: what a pass would take on free cores, the step phase plus the
    oracle phase's critical path (its threads share only the memory bus)."""
    import threading

    from frankwolfe.applications.structured_svm.models.chain import rounds as chain_rounds

    model, X, Y = load("conll")
    n = len(X)
    tau = n // 16
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    kernel = chain_rounds._round_vertices
    calls: list = []  # (wall start, wall end, thread, thread CPU) of each oracle call

    def timed(which, *args):
        t0, c0 = time.perf_counter(), time.thread_time()
        kernel(which, *args)
        calls.append((t0, time.perf_counter(), threading.get_ident(),
                      time.thread_time() - c0))

    def phase(a: float, b: float) -> tuple[float, float, float]:
        """Oracle CPU between wall times a and b: summed, the critical path (a round's
        chunks overlap in time; the next round's start after they end), and this
        thread's."""
        me = threading.get_ident()
        inside = sorted(c for c in calls if a <= c[0] and c[1] <= b)
        total = sum(c[3] for c in inside)
        own = sum(c[3] for c in inside if c[2] == me)
        crit, end, group = 0.0, -np.inf, 0.0
        for t0, t1, _, cpu in inside:
            if t0 >= end:  # a new round
                crit += group
                group = 0.0
            group = max(group, cpu)
            end = max(end, t1)
        return total, crit + group, own

    rows = {"serial BCFW": {}, "1 thread": dict(batch_size=tau, n_jobs=1),
            "2 threads": dict(batch_size=tau, n_jobs=2)}
    best: dict = {}
    chain_rounds._round_vertices = timed
    try:
        for kw in rows.values():
            _run(f, dom, 1, gap_every=10**6, **kw)
        for _ in range(repeats):
            for label, kw in rows.items():
                marks: dict = {}

                def record(st, marks=marks):
                    if st.k in (1, passes):
                        marks[st.k] = (time.perf_counter(), time.thread_time(), st.time)

                calls.clear()
                _run(f, dom, passes, gap_every=10**6, callback=record, **kw)
                m = passes - 1
                (w1, c1, t1), (w2, c2, t2) = marks[1], marks[passes]
                total, crit, own = phase(w1, w2)
                r = {"wall_per_pass": (t2 - t1) / m,
                     "main_thread_cpu_per_pass": (c2 - c1) / m,
                     "oracle_cpu_per_pass": total / m,
                     "oracle_critical_cpu_per_pass": crit / m,
                     "step_cpu_per_pass": (c2 - c1 - own) / m,
                     "load_average": os.getloadavg()[0]}
                r["idle_estimate"] = r["step_cpu_per_pass"] + r["oracle_critical_cpu_per_pass"]
                print(label, r, flush=True)
                if label not in best or r["idle_estimate"] < best[label]["idle_estimate"]:
                    best[label] = r
    finally:
        chain_rounds._round_vertices = kernel
    serial = best["serial BCFW"]["idle_estimate"]
    for r in best.values():
        r["estimated_speedup_vs_serial"] = serial / r["idle_estimate"]
    return {"n": n, "tau": tau, "passes": passes, "repeats": repeats, "rows": best}


def cost_model(rows: dict, n: int, tau: int) -> dict:
    """Per pass: ``T_sync(W) = n t_step + n t_oracle / W`` and ``T_async(W) = max(n t_step,
    n t_oracle / W) + n t_oracle / (W R)`` (R rounds a pass; the first round of a pass is
    waited for), ``t_oracle`` from the 1-thread row's oracle phase and ``t_step`` its
    rest, checked on this machine's 2-thread rows and on the issue's 16-core table."""
    one = rows["1 thread"]
    t_oracle = one["oracle_seconds_per_pass"] / n
    t_step = (one["pass_seconds"] - one["oracle_seconds_per_pass"]) / n
    R = -(-n // tau)

    def sync(W: int) -> float:
        return n * t_step + n * t_oracle / W

    def async_(W: int) -> float:
        return max(n * t_step, n * t_oracle / W) + n * t_oracle / (W * R)

    out = {"t_oracle_us": t_oracle * 1e6, "t_step_us": t_step * 1e6,
           "check_2_threads": {"sync": [sync(2), rows["2 threads"]["pass_seconds"]],
                               "async": [async_(2), rows["2 threads, async"]["pass_seconds"]]}}
    # the issue's machine: its 1-thread row scaled by this machine's split of a pass
    scale = ISSUE_16_CORES["threads"][1] / one["pass_seconds"]
    out["issue_16_cores"] = {W: {"measured_sync": ISSUE_16_CORES["threads"][W],
                                 "model_sync": sync(W) * scale, "model_async": async_(W) * scale}
                             for W in (1, 2, 4, 8, 16)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["pass", "cpu", "gap", "same-gap", "progress", "all"],
                    default="all")
    ap.add_argument("--data", choices=["ocr", "conll"], default="conll",
                    help="the data of --part same-gap")
    ap.add_argument("--tau", default="n/16", help="--part same-gap: the rounds' size, an "
                    "integer or n/16")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--passes", type=int, default=4)
    ap.add_argument("--target", type=float, default=0.5)
    ap.add_argument("--gap-every", type=int, default=10)
    ap.add_argument("--max-passes", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=RESULTS / "ssvm_async.json",
                    help="the JSON file written (default: benchmarks/results/ssvm_async.json)")
    args = ap.parse_args()
    out: dict = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
    if args.part in ("pass", "all"):
        out["pass"] = per_pass(args.repeats, args.passes)
        rows = out["pass"]["rows"]
        out["model"] = cost_model(rows, out["pass"]["n"], out["pass"]["tau"])
        print(json.dumps(out["model"], indent=1), flush=True)
    if args.part == "cpu":
        out["cpu"] = cpu_split(args.repeats, args.passes)
    if args.part == "progress":
        out["progress"] = progress(args.passes)
    if args.part in ("gap", "all"):
        out["gap"] = to_gap(args.target, args.gap_every, args.max_passes)
    if args.part == "same-gap":
        out["same_gap"] = same_gap(args.data, args.target, args.gap_every, args.max_passes,
                                   args.tau)
    out["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print("wrote", write_json(args.out, out, default=float))


if __name__ == "__main__":
    main()

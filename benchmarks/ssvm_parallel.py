"""Mini-batch BCFW (Wang et al., ICML 2016) on the chain SSVM: passes to a certified gap
per batch size, wall time per pass on threads and on a Dask LocalCluster, and a cost
model projecting larger clusters.

Three parts (``--part``):

* ``passes``: effective passes (oracle calls / n, certificate passes included) to a
  certified duality gap, for tau in {1, 16, 256, n/16}; OCR-large (lam = 1/n, gap
  0.05) and CoNLL-2000 (lam = 1/n, gap 0.01 x primal).  tau = 1 is serial BCFW (it
  runs on the compiled engine: the same steps up to rounding); the others run
  the mini-batch rounds (last iterate certified, no averaging, a certificate every
  ``--gap-every`` passes).  Table and plot.
* ``time``: wall seconds per pass on CoNLL at tau = n/16 with the oracles on 1
  thread, 2 threads, a LocalCluster of 1 worker and one of 2 workers (processes,
  one thread each), in one run; peak memory (max RSS) of each process.
  The thread rows run three ways: compiled rounds (the chain kernels' round
  kernels: one numba call per thread for the oracles, GIL released, then one
  compiled call for the round's block steps), Python rounds with the dual's batch
  block oracle (``compiled=False`` to the solver: the block steps in Python), and
  the blocks asked one by one (``SSVMDual(compiled=False)``); with the 2-thread
  speed-ups of a pass and of its oracle phase.  Rows alternate, best of
  ``--repeats``.  ``peak_rss_mb_compiled_rounds``: the process's max RSS after
  the compiled rounds ran, before the Python paths built their dense blocks.
* ``threads``: only those thread rows (no Dask).
* the cost model (always, from the ``time`` measurements): oracle seconds per
  example, server seconds per block update, bytes per round and the round-trip
  latency of the local cluster, projected to 8 / 32 / 128 workers on CoNLL-sized
  and 100x CoNLL-sized data, and checked against the 1- and 2-worker runs.

Run (under the bench lock):
    env OPENBLAS_NUM_THREADS=1 .venv/bin/python \
        benchmarks/ssvm_parallel.py --part all
Writes benchmarks/results/ssvm_parallel.json and .png.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import frankwolfe as fw  # noqa: E402
from frankwolfe.applications.structured_svm.dual import SSVMDual  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from ssvm import load  # noqa: E402  (the data sets and their models, as benchmarks/ssvm.py)

RESULTS = ROOT / "benchmarks" / "results"


def passes_to_gap(name: str, taus: list[int], max_passes: int, gap_every: int) -> dict:
    model, X, Y = load(name)
    n = len(X)
    rel = name == "conll"  # CoNLL: gap <= 0.01 primal; OCR: gap <= 0.05
    target = 0.01 if rel else 0.05
    out = {"n": n, "lam": 1.0 / n, "target": ("0.01 x primal" if rel else 0.05), "runs": {}}
    for tau in taus:
        dom = SSVMDual(model, X, Y, 1.0 / n)
        f = dom.dual_objective()
        hit: dict = {}

        def stop(s, hit=hit):
            gap = s.gap
            if np.isfinite(gap):
                primal = gap - s.fun  # the BCFW gap of the SSVM dual is the primal-dual gap
                if gap <= (target * primal if rel else target):
                    hit.update(passes=s.k, eff=s.info["oracle_calls"] / n, gap=gap,
                               primal=primal, time=s.time)
                    return False
            return None

        t0 = time.perf_counter()
        kw = {} if tau == 1 else {"batch_size": tau}
        res = fw.block_coordinate_frank_wolfe(f, dom, max_iter=max_passes, tol=0.0,
                                              gap_every=gap_every, random_state=0,
                                              callback=stop, **kw)
        row = {"tau": tau, "engine": res.extra["engine"], "reached": bool(hit),
               "seconds": time.perf_counter() - t0, "final_gap": res.gap,
               "final_eff_passes": res.extra["effective_passes"]}
        row.update({f"at_target_{k}": v for k, v in hit.items()})
        out["runs"][str(tau)] = row
        print(name, row, flush=True)
    return out


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _one_pass(f, dom, tau, **kw) -> dict:
    """Seconds of one pass of block steps (no certificate inside: gap_every huge; the
    closing certificate is timed separately)."""
    t0, c0 = time.perf_counter(), time.process_time()
    res = fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=1, tol=0.0,
                                          gap_every=10**6, random_state=0, **kw)
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0  # ~ total on one core; up to 2 x total when 2 threads run
    h = res.history
    pass_s = float(h["time"][1] - h["time"][0])
    return {"pass_seconds": pass_s, "total_seconds": total, "cpu_per_wall": cpu / total,
            "rounds": res.extra["rounds"],
            "oracle_seconds": res.extra["oracle_seconds"]}


def wall_time(tau_div: int, dask: bool = True, repeats: int = 2) -> dict:
    model, X, Y = load("conll")
    n = len(X)
    tau = max(1, n // tau_div)
    dom = SSVMDual(model, X, Y, 1.0 / n)
    # the blocks asked one by one (no batch block oracle): the per-block Python path
    per_block = SSVMDual(model, X, Y, 1.0 / n, compiled=False)
    f = dom.dual_objective()
    out = {"n": n, "tau": tau, "runs": {}}
    # warm-up (numba compilation of the decoders in this process); the compiled rounds
    # first, to read their peak memory before the Python paths build dense blocks
    compiled, python = {}, {"compiled": False}
    for jobs in (1, 2):
        _one_pass(f, dom, tau, n_jobs=jobs)
    out["peak_rss_mb_compiled_rounds"] = _rss_mb()
    for d, kw in ((dom, python), (per_block, compiled)):
        _one_pass(f, d, tau, **kw)
    rows = (("1 thread", dom, 1, compiled), ("2 threads", dom, 2, compiled),
            ("1 thread, python steps", dom, 1, python),
            ("2 threads, python steps", dom, 2, python),
            ("1 thread, per block", per_block, 1, compiled),
            ("2 threads, per block", per_block, 2, compiled))
    samples: dict = {}
    for rep in range(repeats):  # alternated, the fastest (other jobs share the machine)
        for label, d, jobs, kw in rows:
            r = _one_pass(f, d, tau, n_jobs=jobs, **kw)
            r["peak_rss_mb_main"] = _rss_mb()
            samples.setdefault(label, []).append(r)
            if label not in out["runs"] or r["pass_seconds"] < out["runs"][label]["pass_seconds"]:
                out["runs"][label] = r
            print(label, r, flush=True)
    runs = out["runs"]
    for suffix in ("", ", python steps", ", per block"):
        one, two = runs["1 thread" + suffix], runs["2 threads" + suffix]
        # the best of each, and the median of the per-repeat ratios (side by side)
        ratios = [a["pass_seconds"] / b["pass_seconds"]
                  for a, b in zip(samples["1 thread" + suffix], samples["2 threads" + suffix])]
        out["speedup" + suffix.replace(", ", " ")] = {
            "pass": one["pass_seconds"] / two["pass_seconds"],
            "oracle_phase": one["oracle_seconds"] / two["oracle_seconds"],
            "pass_median_of_repeats": float(np.median(ratios))}
    print({k: v for k, v in out.items() if k.startswith("speedup")}, flush=True)
    if dask:
        _dask_wall_time(f, dom, tau, out)
    return out


def _dask_wall_time(f, dom, tau: int, out: dict) -> None:
    from distributed import Client, LocalCluster

    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit=0) as cl, Client(cl) as c:
            # warm-up: the closing certificate alone loads the decoders on the workers
            fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=0, tol=0.0,
                                            executor=c)
            # round-trip latency of an empty task
            lat = []
            for _ in range(20):
                t0 = time.perf_counter()
                c.submit(int, 1, pure=False).result()
                lat.append(time.perf_counter() - t0)
            ex = fw.DaskExecutor(c)
            r = _one_pass(f, dom, tau, executor=ex)
            r["latency_seconds"] = float(np.median(lat))
            r["bytes_out_per_round"] = ex.bytes_out / max(r["rounds"], 1)
            rss = c.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
            r["peak_rss_mb_workers"] = sorted(rss.values())
            r["peak_rss_mb_main"] = _rss_mb()
            label = f"dask {workers} worker" + ("s" if workers > 1 else "")
            out["runs"][label] = r
            print(label, r, flush=True)


def cost_model(t: dict) -> dict:
    """Seconds per pass with ``W`` workers and ``R`` rounds per pass:

        T = n t_srv + R (lat + W B / bw) + n t_orc / W

    ``t_orc``: oracle seconds per example (in process), ``t_srv``: the server's seconds
    per block update (pass minus oracle phase, in process), ``lat``: round-trip
    latency of an empty task, ``B``: the gradient's bytes (sent by the client to each
    worker every round), ``bw``: bytes per second of that shipping (serialization and
    transfer), calibrated on the 1-worker run (its oracle phase minus the in-process
    one).  The 2-worker run checks the model."""
    n, tau = t["n"], t["tau"]
    one = t["runs"]["1 thread"]
    t_orc = one["oracle_seconds"] / n
    t_srv = (one["pass_seconds"] - one["oracle_seconds"]) / n
    d1 = t["runs"]["dask 1 worker"]
    rounds = d1["rounds"]
    lat = d1["latency_seconds"]
    B = d1["bytes_out_per_round"]  # one worker: the gradient once
    ship = (d1["oracle_seconds"] - one["oracle_seconds"]) / rounds - lat  # per round
    bw = B / max(ship, 1e-9)

    def T(nn: int, W: int, R: float) -> float:
        return nn * t_srv + R * (lat + W * B / bw) + nn * t_orc / W

    check = {"1 worker (calibration)": {"predicted": T(n, 1, rounds),
                                        "measured": d1["pass_seconds"]},
             "2 workers (check)": {"predicted": T(n, 2, rounds),
                                   "measured": t["runs"]["dask 2 workers"]["pass_seconds"]}}
    proj = {}
    for scale in (1, 100):
        for W in (8, 32, 128):
            sec = T(n * scale, W, 16)  # tau = n/16: 16 rounds per pass
            proj[f"{scale}x CoNLL, {W} workers, tau=n/16"] = {
                "seconds_per_pass": sec, "passes_per_second": 1.0 / sec,
                "server_share": n * scale * t_srv / sec}
    return {"t_oracle_per_example": t_orc, "t_server_per_block_update": t_srv,
            "latency_seconds": lat, "bytes_per_round_per_worker": B,
            "shipping_bytes_per_second": bw, "tau": tau, "check": check, "projection": proj}


def plot(passes: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.5))
    for name, data in passes.items():
        runs = list(data["runs"].values())
        taus = [r["tau"] for r in runs]
        ax.plot(taus, [r.get("at_target_eff", np.nan) for r in runs], "o-",
                label=f"{name} (target {data['target']})")
        bx.plot(taus, [r["final_gap"] for r in runs], "o-",
                label=f"{name} ({runs[0]['final_eff_passes']:g} effective passes)")
    for a in (ax, bx):
        a.set_xscale("log", base=2)
        a.set_xlabel("batch size tau")
        a.legend(fontsize=7)
    ax.set_ylabel("effective passes to target gap")
    bx.set_yscale("log")
    bx.set_ylabel("certified gap at the budget")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=["passes", "time", "threads", "all", "model"], default="all",
                    help="model: recompute the cost model from the saved time measurements; "
                         "threads: only the thread rows of time (no Dask)")
    ap.add_argument("--data", nargs="+", default=["ocr", "conll"])
    ap.add_argument("--max-passes", type=int, default=60)
    ap.add_argument("--gap-every", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2,
                    help="threads: alternated repeats of each thread row (the best is kept)")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "ssvm_parallel.json"
    out = json.loads(path.read_text()) if path.exists() else {}
    if args.part in ("passes", "all"):
        out.setdefault("passes", {})
        for name in args.data:
            n = 6251 if name == "ocr" else 8936
            out["passes"][name] = passes_to_gap(name, [1, 16, 256, n // 16], args.max_passes,
                                                args.gap_every)
            path.write_text(json.dumps(out, indent=1))
        plot(out["passes"], RESULTS / "ssvm_parallel.png")
    if args.part in ("time", "all"):
        out["time"] = wall_time(16)
        out["cost_model"] = cost_model(out["time"])
        path.write_text(json.dumps(out, indent=1))
        print(json.dumps(out["cost_model"], indent=1))
    if args.part == "threads":
        out["threads"] = wall_time(16, dask=False, repeats=args.repeats)
        path.write_text(json.dumps(out, indent=1))
    if args.part == "model":
        plot(out["passes"], RESULTS / "ssvm_parallel.png")
        out["cost_model"] = cost_model(out["time"])
        path.write_text(json.dumps(out, indent=1))
        print(json.dumps(out["cost_model"], indent=1))


if __name__ == "__main__":
    main()

"""Traffic assignment on SiouxFalls: time to relative gap 1e-4 and 1e-6.

Our FW / CFW / BFW (``frankwolfe.applications.traffic``) side by side with AequilibraE's
``bfw``, run in its own virtual environment (``benchmarks/.venvs/aequilibrae``,
built on first use by :mod:`peers`).  Everything runs on one core: numba,
BLAS and OpenMP are pinned to one thread and AequilibraE gets
``set_cores(1)`` before ``set_algorithm``.

What is timed: for us, :func:`traffic_assignment` (building the objective and
oracle, the free-flow start and the iterations); for AequilibraE,
``TrafficAssignment.execute()`` (graph and matrix are built beforehand, its
progress bars are disabled).  Each timing is the best of ``--repeats`` runs.

Usage::

    python benchmarks/traffic.py [--data DIR] [--repeats 3] [--no-peer] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frankwolfe.applications.traffic import Beckmann, load_siouxfalls, relative_gap, traffic_assignment  # noqa: E402

BEST_OBJECTIVE = 4231335.2871074397
TARGETS = (1e-4, 1e-6)

AEQ_SNIPPET = r"""
import time
import numpy as np
import pandas as pd
from aequilibrae.matrix import AequilibraeMatrix
from aequilibrae.paths import Graph, TrafficAssignment, TrafficClass

m = payload["tail"].size
zones = payload["demand"].shape[0]
net = pd.DataFrame({
    "link_id": np.arange(1, m + 1), "a_node": payload["tail"] + 1, "b_node": payload["head"] + 1,
    "direction": np.ones(m, dtype=int), "free_flow_time": payload["fft"],
    "capacity": payload["cap"], "alpha": payload["b"], "beta": payload["power"],
})
g = Graph()
g.network = net
g.prepare_graph(np.arange(1, zones + 1))
g.set_graph("free_flow_time")
g.set_skimming(["free_flow_time"])
g.set_blocked_centroid_flows(False)  # FIRST THRU NODE = 1: zones may be passed through
mat = AequilibraeMatrix()
mat.create_empty(zones=zones, matrix_names=["matrix"], memory_only=True)
mat.index = np.arange(1, zones + 1)
mat.matrices[:, :, 0] = payload["demand"]
mat.computational_view(["matrix"])

runs = []
for target in payload["targets"]:
    best = None
    for _ in range(payload["repeats"]):
        tc = TrafficClass("car", g, mat)
        a = TrafficAssignment()
        a.set_classes([tc])
        a.set_vdf("BPR")
        a.set_vdf_parameters({"alpha": "alpha", "beta": "beta"})
        a.set_capacity_field("capacity")
        a.set_time_field("free_flow_time")
        a.set_cores(1)
        a.set_algorithm("bfw")
        a.max_iter = payload["max_iter"]
        a.rgap_target = target
        t = time.perf_counter()
        a.execute()
        t = time.perf_counter() - t
        if best is None or t < best["time"]:
            rep = a.report()
            res = a.results()
            flows = res["matrix_ab"].to_numpy() if "matrix_ab" in res else res["matrix_tot"].to_numpy()
            best = {"time": t, "iterations": int(len(rep)), "rgap": float(rep["rgap"].iloc[-1]),
                    "flows": np.asarray(flows, dtype=float)}
    runs.append(best)
from importlib.metadata import version
result = {"runs": runs, "version": version("aequilibrae")}
"""


def _ours(net, method: str, target: float, repeats: int, max_iter: int) -> dict:
    best = None
    for _ in range(repeats):
        t = time.perf_counter()
        res = traffic_assignment(net, method, rel_gap=target, max_iter=max_iter)
        t = time.perf_counter() - t
        if best is None or t < best["time"]:
            best = {"time": t, "iterations": res.nit, "rgap": res.extra["relative_gap"],
                    "converged": bool(res.success), "flows": res.x, "fun": res.fun}
    return best


def _aequilibrae(net, repeats: int, max_iter: int) -> tuple[list[dict], str]:
    from peers import ensure_peer, run_in_venv, thread_env

    python = ensure_peer("aequilibrae")
    payload = {"tail": net.init_node, "head": net.term_node, "fft": net.free_flow_time,
               "cap": net.capacity, "b": net.b, "power": net.power, "demand": net.demand,
               "targets": list(TARGETS), "repeats": repeats, "max_iter": max_iter}
    env = {**thread_env(1), "AEQ_SHOW_PROGRESS": "FALSE"}  # its progress bars cost time
    out = run_in_venv(python, AEQ_SNIPPET, payload, env=env, timeout=3600)
    return out["runs"], out["version"]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get(
        "FRANKWOLFE_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=50_000)
    ap.add_argument("--no-peer", action="store_true", help="skip AequilibraE")
    ap.add_argument("--out", default=None, help="write the table as JSON here")
    args = ap.parse_args(argv)

    net, best_flows = load_siouxfalls(args.data)
    beck = Beckmann(net)
    traffic_assignment(net, "bfw", rel_gap=1e-2)  # compile / load the numba caches
    big = best_flows > 1e-3 * best_flows.max()

    rows = []
    plan = [("bfw", t) for t in TARGETS] + [("cfw", t) for t in TARGETS] + [("fw", 1e-4)]
    for method, target in plan:
        r = _ours(net, method, target, args.repeats, args.max_iter)
        rows.append({"solver": f"frankwolfe {method}", "target": target, **r})
    version = None
    if not args.no_peer:
        runs, version = _aequilibrae(net, args.repeats, args.max_iter)
        for target, r in zip(TARGETS, runs):
            rows.append({"solver": f"aequilibrae {version} bfw", "target": target, **r})

    print(f"SiouxFalls, one core, best of {args.repeats}; rgap = (sum t x - sum d SP) / sum t x")
    print(f"{'solver':<28} {'target':>7} {'time (s)':>9} {'iters':>6} {'rgap (recomputed)':>18} "
          f"{'Beckmann rel. err':>18} {'max flow err':>12}")
    for row in rows:
        x = np.asarray(row.pop("flows"), dtype=float)
        row["rgap_recomputed"] = relative_gap(net, x)
        row["objective_rel_err"] = (beck.value(x) - BEST_OBJECTIVE) / BEST_OBJECTIVE
        row["max_rel_flow_err"] = float(np.max(np.abs(x[big] - best_flows[big]) / best_flows[big]))
        print(f"{row['solver']:<28} {row['target']:>7.0e} {row['time']:>9.4f} {row['iterations']:>6d} "
              f"{row['rgap_recomputed']:>18.3e} {row['objective_rel_err']:>18.3e} "
              f"{row['max_rel_flow_err']:>12.2e}")
    if version is not None:
        for target in TARGETS:
            ours = next(r for r in rows if r["solver"] == "frankwolfe bfw" and r["target"] == target)
            peer = next(r for r in rows if r["solver"].startswith("aequilibrae") and r["target"] == target)
            print(f"rgap {target:.0e}: aequilibrae bfw / frankwolfe bfw time ratio = "
                  f"{peer['time'] / ours['time']:.1f}x")
    summary = {"network": "SiouxFalls", "threads": 1, "repeats": args.repeats, "rows": rows}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1, default=float))
    return summary


if __name__ == "__main__":
    main()

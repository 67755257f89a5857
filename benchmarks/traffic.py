"""Traffic assignment on SiouxFalls: time to relative gap 1e-4, 1e-6 and 1e-8.

Our FW / CFW / BFW and block-coordinate FW over origins (``bcfw``: tree atoms,
pairwise steps, gap sampling; ``frankwolfe.applications.traffic``) side by side
with AequilibraE's ``bfw``, run in its own virtual environment (``benchmarks/.venvs/aequilibrae``,
built on first use by :mod:`peers`).  Everything runs on one core: numba,
BLAS and OpenMP are pinned to one thread and AequilibraE gets
``set_cores(1)`` before ``set_algorithm``.

What is timed: for us, :func:`traffic_assignment` (building the objective and
oracle, the free-flow start and the iterations); for AequilibraE,
``TrafficAssignment.execute()`` (graph and matrix are built beforehand, its
progress bars are disabled).  Each timing is the best of ``--repeats`` runs.

``--warm``: scenario analysis.  Cut the capacity of the link of median
equilibrium flow by 10% and re-equilibrate to 1e-8 with ``bcfw``, from scratch
and from the previous run's trees (``x0=previous_result``); times and passes.

``--grid N``: the same table on a made-up N x N grid (two-way links, BPR power 4,
random capacities, every boundary node a zone), a larger network than SiouxFalls.

Usage::

    python benchmarks/traffic.py [--data DIR] [--repeats 3] [--no-peer] [--warm]
                                 [--grid 20] [--out FILE.json]
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

from frankwolfe.applications.traffic import (  # noqa: E402
    Beckmann,
    Network,
    load_siouxfalls,
    relative_gap,
    traffic_assignment,
)

BEST_OBJECTIVE = 4231335.2871074397
TARGETS = (1e-4, 1e-6, 1e-8)

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
            flows = (res["matrix_ab"] if "matrix_ab" in res else res["matrix_tot"]).to_numpy()
            best = {"time": t, "iterations": int(len(rep)), "rgap": float(rep["rgap"].iloc[-1]),
                    "flows": np.asarray(flows, dtype=float)}
    runs.append(best)
from importlib.metadata import version
result = {"runs": runs, "version": version("aequilibrae")}
"""


def _ours(net, method: str, target: float, repeats: int, max_iter: int, **kw) -> dict:
    best = None
    for _ in range(repeats):
        t = time.perf_counter()
        res = traffic_assignment(net, method, rel_gap=target, max_iter=max_iter, **kw)
        t = time.perf_counter() - t
        if best is None or t < best["time"]:
            best = {"time": t, "iterations": res.nit, "rgap": res.extra["relative_gap"],
                    "converged": bool(res.success), "flows": res.x, "fun": res.fun,
                    "result": res}
    return best


def grid_network(n: int, seed: int = 0) -> Network:
    """A made-up n x n grid: two-way links, BPR (0.15, 4), random capacities and
    free-flow times, every boundary node a zone with random demand to the others."""
    rng = np.random.default_rng(seed)
    node = np.arange(n * n).reshape(n, n)
    pairs = [(node[i, j], node[i, j + 1]) for i in range(n) for j in range(n - 1)]
    pairs += [(node[i, j], node[i + 1, j]) for i in range(n - 1) for j in range(n)]
    tail = np.array([a for a, b in pairs] + [b for a, b in pairs])
    head = np.array([b for a, b in pairs] + [a for a, b in pairs])
    border = np.unique(np.concatenate([node[0], node[-1], node[:, 0], node[:, -1]]))
    # zones first: renumber so the boundary nodes are 0 .. z-1
    perm = np.concatenate([border, np.setdiff1d(np.arange(n * n), border)])
    new = np.empty(n * n, dtype=np.int64)
    new[perm] = np.arange(n * n)
    z = border.size
    m = tail.size
    demand = rng.uniform(0, 40, (z, z)) * (rng.random((z, z)) < 0.5)
    return Network(init_node=new[tail], term_node=new[head],
                   free_flow_time=rng.uniform(1, 3, m), capacity=rng.uniform(300, 900, m),
                   b=np.full(m, 0.15), power=np.full(m, 4.0), demand=demand, n_nodes=n * n,
                   name=f"grid{n}")


def _warm(net, repeats: int) -> dict:
    """Re-equilibrate to 1e-8 after a 10% capacity cut on the link of median flow."""
    import dataclasses

    base = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=50_000, random_state=0)
    a = int(np.argsort(base.x)[net.n_links // 2])
    cap = net.capacity.copy()
    cap[a] *= 0.9
    cut = dataclasses.replace(net, capacity=cap)
    out = {"link": a}
    for name, x0 in (("scratch", None), ("warm", base)):
        r = _ours(cut, "bcfw", 1e-8, repeats, 50_000, x0=x0, random_state=0)
        out[name] = {"time": r["time"], "passes": r["iterations"],
                     "effective_passes": r["result"].extra["effective_passes"],
                     "rgap": r["rgap"]}
    out["time_ratio"] = out["warm"]["time"] / out["scratch"]["time"]
    out["pass_ratio"] = out["warm"]["effective_passes"] / out["scratch"]["effective_passes"]
    print(f"warm start after a 10% capacity cut on link {a} (bcfw to 1e-8): scratch "
          f"{out['scratch']['time']:.3f} s / {out['scratch']['effective_passes']:.0f} passes, "
          f"warm {out['warm']['time']:.3f} s / {out['warm']['effective_passes']:.0f} passes; "
          f"time ratio {out['time_ratio']:.2f}, pass ratio {out['pass_ratio']:.2f}")
    return out


def _grid(n: int, repeats: int, max_iter: int, time_limit: float) -> list[dict]:
    net = grid_network(n)
    rows = []
    print(f"{net!r}, one core, best of {repeats}; time limit {time_limit:g} s per run")
    for method in ("bfw", "bcfw"):
        for target in TARGETS:
            r = _ours(net, method, target, repeats, max_iter, time_limit=time_limit,
                      random_state=0) if method == "bcfw" else \
                _ours(net, method, target, repeats, max_iter, time_limit=time_limit)
            res = r.pop("result")
            r.pop("flows")
            rows.append({"solver": f"frankwolfe {method}", "network": net.name,
                         "target": target, **r})
            print(f"  {method:<5} {target:>7.0e} {r['time']:>9.3f} s {r['iterations']:>6d} "
                  f"iterations, rgap {r['rgap']:.2e}, converged {r['converged']}")
            if method == "bcfw" and target == TARGETS[-1]:
                print(f"  bcfw stored trees: {res.extra['active_set_size']} for "
                      f"{np.count_nonzero(net.demand)} OD pairs")
    return rows


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
    ap.add_argument("--warm", action="store_true", help="also the warm-start scenario")
    ap.add_argument("--grid", type=int, default=0, help="also a made-up N x N grid")
    ap.add_argument("--grid-time-limit", type=float, default=120.0)
    args = ap.parse_args(argv)

    net, best_flows = load_siouxfalls(args.data)
    beck = Beckmann(net)
    traffic_assignment(net, "bfw", rel_gap=1e-2)  # compile / load the numba caches
    traffic_assignment(net, "bcfw", rel_gap=1e-2)
    big = best_flows > 1e-3 * best_flows.max()

    rows = []
    plan = ([("bcfw", t) for t in TARGETS] + [("bfw", t) for t in TARGETS]
            + [("cfw", t) for t in TARGETS[:2]] + [("fw", 1e-4)])
    for method, target in plan:
        kw = {"random_state": 0} if method == "bcfw" else {}
        r = _ours(net, method, target, args.repeats, args.max_iter, **kw)
        r.pop("result")
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
        print(f"{row['solver']:<28} {row['target']:>7.0e} {row['time']:>9.4f} "
              f"{row['iterations']:>6d} {row['rgap_recomputed']:>18.3e} "
              f"{row['objective_rel_err']:>18.3e} {row['max_rel_flow_err']:>12.2e}")
    if version is not None:
        for target in TARGETS:
            at_target = [r for r in rows if r["target"] == target]
            ours = next(r for r in at_target if r["solver"] == "frankwolfe bfw")
            peer = next(r for r in at_target if r["solver"].startswith("aequilibrae"))
            bc = next(r for r in at_target if r["solver"] == "frankwolfe bcfw")
            print(f"rgap {target:.0e}: aequilibrae bfw / frankwolfe bfw time ratio = "
                  f"{peer['time'] / ours['time']:.1f}x, aequilibrae bfw / frankwolfe bcfw = "
                  f"{peer['time'] / bc['time']:.1f}x, frankwolfe bfw / bcfw = "
                  f"{ours['time'] / bc['time']:.1f}x")
    summary = {"network": "SiouxFalls", "threads": 1, "repeats": args.repeats, "rows": rows}
    if args.warm:
        summary["warm_start"] = _warm(net, args.repeats)
    if args.grid:
        summary["grid"] = _grid(args.grid, args.repeats, args.max_iter, args.grid_time_limit)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1, default=float))
    return summary


if __name__ == "__main__":
    main()

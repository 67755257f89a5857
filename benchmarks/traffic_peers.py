"""Traffic assignment side by side: our ``bfw`` and ``bcfw`` against AequilibraE's ``bfw``.

For every network of ``--data``/tntp (SiouxFalls, Eastern-Massachusetts,
Berlin-Tiergarten, Berlin-Center, or ``--networks``), one run each of

* ``ours bfw``: ``traffic_assignment(net, "bfw")`` (bi-conjugate Frank-Wolfe, exact line
  search on the Beckmann objective);
* ``ours bcfw``: ``traffic_assignment(net, "bcfw", compiled=True)`` (origin blocks,
  pairwise steps, gap sampling, the tree cache, compiled block steps);
* ``aequilibrae bfw``: AequilibraE's ``TrafficAssignment`` with ``set_algorithm("bfw")``,
  ``set_vdf("BPR")``, one traffic class, ``set_cores(1)``, run in its own virtual
  environment (``benchmarks/.venvs/aequilibrae``, built by :mod:`peers` on first use;
  never a project dependency);

each in a fresh process (its peak RSS is the process's), one after the other, the three
solvers in turn on a network before the next network, all to a relative gap of 1e-8 or
the network's time limit.  Both sides read the same TNTP files through our reader
(:func:`read_tntp`): the parent writes the links (free-flow time, capacity, BPR ``b``
and ``power``), the demand and the first through node to a ``.npz`` that AequilibraE's
process loads, so the BPR parameters and demand are the same arrays.

Seconds (wall, and the process's CPU seconds, the measure that survives a loaded
machine) to 1e-6 and 1e-8 count from the call (ours: ``traffic_assignment``, after a
numba warm-up on the same network; AequilibraE: ``execute()``, after the graph and
matrix are built) to the first certificate at or below the target: ours is the
certified relative gap of the current flows, ``(sum t_a x_a - sum d SP) / sum t_a x_a``;
AequilibraE's is its ``rgap``, the same ratio but with the all-or-nothing flows of the
costs *before* the iteration's step (its stopping test).  So the final flows of
AequilibraE are also evaluated with our :func:`relative_gap` and Beckmann objective, and
both numbers are reported.  AequilibraE has no time limit: at the limit the run's
target is raised so that its loop ends after the next iteration, and its flows are kept.
AequilibraE refuses links of zero free-flow time (206 connectors of Berlin-Tiergarten,
8,806 of Berlin-Center): it gets those at ``--aeq-fft-floor`` minutes (1e-6; the
smallest positive one is 0.33), and its flows are evaluated on the unchanged network.

Usage::

    nice -n 10 python benchmarks/traffic_peers.py [--data DIR] [--networks A,B]
        [--time-limits SiouxFalls=180,Berlin-Center=600] [--solvers bfw,bcfw,aeq]
        [--out FILE.json]
    nice -n 10 python benchmarks/traffic_peers.py --memory Berlin-Center=20,0
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from peers import ensure_peer  # noqa: E402
from results_file import write_json  # noqa: E402
from traffic_compiled import NETWORKS, RUN  # noqa: E402

LIMITS = {"SiouxFalls": 180.0, "Eastern-Massachusetts": 60.0, "Berlin-Tiergarten": 60.0,
          "Berlin-Center": 600.0}

# Runs in AequilibraE's venv: builds its graph and matrix from the parent's arrays.
AEQ = r"""
import importlib.metadata, json, resource, sys, time, warnings
import numpy as np
import pandas as pd
import aequilibrae
from aequilibrae.matrix import AequilibraeMatrix
from aequilibrae.paths import Graph, TrafficAssignment, TrafficClass
from aequilibrae.paths.linear_approximation import LinearApproximation
warnings.simplefilter("ignore")
d = np.load({npz!r})
m, n_zones = d["tail"].size, int(d["n_zones"])
links = pd.DataFrame(dict(link_id=np.arange(1, m + 1), a_node=d["tail"] + 1,
                          b_node=d["head"] + 1, direction=np.ones(m, dtype=int),
                          capacity=d["capacity"], free_flow_time=d["fft"], b=d["b"],
                          power=d["power"]))
zones = np.arange(1, n_zones + 1, dtype=np.int64)
g = Graph()
g.network = links
g.prepare_graph(zones, remove_dead_ends=False)
g.set_graph("free_flow_time")
g.set_blocked_centroid_flows(bool(d["first_thru"] > 0))  # zones end routes
mat = AequilibraeMatrix()
mat.create_empty(zones=n_zones, matrix_names=["demand"], memory_only=True)
mat.index[:] = zones
mat.matrix["demand"][:, :] = d["demand"]
mat.computational_view(["demand"])
cls = TrafficClass("car", g, mat)
assig = TrafficAssignment()
assig.set_classes([cls])
assig.set_cores(1)  # before set_algorithm, which copies the count into its solver
assig.set_vdf("BPR")
assig.set_vdf_parameters({{"alpha": "b", "beta": "power"}})
assig.set_capacity_field("capacity")
assig.set_time_field("free_flow_time")
assig.set_algorithm("bfw")
assig.max_iter = 10**7
assig.rgap_target = 1e-8
limit = {limit!r}
hit, certified, cpu, trace, last = {{}}, {{}}, {{}}, [], [None, 0.0, 0.0]
check = LinearApproximation.check_convergence
def timed(self):
    out = check(self)
    t = time.perf_counter() - tic
    if last[0] is not None:
        # its rgap pairs this iteration's flows with the all-or-nothing flows of the costs
        # before the step; those are the costs of the last iterate, so they certify it:
        # (t(x) x - t(x) y(x)) / t(x) x, our relative gap, one iteration late
        ct = self.congested_time
        tt = float(ct @ last[0])
        rel = (tt - float(ct @ self.aon_total_flow)) / tt
        trace.append(rel)
        for target in (1e-6, 1e-8):
            if rel <= target and target not in certified:
                certified[target] = last[1]
                cpu[target] = last[2]
                print(json.dumps(dict(progress=target, t=last[1])), flush=True)
    last[:] = [self.fw_total_flow, t, time.process_time() - ctic]
    for target in (1e-6, 1e-8):
        if self.rgap <= target and target not in hit:
            hit[target] = t
    if t > limit:  # no time limit of its own: the next check ends the loop
        self.rgap_target = np.inf
    return out
LinearApproximation.check_convergence = timed
ctic = time.process_time()
tic = time.perf_counter()
assig.execute()
wall = time.perf_counter() - tic
la = assig.assignment
assert la.cores == 1, la.cores
flows = assig.results()["PCE_tot"].reindex(links.link_id).to_numpy()
np.save({flows_out!r}, flows)
print(json.dumps(dict(t6=certified.get(1e-6), t8=certified.get(1e-8), cpu6=cpu.get(1e-6),
                      cpu8=cpu.get(1e-8), own_t6=hit.get(1e-6),
                      own_t8=hit.get(1e-8), wall=wall, rel=float(la.rgap), nit=la.iter,
                      best_certified=min(trace, default=float("nan")),
                      version=importlib.metadata.version("aequilibrae"),
                      rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""

# Where bcfw's memory goes on a network (--memory): the process after reading the
# network, numpy's peak during the run (tracemalloc traces numpy's buffers), the
# compiled tree tables, and the trees.
MEM = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
sys.path.insert(0, {root!r})
from frankwolfe.applications.traffic import read_tntp, traffic_assignment
net = read_tntp({net!r}, {trips!r})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=1, random_state=0, compiled=True)
warm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
tracemalloc.start()
tic = time.perf_counter()
res = traffic_assignment(net, "bcfw", rel_gap=1e-8, max_iter=10**6, time_limit={limit!r},
                         random_state=0, compiled=True, cache_size={cache_size})
wall = time.perf_counter() - tic
_, peak = tracemalloc.get_traced_memory()
sets = res.extra["active_sets"]
sizes = [len(a) for a in sets]
print(json.dumps(dict(cache_size={cache_size}, wall=wall, passes=res.nit,
                      rel=res.extra["relative_gap"], base_rss=base, warm_rss=warm,
                      rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      traced_peak=peak / 2**20, tables=res.extra["atom_store_bytes"] / 2**20,
                      active_trees=sum(sizes), max_active=max(sizes), origins=len(sets))))
"""


def _child(cmd: list[str], timeout: float, cwd: str | None = None) -> dict:
    """The last JSON line the child printed (its result), or what went wrong; the
    progress lines it printed before a kill are kept."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               AEQ_SHOW_PROGRESS="FALSE")  # AequilibraE's progress bars
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                             cwd=cwd)
        stdout, err = out.stdout, (out.stderr if out.returncode != 0 else "")
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = f"no answer within {timeout:.0f} s"
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    result = next((ln for ln in reversed(lines) if "progress" not in ln), None)
    if result is None:
        result = {"error": (err.strip().splitlines() or ["failed"])[-1]}
        for ln in lines:  # what it reached before it stopped
            result[{1e-6: "t6", 1e-8: "t8"}[ln["progress"]]] = ln["t"]
    return result


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get(
        "FRANKWOLFE_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--time-limits", default="",
                    help="NAME=SECONDS,...; default " + ", ".join(
                        f"{k}={v:g}" for k, v in LIMITS.items()))
    ap.add_argument("--solvers", default="bfw,bcfw,aeq")
    ap.add_argument("--aeq-python", default=None,
                    help="AequilibraE's interpreter; default the peer venv of peers.py "
                         "(benchmarks/.venvs/aequilibrae, built on first use)")
    ap.add_argument("--aeq-fft-floor", type=float, default=1e-6,
                    help="AequilibraE refuses links of zero free-flow time (the Berlin "
                         "networks' connectors): it gets them at this many minutes; its "
                         "flows are evaluated on the unchanged network (default 1e-6)")
    ap.add_argument("--memory", default="",
                    help="NETWORK=C1,C2...: instead of the runs, bcfw's memory on NETWORK "
                         "to 1e-8 with cache_size C1, C2, ... (e.g. Berlin-Center=20,0)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.memory:
        name, _, sizes = args.memory.partition("=")
        net_file, trips_file = (str(Path(args.data) / "tntp" / p) for p in NETWORKS[name])
        limit = float(args.time_limits.partition("=")[2] or 600)
        out = []
        for c in sizes.split(","):
            code = MEM.format(root=str(ROOT), net=net_file, trips=trips_file, limit=limit,
                              cache_size=int(c))
            out.append(_child([sys.executable, "-c", code], limit + 900))
            print(json.dumps(out[-1]), flush=True)
        if args.out:
            write_json(args.out, out)
        return
    limits = dict(LIMITS)
    for item in filter(None, args.time_limits.split(",")):
        k, _, v = item.partition("=")
        limits[k] = float(v)
    from frankwolfe.applications.traffic import Beckmann, read_tntp, relative_gap

    results: dict = {"load_before": os.getloadavg(), "started": time.ctime()}
    solvers = args.solvers.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.networks.split(","):
            net_file, trips_file = (str(Path(args.data) / "tntp" / p) for p in NETWORKS[name])
            if not Path(net_file).exists():
                print(f"{name}: not found under {args.data}, skipped")
                continue
            limit = limits.get(name, 300.0)
            net = read_tntp(net_file, trips_file)
            beck = Beckmann(net)
            entry = results[name] = {"links": net.n_links, "zones": net.n_zones,
                                     "limit": limit}
            for solver in solvers:
                if solver == "aeq":
                    if args.aeq_python is None:
                        args.aeq_python = str(ensure_peer("aequilibrae"))
                    aeq_python = str(Path(args.aeq_python).absolute())  # it runs in tmp
                    npz, flows_out = f"{tmp}/{name}.npz", f"{tmp}/{name}_flows.npy"
                    fft = net.free_flow_time
                    zero = int((fft <= 0).sum())
                    if zero:  # AequilibraE refuses them ("zero or negative free_flow_time")
                        fft = np.maximum(fft, args.aeq_fft_floor)
                    np.savez(npz, tail=net.init_node, head=net.term_node,
                             fft=fft, capacity=net.capacity, b=net.b,
                             power=net.power, demand=net.demand, n_zones=net.n_zones,
                             first_thru=net.first_thru_node)
                    code = AEQ.format(npz=npz, flows_out=flows_out, limit=limit)
                    r = _child([aeq_python, "-c", code], limit + 900, cwd=tmp)
                    if zero:
                        r["fft_floor"] = dict(links=zero, floor=args.aeq_fft_floor)
                    if "error" not in r:
                        x = np.load(flows_out)
                        r["ours_rel"] = relative_gap(net, x)  # the same flows, our gap
                        if zero:  # and on the network it solved (the floor's share apart)
                            r["ours_rel_floored"] = relative_gap(
                                dataclasses.replace(net, free_flow_time=fft), x)
                        r["fun"] = beck.value(x)
                else:
                    code = RUN.format(root=str(ROOT), net=net_file, trips=trips_file,
                                      method=solver, limit=limit)
                    r = _child([sys.executable, "-c", code], limit + 900)
                entry[solver] = r
                label = {"aeq": "aequilibrae bfw"}.get(solver, f"ours {solver}")
                print(f"{name:<22} {label:<16} " + (
                    f"{r['error']} (1e-6 {_fmt(r.get('t6'))} s)" if "error" in r else
                    f"1e-6 {_fmt(r['t6'])} s, 1e-8 {_fmt(r['t8'])} s (CPU "
                    f"{_fmt(r.get('cpu6'))} / {_fmt(r.get('cpu8'))} s), final {r['rel']:.2e}"
                    + (f" (ours on its flows {r['ours_rel']:.2e}; by its own rgap 1e-6 "
                       f"{_fmt(r['own_t6'])} s, 1e-8 {_fmt(r['own_t8'])} s)"
                       if "ours_rel" in r else "")
                    + (" [{links} zero free-flow times at {floor:g}".format(**r["fft_floor"])
                       + f"; ours on its network {r.get('ours_rel_floored', np.nan):.2e}]"
                       if "fft_floor" in r else "")
                    + f" after {r['nit']} it, {r['rss']:.0f} MiB, f={r['fun']:.10g}"),
                    flush=True)
    results["load_after"] = os.getloadavg()
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()

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
* ``dask``: in one run, the in-process single thread against LocalClusters of 1
  and 2 worker processes (the workers keep their piece of the batch oracle and
  their copy of the point, updated per round by the changed coordinates; all
  rows run compiled rounds, the workers returning labellings and losses; the
  shards are Dask actors and the client calls the workers directly,
  ``direct_to_workers=True``): seconds per pass, oracle phase, the workers'
  critical path, bytes per round, each process's own peak memory, and probes of
  the cluster for the cost model (the round trip of an actor call, and of a
  task for comparison).
* the cost model (after ``time`` and ``dask``; ``model`` recomputes it from the
  saved run): oracle seconds per example, server seconds per block update, bytes
  per round and the round-trip latency of the local cluster, calibrated on the
  1-worker run, checked on the 2-worker run, projected to 8 / 32 / 128 workers on
  CoNLL-sized and 100x CoNLL-sized data (:func:`cost_model`); ``--against FILE``
  (with ``model``) also predicts the Dask rows of a ``benchmarks/ssvm_cores.py`` run,
  such as one on a machine with more cores, from this machine's calibration.
* ``--scale S`` (with ``dask``): the same rows on a synthetic CoNLL-like corpus of
  ``S`` x 8,936 sentences (:class:`~frankwolfe.applications.structured_svm.ConllLike`,
  CoNLL-2000's templates and d, seed 0) instead of CoNLL-2000, plus where the main
  process's memory goes (the chain dual's arrays by role, :func:`_state_bytes`);
  ``--from-source``: the dual built from the corpus as an example source
  (``SSVMDual.from_source``: each worker draws its shard, the client ships its range).

Run (under the bench lock):
    env OPENBLAS_NUM_THREADS=1 .venv/bin/python \
        benchmarks/ssvm_parallel.py --part all
Writes benchmarks/results/ssvm_parallel.json and .png.
"""

from __future__ import annotations

import argparse
import json
import os
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
from results_file import write_figure, write_json  # noqa: E402
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
    for _ in range(repeats):  # alternated, the fastest (other jobs share the machine)
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
        out["dask"] = dask_wall_time(tau_div)
    return out


class _Timed:
    """An executor that adds up the wall time of its rounds (the oracle phase): atoms
    (Python rounds), the round kernels' chunks in process or table rows from the workers
    (compiled rounds)."""

    seconds = 0.0

    def _timed(self, name, *args):
        t0 = time.perf_counter()
        try:
            return getattr(super(), name)(*args)
        finally:
            self.seconds += time.perf_counter() - t0

    def map_gradient(self, which, gradient):
        return self._timed("map_gradient", which, gradient)

    def chunks(self, call, which, arg):
        return self._timed("chunks", call, which, arg)

    def rows(self, which, gradient, delta=None):
        return self._timed("rows", which, gradient, delta)


class _TimedSerial(_Timed, fw.SerialExecutor):
    pass


class _TimedDask(_Timed, fw.DaskExecutor):
    pass


def _steady_pass(f, dom, tau: int, ex, **kw) -> dict:
    """The second of three passes (the first ships the whole point to the workers, the
    last pays the closing certificate): wall seconds, its oracle phase, its bytes
    (``kw``: more keywords for the solver)."""
    snap: dict = {}

    def record(s):
        snap[s.k] = (ex.seconds, getattr(ex, "bytes_out", 0), getattr(ex, "bytes_in", 0),
                     getattr(ex, "worker_seconds", np.nan), time.process_time())

    res = fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=3, tol=0.0,
                                          gap_every=10**6, random_state=0, executor=ex,
                                          callback=record, **kw)
    h = res.history
    wall = float(h["time"][2] - h["time"][1])
    (o1, b1, i1, w1, c1), (o2, b2, i2, w2, c2) = snap[1], snap[2]
    rounds = int(h["rounds"][2] - h["rounds"][1])
    return {"pass_seconds": wall, "oracle_seconds": o2 - o1, "rounds": rounds,
            "worker_seconds": w2 - w1,
            "cpu_per_wall_main": (c2 - c1) / wall,
            "bytes_out_per_round": (b2 - b1) / rounds, "bytes_in_per_round": (i2 - i1) / rounds,
            "whole_vectors_sent": getattr(ex, "whole_updates", 0), "engine": res.extra["engine"]}


def _vm_peak_mb(reset: bool = False) -> float:
    """This process's peak resident memory (VmHWM, Linux: unlike ``ru_maxrss``, which a
    process started by another inherits from it, its own); ``reset``: restart it here."""
    status = Path("/proc/self/status").read_text()
    peak = float(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmHWM")))
    if reset:
        Path("/proc/self/clear_refs").write_text("5")
    return peak / 1024.0


def _worker_memory() -> dict:
    import psutil

    return {"peak_rss_mb": _vm_peak_mb(), "rss_mb": psutil.Process().memory_info().rss / 2**20}


class _Echo:
    """An actor that answers at once: the probe of a round's calls (rounds call the
    shards' actors, :class:`frankwolfe.DaskExecutor`)."""

    def size(self, x):
        return len(x)


def _probe(c, W: int, nbytes: int) -> dict:
    """What a round costs besides the oracles, as the executor's rounds go (one call per
    shard's actor): the round trip of one empty call; the cost of one more worker's
    call in a round (8 W calls spread over the W workers); the bytes per second of
    shipping a call's arguments (``nbytes`` to one worker); and, for comparison, the
    round trip of an empty task (through the scheduler)."""
    def median(fn, reps=15):
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return float(np.median(ts))

    workers = sorted(c.scheduler_info()["workers"])
    futs = [c.submit(_Echo, actor=True, workers=[w], pure=False) for w in workers]
    actors = [f.result() for f in futs]
    empty = np.zeros(0)
    lat = median(lambda: actors[0].size(empty).result())
    many = median(lambda: [f.result() for f in [actors[k % W].size(empty)
                                                for k in range(8 * W)]])
    blob = np.ones(nbytes // 8)
    ship = median(lambda: actors[0].size(blob).result(), reps=7)
    task = median(lambda: c.submit(int, 1, pure=False).result())
    # emptied, not deleted (the lambdas above name them): the workers free the actors
    actors.clear()
    futs.clear()
    return {"latency_seconds": lat, "task_seconds": (many - lat) / (8 * W - 1),
            "ship_bytes_per_second": blob.nbytes / max(ship - lat, 1e-9),
            "task_round_trip_seconds": task}


def _dual(scale: int | None, source: bool = False) -> SSVMDual:
    """The dual of CoNLL-2000 (``scale`` None) or of a CoNLL-like corpus of ``scale`` x
    its sentences, at lam = 1/n; ``source``: built from the corpus as an example source
    (the workers draw their shards)."""
    if scale is None:
        model, X, Y = load("conll")
        return SSVMDual(model, X, Y, 1.0 / len(X))
    from frankwolfe.applications.structured_svm import ChainModel, ConllLike

    corpus = ConllLike(8936 * scale, random_state=0)
    model = ChainModel(corpus.n_states, corpus.feature_sizes)
    if source:
        return SSVMDual.from_source(model, corpus, 1.0 / len(corpus))
    X, Y = corpus.examples(0, len(corpus))
    return SSVMDual(model, X, Y, 1.0 / len(X))


def _state_bytes() -> dict:
    """MB of the chain duals' arrays alive in this process, by role: the data (token
    ids, offsets, labels, token Gram matrices), the block iterates (marginals ``mu``,
    transitions ``T``, ``lbar``, and the transitions' index lists), the rest (scratch,
    the feature-major gradient copy)."""
    import gc

    from frankwolfe.applications.structured_svm.models.chain.dual_kernels import ChainState

    roles = {"data": {"Xf", "xptr", "xcol", "xval", "If", "offsets", "off", "Yf", "gram",
                      "goff"},
             "block iterates": {"mu", "T", "lbar", "tlist", "tcnt", "tin"}}
    out = {"data": 0.0, "block iterates": 0.0, "other": 0.0}
    seen: set[int] = set()
    for st in (o for o in gc.get_objects() if isinstance(o, ChainState)):
        for name, a in st._asdict().items():
            if isinstance(a, np.ndarray) and a.base is None and id(a) not in seen:
                seen.add(id(a))
                role = next((r for r, names in roles.items() if name in names), "other")
                out[role] += a.nbytes / 2**20
    return out


def dask_wall_time(tau_div: int = 16, reps: int = 3, scale: int | None = None,
                   source: bool = False) -> dict:
    """CoNLL at tau = n / tau_div: seconds per pass and of its oracle phase in process (one
    thread, batch oracle) and on LocalClusters of 1 and 2 worker processes (one thread
    each), alternated, the fastest of ``reps`` (all of them kept: ``"all"``); memory of
    every process."""
    import warnings

    from distributed import Client, LocalCluster

    dom = _dual(scale, source)
    n = dom.n
    tau = max(1, n // tau_div)
    f = dom.dual_objective()
    out: dict = {"n": n, "tau": tau, "d": dom.dim, "load_before": os.getloadavg(), "runs": {},
                 "data": "conll" if scale is None else f"conll-like x{scale}"
                 + (" (workers draw their shards)" if source else "")}
    arrays: dict = {}  # read while a run holds its arrays

    def measure(_state):
        arrays.update(arrays or _state_bytes())

    fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=1, tol=0.0,
                                    gap_every=10**6, random_state=0,
                                    callback=measure)  # warm-up in process
    out["main_arrays_mb"] = arrays
    out["peak_rss_mb_main_before_dask"] = _vm_peak_mb(reset=True)
    clusters, probes = {}, {}
    warnings.filterwarnings("ignore", "Port 8787", UserWarning)
    for W in (1, 2):
        cl = LocalCluster(n_workers=W, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit=0)
        c = Client(cl, direct_to_workers=True)  # actor calls straight to the workers
        # warm-up: shards built and the kernels loaded on the workers
        fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=1, tol=0.0,
                                        gap_every=10**6, executor=c)
        probes[W] = _probe(c, W, 4_000_000)  # big enough for the transfer to dominate
        clusters[W] = (cl, c)
    try:
        for _ in range(reps):
            rows = [("in process, 1 thread", lambda: _TimedSerial())]
            rows += [(f"dask {W} worker" + ("s" if W > 1 else ""),
                      lambda W=W: _TimedDask(clusters[W][1])) for W in (1, 2)]
            for label, make in rows:
                _vm_peak_mb(reset=True)
                r = _steady_pass(f, dom, tau, make())
                r["peak_rss_mb_main"] = _vm_peak_mb()
                print(label, r, flush=True)
                out.setdefault("all", {}).setdefault(label, []).append(r["pass_seconds"])
                if label not in out["runs"] or \
                        r["pass_seconds"] < out["runs"][label]["pass_seconds"]:
                    out["runs"][label] = r
        for W, (_cl, c) in clusters.items():
            label = f"dask {W} worker" + ("s" if W > 1 else "")
            out["runs"][label].update(probes[W])
            out["runs"][label]["workers"] = sorted(c.run(_worker_memory).values(),
                                                   key=lambda m: m["peak_rss_mb"])
    finally:
        for cl, c in clusters.values():
            c.close()
            cl.close()
    out["peak_rss_mb_main_during_dask"] = _vm_peak_mb()
    out["load_after"] = os.getloadavg()
    base = out["runs"]["in process, 1 thread"]
    one, two = out["runs"]["dask 1 worker"], out["runs"]["dask 2 workers"]
    out["speedup"] = {"2 vs 1 worker, pass": one["pass_seconds"] / two["pass_seconds"],
                      "2 vs 1 worker, oracle phase": one["oracle_seconds"] / two["oracle_seconds"],
                      "2 workers vs in process, pass": base["pass_seconds"] / two["pass_seconds"],
                      "2 vs 1 worker, pass, medians": float(
                          np.median(out["all"]["dask 1 worker"])
                          / np.median(out["all"]["dask 2 workers"]))}
    print(out["speedup"], flush=True)
    return out


def cost_model(t: dict, passes: float = 60.0, gap: str = "0.0156",
               against: dict | None = None) -> dict:
    """Seconds per pass on ``W`` workers, ``R`` rounds of ``tau`` blocks per pass:

        T = n t_srv + n t_orc / W * s(W) + R * (lat + W t_task + c0
                                                 + (W B_out + B_in) / bw)

    Calibrated on the 1-worker run of ``dask_wall_time``: ``t_srv`` the server's seconds
    per block update (the pass minus its oracle phase), ``t_orc`` the workers' seconds
    per example (their tasks' own clocks: point update and oracles), ``c0`` the rest
    of a round's overhead (the client's O(d) diff of the point, packing, waking up).
    Measured apart: ``lat`` the round trip of an empty call to a shard's actor,
    ``t_task`` the cost of one more worker's call in a round, ``bw`` the bytes per
    second of shipping a call's arguments (probes of the local cluster); ``B_out`` the point
    update per worker and round, ``B_in`` the answers per round (packed atoms for Python rounds, the
    domain's table rows for compiled ones; counted by the executor); ``s(W)`` the
    straggler factor of a round (the largest of ``W`` binomial shares of ``tau``
    random blocks, Gaussian approximation).  The 2-worker run checks the model.

    Projected to ``W`` = 8, 32, 128 at tau = n/16 on CoNLL-sized data and on 100x as many
    examples (the same features): ``B_out`` grows with the coordinates a round changes
    (measured per block step) up to the dense vector (8 d bytes), ``B_in`` with tau.
    Time to the certified gap that tau = n/16 reaches in ``passes`` effective passes
    (measured on CoNLL; the same number of passes assumed at 100x).

    ``against``: the ``"pass"`` table of a ``benchmarks/ssvm_cores.py`` run (another
    machine's Dask rows, ``"tau=T workers=W"``): each row predicted with its own
    rounds per pass, in ``"check_cores"``."""
    n, tau, d = t["n"], t["tau"], t["d"]
    base = t["runs"]["in process, 1 thread"]
    one, two = t["runs"]["dask 1 worker"], t["runs"]["dask 2 workers"]
    R1 = one["rounds"]
    t_srv = (one["pass_seconds"] - one["oracle_seconds"]) / n
    t_orc = one["worker_seconds"] / n
    lat, t_task, bw = one["latency_seconds"], one["task_seconds"], one["ship_bytes_per_second"]
    b_out = one["bytes_out_per_round"]  # one worker: the update once per round
    b_in_per_block = one["bytes_in_per_round"] * R1 / n
    changes_per_block = b_out / 12.0 / tau  # an index (4 B) and a value (8 B) per change

    def straggle(W: int, tau_: float) -> float:
        if W == 1:
            return 1.0
        share = tau_ / W
        return 1.0 + np.sqrt(2.0 * np.log(W) * share * (1 - 1 / W)) / share

    def overhead(W: int, tau_: float, c0: float) -> float:
        B_out = min(12.0 * changes_per_block * tau_, 8.0 * d)
        return lat + W * t_task + c0 + (W * B_out + b_in_per_block * tau_) / bw

    c0 = (one["oracle_seconds"] - one["worker_seconds"]) / R1 - overhead(1, tau, 0.0)

    def T(nn: int, W: int, R: int) -> tuple[float, float, float, float]:
        tau_ = nn / R
        srv, orc = nn * t_srv, nn * t_orc / W * straggle(W, tau_)
        com = R * overhead(W, tau_, c0)
        return srv + orc + com, srv, orc, com

    check = {}
    for W, row in ((1, one), (2, two)):
        total, srv, orc, com = T(n, W, R1)
        check[f"{W} worker" + ("s" if W > 1 else "")] = {
            "role": "calibration" if W == 1 else "check",
            "predicted_pass": total, "measured_pass": row["pass_seconds"],
            "predicted_workers": orc, "measured_workers": row["worker_seconds"],
            "predicted_oracle_phase": orc + com, "measured_oracle_phase": row["oracle_seconds"]}
    proj = {}
    for scale in (1, 100):
        for W in (8, 32, 128):
            total, srv, orc, com = T(n * scale, W, 16)  # tau = n/16: 16 rounds per pass
            proj[f"{scale}x CoNLL, {W} workers"] = {
                "n": n * scale, "workers": W, "seconds_per_pass": total,
                "passes_per_second": 1.0 / total, "server": srv, "oracles": orc,
                "rounds_overhead": com, "minutes_to_gap": passes * total / 60.0}
    for key, row in (against or {}).items():
        if "workers=" not in key:
            continue
        W, r = int(key.rsplit("=", 1)[1]), row["best"]
        total, srv, orc, com = T(n, W, r["rounds"])
        check[key] = {"role": "other machine", "predicted_pass": total,
                      "measured_pass": r["pass_seconds"], "predicted_workers": orc,
                      "measured_workers": r["worker_seconds"],
                      "predicted_oracle_phase": orc + com,
                      "measured_oracle_phase": r["oracle_seconds"]}
    in_process = (base["pass_seconds"]) / n
    serial = {f"{scale}x CoNLL, in process (1 thread)": n * scale * in_process
              for scale in (1, 100)}
    return {"t_oracle_per_example": t_orc, "t_server_per_block_update": t_srv,
            "latency_seconds": lat, "task_seconds": t_task, "ship_bytes_per_second": bw,
            "bytes_out_per_round_per_worker": b_out, "bytes_in_per_block": b_in_per_block,
            "changes_per_block": changes_per_block, "c0_per_round": c0, "tau": tau,
            "passes_to_gap": passes, "gap": gap, "check": check, "projection": proj,
            "in_process_seconds_per_pass": serial}


def print_dask(t: dict) -> None:
    """The ``dask_wall_time`` measurements as a Markdown table."""
    print(f"{t.get('data', 'conll')}, n = {t['n']}, tau = {t['tau']}; load average "
          f"{t['load_before'][0]:.1f} before, {t['load_after'][0]:.1f} after; "
          f"main process peak {t['peak_rss_mb_main_during_dask']:.0f} MB")
    if "main_arrays_mb" in t:
        print("main process's chain dual arrays, MB:",
              {k: round(v) for k, v in t["main_arrays_mb"].items()})
    print("\n| oracles on | s/pass | oracle phase s | workers' critical path s | "
          "sent per round (all workers) | received per round | all s/pass | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for label, r in t["runs"].items():
        mem = [f"main {r.get('peak_rss_mb_main', float('nan')):.0f}"]
        mem += [f"worker {w['peak_rss_mb']:.0f}" for w in r.get("workers", [])]
        print(f"| {label} | {r['pass_seconds']:.2f} | {r['oracle_seconds']:.2f} | "
              f"{r['worker_seconds']:.2f} | {r['bytes_out_per_round'] / 1e3:.0f} kB | "
              f"{r['bytes_in_per_round'] / 1e6:.2f} MB | "
              f"{', '.join(f'{x:.2f}' for x in t['all'][label]) if 'all' in t else ''} | "
              f"{', '.join(mem)} |")
    print({k: round(v, 3) for k, v in t["speedup"].items()})


def print_cost_model(m: dict) -> None:
    """The cost model as Markdown tables."""
    print(f"t_orc {m['t_oracle_per_example'] * 1e6:.1f} us/example, t_srv "
          f"{m['t_server_per_block_update'] * 1e6:.1f} us/update, lat "
          f"{m['latency_seconds'] * 1e3:.1f} ms, t_task {m['task_seconds'] * 1e3:.2f} ms, "
          f"bw {m['ship_bytes_per_second'] / 1e6:.0f} MB/s, B_out "
          f"{m['bytes_out_per_round_per_worker'] / 1e3:.0f} kB/round/worker, B_in "
          f"{m['bytes_in_per_block'] / 1e3:.2f} kB/block, "
          f"c0 {m['c0_per_round'] * 1e3:.1f} ms/round")
    print("\n| Dask run | s/pass: model | measured | workers' critical path: model | measured "
          "| oracle phase: model | measured |")
    print("|---|---|---|---|---|---|---|")
    for k, v in m["check"].items():
        print(f"| {k} ({v['role']}) | {v['predicted_pass']:.2f} | {v['measured_pass']:.2f} | "
              f"{v['predicted_workers']:.2f} | {v['measured_workers']:.2f} | "
              f"{v['predicted_oracle_phase']:.2f} | {v['measured_oracle_phase']:.2f} |")
    print(f"\n| data, workers | s/pass | passes/s | server | oracles | rounds' overhead | "
          f"to gap {m['gap']} ({m['passes_to_gap']:g} passes) |")
    print("|---|---|---|---|---|---|---|")
    for k, v in m["projection"].items():
        print(f"| {k} | {v['seconds_per_pass']:.2f} | {v['passes_per_second']:.3g} | "
              f"{v['server']:.2f} | {v['oracles']:.2f} | {v['rounds_overhead']:.2f} | "
              f"{v['minutes_to_gap']:.1f} min |")
    for k, v in m["in_process_seconds_per_pass"].items():
        print(f"| {k} | {v:.2f} | {1 / v:.3g} | | | | {m['passes_to_gap'] * v / 60:.1f} min |")


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
    write_figure(fig, path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=["passes", "time", "threads", "dask", "all", "model"],
                    default="all",
                    help="model: recompute the cost model from the saved time measurements; "
                         "threads: only the thread rows of time (no Dask)")
    ap.add_argument("--data", nargs="+", default=["ocr", "conll"])
    ap.add_argument("--max-passes", type=int, default=60)
    ap.add_argument("--gap-every", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2,
                    help="threads: alternated repeats of each thread row (the best is kept)")
    ap.add_argument("--scale", type=int, default=None,
                    help="dask: a CoNLL-like corpus of SCALE x 8936 sentences, not CoNLL-2000")
    ap.add_argument("--from-source", action="store_true",
                    help="dask --scale: the dual built from the corpus as an example source "
                         "(SSVMDual.from_source: the workers draw their shards)")
    ap.add_argument("--tau-div", type=int, default=16,
                    help="time, threads, dask: batch size tau = n // TAU_DIV (default n/16)")
    ap.add_argument("--against", type=Path, default=None,
                    help="model: also predict the Dask rows of this benchmarks/ssvm_cores.py "
                         "JSON (another machine's run) and print them beside the model")
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
            write_json(path, out)
        plot(out["passes"], RESULTS / "ssvm_parallel.png")
    if args.part in ("time", "all"):
        out["time"] = wall_time(args.tau_div)
        out["cost_model"] = cost_model(out["time"]["dask"])
        write_json(path, out)
        print_cost_model(out["cost_model"])
    if args.part == "dask" and args.scale is not None:
        key = f"dask_x{args.scale}" + ("_source" if args.from_source else "")
        out[key] = dask_wall_time(args.tau_div, scale=args.scale, source=args.from_source)
        write_json(path, out)
        print_dask(out[key])
    elif args.part == "dask":
        out["dask"] = dask_wall_time(args.tau_div)
        out["cost_model"] = cost_model(out["dask"])
        write_json(path, out)
        print_dask(out["dask"])
        print_cost_model(out["cost_model"])
    if args.part == "threads":
        out["threads"] = wall_time(args.tau_div, dask=False, repeats=args.repeats)
        write_json(path, out)
    if args.part == "model":
        if "passes" in out:
            plot(out["passes"], RESULTS / "ssvm_parallel.png")
        against = json.loads(args.against.read_text())["pass"] if args.against else None
        out["cost_model"] = cost_model(out["dask"] if "dask" in out else out["time"]["dask"],
                                       against=against)
        write_json(path, out)
        print_cost_model(out["cost_model"])


if __name__ == "__main__":
    main()

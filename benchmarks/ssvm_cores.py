"""Mini-batch BCFW on CoNLL-2000 (lam = 1/n) across cores: seconds per pass and time to a
certified gap for serial BCFW, threads and a Dask LocalCluster, in one run (issue #27,
item 4).

Two parts, each a list of rows run in this process one after the other:

* ``pass``: wall seconds of one steady pass (the second of three, no certificate
  inside; :func:`ssvm_parallel._steady_pass`) at each ``--tau`` (``n/16``, ``n/4`` or
  an integer): serial BCFW (the compiled pass, tau = 1), compiled rounds on 1, 2, 4, 8,
  16 threads (``--threads``; asynchronous rounds too with ``--staleness 0 1``) and on
  LocalClusters of 1, 2, 4, 8, 14 worker processes of one thread each (``--workers``,
  at ``--dask-tau``; the shards are actors, compiled rounds with the workers answering
  table rows).  Rows alternate over ``--repeats``; each keeps its fastest, and every
  repeat is saved.  ``--resident-workers``: lock-free passes on LocalClusters of that
  many workers over resident blocks (``SSVMDual.from_source(Conll2000Source(), ...,
  resident=True)``: each worker reads the corpus and keeps its range; the gradient and
  ``x`` in shared memory).
* ``gap``: time to a certified gap of ``--target`` x primal (a certificate every
  ``--gap-every`` passes, counted as a pass) for serial BCFW, lock-free passes on each
  of ``--gap-lock-free`` threads, ``--gap-threads`` threads (asynchronous with
  ``--gap-staleness``), ``--gap-workers`` workers at ``--gap-tau`` (0: no such row) and
  lock-free passes on resident blocks on each of ``--gap-resident-workers`` workers,
  each after a one-pass warm-up and stopped at the target or after ``--gap-limit``
  seconds (``--gap-serial-limit`` for the serial row; under 10 s skips it: a row
  measured earlier in the same session can stand for it); the certificate trace of
  each is saved (effective passes, gap, primal, seconds), so runs that stop short still
  give the time to every gap level they passed.

Settings common to every row: gapBCFW's gap sampling, Frank-Wolfe block steps,
sequential round steps (so a round's iterates do not depend on where its oracles ran:
the passes to a gap are the executor's business only through rounding), last iterate
certified, seed 0.  ``--budget`` bounds the whole run: a row that would start after it
is skipped and named in ``"skipped"``.  The JSON is rewritten after every row.

Run (on the machine to measure, nothing else running)::

    env FRANKWOLFE_DATA=path/to/data OPENBLAS_NUM_THREADS=1 .venv/bin/python \\
        benchmarks/ssvm_cores.py --part pass gap --budget 600

``--part draws`` (alone; no data): milliseconds of one pass of a round's gap-sampling
draws, block by block in Python against one compiled call a round.

Writes ``benchmarks/results/ssvm_cores.json`` (``--out``: another file).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_file import write_json  # noqa: E402
from ssvm_parallel import _dual, _steady_pass, _Timed, _TimedDask  # noqa: E402

import frankwolfe as fw  # noqa: E402

ORDER = "gap"


class _TimedThreads(_Timed, fw.ThreadExecutor):
    pass


def _tau(arg: str, n: int) -> int:
    """A batch size from ``n/16``-style text (``n``: all blocks) or an integer."""
    if arg == "n":
        return n
    if arg.startswith("n/"):
        return max(1, n // int(arg[2:]))
    return int(arg)


def _serial_pass(f, dom, **kw) -> dict:
    """The second of three passes of serial BCFW (the compiled pass; ``kw``: e.g. lock-free
    passes on threads)."""
    res = fw.block_coordinate_frank_wolfe(f, dom, block_order=ORDER, max_iter=3, tol=0.0,
                                          gap_every=10**6, random_state=0, **kw)
    h = res.history
    out = {"pass_seconds": float(h["time"][2] - h["time"][1]), "engine": res.extra["engine"]}
    if "step_seconds" in h:  # lock-free: the threads' phase and the fold, of that pass
        out.update(step_seconds=float(h["step_seconds"][2] - h["step_seconds"][1]),
                   fold_seconds=float(h["fold_seconds"][2] - h["fold_seconds"][1]))
    return out


def _lock_free(threads: int) -> dict:
    return {"round_step": "lock_free", "n_jobs": threads}


def _resident(client) -> tuple[Any, Any, dict]:
    """A resident dual of CoNLL-2000 (each worker reads the corpus and keeps its range),
    its objective and the arguments of lock-free passes on ``client``'s workers."""
    from frankwolfe.applications.structured_svm import (
        ChainModel,
        Conll2000Source,
        SSVMDual,
    )

    corpus = Conll2000Source()
    model = ChainModel(corpus.n_states, corpus.feature_sizes)
    dom = SSVMDual.from_source(model, corpus, 1.0 / len(corpus), resident=True)
    return dom, dom.dual_objective(), {"round_step": "lock_free", "averaging": None,
                                       "executor": fw.DaskExecutor(client)}


def _resident_pass(client) -> dict:
    """The second of three lock-free passes on ``client``'s workers over resident blocks
    (a fresh run: the blocks start again)."""
    dom, f, kw = _resident(client)
    return _serial_pass(f, dom, **kw)


class Run:
    """The rows of one run, their deadline and the JSON they are written to."""

    def __init__(self, out: Path, budget: float, meta: dict) -> None:
        self.out, self.deadline, self.t0 = out, time.perf_counter() + budget, time.perf_counter()
        self.data: dict = {"meta": meta, "pass": {}, "gap": {}, "skipped": [], "log": []}

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def save(self) -> None:
        self.data["meta"]["elapsed_seconds"] = time.perf_counter() - self.t0
        write_json(self.out, self.data)

    def note(self, msg: str) -> None:
        line = f"[{time.perf_counter() - self.t0:7.1f} s] {msg}"
        print(line, flush=True)
        self.data["log"].append(line)


def pass_rows(run: Run, f, dom, taus: list[str], threads: list[int], workers: list[int],
              repeats: int, dask_taus: list[str], staleness: list[int],
              lock_free: list[int], resident: list[int] | None = None) -> None:
    n = dom.n
    table = run.data["pass"]

    def record(key: str, r: dict) -> None:
        row = table.setdefault(key, {"all": []})
        row["all"].append(r["pass_seconds"])
        if "best" not in row or r["pass_seconds"] < row["best"]["pass_seconds"]:
            row["best"] = r
        more = (f" (threads {r['step_seconds']:.3f}, fold {r['fold_seconds']:.3f})"
                if "step_seconds" in r else "")
        run.note(f"{key}: {r['pass_seconds']:.3f} s/pass{more}")
        run.save()

    # warm-up: the kernels compiled (or loaded) in this process
    _serial_pass(f, dom)
    if lock_free:
        _serial_pass(f, dom, **_lock_free(2))
    for tau_arg in taus:
        fw.block_coordinate_frank_wolfe(f, dom, batch_size=_tau(tau_arg, n), n_jobs=2,
                                        block_order=ORDER, max_iter=1, tol=0.0,
                                        gap_every=10**6, random_state=0)
    run.note("warm")
    for _ in range(repeats):
        if run.left() < 30:
            run.data["skipped"].append("pass: thread repeats")
            break
        record("serial BCFW", _serial_pass(f, dom))
        for J in lock_free:
            record(f"lock-free threads={J}", _serial_pass(f, dom, **_lock_free(J)))
        for tau_arg in taus:
            tau = _tau(tau_arg, n)
            for J in threads:
                for S in staleness:
                    record(f"tau={tau_arg} threads={J}" + (f" staleness={S}" if S else ""),
                           _steady_pass(f, dom, tau, _TimedThreads(J), block_order=ORDER,
                                        staleness=S))
    for W in workers:
        if run.left() < 60:
            run.data["skipped"].append(f"pass: {W} workers")
            continue
        with _cluster(W) as client:
            run.note(f"cluster of {W} up")
            for tau_arg in dask_taus:
                tau = _tau(tau_arg, n)
                # warm-up: shards built, the workers' kernels loaded
                fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=1, tol=0.0,
                                                gap_every=10**6, executor=client,
                                                block_order=ORDER, random_state=0)
                for _ in range(repeats):
                    record(f"tau={tau_arg} workers={W}",
                           _steady_pass(f, dom, tau, _TimedDask(client), block_order=ORDER))
    for W in resident or []:
        if run.left() < 60:
            run.data["skipped"].append(f"pass: {W} resident workers")
            continue
        with _cluster(W) as client:
            run.note(f"cluster of {W} up")
            _resident_pass(client)  # warm-up: the workers' kernels loaded
            for _ in range(repeats):
                record(f"lock-free resident workers={W}", _resident_pass(client))


@contextmanager
def _cluster(W: int) -> Iterator[Any]:
    """A client of a LocalCluster of ``W`` one-thread worker processes, calling them
    directly (actor calls)."""
    import warnings

    from distributed import Client, LocalCluster

    warnings.filterwarnings("ignore", "Port 8787", UserWarning)
    with LocalCluster(n_workers=W, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cl, \
            Client(cl, direct_to_workers=True) as client:
        yield client


def _to_gap(f, dom, kw: dict, executor, seconds: float, target: float,
            gap_every: int) -> dict:
    """One run until a certified gap of ``target`` x primal or ``seconds``: its
    certificate trace (effective passes, gap, primal, seconds)."""
    n = dom.n
    trace: list = []
    row: dict = {"tau": kw.get("batch_size", 1), "time_limit": seconds, "trace": trace,
                 "reached": False}

    def certificate(s) -> bool | None:
        if not np.isfinite(s.gap):
            return None
        primal = s.gap - s.fun  # f is the negated dual: gap = primal - dual
        trace.append([s.info["oracle_calls"] / n, float(s.gap), float(primal),
                      float(s.time)])
        if s.gap <= target * primal:
            row.update(reached=True, passes=trace[-1][0], seconds=float(s.time))
            return False
        return None

    res = fw.block_coordinate_frank_wolfe(
        f, dom, block_order=ORDER, max_iter=10**6, tol=0.0, gap_every=gap_every,
        random_state=0, callback=certificate, time_limit=seconds, executor=executor, **kw)
    row.update(engine=res.extra["engine"], status=str(res.status),
               wall_seconds=float(res.history["time"][-1]))
    return row


def gap_rows(run: Run, f, dom, tau_arg: str, threads: int, workers: int, target: float,
             gap_every: int, limit: float, staleness: int = 0,
             lock_free: list[int] | None = None, serial_limit: float | None = None,
             resident: list[int] | None = None) -> None:
    tau = _tau(tau_arg, dom.n)
    rows: list[tuple[str, dict, int | None]] = [("serial BCFW", {}, None)]
    rows += [(f"lock-free threads={J}", _lock_free(J), None) for J in lock_free or []]
    if threads > 0:
        rows.append((f"tau={tau_arg} threads={threads}"
                     + (f" staleness={staleness}" if staleness else ""),
                     {"batch_size": tau, "n_jobs": threads, "staleness": staleness}, None))
    if workers > 0:
        rows.append((f"tau={tau_arg} workers={workers}", {"batch_size": tau}, workers))
    rows += [(f"lock-free resident workers={W}", {"resident": True}, W)
             for W in resident or []]
    for label, kw, W in rows:
        own = serial_limit if label == "serial BCFW" and serial_limit else limit
        seconds = min(own, run.left() - (20 if W else 5))
        if seconds < 10:  # too short to say anything: limit or budget
            run.data["skipped"].append(f"gap: {label}")
            run.note(f"gap {label}: skipped ({seconds:.0f} s left for it)")
            continue
        if W and kw.get("resident"):
            with _cluster(W) as client:
                # the workers' kernels loaded before the clock, on a run of its own
                rdom, rf, rkw = _resident(client)
                fw.block_coordinate_frank_wolfe(rf, rdom, max_iter=1, tol=0.0,
                                                gap_every=10**6, block_order=ORDER,
                                                random_state=0, **rkw)
                rdom, rf, rkw = _resident(client)
                ex = rkw.pop("executor")
                row = _to_gap(rf, rdom, rkw, ex, seconds, target, gap_every)
        elif W:
            with _cluster(W) as client:
                # the shards built and the workers' kernels loaded before the clock
                fw.block_coordinate_frank_wolfe(f, dom, batch_size=tau, max_iter=1, tol=0.0,
                                                gap_every=10**6, executor=client,
                                                block_order=ORDER, random_state=0)
                row = _to_gap(f, dom, kw, fw.DaskExecutor(client), seconds, target,
                              gap_every)
        else:
            # the kernels compiled (or loaded) in this process before the clock
            fw.block_coordinate_frank_wolfe(f, dom, max_iter=1, tol=0.0, gap_every=10**6,
                                            block_order=ORDER, random_state=0, **kw)
            row = _to_gap(f, dom, kw, None, seconds, target, gap_every)
        run.data["gap"][label] = row
        last = row["trace"][-1] if row["trace"] else [np.nan] * 4
        run.note(f"gap {label}: reached={row['reached']} passes={last[0]:.0f} "
                 f"gap/primal={last[1] / last[2]:.3f} at {last[3]:.1f} s")
        run.save()


def draw_rows(run: Run, n: int, taus: list[str], repeats: int) -> None:
    """Milliseconds of one pass of a round's gap-sampling draws (``n`` blocks, random
    estimates), the block order's ``next`` and ``update`` per block (what the rounds did
    before 2026-11-27) against the compiled ``gap_pick_round`` per round; both then give
    each drawn block a new estimate, as the steps do."""
    from frankwolfe import GapSampling
    from frankwolfe.compiled.sum_tree import gap_pick_round

    for tau_arg in taus:
        tau = _tau(tau_arg, n)
        best: dict[str, float] = {}
        for _ in range(repeats):
            for way in ("python", "compiled"):
                rng = np.random.default_rng(0)
                order = GapSampling(1.0)
                order.start(rng.exponential(size=n))
                unif = rng.random(n)
                tree, size, _, nextu = order.compiled_tree()
                t0 = time.perf_counter()
                for a in range(0, n, tau):
                    if way == "python":
                        batch = []
                        for u in unif[a:a + tau]:
                            i = order.next(float(u))
                            batch.append(i)
                            order.hold(i)
                    else:
                        out = np.empty(min(tau, n - a), dtype=np.int64)
                        gap_pick_round(tree, size, order.est, nextu, unif[a:a + tau], n,
                                       out)
                        batch = out.tolist()
                    for i in batch:
                        order.update(i, 1.0)
                ms = (time.perf_counter() - t0) * 1e3
                best[way] = min(best.get(way, np.inf), ms)
        run.data.setdefault("draws", {})[f"tau={tau_arg}"] = best
        run.note(f"draws tau={tau_arg}: python {best['python']:.1f} ms, compiled "
                 f"{best['compiled']:.1f} ms a pass (re-updates included in both)")
    run.save()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", nargs="+", default=["pass"], choices=["pass", "gap", "draws"])
    ap.add_argument("--tau", nargs="+", default=["n/16"])
    ap.add_argument("--dask-tau", nargs="+", default=None,
                    help="the workers' rows' tau (default: --tau)")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--workers", nargs="*", type=int, default=[1, 2, 4, 8, 14])
    ap.add_argument("--staleness", nargs="+", type=int, default=[0],
                    help="the thread rows' staleness (asynchronous rounds when > 0)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.5, help="gap / primal to reach")
    ap.add_argument("--gap-every", type=int, default=10)
    ap.add_argument("--gap-tau", default="n/16")
    ap.add_argument("--gap-threads", type=int, default=16)
    ap.add_argument("--gap-workers", type=int, default=8, help="0: no Dask row")
    ap.add_argument("--gap-staleness", type=int, default=0, help="of the threads row")
    ap.add_argument("--lock-free", nargs="*", type=int, default=[],
                    help="threads of lock-free pass rows (round_step='lock_free')")
    ap.add_argument("--gap-lock-free", nargs="*", type=int, default=[],
                    help="threads of lock-free gap rows")
    ap.add_argument("--resident-workers", nargs="*", type=int, default=[],
                    help="pass rows: lock-free passes on resident blocks on W workers")
    ap.add_argument("--gap-resident-workers", nargs="*", type=int, default=[],
                    help="gap rows: lock-free passes on resident blocks on W workers")
    ap.add_argument("--gap-limit", type=float, default=120.0, help="seconds per gap row")
    ap.add_argument("--gap-serial-limit", type=float, default=None,
                    help="seconds of the serial gap row (default: --gap-limit)")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds for the whole run")
    ap.add_argument("--out", type=Path,
                    default=ROOT / "benchmarks" / "results" / "ssvm_cores.json")
    a = ap.parse_args()
    meta = {"argv": sys.argv[1:], "cpu_count": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)), "machine": platform.processor()
            or platform.machine(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": __import__("numba").__version__,
            "load_before": os.getloadavg(), "order": ORDER}
    run = Run(a.out, a.budget, meta)
    if a.part == ["draws"]:  # no data needed: CoNLL-2000's n
        draw_rows(run, 8936, a.tau, max(a.repeats, 3))
        return
    t0 = time.perf_counter()
    dom = _dual(None)
    f = dom.dual_objective()
    meta.update(n=dom.n, d=dom.dim, load_seconds=time.perf_counter() - t0)
    run.note(f"CoNLL loaded: n={dom.n}, d={dom.dim}")
    if "pass" in a.part:
        pass_rows(run, f, dom, a.tau, a.threads, a.workers, a.repeats, a.dask_tau or a.tau,
                  a.staleness, a.lock_free, a.resident_workers)
    if "gap" in a.part:
        gap_rows(run, f, dom, a.gap_tau, a.gap_threads, a.gap_workers, a.target,
                 a.gap_every, a.gap_limit, a.gap_staleness, a.gap_lock_free,
                 a.gap_serial_limit, a.gap_resident_workers)
    meta["load_after"] = os.getloadavg()
    run.save()
    run.note(f"written {a.out}")


if __name__ == "__main__":
    main()

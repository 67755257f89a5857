"""Joint rounds of the chain SSVM on a CoNLL-like corpus of ``--scale`` x CoNLL-2000's
sentences (lam = 1/n, tau = n/16): the client's peak memory and seconds per pass with
the block iterates in the client against on the workers (issue #27 item 3).

Each row runs in a fresh process of its own (its peak RSS, ``VmHWM``, is then the
row's alone), one after the other:

* ``in process``: compiled joint rounds in this process, one thread (the dual over the
  examples in memory);
* ``dask, examples shipped``: a LocalCluster of ``--workers`` processes (one thread
  each) answering the oracles, the client taking the steps over every block
  (``SSVMDual.from_source``: the workers draw their examples);
* ``dask, resident``: the same cluster, the block iterates on the workers
  (``from_source(..., resident=True)``: the client holds no example).

A row times ``--passes`` passes after a first one (which ships the whole point and
compiles the workers' kernels), no certificate inside, then one certificate; it reports
seconds per pass, the certificate's seconds and gap, the client's and the workers' peak
RSS.  Run::

    env OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/ssvm_resident.py --scale 10

Writes ``benchmarks/results/ssvm_resident.json`` (``--out``: another file).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

ROWS = ("in process", "dask, examples shipped", "dask, resident")


def _peak_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return float(next(ln.split()[1] for ln in status.splitlines()
                      if ln.startswith("VmHWM"))) / 1024.0


def _worker_peak() -> float:
    return _peak_mb()


def row(name: str, scale: int, workers: int, passes: int) -> dict:
    """One row, in this process (see the module docstring)."""
    import numpy as np

    import frankwolfe as fw
    from frankwolfe.applications.structured_svm import ChainModel, ConllLike
    from frankwolfe.applications.structured_svm.dual import SSVMDual

    corpus = ConllLike(8936 * scale, random_state=0)
    n = len(corpus)
    model = ChainModel(corpus.n_states, corpus.feature_sizes)
    dom = SSVMDual.from_source(model, corpus, 1.0 / n, resident=name == "dask, resident")
    f = dom.dual_objective()
    times: list[float] = []

    def tick(_state):
        times.append(time.perf_counter())

    kw = dict(batch_size=max(1, n // 16), max_iter=1 + passes, tol=0.0,
              gap_every=10**6, random_state=0, round_step="joint", averaging=None,
              callback=tick)
    out: dict = {"row": name, "n": n, "d": dom.dim, "workers": workers}
    if name == "in process":
        res = fw.block_coordinate_frank_wolfe(f, dom, executor=fw.SerialExecutor(), **kw)
        workers_peak: list[float] = []
    else:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit=0) as cl, \
                Client(cl, direct_to_workers=True) as client:
            res = fw.block_coordinate_frank_wolfe(f, dom, executor=fw.DaskExecutor(client),
                                                  **kw)
            workers_peak = sorted(client.run(_worker_peak).values())
    h = res.history
    per_pass = np.diff(np.asarray(h["time"][1:1 + passes + 1], dtype=float))
    out.update(engine=res.extra["engine"], seconds_per_pass=float(per_pass.mean()),
               passes=[float(t) for t in per_pass], gap=float(res.gap), fun=float(res.fun),
               certificate_seconds=float(res.extra.get("certificate_oracle_seconds", 0.0)),
               drift=float(res.extra.get("resident_drift", float("nan"))),
               client_peak_mb=_peak_mb(), workers_peak_mb=workers_peak)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--rows", nargs="*", default=list(ROWS), choices=ROWS)
    ap.add_argument("--row", help=argparse.SUPPRESS)  # a child process's row
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                         "ssvm_resident.json"))
    a = ap.parse_args()
    if a.row:
        print(json.dumps(row(a.row, a.scale, a.workers, a.passes)))
        return
    from results_file import write_json

    results = []
    for name in a.rows:
        cmd = [sys.executable, __file__, "--row", name, "--scale", str(a.scale),
               "--workers", str(a.workers), "--passes", str(a.passes)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-3000:]}")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        r = results[-1]
        print(f"{name:24s} {r['engine']:9s} {r['seconds_per_pass']:.2f} s/pass "
              f"(passes {', '.join(f'{t:.2f}' for t in r['passes'])}), gap {r['gap']:.4g}, "
              f"client peak {r['client_peak_mb']:.0f} MB, workers "
              f"{', '.join(f'{w:.0f}' for w in r['workers_peak_mb'])} MB", flush=True)
    write_json(a.out, {"scale": a.scale, "workers": a.workers, "passes": a.passes,
                       "rows": results})


if __name__ == "__main__":
    main()

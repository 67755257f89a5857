"""What a user's first call costs: import, numba compilation and solving, cold and warm.

Each job (the README's example, ``make demo``'s problems, a chain structured SVM fit
on OCR-small, the sparse lasso, QAP, traffic BCFW, the mini-batch path on threads and
on Dask, and every method of :func:`frankwolfe.minimize`) runs in a fresh process,
first with an empty numba cache (``NUMBA_CACHE_DIR`` pointing at a new folder; the
generated BCFW drivers live there too) and then again with the cache that run left.
A job reports, in CPU seconds of its process (so other work on the machine disturbs
the figures little):

* ``import`` - interpreter start and the job's imports;
* ``load``   - reading its data (files, or a generated problem);
* ``run``    - the first call, compilation included;
* ``compile`` - the part of ``run``/``import`` numba spent compiling (wall seconds of
  numba's own ``numba:compile`` events, top level only, so nested compilations are
  counted once), with the functions that took longest (self time);
* ``total``  - the process's CPU seconds at exit.

With ``--baseline REV`` the same jobs also run on the code of git revision ``REV``
(exported with ``git archive``, imported ahead of the installed package), alternated
job by job with this checkout, so before and after share the machine's state.  On a
machine whose speed drifts (a shared VM: the same cold job's CPU seconds moved by 30%
within minutes), ``--paired N`` runs before and after at the same time instead, one
core each, N times, and prints the medians.

Run::

    .venv/bin/python benchmarks/first_call.py                 # every job
    .venv/bin/python benchmarks/first_call.py --jobs ssvm_chain lasso_sparse
    .venv/bin/python benchmarks/first_call.py --baseline cc5225e --out results/first_call.json
    .venv/bin/python benchmarks/first_call.py --jobs lasso_sparse --baseline HEAD --paired 5

The data jobs read ``FRANKWOLFE_DATA`` (``make`` sets it beside ``../shared/data``) and
are skipped when their files are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from revision import export_revision  # noqa: E402


def cpu() -> float:
    """CPU seconds (user + system) of this process so far, interpreter start included."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# -- the jobs: each is (imports, load, run); load returns what run takes ---------------

def _ls_problem(n: int = 60, d: int = 20, seed: int = 0) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    return A, A @ rng.dirichlet(np.ones(d)) + 0.01 * rng.standard_normal(n)


def job_import_frankwolfe() -> tuple[Callable, Callable, Callable]:
    return (lambda: __import__("frankwolfe"), lambda: None, lambda _: None)


def job_import_all() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        import frankwolfe.applications.fetch
        import frankwolfe.applications.lasso
        import frankwolfe.applications.matching
        import frankwolfe.applications.structured_svm
        import frankwolfe.applications.traffic  # noqa: F401

    return imports, lambda: None, lambda _: None


def job_readme() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        import frankwolfe  # noqa: F401

    def load() -> Any:
        import numpy as np

        from frankwolfe import LMO, FunctionObjective

        class Ball(LMO):
            def __init__(self, center: Any, radius: float) -> None:
                self.center, self.radius = np.asarray(center, float), radius

            def extreme_point(self, g: Any) -> Any:
                return self.center - self.radius * g / np.linalg.norm(g)

            def violation(self, x: Any) -> float:
                return max(0.0, np.linalg.norm(x - self.center) / self.radius - 1.0)

        y = np.array([3.0, 4.0, 0.0])
        f = FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y,
                              smoothness=1.0, shape=3)
        return f, Ball([0, 0, 1], 1.0)

    def run(p: Any) -> Any:
        from frankwolfe import frank_wolfe

        return frank_wolfe(p[0], p[1], tol=1e-10).gap

    return imports, load, run


def job_demo() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        sys.path.insert(0, str(ROOT / "examples"))
        import demo  # noqa: F401

    def load() -> Any:
        import demo
        import numpy as np

        return [b(np.random.default_rng(0)) for b in
                (demo.simplex_qp, demo.sparse_recovery, demo.network_routing)]

    def run(problems: Any) -> Any:
        import frankwolfe as fw

        return [fw.minimize(f, dom, method=m, tol=1e-8, max_iter=3000).gap
                for f, dom in problems for m in ("fw", "away", "pairwise")]

    return imports, load, run


def _ocr() -> Any:
    from frankwolfe.applications.structured_svm import load_ocr

    return load_ocr("ocr")[:2]


def job_ssvm_chain() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM  # noqa: F401

    def run(data: Any) -> Any:
        from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM

        return StructuredSVM(ChainModel(26, 129), max_passes=2).fit(*data).result_.gap

    return imports, _ocr, run


def _minibatch(executor: str) -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM  # noqa: F401

    def run(data: Any) -> Any:
        from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM

        make = lambda **kw: StructuredSVM(ChainModel(26, 129), max_passes=2,  # noqa: E731
                                          batch_size=32, **kw)
        if executor == "dask":
            from dask.distributed import Client, LocalCluster

            # in-process (inproc:// addresses, no sockets): with processes=False a
            # host= makes distributed 2026.x fail to start the scheduler
            with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                              dashboard_address=None) as c, Client(c) as cl:
                return make(executor=cl).fit(*data).result_.gap
        return make(n_jobs=2).fit(*data).result_.gap

    return imports, _ocr, run


def job_lasso_sparse() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        from frankwolfe.applications.lasso import solve_lasso  # noqa: F401

    def load() -> Any:
        import numpy as np
        import scipy.sparse as sp

        rng = np.random.default_rng(0)
        A = sp.random(500, 5000, density=0.01, format="csc", random_state=rng)
        x = np.zeros(5000)
        x[rng.choice(5000, 20, replace=False)] = rng.standard_normal(20)
        return A, A @ x + 0.01 * rng.standard_normal(500), float(np.abs(x).sum())

    def run(p: Any) -> Any:
        from frankwolfe.applications.lasso import solve_lasso

        return solve_lasso(*p, tol=1e-6).gap

    return imports, load, run


def job_qap() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        from frankwolfe.applications.matching import solve_qap  # noqa: F401

    def load() -> Any:
        from frankwolfe.applications.fetch import fetch_qaplib

        return fetch_qaplib("nug12", download_if_missing=False)[:2]

    def run(p: Any) -> Any:
        from frankwolfe.applications.matching import solve_qap

        return solve_qap(*p, random_state=0).fun

    return imports, load, run


def job_traffic_bcfw() -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        from frankwolfe.applications.traffic import traffic_assignment  # noqa: F401

    def load() -> Any:
        from frankwolfe.applications.fetch import fetch_tntp

        return fetch_tntp("SiouxFalls", download_if_missing=False)[0]

    def run(net: Any) -> Any:
        from frankwolfe.applications.traffic import traffic_assignment

        return traffic_assignment(net, method="bcfw", max_iter=20).gap

    return imports, load, run


def _minimize_problem(method: str) -> Any:
    """A small problem each method of ``minimize`` accepts."""
    import numpy as np

    import frankwolfe as fw

    A, b = _ls_problem()
    if method == "saddle":
        rng = np.random.default_rng(0)
        M = rng.standard_normal((20, 20))
        return (fw.BilinearObjective(M), fw.ProductDomain(
            [fw.ProbabilitySimplex(dim=20), fw.ProbabilitySimplex(dim=20)])), {"max_iter": 200}
    if method == "bcfw":
        dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=5) for _ in range(4)])
        return (fw.LeastSquares(A, b), dom), {"max_iter": 200}
    return (fw.LeastSquares(A, b), fw.ProbabilitySimplex(20.0)), {"max_iter": 300}


def job_minimize(method: str) -> tuple[Callable, Callable, Callable]:
    def imports() -> None:
        import frankwolfe  # noqa: F401

    def run(p: Any) -> Any:
        import frankwolfe as fw

        (f, dom), kw = p
        return fw.minimize(f, dom, method=method, tol=1e-6, **kw).gap

    return imports, lambda: _minimize_problem(method), run


MINIMIZE = ("fw", "away", "pairwise", "compiled_pairwise", "bcfw", "rafw", "cfw", "bfw",
            "fcfw", "saddle")
JOBS: dict[str, Callable[[], tuple[Callable, Callable, Callable]]] = {
    "import_frankwolfe": job_import_frankwolfe,
    "import_all": job_import_all,
    "readme": job_readme,
    "demo": job_demo,
    "ssvm_chain": job_ssvm_chain,
    "ssvm_minibatch_threads": lambda: _minibatch("threads"),
    "ssvm_minibatch_dask": lambda: _minibatch("dask"),
    "lasso_sparse": job_lasso_sparse,
    "qap": job_qap,
    "traffic_bcfw": job_traffic_bcfw,
    **{f"minimize_{m}": (lambda m=m: job_minimize(m)) for m in MINIMIZE},
}
DATA_JOBS = {"ssvm_chain": "ocr", "ssvm_minibatch_threads": "ocr", "ssvm_minibatch_dask": "ocr",
             "qap": "qaplib", "traffic_bcfw": "tntp"}


# -- one job in this process ----------------------------------------------------------

def child(name: str) -> dict[str, Any]:
    from numba.core import event

    selftime: dict[str, float] = defaultdict(float)
    stack: list[list[float]] = []
    top = [0.0]

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev: Any) -> None:
            t0, nested = stack.pop()
            dt = time.perf_counter() - t0
            py = getattr(ev.data.get("dispatcher"), "py_func", None)
            selftime[f"{getattr(py, '__module__', '?')}.{getattr(py, '__qualname__', '?')}"] += \
                dt - nested
            if stack:
                stack[-1][1] += dt
            else:
                top[0] += dt

    event.register("numba:compile", Listener())
    imports, load, run = JOBS[name]()
    marks = [cpu()]
    imports()
    marks.append(cpu())
    problem = load()
    marks.append(cpu())
    value = run(problem)
    marks.append(cpu())
    slowest = sorted(selftime.items(), key=lambda kv: -kv[1])[:8]
    return {"job": name, "import": marks[1], "load": marks[2] - marks[1],
            "run": marks[3] - marks[2], "compile": top[0], "total": cpu(),
            "n_compiled": len(selftime), "slowest": [[k, round(v, 2)] for k, v in slowest],
            "value": repr(value)[:60]}


# -- the parent: fresh processes, cold then warm --------------------------------------

def start(name: str, cache: Path, code: Path | None, core: int | None = None
          ) -> tuple[subprocess.Popen, float]:
    """A fresh process running job ``name`` on the numba cache ``cache`` (on the code of
    ``code`` when given, pinned to CPU ``core`` when given)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else every import compiles the sources again
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")])
    if core is not None:
        env["OPENBLAS_NUM_THREADS"] = "1"  # its threads would spin on the one core
    pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    proc = subprocess.Popen([sys.executable, __file__, "--child", name], env=env,
                            cwd=code or ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=pin)
    return proc, time.perf_counter()


def finish(name: str, started: tuple[subprocess.Popen, float], timeout: float
           ) -> dict[str, Any]:
    proc, t0 = started
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"job": name, "error": [f"no answer in {timeout:.0f} s"]}
    if proc.returncode != 0:
        return {"job": name, "error": stderr.strip().splitlines()[-1:]}
    row = json.loads(stdout.strip().splitlines()[-1])
    row["wall"] = time.perf_counter() - t0
    return row


def spawn(name: str, cache: Path, code: Path | None, timeout: float) -> dict[str, Any]:
    return finish(name, start(name, cache, code), timeout)


def have_data(kind: str) -> bool:
    base = Path(os.environ.get("FRANKWOLFE_DATA", ROOT.parent / "shared" / "data"))
    return {"ocr": (base / "ocr").is_dir(), "qaplib": (base / "qaplib").is_dir(),
            "tntp": (base / "tntp").is_dir()}[kind]


def fmt(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"  ERROR {row['error']}"
    return (f"{row['import']:7.2f} {row['load']:6.2f} {row['run']:7.2f} {row['compile']:8.2f}"
            f" {row['total']:7.2f} {row['n_compiled']:5d}")


def paired(name: str, sides: list[tuple[str, Path | None]], tmp: Path, repeats: int,
           timeout: float) -> list[dict[str, Any]]:
    """Job ``name`` before and after at the same time, each side on a core of its own
    (they swap cores every repeat), cold then warm: CPU seconds move with the machine's
    state (other tenants, clock), and two processes at once see the same state."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    rows: list[dict[str, Any]] = []
    for rep in range(repeats):
        caches = [Path(tempfile.mkdtemp(dir=tmp, prefix="cache-")) for _ in sides]
        order = cores if rep % 2 == 0 else cores[::-1]
        for state in ("cold", "warm"):
            running = [start(name, cache, code, core)
                       for (_, code), cache, core in zip(sides, caches, order)]
            for (side, _), started, core in zip(sides, running, order):
                row = finish(name, started, timeout)
                row.update(side=side, cache=state, repeat=rep, core=core)
                rows.append(row)
                print(f"{name:26s} {side:6s} {state:5s} {fmt(row)}  core {core}", flush=True)
    for state in ("cold", "warm"):
        totals = {side: [r["total"] for r in rows
                         if r["side"] == side and r["cache"] == state and "total" in r]
                  for side, _ in sides}
        if not all(totals.values()):
            print(f"{name:26s} {state}: no pair without an error")
            continue
        med = {side: statistics.median(t) for side, t in totals.items()}
        print(f"{name:26s} median of {repeats} pairs, {state}: before {med['before']:.2f}, "
              f"after {med['after']:.2f} ({med['after'] / med['before']:.2f}x)")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", nargs="*", default=None, help=f"some of {sorted(JOBS)}")
    p.add_argument("--baseline", default=None, help="git revision to compare with")
    p.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    p.add_argument("--paired", type=int, default=0, metavar="N",
                   help="with --baseline: run before and after at once, one core each, N "
                        "times per job, and print the medians")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.paired < 0:
        p.error(f"--paired must be a count of pairs (0: off), got {a.paired}")
    if a.paired and not a.baseline:
        p.error("--paired needs --baseline")
    if a.paired and len(os.sched_getaffinity(0)) < 2:
        p.error(f"--paired needs 2 CPUs, this process may use {len(os.sched_getaffinity(0))}")
    if a.child:
        print(json.dumps(child(a.child)))
        return 0
    if "FRANKWOLFE_DATA" not in os.environ and (ROOT.parent / "shared" / "data").is_dir():
        os.environ["FRANKWOLFE_DATA"] = str(ROOT.parent / "shared" / "data")
    names = a.jobs or list(JOBS)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fw-first-call-") as tmp_:
        tmp = Path(tmp_)
        sides: list[tuple[str, Path | None]] = [("after", None)]
        if a.baseline:
            (tmp / "base").mkdir()
            sides.insert(0, ("before", export_revision(a.baseline, tmp / "base")))
        for _, code in sides:  # Python's bytecode cache first: a user's imports find it
            spawn("import_all", Path(tempfile.mkdtemp(dir=tmp)), code, a.timeout)
        print(f"CPU seconds of a fresh process; load average {os.getloadavg()[0]:.1f}")
        print(f"{'job':26s} {'side':6s} {'cache':5s} {'import':>7s} {'load':>6s} {'run':>7s}"
              f" {'compile':>8s} {'total':>7s} {'funcs':>5s}")
        for name in names:
            if name in DATA_JOBS and not have_data(DATA_JOBS[name]):
                print(f"{name:26s} skipped: no {DATA_JOBS[name]} data under FRANKWOLFE_DATA")
                continue
            if a.paired:
                rows += paired(name, sides, tmp, a.paired, a.timeout)
                continue
            for side, code in sides:
                cache = Path(tempfile.mkdtemp(dir=tmp, prefix="cache-"))
                for state in ("cold", "warm"):
                    row = spawn(name, cache, code, a.timeout)
                    row.update(side=side, cache=state)
                    rows.append(row)
                    print(f"{name:26s} {side:6s} {state:5s} {fmt(row)}", flush=True)
                    if state == "cold" and "slowest" in row:
                        top = ", ".join(f"{k.rsplit('.', 1)[-1]} {v:.1f}"
                                        for k, v in row["slowest"][:4])
                        print(f"{'':40s} slowest: {top}")
    if a.out:
        # here, not at the top: the children import this file on a baseline's code, which
        # may predate the writer's module
        from results_file import write_json

        write_json(a.out, {"baseline": a.baseline, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

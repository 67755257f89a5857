"""The structured SVM's other solvers next to BCFW: time and memory per pass, and the
cutting plane's working sets.

Two jobs (each solver/data pair runs in a fresh subprocess, so ``ru_maxrss`` is
its own peak memory):

* ``passes``: online-EG, dual extragradient and BCFW (uniform sampling, line
  search, no averaging) on OCR-large (n = 6251, d = 4082) and CoNLL-2000
  (n = 8936, d = 1,643,026) at lambda = 1/n, ``--passes`` effective passes each,
  through ``StructuredSVM`` with no evaluation inside the timed passes; reported:
  seconds per effective pass (training time / effective passes, after a warm-up
  fit on 50 examples that compiles or loads the numba kernels), the peak
  memory of the process and the final certified gap (one evaluation at the end,
  not timed).
* ``cutting_plane``: the n-slack cutting plane (per-block fully corrective FW)
  on OCR-large at ``--cp-lam`` (default 1/n) for ``--cp-passes`` passes with the
  inactive-atom pruning (``prune_after``, default 10), one run per corrective
  sweep budget (``--cp-max-sweeps``, default 200, the estimator's) and per
  ``blocks_per_step`` (``--cp-blocks-per-step``, default 100, the estimator's;
  0: every plane of a pass cut at one point, the rule before issue 11) and,
  for comparison,
  without pruning (``--cp-unpruned-passes``); per pass: working-set size (block
  vertices kept), seconds, corrective sweeps, primal, dual and certified gap.

* ``compare``: the qualitative comparison of the BCFW paper's Figure 1 at reduced
  size: BCFW, BCFW-wavg, SSG, SSG-wavg, online-EG and batch FW on OCR-large
  (``--lams``), ``--seeds`` runs of the stochastic ones; per method the median
  (min-max) primal suboptimality against the best dual value seen in the panel
  and the test error at the evaluated passes.
* ``eg_step``: the dual extragradient's step rules side by side, the adaptive
  backtracking step (the default) against ``"auto"`` (``1/Lip`` from the
  power method, the old default), on OCR-large at ``--lams`` for
  ``--eg-passes`` effective passes (each rule in its own subprocess); reported:
  the certified gap of the averaged point (primal by a loss-augmented pass,
  not counted) at the first iteration reaching each of ``--eg-checkpoints``,
  the steps accepted and rejected.
* ``steps``: Figure 2, exact line search against the predefined steps,
  ``2n/(k+2n)`` for BCFW and ``2/(k+2)`` for batch FW (the core solvers on the
  SSVM dual); per pass the primal and the dual.

Run under the bench lock with one BLAS thread, e.g.::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python \
        benchmarks/ssvm_solvers.py passes --data ocr conll --passes 5
    OPENBLAS_NUM_THREADS=1 .venv/bin/python \
        benchmarks/ssvm_solvers.py cutting_plane --cp-passes 30
    OPENBLAS_NUM_THREADS=1 .venv/bin/python \
        benchmarks/ssvm_solvers.py eg_step --lams 0.01 1/n --eg-passes 100

Writes ``benchmarks/results/ssvm_solvers_<job>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOLVERS = {"bcfw": dict(solver="bcfw", averaging=False),
           "online_eg": dict(solver="online_eg"),
           "dual_extragradient": dict(solver="dual_extragradient")}


def _load(data: str):
    from benchmarks.ssvm import load

    return load(data)


def child_passes(data: str, solver: str, passes: int) -> dict:
    from frankwolfe.applications.structured_svm import StructuredSVM

    model, X, Y = _load(data)
    # warm-up on a few examples: numba compilation / cache loading is not a pass
    StructuredSVM(model, max_passes=4, tol=0.0, gap_every=10**9, eval_every=10**9,
                  random_state=0, **SOLVERS[solver]).fit(X[:50], Y[:50])
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    svm = StructuredSVM(model, max_passes=passes, tol=0.0, gap_every=10**9, eval_every=10**9,
                        random_state=0, **SOLVERS[solver])
    t0 = time.perf_counter()
    svm.fit(X, Y)
    wall = time.perf_counter() - t0
    h = svm.history_
    eff = float(h["effective_passes"][-1])
    return {"data": data, "solver": solver, "effective_passes": eff,
            # (none where the budget ended before the first iteration: the dual extragradient
            # needs more than a pass of calls for one)
            "seconds": float(h["seconds"][-1]),
            "seconds_per_pass": float(h["seconds"][-1]) / eff if eff > 0 else float("nan"),
            "wall_with_final_eval": wall, "rss_after_load_mb": rss0,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "primal": float(h["primal"][-1]), "dual": float(h["dual"][-1]),
            "gap": float(h["gap"][-1])}


def child_cutting_plane(passes: int, prune_after: int | None, max_sweeps: int,
                        tol: float, lam_spec: str = "1/n", blocks_per_step: int = 0) -> dict:

    import frankwolfe as fw
    from frankwolfe.applications.structured_svm import SSVMDual
    from frankwolfe.applications.structured_svm.oracles import batch_primal

    model, X, Y = _load("ocr")
    n = len(X)
    lam = 1.0 / n if lam_spec == "1/n" else float(lam_spec)
    bps = blocks_per_step or None  # 0: every block's plane at one point per pass
    cycle = -(-n // bps) if bps else 1
    # the objective, domain and start of StructuredSVM(solver="cutting_plane")
    domain = SSVMDual(model, X, Y, lam)
    objective = domain.dual_objective()  # declares its quadratic form to the corrective QP
    start = [domain.blocks[i].vertex(Y[i]) for i in range(n)]
    rows = []
    clock = {"last": time.perf_counter(), "eval": 0.0}

    def callback(s):
        if s.k % cycle:
            return
        now = time.perf_counter()
        seconds = now - clock["last"]
        primal = batch_primal(model, X, Y, np.array(s.x[:-1]), lam)["primal"]
        rows.append({"pass": s.k // cycle, "seconds": seconds,
                     "working_set_size": int(s.info["working_set_size"]),
                     "active_set_size": int(s.info["active_set_size"]),
                     "qp_sweeps_total": int(s.info["n_qp_iterations"]),
                     "primal": primal, "dual": -float(s.fun), "gap": primal + float(s.fun),
                     "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        clock["last"] = time.perf_counter()  # the evaluation is not part of the pass time

    fw.fully_corrective_frank_wolfe(objective, domain, start, blocks=True, corrective_tol=tol,
                                    corrective_max_sweeps=max_sweeps, prune_after=prune_after,
                                    blocks_per_step=bps, max_iter=passes * cycle, tol=0.0,
                                    callback=callback)
    return {"prune_after": prune_after, "corrective_max_sweeps": max_sweeps,
            "corrective_tol": tol, "lam": lam, "blocks_per_step": bps, "rows": rows}


COMPARE = {"BCFW": dict(solver="bcfw", averaging=False),
           "BCFW-wavg": dict(solver="bcfw", averaging="weighted"),
           "SSG": dict(solver="ssg", averaging=False),
           "SSG-wavg": dict(solver="ssg", averaging="weighted"),
           "online-EG": dict(solver="online_eg"),
           "FW": dict(solver="fw")}


def child_compare(lam_spec: str, passes: int, seeds: int, every: int) -> dict:
    from frankwolfe.applications.structured_svm import StructuredSVM, load_ocr

    model, X, Y = _load("ocr")
    _, _, Xte, Yte = load_ocr("ocr2")
    lam = 1.0 / len(X) if lam_spec == "1/n" else float(lam_spec)
    runs = {}
    for name, kw in COMPARE.items():
        stochastic = kw["solver"] != "fw"
        for seed in range(seeds if stochastic else 1):
            svm = StructuredSVM(model, lam=lam, max_passes=passes, tol=0.0, gap_every=10**9,
                                eval_every=every, random_state=seed, **kw)
            svm.fit(X, Y, Xte, Yte)
            h = svm.history_
            runs.setdefault(name, []).append({c: h[c].tolist() for c in (
                "passes", "effective_passes", "primal", "dual", "test_error")})
            print(f"{lam_spec} {name} seed {seed}: primal {h['primal'][-1]:.4f} "
                  f"test {h['test_error'][-1]:.4f}", file=sys.stderr, flush=True)
    best_dual = max(np.nanmax(r["dual"]) for rs in runs.values() for r in rs)
    return {"lam": lam_spec, "best_dual": float(best_dual), "runs": runs}


def child_eg_step(lam_spec: str, rule: str, passes: int, checkpoints: list[int]) -> dict:
    from frankwolfe import RunOptions
    from frankwolfe.applications.structured_svm.oracles import batch_primal
    from frankwolfe.applications.structured_svm.solvers import dual_extragradient

    model, X, Y = _load("ocr")
    n = len(X)
    lam = 1.0 / n if lam_spec == "1/n" else float(lam_spec)
    rows, todo, steps = [], sorted(checkpoints), []  # seconds include the step set-up

    def certify(it, eff, w_bar, point_bar, seconds):
        _, _, dual = point_bar.image()
        primal = batch_primal(model, X, Y, w_bar, lam)["primal"]
        rows.append({"iteration": it, "effective_passes": eff, "primal": primal, "dual": dual,
                     "gap": primal - dual, "seconds": seconds})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    clock = {"eval": 0.0}

    def callback(s):
        if s.k == 0:  # before the first iteration
            return
        it, eff, state = s.k, s.info["effective_passes"], s.info
        steps.append(s.step_size)
        if todo and eff >= todo[0] and eff < passes:
            while todo and eff >= todo[0]:
                todo.pop(0)
            t1 = time.perf_counter()
            certify(it, eff, state["w_bar"], state["point_bar"], t1 - t0 - clock["eval"])
            clock["eval"] += time.perf_counter() - t1

    out = dual_extragradient(model, X, Y, lam, max_passes=passes, step_size=rule,
                             run_options=RunOptions(callback=callback))
    certify(out["iterations"], out["effective_passes"], out["w"], out["point_bar"],
            time.perf_counter() - t0 - clock["eval"])
    return {"lam": lam_spec, "rule": rule, "rows": rows, "rejected": out["rejected"],
            "iterations": out["iterations"], "first_step": steps[0] if steps else None,
            "step_min": min(steps, default=None), "step_max": max(steps, default=None),
            "last_step": out["step_size"]}


def child_steps(lam_spec: str, passes: int) -> dict:
    import frankwolfe as fw
    from frankwolfe.applications.structured_svm import SSVMDual, SSVMDualObjective
    from frankwolfe.applications.structured_svm.oracles import batch_primal

    model, X, Y = _load("ocr")
    n = len(X)
    lam = 1.0 / n if lam_spec == "1/n" else float(lam_spec)
    d = model.size_joint_feature
    out = {}

    def record(rows, s):
        if s.k and (s.k <= 5 or s.k % 5 == 0):
            primal = batch_primal(model, X, Y, np.array(s.x[:-1]), lam)["primal"]
            rows.append((s.k, primal, -float(s.fun)))

    for name, batch, rule in (("BCFW line search", False, "exact"),
                              ("BCFW 2n/(k+2n)", False, "agnostic"),
                              ("FW line search", True, "exact"),
                              ("FW 2/(k+2)", True, "agnostic")):
        rows = []
        callback = partial(record, rows)
        obj = SSVMDualObjective(lam, d)
        dom = SSVMDual(model, X, Y, lam)
        if batch:
            fw.frank_wolfe(obj, dom, np.zeros(dom.dim), step_size=rule, max_iter=passes,
                           tol=0.0, callback=callback)
        else:
            fw.block_coordinate_frank_wolfe(obj, dom, None, step_size=rule, max_iter=passes,
                                            tol=0.0, gap_every=10**9, random_state=0,
                                            callback=callback)
        out[name] = rows
        print(f"{lam_spec} {name}: {rows[-1]}", file=sys.stderr, flush=True)
    return {"lam": lam_spec, "curves": out}


def _spawn(args: list[str]) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    out = subprocess.run([sys.executable, __file__, "--child", *args], env=env, check=True,
                         stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("job", choices=["passes", "cutting_plane", "compare", "steps", "eg_step"])
    ap.add_argument("--eg-passes", type=int, default=100)
    ap.add_argument("--eg-checkpoints", type=int, nargs="+", default=[40])
    ap.add_argument("--eg-rules", nargs="+", default=["auto", "adaptive"])
    ap.add_argument("--lams", nargs="+", default=["0.01", "1/n"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--eval-every", type=int, default=2)
    ap.add_argument("--data", nargs="+", default=["ocr", "conll"], choices=["ocr", "conll"])
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--cp-passes", type=int, default=30)
    ap.add_argument("--cp-unpruned-passes", type=int, default=10)
    ap.add_argument("--prune-after", type=int, default=10)
    ap.add_argument("--cp-max-sweeps", type=int, nargs="+", default=[200],
                    help="corrective_max_sweeps of the pruned runs (one run each)")
    ap.add_argument("--cp-tol", type=float, default=1e-3, help="corrective_tol")
    ap.add_argument("--cp-lam", default="1/n", help="lambda of the cutting-plane runs")
    ap.add_argument("--cp-blocks-per-step", type=int, nargs="+", default=[100],
                    help="blocks_per_step of the pruned runs (one run each; 0: all blocks' "
                         "planes at one point, the estimator's rule before issue 11)")
    a = ap.parse_args()
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"load: {os.getloadavg()}")
    if a.job == "passes":
        res = []
        for data in a.data:
            for solver in a.solvers:
                r = _spawn(["passes", data, solver, str(a.passes)])
                res.append(r)
                print(f"{data:6s} {solver:20s} {r['seconds_per_pass']:8.3f} s/pass  "
                      f"peak {r['peak_rss_mb']:7.0f} MB (after load {r['rss_after_load_mb']:.0f})"
                      f"  gap {r['gap']:.4g} after {r['effective_passes']:.1f} passes", flush=True)
        for data in a.data:
            base = next((r for r in res if r["data"] == data and r["solver"] == "bcfw"), None)
            if base:
                for r in res:
                    if r["data"] == data:
                        t = r["seconds_per_pass"] / base["seconds_per_pass"]
                        m = r["peak_rss_mb"] / base["peak_rss_mb"]
                        print(f"{data:6s} {r['solver']:20s} time/pass x{t:.2f} of BCFW, "
                              f"peak memory x{m:.2f}")
    elif a.job == "compare":
        res = [_spawn(["compare", lam, str(a.passes), str(a.seeds), str(a.eval_every)])
               for lam in a.lams]
        for r in res:
            print(f"OCR-large lambda={r['lam']}: median (min-max) primal suboptimality "
                  f"against the best dual {r['best_dual']:.5f}; test error")
            for name, runs in r["runs"].items():
                sub = np.array([np.array(x["primal"]) - r["best_dual"] for x in runs])
                err = np.array([x["test_error"] for x in runs])
                cells = [f"p{int(runs[0]['passes'][j])}: {np.median(sub[:, j]):.4f} "
                         f"({sub[:, j].min():.4f}-{sub[:, j].max():.4f}) "
                         f"err {np.median(err[:, j]):.4f}" for j in range(sub.shape[1])]
                print(f"  {name:10s} " + " | ".join(cells))
    elif a.job == "eg_step":
        res = []
        for lam in a.lams:
            for rule in a.eg_rules:
                r = _spawn(["eg_step", lam, rule, str(a.eg_passes),
                            ",".join(map(str, a.eg_checkpoints))])
                res.append(r)
                cells = " | ".join(f"pass {x['effective_passes']:g}: gap {x['gap']:.4g} "
                                   f"(primal {x['primal']:.4f}, {x['seconds']:.0f} s)"
                                   for x in r["rows"])
                print(f"OCR-large lambda={lam:5s} step={rule:9s} {cells}; {r['iterations']} "
                      f"iterations, {r['rejected']} rejected, steps {r['step_min']:.3g}-"
                      f"{r['step_max']:.3g}", flush=True)
    elif a.job == "steps":
        res = [_spawn(["steps", lam, str(a.passes)]) for lam in a.lams]
        for r in res:
            print(f"OCR-large lambda={r['lam']}: pass, primal, dual")
            for name, rows in r["curves"].items():
                print(f"  {name:18s} " + " | ".join(f"{k}: {p:.4f} / {dl:.4f}"
                                                   for k, p, dl in rows))
    else:
        res = []
        runs = [(a.prune_after, a.cp_passes, sweeps, bps) for bps in a.cp_blocks_per_step
                for sweeps in a.cp_max_sweeps]
        runs.append((None, a.cp_unpruned_passes, a.cp_max_sweeps[0], a.cp_blocks_per_step[0]))
        for prune, passes, max_sweeps, bps in runs:
            if passes <= 0:
                continue
            r = _spawn(["cutting_plane", str(passes), str(prune), str(max_sweeps),
                        str(a.cp_tol), a.cp_lam, str(bps)])
            res.append(r)
            print(f"lambda={a.cp_lam} blocks_per_step={bps or 'all'} prune_after={prune} "
                  f"corrective_max_sweeps={max_sweeps} corrective_tol={a.cp_tol}")
            print(f"{'pass':>4} {'working set':>11} {'seconds':>8} {'QP sweeps':>9} "
                  f"{'primal':>9} {'gap':>9} {'peak MB':>8}")
            sweeps = 0
            for row in r["rows"]:
                print(f"{row['pass']:4d} {row['working_set_size']:11d} {row['seconds']:8.2f} "
                      f"{row['qp_sweeps_total'] - sweeps:9d} {row['primal']:9.4f} "
                      f"{row['gap']:9.4f} {row['peak_rss_mb']:8.0f}")
                sweeps = row["qp_sweeps_total"]
    (out_dir / f"ssvm_solvers_{a.job}.json").write_text(json.dumps(res, indent=1))


def _child(argv: list[str]) -> None:
    job = argv[0]
    if job == "passes":
        r = child_passes(argv[1], argv[2], int(argv[3]))
    elif job == "compare":
        r = child_compare(argv[1], int(argv[2]), int(argv[3]), int(argv[4]))
    elif job == "eg_step":
        r = child_eg_step(argv[1], argv[2], int(argv[3]), [int(c) for c in argv[4].split(",")])
    elif job == "steps":
        r = child_steps(argv[1], int(argv[2]))
    else:
        r = child_cutting_plane(int(argv[1]), None if argv[2] == "None" else int(argv[2]),
                                int(argv[3]), float(argv[4]), argv[5], int(argv[6]))
    print(json.dumps(r))


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child(sys.argv[sys.argv.index("--child") + 1:])
    else:
        main()

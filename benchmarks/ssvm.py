"""Speed and memory of structured SVM training through the core BCFW.

For OCR-large (split "ocr2", n = 6251, d = 4082) and CoNLL-2000 (n = 8936,
d = 1,643,026), in the same process:

* ``pass``  - one effective pass of ``block_coordinate_frank_wolfe`` on the
  SSVM dual (uniform sampling, exact line search; the compiled engine that
  the chain domain offers), timed from the run's history after warm-up
  passes (so the iterate is a realistic mid-run one);
* ``bare``  - the bare loss-augmented oracle calls for the same examples
  alone: the compiled kernels the pass itself calls for the oracle (unary
  scores + loss-augmented Viterbi; for attribute ids the feature-major
  weights), called in a tight numba loop over the same number of uniformly
  drawn examples at the same ``w`` (the floor no implementation can beat);
* ``wavg``  - the pass with weighted averaging on (BCFW-wavg);
* peak memory (``ru_maxrss``) of the process, measured in a fresh
  subprocess per data set.

Each timing is the median of ``--repeats`` runs (other jobs share this
machine).  Targets (issue 5): OCR pass <= 2 x bare and <= 0.25 s; CoNLL pass
<= 3 s with peak memory <= 4 GB.

With ``--baseline DIR`` the same measurements also run on the code checked out
in ``DIR`` (e.g. ``git worktree add /tmp/before REV``), with that checkout's
own copy of this script, alternating with ours data set by data set in the
same run, for a before/after table (ratios after/before).

Run: .venv/bin/python benchmarks/ssvm.py [--data ocr conll] [--repeats 5]
         [--baseline /tmp/before]
Writes benchmarks/results/ssvm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frankwolfe.applications.structured_svm import ChainModel, load_conll2000, load_ocr  # noqa: E402
from frankwolfe.applications.structured_svm._chain_dual import chain_data  # noqa: E402
from frankwolfe.applications.structured_svm.dual import SSVMDual, SSVMDualObjective  # noqa: E402
from frankwolfe.applications.structured_svm.models._viterbi import (decode_dense, decode_ids_fm,  # noqa: E402
                                                         to_feature_major)
from frankwolfe import block_coordinate_frank_wolfe  # noqa: E402


@njit(nogil=True)
def _bare_dense(Xf, off, Yf, w, K, order):
    s = 0.0
    for i in order:
        lo, hi = off[i], off[i + 1]
        y, b = decode_dense(Xf[lo:hi], w, K, Yf[lo:hi], True)
        s += b
    return s


@njit(nogil=True)
def _bare_ids(If, offsets, off, Yf, wt, w, K, F, order):
    s = 0.0
    for i in order:
        lo, hi = off[i], off[i + 1]
        y, b = decode_ids_fm(If[lo:hi], offsets, wt, w, K, F, Yf[lo:hi], True)
        s += b
    return s


def load(name: str):
    if name == "ocr":
        X, Y, _, _ = load_ocr("ocr2")
        return ChainModel(26, 129), X, Y
    X, Y, _, _, info = load_conll2000(return_info=True)
    return ChainModel(info["n_states"], info["feature_sizes"]), X, Y


def measure(name: str, repeats: int, warm_passes: int) -> dict:
    t0 = time.perf_counter()
    model, X, Y = load(name)
    t_load = time.perf_counter() - t0
    n = len(X)
    lam = 1.0 / n
    f = SSVMDualObjective(lam, model.size_joint_feature)
    data = chain_data(model, X, Y)
    # warm-up: compile, then reach a mid-run iterate (block marginals spread out)
    t0 = time.perf_counter()
    dom = SSVMDual(model, X, Y, lam)
    res = block_coordinate_frank_wolfe(f, dom, max_iter=warm_passes, tol=0.0,
                                       gap_every=10**6, random_state=0)
    t_warm = time.perf_counter() - t0
    warm_state = dom.export_state(res)
    rows = {"pass": [], "bare": [], "wavg": []}
    for r in range(repeats):
        for kind in ("pass", "wavg"):
            dom = SSVMDual(model, X, Y, lam)
            dom.set_warm_start(warm_state)
            res = block_coordinate_frank_wolfe(
                f, dom, max_iter=2, tol=0.0, gap_every=10**6, random_state=r,
                averaging="weighted" if kind == "wavg" else None)
            times = np.diff(res.history["time"])
            rows[kind].append(float(times[-1]))  # the second pass (the first pays setup)
            if kind == "pass":
                w = np.ascontiguousarray(res.x[:-1])
        order = np.random.default_rng(r).integers(n, size=n)
        if data.uses_ids:
            # the same feature-major kernel the pass uses; the transposition of w
            # (once per pass in BCFW, O(d)) is left out of the bare time
            wt = to_feature_major(w, data.K, data.F)
            args = (data.If, data.offsets, data.off, data.Yf, wt, w, data.K, data.F, order)
            fn = _bare_ids
        else:
            args = (data.Xf, data.off, data.Yf, w, data.K, order)
            fn = _bare_dense
        fn(*args)
        t0 = time.perf_counter()
        fn(*args)
        rows["bare"].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in rows.items()}
    out = {
        "data": name, "n": n, "d": model.size_joint_feature, "lam": lam,
        "load_s": t_load, "warmup_s": t_warm, "warm_passes": warm_passes,
        "pass_s": med["pass"], "bare_oracle_s": med["bare"], "wavg_pass_s": med["wavg"],
        "ratio_pass_over_bare": med["pass"] / med["bare"],
        "ratio_wavg_over_bare": med["wavg"] / med["bare"],
        "all": rows,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }
    return out


def run_child(code: Path, name: str, args: argparse.Namespace) -> dict:
    """One data set in a fresh subprocess, on the code checked out in ``code``."""
    env = dict(os.environ)
    if code != ROOT:
        # the installed layout: frankwolfe.applications is the top-level applications/
        link = code / "frankwolfe" / "applications"
        if not link.exists():
            link.symlink_to(code / "applications")
        env["PYTHONPATH"] = str(code)
    proc = subprocess.run([sys.executable, str(code / "benchmarks" / "ssvm.py"), "--one", name,
                           "--repeats", str(args.repeats), "--warm-passes",
                           str(args.warm_passes)], capture_output=True, text=True, env=env,
                          cwd=str(code))
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child ({code}, {name}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", default=["ocr", "conll"], choices=["ocr", "conll"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warm-passes", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None,
                    help="checkout of the code to compare with (side by side)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:  # child process: one data set, JSON on stdout
        print(json.dumps(measure(args.one, args.repeats, args.warm_passes)))
        return
    sides = [("after", ROOT)]
    if args.baseline is not None:
        sides.insert(0, ("before", args.baseline.resolve()))
    results = []
    print(f"load {os.getloadavg()[0]:.2f}")
    for name in args.data:
        row = {}
        for side, code in sides:
            r = run_child(code, name, args)
            r["side"] = side
            row[side] = r
            results.append(r)
            print(f"{name} {side:6s}: n={r['n']} d={r['d']}  pass {r['pass_s']:.4f} s  bare "
                  f"oracle {r['bare_oracle_s']:.4f} s  ratio {r['ratio_pass_over_bare']:.2f}  "
                  f"wavg pass {r['wavg_pass_s']:.4f} s (ratio {r['ratio_wavg_over_bare']:.2f})  "
                  f"peak RSS {r['peak_rss_gb']:.3f} GB", flush=True)
        if "before" in row:
            b, a = row["before"], row["after"]
            print(f"{name} after/before: pass {a['pass_s'] / b['pass_s']:.3f}  wavg "
                  f"{a['wavg_pass_s'] / b['wavg_pass_s']:.3f}  bare "
                  f"{a['bare_oracle_s'] / b['bare_oracle_s']:.3f}  peak RSS "
                  f"{a['peak_rss_gb'] / b['peak_rss_gb']:.3f}", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    out = ROOT / "benchmarks" / "results" / "ssvm.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Speed and memory of structured SVM training through the core BCFW.

For OCR-large (split "ocr2", n = 6251, d = 4082) and CoNLL-2000 (n = 8936,
d = 1,643,026), in the same process:

* ``pass``  - one effective pass of ``block_coordinate_frank_wolfe`` on the
  SSVM dual (uniform sampling, exact line search; the compiled engine that
  the chain domain offers), timed from the run's history after warm-up
  passes (so the iterate is a realistic mid-run one);
* the loss-augmented oracle calls of one pass alone (n uniformly drawn examples at
  the pass's ``w``), three ways, taking turns in each round: ``bare``, the model's
  decoding kernel (what issue 12 timed); ``oracle``, the pass's own kernel
  (``direction`` without writing the direction, on the feature-major weights as the
  pass reads them); ``tight``, an independent minimal numba loss-augmented Viterbi
  written in this script (dot-product unary scores for dense features, summed
  feature-major rows for ids, preallocated scratch).  The three labellings are checked
  against each other on every example first (differences only where the scores tie,
  by an independent scorer).  Ratios ours/tight are taken within each round (the
  timings were adjacent) and their median reported: what stays comparable on a
  loaded machine;
* ``wavg``  - the pass with weighted averaging on (BCFW-wavg);
* peak memory (``ru_maxrss``) of the process, measured in a fresh subprocess per data
  set; with ``--fit-rss`` also of a whole ``StructuredSVM(max_passes=20,
  gap_every=5, eval_every=5).fit(X, Y, X_test, Y_test)`` in a process of its own.

Each timing is the median of ``--repeats`` runs (other jobs share this machine).
Targets (issue 12): oracle calls within 1.2x of a tight Viterbi (OCR-large <= 0.033 s,
CoNLL <= 0.15 s on an idle machine, against 0.027 / 0.123 s for the tight one), pass
OCR-large <= 0.06 s and CoNLL <= 0.24 s; fit peak RSS CoNLL <= 0.6 GB, OCR <= 0.4 GB.

With ``--baseline DIR`` the same measurements (this script) also run on the code
checked out in ``DIR`` (e.g. ``git worktree add --detach /tmp/before REV``),
alternating with ours data set by data set in the same run, for a before/after
table (ratios after/before).

Run: .venv/bin/python benchmarks/ssvm.py [--data ocr conll] [--repeats 5]
         [--oracle-rounds 15] [--fit-rss] [--baseline /tmp/before]
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
# the code measured: this checkout, or a baseline's (set by run_child for --baseline)
CODE = Path(os.environ.get("SSVM_BENCH_CODE", ROOT))
sys.path.insert(0, str(CODE))

from results_file import write_json  # noqa: E402

from frankwolfe import block_coordinate_frank_wolfe  # noqa: E402
from frankwolfe.applications.structured_svm import (  # noqa: E402
    ChainModel,
    StructuredSVM,
    load_conll2000,
    load_ocr,
)
from frankwolfe.applications.structured_svm.dual import SSVMDual, SSVMDualObjective  # noqa: E402
from frankwolfe.applications.structured_svm.models.chain.data import chain_data  # noqa: E402
from frankwolfe.applications.structured_svm.models.chain.viterbi import (  # noqa: E402
    decode_dense,
    decode_ids_fm,
    to_feature_major,
)


@njit(nogil=True)
def _bare_dense(Xf, off, Yf, w, K, order, keep, ys_out):
    s = 0.0
    for i in order:
        lo, hi = off[i], off[i + 1]
        y, b = decode_dense(Xf[lo:hi], w, K, Yf[lo:hi], True)
        s += b
        if keep:
            ys_out[lo:hi] = y
    return s


@njit(nogil=True)
def _bare_ids(If, offsets, off, Yf, wt, w, K, F, order, keep, ys_out):
    s = 0.0
    for i in order:
        lo, hi = off[i], off[i + 1]
        y, b = decode_ids_fm(If[lo:hi], offsets, wt, w, K, F, Yf[lo:hi], True)
        s += b
        if keep:
            ys_out[lo:hi] = y
    return s


# -- the pass's own oracle kernel, called bare ----------------------------------------

@njit(nogil=True)
def _pass_oracle(direction, state, g, order, idx, val, keep, ys_out, off):
    """The oracle calls of a pass through the chain kernels' ``direction`` (no direction
    written, no move); with ``keep`` the labellings are copied to ``ys_out``."""
    s = 0.0
    for i in order:
        nnz, gap, score = direction(state, i, g, False, idx, val)
        s += gap
        if keep:
            lo = off[i]
            for t in range(off[i + 1] - lo):
                ys_out[lo + t] = state.ys[t]
    return s


# -- an independent tight reference ----------------------------------------------------
# Loss-augmented Viterbi for the same chain model, written from scratch: unary scores
# as dot products with the (K, F) weights (dense features; fastest of the layouts tried
# without exploiting zeros) or sums of feature-major (F, K) rows (attribute ids),
# start / end biases, transitions M[b, a] (y_t = a -> y_{t+1} = b, read transposed),
# normalized Hamming loss; preallocated scratch, ties to the lowest state (strict >),
# labelling written to ys[lo:hi].

@njit(nogil=True, fastmath=True, inline="always")
def _tight_unary_dense(Xf, lo, L, W, u):
    K, F = W.shape
    for t in range(L):
        for k in range(K):
            s = 0.0
            for f in range(F):
                s += W[k, f] * Xf[lo + t, f]
            u[t, k] = s


@njit(nogil=True, fastmath=True, inline="always")
def _tight_unary_ids(If, offsets, lo, L, WT, u):
    K = WT.shape[1]
    for t in range(L):
        for k in range(K):
            u[t, k] = 0.0
        for j in range(If.shape[1]):
            v = If[lo + t, j]
            if v != 0:
                f = offsets[j] + v - 1
                for k in range(K):
                    u[t, k] += WT[f, k]


@njit(nogil=True, inline="always")
def _tight_viterbi(u, L, Yf, lo, start, end, MT, back, score, new, ys):
    # MT[a, b]: transition a -> b (the transposed M, made once per w): the inner loop
    # runs over the target state with unit stride
    K = start.size
    inv = 1.0 / L
    for k in range(K):
        score[k] = u[0, k] + start[k] + (0.0 if k == Yf[lo] else inv)
    for t in range(1, L):
        yt = Yf[lo + t]
        for b in range(K):
            new[b] = score[0] + MT[0, b]
            back[t, b] = 0
        for a in range(1, K):
            sa = score[a]
            for b in range(K):
                s = sa + MT[a, b]
                if s > new[b]:
                    new[b] = s
                    back[t, b] = a
        for b in range(K):
            score[b] = new[b] + u[t, b] + (0.0 if b == yt else inv)
    best = score[0] + end[0]
    arg = 0
    for k in range(1, K):
        s = score[k] + end[k]
        if s > best:
            best = s
            arg = k
    ys[lo + L - 1] = arg
    for t in range(L - 1, 0, -1):
        ys[lo + t - 1] = back[t, ys[lo + t]]
    return best


@njit(nogil=True, fastmath=True)  # inlined helpers take the caller's flags
def _tight_dense(Xf, off, Yf, W, start, end, MT, order, u, back, score, new, ys):
    s = 0.0
    for i in order:
        lo = off[i]
        L = off[i + 1] - lo
        _tight_unary_dense(Xf, lo, L, W, u)
        s += _tight_viterbi(u, L, Yf, lo, start, end, MT, back, score, new, ys)
    return s


@njit(nogil=True, fastmath=True)
def _tight_ids(If, offsets, off, Yf, WT, start, end, MT, order, u, back, score, new, ys):
    s = 0.0
    for i in order:
        lo = off[i]
        L = off[i + 1] - lo
        _tight_unary_ids(If, offsets, lo, L, WT, u)
        s += _tight_viterbi(u, L, Yf, lo, start, end, MT, back, score, new, ys)
    return s


@njit(nogil=True)
def _augmented_scores(Xf, If, offsets, off, Yf, WT, start, end, M, ys, out):
    """``<w, phi(x_i, y_i)> + loss(y_i)`` of the labellings ``ys`` (independent check)."""
    K = start.size
    for i in range(off.size - 1):
        lo = off[i]
        L = off[i + 1] - lo
        s = start[ys[lo]] + end[ys[lo + L - 1]]
        for t in range(L):
            k = ys[lo + t]
            if k != Yf[lo + t]:
                s += 1.0 / L
            if If.shape[0] > 0:
                for j in range(If.shape[1]):
                    v = If[lo + t, j]
                    if v != 0:
                        s += WT[offsets[j] + v - 1, k]
            else:
                for f in range(Xf.shape[1]):
                    s += Xf[lo + t, f] * WT[f, k]
            if t + 1 < L:
                s += M[ys[lo + t + 1], k]
        out[i] = s
    return K


def load(name: str, test: bool = False):
    if name == "ocr":
        X, Y, Xt, Yt = load_ocr("ocr2")
        model = ChainModel(26, 129)
    else:
        X, Y, Xt, Yt, info = load_conll2000(return_info=True)
        model = ChainModel(info["n_states"], info["feature_sizes"])
    return (model, X, Y, Xt, Yt) if test else (model, X, Y)


def fit_rss(name: str) -> dict:
    """Peak RSS of a whole ``StructuredSVM.fit`` with 4 history evaluations (issue 12's
    memory targets), in a process of its own."""
    model, X, Y, Xt, Yt = load(name, test=True)
    t0 = time.perf_counter()
    StructuredSVM(model, max_passes=20, gap_every=5, eval_every=5,
                  random_state=0).fit(X, Y, Xt, Yt)
    return {"data": name, "fit_s": time.perf_counter() - t0,
            "fit_peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def oracle_calls(model, X, Y, lam: float, data, warm_state, w: np.ndarray, rounds: int) -> dict:
    """The oracle calls of one pass (n uniformly drawn examples) at ``w``, three ways in
    turn (rotating which goes first): the model's decoding kernel (``bare``, what issue 12
    timed), the pass's own kernel (``oracle``: ``direction`` without writing the
    direction, on the feature-major weights for ids, as the pass does) and the tight
    reference; labellings checked against each other first (ties: equal scores)."""
    n, K, F = len(X), data.K, data.F
    o = K * F
    WT = np.ascontiguousarray(w[:o].reshape(K, F).T)
    start, end = w[o:o + K].copy(), w[o + K:o + 2 * K].copy()
    M = np.ascontiguousarray(w[o + 2 * K:].reshape(K, K))  # M[b, a]: a -> b
    MT = np.ascontiguousarray(M.T)
    N, Lmax = int(data.off[-1]), int(np.diff(data.off).max())
    scratch = (np.empty((Lmax, K)), np.empty((Lmax, K), dtype=np.int64), np.empty(K),
               np.empty(K))
    dom = SSVMDual(model, X, Y, lam)
    dom.set_warm_start(warm_state)
    blocks = dom.compiled_blocks(None)
    st = blocks.state
    g = np.append(lam * w, -1.0)  # the pass decodes at g_w / (lam (-g_l)) = w
    if blocks.sync is not None:
        blocks.sync(st, g)
    idx, val = np.empty(blocks.max_nnz, dtype=np.int64), np.empty(blocks.max_nnz)
    if data.uses_ids:
        wt = to_feature_major(w, K, F)

        def bare(order, keep, ys):
            return _bare_ids(data.If, data.offsets, data.off, data.Yf, wt, w, K, F, order,
                             keep, ys)

        def tight(order, ys):
            return _tight_ids(data.If, data.offsets, data.off, data.Yf, WT, start, end, MT,
                              order, *scratch, ys)
    else:
        def bare(order, keep, ys):
            return _bare_dense(data.Xf, data.off, data.Yf, w, K, order, keep, ys)

        W = np.ascontiguousarray(w[:o].reshape(K, F))

        def tight(order, ys):
            return _tight_dense(data.Xf, data.off, data.Yf, W, start, end, MT, order,
                                *scratch, ys)

    def ours(order, keep, ys):
        return _pass_oracle(blocks.direction, st, g, order, idx, val, keep, ys, data.off)

    # check: every example once, labellings of the three equal (or equally good)
    every = np.arange(n)
    ys = {k: np.zeros(N, dtype=np.int64) for k in ("bare", "oracle", "tight")}
    v_bare = bare(every, True, ys["bare"])
    ours(every, True, ys["oracle"])
    v_tight = tight(every, ys["tight"])
    check = {"value_rel_diff": abs(v_bare - v_tight) / max(1.0, abs(v_tight))}
    ref = np.empty(n)
    _augmented_scores(data.Xf, data.If, data.offsets, data.off, data.Yf, WT, start, end, M,
                      ys["tight"], ref)
    for k in ("bare", "oracle"):
        diff = np.flatnonzero(np.add.reduceat(ys[k] != ys["tight"], data.off[:-1]))
        sc = np.empty(n)
        _augmented_scores(data.Xf, data.If, data.offsets, data.off, data.Yf, WT, start, end,
                          M, ys[k], sc)
        worst = float(np.max(np.abs(sc - ref) / (1.0 + np.abs(ref)), initial=0.0))
        if worst > 1e-9:
            raise AssertionError(f"{k}: labellings worse than the tight reference's "
                                 f"(relative score difference {worst:.3g})")
        check[f"{k}_examples_differing"] = int(diff.size)
        check[f"{k}_worst_rel_score_diff"] = worst
    sink = np.empty(N, dtype=np.int64)
    calls = {"bare": lambda order: bare(order, False, sink),
             "oracle": lambda order: ours(order, False, sink),
             "tight": lambda order: tight(order, sink)}
    times: dict = {k: [] for k in calls}
    names = list(calls)
    for r in range(rounds):
        order = np.random.default_rng(r).integers(n, size=n)
        for j in range(len(names)):
            k = names[(r + j) % len(names)]
            t0 = time.perf_counter()
            calls[k](order)
            times[k].append(time.perf_counter() - t0)
    t = {k: np.array(v) for k, v in times.items()}
    return {"bare_oracle_s": float(np.median(t["bare"])),
            "oracle_s": float(np.median(t["oracle"])),
            "tight_s": float(np.median(t["tight"])),
            # ratios within each round (the three timings were adjacent): load-robust
            "ratio_bare_over_tight": float(np.median(t["bare"] / t["tight"])),
            "ratio_oracle_over_tight": float(np.median(t["oracle"] / t["tight"])),
            "oracle_min_s": {k: float(v.min()) for k, v in t.items()},
            "oracle_times": times, "check": check}


def measure(name: str, repeats: int, warm_passes: int, oracle_rounds: int) -> dict:
    load_start = os.getloadavg()[0]
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
    rows = {"pass": [], "wavg": []}
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
    med = {k: float(np.median(v)) for k, v in rows.items()}
    load_mid = os.getloadavg()[0]
    oracle = oracle_calls(model, X, Y, lam, data, warm_state, w, oracle_rounds)
    out = {
        "data": name, "n": n, "d": model.size_joint_feature, "lam": lam,
        "load_s": t_load, "warmup_s": t_warm, "warm_passes": warm_passes,
        "pass_s": med["pass"], "wavg_pass_s": med["wavg"], "all": rows,
        "loadavg": [load_start, load_mid, os.getloadavg()[0]], **oracle,
        "ratio_pass_over_tight": med["pass"] / oracle["tight_s"],
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }
    return out


def run_child(code: Path, name: str, args: argparse.Namespace, what: str = "--one") -> dict:
    """One data set in a fresh subprocess, this script on the code checked out in ``code``."""
    env = dict(os.environ)
    if code != ROOT:
        # the installed layout: frankwolfe.applications is the top-level applications/
        link = code / "frankwolfe" / "applications"
        if not link.exists():
            link.symlink_to(code / "applications")
        env["PYTHONPATH"] = str(code)
        env["SSVM_BENCH_CODE"] = str(code)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), what, name,
                           "--repeats", str(args.repeats), "--warm-passes",
                           str(args.warm_passes), "--oracle-rounds", str(args.oracle_rounds)],
                          capture_output=True, text=True, env=env, cwd=str(code))
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child ({code}, {name}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", default=["ocr", "conll"], choices=["ocr", "conll"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warm-passes", type=int, default=5)
    ap.add_argument("--oracle-rounds", type=int, default=15)
    ap.add_argument("--fit-rss", action="store_true",
                    help="also the peak RSS of a whole StructuredSVM.fit per side")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="checkout of the code to compare with (side by side)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--fit", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:  # child process: one data set, JSON on stdout
        print(json.dumps(measure(args.one, args.repeats, args.warm_passes,
                                 args.oracle_rounds)))
        return
    if args.fit:
        print(json.dumps(fit_rss(args.fit)))
        return
    sides = [("after", ROOT)]
    if args.baseline is not None:
        sides.insert(0, ("before", args.baseline.resolve()))
    results = []
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    for name in args.data:
        row = {}
        for side, code in sides:
            r = run_child(code, name, args)
            if args.fit_rss:
                r.update(run_child(code, name, args, "--fit"))
            r["side"] = side
            row[side] = r
            results.append(r)
            print(f"{name} {side:6s} (load {r['loadavg'][0]:.1f}-{r['loadavg'][-1]:.1f}): "
                  f"pass {r['pass_s']:.4f} s  wavg {r['wavg_pass_s']:.4f} s  |  oracle calls: "
                  f"model decode {r['bare_oracle_s']:.4f} s, pass kernel {r['oracle_s']:.4f} s, "
                  f"tight {r['tight_s']:.4f} s; ours/tight: decode "
                  f"{r['ratio_bare_over_tight']:.3f}, pass kernel "
                  f"{r['ratio_oracle_over_tight']:.3f}; pass/tight "
                  f"{r['ratio_pass_over_tight']:.2f}  |  peak RSS {r['peak_rss_gb']:.3f} GB"
                  + (f", fit {r['fit_peak_rss_gb']:.3f} GB" if args.fit_rss else ""), flush=True)
            print(f"   check: {r['check']}", flush=True)
        if "before" in row:
            b, a = row["before"], row["after"]
            print(f"{name} after/before: pass {a['pass_s'] / b['pass_s']:.3f}  wavg "
                  f"{a['wavg_pass_s'] / b['wavg_pass_s']:.3f}  pass kernel oracle "
                  f"{a['oracle_s'] / b['oracle_s']:.3f} (over tight "
                  f"{b['ratio_oracle_over_tight']:.3f} -> {a['ratio_oracle_over_tight']:.3f})  "
                  f"peak RSS "
                  f"{a['peak_rss_gb'] / b['peak_rss_gb']:.3f}", flush=True)
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    out = ROOT / "benchmarks" / "results" / "ssvm.json"
    out.parent.mkdir(exist_ok=True)
    write_json(out, results)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Mini-batch BCFW (Wang et al., ICML 2016): effective passes to a certified duality gap
per batch size tau, side by side with serial BCFW (tau = 1).

OCR-large (lam = 1/n, target gap 0.05) and CoNLL-2000 (lam = 1/n, target gap
0.01 x primal), tau in {1, 16, 256, n/16}.  Every run uses the same settings, only
``batch_size`` changes: ``--sampling gap`` (gapBCFW's gap sampling; a round takes
tau distinct blocks), ``--step-type fw`` (Frank-Wolfe block steps with exact line
search), a certificate every ``--gap-every 10`` passes (counted as a pass), last
iterate certified, no averaging, no oracle cache (it does not combine with
rounds), seed 0.  Pairwise block steps and gap sampling both run with rounds;
on OCR at tau = 1 gap sampling with FW steps was the fastest per pass (certified
gap after 99 effective passes: 0.271, against 0.325 uniform + FW and 0.343 gap
sampling + pairwise), so it is the setting for every tau; ``--sampling uniform``
gives the control with uniform sampling.  tau = 1 runs as serial BCFW (the
compiled pass), tau > 1 as mini-batch rounds (the oracles of a round at one
point, then the tau block steps one by one, each with its line search; compiled
when the domain offers round kernels, as the chain dual does, and identical to
the Python rounds to 1e-12).  ``--round-step joint`` moves a round's blocks with one
line search along their summed direction (the core's ``round_step``; Python rounds).
Effective passes are oracle calls / n, certificate passes included.

One process runs one (data, tau) and appends one JSON line to
``benchmarks/results/minibatch_passes.jsonl`` when it ends (target reached, pass
budget or ``--time-limit`` spent); while it runs, its certificate trace is
rewritten to ``minibatch_passes.<data>.<tau>.<settings>.partial.json`` after each
certificate, so an interrupted run still leaves its trace.  ``--report`` reads
the lines (the last one per data, tau and settings) and prints the table and
writes the plot.

Run (compute-only: the passes are the measurement, not the seconds):
    env FRANKWOLFE_DATA=path/to/data OPENBLAS_NUM_THREADS=1 nice -n 19 \
        .venv/bin/python benchmarks/ssvm_minibatch_passes.py --data ocr --tau 16 \
        --max-passes 1500      # --tau 1, 16, 256, n/16; --data conll --max-passes 80
    .venv/bin/python benchmarks/ssvm_minibatch_passes.py --report \
        --plot docs/img/minibatch_passes.png
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from results_file import write_figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results"
LINES = RESULTS / "minibatch_passes.jsonl"
TARGETS = {"ocr": (0.05, False), "conll": (0.01, True)}  # (target, relative to the primal)
# intermediate gap levels (gap, or gap / primal for CoNLL): the slowdown in passes per tau
# where the final target is out of reach within the budget
LEVELS = {"ocr": (0.3, 0.2, 0.1, 0.05), "conll": (0.6, 0.5, 0.4, 0.33)}
LABELS = {"ocr": "OCR-large (gap 0.05)", "conll": "CoNLL-2000 (gap 0.01 x primal)"}


def run(data: str, tau_arg: str, sampling: str, step_type: str, max_passes: int,
        gap_every: int, time_limit: float | None, seed: int,
        round_step: str = "sequential") -> dict:
    from ssvm import load  # the data sets and their models, as benchmarks/ssvm.py

    import frankwolfe as fw
    from frankwolfe.applications.structured_svm.dual import SSVMDual

    t_load = time.perf_counter()
    model, X, Y = load(data)
    n = len(X)
    tau = max(1, n // 16) if tau_arg == "n/16" else int(tau_arg)
    target, rel = TARGETS[data]
    dom = SSVMDual(model, X, Y, 1.0 / n)
    f = dom.dual_objective()
    row = {"data": data, "n": n, "lam": 1.0 / n, "tau": tau, "tau_arg": tau_arg,
           "target": target, "relative": rel, "sampling": sampling, "step_type": step_type,
           "round_step": round_step, "gap_every": gap_every, "seed": seed,
           "max_passes": max_passes,
           "time_limit": time_limit, "load_seconds": time.perf_counter() - t_load,
           "reached": False, "trace": []}
    joint = ".joint" if round_step == "joint" else ""
    partial = RESULTS / (f"minibatch_passes.{data}.{tau}.{sampling}.{step_type}{joint}"
                         ".partial.json")

    def certificate(s) -> bool | None:
        gap = s.gap
        if not np.isfinite(gap):
            return None
        primal = gap - s.fun  # f is the negated dual: gap = primal - dual
        eff = s.info["oracle_calls"] / n
        row["trace"].append([eff, float(gap), float(primal), float(s.time)])
        partial.write_text(json.dumps(row))
        if gap <= (target * primal if rel else target):
            row.update(reached=True, passes_to_target=eff, seconds_to_target=float(s.time),
                       gap_at_target=float(gap))
            return False
        return None

    kw = {} if tau == 1 else {"batch_size": tau, "round_step": round_step}
    t0 = time.perf_counter()
    res = fw.block_coordinate_frank_wolfe(
        f, dom, block_order=sampling, block_step=step_type, max_iter=max_passes, tol=0.0,
        gap_every=gap_every, random_state=seed, callback=certificate,
        time_limit=time_limit, **kw)
    row.update(engine=res.extra["engine"], status=str(res.status), seconds=time.perf_counter() - t0,
               final_gap=float(res.gap), final_primal=float(res.gap - res.fun),
               final_effective_passes=float(res.extra["effective_passes"]),
               rounds=res.extra.get("rounds"))
    with LINES.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    partial.unlink(missing_ok=True)
    return row


def _rows(sampling: str, step_type: str, round_step: str = "sequential") -> dict:
    """The last finished run per (data, tau) with these settings, else its partial trace
    (tau = 1 is serial BCFW whatever the round step)."""
    rows: dict = {}

    def key(r: dict) -> tuple:
        rs = r.get("round_step", "sequential") if r["tau"] > 1 else round_step
        return r["data"], r["tau"], r["sampling"], r["step_type"], rs

    for p in sorted(RESULTS.glob("minibatch_passes.*.partial.json")):
        r = json.loads(p.read_text())
        r["interrupted"] = True
        rows[key(r)] = r
    if LINES.exists():
        for line in LINES.read_text().splitlines():
            r = json.loads(line)
            rows[key(r)] = r
    order = list(TARGETS)
    return {k[:2]: rows[k] for k in sorted(rows, key=lambda k: (order.index(k[0]), k[1]))
            if k[2:] == (sampling, step_type, round_step)}


def report(sampling: str, step_type: str, control: str | None, plot: Path | None,
           round_step: str = "sequential") -> None:
    """Print the tables of the runs with these settings (and of the ``control`` sampling,
    if it has runs); write the plot."""
    rows = _rows(sampling, step_type, round_step)
    print(f"settings: sampling={sampling!r}, step_type={step_type!r}, "
          f"round_step={round_step!r}, last iterate certified, seed 0\n")
    _target_table(rows)
    print("\npasses to intermediate levels (slowdown vs tau = 1 at the same level):\n")
    _levels_table(rows)
    ctrl = _rows(control, step_type, round_step) if control and control != sampling else {}
    if ctrl:
        print(f"control: sampling={control!r}, the rest the same\n")
        _target_table(ctrl)
        print()
        _levels_table(ctrl)
    if plot is not None:
        _plot(rows, ctrl, control, plot)


def _target_table(rows: dict) -> None:
    print("| data | tau | passes to target | slowdown vs tau=1 | wall s | gap reached "
          "(at passes) |")
    print("|---|---|---|---|---|---|")
    for (data, _tau), r in rows.items():
        ref = rows.get((data, 1), {}).get("passes_to_target")
        last = r["trace"][-1] if r["trace"] else [float("nan")] * 4
        gap = last[1] / last[2] if r["relative"] else last[1]
        gap_s = (f"{last[1]:.3g} = {gap:.3g} x primal" if r["relative"] else f"{gap:.3g}") \
            + f" (at {last[0]:.0f})"
        if r.get("reached"):
            p = r["passes_to_target"]
            passes = f"{p:.0f}"
            slow = f"{p / ref:.2f}x" if ref else "-"
            secs = f"{r['seconds_to_target']:.0f}"
        else:
            passes = f"not reached in {last[0]:.0f}"
            slow = f"> {last[0] / ref:.2f}x" if ref else "-"
            secs = f"{last[3]:.0f}"
            if r.get("interrupted"):
                passes += " (interrupted)"
        print(f"| {data} | {_tau_name(r)} | {passes} | {slow} | {secs} | {gap_s} |")


def _levels_table(rows: dict) -> None:
    for data, levels in LEVELS.items():
        if (data, 1) not in rows:
            continue
        what = "gap / primal" if TARGETS[data][1] else "gap"
        print(f"| {data}: tau \\ {what} <= | " + " | ".join(f"{v:g}" for v in levels) + " |")
        print("|---" * (len(levels) + 1) + "|")
        ref = {v: _passes_to(rows[(data, 1)], v) for v in levels}
        for (d, tau), r in rows.items():
            if d != data:
                continue
            cells = []
            for v in levels:
                p = _passes_to(r, v)
                cells.append("-" if p is None else f"{p:.0f}" + (
                    f" ({p / ref[v]:.2f}x)" if tau != 1 and ref[v] else ""))
            print(f"| {_tau_name(r)} | " + " | ".join(cells) + " |")
        print()


def _tau_name(r: dict) -> str:
    return f"{r['tau']} (n/16)" if r["tau_arg"] == "n/16" else str(r["tau"])


def _passes_to(r: dict | None, level: float) -> float | None:
    """Effective passes at the first certificate with gap (or gap / primal) <= level."""
    if not r:
        return None
    for eff, gap, primal, _ in r["trace"]:
        if (gap / primal if r["relative"] else gap) <= level:
            return eff
    return None


def _plot(rows: dict, ctrl: dict, control: str | None, path: Path) -> None:
    """Certified gap against effective passes per data set (one curve per tau; the
    control sampling dotted), and the slowdown in passes to each reached level
    against tau."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    taus = sorted({tau for _, tau in [*rows, *ctrl]})
    color = {tau: f"C{k}" for k, tau in enumerate(taus)}
    fig, axes = plt.subplots(1, len(TARGETS) + 1, figsize=(16, 4.6))
    for ax, data in zip(axes, TARGETS):
        target, rel = TARGETS[data]
        for runs, ls, note in ((rows, "-", ""), (ctrl, ":", f", {control}")):
            for (d, tau), r in runs.items():
                if d != data or not r["trace"]:
                    continue
                t = np.asarray(r["trace"])
                ax.semilogy(t[:, 0], t[:, 1], ls=ls, marker="." if ls == "-" else None, ms=3,
                            color=color[tau], label=f"tau = {_tau_name(r)}{note}")
        if rel and (data, 1) in rows:  # the target moves with the primal: tau = 1's
            t = np.asarray(rows[(data, 1)]["trace"])
            ax.semilogy(t[:, 0], target * t[:, 2], "k--", lw=0.8,
                        label=f"target {target:g} x primal (tau = 1)")
        elif not rel:
            ax.axhline(target, color="k", ls="--", lw=0.8, label=f"target {target:g}")
        ax.set_title(LABELS[data] + ", lam = 1/n", fontsize=10)
        ax.set_xlabel("effective passes (certificates included)")
        ax.set_ylabel("certified duality gap")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[-1]
    for data, levels in LEVELS.items():
        what = "gap/primal" if TARGETS[data][1] else "gap"
        for v in levels:
            ref = _passes_to(rows.get((data, 1)), v)
            pts = [(tau, _passes_to(r, v) / ref) for (d, tau), r in rows.items()
                   if d == data and ref and _passes_to(r, v) is not None]
            if len(pts) > 1:
                ax.semilogx(*zip(*pts), marker="o", ls="-" if data == "ocr" else ":",
                            label=f"{data}, {what} <= {v:g}")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("tau (batch size)")
    ax.set_ylabel("passes to level / passes at tau = 1")
    ax.set_title("slowdown in passes (levels that tau = 1 reached)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path, dpi=100)
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=sorted(TARGETS))
    ap.add_argument("--tau", default="1", help="batch size: an integer or 'n/16'")
    ap.add_argument("--sampling", default="gap")
    ap.add_argument("--step-type", default="fw")
    ap.add_argument("--max-passes", type=int, default=400)
    ap.add_argument("--gap-every", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--round-step", default="sequential", choices=("sequential", "joint"),
                    help="how the blocks of a round move (the core's round_step)")
    ap.add_argument("--report", action="store_true", help="print the table of finished runs")
    ap.add_argument("--control", default="uniform",
                    help="with --report: the sampling of the control runs shown beside")
    ap.add_argument("--plot", type=Path, default=None, help="with --report: the figure's path")
    args = ap.parse_args()
    if args.report:
        report(args.sampling, args.step_type, args.control, args.plot, args.round_step)
        return
    if args.data is None:
        ap.error("--data is required unless --report")
    RESULTS.mkdir(parents=True, exist_ok=True)
    r = run(args.data, args.tau, args.sampling, args.step_type, args.max_passes,
            args.gap_every, args.time_limit, args.seed, args.round_step)
    last = r["trace"][-1] if r["trace"] else None
    print(f"{r['data']} tau={r['tau']} {r['engine']} engine: reached={r['reached']} "
          f"passes={r.get('passes_to_target', r['final_effective_passes']):.1f} "
          f"gap={r['final_gap']:.4g} primal={r['final_primal']:.4g} "
          f"seconds={r['seconds']:.0f} last certificate={last}", flush=True)


if __name__ == "__main__":
    main()

"""Reproduce Figure 1 (a)-(e) of Lacoste-Julien, Jaggi, Schmidt, Pletscher (ICML 2013).

Panels: primal suboptimality (against the best dual value seen in the panel)
versus effective passes for BCFW, BCFW-wavg, SSG, SSG-wavg, batch FW and the
cutting-plane method (fully corrective FW), on OCR-large at lambda = 0.01,
0.001, 1/n and CoNLL-2000 at lambda = 1/n, plus the test error at lambda =
1/n.  Stochastic methods run ``--seeds`` times: the line is the median, the
shading the best/worst run.  Every method runs through ``StructuredSVM`` on
the core solvers; the history is evaluated after every pass (an extra
loss-augmented pass that is not counted).

Writes ``<out>/figure1.csv`` (one row per method, seed and evaluated pass),
``<out>/figure1_<panel>.png``, ``<out>/figure1_summary.json`` and prints the
median primal suboptimality and test error at ``--report-passes``.  SSG costs
O(d) per step (dense shrinkage of ``w``), about a minute per pass on CoNLL
(d = 1.6M), so ``--ssg-seeds`` / ``--ssg-passes`` can give it a smaller
budget; ``--plot-only`` re-plots from one or more CSV files (e.g. the OCR and
CoNLL panels run as separate jobs).

Run::

    .venv/bin/python examples/ssvm_paper_figure1.py --quick          # OCR, 2 seeds, 10 passes
    .venv/bin/python examples/ssvm_paper_figure1.py                  # all panels, 10 seeds
    .venv/bin/python examples/ssvm_paper_figure1.py --panels ocr-1/n conll-1/n --passes 30
    .venv/bin/python examples/ssvm_paper_figure1.py --panels conll-1/n --seeds 3 --passes 20 \
        --eval-every 2 --ssg-seeds 1 --ssg-passes 6 --out benchmarks/results/figure1_conll
    .venv/bin/python examples/ssvm_paper_figure1.py --plot-only benchmarks/results/*/figure1.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frankwolfe.applications.structured_svm import (  # noqa: E402
    ChainModel, StructuredSVM, load_conll2000, load_ocr)

PANELS = ("ocr-0.01", "ocr-0.001", "ocr-1/n", "conll-1/n")
METHODS = {  # name: (solver, averaging, stochastic)
    "BCFW": ("bcfw", False, True),
    "BCFW-wavg": ("bcfw", True, True),
    "SSG": ("ssg", False, True),
    "SSG-wavg": ("ssg", True, True),
    "online-EG": ("online_eg", None, True),
    "FW": ("fw", False, False),
    "cutting plane": ("cutting_plane", False, False),
}
COLS = ("panel", "method", "seed", "passes", "effective_passes", "seconds", "primal", "dual",
        "gap", "train_error", "test_error")


def load(panel: str):
    data, lam = panel.split("-")
    if data == "ocr":
        Xtr, Ytr, Xte, Yte = load_ocr("ocr2")
        model = ChainModel(26, 129)
    else:
        Xtr, Ytr, Xte, Yte, info = load_conll2000(return_info=True)
        model = ChainModel(info["n_states"], info["feature_sizes"])
    lam = 1.0 / len(Xtr) if lam == "1/n" else float(lam)
    return model, Xtr, Ytr, Xte, Yte, lam


def run_panel(panel: str, methods: list[str], seeds: int, passes: int, n_jobs: int,
              writer, eval_every: int = 1, ssg_seeds: int | None = None,
              ssg_passes: int | None = None, first_seed: int = 0) -> list[dict]:
    model, Xtr, Ytr, Xte, Yte, lam = load(panel)
    rows = []
    for name in methods:
        solver, averaging, stochastic = METHODS[name]
        n_seeds, n_passes = seeds, passes
        if solver == "ssg":
            n_seeds, n_passes = ssg_seeds or seeds, ssg_passes or passes
        for seed in range(first_seed, first_seed + (n_seeds if stochastic else 1)):
            t0 = time.perf_counter()
            # tol=0 and no certificate passes: every method spends its passes on training
            svm = StructuredSVM(model, lam=lam, solver=solver, averaging=averaging,
                                max_passes=n_passes, tol=0.0, gap_every=10**9,
                                eval_every=eval_every, random_state=seed, n_jobs=n_jobs)
            svm.fit(Xtr, Ytr, Xte, Yte)
            h = svm.history_
            for r in h:
                row = {"panel": panel, "method": name, "seed": seed, **r}
                rows.append(row)
                writer.writerow([row[c] for c in COLS])
            print(f"  {panel:10s} {name:14s} seed {seed}: primal {h['primal'][-1]:.5f} "
                  f"test error {h['test_error'][-1]:.4f} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    return rows


def plot_panel(panel: str, rows: list[dict], out: Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # SSG has no dual: a panel of SSG runs alone has no suboptimality curve
    best_dual = max((r["dual"] for r in rows if np.isfinite(r["dual"])), default=np.nan)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    summary = {}
    zoom: list[np.ndarray] = []  # test-error medians of the stochastic methods set the y-range
    for name in METHODS:
        mine = [r for r in rows if r["method"] == name]
        if not mine:
            continue
        seeds = sorted({r["seed"] for r in mine})
        passes = sorted({r["passes"] for r in mine})
        sub = np.full((len(seeds), len(passes)), np.nan)
        err = np.full_like(sub, np.nan)
        for r in mine:
            i, j = seeds.index(r["seed"]), passes.index(r["passes"])
            sub[i, j] = r["primal"] - best_dual
            err[i, j] = r["test_error"]
        eff = np.array([np.median([r["effective_passes"] for r in mine if r["passes"] == p])
                        for p in passes])
        # runs of one method may differ in length (a cheaper budget for some seeds)
        count = np.sum(np.isfinite(sub), axis=0)
        for ax, val in ((axes[0], sub), (axes[1], err)):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (no dual)
                med = np.nanmedian(val, axis=0)
            if not np.isfinite(med).any():
                continue
            j = int(np.flatnonzero(np.isfinite(med))[-1])
            label = (f"{name} ({len(seeds)} run{'s' * (len(seeds) > 1)})" if ax is axes[0]
                     else f"{name}: {med[j]:.3f} at pass {passes[j]}")
            (line,) = ax.plot(eff, med, label=label)
            if ax is axes[1] and METHODS[name][2]:
                zoom.append(med)
            if len(seeds) > 1:
                ax.fill_between(eff, np.nanmin(val, axis=0), np.nanmax(val, axis=0), alpha=0.2,
                                color=line.get_color())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            stats = (np.nanmedian(sub, axis=0), np.nanmax(sub, axis=0), np.nanmedian(err, axis=0))
        summary[name] = {"passes": passes, "runs": count.tolist(),
                         "subopt_median": stats[0].tolist(), "subopt_max": stats[1].tolist(),
                         "test_error_median": stats[2].tolist()}
    axes[0].set_yscale("log")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("effective passes")
    axes[0].set_ylabel("primal suboptimality (vs best dual seen)")
    axes[1].set_xlabel("effective passes")
    axes[1].set_ylabel("test error")
    axes[0].set_title(panel)
    axes[1].set_title(f"{panel}: test error")
    axes[0].legend(fontsize=8)
    if zoom:
        # as in the paper, zoom on the stochastic methods (batch FW / cutting plane start
        # near 0.7 and may leave the axis: the legend gives every method's last value)
        lo = min(np.nanmin(z) for z in zoom)
        hi = max(np.nanmax(z) for z in zoom)
        axes[1].set_ylim(lo - 0.05 * (hi - lo), hi + 0.1 * (hi - lo))
    axes[1].legend(fontsize=8, title="median test error at the last pass", title_fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"figure1_{panel.replace('/', '_')}.png", dpi=110)
    plt.close(fig)
    return summary


def read_csv(paths: list[Path]) -> dict[str, list[dict]]:
    """Rows of earlier runs by panel (numbers parsed); a run (panel, method, seed) found
    in a later file replaces the same run of an earlier file."""
    runs: dict[tuple, list[dict]] = {}
    for path in paths:
        fresh: dict[tuple, list[dict]] = {}
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                row = {k: (v if k in ("panel", "method") else float(v)) for k, v in r.items()}
                row["seed"], row["passes"] = int(row["seed"]), int(row["passes"])
                fresh.setdefault((row["panel"], row["method"], row["seed"]), []).append(row)
        runs.update(fresh)
    by_panel: dict[str, list[dict]] = {}
    for (panel, _, _), rows in runs.items():
        by_panel.setdefault(panel, []).extend(rows)
    return by_panel


def report(summaries: dict, at: list[int]) -> None:
    """Median primal suboptimality (max over seeds) and median test error at passes ``at``."""
    for panel, summary in summaries.items():
        print(f"\n{panel}: primal suboptimality median [worst run] / test error median (runs)")
        print(f"  {'method':14s}" + "".join(f"  {'pass ' + str(p):>34s}" for p in at))
        for name, s in summary.items():
            cells = []
            for p in at:
                if p in s["passes"]:
                    j = s["passes"].index(p)
                    cells.append(f"{s['subopt_median'][j]:.4g} [{s['subopt_max'][j]:.4g}] / "
                                 f"{s['test_error_median'][j]:.4f} ({s['runs'][j]})")
                else:
                    cells.append("-")
            print(f"  {name:14s}" + "".join(f"  {c:>34s}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="OCR panels only, 2 seeds, 10 passes (minutes instead of hours)")
    ap.add_argument("--panels", nargs="+", choices=PANELS, default=None)
    ap.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--passes", type=int, default=None)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--eval-every", type=int, default=1,
                    help="evaluate (primal, dual, errors) every this many passes")
    ap.add_argument("--ssg-seeds", type=int, default=None, help="seeds for SSG (default --seeds)")
    ap.add_argument("--ssg-passes", type=int, default=None,
                    help="passes for SSG (default --passes)")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds are first_seed, first_seed + 1, ... (to extend an earlier run)")
    ap.add_argument("--report-passes", type=int, nargs="+", default=[1, 10, 30])
    ap.add_argument("--plot-only", type=Path, nargs="+", default=None, metavar="CSV",
                    help="re-plot from CSV files written earlier instead of running")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "figure1")
    args = ap.parse_args()
    import json

    args.out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        summaries = {panel: plot_panel(panel, rows, args.out)
                     for panel, rows in read_csv(args.plot_only).items()}
        (args.out / "figure1_summary.json").write_text(json.dumps(summaries, indent=1))
        report(summaries, args.report_passes)
        return
    panels = args.panels or (PANELS[:3] if args.quick else PANELS)
    seeds = args.seeds or (2 if args.quick else 10)
    passes = args.passes or (10 if args.quick else 100)
    summaries = {}
    # line buffered: the rows of finished runs survive an interrupted job
    with open(args.out / "figure1.csv", "w", newline="", buffering=1) as fh:
        writer = csv.writer(fh)
        writer.writerow(COLS)
        for panel in panels:
            print(f"panel {panel}: {seeds} seeds, {passes} passes", flush=True)
            rows = run_panel(panel, args.methods, seeds, passes, args.n_jobs, writer,
                             args.eval_every, args.ssg_seeds, args.ssg_passes, args.first_seed)
            fh.flush()
            summaries[panel] = plot_panel(panel, rows, args.out)
    (args.out / "figure1_summary.json").write_text(json.dumps(summaries, indent=1))
    report(summaries, args.report_passes)
    print(f"wrote {args.out}/figure1.csv, figure1_*.png and figure1_summary.json")


if __name__ == "__main__":
    main()

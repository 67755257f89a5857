"""Reproduce Figure 1 (a)-(e) of Lacoste-Julien, Jaggi, Schmidt, Pletscher (ICML 2013).

Panels: primal suboptimality (against the best dual value seen in the panel)
versus effective passes for BCFW, BCFW-wavg, SSG, SSG-wavg, batch FW and the
cutting-plane method (fully corrective FW), on OCR-large at lambda = 0.01,
0.001, 1/n and CoNLL-2000 at lambda = 1/n, plus the test error at lambda =
1/n.  Stochastic methods run ``--seeds`` times: the line is the median, the
shading the best/worst run.  Every method runs through ``StructuredSVM`` on
the core solvers; the history is evaluated after every pass (an extra
loss-augmented pass that is not counted).

Writes ``<out>/figure1.csv`` (one row per method, seed and pass) and
``<out>/figure1_<panel>.png``.

Run::

    .venv/bin/python examples/ssvm_paper_figure1.py --quick          # OCR, 2 seeds, 10 passes
    .venv/bin/python examples/ssvm_paper_figure1.py                  # all panels, 10 seeds
    .venv/bin/python examples/ssvm_paper_figure1.py --panels ocr-1/n conll-1/n --passes 30
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from applications.structured_svm import (  # noqa: E402
    ChainModel, StructuredSVM, load_conll2000, load_ocr)

PANELS = ("ocr-0.01", "ocr-0.001", "ocr-1/n", "conll-1/n")
METHODS = {  # name: (solver, averaging, stochastic)
    "BCFW": ("bcfw", False, True),
    "BCFW-wavg": ("bcfw", True, True),
    "SSG": ("ssg", False, True),
    "SSG-wavg": ("ssg", True, True),
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
              writer) -> list[dict]:
    model, Xtr, Ytr, Xte, Yte, lam = load(panel)
    rows = []
    for name in methods:
        solver, averaging, stochastic = METHODS[name]
        for seed in range(seeds if stochastic else 1):
            t0 = time.perf_counter()
            svm = StructuredSVM(model, lam=lam, solver=solver, averaging=averaging,
                                max_passes=passes, tol=0.0, gap_every=10**9, eval_every=1,
                                random_state=seed, n_jobs=n_jobs)
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

    best_dual = max(r["dual"] for r in rows if np.isfinite(r["dual"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    summary = {}
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
        for ax, val in ((axes[0], sub), (axes[1], err)):
            med = np.median(val, axis=0)
            (line,) = ax.plot(eff, med, label=name)
            if len(seeds) > 1:
                ax.fill_between(eff, val.min(axis=0), val.max(axis=0), alpha=0.2,
                                color=line.get_color())
        summary[name] = {"passes": passes, "subopt_median": np.median(sub, axis=0).tolist(),
                         "subopt_max": sub.max(axis=0).tolist(),
                         "test_error_median": np.median(err, axis=0).tolist()}
    axes[0].set_yscale("log")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("effective passes")
    axes[0].set_ylabel("primal suboptimality (vs best dual seen)")
    axes[1].set_xlabel("effective passes")
    axes[1].set_ylabel("test error")
    axes[0].set_title(panel)
    axes[1].set_title(f"{panel}: test error")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"figure1_{panel.replace('/', '_')}.png", dpi=110)
    plt.close(fig)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="OCR panels only, 2 seeds, 10 passes (minutes instead of hours)")
    ap.add_argument("--panels", nargs="+", choices=PANELS, default=None)
    ap.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--passes", type=int, default=None)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--out", type=Path, default=ROOT / "examples" / "output")
    args = ap.parse_args()
    panels = args.panels or (PANELS[:3] if args.quick else PANELS)
    seeds = args.seeds or (2 if args.quick else 10)
    passes = args.passes or (10 if args.quick else 100)
    args.out.mkdir(parents=True, exist_ok=True)
    import json

    summaries = {}
    with open(args.out / "figure1.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLS)
        for panel in panels:
            print(f"panel {panel}: {seeds} seeds, {passes} passes", flush=True)
            rows = run_panel(panel, args.methods, seeds, passes, args.n_jobs, writer)
            fh.flush()
            summaries[panel] = plot_panel(panel, rows, args.out)
    (args.out / "figure1_summary.json").write_text(json.dumps(summaries, indent=1))
    print(f"wrote {args.out}/figure1.csv, figure1_*.png and figure1_summary.json")


if __name__ == "__main__":
    main()

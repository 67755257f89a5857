"""Quadratic assignment on QAPLIB instances: relaxed FAQ, rounding, 2-opt and restarts.

Runs four 12-facility instances of QAPLIB (Burkard, Karisch and Rendl,
*QAPLIB - A Quadratic Assignment Problem Library*, J. Global Optim. 1997):
one Frank-Wolfe run from the barycenter (scipy's FAQ start), then 14 short
random restarts, and compares the objectives with the best-known values read
from the `.sln` files. The gaps are plotted to `examples/output/qap_qaplib.png`
(or the folder given by `--out`).

The instances are not shipped: download them once with
`fetch_qaplib("chr12a")`, `fetch_qaplib("had12")`, `fetch_qaplib("nug12")`
and `fetch_qaplib("tai12a")` of `frankwolfe.applications.fetch` (into
`$FRANKWOLFE_DATA`, else `~/frankwolfe_data`; see the Data sets page), or
pass a `DATA_DIR` holding `qaplib/<name>.dat` and `qaplib/<name>.sln`.
Without them the script exits with status 77 and says which files it looked
for.

Run: `python examples/qap_qaplib.py [DATA_DIR] [--out DIR]`
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from frankwolfe.applications.data import get_data_home
from frankwolfe.applications.matching import read_qaplib, read_qaplib_solution, solve_qap

OUT = Path(__file__).resolve().parent / "output"
INSTANCES = ("chr12a", "had12", "nug12", "tai12a")
SKIPPED = 77  # exit status when the data are missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=None, help="folder holding qaplib/")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    args = parser.parse_args(argv)
    folder = get_data_home(args.data) / "qaplib"
    missing = [f"{n}.dat" for n in INSTANCES if not (folder / f"{n}.dat").is_file()]
    if missing:
        print(f"QAPLIB instances not found: expected {', '.join(missing)} (and the .sln files) "
              f"in {folder}. Download them with frankwolfe.applications.fetch.fetch_qaplib(name), "
              "or pass DATA_DIR (or set FRANKWOLFE_DATA) to the folder holding qaplib/.")
        return SKIPPED

    gaps = {"one run from the barycenter": [], "with 14 restarts": []}
    for name in INSTANCES:
        A, B = read_qaplib(folder / f"{name}.dat")
        best, best_perm = read_qaplib_solution(folder / f"{name}.sln", A, B)
        one = solve_qap(A, B)  # one Frank-Wolfe run from the barycenter, as scipy's FAQ
        # plus 14 short random restarts
        many = solve_qap(A, B, restarts=14, max_iter=5, random_state=0)
        print(f"{name}: best known {best}; from the barycenter {one.fun:.0f} "
              f"(relaxation {one.relaxed_fun:.1f}, {one.nit} FW iterations, "
              f"{one.time * 1e3:.1f} ms); "
              f"with restarts {many.fun:.0f} ({many.n_runs} runs, {many.time * 1e3:.1f} ms), "
              f"permutation {(many.permutation + 1).tolist()}")
        gaps["one run from the barycenter"].append(100 * (one.fun - best) / best)
        gaps["with 14 restarts"].append(100 * (many.fun - best) / best)

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4))
    pos = np.arange(len(INSTANCES))
    for k, (label, values) in enumerate(gaps.items()):
        bars = ax.bar(pos + (k - 0.5) * 0.38, values, width=0.38, label=label)
        ax.bar_label(bars, fmt="%.1f%%", fontsize=8)
    ax.set_xticks(pos, INSTANCES)
    ax.set_ylabel("gap to the best-known objective (%)")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_title("QAPLIB: Frank-Wolfe on the Birkhoff polytope + rounding + 2-opt")
    ax.legend()
    args.out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out / "qap_qaplib.png", dpi=110)
    plt.close(fig)
    print(f"figure written to {args.out / 'qap_qaplib.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

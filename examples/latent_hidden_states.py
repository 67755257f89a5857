"""Hidden sub-states: a latent structural SVM where the observed model is at chance.

Grids of two labels in random blocks; each label's node features come from two
opposite clusters (label 0 near `(+-2, 0)`, label 1 near `(0, +-2)`: XOR-like), so
no linear score per label tells them apart and a `GraphCRF` trained on the labels
is at chance. `LatentGraphCRF` gives each label two hidden sub-states with a weight
vector each; `LatentSSVM` learns them by CCCP (impute the best sub-states
consistent with the labels, train a `StructuredSVM` on them, repeat), starting
from k-means within each label. The figure shows the node features coloured by
label and by the learned sub-state, and the latent objective per round.

Run: `python examples/latent_hidden_states.py [--out DIR] [--quick]`
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from frankwolfe.applications.structured_svm import (
    GraphCRF,
    LatentGraphCRF,
    LatentSSVM,
    StructuredSVM,
    make_latent_blocks,
)

OUT = Path(__file__).resolve().parent / "output"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    parser.add_argument("--quick", action="store_true", help="fewer, smaller grids")
    args = parser.parse_args(argv)
    n, size = (40, 4) if args.quick else (100, 6)
    X, Y = make_latent_blocks(n, size, size, noise=1.0, random_state=0)
    Xtr, Ytr, Xte, Yte = X[:n // 2], Y[:n // 2], X[n // 2:], Y[n // 2:]

    kw = {"lam": 1.0, "solver": "bcfw_pairwise", "max_passes": 50, "tol": 1e-3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # budgets: the gaps are printed
        observed = StructuredSVM(GraphCRF(2, 2, inference="trws"), random_state=0, **kw)
        observed.fit(Xtr, Ytr)
        inner = StructuredSVM(LatentGraphCRF(2, 2, n_hidden_states=2, inference="trws"), **kw)
        latent = LatentSSVM(inner, max_rounds=10, random_state=0).fit(Xtr, Ytr)
    print(f"GraphCRF on the labels:       test error {observed.error(Xte, Yte):.3f}")
    print(f"LatentGraphCRF by LatentSSVM: test error {latent.error(Xte, Yte):.3f} after "
          f"{latent.n_rounds_} CCCP rounds")
    for t, (J, gap) in enumerate(zip(latent.objective_history_[1:], latent.inner_gaps_), 1):
        print(f"  round {t}: objective {J:.5f} (inner certified gap {gap:.1e})")

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    feats = np.concatenate([x[0] for x in Xte])
    labels = np.concatenate(Yte)
    hidden = np.concatenate(latent.predict_latent(Xte))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    for ax, colour, title in ((axes[0], labels, "test nodes by label"),
                              (axes[1], hidden, "by learned hidden state")):
        ax.scatter(feats[:, 0], feats[:, 1], c=colour, s=4, cmap="tab10", vmin=0, vmax=9)
        ax.set_title(title)
        ax.set_aspect("equal")
    rounds = np.arange(len(latent.objective_history_))
    axes[2].plot(rounds, latent.objective_history_, "o-")
    axes[2].set_xticks(rounds)
    axes[2].set_xlabel("CCCP round (0: w = 0)")
    axes[2].set_ylabel("latent objective J(w)")
    axes[2].grid(True, alpha=0.3)
    args.out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out / "latent_hidden_states.png", dpi=110)
    plt.close(fig)
    print(f"figure written to {args.out / 'latent_hidden_states.png'}")


if __name__ == "__main__":
    main()

"""A regularization path of the l1-constrained lasso on scikit-learn's diabetes data.

Solves `min 1/2 ||A x - b||^2  s.t.  ||x||_1 <= radius` for 30 radii with
pairwise Frank-Wolfe, each problem warm started from the previous active
set, compares the iterations with cold starts, and checks one point of the
path against scikit-learn's penalized `Lasso` (through the conversion
`alpha = ||A^T (b - A x)||_inf / m`). The path is plotted to
`examples/output/lasso_path.png` (or the folder given by `--out`).

The diabetes data ship with scikit-learn (Efron, Hastie, Johnstone and
Tibshirani, *Least Angle Regression*, Annals of Statistics 2004).

Run: `python examples/lasso_path.py [--out DIR]`
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso

from frankwolfe.applications.lasso import lasso_path, penalty_from_radius

OUT = Path(__file__).resolve().parent / "output"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    out = parser.parse_args(argv).out

    X, y = load_diabetes(return_X_y=True)
    A, b = X - X.mean(0), y - y.mean()
    radii = np.linspace(10.0, 3000.0, 30)
    path = lasso_path(A, b, radii, "pairwise", tol=1e-8)
    cold = lasso_path(A, b, radii, "pairwise", tol=1e-8, warm_start=False)
    print(f"iterations along the path: warm {path.n_iter.sum()}, cold {cold.n_iter.sum()}")
    print(f"largest certified gap: {path.gaps.max():.2e}")

    i = 12
    alpha = penalty_from_radius(A, b, path.coefs[i])
    sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100000).fit(A, b)
    err = np.abs(sk.coef_ - path.coefs[i]).max() / np.abs(sk.coef_).max()
    print(f"radius {radii[i]:.1f} <-> alpha {alpha:.4g}: relative difference to sklearn {err:.1e}")
    print("active features per radius:", [int(np.count_nonzero(c)) for c in path.coefs])

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(radii, path.coefs)
    ax.axvline(radii[i], color="0.6", linestyle=":", label="checked against scikit-learn")
    ax.set_xlabel("radius ||x||_1")
    ax.set_ylabel("coefficient")
    ax.set_title("Constrained lasso path (diabetes, 10 features)")
    ax.legend(loc="upper left")
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / "lasso_path.png", dpi=110)
    plt.close(fig)
    print(f"figure written to {out / 'lasso_path.png'}")


if __name__ == "__main__":
    main()

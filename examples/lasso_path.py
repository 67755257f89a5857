"""A regularization path of the l1-constrained lasso on scikit-learn's diabetes data.

Solves ``min 1/2 ||A x - b||^2  s.t.  ||x||_1 <= radius`` for 30 radii with
pairwise Frank-Wolfe, each problem warm started from the previous active
set, and checks one point of the path against scikit-learn's penalized
``Lasso`` (through the conversion ``alpha = ||A^T (b - A x)||_inf / m``).

Run: ``.venv/bin/python examples/lasso_path.py [--plot]``
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from frankwolfe.applications.lasso import lasso_path, penalty_from_radius  # noqa: E402

X, y = load_diabetes(return_X_y=True)
A, b = X - X.mean(0), y - y.mean()
radii = np.linspace(10.0, 3000.0, 30)
path = lasso_path(A, b, radii, "pairwise", tol=1e-8)
cold = lasso_path(A, b, radii, "pairwise", tol=1e-8, warm=False)
print(f"iterations along the path: warm {path.n_iter.sum()}, cold {cold.n_iter.sum()}")
print(f"largest certified gap: {path.gaps.max():.2e}")

i = 12
alpha = penalty_from_radius(A, b, path.coefs[i])
sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100000).fit(A, b)
err = np.abs(sk.coef_ - path.coefs[i]).max() / np.abs(sk.coef_).max()
print(f"radius {radii[i]:.1f} <-> alpha {alpha:.4g}: relative difference to sklearn {err:.1e}")
print("active features per radius:", [int(np.count_nonzero(c)) for c in path.coefs])

if "--plot" in sys.argv:
    import matplotlib.pyplot as plt

    plt.plot(radii, path.coefs)
    plt.xlabel("radius ||x||_1")
    plt.ylabel("coefficient")
    plt.title("Constrained lasso path (diabetes)")
    plt.show()

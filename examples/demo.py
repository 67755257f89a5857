"""The main demo (``make demo``): three problems on embedded, seeded data.

1. a strongly convex quadratic over the probability simplex;
2. l1-constrained least squares (sparse recovery);
3. routing a flow through a layered network with convex congestion costs,
   over the flow polytope (its LMO is a shortest path).

Each run prints its certified duality gap; a convergence plot is written to
``examples/output/demo_convergence.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import frankwolfe as fw

OUT = Path(__file__).resolve().parent / "output"


def simplex_qp(rng: np.random.Generator) -> fw.Result:
    n = 300
    M = rng.normal(size=(n, n)) / np.sqrt(n)
    Q = M.T @ M + 0.1 * np.eye(n)
    c = rng.normal(size=n)
    return fw.frank_wolfe(fw.QuadraticObjective(Q, c), fw.ProbabilitySimplex(), tol=1e-6,
                          max_iter=20000)


def sparse_recovery(rng: np.random.Generator) -> tuple[fw.Result, np.ndarray]:
    m, n, k = 400, 1000, 15
    A = rng.normal(size=(m, n)) / np.sqrt(m)
    x_true = np.zeros(n)
    support = rng.choice(n, size=k, replace=False)
    x_true[support] = rng.normal(size=k)
    b = A @ x_true + 0.01 * rng.normal(size=m)
    res = fw.frank_wolfe(fw.LeastSquares(A, b), fw.L1Ball(np.abs(x_true).sum()), tol=1e-6,
                         max_iter=20000)
    return res, x_true


def network_routing(rng: np.random.Generator) -> tuple[fw.Result, fw.FlowPolytope]:
    layers, width, demand = 6, 5, 10.0
    edges = [("s", (0, j)) for j in range(width)]
    for layer in range(layers - 1):
        edges += [((layer, i), (layer + 1, j)) for i in range(width) for j in range(width)]
    edges += [((layers - 1, j), "t") for j in range(width)]
    domain = fw.FlowPolytope(edges, source="s", sink="t", value=demand)
    m = len(domain.edges)
    free_time = rng.uniform(1.0, 3.0, size=m)      # cost of an empty edge
    congestion = rng.uniform(0.05, 0.5, size=m)    # cost growth per unit of flow
    # sum_e free_time_e x_e + 1/2 congestion_e x_e^2: separable and convex
    objective = fw.QuadraticObjective(sp.diags(congestion).tocsr(), free_time)
    return fw.frank_wolfe(objective, domain, tol=1e-6, max_iter=20000), domain


def main() -> int:
    rng = np.random.default_rng(2013)
    runs: dict[str, fw.Result] = {}

    res = simplex_qp(rng)
    runs["simplex QP (n=300)"] = res
    print(f"[1] simplex QP        f = {res.fun:.8f}   certified gap = {res.gap:.2e}   "
          f"iterations = {res.nit}   support = {np.count_nonzero(res.x > 1e-9)}")

    res, x_true = sparse_recovery(rng)
    runs["l1 least squares (400x1000)"] = res
    err = np.linalg.norm(res.x - x_true) / np.linalg.norm(x_true)
    print(f"[2] l1 least squares  f = {res.fun:.8f}   certified gap = {res.gap:.2e}   "
          f"iterations = {res.nit}   relative error vs x_true = {err:.3f}")

    res, domain = network_routing(rng)
    runs["flow polytope (6x5 layers)"] = res
    used = int(np.count_nonzero(res.x > 1e-6))
    print(f"[3] network routing   f = {res.fun:.8f}   certified gap = {res.gap:.2e}   "
          f"iterations = {res.nit}   edges used = {used}/{len(domain.edges)}")

    for name, r in runs.items():
        if r.status != fw.Status.CONVERGED:
            print(f"    {name}: {r.message}")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from frankwolfe.plotting import plot_convergence
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'frankwolfe[plot]')")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (name, r) in zip(axes, runs.items()):
        plot_convergence({"Frank-Wolfe": r}, ax=ax, title=name)
    fig.tight_layout()
    path = OUT / "demo_convergence.png"
    fig.savefig(path, dpi=110)
    print(f"convergence plot written to {path}")
    return 0 if all(r.status == fw.Status.CONVERGED for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

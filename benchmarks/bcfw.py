"""Speed of block-coordinate Frank-Wolfe on a product of simplices.

Problem: n = 10 000 probability simplices of dimension m = 10 (dim = 100 000),
objective 1/2 x^T Q x + c^T x with Q = I + mu * (chain Laplacian), a sparse
coupled strongly convex quadratic (QuadraticObjective with a CSR Q).

Compared, per effective pass (n oracle calls, certificate passes included):

* ``compiled``  - block_coordinate_frank_wolfe, default engine (a numba pass);
* ``python``    - block_coordinate_frank_wolfe(compiled=False): generic Python
                  block steps (block oracle call, Atom, objective hooks);
* ``plain``     - a plain Python loop (lists and floats) doing the same block
                  updates: block gradient from the CSR rows, argmin, exact line
                  search, update of z_i and x.

The per-step overhead of the generic path is its time per step minus the
block oracle's own cost (ProbabilitySimplex.__call__ on a block gradient).

Run: .venv/bin/python benchmarks/bcfw.py [--n 10000] [--m 10] [--passes 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from frankwolfe import (
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.objectives.quadratic_kernels import csr_block_quad, csr_rows_dot


def problem(n: int, m: int, mu: float = 0.5, seed: int = 0):
    dim = n * m
    rng = np.random.default_rng(seed)
    main = np.full(dim, 2.0)
    main[[0, -1]] = 1.0
    lap = sp.diags([-np.ones(dim - 1), main, -np.ones(dim - 1)], [-1, 0, 1], format="csr")
    Q = sp.csr_array(sp.identity(dim, format="csr") + mu * lap)
    y = rng.dirichlet(np.full(m, 5.0), size=n).ravel()
    f = QuadraticObjective(Q, -(Q @ y))
    dom = ProductDomain([ProbabilitySimplex(dim=m) for _ in range(n)])
    return f, dom


def plain_python_pass(f: QuadraticObjective, n: int, m: int, order, x: list, Z: list) -> None:
    """The same block updates, written as a plain Python loop."""
    indptr, indices, data = (f.Q.indptr.tolist(), f.Q.indices.tolist(), f.Q.data.tolist())
    c = f.c.tolist()
    for i in order:
        lo = i * m
        g = [0.0] * m
        for a in range(m):
            r = lo + a
            s = c[r]
            for p in range(indptr[r], indptr[r + 1]):
                s += data[p] * x[indices[p]]
            g[a] = s
        jmin = min(range(m), key=g.__getitem__)
        gap = sum(g[a] * Z[lo + a] for a in range(m)) - g[jmin]
        if gap <= 0:
            continue
        d = [-Z[lo + a] for a in range(m)]
        d[jmin] += 1.0
        curv = 0.0
        for a in range(m):
            r = lo + a
            s = 0.0
            for p in range(indptr[r], indptr[r + 1]):
                col = indices[p]
                if lo <= col < lo + m:
                    s += data[p] * d[col - lo]
            curv += d[a] * s
        gamma = 1.0 if curv <= 0 else min(1.0, gap / curv)
        for a in range(m):
            Z[lo + a] += gamma * d[a]
            x[lo + a] += gamma * d[a]


class CSRBlockQuadratic(QuadraticObjective):
    """QuadraticObjective whose block gradient reads CSR rows with numba (O(nnz of the
    rows)); scipy's row slicing costs ~100 us a call, which would hide the loop's own
    overhead.  Run with ``compiled=False``: the generic Python path."""

    def partial_gradient(self, x, indices):
        Q = self.Q
        return csr_rows_dot(Q.indptr, Q.indices, Q.data, indices, x) + self.c[indices]

    def exact_step_block(self, x, indices, direction, partial_gradient):
        # -<g, d> / d^T Q[idx, idx] d with the numba CSR kernel and none of the generic
        # checks (Q is positive definite here), so the objective's hooks stay small
        # next to the loop's own overhead
        Q = self.Q
        curv = csr_block_quad(Q.indptr, Q.indices, Q.data, indices, direction)
        return -float(partial_gradient @ direction) / curv


def _pass_times(res) -> np.ndarray:
    """Seconds of each pass that ran block steps only (no certificate)."""
    t, gap = res.history["time"], res.history["gap"]
    dt = np.diff(t)
    return dt[~np.isfinite(gap[1:])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n, m, P, R = args.n, args.m, args.passes, args.repeats
    f, dom = problem(n, m)
    f_py = CSRBlockQuadratic(f.Q, f.c)
    print(f"BCFW benchmark: n={n} simplices of dim {m} (dim={n * m}), {P} passes, "
          "uniform sampling, exact line search")
    # warm up numba (compilation is cached on disk after the first run)
    block_coordinate_frank_wolfe(f, dom, max_iter=1, tol=0.0, random_state=0)
    f_small, dom_small = problem(3, m)
    block_coordinate_frank_wolfe(CSRBlockQuadratic(f_small.Q, f_small.c), dom_small,
                                 max_iter=1, tol=0.0, random_state=0, compiled=False)

    # every timing is the best of --repeats (other jobs share this machine)
    res, per_pass = {}, {}
    for name, obj in (("compiled", f), ("python", f_py)):
        best = np.inf
        for _ in range(R):
            run = block_coordinate_frank_wolfe(obj, dom, max_iter=P + 1, gap_every=P + 1,
                                               tol=0.0, random_state=0,
                                               compiled=(name == "compiled"))
            best = min(best, float(np.min(_pass_times(run))))
        res[name], per_pass[name] = run, best
        eff = run.time / run.extra["effective_passes"]
        print(f"  {name:9s}: {best:8.4f} s per pass of n block steps (best pass); {eff:.4f} s "
              f"per effective pass overall incl. start and certificate passes; final gap "
              f"{run.gap:.3e}")
    np.testing.assert_allclose(res["compiled"].x, res["python"].x, atol=1e-10)

    # own costs of the oracle and of the objective's block hooks, per block step, at the
    # same iterate and block gradients (best of R loops over all n blocks)
    x = res["python"].x
    idx = dom.block_indices
    gs = [f_py.partial_gradient(x, ix) for ix in idx]
    atoms = [b(g) for b, g in zip(dom.blocks, gs)]
    ds = [a.to_dense() - x[ix] for a, ix in zip(atoms, idx)]

    def best_loop(fn) -> float:
        ts = []
        for _ in range(R):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return min(ts) / n

    t_grad = best_loop(lambda: [f_py.partial_gradient(x, ix) for ix in idx])
    t_lmo = best_loop(lambda: [b(g) for b, g in zip(dom.blocks, gs)])
    t_ls = best_loop(lambda: [f_py.exact_step_block(x, ix, d, g)
                              for ix, d, g in zip(idx, ds, gs)])
    step_py = per_pass["python"] / n
    step_c = per_pass["compiled"] / n
    print(f"  python path: {1e6 * step_py:.1f} us per block step = oracle {1e6 * t_lmo:.1f} us "
          f"+ block gradient {1e6 * t_grad:.1f} us + line search {1e6 * t_ls:.1f} us "
          f"+ BCFW's own overhead {1e6 * (step_py - t_lmo - t_grad - t_ls):.1f} us; "
          f"per-step cost beyond the oracle (hooks included) {1e6 * (step_py - t_lmo):.1f} us")
    print(f"  compiled path: {1e6 * step_c:.2f} us per block step, everything included")

    # plain Python loop: one pass from the same start, same draws (best of R)
    rng = np.random.default_rng(0)
    order = rng.integers(n, size=n).tolist()
    x0 = np.zeros(n * m)
    x0[::m] = 1.0  # the default start: each block's oracle answer for the all-ones direction
    t_plain = np.inf
    for _ in range(R):
        xl, Z = x0.tolist(), x0.tolist()
        t0 = time.perf_counter()
        plain_python_pass(f, n, m, order, xl, Z)
        t_plain = min(t_plain, time.perf_counter() - t0)
    one = block_coordinate_frank_wolfe(f, dom, max_iter=1, gap_every=10, tol=0.0,
                                       random_state=0)
    diff = float(np.max(np.abs(np.asarray(xl) - one.extra["x_last"])))
    print(f"  plain    : {t_plain:8.4f} s per pass (same iterate as ours after one pass: "
          f"max |diff| = {diff:.1e})")
    print(f"  speed-up vs plain loop, per pass of block steps: compiled "
          f"{t_plain / (step_c * n):.1f}x, python path {t_plain / (step_py * n):.2f}x")


if __name__ == "__main__":
    main()

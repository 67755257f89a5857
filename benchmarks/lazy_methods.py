"""Benchmark: oracle calls and wall time to a certified gap, for the active-set,
lazy, blended and decomposition-invariant methods (issue #24).

Problems (one seeded Generator each):

(a) ``birkhoff``: ``0.5 ||A x - b||^2`` over the 50 x 50 Birkhoff polytope, ``A`` 400 x
    2500 Gaussian / sqrt(400), ``b`` from a random permutation matrix plus noise (the
    optimum lies on a face: a linear rate needs away or pairwise steps).
(b) ``lp``: ``0.5 ||x - y||^2`` over ``Polytope(A_ub, b_ub)`` with 200 random inequalities
    ``a_i x <= 1`` in 100 variables and the box [-1, 1]^100, ``y`` outside (HiGHS LPs).
(c) ``ksparse``: ``0.5 ||A x - b||^2`` over the k-sparse polytope (k = 10, radius 5),
    ``A`` 200 x 1000.
(d) ``completion``: ``0.5 sum_{observed} (X_ij - M_ij)^2`` over the nuclear-norm ball of
    radius ``||M||_*``, ``M`` 60 x 60 of rank 3, 30% observed.

Methods: vanilla FW, away-step, pairwise, BPCG (eager), lazy BPCG, BCG, DICG and lazy
blended DICG (Birkhoff only: the others have no in-face oracle), each to a certified gap
of ``--tol`` (1e-8) within ``--time-limit`` seconds.  Columns: status, iterations,
oracle calls (DICG: plus in-face calls), wall time, final certified gap.

Usage::

    .venv/bin/python benchmarks/lazy_methods.py            # all four problems
    .venv/bin/python benchmarks/lazy_methods.py --quick    # smaller sizes
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import frankwolfe as fw  # noqa: E402


def _birkhoff(n: int, rng: np.random.Generator) -> tuple[fw.Objective, fw.LMO]:
    m = 4 * n * n // 25
    A = rng.standard_normal((m, n * n)) / np.sqrt(m)
    P = np.eye(n)[rng.permutation(n)].reshape(-1)
    b = A @ P + 0.05 * rng.standard_normal(m)
    return fw.LeastSquares(A, b), fw.Birkhoff()


def _lp(n: int, rng: np.random.Generator) -> tuple[fw.Objective, fw.LMO]:
    A = rng.standard_normal((2 * n, n))
    dom = fw.Polytope(A_ub=A, b_ub=np.ones(2 * n), bounds=(-1.0, 1.0))
    y = 2.0 * rng.standard_normal(n)
    return fw.QuadraticObjective(np.eye(n), -y), dom


def _ksparse(n: int, rng: np.random.Generator) -> tuple[fw.Objective, fw.LMO]:
    A = rng.standard_normal((n // 5, n)) / np.sqrt(n // 5)
    x = np.zeros(n)
    x[rng.choice(n, 10, replace=False)] = rng.standard_normal(10)
    b = A @ x + 0.01 * rng.standard_normal(n // 5)
    return fw.LeastSquares(A, b), fw.KSparsePolytope(10, 5.0, dim=n)


def _completion(n: int, rng: np.random.Generator) -> tuple[fw.Objective, fw.LMO]:
    M = rng.standard_normal((n, 3)) @ rng.standard_normal((3, n))
    mask = (rng.random((n, n)) < 0.3).astype(float)
    target = mask * M

    def value(x: np.ndarray) -> float:
        r = mask * x.reshape(n, n) - target
        return 0.5 * float(np.sum(r * r))

    def grad(x: np.ndarray) -> np.ndarray:
        return (mask * x.reshape(n, n) - target).reshape(x.shape)

    def exact(x: np.ndarray, d: np.ndarray, g: np.ndarray) -> float:
        md = mask * d.reshape(n, n)
        den = float(np.sum(md * md))
        return -float(np.sum(g * d)) / den if den > 0 else np.inf

    radius = float(np.linalg.svd(M, compute_uv=False).sum())
    f = fw.FunctionObjective(value, grad, exact_step=exact, shape=(n, n))
    return f, fw.NuclearNormBall(radius, shape=(n, n))


PROBLEMS: dict[str, tuple[Callable[..., Any], int, int]] = {
    # name: (builder, size, quick size)
    "birkhoff": (_birkhoff, 50, 15),
    "lp": (_lp, 100, 30),
    "ksparse": (_ksparse, 1000, 200),
    "completion": (_completion, 60, 20),
}

METHODS: dict[str, dict[str, Any]] = {
    "fw": {"method": "fw"},
    "away": {"method": "away"},
    "pairwise": {"method": "pairwise"},
    "bpcg": {"method": "bpcg", "lazy": False},
    "lazy bpcg": {"method": "bpcg"},
    "bcg": {"method": "bcg"},
    "dicg": {"method": "dicg"},
    "lazy dicg": {"method": "dicg", "blended": True, "lazy": True},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--problems", nargs="+", default=list(PROBLEMS))
    args = ap.parse_args()
    print("| problem | method | status | iterations | oracle calls | time (s) | gap |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.problems:
        build, size, quick = PROBLEMS[name]
        f, dom = build(quick if args.quick else size, np.random.default_rng(0))
        for label, kw in METHODS.items():
            if kw["method"] == "dicg" and not fw.lmo.in_face.supports_in_face(dom):
                continue
            t = time.perf_counter()
            res = fw.minimize(f, dom, tol=args.tol, max_iter=10**7,
                              time_limit=args.time_limit, **kw)
            wall = time.perf_counter() - t
            calls = str(res.n_oracle_calls)
            if "n_in_face_calls" in res.extra:
                calls += f" (+{res.extra['n_in_face_calls']} in-face)"
            print(f"| {name} | {label} | {res.status} | {res.nit} | {calls} | {wall:.2f} "
                  f"| {res.gap:.1e} |", flush=True)


if __name__ == "__main__":
    main()

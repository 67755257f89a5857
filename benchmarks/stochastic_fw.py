"""Benchmark: stochastic Frank-Wolfe against copt's ``minimize_sfw`` at equal gradient
evaluations.

Problem: l1-constrained logistic regression, ``(1/n) sum_i log(1 + exp(-y_i <a_i, x>))``
over ``||x||_1 <= r``, ``A`` n x d standard Gaussian, labels from a sparse ``x_true``
with 10% flipped, ``r = ||x_true||_1``.  The optimum ``f*`` is pairwise FW with the
secant line search to a certified gap of 1e-10.

Rows, each at budgets of E epochs (E * n sample gradients; certificates are not
counted):

* ours ``sag`` / ``momentum``: :func:`frankwolfe.stochastic_frank_wolfe` with
  ``estimator="sag"`` (Negiar et al. 2020; derivatives start at zero, as copt's) or
  ``"momentum"`` (Mokhtari et al. 2020),
  batch ``--batch``, step ``2/(k+2)``; ``max_iter`` set from the budget; the
  returned gap is certified on the full gradient.
* copt SAG / SAGA / MHK: ``copt.minimize_sfw(variant=...)`` (copt 0.9.2 in its own
  venv, ``benchmarks/peers.py``) with the same batch; ``max_iter = E`` epochs.  copt's
  loss takes labels in {0, 1}: ``log(1 + exp(p)) - y01 p`` is the same function.

Columns: ``f - f*`` after the budget and the wall time of the run (one thread each).

Usage::

    .venv/bin/python benchmarks/stochastic_fw.py            # n = 20000, d = 200
    .venv/bin/python benchmarks/stochastic_fw.py --quick    # n = 2000, d = 50
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import ensure_peer, run_in_venv, thread_env  # noqa: E402

from frankwolfe import L1Ball, LinearModelLoss, pairwise_frank_wolfe  # noqa: E402
from frankwolfe import stochastic_frank_wolfe as sfw  # noqa: E402

_COPT = """
import time
import numpy as np
import copt
A, y01, epochs = payload["A"], payload["y01"], payload["epochs"]
f = copt.loss.LogLoss(A, y01)
lmo = copt.constraint.L1Ball(payload["radius"]).lmo
out = {}
for variant in ("SAG", "SAGA", "MHK"):
    xs = []
    for E in epochs:
        np.random.seed(0)
        t = time.perf_counter()
        res = copt.minimize_sfw(f.partial_deriv, A, y01, np.zeros(A.shape[1]), lmo,
                                batch_size=payload["batch"], max_iter=int(E), tol=0.0,
                                variant=variant)
        xs.append(res.x)
        out[f"{variant}_t{E}"] = time.perf_counter() - t
    out[variant] = np.array(xs)
result = out
"""


def _problem(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[: max(1, d // 20)] = rng.standard_normal(max(1, d // 20))
    y = np.where(A @ w > 0, 1.0, -1.0)
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return A, y, float(np.abs(w).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--epochs", type=int, nargs="+", default=[1, 2, 5, 10, 20])
    args = ap.parse_args()
    n, d = (2000, 50) if args.quick else (20000, 200)
    A, y, r = _problem(n, d)
    f = LinearModelLoss(A, y)
    ref = pairwise_frank_wolfe(f, L1Ball(r), step_size="secant", tol=1e-10, max_iter=100000)
    fstar = ref.fun - ref.gap  # a lower bound: f - f* below is within ref.gap of the truth
    print(f"n={n} d={d} batch={args.batch} radius={r:.3f}  f*={ref.fun:.12f} "
          f"(certified gap {ref.gap:.1e})")

    rows: dict[str, list[tuple[float, float, float]]] = {"ours sag": [], "ours momentum": []}
    for est, name in (("sag", "ours sag"), ("momentum", "ours momentum")):
        for E in args.epochs:
            it = E * n // args.batch
            t = time.perf_counter()
            res = sfw(f, L1Ball(r), estimator=est, batch_size=args.batch, gap_every=0,
                      max_iter=it, tol=0.0, random_state=0)
            wall = time.perf_counter() - t
            assert res.extra["n_sample_gradients"] <= E * n
            rows[name].append((res.fun - fstar, res.gap, wall))

    py = ensure_peer("copt")
    y01 = (y + 1.0) / 2.0
    out = run_in_venv(py, _COPT, {"A": A, "y01": y01, "radius": r, "batch": args.batch,
                                  "epochs": np.array(args.epochs)}, env=thread_env(1))
    for variant in ("SAG", "SAGA", "MHK"):
        rows[f"copt {variant}"] = [(f.value(x) - fstar, np.nan, out[f"{variant}_t{E}"])
                                   for x, E in zip(out[variant], args.epochs, strict=True)]

    head = "| method | " + " | ".join(f"{E} epochs: f - f*, s" for E in args.epochs) + " |"
    print(head)
    print("|" + " --- |" * (len(args.epochs) + 1))
    for name, vals in rows.items():
        cells = " | ".join(f"{df:.2e}, {w:.2f}" for df, _, w in vals)
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()

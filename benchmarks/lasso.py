"""Benchmark: the l1-constrained lasso, active-set Frank-Wolfe vs copt, scikit-learn, cvxpy.

Problem (the same generator as ``fw_lasso.py``)::

    min 0.5 * ||A x - b||^2   s.t.  ||x||_1 <= radius

``A`` m x n standard Gaussian, ``x_true`` k-sparse, ``b = A x_true + noise``,
``radius = ||x_true||_1``.  Every Frank-Wolfe method starts at the vertex
``-radius e_0``.  All rows run single-threaded (``OPENBLAS_NUM_THREADS=1``
etc., set before numpy is imported; copt's subprocess gets the same), and
each of our timings is the best of ``--repeat`` runs, including the
construction of ``LeastSquares(A, b)``.

Rows
----
* ours AFW, PFW, RAFW (subsample 10%), FCFW (exact corrective QP):
  ``frankwolfe.applications.lasso.solve_lasso``.  Reported: the wall time to the
  certified FW gap ``1e-6``; to the FW gap copt's pairwise FW has after 500
  iterations; and to a relative coefficient error ``max|x - x*| / max|x*|
  <= 1e-6`` (runs with decreasing ``tol``; the first run meeting the error).
* copt pairwise: ``copt.minimize_frank_wolfe(variant="pairwise")`` with
  ``L1Ball(radius).lmo_pairwise`` and ``SquareLoss(A, b).f_grad`` (copt 0.9.2,
  own venv).  copt's loss is ``||Ax - b||^2 / (2m)`` (same iterates); the FW
  gap of ``0.5 ||Ax - b||^2`` is recomputed in a callback from copt's own
  gradient at each iterate (O(n), outside of copt's work).  It runs until
  the gap is ``1e-6`` or ``--copt-limit`` seconds (600 by default).
* scikit-learn ``Lasso(alpha, fit_intercept=False)`` with ``alpha =
  ||A^T (b - A x*)||_inf / m`` (same solution): time to the coefficient
  error ``1e-6`` (runs with decreasing ``tol``).
* cvxpy (Clarabel, tight tolerances) on the constrained problem: time and
  coefficient error (subprocess with a time limit).

The reference optimum ``x*`` is FCFW's solution at ``tol=max(1e-11, 1e-15 ||b||^2)``, checked
against scikit-learn at ``tol=1e-14``.

Usage::

    .venv/bin/python benchmarks/lasso.py            # 2000 x 5000, k = 50
    .venv/bin/python benchmarks/lasso.py --quick    # 300 x 800, k = 10
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from fw_lasso import make_problem, measure  # noqa: E402
from peers import PeerError, ensure_peer, run_in_venv, thread_env  # noqa: E402
from results_file import write_json  # noqa: E402

from frankwolfe.applications.lasso import penalty_from_radius, solve_lasso  # noqa: E402

RESULTS = HERE / "results"
TOLS = [1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11]

COPT_SNIPPET = r'''
import time
import numpy as np
import copt
from copt.constraint import L1Ball
from copt.loss import SquareLoss

A, b = payload["A"], payload["b"]
radius, m = payload["radius"], A.shape[0]
limit, target, iters = payload["limit"], payload["target"], payload["iters"]
l1 = L1Ball(radius)

def run(A, b, max_iter, limit):
    loss = SquareLoss(A, b)
    x0 = np.zeros(A.shape[1])
    x0[0] = -radius  # the vertex (sign -1, index 0), as for ours
    rec = {"t": [], "gap": []}
    t0 = time.perf_counter()
    def cb(loc):
        # FW gap of 0.5||Ax-b||^2 = m * copt's loss, from copt's own gradient at x
        g = loc["grad"] * m
        x = loc["x"]
        gap = float(g @ x + radius * np.abs(g).max())
        rec["t"].append(time.perf_counter() - t0)
        rec["gap"].append(gap)
        if len(rec["gap"]) > iters and (gap <= target or rec["t"][-1] > limit):
            return False
    res = copt.minimize_frank_wolfe(loss.f_grad, x0, l1.lmo_pairwise, x0_rep=(-1.0, 0),
                                    variant="pairwise", jac=True, step="backtracking",
                                    max_iter=10**7, tol=0.0, callback=cb)
    return res, rec

small = np.ascontiguousarray(A[:50, :100])
run(small, b[:50], 3, 1.0)  # imports and first calls, not timed
res, rec = run(A, b, None, limit)
result = {"t": np.array(rec["t"]), "gap": np.array(rec["gap"]), "x": res.x,
          "version": copt.__version__}
'''

CVXPY_SNIPPET = r'''
import time
import numpy as np
import cvxpy as cp
A, b, radius = payload["A"], payload["b"], payload["radius"]
x = cp.Variable(A.shape[1])
prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)), [cp.norm1(x) <= radius])
t0 = time.perf_counter()
prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
result = {"seconds": time.perf_counter() - t0, "x": np.asarray(x.value), "status": prob.status,
          "version": cp.__version__}
'''

METHODS = {"AFW": ("away", {}), "PFW": ("pairwise", {}),
           "RAFW": ("rafw", {"subsample": 0.1}), "FCFW": ("fcfw", {})}


def timed(fn: Any, repeat: int) -> tuple[Any, float]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def rel_err(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(x - ref).max() / np.abs(ref).max())


def ours(A, b, radius, method, opts, tol, repeat):
    # the budget only guards tolerances below the rounding floor of the gap
    return timed(lambda: solve_lasso(A, b, radius, method, tol=tol, max_iter=30000, **opts),
                 repeat)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=2000)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--noise", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--copt-iters", type=int, default=500)
    p.add_argument("--copt-limit", type=float, default=600.0)
    p.add_argument("--no-copt", action="store_true")
    p.add_argument("--no-cvxpy", action="store_true")
    p.add_argument("--cvxpy-limit", type=float, default=900.0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    if a.quick:
        a.m, a.n, a.k, a.copt_limit, a.repeat = 300, 800, 10, 30.0, 1
    prob = make_problem(a.m, a.n, a.k, a.noise, a.seed)
    A, b, radius = prob["A"], prob["b"], prob["radius"]
    solve_lasso(A[:50, :100], b[:50], 1.0, "rafw", tol=1e-6)  # JIT compile, not timed
    for meth, opts in METHODS.values():
        solve_lasso(A[:50, :100], b[:50], 1.0, meth, tol=1e-6, **opts)

    # the gap's rounding floor grows with f: ask for 1e-15 relative, at most 1e-11
    ref_tol = max(1e-11, 1e-15 * float(b @ b))
    ref = solve_lasso(A, b, radius, "fcfw", tol=ref_tol, max_iter=30000).x
    alpha = penalty_from_radius(A, b, ref)
    from sklearn.linear_model import Lasso

    sk_tight = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(A, b)
    report: dict[str, Any] = {
        "benchmark": "lasso",
        "problem": {"m": a.m, "n": a.n, "k": a.k, "noise": a.noise, "seed": a.seed,
                    "radius": radius, "alpha": alpha, "support_size": int(np.count_nonzero(ref)),
                    "ref_vs_sklearn_tight": rel_err(sk_tight.coef_, ref)},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "threads": 1},
        "rows": {},
    }
    rows = report["rows"]

    copt_gap = None
    if not a.no_copt:
        try:
            py = ensure_peer("copt")
            out = run_in_venv(py, COPT_SNIPPET,
                              {"A": A, "b": b, "radius": radius, "limit": a.copt_limit,
                               "target": 1e-6, "iters": a.copt_iters}, env=thread_env(1))
            t, gap = out["t"], out["gap"]
            i500 = min(a.copt_iters, gap.size - 1)
            copt_gap = float(gap[i500])
            hit = np.flatnonzero(gap <= 1e-6)
            rows["copt pairwise"] = {
                "iterations": int(gap.size - 1), "final_gap": float(gap[-1]),
                "gap_at_500": copt_gap, "time_at_500": float(t[i500]),
                "time_to_1e-6": float(t[hit[0]]) if hit.size else None,
                "coef_err": rel_err(out["x"], ref), "version": out["version"]}
        except PeerError as err:
            report["copt_error"] = str(err)[-2000:]

    for label, (meth, opts) in METHODS.items():
        row: dict[str, Any] = {}
        res, sec = ours(A, b, radius, meth, opts, 1e-6, a.repeat)
        row.update({"time_to_1e-6": sec, "iterations": int(res.nit), "gap": float(res.gap),
                    "check_gap": measure(A, b, radius, res.x)["gap"]})
        if "n_atom_products" in res.extra:
            row["atom_products"] = int(res.extra["n_atom_products"])
        if copt_gap is not None:
            _, sec = ours(A, b, radius, meth, opts, copt_gap, a.repeat)
            row["time_to_copt_gap"] = sec
        for tol in TOLS:
            res, sec = ours(A, b, radius, meth, opts, tol, a.repeat)
            err = rel_err(res.x, ref)
            if err <= 1e-6:
                row.update({"time_to_coef_1e-6": sec, "coef_tol": tol, "coef_err": err})
                break
        rows[label] = row

    def sk_fit(tol: float) -> Any:
        return Lasso(alpha=alpha, fit_intercept=False, tol=tol, max_iter=10**6).fit(A, b)

    sk_row: dict[str, Any] = {}
    for tol in [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]:
        est, sec = timed(partial(sk_fit, tol), a.repeat)
        err = rel_err(est.coef_, ref)
        if err <= 1e-6:
            sk_row = {"time_to_coef_1e-6": sec, "coef_tol": tol, "coef_err": err}
            break
    rows["sklearn Lasso"] = sk_row

    if not a.no_cvxpy:
        try:
            out = run_in_venv(sys.executable, CVXPY_SNIPPET, {"A": A, "b": b, "radius": radius},
                              env=thread_env(1), timeout=a.cvxpy_limit)
            rows["cvxpy Clarabel"] = {"time": out["seconds"], "status": out["status"],
                                      "coef_err": rel_err(out["x"], ref)}
        except Exception as err:  # timeout or solver failure: report, don't abort
            rows["cvxpy Clarabel"] = {"error": f"{type(err).__name__}: {str(err)[-300:]}"}

    print_table(report)
    out_path = a.out or RESULTS / f"lasso{'_quick' if a.quick else ''}.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(out_path, report, indent=1, default=float)
    print(f"wrote {out_path}")
    return report


def print_table(report: dict[str, Any]) -> None:
    pr = report["problem"]
    print(f"\nl1-constrained lasso {pr['m']}x{pr['n']}, x_true {pr['k']}-sparse, radius "
          f"{pr['radius']:.4g}; optimum support {pr['support_size']}; single thread")
    print("reference vs sklearn tol=1e-14: rel. coef. difference "
          f"{pr['ref_vs_sklearn_tight']:.1e}\n")
    for name, r in report["rows"].items():
        print(f"{name:16s} " + ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    rows = report["rows"]
    copt = rows.get("copt pairwise")
    ours_rows = {k: v for k, v in rows.items() if k in METHODS}
    if copt and ours_rows:
        best = min(ours_rows, key=lambda k: ours_rows[k].get("time_to_copt_gap", np.inf))
        sp = copt["time_at_500"] / ours_rows[best]["time_to_copt_gap"]
        print(f"\nbest to copt's 500-iteration gap {copt['gap_at_500']:.3e}: {best}, "
              f"{sp:.0f}x sooner than copt")
    sk = rows.get("sklearn Lasso", {}).get("time_to_coef_1e-6")
    if sk and ours_rows:
        best = min(ours_rows, key=lambda k: ours_rows[k].get("time_to_coef_1e-6", np.inf))
        print(f"best to coefficient error 1e-6: {best}, "
              f"{ours_rows[best]['time_to_coef_1e-6'] / sk:.2f}x scikit-learn's time")


if __name__ == "__main__":
    main()

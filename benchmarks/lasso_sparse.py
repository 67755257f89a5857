"""Benchmark: the l1-constrained lasso on sparse and text-like designs, against scikit-learn.

Problem::

    min 0.5 * ||A x - b||^2   s.t.  ||x||_1 <= radius

Designs (``--design``, all by default), each from one seeded Generator:

* ``sparse``: ``A`` 2000 x 50,000 scipy.sparse with 0.5% non-zeros at
  uniform positions, standard Gaussian values;
* ``wide``: ``A`` 5000 x 20,000 scipy.sparse with 1% non-zeros, standard
  Gaussian values (a second sparse shape: more rows per column);
* ``text``: ``A`` 20,000 x 100,000, 100 term draws per row with column
  probabilities following a power law ``p_j ~ 1 / (j + 1)`` (Zipf, as word
  frequencies), repeated draws summed, standard Gaussian values per draw;
* ``dense``: ``A`` 2000 x 5000 standard Gaussian (the design of
  ``lasso.py``), ``radius = ||x_true||_1``.

``x_true`` is 100-sparse (50 for dense) with Gaussian entries, ``b = A x_true
+ 0.01 N(0, 1)``; for the sparse designs ``radius = 0.45 ||x_true||_1`` (an
optimum of about 100 atoms).

Rows: ours (``solve_lasso`` with its default method - ``"auto"``: the
compiled pairwise method with corrective rounds for a sparse ``A``, Python
pairwise for a dense one - and with ``pairwise`` and ``fcfw``, default start)
and scikit-learn's ``Lasso(alpha, fit_intercept=False)`` on the penalized
twin, ``alpha = penalty_from_radius(A, b, x*)`` (same solution).  Each time
is the wall time to a relative coefficient error ``max|x - x*| / max|x*| <=
1e-6`` (runs with decreasing ``tol``, the first meeting the error), best of
``--repeat``, our rows including the construction of the objective.  The
reference ``x*`` is our compiled solution at a tight gap, checked against
scikit-learn at ``tol=1e-14`` (the difference is printed).

With ``--baseline REF`` the same rows also run on the code of git revision
``REF`` (exported with ``git archive`` to a temporary folder), in the same
run, for a before/after comparison.  Our rows run in subprocesses (one per
code version, the problem passed as ``.npz``), single-threaded like
scikit-learn's.

Usage::

    .venv/bin/python benchmarks/lasso_sparse.py --baseline main
    .venv/bin/python benchmarks/lasso_sparse.py --design sparse --quick
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from lasso import rel_err, timed  # noqa: E402
from results_file import write_json  # noqa: E402
from revision import export_revision  # noqa: E402

# frankwolfe first, from the PYTHONPATH a worker is given (the baseline's code): lasso.py
# below puts this checkout on sys.path, which must not shadow it
import frankwolfe  # noqa: E402, F401

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DESIGNS = ("sparse", "wide", "text", "dense")
# label: (method, None = solve_lasso's default in that version of the code; tolerances)
OURS = {"default": (None, [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]),
        "PFW": ("pairwise", [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]),
        "FCFW": ("fcfw", [1e-3, 1e-4, 1e-6, 1e-8, 1e-10])}
SK_TOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]


def make_design(design: str, seed: int, quick: bool = False) -> dict[str, Any]:
    """``A``, ``b``, ``radius`` of one design (see the module docstring)."""
    rng = np.random.default_rng(seed)
    scale = 4 if quick else 1
    if design == "sparse":
        m, n, k = 2000 // scale, 50000 // scale, 100 // scale
        A = sp.random(m, n, density=0.005, format="csc", random_state=rng,
                      data_rvs=rng.standard_normal)
    elif design == "wide":
        m, n, k = 5000 // scale, 20000 // scale, 100 // scale
        A = sp.random(m, n, density=0.01, format="csc", random_state=rng,
                      data_rvs=rng.standard_normal)
    elif design == "text":
        m, n, k = 20000 // scale, 100000 // scale, 100 // scale
        draws = 100
        p = 1.0 / np.arange(1, n + 1)
        cols = rng.choice(n, size=m * draws, p=p / p.sum()).astype(np.int32)
        rows = np.repeat(np.arange(m, dtype=np.int32), draws)
        A = sp.csc_array((rng.standard_normal(m * draws), (rows, cols)), shape=(m, n))
        A.sum_duplicates()
        # 32-bit indices, as scikit-learn requires
        A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
    elif design == "dense":
        m, n, k = 2000 // scale, 5000 // scale, 50 // scale
        A = rng.standard_normal((m, n))
    else:
        raise ValueError(f"--design must be one of {DESIGNS}, got {design!r}")
    x_true = np.zeros(n)
    x_true[rng.choice(n, size=k, replace=False)] = rng.standard_normal(k)
    b = A @ x_true + 0.01 * rng.standard_normal(m)
    frac = 1.0 if design == "dense" else 0.45
    return {"A": A, "b": b, "radius": frac * float(np.abs(x_true).sum())}


# -- worker: our rows, run in a subprocess on one version of the code ----------------------
def worker(path: Path, repeat: int, budget: float) -> dict[str, Any]:
    from frankwolfe.applications.lasso import solve_lasso

    data = np.load(path, allow_pickle=False)
    if "A_indptr" in data:
        A: Any = sp.csc_array((data["A_data"], data["A_indices"], data["A_indptr"]),
                              shape=tuple(data["A_shape"]))
    else:
        A = data["A"]
    b, radius, ref = data["b"], float(data["radius"]), data["ref"]
    def method(meth: str | None) -> dict[str, Any]:
        return {} if meth is None else {"method": meth}

    for meth, _ in OURS.values():  # compile, not timed
        solve_lasso(A[:50, :100], b[:50], 1.0, tol=1e-6, **method(meth))
    rows: dict[str, Any] = {}
    for label, (meth, tols) in OURS.items():
        row: dict[str, Any] = {"time": None}
        for tol in tols:
            res, sec = timed(partial(solve_lasso, A, b, radius, tol=tol, max_iter=10**6,
                                     time_limit=budget, **method(meth)), repeat)
            err = rel_err(res.x, ref)
            if err <= 1e-6:
                row = {"time": sec, "tol": tol, "iterations": int(res.nit), "coef_err": err,
                       "method": res.method}
                break
            if sec >= budget:
                row = {"time": None, "note": f"coef. error {err:.1e} after the {budget:g} s "
                       f"budget ({int(res.nit)} iterations, tol {tol:g})"}
                break
        rows[label] = row
    rows["code"] = str(Path(frankwolfe.__file__).resolve().parent)
    return rows


def run_worker(code_root: Path, path: Path, repeat: int, budget: float) -> dict[str, Any]:
    env = dict(os.environ)
    if code_root != ROOT:
        env["PYTHONPATH"] = str(code_root)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(path),
                          "--repeat", str(repeat), "--budget", str(budget)], env=env,
                         capture_output=True, text=True, cwd=str(code_root), check=False)
    if out.returncode != 0:
        raise RuntimeError(f"worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def save_problem(path: Path, A: Any, b: np.ndarray, radius: float, ref: np.ndarray) -> None:
    if sp.issparse(A):
        A = sp.csc_array(A)
        np.savez(path, A_data=A.data, A_indices=A.indices, A_indptr=A.indptr,
                 A_shape=np.array(A.shape), b=b, radius=radius, ref=ref)
    else:
        np.savez(path, A=A, b=b, radius=radius, ref=ref)


def bench_design(design: str, a: argparse.Namespace, baseline: Path | None,
                 tmp: Path) -> dict[str, Any]:
    from sklearn.linear_model import Lasso

    from frankwolfe.applications.lasso import penalty_from_radius, solve_lasso

    prob = make_design(design, a.seed, a.quick)
    A, b, radius = prob["A"], prob["b"], prob["radius"]
    ref_tol = max(1e-12, 1e-16 * float(b @ b))
    ref = solve_lasso(A, b, radius, "compiled_pairwise", tol=ref_tol, max_iter=100000).x
    alpha = penalty_from_radius(A, b, ref)
    sk_tight = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(A, b)
    info = {"shape": list(A.shape), "nnz": int(A.nnz) if sp.issparse(A) else int(A.size),
            "radius": radius, "alpha": alpha, "support": int(np.count_nonzero(ref)),
            "ref_vs_sklearn_tight": rel_err(sk_tight.coef_, ref)}
    path = tmp / f"{design}.npz"
    save_problem(path, A, b, radius, ref)
    rows: dict[str, Any] = {}
    def sk_fit(tol: float) -> Any:
        return Lasso(alpha=alpha, fit_intercept=False, tol=tol, max_iter=10**6).fit(A, b)

    sk: dict[str, Any] = {"time": None}
    for tol in SK_TOLS:
        est, sec = timed(partial(sk_fit, tol), a.repeat)
        err = rel_err(est.coef_, ref)
        if err <= 1e-6:
            sk = {"time": sec, "tol": tol, "iterations": int(est.n_iter_), "coef_err": err}
            break
    rows["sklearn Lasso"] = sk
    code = {}
    for who, root in (("ours", ROOT), ("baseline", baseline)):
        if root is None:
            continue
        out = run_worker(root, path, a.repeat, a.budget)
        code[who] = out.pop("code")
        for label, row in out.items():
            rows[f"{who} {label}"] = row
    return {"problem": info, "rows": rows, "code": code}


def print_table(report: dict[str, Any]) -> None:
    print(f"\nl1-constrained lasso, time to relative coefficient error 1e-6 (best of "
          f"{report['repeat']}; single thread); baseline = {report['baseline']}")
    print(f"{'design':8s} {'row':16s} {'time [s]':>9s} {'/ sklearn':>9s} {'iters':>7s} {'tol':>7s}")
    for design, d in report["designs"].items():
        pr = d["problem"]
        print(f"{design:8s} {pr['shape'][0]}x{pr['shape'][1]}, nnz {pr['nnz']}, optimum support "
              f"{pr['support']}, ref vs sklearn(tol=1e-14) {pr['ref_vs_sklearn_tight']:.1e}")
        sk = d["rows"]["sklearn Lasso"].get("time")
        for name, r in d["rows"].items():
            t = r.get("time")
            ratio = f"{t / sk:9.2f}" if t and sk else f"{'-':>9s}"
            ts = f"{t:9.4f}" if t else f"{'n/a':>9s}"
            print(f"{'':8s} {name:16s} {ts} {ratio} {r.get('iterations', '-'):>7} "
                  f"{r.get('tol', float('nan')):7.0e} {r.get('note', '')}")


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--design", choices=DESIGNS + ("all",), default="all")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--baseline", default=None, help="git revision to compare with")
    p.add_argument("--quick", action="store_true", help="designs 4x smaller")
    p.add_argument("--budget", type=float, default=30.0,
                   help="seconds per run of ours (time_limit); a row over it reports its error")
    p.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    if a.worker is not None:
        print(json.dumps(worker(a.worker, a.repeat, a.budget), default=float))
        return None
    designs = DESIGNS if a.design == "all" else (a.design,)
    report: dict[str, Any] = {"benchmark": "lasso_sparse", "repeat": a.repeat,
                              "baseline": a.baseline, "load": os.getloadavg()[0],
                              "designs": {}}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        baseline = export_revision(a.baseline, tmp) if a.baseline else None
        for design in designs:
            report["designs"][design] = bench_design(design, a, baseline, tmp)
            print(f"done: {design}", flush=True)
    report["load_after"] = os.getloadavg()[0]
    print_table(report)
    print(f"load average before/after: {report['load']:.1f} / {report['load_after']:.1f}")
    out_path = a.out or RESULTS / f"lasso_sparse{'_quick' if a.quick else ''}.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(out_path, report, indent=1, default=float)
    print(f"wrote {out_path}")
    return report


if __name__ == "__main__":
    main()

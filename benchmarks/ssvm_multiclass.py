"""Compiled BCFW passes of the multiclass structured SVM against the Python path and
scikit-learn's Crammer-Singer SVM, on the digits.

``MulticlassModel`` (``compiled_dual_blocks``: block ``i`` as class marginals, whole
passes in numba) on sklearn's digits (pixels / 16 and a constant feature, F = 65; a
70 / 30 split, n = 1257 training examples, 10 classes), ``lam = 0.01``, against
``LinearSVC(multi_class="crammer_singer", C=1/(lam n), fit_intercept=False)``, which
solves the same primal ``lam/2 ||w||^2 + 1/n sum_i max_y ([y != y_i] + <w_y - w_{y_i},
x_i>)``.  Prints, side by side in one run:

* seconds per BCFW pass (uniform order, weighted averaging, no certificate passes),
  Python engine (``compiled=False``) against the compiled one, and their ratio;
* the time of ``StructuredSVM(...).fit`` to a certified gap of 1% of LinearSVC's
  primal (``tol = 0.01 P_svc``, the estimator's defaults otherwise: certificates every
  10 passes), compiled and Python, against LinearSVC's fit time, as ratios;
  each fit's primal computed here in numpy (not by the package) next to LinearSVC's;
* a first fit's compilation: a new process with an empty numba cache
  (``NUMBA_CACHE_DIR`` a new folder), then a second process on that cache, each
  timing one small compiled fit against the same fit again in the same process.

    python benchmarks/ssvm_multiclass.py [--lam 0.01] [--passes 50] [--python-passes 5]
        [--no-cold]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

import frankwolfe as fw
from frankwolfe.applications.structured_svm import (
    MulticlassModel,
    SSVMDual,
    SSVMDualObjective,
    StructuredSVM,
)


def digits() -> tuple[np.ndarray, np.ndarray]:
    """The training part of the digits: pixels / 16 and a constant 1 (n = 1257, F = 65)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    X = np.hstack([d.data / 16.0, np.ones((d.data.shape[0], 1))])
    Xtr, _, ytr, _ = train_test_split(X, d.target, test_size=0.3, random_state=0)
    return np.ascontiguousarray(Xtr), ytr.astype(np.int64)


def primal(W: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    """The Crammer-Singer primal, written out in numpy (``W``: classes x features)."""
    S = X @ W.T
    rows = np.arange(X.shape[0])
    true = S[rows, y]
    aug = S + 1.0
    aug[rows, y] -= 1.0
    return 0.5 * lam * float(np.sum(W * W)) + float(np.mean(aug.max(axis=1) - true))


def per_pass(X: np.ndarray, y: np.ndarray, lam: float, compiled: bool, passes: int) -> float:
    """Seconds per BCFW pass of block steps (no certificate until the closing one, which
    ``loop_time`` leaves out)."""
    model = MulticlassModel(10, X.shape[1])
    dom = SSVMDual(model, list(X), list(y), lam, compiled=compiled)
    f = SSVMDualObjective(lam, model.size_joint_feature)
    with fw.debug(False):
        res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, max_iter=passes,
                                              gap_every=10**6, averaging="weighted",
                                              random_state=0, compiled=compiled)
    assert res.extra["engine"] == ("compiled" if compiled else "python")
    return float(res.extra["loop_time"]) / passes


def fit(X: np.ndarray, y: np.ndarray, lam: float, tol: float, compiled: bool
        ) -> tuple[float, StructuredSVM]:
    svm = StructuredSVM(MulticlassModel(10, X.shape[1]), lam=lam, tol=tol, max_passes=2000,
                        eval_every=10**6, random_state=0, compiled=compiled)
    tic = time.perf_counter()
    with fw.debug(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm.fit(X, y)
    return time.perf_counter() - tic, svm


_COLD = """
import time, numpy as np
tic = time.perf_counter()
from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM
imported = time.perf_counter() - tic
rng = np.random.default_rng(0)
X, y = rng.standard_normal((200, 65)), rng.integers(0, 10, 200)
times = []
for _ in range(2):
    tic = time.perf_counter()
    svm = StructuredSVM(MulticlassModel(10, 65), lam=0.01, max_passes=20, tol=0.0,
                        random_state=0).fit(X, y)
    times.append(time.perf_counter() - tic)
    assert svm.result_.extra["engine"] == "compiled"
print(imported, times[0], times[1])
"""


def cold(cache: str) -> tuple[float, float, float]:
    """``(import, first fit, second fit)`` seconds of a new process on the numba cache
    folder ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True,
                         text=True, check=True)
    a, b, c = (float(v) for v in out.stdout.split()[-3:])
    return a, b, c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--passes", type=int, default=50, help="compiled passes timed")
    ap.add_argument("--python-passes", type=int, default=5, help="Python passes timed")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-cache processes")
    args = ap.parse_args()
    X, y = digits()
    n, lam = X.shape[0], args.lam
    print(f"digits: n = {n}, F = {X.shape[1]}, 10 classes, lam = {lam}")
    out: dict = {"n": n, "F": int(X.shape[1]), "lam": lam}

    from sklearn.svm import LinearSVC

    svc_times = []
    for _ in range(3):
        tic = time.perf_counter()
        svc = LinearSVC(C=1.0 / (lam * n), multi_class="crammer_singer",
                        fit_intercept=False).fit(X, y)
        svc_times.append(time.perf_counter() - tic)
    t_svc = float(np.median(svc_times))
    p_svc = primal(svc.coef_, X, y, lam)
    print(f"LinearSVC(crammer_singer): {t_svc:.4f} s (median of 3), primal {p_svc:.6f}")

    per_pass(X, y, lam, True, 1)  # compiles (or loads) the driver: not timed below
    s_c = per_pass(X, y, lam, True, args.passes)
    s_p = per_pass(X, y, lam, False, args.python_passes)
    print(f"seconds per pass: python {s_p:.5f}  compiled {s_c:.6f}  ratio {s_p / s_c:.1f}x "
          f"({s_p / n * 1e6:.1f} vs {s_c / n * 1e6:.2f} us per block step)")
    out.update(svc_seconds=t_svc, svc_primal=p_svc, python_pass=s_p, compiled_pass=s_c)

    tol = 0.01 * p_svc
    rows = {}
    for compiled in (True, False):
        t, svm = fit(X, y, lam, tol, compiled)
        p = primal(svm.w_.reshape(10, -1), X, y, lam)
        rows[compiled] = t
        name = "compiled" if compiled else "python"
        print(f"fit to gap <= 1% of P_svc ({tol:.2e}): {name:8s} {t:.3f} s  "
              f"({t / t_svc:.1f}x LinearSVC's)  passes {svm.history_['effective_passes'][-1]:.0f}"
              f"  gap {svm.result_.gap:.2e}  primal {p:.6f}  (P - P_svc = {p - p_svc:+.2e})")
        out[f"{name}_fit_seconds"] = t
        out[f"{name}_fit_primal"] = p
        out[f"{name}_fit_gap"] = float(svm.result_.gap)
    print(f"fit ratio python / compiled: {rows[False] / rows[True]:.1f}x")

    if not args.no_cold:
        with tempfile.TemporaryDirectory() as cache:
            first = cold(cache)
            second = cold(cache)
        for name, (imp, a, b) in (("empty cache", first), ("cached", second)):
            print(f"new process, {name}: import {imp:.2f} s, first fit {a:.2f} s, same fit "
                  f"again {b:.3f} s (compilation and loading: {a - b:.2f} s)")
        out.update(cold_first_fit=first[1], cold_again=first[2], cached_first_fit=second[1],
                   cached_again=second[2])
    print(json.dumps(out))


if __name__ == "__main__":
    main()

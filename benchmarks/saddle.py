"""Saddle-point Frank-Wolfe on matrix games: accuracy, step rules and cost per iteration.

Four tables (no assertions; JSON goes to benchmarks/results/saddle.json):

1. fully corrective SP-FW (``corrective=True``) on the 20 random games of the
   tests (sizes up to 200x300): final gap, |value - LP value|, LP solves,
   oracle calls, seconds;
2. plain SP-FW on random games: the gap after 1e2..1e5 iterations for the
   open-loop rules ``ell/(k+ell)`` (``ell = 1`` is fictitious play);
3. seconds per plain SP-FW iteration with ``M y``, ``M^T x`` kept from
   per-vertex columns and rows, against two full products per iteration;
4. games with a unique interior-face equilibrium: SP-FW, SP-AFW and
   corrective SP-FW at one iteration budget, with and without the
   strongly convex-concave terms;
5. SP-AFW with its default step on 10 random strongly convex-concave games
   (``mu_x = mu_y = 1``, couplings of spectral norm 0.2 and 12, 30x40): iterations to
   a certified gap of 1e-9, against the agnostic step's gap after the same
   iterations, the global-constant rule ``C = mu_x D_x^2 + mu_y D_y^2 = 4``
   and the backtracking estimate of ``C``.

Usage: ``.venv/bin/python benchmarks/saddle.py [--quick]``
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

from frankwolfe import BilinearObjective, ProbabilitySimplex, game_value, saddle_point_frank_wolfe
from frankwolfe.algorithms.saddle import adapter as saddle_module
from frankwolfe.objectives.base import Tracker
from frankwolfe.step_size import Agnostic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from results_file import write_json  # noqa: E402
from test_saddle import _random_games, face_game  # noqa: E402  (the tests' game generators)


def simplices():
    return ProbabilitySimplex(), ProbabilitySimplex()


def true_gap(M, x, y):
    return float((M.T @ x).max() - (M @ y).min())


def corrective_table() -> list[dict]:
    rows = []
    print("\n1. corrective SP-FW on the 20 random games of tests/test_saddle.py")
    print(f"{'size':>9} {'gap':>9} {'|v-v_LP|':>9} {'LPs':>5} {'oracle':>6} {'support':>8} "
          f"{'s':>7}")
    for M in _random_games():
        v, _, _ = game_value(M)
        t = time.perf_counter()
        r = saddle_point_frank_wolfe(BilinearObjective(M), *simplices(), corrective=True,
                                     tol=1e-10, max_iter=10_000)
        dt = time.perf_counter() - t
        g = true_gap(M, r.x, r.extra["y"])
        row = dict(size=list(M.shape), gap=g, value_error=abs(r.fun - v),
                   lp_solves=r.extra["n_corrective_lp"], oracle_calls=r.n_oracle_calls,
                   support=[len(S) for S in r.active_set], seconds=dt,
                   lp_seconds=r.extra["corrective_time"])
        rows.append(row)
        print(f"{M.shape[0]:>4}x{M.shape[1]:<4} {g:9.1e} {row['value_error']:9.1e} "
              f"{row['lp_solves']:5d} {row['oracle_calls']:6d} "
              f"{row['support'][0]:>3},{row['support'][1]:<4} {dt:7.3f}")
    print(f"max gap {max(r['gap'] for r in rows):.1e}, max |v - v_LP| "
          f"{max(r['value_error'] for r in rows):.1e}, "
          f"total {sum(r['seconds'] for r in rows):.1f} s")
    return rows


def rules_table(budget: int) -> list[dict]:
    rng = np.random.default_rng(11)
    games = {"5x6": rng.standard_normal((5, 6)), "30x40": rng.standard_normal((30, 40)),
             "200x300": rng.standard_normal((200, 300))}
    checks = [c for c in (100, 1_000, 10_000, 100_000) if c <= budget]
    print("\n2. plain SP-FW, open-loop rules ell/(k+ell): gap after k iterations")
    print(f"{'game':>8} {'rule':>12} " + " ".join(f"{'k=' + str(c):>9}" for c in checks)
          + f" {'slope':>6}")
    rows = []
    for name, M in games.items():
        for ell, label in ((2.0, "2/(k+2)"), (1.0, "1/(k+1) FP"), (0.5, "0.5/(k+.5)"),
                           (4.0, "4/(k+4)")):
            r = saddle_point_frank_wolfe(BilinearObjective(M), *simplices(),
                                         step_size=Agnostic(ell), max_iter=budget, tol=0,
                                         history_every=100)
            it = np.asarray(r.history["iteration"])
            g = np.asarray(r.history["gap"])
            at = [float(g[it == c][0]) if np.any(it == c) else float(r.gap) for c in checks]
            sel = it >= 1000
            slope = float(np.polyfit(np.log(it[sel]), np.log(g[sel]), 1)[0]) if sel.sum() > 2 \
                else float("nan")
            rows.append(dict(game=name, ell=ell, checks=checks, gaps=at, slope=slope))
            print(f"{name:>8} {label:>12} " + " ".join(f"{v:9.2e}" for v in at) + f" {slope:6.2f}")
    return rows


def speed_table(iters: int) -> list[dict]:
    print("\n3. plain SP-FW (2/(k+2)), microseconds per iteration")
    print(f"{'size':>11} {'incremental':>12} {'full products':>14}")
    rows = []
    plain = saddle_module._SaddleAdapter.tracker
    for m, n in ((200, 300), (2000, 3000), (5000, 5000)):
        M = np.random.default_rng(0).standard_normal((m, n))
        out = {}
        for mode in ("incremental", "full"):
            if mode == "full":
                saddle_module._SaddleAdapter.tracker = lambda self, z: Tracker(self, z)
            try:
                t = time.perf_counter()
                saddle_point_frank_wolfe(BilinearObjective(M), *simplices(), step_size="agnostic",
                                         max_iter=iters, tol=0, history_every=iters)
                out[mode] = (time.perf_counter() - t) / iters * 1e6
            finally:
                saddle_module._SaddleAdapter.tracker = plain
        rows.append(dict(size=[m, n], us_incremental=out["incremental"], us_full=out["full"]))
        print(f"{m:>5}x{n:<5} {out['incremental']:12.0f} {out['full']:14.0f}")
    return rows


def face_table(budget: int) -> list[dict]:
    print(f"\n4. unique interior-face equilibrium, budget {budget} iterations: final gap")
    print(f"{'size':>9} {'mu':>4} {'SP-FW 2/(k+2)':>14} {'SP-AFW':>10} {'corrective':>11} "
          f"{'(its)':>6}")
    rows = []
    for (m, n, k, seed) in ((10, 15, 3, 0), (50, 80, 5, 1), (200, 300, 8, 2)):
        for mu in (1.0, 0.0):
            M, *_ = face_game(m, n, k, mu, np.random.default_rng(seed))
            L = BilinearObjective(M, mu_x=mu, mu_y=mu)
            C = 4.0 * mu if mu else 1.0
            fwr = saddle_point_frank_wolfe(L, *simplices(), step_size="agnostic",
                                           max_iter=budget, tol=1e-10, history_every=budget)
            afw = saddle_point_frank_wolfe(L, *simplices(), away=True,
                                           step_size="curvature" if mu else "agnostic", C=C,
                                           max_iter=budget, tol=1e-10, history_every=budget)
            cor = saddle_point_frank_wolfe(L, *simplices(), corrective=True, max_iter=budget,
                                           tol=1e-10, history_every=budget)
            rows.append(dict(size=[m, n], mu=mu, spfw=fwr.gap, spafw=afw.gap, spafw_nit=afw.nit,
                             corrective=cor.gap, corrective_nit=cor.nit))
            print(f"{m:>4}x{n:<4} {mu:4g} {fwr.gap:14.1e} {afw.gap:10.1e} {cor.gap:11.1e} "
                  f"{cor.nit:6d}")
    return rows


def strongly_convex_concave_games(count: int = 10, m: int = 30, n: int = 40, seed: int = 7,
                                  coupling: float = 0.2) -> list[np.ndarray]:
    """Random coupling matrices scaled to spectral norm ``coupling``."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        M = rng.standard_normal((m, n))
        games.append(M * (coupling / np.linalg.norm(M, 2)))
    return games


def defaults_table(tol: float = 1e-9, budget: int = 20_000, coupling: float = 0.2
                   ) -> list[dict]:
    print(f"\n5. SP-AFW, mu = 1, coupling norm {coupling:g}, 30x40: iterations to gap {tol:g}")
    print(f"{'game':>4} {'default its':>11} {'s':>6} {'agnostic gap@same':>18} "
          f"{'C=4 its':>8} {'backtrack its':>13} {'L evals':>8}")
    rows = []
    for i, M in enumerate(strongly_convex_concave_games(coupling=coupling)):
        L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
        t = time.perf_counter()
        dflt = saddle_point_frank_wolfe(L, *simplices(), away=True, tol=tol, max_iter=budget,
                                        history_every=budget)
        dt = time.perf_counter() - t
        agn = saddle_point_frank_wolfe(L, *simplices(), away=True, step_size="agnostic", tol=0.0,
                                       max_iter=dflt.nit, history_every=budget)
        glob = saddle_point_frank_wolfe(L, *simplices(), away=True, step_size="curvature",
                                        tol=tol, max_iter=budget, history_every=budget)
        back = saddle_point_frank_wolfe(L, *simplices(), away=True, step_size="saddle_backtracking",
                                        tol=tol, max_iter=budget, history_every=budget)
        row = dict(game=i, coupling=coupling, default_nit=dflt.nit, default_gap=dflt.gap,
                   default_seconds=dt,
                   default_converged=bool(dflt.success), agnostic_gap_same_nit=agn.gap,
                   global_C_nit=glob.nit, backtracking_nit=back.nit,
                   backtracking_value_calls=back.n_function_calls)
        rows.append(row)
        print(f"{i:>4} {dflt.nit:>11d} {dt:6.2f} {agn.gap:18.2e} {glob.nit:>8d} "
              f"{back.nit:>13d} {back.n_function_calls:>8d}")
    its = [r["default_nit"] for r in rows]
    print(f"default: all converged {all(r['default_converged'] for r in rows)}, iterations "
          f"median {int(np.median(its))}, max {max(its)}; agnostic gap at the same iterations: "
          f"min {min(r['agnostic_gap_same_nit'] for r in rows):.1e}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small budgets (about a minute)")
    ap.add_argument("--defaults-only", action="store_true",
                    help="only table 5 (the default step on strongly convex-concave games)")
    ap.add_argument("--coupling", type=float, nargs="+", default=[0.2, 12.0],
                    help="spectral norms of the couplings of table 5 (12: about a raw "
                         "Gaussian 30x40 matrix's)")
    args = ap.parse_args()
    if args.defaults_only:
        for c in args.coupling:
            defaults_table(coupling=c)
        return
    out = {
        "corrective": corrective_table(),
        "rules": rules_table(10_000 if args.quick else 100_000),
        "speed": speed_table(300 if args.quick else 2_000),
        "face": face_table(1500),
        "defaults": [row for c in args.coupling for row in defaults_table(coupling=c)],
    }
    path = pathlib.Path(__file__).with_name("results") / "saddle.json"
    path.parent.mkdir(exist_ok=True)
    write_json(path, out)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()

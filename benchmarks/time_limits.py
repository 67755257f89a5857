"""``time_limit`` requested versus wall time returned, for every method and estimator.

Each case runs once briefly (so numba compilation, which counts against a budget, is
done), then once with its budget; the table shows the budget, the wall time of the
call, ``Result.time`` (the solver's, closing certificate included),
``extra["loop_time"]`` (the iterations alone; absent before issue 23) and the status.

Cases: every method of :func:`frankwolfe.minimize` on a least-squares problem (a
bilinear game for ``saddle``), the BCFW variants, the compiled pairwise method,
``StructuredSVM`` with each solver on OCR-large and CoNLL-2000, ``solve_qap`` and
``traffic_assignment`` (SiouxFalls, and Berlin-Center where a step is slow).

Usage::

    nice .venv/bin/python benchmarks/time_limits.py            # budgets 2 s, 3 s for SSVM
    nice .venv/bin/python benchmarks/time_limits.py --only qap --limit 1
    nice .venv/bin/python benchmarks/time_limits.py --data ../shared/data
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

import frankwolfe as fw

ROOT = Path(__file__).resolve().parents[1]


def _least_squares(m: int = 1000, n: int = 2000, seed: int = 0) -> fw.LeastSquares:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    return fw.LeastSquares(A, rng.standard_normal(m))


def core_cases() -> dict[str, Callable[[float | None, int], Any]]:
    """Cases of the core: ``run(time_limit, max_iter) -> Result``."""
    f = _least_squares()
    l1 = fw.L1Ball(5.0, dim=2000)
    rng = np.random.default_rng(2)
    game = fw.BilinearObjective(rng.standard_normal((300, 300)))
    sx, sy = fw.ProbabilitySimplex(dim=300), fw.ProbabilitySimplex(dim=300)
    nb, m = 2000, 10
    y = rng.random(nb * m)
    quad = fw.QuadraticObjective(sp.identity(nb * m, format="csr"), -y)
    blocks = fw.ProductDomain([fw.ProbabilitySimplex(dim=m) for _ in range(nb)])

    def method(name: str, obj: Any, dom: Any) -> Callable[[float | None, int], Any]:
        return lambda t, it: fw.minimize(obj, dom, method=name, tol=0.0, max_iter=it,
                                         time_limit=t)

    cases: dict[str, Callable[[float | None, int], Any]] = {}
    for name in ("fw", "away", "pairwise", "rafw", "cfw", "bfw"):
        cases[f"minimize {name}"] = method(name, f, l1)
    cases["minimize fcfw"] = method("fcfw", f, l1)
    cases["minimize compiled_pairwise"] = method("compiled_pairwise", f, l1)
    cases["minimize saddle"] = lambda t, it: fw.minimize(game, (sx, sy), method="saddle",
                                                          tol=0.0, max_iter=it, time_limit=t)

    def bcfw(**kw: Any) -> Callable[[float | None, int], Any]:
        return lambda t, it: fw.block_coordinate_frank_wolfe(
            quad, blocks, tol=0.0, max_iter=it, time_limit=t, random_state=0, **kw)

    cases["minimize bcfw (uniform)"] = bcfw()
    cases["bcfw gap sampling + pairwise + cache"] = bcfw(block_order="gap",
                                                          block_step="pairwise", cache=True)
    cases["bcfw mini-batch (10)"] = bcfw(batch_size=10)
    cases["bcfw mini-batch (10, 2 threads)"] = bcfw(batch_size=10, n_jobs=2)
    cases["bcfw python pass"] = bcfw(compiled=False)
    return cases


_SSVM = {"bcfw": {}, "bcfw_pairwise": {"solver": "bcfw_pairwise"},
         "bcfw gap sampling": {"block_order": "gap"},
         "bcfw mini-batch (10)": {"batch_size": 10},
         "cutting_plane": {"solver": "cutting_plane"}, "ssg": {"solver": "ssg"},
         "fw": {"solver": "fw"}, "online_eg": {"solver": "online_eg"},
         "dual_extragradient": {"solver": "dual_extragradient"}}


def ssvm_cases(data: Path) -> dict[str, Callable[[float | None, int], Any]]:
    from frankwolfe.applications.structured_svm import (
        ChainModel,
        StructuredSVM,
        load_conll2000,
        load_ocr,
    )

    cases: dict[str, Callable[[float | None, int], Any]] = {}
    sets: dict[str, Callable[[], tuple[Any, Any, Any]]] = {
        "OCR-large": lambda: (ChainModel(26, 129), *load_ocr("ocr2", data_home=data)[:2]),
    }

    def conll() -> tuple[Any, Any, Any]:
        X, Y, _, _, info = load_conll2000(data_home=data, return_info=True)
        return ChainModel(info["n_states"], info["feature_sizes"]), X, Y

    sets["CoNLL"] = conll
    loaded: dict[str, tuple[Any, Any, Any]] = {}
    for dname, load in sets.items():
        for sname, kw in _SSVM.items():
            def run(t: float | None, it: int, dname: str = dname, load: Any = load,
                    kw: dict[str, Any] = kw) -> Any:
                if dname not in loaded:
                    loaded[dname] = load()
                model, X, Y = loaded[dname]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    svm = StructuredSVM(model, max_passes=it if t is None else 10**4,
                                        time_limit=t, random_state=0, **kw).fit(X, Y)
                return svm.result_
            cases[f"StructuredSVM {sname} ({dname})"] = run
    return cases


def app_cases(data: Path) -> dict[str, Callable[[float | None, int], Any]]:
    from frankwolfe.applications.matching import solve_qap
    from frankwolfe.applications.traffic import read_tntp, traffic_assignment

    rng = np.random.default_rng(0)
    a, b = rng.random((60, 60)), rng.random((60, 60))
    cases: dict[str, Callable[[float | None, int], Any]] = {
        "solve_qap (n=60)": lambda t, it: solve_qap(a, b, time_limit=t, max_iter=it,
                                                    random_state=0)}
    for name, net, trips in (
            ("SiouxFalls", "SiouxFalls/SiouxFalls_net.tntp", "SiouxFalls/SiouxFalls_trips.tntp"),
            ("Berlin-Center", "Berlin-Center/berlin-center_net.tntp",
             "Berlin-Center/berlin-center_trips.tntp")):
        if not (data / "tntp" / net).is_file():
            continue
        network: list[Any] = []

        def run(t: float | None, it: int, net: str = net, trips: str = trips,
                network: list[Any] = network) -> Any:
            if not network:
                network.append(read_tntp(data / "tntp" / net, data / "tntp" / trips))
            return traffic_assignment(network[0], rel_gap=0.0, max_iter=it, time_limit=t)
        cases[f"traffic_assignment bfw ({name})"] = run
    return cases


def _row(name: str, limit: float, run: Callable[[float | None, int], Any]) -> str:
    run(None, 2)  # compile and load first: the budget then times the run itself
    t0 = time.perf_counter()
    res = run(limit, 10**7)
    wall = time.perf_counter() - t0
    rtime = getattr(res, "time", np.nan)
    extra = getattr(res, "extra", None) or {}
    loop = extra.get("loop_time", np.nan)
    status = getattr(res, "status", "") or "-"
    return (f"| {name} | {limit:g} | {wall:.2f} ({wall / limit:.2f}x) | {rtime:.2f} | "
            f"{loop:.2f} | {status} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=float, default=2.0, help="budget of the core cases")
    parser.add_argument("--ssvm-limit", type=float, default=3.0, help="budget of the fits")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("FRANKWOLFE_DATA",
                                                    ROOT.parent / "shared" / "data")))
    parser.add_argument("--only", default="", help="run the cases whose name has this")
    args = parser.parse_args()
    groups = [(core_cases(), args.limit), (app_cases(args.data), args.limit)]
    if (args.data / "ocr").is_dir():
        groups.append((ssvm_cases(args.data), args.ssvm_limit))
    print("| case | time_limit (s) | wall (s) | Result.time (s) | loop_time (s) | status |")
    print("|---|---|---|---|---|---|")
    for cases, limit in groups:
        for name, run in cases.items():
            if args.only in name:
                print(_row(name, limit, run), flush=True)


if __name__ == "__main__":
    main()

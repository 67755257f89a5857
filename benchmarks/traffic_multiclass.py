"""A two-class assignment of SiouxFalls: cars and trucks (issue 26).

The TNTP files hold one demand matrix; the classes are shares of it
(:func:`~frankwolfe.applications.traffic.split_demand`): cars 90 %, trucks 10 % with a
passenger-car equivalent of 2.5.  Tolls of 2 (money) on the four links into and out of
node 10 toward 9 and 15 (0-based links 24, 25, 27, 42); cars value time at 1, trucks at
2 and pay three times the car toll; trucks may not use links 26, 29 and 35 (10->11,
10->17, 12->11).  ``bfw`` and ``bcfw`` run to certified relative gaps of 1e-6 and
1e-8 (each target a fresh run, after a warm-up run that compiles the kernels), and
the same network with all trips in one class (``classes=None``) for reference.  Per
run: seconds, iterations (``bcfw``: passes), the overall relative gap and each class's.

Usage::

    python benchmarks/traffic_multiclass.py [--data DIR] [--time-limit 300] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_file import write_json  # noqa: E402

from frankwolfe.applications.traffic import (  # noqa: E402
    DemandClass,
    load_siouxfalls,
    split_demand,
    traffic_assignment,
)

TOLLED = [24, 25, 27, 42]
BANNED_FOR_TRUCKS = [26, 29, 35]


def classes_of(net) -> list[DemandClass]:
    parts = split_demand(net.demand, {"car": 0.9, "truck": 0.1})
    tolls = np.zeros(net.n_links)
    tolls[TOLLED] = 2.0
    return [DemandClass("car", parts["car"], pce=1.0, vot=1.0, tolls=tolls),
            DemandClass("truck", parts["truck"], pce=2.5, vot=2.0, tolls=tolls,
                        toll_factor=3.0, banned_links=BANNED_FOR_TRUCKS)]


def run(net, method: str, target: float, classes, time_limit: float) -> dict:
    tic = time.perf_counter()
    res = traffic_assignment(net, method, rel_gap=target, max_iter=10**7,
                             time_limit=time_limit, classes=classes, random_state=0)
    seconds = time.perf_counter() - tic
    row = {"method": method, "target": target, "classes": classes is not None,
           "seconds": seconds, "iterations": res.nit, "status": str(res.status),
           "relative_gap": res.extra["relative_gap"], "beckmann": res.fun}
    if classes is not None:
        row["class_relative_gap"] = dict(res.extra["class_relative_gap"])
        row["truck_flow_on_banned"] = float(
            res.extra["class_flows"]["truck"][BANNED_FOR_TRUCKS].sum())
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("FRANKWOLFE_DATA",
                                                     str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    net, _ = load_siouxfalls(args.data)
    classes = classes_of(net)
    for method in ("bfw", "bcfw"):  # warm-up: compilation outside the timings
        traffic_assignment(net, method, rel_gap=0.0, max_iter=2, classes=classes)
        traffic_assignment(net, method, rel_gap=0.0, max_iter=2)
    rows = []
    for cls in (classes, None):
        for method in ("bfw", "bcfw"):
            for target in (1e-6, 1e-8):
                row = run(net, method, target, cls, args.time_limit)
                rows.append(row)
                gaps = row.get("class_relative_gap", {})
                print(f"{'2 classes' if cls else '1 class':9s} {method:5s} {target:.0e}: "
                      f"{row['seconds']:8.2f} s  {row['iterations']:7d} it  "
                      f"gap {row['relative_gap']:.2e}  "
                      + "  ".join(f"{k} {v:.2e}" for k, v in gaps.items()), flush=True)
    if args.out:
        write_json(args.out, {"rows": rows})


if __name__ == "__main__":
    main()

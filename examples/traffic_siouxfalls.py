"""User-equilibrium traffic assignment on SiouxFalls with FW, CFW and BFW.

Usage::

    python examples/traffic_siouxfalls.py [DATA_DIR]

DATA_DIR holds ``tntp/SiouxFalls/`` (default: ``$FRANKWOLFE_DATA``, else
``../shared/data`` next to the repository).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from frankwolfe.applications.traffic import load_siouxfalls, traffic_assignment

BEST_OBJECTIVE = 4231335.2871074397  # published Beckmann value of the best-known flows


def main() -> None:
    data = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "FRANKWOLFE_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    net, best = load_siouxfalls(data)
    print(net)
    for method, target in (("fw", 1e-4), ("cfw", 1e-4), ("bfw", 1e-4), ("bfw", 1e-6)):
        res = traffic_assignment(net, method, rel_gap=target, max_iter=20_000)
        err = (res.fun - BEST_OBJECTIVE) / BEST_OBJECTIVE
        flow_err = np.max(np.abs(res.x - best) / np.maximum(best, 1.0))
        print(f"{method:>4} to {target:.0e}: {res.nit:5d} iterations, {res.time:6.3f} s, "
              f"relative gap {res.extra['relative_gap']:.2e}, Beckmann {res.fun:.4f} "
              f"(rel. err {err:.1e}), max flow error {flow_err:.1e}")


if __name__ == "__main__":
    main()

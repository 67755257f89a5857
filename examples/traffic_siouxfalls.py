"""User-equilibrium traffic assignment on SiouxFalls with FW, CFW and BFW.

Minimizes the Beckmann potential over the flow polytope of the SiouxFalls
network (24 nodes, 76 links, 528 OD pairs) with Frank-Wolfe, conjugate and
bi-conjugate Frank-Wolfe, and compares with the published best-known
equilibrium (objective and link flows). The network comes from the
*Transportation Networks for Research* collection (Transportation Networks
for Research Core Team, github.com/bstabler/TransportationNetworks). The
convergence plot goes to `examples/output/traffic_siouxfalls.png` (or the
folder given by `--out`).

The network is not shipped: download it once with `fetch_tntp("SiouxFalls")`
of `frankwolfe.applications.fetch` (into `$FRANKWOLFE_DATA`, else
`~/frankwolfe_data`; see the Data sets page), or pass a `DATA_DIR` holding
`tntp/SiouxFalls/`. Without it the script exits with status 77 and says where
it looked.

Run: `python examples/traffic_siouxfalls.py [DATA_DIR] [--out DIR]`
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from frankwolfe.applications.data import get_data_home
from frankwolfe.applications.traffic import load_siouxfalls, traffic_assignment

OUT = Path(__file__).resolve().parent / "output"
BEST_OBJECTIVE = 4231335.2871074397  # published Beckmann value of the best-known flows
SKIPPED = 77  # exit status when the data are missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=None, help="folder holding tntp/SiouxFalls/")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    args = parser.parse_args(argv)
    try:
        net, best = load_siouxfalls(get_data_home(args.data))
    except FileNotFoundError as err:
        print(f"SiouxFalls not found ({err}). Download it with "
              "frankwolfe.applications.fetch.fetch_tntp('SiouxFalls'), or pass DATA_DIR "
              "(or set FRANKWOLFE_DATA) to the folder holding tntp/SiouxFalls/.")
        return SKIPPED
    print(net)
    for method in ("fw", "cfw", "bfw"):  # compile the numba kernels first: the times below
        traffic_assignment(net, method, max_iter=3)  # measure the solvers, not the compiler
    runs = {}
    for method, target in (("fw", 1e-4), ("cfw", 1e-4), ("bfw", 1e-4), ("bfw", 1e-6)):
        res = traffic_assignment(net, method, rel_gap=target, max_iter=20_000)
        err = (res.fun - BEST_OBJECTIVE) / BEST_OBJECTIVE
        flow_err = np.max(np.abs(res.x - best) / np.maximum(best, 1.0))
        print(f"{method:>4} to {target:.0e}: {res.nit:5d} iterations, {res.time:6.3f} s, "
              f"relative gap {res.extra['relative_gap']:.2e}, Beckmann {res.fun:.4f} "
              f"(rel. err {err:.1e}), max flow error {flow_err:.1e}")
        runs[f"{method} (to relative gap {target:.0e})"] = res

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    from frankwolfe.plotting import plot_convergence

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    plot_convergence(runs, ax=axes[0], title="SiouxFalls: certified gap per iteration")
    plot_convergence(runs, x="time", ax=axes[1], title="... and per second")
    axes[0].set_xscale("log")
    args.out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out / "traffic_siouxfalls.png", dpi=110)
    plt.close(fig)
    print(f"figure written to {args.out / 'traffic_siouxfalls.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

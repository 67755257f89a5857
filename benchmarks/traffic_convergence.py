"""Convergence plot of FW / CFW / BFW / BCFW on SiouxFalls: relative gap against time.

Each method runs on one core to relative gap 1e-10 or ``--time-limit`` seconds; the
relative gap ``(sum c x - sum d SP) / sum c x`` is recorded at every certified
point (every iteration of the link methods, every certificate pass of BCFW) with
the wall time since the call.  The numba kernels are compiled first, so the
times are the solvers'.

Regenerate the committed figure with::

    python benchmarks/traffic_convergence.py \\
        --out docs/img/traffic_siouxfalls_convergence.png
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frankwolfe.applications.traffic import Beckmann, load_siouxfalls, traffic_assignment  # noqa: E402

RUNS = (("fw", {}), ("cfw", {}), ("bfw", {}), ("bcfw", {"blocks": "origin"}),
        ("bcfw", {"blocks": "od"}))


def trace(net, method: str, time_limit: float, **kw) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, relative gap) at every certified point of one run."""
    beck = Beckmann(net)
    times: list[float] = []
    gaps: list[float] = []

    def record(state) -> None:
        if np.isfinite(state.gap):
            g = state.gradient if state.gradient is not None else beck.gradient(state.x)
            times.append(time.perf_counter() - tic)
            gaps.append(state.gap / float(np.vdot(g, state.x)))

    tic = time.perf_counter()
    traffic_assignment(net, method, rel_gap=1e-10, max_iter=10**7, time_limit=time_limit,
                       callback=record, **kw)
    return np.array(times), np.array(gaps)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get(
        "FRANKWOLFE_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--out", default="traffic_siouxfalls_convergence.png")
    args = ap.parse_args(argv)
    net, _ = load_siouxfalls(args.data)
    for method, kw in RUNS:  # compile first
        traffic_assignment(net, method, rel_gap=1e-2, **kw)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method, kw in RUNS:
        t, g = trace(net, method, args.time_limit, **kw)
        label = method if method != "bcfw" else f"bcfw ({kw['blocks']} blocks, pairwise)"
        ax.plot(t, np.maximum(g, 1e-16), label=label)
        print(f"{label:<28} {len(t):6d} points, last rel. gap {g[-1]:.2e} at {t[-1]:.2f} s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time (s, one core)")
    ax.set_ylabel("relative gap")
    ax.set_title("SiouxFalls: relative gap against time")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"figure written to {args.out}")


if __name__ == "__main__":
    main()

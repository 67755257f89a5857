"""Memory and speed of the per-block atom store: dense rows vs sparse (CSR pool).

Traffic BCFW over origins (shortest-path tree atoms, pairwise steps, cache of
20 inactive trees per origin) on the made-up N x N grid of
``benchmarks/traffic.py``, run for a fixed number of passes with
``atom_storage="dense"`` and ``"sparse"``, alternating, best of ``--repeats``.
Reported: the store's bytes (``Result.extra["atom_store_bytes"]``, allocated
capacity of its arrays) per OD pair, time per pass, and whether both runs took
the same steps (passes, cache hits, max |x_dense - x_sparse|).

Run: .venv/bin/python benchmarks/atom_store.py [--grid 20]
     [--passes 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from traffic import grid_network  # noqa: E402

from frankwolfe.applications.traffic import traffic_assignment  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=20)
    ap.add_argument("--passes", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    net = grid_network(args.grid)
    n_od = int(np.count_nonzero(net.demand))
    print(f"{net!r}: {net.n_links} links, {n_od} OD pairs; {args.passes} passes, "
          f"best of {args.repeats}; load {os.getloadavg()[0]:.2f}")
    traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=2, random_state=0,
                       compiled=False)  # warm up numba
    best: dict[str, float] = {}
    res = {}
    for _ in range(args.repeats):
        for storage in ("dense", "sparse"):
            tic = time.perf_counter()
            # the core's table of the Python block steps (the compiled ones keep their own)
            res[storage] = traffic_assignment(net, "bcfw", rel_gap=0.0, max_iter=args.passes,
                                              random_state=0, atom_storage=storage,
                                              compiled=False)
            t = (time.perf_counter() - tic) / res[storage].nit
            best[storage] = min(best.get(storage, np.inf), t)
    out = {"network": net.name, "links": net.n_links, "od_pairs": n_od}
    for storage in ("dense", "sparse"):
        r = res[storage]
        nbytes = r.extra["atom_store_bytes"]
        out[storage] = {"bytes": nbytes, "bytes_per_od": nbytes / n_od,
                        "seconds_per_pass": best[storage], "passes": r.nit,
                        "cache_hits": r.extra["cache_hits"], "gap": r.gap}
        print(f"  {storage:<6} store {nbytes / 2**20:9.2f} MiB = {nbytes / n_od:9.0f} B/OD, "
              f"{best[storage] * 1e3:8.1f} ms/pass, {r.nit} passes, "
              f"{r.extra['cache_hits']} cache hits, {r.extra['active_set_size']} active trees")
    d, s = res["dense"], res["sparse"]
    out["memory_ratio"] = out["dense"]["bytes"] / out["sparse"]["bytes"]
    out["time_ratio"] = best["sparse"] / best["dense"]
    out["max_abs_diff"] = float(np.max(np.abs(d.x - s.x)))
    print(f"  dense/sparse memory {out['memory_ratio']:.1f}x; sparse/dense time per pass "
          f"{out['time_ratio']:.3f}; max |x_dense - x_sparse| {out['max_abs_diff']:.2e} "
          f"(flows up to {d.x.max():.3g})")
    return out


if __name__ == "__main__":
    main()

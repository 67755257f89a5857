"""Quadratic assignment on QAPLIB instances: relaxed FAQ + rounding + 2-opt + restarts.

Usage::

    python examples/qap_qaplib.py [DATA_DIR]

DATA_DIR holds ``qaplib/`` with ``<name>.dat`` and ``<name>.sln`` (default:
``$FRANKWOLFE_DATA``, else ``../shared/data`` next to the repository).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from frankwolfe.applications.matching import read_qaplib, read_qaplib_solution, solve_qap


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "FRANKWOLFE_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    for name in ("chr12a", "had12", "nug12", "tai12a"):
        A, B = read_qaplib(data / "qaplib" / f"{name}.dat")
        best, best_perm = read_qaplib_solution(data / "qaplib" / f"{name}.sln", A, B)
        one = solve_qap(A, B)  # one Frank-Wolfe run from the barycenter, as scipy's FAQ
        many = solve_qap(A, B, restarts=14, max_iter=5, rng=0)  # + 14 short random restarts
        print(f"{name}: best known {best}; from the barycenter {one.fun:.0f} "
              f"(relaxation {one.relaxed_fun:.1f}, {one.nit} FW iterations, "
              f"{one.time * 1e3:.1f} ms); "
              f"with restarts {many.fun:.0f} ({many.n_runs} runs, {many.time * 1e3:.1f} ms), "
              f"permutation {(many.permutation + 1).tolist()}")


if __name__ == "__main__":
    main()

"""The examples run headless: the main demo reaches its certificates (the figures of the
BCFW paper: tests/test_ssvm_paper.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_demo_runs_and_certifies(tmp_path, capsys):
    demo = _load("demo")
    # every problem certified to 1e-8 by its best method
    assert demo.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.split()[-5:-4] == ["pairwise"]]
    assert len(rows) == 3 and all(float(r.split()[-3]) <= 1e-8 for r in rows)
    assert (tmp_path / "demo_convergence.png").stat().st_size > 10_000

"""The examples run headless: the main demo reaches its certificates, the Figure 1 plots\nshow every curve whole and keep the legend off the curves."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

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
    assert demo.main(["--out", str(tmp_path)]) == 0  # every problem certified to 1e-8 by its best method
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.split()[-5:-4] == ["pairwise"]]
    assert len(rows) == 3 and all(float(r.split()[-3]) <= 1e-8 for r in rows)
    assert (tmp_path / "demo_convergence.png").stat().st_size > 10_000


def test_figure1_plot_shows_every_curve_and_keeps_the_legend_outside():
    fig1 = _load("ssvm_paper_figure1")
    rng = np.random.default_rng(0)
    rows = []
    # batch methods far above the stochastic ones on both axes, as on the real panels
    levels = {"BCFW": (0.3, 0.12), "BCFW-wavg": (0.2, 0.11), "SSG": (5.0, 0.16),
              "SSG-wavg": (4.0, 0.115), "FW": (1.5, 0.75), "cutting plane": (3.0, 0.9)}
    for name, (sub, err) in levels.items():
        for seed in range(2 if name not in ("FW", "cutting plane") else 1):
            for p in range(1, 6):
                noise = 1 + 0.1 * rng.random()
                rows.append({"method": name, "seed": seed, "passes": p, "effective_passes": p,
                             "primal": 1.0 + sub * noise / p, "dual": 1.0 - 1e-3,
                             "test_error": err * noise})
    fig, summary = fig1.draw_panel("ocr-1/n", rows)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert set(summary) == set(levels)
    for ax in fig.axes:
        lo, hi = ax.get_ylim()
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), float)
            assert np.all((lo <= y) & (y <= hi)), (ax.get_ylabel(), line.get_ydata(), lo, hi)
    # the legend lies outside every axes: no curve can hide behind it
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer))
    assert len(legend.get_texts()) == len(levels)

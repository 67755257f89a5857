"""The README's example runs and does what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np


def test_readme_custom_lmo_example():
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    res = ns["res"]
    assert str(res.status) == "converged" and res.gap <= 1e-10
    c, y = np.array([0.0, 0.0, 1.0]), np.array([3.0, 4.0, 0.0])
    closed_form = c + (y - c) / np.linalg.norm(y - c)
    # strong convexity: ||x - x*||^2 <= 2 (f - f*) <= 2 gap
    assert np.linalg.norm(res.x - closed_form) <= np.sqrt(2 * res.gap) + 1e-12

"""The short documentation pages run as a reader copies them: every ```python block of a
page in order, in one namespace (a page's blocks build on each other), in an empty
folder.  The long pages (the applications' tutorials, the cluster) are run by the
documentation build's gallery and by hand."""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ["getting-started.md", "index.md", "concepts.md", "domains.md", "step-sizes.md",
         "extending.md", "results.md", "methods/index.md", "methods/vanilla.md",
         "methods/active-set.md", "methods/block-coordinate.md", "methods/conjugate.md",
         "methods/fully-corrective.md", "methods/saddle.md", "methods/stochastic.md"]


@pytest.mark.parametrize("page", PAGES)
def test_a_pages_python_blocks_run_in_order(page, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib").use("Agg")
    blocks = re.findall(r"^[ \t]*```python\n(.*?)^[ \t]*```", (DOCS / page).read_text(),
                        re.S | re.M)
    assert blocks, f"{page} has no python block"
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    namespace: dict = {"__name__": "__docs__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a page may show a run that warns
        for i, block in enumerate(blocks):
            code = compile(textwrap.dedent(block), f"{page} (block {i + 1})", "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own code

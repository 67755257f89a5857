"""The applications have one import name, ``frankwolfe.applications``: from the root of a
checkout (where the folder ``applications/`` is on ``sys.path``) the top-level name gives
one clear ``ImportError`` before any of its modules runs, so no cache (numba's index, the
generated block drivers) can record a kernel under it; the installed name keeps working
there.  That the caches key their entries by full module name is pinned in test_cache."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MESSAGE = "ImportError: the applications are imported as `frankwolfe.applications`, not as"


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter started in the repository root (``''`` first on
    ``sys.path``, as ``python -c`` and a REPL there have it)."""
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(autouse=True)
def _checkout():
    if not (REPO / "applications" / "__init__.py").is_file():
        pytest.skip("not a source checkout")


@pytest.mark.parametrize("statement", [
    "import applications",
    "import applications.matching.local_search",
    "from applications.lasso import solve_lasso",
])
def test_the_top_level_name_is_refused_from_the_repository_root(statement):
    out = _python(statement)
    assert out.returncode == 1
    assert MESSAGE in out.stderr and "'applications'" in out.stderr
    assert "use `import frankwolfe.applications`" in out.stderr
    # refused in the package's __init__: no module of the applications was executed
    assert out.stderr.count("Traceback") == 1


def test_the_installed_name_works_from_the_repository_root():
    code = ("import sys\n"
            "import frankwolfe.applications as apps\n"
            "from frankwolfe.applications.lasso import solve_lasso\n"
            "import numpy as np\n"
            "res = solve_lasso(np.eye(3), np.array([0.5, 0.0, 0.0]), 1.0, tol=1e-12)\n"
            "assert abs(res.x[0] - 0.5) < 1e-9, res.x\n"
            "assert 'applications' not in sys.modules\n"
            "print(apps.__name__, solve_lasso.__module__)\n")
    out = _python(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["frankwolfe.applications", "frankwolfe.applications.lasso.solve"]


def test_a_refused_import_leaves_the_installed_name_usable():
    """The case of the issue: after ``import applications`` from the checkout, a run
    through ``frankwolfe.applications`` in the same interpreter works."""
    code = ("try:\n"
            "    import applications\n"
            "except ImportError as e:\n"
            "    print('refused')\n"
            "from frankwolfe.applications.structured_svm import MulticlassModel\n"
            "print(MulticlassModel(2, 3).size_joint_feature)\n")
    out = _python(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["refused", "6"]

"""Importing the package and the applications stays light (issue #22: fast from the first call).

The heavy dependencies are imported inside the functions that need them, and the
scikit-learn estimators are attributes resolved on first access (PEP 562), so a
fresh ``import frankwolfe`` or ``import frankwolfe.applications.<app>`` loads none
of them.  The check counts modules, not seconds: it fails the same way on any
machine.  The measured times are in benchmarks/README.md ("Import time").
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

APPLICATIONS = ("structured_svm", "lasso", "traffic", "matching", "graph_matching", "fetch")

#: what `import frankwolfe` and the applications' imports must not load
HEAVY = ("sklearn", "scipy.optimize", "matplotlib", "cvxpy", "dask", "distributed",
         "networkx", "pandas", "tqdm")

#: the lazy names of each package and the modules that define them
LAZY = {
    "frankwolfe.applications.structured_svm": {
        "StructuredSVM": "frankwolfe.applications.structured_svm.estimator",
        "KernelStructuredSVM": "frankwolfe.applications.structured_svm.kernel_bcfw",
        "LabelMatchKernel": "frankwolfe.applications.structured_svm.kernel_bcfw",
        "LinearJointKernel": "frankwolfe.applications.structured_svm.kernel_bcfw",
    },
    "frankwolfe.applications.lasso": {
        "ConstrainedLasso": "frankwolfe.applications.lasso.estimator",
    },
}


def _loaded_in_fresh_process(statement: str) -> list[str]:
    """The packages of :data:`HEAVY` in ``sys.modules`` after ``statement`` in a new
    interpreter (this one has imported them all already)."""
    code = (f"{statement}\nimport sys\nheavy = {HEAVY!r}\n"
            "print(sorted(h for h in heavy if h in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    return eval(out.stdout.strip().splitlines()[-1])  # a printed list of str


def test_importing_the_package_and_the_applications_loads_no_heavy_dependency():
    modules = ", ".join(["frankwolfe"] + [f"frankwolfe.applications.{a}" for a in APPLICATIONS])
    assert _loaded_in_fresh_process(f"import {modules}") == []


def test_the_check_sees_a_heavy_import():
    # the test above can fail: asking for an estimator loads scikit-learn
    loaded = _loaded_in_fresh_process(
        "from frankwolfe.applications.structured_svm import StructuredSVM")
    assert "sklearn" in loaded


@pytest.mark.parametrize("package", sorted(LAZY))
def test_lazy_names_are_public_names(package):
    mod = importlib.import_module(package)
    for name, where in LAZY[package].items():
        assert name in mod.__all__
        assert name in dir(mod)
        assert getattr(mod, name) is getattr(importlib.import_module(where), name)
    # every public name resolves, lazy or not, and `import *` gives them all
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert set(mod.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        mod.not_a_name  # noqa: B018 - the attribute access is the test


def test_the_version_is_one_number_in_three_places():
    """``frankwolfe.__version__``, the installed metadata (pyproject.toml) and
    CITATION.cff name the same release."""
    import importlib.metadata
    import re
    from pathlib import Path

    import frankwolfe

    assert importlib.metadata.version("frankwolfe") == frankwolfe.__version__
    cff = Path(__file__).resolve().parents[1] / "CITATION.cff"
    if cff.exists():  # beside the source (the sdist ships it too)
        cited = re.search(r"^version:\s*(\S+)", cff.read_text(), re.MULTILINE)
        assert cited is not None and cited.group(1) == frankwolfe.__version__


def _api_hook():
    """The docs build's hook (docs/hooks/api_source.py), loaded from its file; None
    where the checkout has no docs (an installed sdist)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "api_source.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_api_source_hook", path)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def test_the_api_coverage_check_covers_every_public_subpackage():
    """The hook's list of public packages is every importable package of frankwolfe
    without a private part (walked by pkgutil, not by the hook's folder walk), and each
    of them has an ``__all__`` but the namespace ``frankwolfe.applications``."""
    import pkgutil

    import frankwolfe
    import frankwolfe.applications

    hook = _api_hook()
    if hook is None:
        pytest.skip("no docs/ beside the tests")
    packages = {"frankwolfe", "frankwolfe.applications"}
    # the applications are mapped in by the install (package-dir): walked on their own
    for pkg in (frankwolfe, frankwolfe.applications):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
                packages.add(info.name)
    assert "frankwolfe.applications.structured_svm.solvers" in packages
    checked = set(hook.public_sources())
    assert packages <= checked
    assert checked - packages == set(hook.PUBLIC_MODULES)
    for name in packages - set(hook.NO_EXPORTS):
        assert hasattr(importlib.import_module(name), "__all__"), name
    assert not hasattr(frankwolfe.applications, "__all__")


def test_every_public_name_is_rendered_in_the_api_reference():
    """Each name of a public ``__all__`` has a ``:::`` directive on some docs page, and
    the check notices one taken away (the subpackage names of step_size, say)."""
    from pathlib import Path

    hook = _api_hook()
    if hook is None:
        pytest.skip("no docs/ beside the tests")
    docs = Path(hook.ROOT) / "docs"
    pages = sorted(docs.rglob("*.md"))
    assert hook.missing_names(pages) == []
    without = [p for p in pages if p != docs / "api" / "step-sizes.md"]
    missing = hook.missing_names(without)
    assert "frankwolfe.step_size.make_step_size" in missing
    assert "frankwolfe.step_size.STEP_RULES" in missing
    # re-exported by frankwolfe and rendered there (the saddle method's page)
    assert "frankwolfe.step_size.SaddleStep" not in missing
    assert "frankwolfe.Agnostic" in missing

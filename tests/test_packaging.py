"""Packaging: the distribution's package list, its import names and the import direction."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def test_every_package_folder_is_listed_under_its_import_name():
    cfg = _config()
    listed = set(cfg["packages"])
    dirs = cfg["package-dir"]
    found = set()
    for name, folder in dirs.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            found.add(".".join((name,) + rel))
    # a subfolder of an explicitly mapped folder is listed once, under its mapped name
    assert listed == found, (sorted(found - listed), sorted(listed - found))


def test_no_generic_top_level_import_name():
    tops = {p.split(".")[0] for p in _config()["packages"]}
    assert tops == {"frankwolfe"}


def test_core_imports_nothing_from_the_applications():
    for path in (ROOT / "frankwolfe").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [("." * node.level) + node.module]
            for name in names:
                assert "applications" not in name, f"{path} imports {name}"


def test_applications_import_under_the_project_namespace():
    import frankwolfe.applications as apps
    import frankwolfe.applications.lasso as lasso
    import frankwolfe.applications.structured_svm as ssvm

    assert Path(apps.__file__).resolve().parent == ROOT / "applications"
    assert Path(lasso.__file__).resolve().parent == ROOT / "applications" / "lasso"
    assert hasattr(ssvm, "StructuredSVM")

"""MkDocs hook: let mkdocstrings find ``frankwolfe.applications`` and check API coverage.

The repository keeps the applications in the top-level folder ``applications/`` and
installs them as ``frankwolfe.applications`` (``package-dir`` in pyproject.toml).
griffe reads sources statically and does not follow that mapping, so this hook builds
``build/docs-api/frankwolfe/``: symbolic links to every entry of ``frankwolfe/`` plus
``applications`` -> ``applications/``; mkdocs.yml puts ``build/docs-api`` first on
the handler's search path. The folder is made when MkDocs loads this hook, before
mkdocstrings reads its ``paths`` (a path missing at that moment is dropped silently).

After the pages are read it checks that every public name (the ``__all__`` of
``frankwolfe`` and of each application package) is rendered by a ``:::`` directive
somewhere, so a name added to the API without documentation fails the strict build.
"""

from __future__ import annotations

import ast
import logging
import re
import shutil
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.api_source")

ROOT = Path(__file__).resolve().parents[2]
FARM = ROOT / "build" / "docs-api" / "frankwolfe"
# the packages whose __all__ is the public API, by import name
PUBLIC = {
    "frankwolfe": "frankwolfe/__init__.py",
    "frankwolfe.cache": "frankwolfe/cache.py",
    "frankwolfe.compile": "frankwolfe/compile.py",
    "frankwolfe.applications.structured_svm": "applications/structured_svm/__init__.py",
    "frankwolfe.applications.structured_svm.datasets":
        "applications/structured_svm/datasets/__init__.py",
    "frankwolfe.applications.structured_svm.models":
        "applications/structured_svm/models/__init__.py",
    "frankwolfe.applications.data": "applications/data/__init__.py",
    "frankwolfe.applications.lasso": "applications/lasso/__init__.py",
    "frankwolfe.applications.matching": "applications/matching/__init__.py",
    "frankwolfe.applications.graph_matching": "applications/graph_matching.py",
    "frankwolfe.applications.traffic": "applications/traffic/__init__.py",
}
DIRECTIVE = re.compile(r"^:::\s+(\S+)", re.MULTILINE)


def _link_sources() -> None:
    if FARM.exists():
        shutil.rmtree(FARM)
    FARM.mkdir(parents=True)
    for entry in (ROOT / "frankwolfe").iterdir():
        if entry.name != "__pycache__":
            (FARM / entry.name).symlink_to(entry)
    (FARM / "applications").symlink_to(ROOT / "applications")


_link_sources()


def on_config(config, **kwargs):
    _link_sources()  # again for each rebuild of `mkdocs serve` (modules may come and go)
    return config


def _exported(path: Path) -> list[str]:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return [e.value for e in node.value.elts]
    return []


def on_files(files, config, **kwargs):
    rendered: set[str] = set()
    for f in files.documentation_pages():
        rendered.update(DIRECTIVE.findall(Path(f.abs_src_path).read_text()))
    missing = []
    for package, source in PUBLIC.items():
        for name in _exported(ROOT / source):
            # a name re-exported by an enclosing package is documented once, there
            homes = [p for p, s in PUBLIC.items()
                     if (p == package or package.startswith(p + "."))
                     and name in _exported(ROOT / s)]
            if not any(f"{home}.{name}" in rendered for home in homes):
                missing.append(f"{package}.{name}")
    if missing:
        log.warning("public names missing from the API reference (add a '::: name' "
                    "directive to a page under docs/api/): %s", ", ".join(missing))
    return files

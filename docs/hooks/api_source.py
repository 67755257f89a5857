"""MkDocs hook: let mkdocstrings find ``frankwolfe.applications`` and check API coverage.

The repository keeps the applications in the top-level folder ``applications/`` and
installs them as ``frankwolfe.applications`` (``package-dir`` in pyproject.toml).
griffe reads sources statically and does not follow that mapping, so this hook builds
``build/docs-api/frankwolfe/``: symbolic links to every entry of ``frankwolfe/`` plus
``applications`` -> ``applications/``; mkdocs.yml puts ``build/docs-api`` first on
the handler's search path. The folder is made when MkDocs loads this hook, before
mkdocstrings reads its ``paths`` (a path missing at that moment is dropped silently).

After the pages are read it checks that every public name is rendered by a ``:::``
directive somewhere, so a name added to the API without documentation fails the strict
build.  The public names are the ``__all__`` of every package under ``frankwolfe/`` and
``applications/`` whose path has no private (``_``) part, found by walking the folders
(a new subpackage is checked without being listed here), and of the public modules of
:data:`PUBLIC_MODULES`.  A public package without ``__all__`` fails the build too, but
for those of :data:`NO_EXPORTS`.
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
# public modules (not packages) whose __all__ is part of the API, by import name
PUBLIC_MODULES = {
    "frankwolfe.cache": "frankwolfe/cache.py",
    "frankwolfe.compile": "frankwolfe/compile.py",
    "frankwolfe.applications.fetch": "applications/fetch.py",
    "frankwolfe.applications.graph_matching": "applications/graph_matching.py",
}
# public packages that export nothing themselves, and why
NO_EXPORTS = {
    # a namespace of application packages, each with its own __all__ (checked); an
    # __all__ of submodule names would make `import *` import every application
    "frankwolfe.applications",
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


def _exported(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return [e.value for e in node.value.elts]
    return None


def public_sources() -> dict[str, Path]:
    """The public packages and modules, by import name, with their source files."""
    found: dict[str, Path] = {}
    for folder, name in (("frankwolfe", "frankwolfe"), ("applications", "frankwolfe.applications")):
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            parts = init.parent.relative_to(ROOT / folder).parts
            if not any(p.startswith("_") for p in parts):
                found[".".join((name, *parts))] = init
    found.update({name: ROOT / source for name, source in PUBLIC_MODULES.items()})
    return found


def missing_names(pages: list[Path]) -> list[str]:
    """The public names no ``::: name`` directive of ``pages`` renders (a package
    without ``__all__`` outside :data:`NO_EXPORTS` is listed as ``package.__all__``)."""
    rendered: set[str] = set()
    for page in pages:
        rendered.update(DIRECTIVE.findall(page.read_text()))
    sources = public_sources()
    exports = {package: _exported(source) for package, source in sources.items()}
    missing = []
    for package, names in exports.items():
        if names is None:
            if package not in NO_EXPORTS:
                missing.append(f"{package}.__all__")
            continue
        for name in names:
            # a name re-exported by an enclosing package is documented once, there
            homes = [p for p, e in exports.items()
                     if (p == package or package.startswith(p + "."))
                     and name in (e or ())]
            if not any(f"{home}.{name}" in rendered for home in homes):
                missing.append(f"{package}.{name}")
    return missing


def on_files(files, config, **kwargs):
    missing = missing_names([Path(f.abs_src_path) for f in files.documentation_pages()])
    if missing:
        log.warning("public names missing from the API reference (add a '::: name' "
                    "directive to a page under docs/api/): %s", ", ".join(missing))
    return files

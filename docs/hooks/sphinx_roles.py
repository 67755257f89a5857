"""griffe extension: turn the Sphinx roles of the docstrings into cross-references.

The docstrings are numpydoc, written with Sphinx roles (``:class:`Objective```,
``:func:`~frankwolfe.applications.data.get_data_home```).
mkdocstrings renders Markdown, where a role would show as raw text; this extension
rewrites each role into an optional mkdocs-autorefs reference: a link when the
target is rendered in the API reference, plain code otherwise (no warning). A
leading ``~`` shows the last component only, as in Sphinx. Names are resolved in
the scope of the documented object, so ``:class:`Objective``` in a core module
links to ``frankwolfe.Objective``'s entry.

It also shows the public signature of the solvers decorated with ``@solver`` (the run
keywords it injects at import time), which the static source does not list, and splits
numpydoc entries that name several parameters (``a, b : float``) into one entry per
name: griffe gives such an entry the first name's default for every name, so the
table would show ``b`` with ``a``'s default.
"""

from __future__ import annotations

import html
import importlib
import inspect
import re

import griffe

# a numpydoc entry naming several parameters: "    a, b : type"
SHARED_ENTRY = re.compile(
    r"^(?P<indent> *)(?P<names>[A-Za-z_]\w*(?:, *[A-Za-z_]\w*)+) : (?P<rest>.*)$")
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|obj|exc|const):`(~?)([^`<>]+)`")


def _resolve(obj: griffe.Object, name: str) -> str:
    head, _, rest = name.partition(".")
    try:
        full = obj.resolve(head) if (obj.is_module or obj.parent) else name
    except (griffe.NameResolutionError, AttributeError, KeyError):
        return name
    return f"{full}.{rest}" if rest else full


def _decorated_by_solver(obj: griffe.Object) -> bool:
    return obj.is_function and any(
        str(d.value).split("(")[0].rsplit(".", 1)[-1] == "solver" for d in obj.decorators)


def _public_signature(obj: griffe.Function) -> None:
    """``@solver`` replaces ``options: RunOptions`` by the run keywords at import time;
    the static source does not show them, so take the signature and the docstring
    ("Parameters" with the run keywords' entries) from the imported function."""
    module, _, name = obj.path.rpartition(".")
    func = getattr(importlib.import_module(module), name)
    old = {p.name: p for p in obj.parameters}
    params = []
    for p in inspect.signature(func).parameters.values():
        if p.name in old:
            params.append(old[p.name])
            continue
        annotation = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(
            p.annotation)
        params.append(griffe.Parameter(
            p.name, annotation=annotation, kind=griffe.ParameterKind(p.kind.description),
            default=None if p.default is inspect.Parameter.empty else repr(p.default)))
    obj.parameters = griffe.Parameters(*params)
    if obj.docstring is not None and func.__doc__:
        obj.docstring.value = inspect.cleandoc(func.__doc__)


def _split_shared_entries(text: str, parameters: set[str]) -> str:
    """One numpydoc entry per parameter where an entry names several of ``parameters``
    (each copy keeps the shared type and description)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = SHARED_ENTRY.match(lines[i])
        names = [n.strip() for n in match.group("names").split(",")] if match else []
        if not match or not set(names) <= parameters:
            out.append(lines[i])
            i += 1
            continue
        indent = len(match.group("indent"))
        j = i + 1
        while j < len(lines) and (not lines[j].strip()
                                  or len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():  # blank lines stay after the entries
            j -= 1
        for name in names:
            out.append(f"{match.group('indent')}{name} : {match.group('rest')}")
            out.extend(lines[i + 1:j])
        i = j
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if _decorated_by_solver(obj):
            _public_signature(obj)
        if obj.docstring is not None and (obj.is_function or obj.is_class):
            names = {p.name for p in getattr(obj, "parameters", ())}
            if names:
                obj.docstring.value = _split_shared_entries(obj.docstring.value, names)
        docstring = obj.docstring
        if docstring is None or ":" not in docstring.value:
            return

        def link(match: re.Match) -> str:
            tilde, target = match.group(1), match.group(2).strip()
            shown = target.rsplit(".", 1)[-1] if tilde else target
            identifier = target if target.startswith("frankwolfe.") else _resolve(obj, target)
            return (f'<autoref identifier="{html.escape(identifier)}" optional>'
                    f"<code>{html.escape(shown)}</code></autoref>")

        docstring.value = ROLE.sub(link, docstring.value)

"""griffe extension: turn the Sphinx roles of the docstrings into cross-references.

The docstrings are numpydoc, written with Sphinx roles (``:class:`Objective```,
``:func:`~frankwolfe.applications.structured_svm.datasets.get_data_home```).
mkdocstrings renders Markdown, where a role would show as raw text; this extension
rewrites each role into an optional mkdocs-autorefs reference: a link when the
target is rendered in the API reference, plain code otherwise (no warning). A
leading ``~`` shows the last component only, as in Sphinx. Names are resolved in
the scope of the documented object, so ``:class:`Objective``` in a core module
links to ``frankwolfe.Objective``'s entry.
"""

from __future__ import annotations

import html
import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|obj|exc|const):`(~?)([^`<>]+)`")


def _resolve(obj: griffe.Object, name: str) -> str:
    head, _, rest = name.partition(".")
    try:
        full = obj.resolve(head) if (obj.is_module or obj.parent) else name
    except (griffe.NameResolutionError, AttributeError, KeyError):
        return name
    return f"{full}.{rest}" if rest else full


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
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

"""Attributes of a package imported on first access (PEP 562).

The scikit-learn estimators inherit ``sklearn.base.BaseEstimator``, so the module
that defines one imports scikit-learn, slow to import, when it is imported
(benchmarks/README.md, "Measurements behind code choices").
A package lists such names in a table ``{name: submodule}`` and answers them from
its module-level ``__getattr__`` and ``__dir__``: ``import`` of the package stays
light, and ``from package import Estimator`` pays for scikit-learn then.  The
package imports the same names under ``if TYPE_CHECKING:`` so that type checkers
and static documentation tools see them as before.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["load", "names"]


def load(package: str, table: Mapping[str, str], name: str) -> Any:
    """The attribute ``name`` of ``package`` from the submodule ``table[name]``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : mapping
        ``{attribute: relative submodule}``, e.g. ``{"StructuredSVM": ".estimator"}``.
    name : str
        The attribute asked for.

    Raises
    ------
    AttributeError
        When ``name`` is not in the table (the usual error of a missing attribute).
    """
    try:
        submodule = table[name]
    except KeyError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(submodule, package), name)
    # bound in the package: later look-ups find it without calling __getattr__ again
    setattr(sys.modules[package], name, value)
    return value


def names(namespace: Iterable[str], table: Mapping[str, str]) -> list[str]:
    """``dir()`` of a package: its bound names and the lazy ones."""
    return sorted(set(namespace) | set(table))

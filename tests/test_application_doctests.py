"""The Examples sections of every module of ``frankwolfe.applications`` run as doctests.

pytest's ``--doctest-modules`` collects ``frankwolfe/`` only: the applications' source
folder is not importable under its own name (``applications/__init__.py`` refuses it),
so their modules are found through the installed package here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

import frankwolfe.applications as apps


def _modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    names = []
    for info in pkgutil.walk_packages(apps.__path__, apps.__name__ + "."):
        module = importlib.import_module(info.name)
        if any(t.examples for t in finder.find(module)):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_the_walk_finds_the_applications_examples():
    # the walk itself can fail silently (an empty list tests nothing)
    assert {"frankwolfe.applications.lasso.solve", "frankwolfe.applications.matching.qap",
            "frankwolfe.applications.structured_svm.latent_ssvm"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the examples converge
        failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE,
                                          report=True)
    assert failures == 0 and tried > 0

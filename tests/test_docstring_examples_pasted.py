"""Every public name's docstring Examples run as a user pastes them into a session that
has imported only numpy (under pytest's doctest collection they see their module's
globals, and a class used without its import passed there).

The public names: ``frankwolfe.__all__``, the ``__all__`` of every public module of
``frankwolfe.applications``, and the public methods (and properties) of their classes.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import doctest
import importlib
import inspect
import io
import pkgutil

import numpy as np
import pytest

import frankwolfe as fw
import frankwolfe.applications as apps

#: examples that fit a model for seconds: their imports are still checked by
#: test_examples_import_what_they_use, and the doctest collection runs them
SLOW = {
    "frankwolfe.applications.structured_svm.StructuredSVM",
    "frankwolfe.applications.structured_svm.KernelStructuredSVM",
    "frankwolfe.applications.structured_svm.LatentSSVM",
}

def _public_modules():
    yield fw
    for info in pkgutil.walk_packages(apps.__path__, f"{apps.__name__}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            module = importlib.import_module(info.name)
            if hasattr(module, "__all__"):
                yield module


def _members(cls):
    """The public methods and properties of ``cls``, its inherited ones too."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        elif isinstance(raw, property):
            raw = raw.fget
        if inspect.isfunction(raw):
            yield name, raw


def _collect():
    found: dict[int, tuple[str, str]] = {}  # by object: a name re-exported is run once

    def add(qualname, obj):
        doc = inspect.getdoc(obj) if callable(obj) else None
        if doc and ">>>" in doc:
            # an inherited method is named by the class that defines it
            if id(obj) not in found or ("." in obj.__qualname__
                                        and qualname.endswith(f".{obj.__qualname__}")):
                found[id(obj)] = (qualname, doc)

    for module in _public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            add(f"{module.__name__}.{name}", obj)
            if inspect.isclass(obj):
                for member, func in _members(obj):
                    add(f"{module.__name__}.{name}.{member}", func)
    return dict(found.values())


EXAMPLES = _collect()


def _run(qualname, doc):
    test = doctest.DocTestParser().get_doctest(doc, {"np": np}, qualname, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = runner.run(test, out=out.write)
    return result, out.getvalue()


def test_the_collection_reaches_methods_and_applications():
    # the names the audit found failing: a method of a core class, an application's
    # class and function, a name of a subpackage's own __all__
    for name in ("frankwolfe.Box.decompose", "frankwolfe.ProbabilitySimplex.dual_solution",
                 "frankwolfe.applications.lasso.ConstrainedLasso",
                 "frankwolfe.applications.lasso.solve_lasso",
                 "frankwolfe.applications.matching.qap_value"):
        assert name in EXAMPLES, name
    assert any(name.endswith(".ConllLike") for name in EXAMPLES)


@pytest.mark.parametrize("qualname", sorted(EXAMPLES))
def test_examples_run_in_a_fresh_session(qualname):
    if qualname in SLOW:
        pytest.skip("fits a model for seconds; its imports are checked statically")
    result, out = _run(qualname, EXAMPLES[qualname])
    assert result.failed == 0, out[-2000:]


def _unbound_names(source: str) -> set[str]:
    """Names an example reads that it never binds (nor are builtins or ``np``)."""
    tree = ast.parse(source)
    used, bound = set(), {"np"} | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return used - bound


@pytest.mark.parametrize("qualname", sorted(EXAMPLES))
def test_examples_import_what_they_use(qualname):
    examples = doctest.DocTestParser().get_examples(EXAMPLES[qualname])
    source = "\n".join(e.source for e in examples)
    assert not _unbound_names(source), (
        f"{qualname}'s Examples use {sorted(_unbound_names(source))} without importing them")


def test_the_static_check_finds_a_missing_import():
    assert _unbound_names("S = Box(0.0, 1.0).decompose(np.zeros(2))\nS.weights") == {"Box"}
    assert not _unbound_names("from frankwolfe import Box\n"
                              "S = [Box(t, 1.0) for t in range(2)]\nf = lambda z: z + S[0]")

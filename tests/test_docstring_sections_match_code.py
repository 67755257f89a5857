"""Docstring sections and doc pages agree with the code they describe: Parameters in
signature order (as numpydoc's and mkdocstrings' parsers read them), Attributes that a
fit really sets, and the constructor arguments and columns a page names."""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications import graph_matching, lasso, structured_svm, traffic
from frankwolfe.applications.structured_svm import fitting as ssvm_estimator
from frankwolfe.applications.traffic import multiclass
from frankwolfe.compiled import protocol

griffe = pytest.importorskip("griffe")

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _sections(obj):
    doc = griffe.Docstring(inspect.getdoc(obj) or "", parser=griffe.Parser.numpy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # griffe warns of entries without a type
        return {s.kind.value: s.value for s in doc.parse() if s.kind.value != "text"}


def _names(entries):
    # "A, b" documents two parameters in one entry; "**options" is "options"
    return [n.strip().lstrip("*") for e in entries for n in e.name.split(",")]


def _signature(obj):
    return [p.name for p in inspect.signature(obj).parameters.values()]


@pytest.mark.parametrize("obj", [
    multiclass.ClassOriginFlows, lasso.lasso_path, traffic.Network,
    structured_svm.EdgeFeatureGraphCRF, structured_svm.GridCRF,
    structured_svm.DirectionalGridCRF, protocol.CompiledBlocks,
    lasso.radius_from_penalty, lasso.alpha_max, lasso.penalty_from_radius,
    graph_matching.matching_model, graph_matching.normalize_histograms,
    structured_svm.KernelStructuredSVM,
], ids=lambda o: o.__qualname__)
def test_parameters_in_signature_order(obj):
    assert _names(_sections(obj).get("parameters", [])) == _signature(obj)


@pytest.mark.parametrize("obj", [lasso.radius_from_penalty, lasso.alpha_max,
                                 lasso.penalty_from_radius, graph_matching.matching_model,
                                 graph_matching.normalize_histograms],
                         ids=lambda o: o.__qualname__)
def test_functions_document_what_they_return(obj):
    assert "returns" in _sections(obj)


def test_kernel_ssvm_attributes_are_what_a_fit_sets():
    from frankwolfe.applications.structured_svm import MulticlassModel
    from frankwolfe.applications.structured_svm.kernel_bcfw import LabelMatchKernel
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    Y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three passes do not converge: no matter here
        svm = structured_svm.KernelStructuredSVM(
            MulticlassModel(2, 2), LabelMatchKernel("rbf", gamma=1.0), lam=0.1,
            max_passes=3, random_state=0).fit(list(X), list(Y))
    fitted = {k for k in vars(svm) if k.endswith("_") and not k.startswith("_")}
    documented = set(_names(_sections(structured_svm.KernelStructuredSVM)["attributes"]))
    # feature_names_in_ is set only by a fit on a pandas DataFrame
    assert fitted == documented - {"feature_names_in_"}


def test_structured_svm_page_lists_every_history_column():
    page = (DOCS / "structured_svm.md").read_text(encoding="utf-8")
    paragraph = page[page.index("`history_` columns:"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    listed = dict.fromkeys(re.findall(r"`(\w+)`", paragraph))  # first mentions, in order
    columns = list(ssvm_estimator._COLUMNS)
    assert [c for c in listed if c in columns] == columns


def test_step_size_page_names_real_arguments():
    page = (DOCS / "step-sizes.md").read_text(encoding="utf-8")
    calls = re.findall(r"`(\w+)\(([^`()]*)\)", page)
    checked = 0
    for name, args in calls:
        if name not in fw.__all__ or not inspect.isclass(getattr(fw, name)) or not args:
            continue
        params = _signature(getattr(fw, name))
        for arg in args.split(","):
            # `Name(param)` and `Name(param=value)` name a parameter; `Name(1)` a value
            word = arg.split("=")[0].strip()
            if word.isidentifier():
                assert word in params, (name, args, params)
                checked += 1
    assert checked >= 4  # Agnostic, ShortStep, NonConvexAgnostic, Monotonic

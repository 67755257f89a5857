"""The ground floor extensions build on: the compiled block protocol imports nothing
above it, one word table names the step rules, methods register themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.step_size import (
    STEP_RULES,
    Adaptive,
    Agnostic,
    Armijo,
    SaddleBacktracking,
    SaddleStep,
    make_step_size,
)

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
    return names


def test_compiled_package_imports_nothing_from_the_rest_of_the_core():
    for path in (ROOT / "frankwolfe" / "compiled").glob("*.py"):
        for name in _imports(path):
            assert not name.startswith("..") and "frankwolfe" not in name, (path.name, name)


def test_objectives_and_domains_import_nothing_from_the_algorithms():
    for folder in ("objectives", "lmo", "compiled"):
        for path in (ROOT / "frankwolfe" / folder).rglob("*.py"):
            for name in _imports(path):
                assert "algorithms" not in name, (path, name)


def test_each_word_names_one_rule_in_every_context_that_accepts_it():
    L = fw.BilinearObjective(np.array([[1.0, -1.0], [-1.0, 1.0]]), mu_x=1.0, mu_y=1.0)
    X, Y = fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)
    saddle = dict(context="saddle", objective=L, domains=(X, Y))
    assert isinstance(make_step_size("armijo"), Armijo)
    assert isinstance(make_step_size("adaptive"), Adaptive)
    assert isinstance(make_step_size("saddle_backtracking", **saddle), SaddleBacktracking)
    assert isinstance(make_step_size("curvature", C=4.0, **saddle), SaddleStep)
    for word in ("agnostic", "fictitious"):  # accepted everywhere, the same rule
        a, b = make_step_size(word), make_step_size(word, **saddle)
        assert type(a) is type(b) is Agnostic and a.ell == b.ell
    assert make_step_size("fictitious").ell == 1.0
    with pytest.raises(ValueError, match=r"unknown step_size 'backtracking'"):
        make_step_size("backtracking")
    with pytest.raises(ValueError, match=r"unknown saddle step_size 'backtracking'"):
        make_step_size("backtracking", **saddle)
    with pytest.raises(ValueError, match=r"'curvature' is a rule of saddle"):
        make_step_size("curvature")
    with pytest.raises(ValueError, match=r"unknown saddle step_size 'armijo'.*rule of block"):
        make_step_size("armijo", **saddle)
    assert set(STEP_RULES) == {"agnostic", "fictitious", "log_agnostic", "nonconvex",
                               "monotonic", "short", "exact", "adaptive", "armijo", "secant",
                               "curvature", "local", "saddle_backtracking"}


def test_block_context_defaults_and_checks():
    from frankwolfe.algorithms.block_steps import make_block_step

    f = fw.FunctionObjective(lambda x: float(x @ x), lambda x: 2 * x, shape=(4,))
    rule = make_step_size(None, context="block", objective=f, step=make_block_step("fw"))
    assert isinstance(rule, Agnostic)
    rule = make_step_size(None, context="block", objective=f, step=make_block_step("away"))
    assert isinstance(rule, Adaptive)
    with pytest.raises(ValueError, match="needs a line search"):
        make_step_size("agnostic", context="block", objective=f, step=make_block_step("away"))
    with pytest.raises(TypeError, match="needs the objective and the block step"):
        make_step_size("agnostic", context="block")


def test_a_method_registers_itself_beside_its_definition():
    from frankwolfe import registry

    @fw.register("test_floor_fw", "Test_Floor_Alias")
    def my_fw(objective, domain, **options):
        return fw.frank_wolfe(objective, domain, **options)

    try:
        assert {"test_floor_fw", "test_floor_alias"} <= set(fw.available_methods())
        f = fw.QuadraticObjective(np.eye(3), -np.ones(3))
        res = fw.minimize(f, fw.ProbabilitySimplex(dim=3), method="TEST_FLOOR_FW", tol=1e-9)
        assert res.method == "fw" and res.success
    finally:
        for name in ("test_floor_fw", "test_floor_alias"):
            registry._METHODS.pop(name)
    with pytest.raises(ValueError, match="unknown method 'test_floor_fw'"):
        fw.minimize(f, fw.ProbabilitySimplex(dim=3), method="test_floor_fw")
    with pytest.raises(TypeError, match="give one or more method names"):
        fw.register()

"""The declared version floors and the pins of `make test-min` (ci/constraints-min.txt) agree,
and optional parts name the extra that installs them."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# the extras that `make test-min` installs next to the runtime dependencies
EXTRAS = ("test", "plot", "pandas")


def _floors() -> dict[str, Version]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    reqs = list(project["dependencies"])
    for extra in EXTRAS:
        reqs += project["optional-dependencies"][extra]
    floors = {}
    for text in reqs:
        req = Requirement(text)
        lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
        assert lows, f"{text}: every dependency declares a floor (>=)"
        floors[req.name.lower()] = max(lows + [floors.get(req.name.lower(), Version("0"))])
    return floors


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "ci" / "constraints-min.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)", line)
            assert m, f"ci/constraints-min.txt: expected NAME==VERSION, got {line!r}"
            pins[m.group(1).lower()] = Version(m.group(2))
    return pins


def test_every_floor_is_pinned_for_make_test_min():
    floors, pins = _floors(), _pins()
    assert set(floors) == set(pins), (sorted(set(floors) - set(pins)),
                                      sorted(set(pins) - set(floors)))
    for name, low in floors.items():
        assert pins[name] == low, f"{name}: pyproject floor {low}, constraints pin {pins[name]}"


def test_to_pandas_names_the_extra_when_pandas_is_missing(monkeypatch):
    from frankwolfe import History

    h = History(("a",))
    h.append(a=1.0)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match=r"frankwolfe\[pandas\]"):
        h.to_pandas()


def test_the_files_make_test_floors_runs_exist():
    """`make test-floors` (CI's part of test-min) names the files (``file``) and single
    tests (``file::test``) it runs; a renamed or removed one must not leave a stale name
    behind (pytest would refuse the run, or silently run nothing of a test)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^FLOORS := (.*?)\n(?!\t)", text, re.S | re.M)
    assert m, "Makefile: FLOORS not found"
    names = m.group(1).replace("\\\n", " ").split()
    assert names and len(names) == len(set(names))
    missing = []
    for name in names:
        file, _, test = name.partition("::")
        path = ROOT / "tests" / f"{file}.py"
        if not path.is_file() or test and not re.search(rf"^def {re.escape(test)}\(",
                                                          path.read_text(), re.M):
            missing.append(name)
    assert not missing, missing

"""The house rules of CONTRIBUTING.md that a test can hold in CI.

"Small modules named for what they hold; none over 700 lines (split by
responsibility, not by line count)": every Python module of the core
(``frankwolfe/``) and of the applications (``applications/``) is read, and the
offenders are named with their lengths.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the most lines a module of frankwolfe/ or applications/ may have (CONTRIBUTING.md)
MAX_LINES = 700
PACKAGES = ("frankwolfe", "applications")


def _line_count(path: Path) -> int:
    """The lines of ``path`` as an editor numbers them (a last line without its newline
    counts too)."""
    return len(path.read_text(encoding="utf-8").splitlines())


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _too_long(paths: list[Path], root: Path = ROOT, limit: int = MAX_LINES) -> list[str]:
    """``"path: N lines"`` for each of ``paths`` over ``limit`` lines, paths relative
    to ``root`` (the repository's)."""
    out = []
    for path in paths:
        n = _line_count(path)
        if n > limit:
            out.append(f"{path.relative_to(root).as_posix()}: {n} lines")
    return out


def test_no_module_is_over_700_lines():
    modules = _modules()
    if not modules:
        pytest.skip("no frankwolfe/ or applications/ sources beside the tests")
    # the walk reaches both trees, the applications' subpackages included
    names = {p.relative_to(ROOT).as_posix() for p in modules}
    assert "frankwolfe/active_set.py" in names
    assert "applications/structured_svm/models/chain/model.py" in names
    offenders = _too_long(modules)
    assert offenders == [], (
        f"modules over {MAX_LINES} lines (CONTRIBUTING.md, house rules: split them by "
        f"responsibility, not by line count): {', '.join(offenders)}")


def test_the_check_names_an_offender_and_its_length(tmp_path):
    """The check counts lines as ``wc -l`` does (plus a last line without a newline)
    and names the file and its length; a module of exactly the limit passes."""
    ok = tmp_path / "ok.py"
    ok.write_text("x = 1\n" * MAX_LINES)
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * MAX_LINES + "y = 2")  # 701 lines, the last unterminated
    assert _line_count(ok) == MAX_LINES and _line_count(long) == MAX_LINES + 1
    assert _too_long([ok, long], root=tmp_path) == [f"long.py: {MAX_LINES + 1} lines"]

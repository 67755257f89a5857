"""The code of another git revision, importable next to this checkout's, for the
before/after runs of the benchmarks (``--baseline REV``)."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["export_revision"]


def export_revision(ref: str, where: Path) -> Path:
    """``git archive`` of ``ref`` laid out as an importable ``frankwolfe`` package under
    ``where``; returns the folder to put first on ``PYTHONPATH``."""
    tar = where / "code.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(tar), ref], check=True)
    src = where / "src"
    with tarfile.open(tar) as t:
        t.extractall(src, filter="data")
    pkg = where / "pkg"
    pkg.mkdir()
    (pkg / "frankwolfe").symlink_to(src / "frankwolfe")
    # the installed layout: frankwolfe.applications is the top-level applications/ folder
    link = src / "frankwolfe" / "applications"
    if not link.exists():
        link.symlink_to(src / "applications")
    return pkg

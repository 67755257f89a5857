"""The benchmarks' result files: JSON written atomically (the project's writer: a
temporary file beside the target, synced, then renamed), its folder made first."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from frankwolfe.compiled.atomic_files import atomic_write


def write_json(path: str | os.PathLike[str], obj: Any, **dump: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` (``json.dump`` keywords in ``dump``; indent 1
    unless given); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    dump.setdefault("indent", 1)
    with atomic_write(out, "w") as fh:
        json.dump(obj, fh, **dump)
    return out


def write_figure(fig: Any, path: str | os.PathLike[str], **savefig: Any) -> Path:
    """Save the matplotlib figure ``fig`` to ``path`` the same way (``savefig``
    keywords, the format from the suffix); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    savefig.setdefault("format", out.suffix.lstrip(".") or "png")
    with atomic_write(out, "wb") as fh:
        fig.savefig(fh, **savefig)
    return out

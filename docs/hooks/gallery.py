"""MkDocs hook: the examples gallery.

Every script in ``examples/`` is run once per build, each in its own Python process
(``sys.executable``, matplotlib's Agg backend, two at a time), as
``python examples/NAME.py --out DIR`` plus ``--quick`` when the script offers it.
Each becomes a page ``gallery/NAME.md``: the script's docstring (Markdown; its first
line is the title), the figures it wrote to ``DIR``, its printed output and its
source. A script that exits with status 77 (:data:`SKIPPED`) was skipped on purpose,
for example because its data set is not on the machine: the page shows its message
and the calls of ``frankwolfe.applications.fetch`` that download the data, taken from
the script's docstring (every ``fetch_*(...)`` call written there in backticks).
Any other failure aborts the build, with the script's error output.

``mkdocs serve`` reuses the results of a script that succeeded with the same source
and arguments in an earlier run; ``mkdocs build`` always runs every script, unless the
environment variable ``GALLERY_REUSE=1`` asks it to reuse them too (for editing the
pages; the library may have changed since, so CI never sets it).
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.gallery")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BUILD = ROOT / "build" / "gallery"
SKIPPED = 77  # the exit status of a script that skips itself (automake's convention)
TIMEOUT = 900  # seconds per script
FIRST = ("demo.py",)  # shown first; the others follow in alphabetical order

_reuse = False


def on_startup(command, dirty, **kwargs):
    global _reuse
    _reuse = command == "serve" or os.environ.get("GALLERY_REUSE") == "1"


def _scripts() -> list[Path]:
    found = sorted(EXAMPLES.glob("*.py"))
    return sorted(found, key=lambda p: (p.name not in FIRST, p.name))


def _arguments(source: str, out: Path) -> list[str]:
    return ["--out", str(out)] + (["--quick"] if '"--quick"' in source else [])


def _run(script: Path) -> dict:
    source = script.read_text()
    out = BUILD / script.stem
    args = _arguments(source, out)
    key = hashlib.sha256((source + "\0" + " ".join(args)).encode()).hexdigest()
    record = out / "run.json"
    if _reuse and record.is_file():
        cached = json.loads(record.read_text())
        if cached["key"] == key and cached["status"] == 0:  # a skipped script is retried
            return cached
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT)
        status, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as err:
        status, stdout, stderr = -1, err.stdout or "", f"timed out after {TIMEOUT} s"
    result = {"key": key, "status": status, "seconds": time.perf_counter() - t0,
              "stdout": stdout, "stderr": stderr, "args": args}
    record.write_text(json.dumps(result))
    return result


def _docstring(script: Path) -> tuple[str, str]:
    doc = ast.get_docstring(ast.parse(script.read_text())) or script.stem
    title, _, body = doc.partition("\n")
    return title.strip().rstrip("."), body.strip()


def _fetch_calls(body: str) -> list[str]:
    """The ``fetch_*(...)`` calls named in backticks in a docstring, in order, once each."""
    calls = re.findall(r"`(fetch_\w+\([^`]*\))`", body)
    return list(dict.fromkeys(calls))


def _fetch_advice(body: str, command: str) -> list[str]:
    """Lines (inside the admonition) that say how to get the data and run the script."""
    calls = _fetch_calls(body)
    if not calls:
        return [f"    On a machine with the data, `{command}` produces the output "
                "and figures of this page; [Data sets](../data.md) says where to get them.", ""]
    names = ", ".join(dict.fromkeys(call.partition("(")[0] for call in calls))
    code = [f"from frankwolfe.applications.fetch import {names}", "", *calls]
    return ["    Download the data once (into `$FRANKWOLFE_DATA`, else `~/frankwolfe_data`; "
            "see [Data sets](../data.md)):", "",
            *_indented(_fenced("\n".join(code), "python")),
            f"    then `{command}` produces the output and figures of this page.", ""]


def _indented(lines: list[str]) -> list[str]:
    """``lines`` (which may hold newlines) indented into an admonition's body."""
    return [("    " + line).rstrip() for line in "\n".join(lines).split("\n")]


def _command(script: Path, args: list[str]) -> str:
    shown = ["python", f"examples/{script.name}"]
    shown += [a for a in args if a == "--quick"]
    return " ".join(shown)


def _fenced(text: str, language: str) -> list[str]:
    """A fenced code block longer than any backtick run inside ``text`` (a docstring
    may hold a fenced block of its own)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence, ""]


def _page(script: Path, result: dict, figures: list[Path]) -> str:
    title, body = _docstring(script)
    root = str(ROOT) + os.sep
    stdout = result["stdout"].replace(root, "").rstrip()
    lines = [f"# {title}", "", body, ""]
    command = _command(script, result["args"])
    if result["status"] == SKIPPED:
        message = (stdout or result["stderr"]).strip().replace(root, "")
        message = "\n".join(textwrap.fill(line, 88, break_long_words=False, break_on_hyphens=False)
                            for line in message.splitlines())  # no sideways scrolling
        lines += ['!!! warning "Not run when this page was built: its data were not there"',
                  "", *_indented(_fenced(message, "text")),
                  *_fetch_advice(body, command)]
    else:
        lines += ["## Output", "",
                  f"This page ran `{command}` ({result['seconds']:.0f} s).", ""]
        lines += [f"![{f.stem}]({script.stem}/{f.name})" for f in figures] + [""]
        if stdout:
            lines += _fenced(stdout, "text")
    lines += ["## Source", "", f"`examples/{script.name}`:", "",
              *_fenced(script.read_text().rstrip(), "python")]
    return "\n".join(lines)


def on_files(files, config, **kwargs):
    scripts = _scripts()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, scripts))
    failed = [(s, r) for s, r in zip(scripts, results) if r["status"] not in (0, SKIPPED)]
    if failed:
        report = "\n\n".join(f"examples/{s.name} {' '.join(r['args'])} exited with status "
                             f"{r['status']}:\n{r['stderr'][-3000:]}" for s, r in failed)
        raise PluginError(f"gallery: {len(failed)} example(s) failed\n{report}")
    cards = []
    for script, result in zip(scripts, results):
        figures = sorted((BUILD / script.stem).glob("*.png"))
        for fig in figures:
            files.append(File.generated(config, f"gallery/{script.stem}/{fig.name}",
                                        abs_src_path=str(fig)))
        files.append(File.generated(config, f"gallery/{script.stem}.md",
                                    content=_page(script, result, figures)))
        title, _ = _docstring(script)
        thumb = (f"![]({script.stem}/{figures[0].name})" if figures else
                 "*(not run: its data were not downloaded; the page says how)*"
                 if result["status"] == SKIPPED else "")
        cards.append(f"-   [**{title}**]({script.stem}.md)\n\n    ---\n\n    {thumb}\n")
        log.info("gallery: examples/%s %s (%.1f s)", script.name,
                 "skipped" if result["status"] == SKIPPED else "ran", result["seconds"])
    index = ["# Examples gallery", "",
             "Every script in the repository's `examples/` folder, run when this site was "
             "built (long runs in their `--quick` mode). Each page shows the figures, the "
             "printed output and the source; the script's docstring gives the command for "
             "the full-size run.", "", '<div class="grid cards" markdown>', "", *cards,
             "</div>", ""]
    files.append(File.generated(config, "gallery/index.md", content="\n".join(index)))
    return files

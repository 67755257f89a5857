"""Compile ahead of time: ``python -m frankwolfe.compile [--all | names...] [--list]
[--clear]``.

The first call of a compiled path (the numba kernels, the BCFW pass driver) compiles it
and caches the machine code on disk (:mod:`frankwolfe.cache`); later processes load it.
This command makes that first call beforehand, for example when building a Docker image
or in a CI cache step, by running warm-up jobs: tiny problems that compile exactly the
specializations real first calls compile.  The core's jobs live in
:mod:`frankwolfe._warmup`; packages add theirs under the entry-point group
``frankwolfe.warmup`` (a name and a function without arguments, whose docstring's first
line describes it), as frankwolfe's applications do in ``pyproject.toml``.

Examples
--------
.. code-block:: bash

    python -m frankwolfe.compile --list          # the jobs
    python -m frankwolfe.compile --all           # all of them
    python -m frankwolfe.compile ssvm-chain      # some of them
    python -m frankwolfe.compile --clear         # empty the cache
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["WarmupJob", "WarmupReport", "warmup_jobs", "warm", "main"]

#: the entry-point group of other packages' warm-up jobs
ENTRY_POINT_GROUP = "frankwolfe.warmup"


@dataclass(frozen=True)
class WarmupJob:
    """A warm-up job: ``run()`` compiles what its description says.

    Attributes
    ----------
    name : str
        The job's name on the command line.
    description : str
        One line (the first of the function's docstring).
    run : callable
        The job (no arguments).
    source : str
        ``"frankwolfe"`` for the core's jobs, else the distribution that registered it.
    """

    name: str
    description: str
    run: Callable[[], Any]
    source: str = "frankwolfe"


def _describe(fn: Callable[..., Any]) -> str:
    doc = (getattr(fn, "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n")[0].split()) or getattr(fn, "__name__", "")


def warmup_jobs() -> dict[str, WarmupJob]:
    """The warm-up jobs: the core's, then those of the entry-point group
    ``frankwolfe.warmup`` (by name).

    Returns
    -------
    dict of str to WarmupJob
        Job by name.  A job whose entry point cannot be loaded is listed with its error
        as description, and raises it when run.
    """
    from importlib.metadata import entry_points

    from ._warmup import CORE_JOBS

    jobs = {name: WarmupJob(name, _describe(fn), fn) for name, fn in CORE_JOBS.items()}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in jobs:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        try:
            fn = ep.load()
        except Exception as exc:  # a broken plug-in must not hide the other jobs
            err = exc

            def fail(err: Exception = err) -> None:
                raise err

            jobs[ep.name] = WarmupJob(ep.name, f"cannot be loaded ({type(exc).__name__}: {exc})",
                                      fail, dist)
            continue
        jobs[ep.name] = WarmupJob(ep.name, _describe(fn), fn, dist)
    return jobs


@dataclass(frozen=True)
class WarmupReport:
    """What :func:`warm` did.

    Attributes
    ----------
    seconds : dict of str to float
        Wall time per job.
    compiled : dict of str to int
        numba compilations per job (0: the cache served everything).
    failed : dict of str to str
        The error of each job that failed.
    """

    seconds: dict[str, float]
    compiled: dict[str, int]
    failed: dict[str, str]


def warm(jobs: Sequence[WarmupJob], progress: bool = True) -> WarmupReport:
    """Run ``jobs`` (debug mode off, as the compiled paths need) and count numba's
    compilations.

    Run it alone, as the command line does: while the jobs run, debug mode is off and
    their warnings are silenced for the whole process (its threads too).

    Parameters
    ----------
    jobs : sequence of WarmupJob
    progress : bool, default True
        Show a tqdm progress bar.

    Returns
    -------
    WarmupReport
        A failing job is reported, not raised: the others still run.
    """
    from numba.core import event
    from tqdm.auto import tqdm

    from ._config import debug

    class Counter(event.Listener):
        n = 0

        def on_start(self, ev: Any) -> None:
            self.n += 1

        def on_end(self, ev: Any) -> None:
            pass

    seconds: dict[str, float] = {}
    compiled: dict[str, int] = {}
    failed: dict[str, str] = {}
    bar = tqdm(jobs, desc="compiling", unit="job", disable=not progress, file=sys.stderr)
    for job in bar:
        bar.set_postfix_str(job.name)
        counter = Counter()
        t0 = time.perf_counter()
        try:
            # tiny budgets end before convergence: the warnings say nothing here.  The
            # jobs' own threads warn too, and the filters are the process's (Python 3.11
            # has no thread-local ones), as is debug mode: warm runs alone
            with debug(False), event.install_listener("numba:compile", counter), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                job.run()
        except Exception as exc:
            failed[job.name] = f"{type(exc).__name__}: {exc}"
        seconds[job.name] = time.perf_counter() - t0
        compiled[job.name] = counter.n
    bar.close()
    return WarmupReport(seconds, compiled, failed)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m frankwolfe.compile",
        description="Compile frankwolfe's numba code ahead of time (warm the on-disk cache).")
    p.add_argument("names", nargs="*", help="jobs to run (see --list)")
    p.add_argument("--all", action="store_true", help="run every job")
    p.add_argument("--list", action="store_true", help="list the jobs and the cache")
    p.add_argument("--clear", action="store_true",
                   help="empty the cache first (alone: only empty it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; the exit status (1 when a job failed).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).
    """
    from .cache import cache_info, clear_cache

    parser = _parser()
    args = parser.parse_args(argv)
    jobs = warmup_jobs()
    if args.list:
        width = max(map(len, jobs), default=0)
        for job in jobs.values():
            print(f"{job.name:<{width}}  {job.description}")
        print(cache_info())
        return 0
    unknown = [n for n in args.names if n not in jobs]
    if unknown:
        parser.error(f"unknown job(s) {', '.join(unknown)}; known: {', '.join(jobs)}")
    if args.clear:
        freed = clear_cache()
        print(f"frankwolfe cache cleared ({freed / 2**20:.1f} MiB freed)")
    chosen = list(jobs.values()) if args.all else [jobs[n] for n in args.names]
    if not chosen:
        if args.clear:
            return 0
        parser.error("name the jobs to run, or --all (--list shows them)")
    t0 = time.perf_counter()
    report = warm(chosen, progress=not args.quiet)
    total = time.perf_counter() - t0
    for job in chosen:
        status = f"FAILED: {report.failed[job.name]}" if job.name in report.failed else \
            f"{report.compiled[job.name]} functions compiled"
        print(f"  {job.name:<20} {report.seconds[job.name]:7.1f} s  {status}")
    print(f"warmed {len(chosen) - len(report.failed)} of {len(chosen)} jobs in {total:.1f} s")
    print(cache_info())
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())

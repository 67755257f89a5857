"""The on-disk caches of compiled code (numba's cache of the kernels, the generated pass
drivers) survive damaged files, read-only installations and import names.

Every scenario runs in fresh Python processes with their own cache folders under
``tmp_path`` (``NUMBA_CACHE_DIR``, or ``XDG_CACHE_HOME`` where numba's user-wide
fallback is the point), and their answers are checked against values computed here
independently (the Python engine of BCFW, a brute-force QAP objective).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.compiled import driver_files

REPO = Path(__file__).resolve().parents[1]

# The BCFW problem of the scenarios: a coupled quadratic over a product of simplices,
# which the compiled pass driver runs (debug mode off in the subprocesses).
PROBLEM = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba.core import event

    class Count(event.Listener):
        n = 0
        def on_start(self, ev):
            Count.n += 1
        def on_end(self, ev):
            pass

    event.register("numba:compile", Count())

    def problem():
        import frankwolfe as fw
        n, m = 5, 3
        rng = np.random.default_rng(0)
        B = rng.standard_normal((n * m, n * m)) / np.sqrt(n * m)
        Q = B @ B.T + np.eye(n * m)
        f = fw.QuadraticObjective(Q, -Q @ rng.dirichlet(np.ones(m), size=n).ravel())
        return f, fw.ProductDomain([fw.ProbabilitySimplex(dim=m) for _ in range(n)])

    def report(res, **extra):
        print(json.dumps(dict(x=list(res.x), engine=res.extra["engine"], compiles=Count.n,
                              **extra)))
""")

BCFW = PROBLEM + textwrap.dedent("""
    import frankwolfe as fw
    f, dom = problem()
    res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, max_iter=8, random_state=0,
                                          compiled=True, verbose=sys.argv[1:] == ["verbose"])
    report(res, file=fw.__file__)
""")
NOTICE = "frankwolfe: compiling the BCFW pass driver for _simplex_direction, _simplex_commit"


def _problem():
    ns: dict = {}
    exec(PROBLEM, ns)
    return ns["problem"]()


@pytest.fixture(scope="module")
def python_engine_x() -> np.ndarray:
    """The iterate of the Python engine of BCFW (no numba pass, no cache)."""
    f, dom = _problem()
    res = fw.block_coordinate_frank_wolfe(f, dom, tol=0.0, max_iter=8, random_state=0,
                                          compiled=False)
    return res.x


def _env(tmp: Path, numba_cache: bool = True, **extra: str) -> dict[str, str]:
    # NUMBA_OPT too (make test-min sets 0): at O0 numba declines to cache functions with
    # dynamic globals, and these tests count what a warm run compiles
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH", "NUMBA_OPT")}
    env.update(FRANKWOLFE_DEBUG="0", XDG_CACHE_HOME=str(tmp / "xdg"), PYTHONHASHSEED="0")
    if numba_cache:
        env["NUMBA_CACHE_DIR"] = str(tmp / "numba")
    env.update(extra)
    return env


def _run(code: str, cwd: Path, env: dict[str, str], *args: str) -> dict:
    """The JSON of the last line the scenario prints, with ``stdout`` (the rest)."""
    script = cwd / "scenario.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    *before, last = out.stdout.strip().splitlines()
    return dict(json.loads(last), stdout="\n".join(before), stderr=out.stderr)


def _drivers(root: Path) -> list[Path]:
    return sorted(root.rglob(f"{driver_files.DRIVER_PREFIX}*.py"))


def test_damaged_cache_files_are_ignored_and_rebuilt(tmp_path, python_engine_x):
    env = _env(tmp_path)
    first = _run(BCFW, tmp_path, env, "verbose")
    assert first["engine"] == "compiled"
    assert NOTICE in first["stdout"]  # a verbose first call says that it compiles
    np.testing.assert_allclose(first["x"], python_engine_x, rtol=0, atol=1e-12)
    numba_files = sorted((tmp_path / "numba").rglob("*.nb[ic]"))
    drivers = _drivers(tmp_path / "numba")
    assert len(drivers) == 1 and any(".nbi" == f.suffix for f in numba_files)
    # garbage indexes, truncated data files, a garbage driver module
    for f in numba_files:
        if f.suffix == ".nbi":
            f.write_bytes(b"garbage\n")
        else:
            f.write_bytes(f.read_bytes()[:40])
    drivers[0].write_bytes(b"\x00\xff not python")
    damaged = _run(BCFW, tmp_path, env)
    np.testing.assert_allclose(damaged["x"], python_engine_x, rtol=0, atol=1e-12)
    assert damaged["engine"] == "compiled" and damaged["compiles"] > 0
    assert "ignoring an unreadable numba cache entry" in damaged["stderr"]
    # the damaged entries were replaced: the next process compiles nothing (and a
    # verbose run then announces nothing)
    again = _run(BCFW, tmp_path, env, "verbose")
    np.testing.assert_allclose(again["x"], python_engine_x, rtol=0, atol=1e-12)
    assert again["compiles"] == 0 and "compiling" not in again["stdout"]


def _read_only_copy(tmp_path: Path) -> Path:
    """A copy of the package that nobody can write to: read-only modes, and (since root
    writes anyway) a file named ``__pycache__`` in every folder, which numba cannot
    make a folder of either."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "frankwolfe", site / "frankwolfe",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [p for p in (site / "frankwolfe").rglob("*") if p.is_dir()] + \
            [site / "frankwolfe"]:
        (folder / "__pycache__").write_text("")
    for path in [site, *site.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return site


def _writable_again(site: Path) -> None:
    for path in [site, *site.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_read_only_package_caches_in_the_user_folder(tmp_path, python_engine_x):
    """A read-only installation: numba falls back to its user-wide folder (under
    XDG_CACHE_HOME), the drivers go to XDG_CACHE_HOME/frankwolfe/drivers."""
    site = _read_only_copy(tmp_path)
    try:
        env = _env(tmp_path, numba_cache=False, PYTHONPATH=str(site))
        first = _run(BCFW, tmp_path, env)
        second = _run(BCFW, tmp_path, env)
    finally:
        _writable_again(site)
    assert Path(first["file"]).is_relative_to(site)
    assert first["compiles"] > 0 and "compiling" not in first["stdout"]  # not verbose
    for res in (first, second):
        assert res["engine"] == "compiled"
        np.testing.assert_allclose(res["x"], python_engine_x, rtol=0, atol=1e-12)
    assert second["compiles"] == 0  # both caches served the second process
    assert not list(site.rglob("*.nb[ic]"))
    assert list((tmp_path / "xdg" / "numba").rglob("*.nbi"))
    assert len(_drivers(tmp_path / "xdg" / "frankwolfe" / "drivers")) == 1


def test_no_writable_cache_folder_at_all_compiles_in_memory(tmp_path):
    """numba refuses ``cache=True`` when no folder is writable (RuntimeError at import);
    frankwolfe's functions then compile in memory."""
    site = _read_only_copy(tmp_path)
    (tmp_path / "file").write_text("")
    code = textwrap.dedent("""
        import json
        from frankwolfe.compiled.sum_tree import gap_weight
        print(json.dumps(dict(w=gap_weight(3.0, 2.0), z=gap_weight(-1.0, 0.5))))
    """)
    try:
        env = _env(tmp_path, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(tmp_path / "file" / "a"),
                   XDG_CACHE_HOME=str(tmp_path / "file" / "b"))
        res = _run(code, tmp_path, env)
    finally:
        _writable_again(site)
    assert res["w"] == 9.0 and res["z"] == 0.0
    assert "no writable folder for numba's cache" in res["stderr"]


# A domain whose compiled blocks are the core's simplex kernels on a record class of the
# caller's module (imported under two names below).
RECORD = textwrap.dedent("""
    from typing import NamedTuple
    import numpy as np

    class State(NamedTuple):
        Z: np.ndarray
        idx_flat: np.ndarray
        off: np.ndarray
        radius: np.ndarray
        last: np.ndarray
""")

RECORD_RUN = PROBLEM + textwrap.dedent("""
    import importlib
    import frankwolfe as fw
    from frankwolfe.compiled import BlockDomainHooks, CompiledBlocks
    from frankwolfe.compiled.simplex import _simplex_commit, _simplex_direction

    rec = importlib.import_module(sys.argv[1])
    assert rec.State.__module__ == sys.argv[1]

    class Simplices(fw.ProductDomain, BlockDomainHooks):
        def compiled_blocks(self, x0):
            n, m = len(self.blocks), 3
            Z = np.zeros(n * m)
            Z[::m] = 1.0  # the vertices the Python engine starts from
            st = rec.State(Z, np.arange(n * m), np.arange(0, n * m + 1, m), np.ones(n),
                           np.zeros(1, dtype=np.int64))
            def start(x):
                x += Z
            return CompiledBlocks(_simplex_direction, _simplex_commit, st, m, start=start)

    f, dom = problem()
    res = fw.block_coordinate_frank_wolfe(f, Simplices(dom.blocks), tol=0.0, max_iter=8,
                                          random_state=0, compiled=True)
    report(res)
""")


def test_driver_made_under_one_import_name_is_not_reused_under_another(tmp_path,
                                                                        python_engine_x):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "rec.py").write_text(RECORD)
    runs = {}
    # first as pkg.rec (the script's folder is on sys.path), then as rec alone, where
    # pkg cannot be imported
    runs["pkg.rec"] = _run(RECORD_RUN, tmp_path, _env(tmp_path), "pkg.rec")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _env(tmp_path, PYTHONPATH=str(tmp_path / "pkg"))
    runs["rec"] = _run(RECORD_RUN, work, env, "rec")
    for res in runs.values():
        assert res["engine"] == "compiled"
        np.testing.assert_allclose(res["x"], python_engine_x, rtol=0, atol=1e-12)
    assert len(_drivers(tmp_path / "numba")) == 2  # one driver per record module name


APPLICATION_KERNEL = textwrap.dedent("""
    import importlib, json, sys
    import numpy as np
    local_search = importlib.import_module(sys.argv[1] + ".matching.local_search")
    rng = np.random.default_rng(0)
    A, B = rng.random((6, 6)), rng.random((6, 6))
    D = local_search.swap_deltas(A, B, np.arange(6)[::-1].copy())
    print(json.dumps(dict(D=D.tolist())))
""")


def test_application_kernels_under_two_import_names(tmp_path):
    """The checkout's `applications` and the installed `frankwolfe.applications` are one
    source file: the top-level name is refused before any kernel compiles, so no cache
    entry is recorded under it, and the installed name runs (numba's pickled environment
    names the module, and the other name would not be importable)."""
    if not (REPO / "applications" / "matching").is_dir():
        pytest.skip("not a source checkout")
    script = tmp_path / "scenario.py"
    script.write_text(APPLICATION_KERNEL)
    refused = subprocess.run([sys.executable, str(script), "applications"], cwd=tmp_path,
                             env=_env(tmp_path, PYTHONPATH=str(REPO)), capture_output=True,
                             text=True, timeout=600)
    assert refused.returncode != 0
    assert "ImportError: the applications are imported as `frankwolfe.applications`" \
        in refused.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    second = _run(APPLICATION_KERNEL, work, _env(tmp_path), "frankwolfe.applications")
    first = _run(APPLICATION_KERNEL, work, _env(tmp_path, PYTHONPATH=str(REPO)),
                 "frankwolfe.applications")  # the checkout on the path: the same name
    cached = [f.name for f in (tmp_path / "numba").rglob("*.nb[ic]")]
    assert cached and not [n for n in cached if n.startswith("applications")]
    rng = np.random.default_rng(0)
    A, B = rng.random((6, 6)), rng.random((6, 6))
    p = np.arange(6)[::-1]

    def value(q):
        return float(np.sum(A * B[np.ix_(q, q)]))

    for res in (first, second):
        D = np.array(res["D"])
        for r, s in itertools.combinations(range(6), 2):
            q = p.copy()
            q[r], q[s] = q[s], q[r]
            assert D[r, s] == pytest.approx(value(q) - value(p), abs=1e-12)


# -- the sweep of old drivers and the cache helpers (files only, nothing compiled) ------

DAY = 86400.0


def _driver(folder: Path, tag: str, used: float, header: str = "") -> Path:
    """A fake driver with numba files beside it, last used at ``used``."""
    path = folder / f"{driver_files.DRIVER_PREFIX}{tag}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + '"""driver"""\n')
    cache = folder / "__pycache__"
    cache.mkdir(exist_ok=True)
    for name in (f"{path.stem}.run_pass-20.py311.nbi", f"{path.stem}.run_pass-20.py311.1.nbc"):
        (cache / name).write_bytes(b"x" * 10)
        os.utime(cache / name, (used, used))
    os.utime(path, (used, used))
    return path


def test_sweep_removes_unused_stale_and_orphaned_entries_only(tmp_path):
    now = time.time()
    root = tmp_path / "drivers"
    here, other, gone = root / "cpython-311-numba1-fw1", root / "old-env", root / "dead-env"
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text("x = 1\n")
    good = driver_files.header([src], driver_files.sources_stamp([src]), [])
    fresh = _driver(here, "fresh", now - 2 * DAY, good)
    unused = _driver(here, "unused", now - 40 * DAY, good)
    stale = _driver(here, "stale", now - 2 * DAY, good.replace("# stamp: ", "# stamp: 0"))
    stale_recent = _driver(here, "stale2", now - 60, good.replace("# stamp: ", "# stamp: 0"))
    orphan = here / "__pycache__" / f"{driver_files.DRIVER_PREFIX}nofile.certify-70.py311.nbi"
    orphan.write_bytes(b"x")
    os.utime(orphan, (now - DAY, now - DAY))
    in_use_elsewhere = _driver(other, "a", now - 10 * DAY)
    _driver(gone, "b", now - 31 * DAY)
    legacy_old = _driver(root, "legacy_old", now - 31 * DAY)
    legacy_new = _driver(root, "legacy_new", now - 3 * DAY)  # no header: age alone
    freed = driver_files.sweep(root, keep=here, now=now)
    assert freed > 0
    kept = {p.stem for p in root.rglob(f"{driver_files.DRIVER_PREFIX}*.py")}
    assert kept == {p.stem for p in (fresh, stale_recent, in_use_elsewhere, legacy_new)}
    assert not gone.exists() and not orphan.exists()
    for p in (unused, stale, legacy_old):
        assert not list(p.parent.glob(f"__pycache__/{p.stem}.*"))  # numba's files went too
    assert list(here.glob(f"__pycache__/{fresh.stem}.*"))
    # a source change makes the fresh driver stale: swept once idle for an hour
    (src / "k.py").write_text("x = 2  # changed\n")
    driver_files.sweep(root, keep=here, now=now)
    assert not fresh.exists() and stale_recent.exists()


def test_cache_info_and_clear_cache_touch_only_numba_and_driver_files(tmp_path, monkeypatch):
    import frankwolfe.cache as fwcache

    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "k.py").write_text("")
    for name, size in (("k.f-3.py311.nbi", 5), ("k.f-3.py311.1.nbc", 7), ("k.cpython-311.pyc", 3)):
        (pkg / "__pycache__" / name).write_bytes(b"x" * size)
    root = tmp_path / "drivers"
    monkeypatch.setattr(fwcache, "_package_roots", lambda: [pkg])
    monkeypatch.setattr(driver_files, "drivers_root", lambda: root)
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "")  # numba reads the cache beside the sources
    here = root / driver_files._environment_key()
    _driver(here, "one", 1e9)
    _driver(root / "other-env", "two", 1e9)
    info = fwcache.cache_info()
    kinds = {loc.kind: loc for loc in info.locations}
    assert kinds["kernels"].path == pkg and kinds["kernels"].size == 12
    assert kinds["kernels"].entries == 1
    assert kinds["drivers"].path == here and kinds["drivers"].entries == 1
    assert kinds["other drivers"].entries == 1
    assert info.size == sum(loc.size for loc in info.locations)
    assert "frankwolfe cache:" in str(info) and str(here) in str(info)
    freed = fwcache.clear_cache()
    assert freed == info.size
    assert [p.name for p in (pkg / "__pycache__").iterdir()] == ["k.cpython-311.pyc"]
    assert not list(root.rglob("*.py")) and fwcache.cache_info().locations == ()


def test_warmup_jobs_of_the_applications_are_registered():
    import tomllib
    from importlib import import_module

    from frankwolfe.compile import warmup_jobs

    with open(REPO / "pyproject.toml", "rb") as fh:
        eps = tomllib.load(fh)["project"]["entry-points"]["frankwolfe.warmup"]
    jobs = warmup_jobs()
    for name, target in eps.items():
        module, _, attr = target.partition(":")
        fn = getattr(import_module(module), attr)
        assert callable(fn) and fn.__doc__
        assert name in jobs and jobs[name].run is fn  # the installed metadata is current
    assert {"simplex", "bcfw-simplices"} <= set(jobs)


def test_compile_command_warms_lists_and_clears(tmp_path, capsys):
    """``python -m frankwolfe.compile``: a job compiles once, then the cache serves it;
    --list shows the jobs and the cache, --clear empties it."""
    from frankwolfe.compile import main

    env = _env(tmp_path)

    def run(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "frankwolfe.compile", *args],
                             cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    # the cheapest job to compile cold
    first = run("simplex", "--quiet")
    assert "warmed 1 of 1 jobs" in first and " 0 functions compiled" not in first
    assert "frankwolfe cache:" in first and str(tmp_path / "numba") in first
    assert " 0 functions compiled" in run("simplex", "--quiet")
    # --list and a bad name change no cache: here, through the command's main (the
    # subprocesses above and below run it as ``python -m``)
    assert main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "bcfw-simplices" in listing and "ssvm-chain" in listing
    assert "frankwolfe cache:" in listing
    assert "cleared" in run("--clear")
    assert not list((tmp_path / "numba").rglob("*.nb[ic]"))
    with pytest.raises(SystemExit) as bad:
        main(["no-such-job"])
    assert bad.value.code == 2 and "unknown job(s) no-such-job" in capsys.readouterr().err


def test_two_processes_saving_one_index_never_pair_a_signature_with_the_others_code(tmp_path):
    """numba numbers an index's data files: two processes compiling two signatures at once
    both wrote ``.1.nbc``, and one signature then ran the other's machine code (seen under
    pytest-xdist).  frankwolfe's cache files name each entry's data on its own: a writer
    with a stale index may drop the other's entry (compiled again later), never mix them."""
    from numba.core.caching import IndexDataCacheFile

    from frankwolfe._numba_hooks import _process_safe

    cls = _process_safe(IndexDataCacheFile)

    def writer() -> IndexDataCacheFile:
        return cls(cache_path=str(tmp_path), filename_base="kernel-1.py311", source_stamp=(1, 2))

    a, b = writer(), writer()
    stale = b._load_index()  # b read the index before a wrote its entry
    a.save("sig-a", ("code", "a"))
    b._load_index = lambda: dict(stale)  # type: ignore[method-assign]
    b.save("sig-b", ("code", "b"))
    reader = writer()
    assert reader.load("sig-b") == ("code", "b")
    assert reader.load("sig-a") in (None, ("code", "a"))  # lost at worst, never b's code
    a.save("sig-a", ("code", "a"))  # compiled again: both entries now
    assert reader.load("sig-a") == ("code", "a") and reader.load("sig-b") == ("code", "b")
    assert len(list(tmp_path.glob("kernel-1.py311.*.nbc"))) == 3  # nobody's file overwritten


TWINS = textwrap.dedent("""
    import numba
    import numpy as np


    def make(c):
        @numba.njit
        def helper(x):  # big enough that LLVM keeps it a call, not inlined
            out = np.empty(x.shape[0] * 3)
            for r in range(3):
                for i in range(x.shape[0]):
                    out[r * x.shape[0] + i] = np.sin(x[i]) * c + np.cos(x[i] * r) / (1.0 + c)
            return out.max() + c  # (reproduces without np.sort, 2 s a process to compile)
        return helper


    h1, h2 = make(1.0), make(2.0)  # one name, one signature, two bodies


    @numba.njit(cache=True)
    def one(x):
        return h1(x) + h1(x + 1.0) + h1(x * 2.0)


    @numba.njit(cache=True)
    def two(x):
        return h2(x) + h2(x + 1.0) + h2(x * 2.0)
""")

TWINS_RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    import frankwolfe  # noqa: F401  (its numba hooks, before numba compiles anything)
    import twins

    x = np.linspace(0.0, 1.0, 5)
    print(json.dumps({name: float(getattr(twins, name)(x)) for name in sys.argv[1:]}))
""")


def test_cached_kernels_of_two_processes_keep_their_own_helpers(tmp_path):
    """numba names a compiled function after its name, argument types and an id it counts
    per process: two processes compiling alike gave two different helpers of one name the
    same symbol, and a third process loading both cached kernels ran one helper for both
    (numba issue 10486; one CI worker's chain kernels sorted with another kernel's code).
    With frankwolfe imported the ids are random: each kernel keeps its helper."""
    (tmp_path / "twins.py").write_text(TWINS)
    env = _env(tmp_path, PYTHONPATH=str(tmp_path))
    x = np.linspace(0.0, 1.0, 5)

    def expected(c: float) -> float:  # the kernels' sums, by numpy
        def helper(v):
            out = np.concatenate([np.sin(v) * c + np.cos(v * r) / (1.0 + c) for r in range(3)])
            return out.max() + c
        return helper(x) + helper(x + 1.0) + helper(x * 2.0)

    alone_one = _run(TWINS_RUN, tmp_path, env, "one")["one"]  # each compiles and caches
    alone_two = _run(TWINS_RUN, tmp_path, env, "two")["two"]
    both = _run(TWINS_RUN, tmp_path, env, "one", "two")  # loads both from the cache
    assert alone_one == pytest.approx(expected(1.0), rel=1e-12, abs=1e-12)
    assert alone_two == pytest.approx(expected(2.0), rel=1e-12, abs=1e-12)
    assert both["one"] == pytest.approx(expected(1.0), rel=1e-12, abs=1e-12)
    assert both["two"] == pytest.approx(expected(2.0), rel=1e-12, abs=1e-12)


# Two levels of inner kernels under two entry points, the second compiled by a later
# process than the first (its inner kernels then come from the cache).
STACK = textwrap.dedent("""
    import numpy as np
    from numba import njit
    from frankwolfe.compiled import inner_kernel

    @inner_kernel
    def _leaf(a, s):
        out = 0.0
        for v in a:
            out += s * v * v
        return out

    @inner_kernel
    def _middle(a, s):
        return _leaf(a, s) + 1.0

    @njit(cache=True)
    def first(a):
        return _middle(a, 2.0)

    @njit(cache=True)
    def second(a):
        return _middle(a, 2.0) - _leaf(a, 3.0)
""")
STACK_RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba.core import event

    compiled = []

    class Names(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)
        def on_end(self, ev):
            pass

    event.register("numba:compile", Names())
    if "numba-own" in sys.argv:  # inner kernels cached as numba caches any kernel
        import frankwolfe.compiled.inner as inner
        inner._LAZY = False
    import stack
    a = np.arange(5.0)
    out = {name: getattr(stack, name)(a) for name in ("first", "second") if name in sys.argv}
    kinds = sorted({cres.library.serialize_using_object_code()[1]
                    for k in (stack._leaf, stack._middle) for cres in k.overloads.values()})
    print(json.dumps(dict(out, compiled=sorted(compiled), kinds=kinds)))
""")


def test_inner_kernels_cached_as_bitcode_serve_callers_of_later_processes(tmp_path):
    """An inner kernel keeps no machine code of its own: its cache entry is the LLVM
    bitcode its callers link in.  A caller that a later process compiles takes the inner
    kernels from the cache, a third process compiles nothing, and entries an older
    frankwolfe cached as object code (numba's kind) still serve new callers."""
    (tmp_path / "stack.py").write_text(STACK)
    a = np.arange(5.0)
    first, second = 2.0 * (a @ a) + 1.0, 2.0 * (a @ a) + 1.0 - 3.0 * (a @ a)
    for kind, flag in (("bitcode", []), ("object code", ["numba-own"])):
        env = _env(tmp_path / kind, PYTHONPATH=str(tmp_path))
        (tmp_path / kind).mkdir()
        made = _run(STACK_RUN, tmp_path, env, "first", *flag)
        assert made["first"] == pytest.approx(first, rel=1e-12), kind
        assert made["compiled"] == ["_leaf", "_middle", "first"], kind
        assert made["kinds"] == [kind.split()[0]]
        later = _run(STACK_RUN, tmp_path, env, "second")
        assert later["second"] == pytest.approx(second, rel=1e-12), kind
        assert later["compiled"] == ["second"], kind  # _leaf and _middle from the cache
        if flag:
            continue  # a warm process loads no inner kernel: its kind does not matter
        warm = _run(STACK_RUN, tmp_path, env, "first", "second")
        assert (warm["first"], warm["second"]) == pytest.approx((first, second), rel=1e-12)
        assert warm["compiled"] == [], kind


def test_threads_loading_one_driver_get_it_whole(tmp_path, monkeypatch):
    """load_driver put the module into sys.modules before its body ran: a second thread
    found it there half-made ("module ... has no attribute 'run_pass'", 1 fresh process
    in 3 with two threads fitting a chain SSVM)."""
    import sys
    import threading
    import time as time_module

    monkeypatch.setattr(driver_files, "drivers_root", lambda: tmp_path)
    # a body that takes a while: the second thread asks while the first imports
    text = ("import time\nSTARTED = True\ntime.sleep(0.3)\n"
            f"def answer():\n    return 42  # {tmp_path.name}\n")
    found: list = []

    def load():
        module = driver_files.load_driver(text)
        found.append(getattr(module, "answer", None))

    threads = [threading.Thread(target=load) for _ in range(2)]
    threads[0].start()
    time_module.sleep(0.1)
    threads[1].start()
    for t in threads:
        t.join(30)
    try:
        assert len(found) == 2 and all(a is not None and a() == 42 for a in found)
    finally:
        for name in [n for n in sys.modules if n.startswith(driver_files.DRIVER_PREFIX)
                     and getattr(sys.modules[n], "__file__", "").startswith(str(tmp_path))]:
            del sys.modules[name]

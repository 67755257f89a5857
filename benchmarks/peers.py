"""Run peer libraries in their own virtual environments.

Benchmarks compare frankwolfe with other packages (copt, aequilibrae,
scikit-learn, cvxpy, scipy).  Peers often pin old versions of numpy or scipy,
so each one gets its own venv under ``benchmarks/.venvs/<name>`` and is driven
through a subprocess: the harness sends a payload (arrays in a ``.npz``, the
rest as JSON), the peer runs a snippet, and answers with JSON on stdout.

Only ``python3 -m venv`` and PyPI access are needed.

Example
-------
>>> from peers import ensure_venv, run_in_venv   # doctest: +SKIP
>>> py = ensure_venv("copt", ["copt==0.9.2"], imports=["copt"])   # doctest: +SKIP
>>> run_in_venv(py, "result = {'n': int(payload['a'].sum())}",
...             {"a": np.ones(3)})   # doctest: +SKIP
{'n': 3}

Scripts in ``benchmarks/`` import it as ``from peers import ...`` (the
script's folder is on ``sys.path``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "VENV_ROOT",
    "PEERS",
    "PeerError",
    "ensure_venv",
    "ensure_peer",
    "run_in_venv",
    "thread_env",
]

#: Where peer environments live (git-ignored).
VENV_ROOT = Path(__file__).resolve().parent / ".venvs"

#: Default package lists of the peers we benchmark against, and a module to
#: import as a smoke check.  Versions are pinned where a release is known to
#: work on Python 3.11 with current numpy, so timings are reproducible.
PEERS: dict[str, tuple[list[str], list[str]]] = {
    "copt": (["copt==0.9.2"], ["copt"]),
    "aequilibrae": (["aequilibrae"], ["aequilibrae"]),
    "sklearn": (["scikit-learn"], ["sklearn"]),
    "cvxpy": (["cvxpy"], ["cvxpy"]),
    "scipy": (["scipy"], ["scipy"]),
}

_STAMP = "frankwolfe-peer-stamp.json"


class PeerError(RuntimeError):
    """A peer environment could not be built, or a peer snippet failed."""


# -- environments ---------------------------------------------------------
def _venv_python(venv: Path) -> Path:
    if os.name == "nt":  # pragma: no cover - the benchmarks run on POSIX
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Exclusive lock, so two benchmarks started together don't both pip install."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX: no locking
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: Sequence[str | os.PathLike[str]], what: str, quiet: bool) -> None:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=quiet, text=True, check=False
    )
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-4000:] if quiet else "(see output above)"
        raise PeerError(f"{what} failed (exit {proc.returncode}): "
                        f"{' '.join(map(str, cmd))}\n{tail}")


def ensure_venv(
    name: str,
    packages: Iterable[str],
    *,
    imports: Iterable[str] = (),
    root: Path | str | None = None,
    base_python: str = "python3",
    quiet: bool = True,
) -> Path:
    """Create (once) a venv with ``packages`` and return the path to its python.

    Parameters
    ----------
    name : str
        Folder name under ``root`` (``benchmarks/.venvs`` by default).
    packages : iterable of str
        pip requirement strings, e.g. ``["copt==0.9.2"]``.
    imports : iterable of str, optional
        Modules imported after installing, as a smoke check; a failure raises
        :class:`PeerError` with the peer's traceback.
    root : path, optional
        Parent folder of the venvs.
    base_python : str
        Interpreter that creates the venv (``python3 -m venv``).
    quiet : bool
        Capture pip's output (it is shown in the error on failure).

    Returns
    -------
    Path
        The venv's ``python``.

    Notes
    -----
    A stamp file records the package list and the base interpreter's
    version; when either changes the venv is rebuilt from scratch
    (``venv --clear``), so a removed package does not linger.
    """
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"ensure_venv: `name` must be a plain folder name, got {name!r}")
    pkgs = sorted(str(p).strip() for p in packages if str(p).strip())
    if not pkgs:
        raise ValueError("ensure_venv: `packages` is empty; give at least one requirement")
    mods = list(imports)
    base = Path(root) if root is not None else VENV_ROOT
    venv = base / name
    python = _venv_python(venv)
    want = {"packages": pkgs, "base_python": _base_version(base_python)}

    with _locked(base / f".{name}.lock"):
        stamp = venv / _STAMP
        if python.exists() and stamp.exists():
            try:
                if json.loads(stamp.read_text()) == want:
                    return python
            except (OSError, json.JSONDecodeError):
                pass  # a damaged stamp: rebuild
        print(f"[peers] building venv {venv} with {' '.join(pkgs)} ...", file=sys.stderr,
              flush=True)
        t0 = time.perf_counter()
        stamp.unlink(missing_ok=True)
        _run([base_python, "-m", "venv", "--clear", venv], f"creating venv {name!r}", quiet)
        _run([python, "-m", "pip", "install", "--disable-pip-version-check",
              *(["-q"] if quiet else []), *pkgs], f"pip install into venv {name!r}", quiet)
        for mod in mods:
            _run([python, "-c", f"import {mod}"], f"importing {mod!r} in venv {name!r}", True)
        stamp.write_text(json.dumps(want, indent=1))
        print(f"[peers] venv {name!r} ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr,
              flush=True)
    return python


def ensure_peer(name: str, **kwargs: Any) -> Path:
    """:func:`ensure_venv` with the default package list of a known peer (see :data:`PEERS`)."""
    try:
        packages, imports = PEERS[name]
    except KeyError:
        raise ValueError(f"ensure_peer: unknown peer {name!r}; known: {sorted(PEERS)}") from None
    return ensure_venv(name, packages, imports=imports, **kwargs)


def _base_version(base_python: str) -> str:
    proc = subprocess.run([base_python, "-c", "import sys; print(sys.version)"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise PeerError(f"base interpreter {base_python!r} does not run: {proc.stderr.strip()}")
    return proc.stdout.strip()


# -- running snippets -------------------------------------------------------
# The wrapper runs inside the peer's interpreter.  It keeps the real stdout
# for the JSON answer and points sys.stdout at stderr, so a peer that prints
# (copt prints its Lipschitz estimate) cannot corrupt the answer.
_WRAPPER = r'''
import json, sys
_out = sys.stdout
sys.stdout = sys.stderr
snippet_path, json_path, npz_path = sys.argv[1:4]
with open(json_path) as fh:
    payload = json.load(fh)
if npz_path != "-":
    import numpy as np
    with np.load(npz_path, allow_pickle=False) as z:
        payload.update({k: z[k] for k in z.files})

def _enc(o):
    if type(o).__module__ == "numpy":
        import numpy as np
        if isinstance(o, np.ndarray):
            return {"__ndarray__": o.ravel().tolist(), "dtype": str(o.dtype),
                    "shape": list(o.shape)}
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"result value of type {type(o).__name__} is not JSON-serializable")

ns = {"__name__": "__peer__", "payload": payload}
with open(snippet_path) as fh:
    code = compile(fh.read(), "<peer snippet>", "exec")
exec(code, ns)
if "result" not in ns:
    raise RuntimeError("the peer snippet must assign a dict to `result`")
json.dump(ns["result"], _out, default=_enc)
_out.flush()
'''


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            return np.asarray(obj["__ndarray__"], dtype=obj["dtype"]).reshape(obj["shape"])
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def thread_env(threads: int | None) -> dict[str, str]:
    """Environment variables pinning BLAS/OpenMP/numba threads (empty for ``None``)."""
    if threads is None:
        return {}
    if int(threads) < 1:
        raise ValueError(f"thread_env: `threads` must be >= 1, got {threads!r}")
    n = str(int(threads))
    return {v: n for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                           "NUMBA_NUM_THREADS")}


def run_in_venv(
    python: Path | str,
    script_text: str,
    payload: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    cwd: Path | str | None = None,
) -> dict[str, Any]:
    """Run a Python snippet in another interpreter and return its ``result``.

    Parameters
    ----------
    python : path
        Interpreter to use (from :func:`ensure_venv`, or ``sys.executable``).
    script_text : str
        Code run with a global ``payload`` (dict) in scope; it must assign a
        JSON-serializable dict to ``result`` (numpy arrays and scalars are
        allowed and come back as numpy).  Anything it prints goes to stderr.
    payload : mapping, optional
        Inputs: numpy arrays are passed in a ``.npz`` file, other values as
        JSON.
    env : mapping, optional
        Extra environment variables (e.g. :func:`thread_env`).
    timeout : float, optional
        Seconds before the run is killed.
    cwd : path, optional
        Working directory of the subprocess.

    Returns
    -------
    dict
        The snippet's ``result``.

    Raises
    ------
    PeerError
        When the snippet fails; the message holds the end of its stderr.
    """
    payload = dict(payload or {})
    arrays = {k: np.asarray(v) for k, v in payload.items() if isinstance(v, np.ndarray)}
    plain = {k: v for k, v in payload.items() if k not in arrays}
    with tempfile.TemporaryDirectory(prefix="fw-peer-") as tmp:
        d = Path(tmp)
        (d / "wrapper.py").write_text(_WRAPPER)
        (d / "snippet.py").write_text(script_text)
        try:
            (d / "payload.json").write_text(json.dumps(plain))
        except TypeError as err:
            raise TypeError("run_in_venv: `payload` values must be arrays or "
                            f"JSON-serializable: {err}") from None
        npz = "-"
        if arrays:
            npz = str(d / "payload.npz")
            np.savez(npz, **arrays)
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run(
            [str(python), str(d / "wrapper.py"), str(d / "snippet.py"), str(d / "payload.json"),
             npz],
            capture_output=True, text=True, env=full_env, timeout=timeout, cwd=cwd, check=False,
        )
    if proc.returncode != 0:
        raise PeerError(f"peer snippet failed in {python} (exit {proc.returncode}):\n"
                        f"{proc.stderr[-4000:]}")
    try:
        return _decode(json.loads(proc.stdout))
    except json.JSONDecodeError as err:
        raise PeerError(
            f"peer snippet in {python} did not answer with JSON ({err}); stdout began with "
            f"{proc.stdout[:200]!r}; stderr:\n{proc.stderr[-2000:]}"
        ) from None

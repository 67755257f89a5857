"""A real Dask cluster of processes on 127.0.0.1 for the tests that kill its parts.

The scheduler picks its own port and writes its address to a scheduler file, which the
workers and the client read.  (Choosing a free port first and handing it to the
scheduler raced with every other process binding ports at that moment: the other pytest
worker's clusters, this cluster's own workers.  A client once connected to whatever had
taken the port and failed at its handshake.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any


def _address(path: Path, scheduler: subprocess.Popen, timeout: float) -> str:
    """The scheduler's address from its file, once the file is whole (it is written
    in place, not atomically)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if scheduler.poll() is not None:
            raise RuntimeError(f"dask scheduler exited with {scheduler.returncode} "
                               "before writing its address")
        try:
            return str(json.loads(path.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise TimeoutError(f"dask scheduler wrote no address to {path} in {timeout:.0f} s")


def _quiet() -> dict[str, Any]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    return dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _dask() -> str:
    return str(Path(sys.executable).parent / "dask")


def start_worker(address: str, name: str) -> subprocess.Popen:
    """A single-thread `dask worker` process named ``name`` without a nanny (killed, it
    stays dead), joining the scheduler at ``address``."""
    return subprocess.Popen([_dask(), "worker", address, "--host", "127.0.0.1",
                             "--nthreads", "1", "--no-nanny", "--no-dashboard",
                             "--memory-limit", "0", "--name", name], **_quiet())


def worker_name(worker: subprocess.Popen) -> str:
    args = list(worker.args)
    return str(args[args.index("--name") + 1])


def live_workers(client: Any, workers: list[subprocess.Popen], n_workers: int,
                 timeout: float = 60.0) -> list[subprocess.Popen]:
    """The processes of ``workers`` (those of :func:`dask_processes`) still running,
    ``n_workers`` of them: workers started in their place where some were killed
    (appended to ``workers``, which the clean-up stops), once the scheduler lists
    exactly those (the dead ones removed, the new ones joined), within ``timeout``."""
    live = [w for w in workers if w.poll() is None]
    if len(live) > n_workers:
        raise ValueError(f"{len(live)} workers alive, {n_workers} asked")
    address = client.scheduler.address
    while len(live) < n_workers:
        worker = start_worker(address, f"w{len(workers)}")
        workers.append(worker)
        live.append(worker)
    names = {worker_name(w) for w in live}
    deadline = time.monotonic() + timeout
    while True:
        held = {info.get("name") for info in client.scheduler_info()["workers"].values()}
        if held == names:
            return live
        dead = [worker_name(w) for w in live if w.poll() is not None]
        if dead:
            raise RuntimeError(f"dask worker {dead} exited before joining")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the scheduler lists workers {sorted(map(str, held))}, not "
                               f"{sorted(names)}, after {timeout:.0f} s")
        time.sleep(0.05)


@contextmanager
def dask_processes(n_workers: int = 2, timeout: float = 60.0
                   ) -> Iterator[tuple[Any, subprocess.Popen, list[subprocess.Popen]]]:
    """``(client, scheduler process, worker processes)``: a `dask scheduler` and
    ``n_workers`` single-thread `dask worker` processes without nannies (a killed worker
    stays dead), every wait within ``timeout`` seconds; all of them are stopped on exit."""
    import distributed

    with TemporaryDirectory(prefix="fw-dask-") as tmp:
        file = Path(tmp) / "scheduler.json"
        scheduler = subprocess.Popen([_dask(), "scheduler", "--host", "127.0.0.1", "--port",
                                      "0", "--no-dashboard", "--scheduler-file", str(file)],
                                     **_quiet())
        workers: list[subprocess.Popen] = []
        client = None
        try:
            addr = _address(file, scheduler, timeout)
            workers = [start_worker(addr, f"w{k}") for k in range(n_workers)]
            client = distributed.Client(addr, timeout=f"{timeout:.0f}s")
            client.wait_for_workers(n_workers, timeout=timeout)
            yield client, scheduler, workers
        finally:
            if client is not None:
                client.close(timeout=5)
            for group in (workers, [scheduler]):  # workers first: they leave without retrying
                for p in group:
                    p.terminate()
                for p in group:
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait(timeout=10)

"""The data fetchers against a local HTTP server on 127.0.0.1 serving ../shared/data."""

import functools
import http.server
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from frankwolfe.applications import fetch
from frankwolfe.applications.data import sources
from frankwolfe.applications.data.download import DownloadError, sha256_of
from frankwolfe.applications.matching.qaplib import read_qaplib
from frankwolfe.applications.structured_svm import load_cmu_house, load_conll2000, load_ocr


class _Server:
    def __init__(self, root: Path, handler=http.server.SimpleHTTPRequestHandler):
        h = functools.partial(handler, directory=str(root))
        h.log_message = lambda *a, **k: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _DiesMidFile(_Quiet):
    """Announces the whole file, sends half of it, then drops the connection."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def server(shared_data):
    s = _Server(shared_data, _Quiet)
    yield s
    s.close()


def _leftovers(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_good_downloads_are_checked_and_cached(server, shared_data, tmp_path):
    A, B, sln = fetch.fetch_qaplib("nug12", data_home=tmp_path, base_url=server.url)
    A0, B0 = read_qaplib(shared_data / "qaplib" / "nug12.dat")
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(B, B0)
    assert sln.objective == 578  # the best-known value of SOURCE.md
    assert sha256_of(tmp_path / "qaplib" / "nug12.dat") == sources.SHA256["qaplib/nug12.dat"]

    net, flows = fetch.fetch_tntp("SiouxFalls", data_home=tmp_path, base_url=server.url)
    assert net.n_nodes == 24 and flows.shape == (76,)

    Xtr, ytr, Xte, yte = fetch.fetch_ocr("ocr", data_home=tmp_path, base_url=server.url)
    assert (len(Xtr), len(Xte)) == (626, 6251)

    sources.conll2000_home(tmp_path, base_url=server.url)
    for name in ("train.txt", "test.txt"):
        assert sha256_of(tmp_path / "conll2000" / name) == sources.SHA256[f"conll2000/{name}"]

    house = fetch.fetch_cmu_house(data_home=tmp_path, base_url=server.url)
    assert house.points.shape == (111, 30, 2)
    assert len(_leftovers(tmp_path / "cmu_house")) == 369

    server.close()  # from now on everything comes from the cache
    A2, _, _ = fetch.fetch_qaplib("nug12", data_home=tmp_path, base_url=server.url)
    np.testing.assert_array_equal(A2, A0)
    assert len(load_ocr("ocr", data_home=tmp_path, download_if_missing=True)[0]) == 626
    assert len(load_cmu_house(tmp_path, download_if_missing=True).pairs) == 30
    assert not [p for p in _leftovers(tmp_path) if p.endswith(".part")]


def test_checksum_mismatch_keeps_nothing(shared_data, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "qaplib").mkdir(parents=True)
    data = bytearray((shared_data / "qaplib" / "nug12.dat").read_bytes())
    data[-3] = ord("7") if data[-3] != ord("7") else ord("8")  # one digit changed
    (mirror / "qaplib" / "nug12.dat").write_bytes(bytes(data))
    s = _Server(mirror, _Quiet)
    cache = tmp_path / "cache"
    try:
        with pytest.raises(DownloadError, match=r"nug12.dat: sha256 .* does not match the "
                                                r"published .*not kept"):
            fetch.fetch_qaplib("nug12", data_home=cache, base_url=s.url)
    finally:
        s.close()
    assert _leftovers(cache) == []


def test_server_dying_mid_file_keeps_nothing(shared_data, tmp_path):
    s = _Server(shared_data, _DiesMidFile)
    try:
        with pytest.raises(DownloadError, match=r"(stopped after \d+ of \d+ bytes|could not "
                                                r"download).*ocr/ocr.mat") as ei:
            fetch.fetch_ocr(data_home=tmp_path, base_url=s.url)
    finally:
        s.close()
    assert str(tmp_path / "ocr") in str(ei.value)  # the folder to put it by hand
    assert _leftovers(tmp_path) == []


def test_offline_error_names_url_and_folder(tmp_path):
    s = _Server(tmp_path)  # a port that was live and is closed now
    url = s.url
    s.close()
    with pytest.raises(DownloadError) as ei:
        fetch.fetch_tntp("SiouxFalls", data_home=tmp_path / "c", base_url=url)
    msg = str(ei.value)
    assert f"{url}/tntp/SiouxFalls/SiouxFalls_net.tntp" in msg
    assert str(tmp_path / "c" / "tntp" / "SiouxFalls") in msg
    assert _leftovers(tmp_path) == []


def test_loaders_without_download_name_the_fetcher(tmp_path):
    with pytest.raises(FileNotFoundError, match="download_if_missing=True.*fetch_ocr"):
        load_ocr(data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match="fetch_conll2000"):
        load_conll2000(data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match=r"download from https://raw\.githubusercontent"
                                                r"\.com/mhahsler/qap/.*nug12\.dat into"):
        fetch.fetch_qaplib("nug12", data_home=tmp_path, download_if_missing=False)


def test_instances_without_checksum_are_parsed(shared_data, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "qaplib").mkdir(parents=True)
    shutil.copy(shared_data / "qaplib" / "had12.dat", mirror / "qaplib" / "other12.dat")
    (mirror / "qaplib" / "broken12.dat").write_text("12\n1 2 3\n")
    s = _Server(mirror, _Quiet)
    cache = tmp_path / "cache"
    try:
        A, B, sln = fetch.fetch_qaplib("other12", data_home=cache, base_url=s.url)
        assert A.shape == (12, 12) and sln is None  # no .sln on the mirror: 404, optional
        with pytest.raises(DownloadError, match="broken12.dat is not a valid file"):
            fetch.fetch_qaplib("broken12", data_home=cache, base_url=s.url)
    finally:
        s.close()
    assert _leftovers(cache) == ["qaplib/other12.dat"]
    with pytest.raises(ValueError, match="plain name"):
        fetch.fetch_qaplib("../etc/passwd", data_home=cache)


def test_a_killed_fetchs_staging_folder_is_swept_by_the_next_fetch(tmp_path):
    """A fetch of several files stages them in ``.<set>.staging.<host>.<pid>.*``; a
    process killed inside leaves it, and the next fetch removes it once that process is
    gone, never a live fetch's folder (nor another host's before it is an hour old)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from frankwolfe.applications.data.download import staging_folder

    home = tmp_path / "home"
    child = ("import sys, time; from pathlib import Path\n"
             "from frankwolfe.applications.data.download import staging_folder\n"
             "with staging_folder(Path(sys.argv[1]), 'conll2000') as t:\n"
             "    (t / 'conll2000.zip').write_bytes(b'x' * 1000)\n"
             "    print(t, flush=True)\n"
             "    time.sleep(600)\n")
    procs = [subprocess.Popen([sys.executable, "-c", child, str(home)], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    try:
        killed, live = (Path(p.stdout.readline().strip()) for p in procs)
        assert killed.name.startswith(f".conll2000.staging.{socket.gethostname()}."
                                      f"{procs[0].pid}.")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        assert killed.is_dir()  # a killed process cleans nothing up
        other = home / ".conll2000.staging.otherhost.1.abc"  # another host's: age decides
        old = home / ".conll2000.staging.otherhost.2.def"
        other.mkdir()
        old.mkdir()
        os.utime(old, (time.time() - 7200, time.time() - 7200))
        for name in ("train.txt", "test.txt"):
            (home / "conll2000").mkdir(exist_ok=True)
            (home / "conll2000" / name).write_text("Confidence NN B-NP\n\n")
        assert sources.conll2000_home(home) == home  # present: nothing to download
        assert not killed.exists() and not old.exists()
        assert live.is_dir() and other.is_dir()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    # the live one's process is gone now: the next fetch removes it too
    assert sources.conll2000_home(home) == home and not live.exists()
    # a fetch that fails inside its staging folder leaves none
    with pytest.raises(RuntimeError), staging_folder(home, "cmu_house") as t:
        (t / "x").write_text("x")
        raise RuntimeError
    assert sorted(p.name for p in home.iterdir() if "staging" in p.name) == [other.name]

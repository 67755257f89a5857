"""Downloads and data files at the edges (issue #23): deadlines, caps, parse before keeping.

A real HTTP server on 127.0.0.1 (in a thread) trickles, stalls, sends HTML error pages,
endless zeros and half files; archives and gzip files that inflate to gigabytes are
refused before they fill the memory; and the readers name the file, the line and the
token of what they refuse.
"""

import functools
import http.server
import os
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from deflate_bomb import gzip_repeated, write_repeated

from frankwolfe.applications import fetch
from frankwolfe.applications.data import download as dl
from frankwolfe.applications.data import sources
from frankwolfe.applications.data.download import DownloadError, download
from frankwolfe.applications.matching.qaplib import read_qaplib
from frankwolfe.applications.structured_svm import load_conll2000, load_ocr
from frankwolfe.applications.traffic.tntp import read_flows, read_net, read_trips


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the mirror folder, except the paths in ``ways``: ``trickle`` (2 bytes every
    0.4 s of an announced 1000), ``stall`` (headers, then nothing), ``mute`` (no answer at
    all), ``zeros`` (an endless body without a length), ``huge`` (announces 1 TB),
    ``html`` (an error page with status 200), ``headers`` (headers trickling a byte
    every 0.4 s)."""

    ways: dict = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        way = self.ways.get(self.path.lstrip("/"))
        if way is None:
            return super().do_GET()
        try:
            if way == "mute":
                time.sleep(8)
                return
            if way == "headers":  # the status line, then one header byte at a time
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                for _ in range(50):  # bounded: 20 s at most, the client leaves long before
                    self.wfile.write(b"a")
                    self.wfile.flush()
                    time.sleep(0.4)
                return
            if way == "html":
                body = b"<!DOCTYPE html><html><body><h1>404: Not Found</h1></body></html>\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            if way == "huge":
                self.send_header("Content-Length", str(10 ** 12))
            elif way in ("trickle", "stall"):
                self.send_header("Content-Length", "1000")
            self.end_headers()
            if way == "trickle":
                for _ in range(50):  # bounded: 20 s at most, the client leaves long before
                    self.wfile.write(b"ab")
                    self.wfile.flush()
                    time.sleep(0.4)
            elif way == "stall":
                time.sleep(8)
            elif way == "zeros":
                block = b"\0" * (1 << 16)
                for _ in range(4096):  # 256 MB at most
                    self.wfile.write(block)
            elif way == "huge":
                self.wfile.write(b"\0" * 100)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "mirror"
    root.mkdir()
    handler = type("H", (_Handler,), {"ways": {}})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    # shutdown() waits for the serving loop's next poll: 0.5 s by default, in each of the
    # 40 tests here
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    httpd.root, httpd.ways = root, handler.ways
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _files(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# -- deadlines and caps ----------------------------------------------------------------
def test_a_trickling_server_fails_within_the_deadline(server, tmp_path):
    server.ways["slow.bin"] = "trickle"
    url = f"{server.url}/slow.bin"
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"slow\.bin passed its deadline of 1 s") as ei:
        download(url, tmp_path / "c" / "slow.bin", None, progress=False, deadline=1,
                 read_timeout=30)
    took = time.monotonic() - t0
    assert 0.9 <= took <= 1.6, took
    assert url in str(ei.value)
    assert _files(tmp_path / "c") == []


def test_trickling_headers_fail_within_the_deadline(server, tmp_path):
    """urllib reads the status line and headers before any read of the download's own:
    each byte within the read timeout, they held the call far past its deadline."""
    server.ways["slow_headers.bin"] = "headers"
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"slow_headers\.bin passed its deadline of 1 s"):
        download(f"{server.url}/slow_headers.bin", tmp_path / "c" / "slow_headers.bin", None,
                 progress=False, deadline=1, read_timeout=30)
    took = time.monotonic() - t0
    assert 0.9 <= took <= 1.6, took
    assert _files(tmp_path / "c") == []


def test_the_deadline_default_bounds_the_fetchers(server, tmp_path, monkeypatch):
    server.ways["qaplib/slow12.dat"] = "trickle"
    monkeypatch.setattr(dl, "DEADLINE", 1.0)
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"fetch_qaplib: .*slow12\.dat passed its deadline "
                                            r"of 1 s"):
        fetch.fetch_qaplib("slow12", data_home=tmp_path / "c", base_url=server.url)
    assert time.monotonic() - t0 <= 1.6
    assert _files(tmp_path / "c") == []


def test_a_stalled_body_is_a_read_timeout(server, tmp_path):
    server.ways["stall.bin"] = "stall"
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"stall\.bin timed out: no data for 1 s"):
        download(f"{server.url}/stall.bin", tmp_path / "stall.bin", None, progress=False,
                 read_timeout=1)
    assert time.monotonic() - t0 <= 1.6


def test_a_server_that_never_answers_is_a_connect_timeout(server, tmp_path):
    server.ways["mute.bin"] = "mute"
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"could not download .*mute\.bin.*timed out"):
        download(f"{server.url}/mute.bin", tmp_path / "mute.bin", None, progress=False,
                 connect_timeout=1)
    assert time.monotonic() - t0 <= 1.6


def test_sizes_past_the_cap_are_refused(server, tmp_path):
    server.ways["huge.bin"] = "huge"
    with pytest.raises(DownloadError, match=r"huge\.bin announces 1000000000000 bytes, more "
                                            r"than the 1048576"):
        download(f"{server.url}/huge.bin", tmp_path / "huge.bin", None, progress=False,
                 max_bytes=1 << 20)
    server.ways["zeros.bin"] = "zeros"
    with pytest.raises(DownloadError, match=r"zeros\.bin sent more than the 1048576 bytes"):
        download(f"{server.url}/zeros.bin", tmp_path / "zeros.bin", None, progress=False,
                 max_bytes=1 << 20)
    assert _files(tmp_path) == []


# -- files without a published checksum are parsed before they are kept ---------------
_NET = """<NUMBER OF ZONES> 2
<NUMBER OF NODES> 2
<FIRST THRU NODE> 1
<NUMBER OF LINKS> 2
<END OF METADATA>
~ init term cap len fft b power speed toll type ;
1 2 100 1 1 0.15 4 0 0 1 ;
2 1 100 1 1 0.15 4 0 0 1 ;
"""
_TRIPS = """<NUMBER OF ZONES> 2
<END OF METADATA>
Origin 1
    2 :    10.0;
Origin 2
    1 :     5.0;
"""
_FLOW = "From To Volume Cost\n1 2 10.0 1.5\n2 1 5.0 1.2\n"


def _mirror_tntp(root: Path, name: str, **files: str) -> None:
    folder = root / "tntp" / name
    folder.mkdir(parents=True)
    for kind, text in {"net": _NET, "trips": _TRIPS, "flow": _FLOW, **files}.items():
        (folder / f"{name}_{kind}.tntp").write_text(text)


def test_tntp_without_checksum_is_parsed_and_kept(server, tmp_path):
    _mirror_tntp(server.root, "Tiny")
    net, flows = fetch.fetch_tntp("Tiny", data_home=tmp_path / "c", base_url=server.url)
    assert net.demand.sum() == 15.0
    np.testing.assert_array_equal(flows, [10.0, 5.0])


@pytest.mark.parametrize("kind,text,why", [
    ("flow", "<!DOCTYPE html><html><body>404: Not Found</body></html>\n",
     "no flow lines"),
    ("flow", _FLOW[: _FLOW.index("\n2 1") + 1], "1 flow lines for the 2 links"),
    ("trips", _TRIPS[: _TRIPS.index("5.0;") + 2], "does not end with ';'"),
    ("trips", _TRIPS.replace("10.0", "abc"), "'abc'"),
    ("trips", _TRIPS.replace("10.0", "nan"), "'nan'"),
    ("net", _NET.replace("1 2 100", "1.5 2 100"), "init_node must be a positive integer"),
    ("flow", "\0" * 100_000, "no flow lines|not a TNTP flow"),
])
def test_tntp_that_does_not_parse_is_not_kept(server, tmp_path, kind, text, why):
    _mirror_tntp(server.root, "Bad", **{kind: text})
    cache = tmp_path / "c"
    with pytest.raises(DownloadError, match=rf"fetch_tntp: .*Bad_{kind}\.tntp is not a valid "
                                            rf"file .*({why}).*not kept") as ei:
        fetch.fetch_tntp("Bad", data_home=cache, base_url=server.url)
    assert ".part" not in str(ei.value)  # the URL is named, not a temporary file
    assert not any(p.endswith(f"Bad_{kind}.tntp") or ".part" in p for p in _files(cache))


def test_an_html_page_is_not_kept_as_a_qaplib_solution(server, shared_data, tmp_path):
    (server.root / "qaplib").mkdir()
    (server.root / "qaplib" / "other12.dat").write_bytes(
        (shared_data / "qaplib" / "had12.dat").read_bytes())
    server.ways["qaplib/other12.sln"] = "html"
    cache = tmp_path / "c"
    with pytest.raises(DownloadError, match=r"other12\.sln is not a valid file"):
        fetch.fetch_qaplib("other12", data_home=cache, base_url=server.url)
    assert _files(cache) == ["qaplib/other12.dat"]


def test_stale_part_files_are_swept(server, tmp_path):
    (server.root / "a.txt").write_text("hello\n")
    cache = tmp_path / "c"
    cache.mkdir()
    stale, fresh = cache / ".a.txt.old1.part", cache / ".a.txt.new1.part"
    stale.write_text("left by a killed download")
    fresh.write_text("another download in progress")
    past = time.time() - 2 * 3600
    os.utime(stale, (past, past))
    download(f"{server.url}/a.txt", cache / "a.txt", None, progress=False)
    assert _files(cache) == [".a.txt.new1.part", "a.txt"]


# -- archives and gzip that inflate to gigabytes ----------------------------------------
def test_a_conll_zip_bomb_is_refused_before_inflating(server, tmp_path, monkeypatch):
    size = 1400 << 20  # 1.4 GB of zeros, about 1.4 MB deflated
    block = b"\0" * (14 << 20)
    with zipfile.ZipFile(server.root / "conll2000.zip", "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("conll2000/train.txt", "w", force_zip64=True) as fh:
            write_repeated(fh, b"", block, size // len(block))
        z.writestr("conll2000/test.txt", "Confidence NN B-NP\n")
    assert (server.root / "conll2000.zip").stat().st_size < 2 << 20
    monkeypatch.setattr(sources, "_CONLL_ZIP", f"{server.url}/conll2000.zip")
    cache = tmp_path / "c"
    tracemalloc.start()
    try:
        with pytest.raises(DownloadError, match=r"conll2000\.zip: member 'conll2000/train.txt' "
                                                r"announces 1468006400 bytes, more than the "
                                                r"67108864 .*refused before inflating"):
            sources.conll2000_home(cache)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak
    assert _files(cache) == []


def test_an_ocr_gzip_bomb_is_refused_at_its_cap(tmp_path, monkeypatch):
    from frankwolfe.applications.structured_svm.datasets import ocr

    monkeypatch.setattr(ocr, "MAX_BYTES", 32 << 20)  # the test's cap: 32 MB, not 256
    folder = tmp_path / "ocr"
    folder.mkdir()
    gzip_repeated(folder / "letters.pickle.gz", b"\0" * (1 << 20), 1024)  # 1 GiB inflated
    assert (folder / "letters.pickle.gz").stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"letters\.pickle\.gz holds more than 33554432 "
                                             r"bytes once decompressed"):
            load_ocr("ocr", data_home=tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80 << 20, peak


# -- readers name the file, the line and the token --------------------------------------
def _write(tmp_path, name, data):
    p = tmp_path / name
    (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)
    return p


@pytest.mark.parametrize("reader,name,data,match", [
    (read_net, "a_net.tntp", _NET.replace("2 1 100", "2 1.5 100"),
     r"a_net\.tntp:8: term_node must be a positive integer, got '1\.5'"),
    (read_net, "b_net.tntp", _NET.replace("100 1 1 0.15", "100 1 nan 0.15", 1),
     r"b_net\.tntp:7: a link value must be a finite number, got 'nan'"),
    (read_net, "c_net.tntp", b"\x89PNG\r\n\x1a\n\x00\x00garbage",
     r"c_net\.tntp:1: not a text file"),
    (read_trips, "d_trips.tntp", _TRIPS.replace("10.0;", "abc;"),
     r"d_trips\.tntp:4: the trips of entry '2 :    abc' must be a finite number"),
    (read_trips, "e_trips.tntp", _TRIPS.replace("10.0;", "nan;"), r"e_trips\.tntp:4: .*'nan'"),
    (read_trips, "f_trips.tntp", _TRIPS.replace("2 :", "2.5 :"),
     r"f_trips\.tntp:4: the destination must be a positive integer, got '2\.5'"),
    (read_trips, "g_trips.tntp", _TRIPS[:-4], r"g_trips\.tntp:6: entry '1 :     5' does not "
                                              r"end with ';'"),
    (read_flows, "h_flow.tntp", _FLOW.replace("5.0", "inf"),
     r"h_flow\.tntp:3: volume must be a finite number, got 'inf'"),
    (read_qaplib, "i.dat", "2\n1 2\nnan 4\n1 2 3 4\n", r"i\.dat:3: token 'nan' is not a finite"),
    (read_qaplib, "j.dat", "2\n1 2\n3 12345678901234567890\n1 2 3 4\n",
     r"j\.dat:3: token '12345678901234567890' is out of the range of 64-bit integers"),
    (read_qaplib, "k.dat", b"2\n1 2\n\xff\xfe\n", r"k\.dat:3: not a text file"),
])
def test_readers_name_the_file_the_line_and_the_token(tmp_path, reader, name, data, match):
    with pytest.raises(ValueError, match=match):
        reader(_write(tmp_path, name, data))


def test_truncated_and_garbled_ocr_and_conll_files_are_named(shared_data, tmp_path):
    raw = (shared_data / "ocr" / "letters.pickle.gz").read_bytes()
    (tmp_path / "ocr").mkdir()
    (tmp_path / "ocr" / "letters.pickle.gz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"load_ocr: .*letters\.pickle\.gz: cannot read it "
                                         r"\(EOFError"):
        load_ocr("ocr", data_home=tmp_path)
    folder = tmp_path / "conll" / "conll2000"
    folder.mkdir(parents=True)
    train = (shared_data / "conll2000" / "train.txt").read_bytes()
    (folder / "train.txt").write_bytes(train[:5000] + b"\xff\xfe garbage\n")
    (folder / "test.txt").write_bytes(train[:2000])
    with pytest.raises(ValueError, match=r"train\.txt:\d+: not ASCII text \(byte 0xff"):
        load_conll2000(data_home=tmp_path / "conll")


def test_a_truncated_conll_file_that_still_parses_is_refused(shared_data, tmp_path):
    """Cut at 93%, train.txt ends in a whole-looking line ('them PRP B-N': a 24th tag)
    and 8313 of its 8936 sentences; its sha256 is not the published one."""
    folder = tmp_path / "conll2000"
    folder.mkdir()
    train = (shared_data / "conll2000" / "train.txt").read_bytes()
    (folder / "test.txt").write_bytes((shared_data / "conll2000" / "test.txt").read_bytes())
    cut = train[: int(len(train) * 0.93)]
    tags = {ln.split()[2] for ln in cut.decode().splitlines() if len(ln.split()) == 3}
    full_tags = {ln.split()[2] for ln in train.decode().splitlines() if ln.strip()}
    assert tags - full_tags  # the cut tag is one CoNLL-2000 does not have: it parses
    (folder / "train.txt").write_bytes(cut)
    with pytest.raises(ValueError, match=r"load_conll2000: .*train\.txt has sha256 [0-9a-f]{64}, "
                                         r"not the published 82033cd7.*: a truncated or "
                                         r"modified copy \(8313 sentences read, CoNLL-2000's "
                                         r"train\.txt has 8936\)"):
        load_conll2000(data_home=tmp_path)
    # cut at a sentence's end: every line whole, every tag known; still refused
    (folder / "train.txt").write_bytes(train[: train.index(b"\n\n", len(train) // 2) + 2])
    with pytest.raises(ValueError, match=r"train\.txt has sha256 .* not the published"):
        load_conll2000(data_home=tmp_path)


def test_a_truncated_tntp_flow_file_is_refused(shared_data, tmp_path):
    """SiouxFalls_flow.tntp cut at 50%: 39 flows for the 76 links, the last one a cut
    number; every path that reads it refuses it."""
    src = shared_data / "tntp" / "SiouxFalls"
    folder = tmp_path / "tntp" / "SiouxFalls"
    folder.mkdir(parents=True)
    for f in src.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    n_links = read_net(src / "SiouxFalls_net.tntp")[0]["init_node"].size
    assert n_links == 76
    flow = folder / "SiouxFalls_flow.tntp"
    raw = flow.read_bytes()
    flow.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"SiouxFalls_flow\.tntp:40: the last line '13 \\t24 "
                                         r"\\t111' does not end with a line break"):
        read_flows(flow)
    with pytest.raises(ValueError, match=r"fetch_tntp: .*SiouxFalls_flow\.tntp has sha256 "
                                         r"[0-9a-f]{64}, not the published 5d0b83a2"):
        fetch.fetch_tntp("SiouxFalls", data_home=tmp_path, download_if_missing=False)
    from frankwolfe.applications.traffic import load_siouxfalls

    with pytest.raises(ValueError, match=r"load_siouxfalls: .*not the published"):
        load_siouxfalls(tmp_path)
    # cut at a line's end: whole lines, 39 of them for 76 links
    lines = raw.decode().splitlines(keepends=True)
    flow.write_text("".join(lines[:40]))
    assert len(read_flows(flow)[2]) == 39
    with pytest.raises(ValueError, match=r"39 flow lines for the 76 links of the network"):
        read_flows(flow, n_links=n_links)
    with pytest.raises(ValueError, match="`n_links` must be a positive integer, got 0"):
        read_flows(src / "SiouxFalls_flow.tntp", n_links=0)
    assert read_flows(src / "SiouxFalls_flow.tntp", n_links=76)[1].shape == (76,)


def test_only_a_404_status_skips_an_optional_file(server, tmp_path):
    """A missing optional file (404) is skipped; a refused one is an error even when its
    URL happens to contain "404" (the server's port may): the status decides, not the
    message."""
    with pytest.raises(DownloadError) as missing:
        download(f"{server.url}/nothing.bin", tmp_path / "a" / "x.bin", None, progress=False)
    assert missing.value.status == 404
    _mirror_tntp(server.root, "N404", flow="<html>404</html>\n")
    with pytest.raises(DownloadError, match="not a valid file") as bad:
        fetch.fetch_tntp("N404", data_home=tmp_path / "c", base_url=server.url)
    assert bad.value.status is None
    (server.root / "tntp" / "N404" / "N404_flow.tntp").unlink()
    net, flows = fetch.fetch_tntp("N404", data_home=tmp_path / "c", base_url=server.url)
    assert flows is None and net.demand.sum() == 15.0

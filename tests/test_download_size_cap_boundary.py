"""The download size cap at its edge (belongs with tests/test_edges_downloads.py, whose
oversize server announces 1 TB against a 1 MB cap: any factor on the cap passed it).

A local HTTP server announces (or not) and sends ``n`` bytes; with ``max_bytes = n - 1`` the
announced length alone refuses the file (before any body is read), with ``max_bytes = n``
it is kept whole."""

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from frankwolfe.applications.data.download import DownloadError, download

N = 4096
BODY = bytes(range(256)) * (N // 256)


class _Handler(http.server.BaseHTTPRequestHandler):
    served = 0

    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200)
        if not self.path.endswith("/nolen.bin"):  # else HTTP/1.0: the body ends at the close
            self.send_header("Content-Length", str(N))
        self.end_headers()
        self.wfile.write(BODY)
        type(self).served += 1

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/f.bin"
    httpd.shutdown()
    httpd.server_close()


def test_an_announced_length_one_byte_over_the_cap_is_refused(server, tmp_path):
    target = tmp_path / "f.bin"
    with pytest.raises(DownloadError, match=f"announces {N} bytes, more than the {N - 1}"):
        download(server, target, None, progress=False, max_bytes=N - 1)
    assert not target.exists()
    assert [p for p in tmp_path.iterdir()] == []


def test_a_file_of_exactly_the_cap_is_kept(server, tmp_path):
    target = tmp_path / "f.bin"
    download(server, target, hashlib.sha256(BODY).hexdigest(), progress=False, max_bytes=N)
    assert Path(target).read_bytes() == BODY


def test_an_unannounced_body_one_byte_over_the_cap_is_refused(server, tmp_path):
    target = tmp_path / "f.bin"
    url = server.replace("/f.bin", "/nolen.bin")
    with pytest.raises(DownloadError, match=f"sent more than the {N - 1} bytes"):
        download(url, target, None, progress=False, max_bytes=N - 1)
    assert [p for p in tmp_path.iterdir()] == []
    download(url, target, None, progress=False, max_bytes=N)
    assert target.read_bytes() == BODY

"""Traffic against published references: best-known objective values and flows of the
TransportationNetworks collection, the collection's published network sizes, and the
fetch registry's file names and sha256 against the byte-for-byte copies in ../shared/data.

Independent references: the objective value printed in the collection's README (SiouxFalls:
4231335.2871074397, ``SOURCE.md``), its ``*_flow.tntp`` volumes and costs, and the zone /
node / link counts of its README's "Summary of Networks".
"""

from __future__ import annotations

import functools
import http.server
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

from frankwolfe.applications import fetch
from frankwolfe.applications.data import sources
from frankwolfe.applications.data.download import DownloadError, sha256_of
from frankwolfe.applications.traffic import Beckmann, read_flows, relative_gap, traffic_assignment

#: zones, nodes, links of the collection's README ("Summary of Networks")
PUBLISHED_SIZES = {
    "SiouxFalls": (24, 24, 76),
    "Eastern-Massachusetts": (74, 74, 258),
    "Berlin-Tiergarten": (26, 361, 766),
    "Berlin-Center": (865, 12981, 28376),
}


def _present(shared_data: Path) -> list[str]:
    return [n for n in sources.TNTP_NETWORKS if (shared_data / "tntp" / n).is_dir()]


def test_registry_names_the_collections_files():
    sf = sources.tntp_files("siouxfalls")  # any case
    assert sf["net"].path == "tntp/SiouxFalls/SiouxFalls_net.tntp"
    assert sf["flow"].optional and not sf["net"].optional
    assert sf["trips"].url.endswith("/SiouxFalls/SiouxFalls_trips.tntp")
    ema = sources.tntp_files("Eastern-Massachusetts")
    assert ema["net"].path == "tntp/Eastern-Massachusetts/EMA_net.tntp"
    assert "flow" not in ema  # no best-known flow file published: none is asked for
    assert sources.tntp_files("Chicago-Sketch")["flow"].path == \
        "tntp/Chicago-Sketch/ChicagoSketch_flow.tntp"
    assert sources.tntp_files("Austin")["trips"].path == "tntp/Austin/Austin_trips_am.tntp"
    other = sources.tntp_files("Foo")  # not registered: the collection's convention
    assert other["net"].path == "tntp/Foo/Foo_net.tntp" and other["flow"].optional
    with pytest.raises(ValueError, match="plain name"):
        sources.tntp_files("../SiouxFalls")


def test_registry_sha256_match_the_shared_copies(shared_data):
    checked = 0
    for path, digest in sources.SHA256.items():
        if path.startswith("tntp/") and (shared_data / path).is_file():
            assert sha256_of(shared_data / path) == digest, path
            checked += 1
    if not checked:
        pytest.skip("no TNTP files in the shared data")
    for name in _present(shared_data):  # every present network has its files registered
        for f in sources.tntp_files(name).values():
            if (shared_data / f.path).is_file():
                assert f.path in sources.SHA256, f.path


def test_fetch_tntp_reads_every_shared_network_at_its_published_size(shared_data):
    names = [n for n in _present(shared_data) if n in PUBLISHED_SIZES]
    if not names:
        pytest.skip("no TNTP networks in the shared data")
    for name in names:
        net, best = fetch.fetch_tntp(name, data_home=shared_data, download_if_missing=False)
        assert (net.n_zones, net.n_nodes, net.n_links) == PUBLISHED_SIZES[name], name
        assert (best is None) == (sources.TNTP_NETWORKS[name].flow is None), name


@pytest.mark.parametrize("name", ["SiouxFalls"])
def test_converged_beckmann_value_and_flows_match_the_best_known(shared_data, name):
    entry = sources.TNTP_NETWORKS[name]
    if not (shared_data / "tntp" / name).is_dir():
        pytest.skip(f"{name} not in the shared data")
    net, best = fetch.fetch_tntp(name, data_home=shared_data, download_if_missing=False)
    assert best is not None and entry.best_objective is not None
    res = traffic_assignment(net, "bcfw", rel_gap=1e-10, max_iter=5000, random_state=0)
    assert res.success, res.message
    assert relative_gap(net, res.x) <= 1e-10 * (1 + 1e-6)
    # the published value, to 1e-8 relative either way (the criterion); the
    # published flows' own value agrees with it (their relative gap is about 1e-14)
    assert abs(res.fun - entry.best_objective) <= 1e-8 * entry.best_objective
    assert abs(Beckmann(net).value(best) - entry.best_objective) <= 1e-10 * entry.best_objective
    # flows: link flows at equilibrium are unique for strictly increasing costs
    np.testing.assert_allclose(res.x, best, rtol=0, atol=1e-6 * best.max())
    # the flow file's link costs at the best-known volumes, against ours at our flows
    _, _, cost = read_flows(shared_data / "tntp" / name / entry.flow)
    np.testing.assert_allclose(net.link_costs(res.x), cost, rtol=1e-7)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "mirror"
    handler = functools.partial(_Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _serve(shared_data, root, city, as_city, names):
    """Put the shared data's files of ``city`` into the mirror ``root`` as network
    ``as_city``, each file under its new name (``names``: old -> new); skip without them.
    Returns the mirror's folder of the network."""
    src = shared_data / "tntp" / city
    if not src.is_dir():
        pytest.skip(f"{city} not in the shared data")
    folder = root / "tntp" / as_city
    folder.mkdir(parents=True)
    for old, new in names.items():
        (folder / new).write_bytes((src / old).read_bytes())
    return folder


def test_download_without_known_sha256_warns_with_its_digest(shared_data, mirror, tmp_path):
    root, url = mirror
    # the files of SiouxFalls under a registered name whose files have no known digest
    _serve(shared_data, root, "SiouxFalls", "Braess-Example",
           {f"SiouxFalls_{k}.tntp": f"Braess_{k}.tntp" for k in ("net", "trips")})
    with pytest.warns(sources.UnverifiedDataWarning) as record:
        net, best = fetch.fetch_tntp("Braess-Example", data_home=tmp_path / "c", base_url=url)
    assert net.n_links == 76 and best is None
    messages = " ".join(str(w.message) for w in record)
    for kind in ("net", "trips"):  # each named with the digest to pin it by
        assert f"Braess_{kind}.tntp" in messages
        assert sources.SHA256[f"tntp/SiouxFalls/SiouxFalls_{kind}.tntp"] in messages


def test_download_with_known_sha256_is_quiet_and_refuses_a_changed_file(shared_data, mirror,
                                                                        tmp_path):
    root, url = mirror
    folder = _serve(shared_data, root, "Eastern-Massachusetts", "Eastern-Massachusetts",
                    {f: f for f in ("EMA_net.tntp", "EMA_trips.tntp")})
    with warnings.catch_warnings():
        warnings.simplefilter("error", sources.UnverifiedDataWarning)
        net, best = fetch.fetch_tntp("Eastern-Massachusetts", data_home=tmp_path / "a",
                                     base_url=url)
    assert net.n_links == 258 and best is None
    text = (folder / "EMA_net.tntp").read_text()
    (folder / "EMA_net.tntp").write_text(text.replace("\t1\t", "\t2\t", 1))  # one field
    with pytest.raises(DownloadError, match=r"EMA_net.tntp: sha256 .* does not match"):
        fetch.fetch_tntp("Eastern-Massachusetts", data_home=tmp_path / "b", base_url=url)
    assert not (tmp_path / "b" / "tntp" / "Eastern-Massachusetts" / "EMA_net.tntp").exists()

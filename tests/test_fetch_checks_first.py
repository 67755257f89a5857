"""Every fetcher refuses a bad argument before it looks for a file or downloads one
(``fetch_ocr`` used to download ``ocr.mat``, 947 kB, before it refused ``split``)."""

import numpy as np
import pytest

from frankwolfe.applications import fetch


class _Touched(Exception):
    """Raised by the stand-ins of the functions that look for files or download them."""


@pytest.fixture
def no_access(monkeypatch):
    """Every way the fetchers reach the data home or the network raises ``_Touched``."""
    def touched(*args, **kwargs):
        raise _Touched
    for name in ("ocr_home", "conll2000_home", "cmu_house_home", "snakes_home", "fetch_files"):
        monkeypatch.setattr(fetch, name, touched)


FETCHERS = {
    "fetch_ocr": lambda **kw: fetch.fetch_ocr(**kw),
    "fetch_conll2000": lambda **kw: fetch.fetch_conll2000(**kw),
    "fetch_cmu_house": lambda **kw: fetch.fetch_cmu_house(**kw),
    "fetch_snakes": lambda **kw: fetch.fetch_snakes(**kw),
    "fetch_qaplib": lambda **kw: fetch.fetch_qaplib("nug12", **kw),
    "fetch_tntp": lambda **kw: fetch.fetch_tntp("SiouxFalls", **kw),
}


def test_fetch_ocr_refuses_split_before_downloading(tmp_path):
    # a mirror no server answers: the download used to fail before `split` was read
    with pytest.raises(ValueError, match=r"fetch_ocr: `split` must be 'ocr2' or 'ocr', "
                                         r"got 'zz'"):
        fetch.fetch_ocr(split="zz", data_home=tmp_path, base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="fetch_ocr: `split`"):
        fetch.fetch_ocr(split="zz", data_home=tmp_path, download_if_missing=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad, error", [("zz", ValueError), ("OCR2", ValueError),
                                        (2, TypeError), (None, TypeError)])
def test_fetch_ocr_split(tmp_path, no_access, bad, error):
    with pytest.raises(error, match=rf"fetch_ocr: `split` must be 'ocr2' or 'ocr', got "
                                    rf"{bad!r}"):
        fetch.fetch_ocr(split=bad, data_home=tmp_path)
    for good in ("ocr", "ocr2", np.str_("ocr")):
        with pytest.raises(_Touched):
            fetch.fetch_ocr(split=good, data_home=tmp_path)


@pytest.mark.parametrize("name", FETCHERS)
def test_bad_shared_arguments_are_refused_first(tmp_path, no_access, name):
    call = FETCHERS[name]
    with pytest.raises(TypeError, match=rf"{name}: `download_if_missing` must be True or "
                                        r"False, got 'no'"):
        call(data_home=tmp_path, download_if_missing="no")
    with pytest.raises(TypeError, match=rf"{name}: `base_url` must be a URL \(a str\) or "
                                        r"None, got 5 \(int\)"):
        call(data_home=tmp_path, base_url=5)
    with pytest.raises(ValueError, match=rf"{name}: `base_url` must be a URL such as .*, "
                                         r"got ' '"):
        call(data_home=tmp_path, base_url=" ")
    with pytest.raises(TypeError, match=r"`data_home` must be a folder"):
        call(data_home=3)
    # valid arguments, numpy's bool among them, get as far as the data home
    for flag in (True, False, np.bool_(False)):
        with pytest.raises(_Touched):
            call(data_home=tmp_path, download_if_missing=flag, base_url="http://127.0.0.1:9")
    assert list(tmp_path.iterdir()) == []


def test_names_are_refused_first(tmp_path, no_access):
    with pytest.raises(TypeError, match=r"fetch_qaplib: `name` must be a str such as "
                                        r"'nug12', got 12 \(int\)"):
        fetch.fetch_qaplib(12, data_home=tmp_path)
    with pytest.raises(ValueError, match=r"fetch_qaplib: `name` must be a plain name"):
        fetch.fetch_qaplib("../nug12", data_home=tmp_path)
    with pytest.raises(TypeError, match=r"fetch_tntp: `network` must be a str such as "
                                        r"'SiouxFalls', got None \(NoneType\)"):
        fetch.fetch_tntp(None, data_home=tmp_path)
    with pytest.raises(ValueError, match=r"fetch_tntp: `network` must be a plain name"):
        fetch.fetch_tntp("a/b", data_home=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_conll2000_return_info_first(tmp_path, no_access):
    with pytest.raises(TypeError, match=r"fetch_conll2000: `return_info` must be True"):
        fetch.fetch_conll2000(data_home=tmp_path, return_info="yes")

"""Where the data sets live (scikit-learn style ``data_home``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_HOME", "get_data_home", "find_folder"]

#: the environment variable naming the data home
ENV_HOME = "FRANKWOLFE_DATA"


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the data home: the folder the loaders read and the fetchers write.

    Parameters
    ----------
    data_home : path, optional
        Used as given.  Otherwise the environment variable ``FRANKWOLFE_DATA``;
        otherwise ``~/frankwolfe_data``.

    Notes
    -----
    Only these three places are read.  Earlier development versions also used a
    ``../shared/data`` folder next to a clone of the repository when it existed; that
    fallback moved to the test configuration (``tests/conftest.py`` sets
    ``FRANKWOLFE_DATA`` to it), so a user's run reads no folder the user did not name.

    Raises
    ------
    TypeError
        When ``data_home`` is neither None, a ``str`` nor an ``os.PathLike`` (every
        loader and fetcher reads its ``data_home`` here).
    """
    if data_home is not None:
        # pathlib's own "expected str, bytes or os.PathLike object, not int" named no
        # argument; bytes paths are refused by Path too
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(f"`data_home` must be a folder (a str or an os.PathLike) or "
                            f"None, got {data_home!r} ({type(data_home).__name__})")
        return Path(data_home).expanduser()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    return Path.home() / "frankwolfe_data"


def find_folder(data_home: str | os.PathLike[str] | None, name: str, expected: list[str],
                loader: str) -> Path:
    """The folder holding one data set: ``<data_home>/<name>``, or ``data_home`` itself
    when the files are directly there.  Raises a ``FileNotFoundError`` naming the
    expected files when neither has any of them."""
    home = get_data_home(data_home)
    for folder in (home / name, home):
        if any((folder / f).is_file() for f in expected):
            return folder
    raise FileNotFoundError(
        f"{loader}: no data found. Expected one of {expected} in {home / name} (or in {home}). "
        f"Pass `data_home=` or set the environment variable {ENV_HOME} to the folder that "
        f"contains '{name}/', or pass download_if_missing=True (or call fetch_{name}) to "
        f"download the files from their public origin (see frankwolfe.applications.fetch)."
    )

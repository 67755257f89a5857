"""Where the data sets live (scikit-learn style ``data_home``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["get_data_home", "find_folder"]

ENV_VAR = "FRANKWOLFE_DATA"


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the data folder.

    Parameters
    ----------
    data_home : path, optional
        Used as given.  Otherwise the environment variable ``FRANKWOLFE_DATA``;
        otherwise ``../shared/data`` next to the repository when it exists;
        otherwise ``~/frankwolfe_data``.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[3]
    shared = repo.parent / "shared" / "data"
    if shared.is_dir():
        return shared
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
        f"Pass `data_home=` or set the environment variable {ENV_VAR} to the folder that "
        f"contains '{name}/', or pass download_if_missing=True (or call fetch_{name}) to "
        f"download the files from their public origin (see frankwolfe.applications.fetch)."
    )

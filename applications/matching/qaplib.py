"""Readers for QAPLIB instance (``.dat``) and solution (``.sln``) files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from frankwolfe._warnings import warn_user
from frankwolfe.errors import ShapeError

from .objective import check_qap_matrices, qap_value

__all__ = ["read_qaplib", "read_qaplib_solution", "QAPLIBSolution", "QAPLIBConventionWarning"]

#: the conventions tried by :func:`read_qaplib_solution`, in order
CONVENTIONS = ("1-based", "1-based inverse", "0-based", "0-based inverse")


class QAPLIBConventionWarning(UserWarning):
    """A ``.sln`` permutation matched its objective only as 0-based or inverted."""


class _Tokens(list[str]):
    """The whitespace-separated tokens of a file, with the line of each, and whether the
    file ends with whitespace (a line break) after its last token."""

    lines: list[int]
    closed: bool


def _tokens(path: str | os.PathLike, what: str) -> tuple[Path, _Tokens]:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise FileNotFoundError(f"{what}: cannot read {path}: {err}") from err
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark glued itself to n
    except UnicodeDecodeError as e:
        bad_line = raw[:e.start].count(b"\n") + 1
        raise ValueError(f"{what}: {path}:{bad_line}: not a text file (byte "
                         f"{raw[e.start]:#04x} at offset {e.start})") from None
    tokens = _Tokens()
    tokens.lines = []
    tokens.closed = not text or text[-1].isspace()
    for line_no, line in enumerate(text.splitlines(), 1):
        # commas separate too (some .sln files list the permutation as "7,5,12,...")
        for t in line.replace(",", " ").split():
            tokens.append(t)
            tokens.lines.append(line_no)
    return path, tokens


_INT64_MAX = np.iinfo(np.int64).max


def _numbers(tokens: _Tokens, path: Path, start: int = 0, stop: int | None = None,
             who: str = "read_qaplib") -> np.ndarray:
    """``tokens[start:stop]`` as int64 when all are integers, else float64; a token that
    is not a finite number, or an integer beyond int64, is a ``ValueError`` naming the
    file, its line and the token."""
    stop = len(tokens) if stop is None else stop
    ints: list[int] = []
    for i in range(start, stop):
        t = tokens[i]
        try:
            v = int(t)
        except ValueError:
            break
        if abs(v) > _INT64_MAX:
            raise ValueError(f"{who}: {path}:{tokens.lines[i]}: token {t!r} is out of the "
                             "range of 64-bit integers")
        ints.append(v)
    else:
        return np.array(ints, dtype=np.int64)
    out = np.empty(stop - start)
    for k, i in enumerate(range(start, stop)):
        t = tokens[i]
        try:
            x = float(t)
        except ValueError:
            raise ValueError(f"{who}: {path}:{tokens.lines[i]}: token {t!r} is not a "
                             "number") from None
        if not np.isfinite(x):
            raise ValueError(f"{who}: {path}:{tokens.lines[i]}: token {t!r} is not a finite "
                             "number")
        out[k] = x
    return out


def _size(token: str, path: Path, who: str) -> int:
    try:
        n = int(token)
    except ValueError:
        raise ValueError(
            f"{who}: {path}: the first token must be the size n, got {token!r}") from None
    if n < 1:
        raise ValueError(f"{who}: {path}: the size n must be >= 1, got {n}")
    return n


def read_qaplib(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a QAPLIB instance.

    The file is a whitespace-separated stream of ``1 + 2 n^2`` numbers:
    ``n``, then ``A`` and ``B`` row-major (rows may wrap across lines).
    The objective of a permutation ``p`` is ``sum_{i,j} A[i, j] B[p(i), p(j)]``.

    Parameters
    ----------
    path : str or path-like
        The ``.dat`` file.

    Returns
    -------
    A, B : (n, n) ndarray
        Integer arrays (``int64``) when every entry is an integer, else float.

    Raises
    ------
    ValueError
        When the file is empty, a token is not a number, the token count is not
        ``1 + 2 n^2`` (the message gives both counts), or the last number is not
        followed by a line break (or other whitespace): a file cut inside its last
        number still has ``1 + 2 n^2`` of them (every QAPLIB ``.dat`` ends with a
        line break).
    """
    path, tokens = _tokens(path, "read_qaplib")
    if not tokens:
        raise ValueError(f"read_qaplib: {path} is empty; expected n followed by two n x n matrices")
    n = _size(tokens[0], path, "read_qaplib")
    expected = 1 + 2 * n * n
    if len(tokens) != expected:
        raise ValueError(
            f"read_qaplib: {path}: n = {n} needs 1 + 2 n^2 = {expected} numbers, "
            f"found {len(tokens)}"
        )
    if not tokens.closed:
        # the count stays 1 + 2 n^2 when the cut falls inside the last number ("36"
        # read as "3"); the published files end with a line break
        raise ValueError(f"read_qaplib: {path}:{tokens.lines[-1]}: the last number "
                         f"{tokens[-1]!r} is not followed by a line break: a truncated file "
                         "(if the file is whole, end it with a line break)")
    values = _numbers(tokens, path, 1)
    A = values[: n * n].reshape(n, n)
    B = values[n * n:].reshape(n, n)
    return A, B


class QAPLIBSolution(tuple):
    """``(objective, permutation)`` read from a ``.sln`` file, plus the convention that matched.

    Attributes
    ----------
    objective : float or int
        The stated objective (checked against the permutation).
    permutation : ndarray of int
        0-based ``p`` with ``objective == sum_{i,j} A[i, j] B[p(i), p(j)]``,
        whatever convention the file used.
    convention : str
        How the file's permutation had to be read: ``"1-based"`` (the QAPLIB
        standard), ``"1-based inverse"``, ``"0-based"`` or ``"0-based inverse"``.
    """

    convention: str

    def __new__(cls, objective: float, permutation: np.ndarray, convention: str) -> QAPLIBSolution:
        obj = super().__new__(cls, (objective, permutation))
        obj.convention = convention
        return obj

    @property
    def objective(self) -> float:
        """The stated objective."""
        return self[0]

    @property
    def permutation(self) -> np.ndarray:
        """The permutation in the standard convention, 0-based."""
        return self[1]


def read_qaplib_solution(path: str | os.PathLike, A: ArrayLike, B: ArrayLike, *,
                         rtol: float = 1e-9) -> QAPLIBSolution:
    """Read a QAPLIB solution and check its stated objective.

    The file holds ``n objective`` then a permutation of length ``n``.  The
    standard convention is 1-based ``p`` with objective
    ``sum_{i,j} A[i, j] B[p(i), p(j)]``; some files in the wider library give
    the inverse permutation or 0-based indices.  The stated objective is
    compared with the objective of the permutation read 1-based, then
    inverted, then 0-based, then 0-based inverted; the first match wins, and
    a non-standard match issues a :class:`QAPLIBConventionWarning`.

    Parameters
    ----------
    path : str or path-like
        The ``.sln`` file.
    A, B : (n, n) array_like
        The instance (from :func:`read_qaplib`).
    rtol : float, default 1e-9
        Relative tolerance of the objective check (the values are integers
        in QAPLIB; the tolerance covers non-integer variants).

    Returns
    -------
    QAPLIBSolution
        Unpacks as ``objective, permutation`` (0-based, standard
        convention); ``.convention`` tells which reading matched.

    Raises
    ------
    ValueError
        Malformed file (token count other than ``2 + n``, ``n`` not the size
        of ``A``, entries that are not a permutation), or an objective that
        no convention reproduces (the message lists the values found).
    """
    A, B = check_qap_matrices(A, B, "read_qaplib_solution")
    path, tokens = _tokens(path, "read_qaplib_solution")
    if len(tokens) < 2:
        raise ValueError(f"read_qaplib_solution: {path}: expected 'n objective' then n indices, "
                         f"found {len(tokens)} tokens")
    n = _size(tokens[0], path, "read_qaplib_solution")
    if n != A.shape[0]:
        raise ShapeError(f"read_qaplib_solution: {path} is for n = {n} but `A` is {A.shape}")
    if len(tokens) != 2 + n:
        raise ValueError(f"read_qaplib_solution: {path}: n = {n} needs 2 + n = {2 + n} numbers "
                         f"(n, objective, permutation), found {len(tokens)}")
    stated_arr = _numbers(tokens, path, 1, 2, "read_qaplib_solution")
    stated = stated_arr[0].item()
    try:
        raw = np.array([int(t) for t in tokens[2:]], dtype=np.int64)
    except (ValueError, OverflowError):
        raise ValueError(f"read_qaplib_solution: {path}: the permutation must be integers, "
                         f"got {tokens[2:]}") from None
    tried = []
    for base in (1, 0):
        p = raw - base
        if not np.array_equal(np.sort(p), np.arange(n)):
            continue
        inv = np.empty_like(p)
        inv[p] = np.arange(n)
        for label, perm in ((f"{base}-based", p), (f"{base}-based inverse", inv)):
            value = qap_value(A, B, perm)
            tried.append(f"{label}: {value:.12g}")
            if abs(value - stated) <= rtol * max(1.0, abs(stated)):
                if label != "1-based":
                    warn_user(
                        f"read_qaplib_solution: {path}: the permutation matches the stated "
                        f"objective only read as {label}", QAPLIBConventionWarning)
                return QAPLIBSolution(stated, perm, label)
    if not tried:
        raise ValueError(f"read_qaplib_solution: {path}: {raw.tolist()} is not a permutation "
                         f"of 1..{n} or of 0..{n - 1}")
    raise ValueError(f"read_qaplib_solution: {path}: stated objective {stated} matches no "
                     f"convention ({'; '.join(tried)})")

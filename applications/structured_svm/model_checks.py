"""What :func:`~.model_io.load_model` checks before it believes a model file.

A model file is untrusted input: its members are read with bounds checked before
anything is inflated or allocated, and its header is checked against a schema
(types, ranges, and the model's consistency with the arrays' shapes and dtypes).
Every failure is a :class:`ModelFileError` naming the file and the field.
"""

from __future__ import annotations

import io
import math
import os
import re
import zipfile
from collections.abc import Iterable
from typing import IO, Any, cast

import numpy as np

__all__ = ["ModelFileError", "Members", "check_schema", "json_depth"]

#: the header is JSON of a few kB (the warm-start layout adds a line per array)
HEADER_CAP = 16 << 20
#: deflate inflates at most 1032:1; a member announcing more lies about its size
_DEFLATE_RATIO = 1040
#: nesting of the header JSON (the warm-start layout is a few levels deep)
MAX_DEPTH = 64
#: rows of a fit's history (one evaluation a pass at most): 80 MB a column
MAX_HISTORY_ROWS = 10_000_000
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ModelFileError(ValueError):
    """A model file that cannot be read: truncated, modified, forged or of a newer format."""


def _err(path: Any, field: str, problem: str) -> ModelFileError:
    return ModelFileError(f"{path}: {field}: {problem}")


class Members:
    """The members of a model file's zip archive, read one at a time with bounds.

    The archive's directory is read on opening (a small, bounded read); a member is
    inflated only by :meth:`read`, after its declared size was checked against the
    cap the caller derives from the header and its npy header against the expected
    dtype and shape.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except FileNotFoundError:
            raise
        except Exception as e:  # BadZipFile, OSError, ValueError, ...: not a zip we read
            raise ModelFileError(f"{path}: not a readable model file (truncated, corrupted or "
                                 f"not written by StructuredSVM.save): {e}") from None
        self.infos: dict[str, zipfile.ZipInfo] = {}
        for info in self._zip.infolist():
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in self.infos:
                self.close()
                raise _err(path, f"member {name!r}",
                           "not an .npy array, or named twice: not written by StructuredSVM.save")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                self.close()
                raise _err(path, f"member {name!r}", f"compression method "
                           f"{info.compress_type} (a save writes deflate): damaged or forged")
            ratio = 1 if info.compress_type == zipfile.ZIP_STORED else _DEFLATE_RATIO
            if info.file_size > ratio * info.compress_size + 1024:
                self.close()
                raise _err(path, f"member {name!r}", f"announces {info.file_size} bytes from "
                           f"{info.compress_size} compressed, more than the format can hold: "
                           "damaged or forged")
            self.infos[name[:-4]] = info
        for name in self.infos:
            self._peek(name)

    def _peek(self, name: str) -> None:
        """Refuse a member whose npy header is unreadable or names objects (reading those
        would unpickle); inflates a few kB at most."""
        try:
            with self._zip.open(self.infos[name]) as fh:
                dtype = _npy_header(fh)[2]
        except Exception as e:
            self.close()
            raise ModelFileError(f"{self.path}: not a readable model file (truncated, corrupted "
                                 f"or not written by StructuredSVM.save): member {name!r}: "
                                 f"{type(e).__name__}: {e}") from None
        if dtype.hasobject:
            self.close()
            raise ModelFileError(f"{self.path}: not a readable model file: member {name!r} "
                                 "holds Python objects (read only by unpickling: refused)")

    def close(self) -> None:
        """Close the archive."""
        self._zip.close()

    def __enter__(self) -> Members:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def names(self) -> set[str]:
        """The member names (without ``.npy``)."""
        return set(self.infos)

    def read(self, name: str, kinds: str, cap: int, shape: tuple[int, ...] | None = None,
             ndim: int | None = None, dtype: Any = None) -> np.ndarray:
        """The array ``name``: its dtype of a kind in ``kinds`` (and ``dtype`` when
        given), ``shape`` or ``ndim`` when given, at most ``cap`` bytes; each checked
        before the data is inflated."""
        info = self.infos.get(name)
        field = f"member {name!r}"
        if info is None:
            raise _err(self.path, field, "missing")
        if info.file_size > cap + 4096:  # an npy header is at most a few kB
            raise _err(self.path, field, f"announces {info.file_size} bytes where the header "
                       f"allows at most {cap}: refused before inflating it")
        try:
            with self._zip.open(info) as fh:
                a_shape, fortran, a_dtype = _npy_header(fh)
                self._check_header(field, a_shape, a_dtype, kinds, shape, ndim, dtype)
                nbytes = math.prod(a_shape) * a_dtype.itemsize
                if nbytes > cap:
                    raise _err(self.path, field, f"announces {nbytes} bytes of data where the "
                               f"header allows at most {cap}: refused before inflating it")
                if nbytes != info.file_size - fh.tell():
                    raise _err(self.path, field, f"its npy header announces {nbytes} bytes but "
                               f"the archive holds {info.file_size - fh.tell()}")
                buf = bytearray(nbytes)
                got = cast(io.BufferedIOBase, fh).readinto(buf)  # a ZipExtFile is one
                if got != nbytes or fh.read(1):  # the read to the end checks the CRC
                    raise _err(self.path, field, f"holds {got} bytes, {nbytes} announced")
        except ModelFileError:
            raise
        except Exception as e:  # zlib.error, BadZipFile (CRC), EOFError, ...: damaged
            raise _err(self.path, field, f"cannot be read ({type(e).__name__}: {e}): the "
                       "file is damaged or was modified") from None
        a = np.frombuffer(buf, dtype=a_dtype)
        return a.reshape(a_shape, order="F" if fortran else "C")

    def _check_header(self, field: str, a_shape: tuple[int, ...], a_dtype: np.dtype,
                      kinds: str, shape: tuple[int, ...] | None, ndim: int | None,
                      dtype: Any) -> None:
        if (a_dtype.hasobject or a_dtype.kind not in kinds or a_dtype.itemsize > 16
                or not a_dtype.isnative or (dtype is not None and a_dtype != dtype)):
            want = np.dtype(dtype).name if dtype is not None else f"of kind {kinds!r}"
            raise _err(self.path, field, f"dtype {a_dtype.str}, expected {want}")
        if not all(isinstance(s, int) and s >= 0 for s in a_shape):
            raise _err(self.path, field, f"shape {a_shape} is not a shape")
        if shape is not None and a_shape != shape:
            raise _err(self.path, field, f"shape {a_shape}, expected {shape} (from the header)")
        if ndim is not None and len(a_shape) != ndim:
            raise _err(self.path, field, f"shape {a_shape}, expected {ndim} dimension(s)")


def _npy_header(fh: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype]:
    """The shape, order and dtype of the npy stream ``fh`` (numpy bounds the header's
    length, and reads it with ``ast.literal_eval``: no code runs)."""
    fmt = np.lib.format
    major, _ = fmt.read_magic(fh)
    read = fmt.read_array_header_1_0 if major == 1 else fmt.read_array_header_2_0
    shape, fortran, dtype = read(fh)
    return tuple(shape), bool(fortran), np.dtype(dtype)


def json_depth(obj: Any) -> int:
    """The nesting depth of a parsed JSON value (iterative: no recursion limit)."""
    depth, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        depth = max(depth, d)
        if d > MAX_DEPTH:
            break
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return depth


# -- the header's schema -----------------------------------------------------------
def _dict(path: Any, obj: Any, field: str, keys: Iterable[str],
          optional: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _err(path, field, f"must be a JSON object, got {type(obj).__name__} "
                   f"{_short(obj)}")
    keys, optional = set(keys), set(optional)
    missing = keys - set(obj)
    extra = set(obj) - keys - optional
    if missing or extra:
        raise _err(path, field, f"keys {sorted(obj)}; expected {sorted(keys)}"
                   + (f" (and optionally {sorted(optional)})" if optional else ""))
    return obj


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def _str(path: Any, v: Any, field: str) -> str:
    if not isinstance(v, str):
        raise _err(path, field, f"must be a string, got {_short(v)}")
    return v


def check_schema(path: Any, header: Any, format_name: str, format_version: int,
                 library_version: str) -> dict[str, Any]:
    """``header`` when its structure and scalar fields are valid (the model, the
    estimator and the arrays are checked by :func:`~.model_io.load_model`)."""
    _dict(path, header, "header", ("format", "format_version", "library_version", "estimator",
                                   "model", "fitted", "history_columns", "state", "sha256"),
          optional=("history_rows", "history_integers"))
    if header["format"] != format_name:
        raise _err(path, "format", f"{_short(header['format'])}, expected {format_name!r}")
    written_by = header["library_version"]
    version = header["format_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _err(path, "format_version", f"must be a positive integer, got {_short(version)}")
    if version > format_version:
        raise ModelFileError(
            f"{path}: format version {version!r} written by frankwolfe {str(written_by)[:40]}; "
            f"this frankwolfe {library_version} reads format versions <= {format_version}: "
            "upgrade frankwolfe to load it")
    _str(path, written_by, "library_version")
    for part in ("estimator", "model"):
        d = _dict(path, header[part], part, ("class", "params"))
        _str(path, d["class"], f"{part}.class")
        if not isinstance(d["params"], dict):
            raise _err(path, f"{part}.params", f"must be a JSON object, got "
                       f"{_short(d['params'])}")
    fitted = _dict(path, header["fitted"], "fitted", ("lam_", "n_train_"),
                   optional=("feature_names_in_",))
    names = fitted.get("feature_names_in_")
    if "feature_names_in_" in fitted and not (
            isinstance(names, list) and names and all(isinstance(c, str) for c in names)):
        raise _err(path, "fitted.feature_names_in_", f"must be a non-empty list of strings, "
                   f"got {_short(names)}")
    lam = fitted["lam_"]
    if (isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam)
            or lam <= 0):
        raise _err(path, "fitted.lam_", f"must be a finite positive number, got {_short(lam)}")
    n = fitted["n_train_"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise _err(path, "fitted.n_train_", f"must be a positive integer, got {_short(n)}")
    cols = header["history_columns"]
    if (not isinstance(cols, list) or len(set(map(str, cols))) != len(cols)
            or not all(isinstance(c, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c)
                       for c in cols)):
        raise _err(path, "history_columns", f"must be a list of distinct names, got "
                   f"{_short(cols)}")
    rows = header.get("history_rows")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int)
                             or not 0 <= rows <= MAX_HISTORY_ROWS):
        raise _err(path, "history_rows", f"must be an integer in [0, {MAX_HISTORY_ROWS}], got "
                   f"{_short(rows)}")
    ints = header.get("history_integers", [])
    if not (isinstance(ints, list) and all(isinstance(c, str) and c in cols for c in ints)):
        raise _err(path, "history_integers", f"must be a list of history columns, got "
                   f"{_short(ints)}")
    if header["state"] is not None and not isinstance(header["state"], dict):
        raise _err(path, "state", f"must be null or a JSON object, got {_short(header['state'])}")
    digests = header["sha256"]
    if not isinstance(digests, dict):
        raise _err(path, "sha256", f"must be a JSON object, got {_short(digests)}")
    for k, v in digests.items():
        if not isinstance(v, str) or not _HEX64.fullmatch(v):
            raise _err(path, f"sha256[{k!r}]", f"must be a sha256 hex digest, got {_short(v)}")
    return header

"""Model files of :class:`StructuredSVM`: a versioned, pickle-free ``.npz`` format.

A model file is an ``.npz`` archive (read with ``allow_pickle=False``: loading
never runs code from the file) with these members:

``header``
    UTF-8 JSON (as a uint8 array): ``format`` (``"frankwolfe.StructuredSVM"``),
    ``format_version``, ``library_version``, ``estimator`` (class name and the
    JSON-able constructor parameters), ``model`` (class name and the
    constructor arguments that rebuild it), ``fitted`` (``lam_``,
    ``n_train_``), ``history_columns``, ``state`` (the layout of the warm-start
    state, or null) and ``sha256`` (a digest of every other member).
``header_sha256``
    The sha256 of ``header``: with the digests it names, any change to the
    file is refused (an integrity check against corruption and careless
    edits, not a signature).
``w_``
    The weights.
``history/<column>``
    The columns of ``history_``.
``state/<k>``
    Only with ``include_state=True``: the arrays of the dual block state that
    a warm start continues from.

Models are rebuilt from a registry of classes (the built-in models plus the
ones passed to :func:`load_model` as ``models=``), never from a module path
read from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np

import frankwolfe
from frankwolfe import History

from .models import ChainModel, MatchingModel, MulticlassModel, StructuredModel

__all__ = ["FORMAT", "FORMAT_VERSION", "ModelFileError", "save_model", "load_model"]

FORMAT = "frankwolfe.StructuredSVM"
#: the version this library writes; files of a higher version are refused
FORMAT_VERSION = 1
_BUILTIN_MODELS = (ChainModel, MulticlassModel, MatchingModel)


class ModelFileError(ValueError):
    """A model file that cannot be read: truncated, modified, or of a newer format."""


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_jsonable(u) for u in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(u) for k, u in v.items()}
    return v


def model_params(model: StructuredModel) -> dict[str, Any]:
    """JSON-able constructor arguments of ``model`` (``type(model)(**params)`` rebuilds it).

    Built-in models describe themselves; a user model implements
    ``model_params()`` returning such a dict.
    """
    own = getattr(model, "model_params", None)
    if callable(own):
        params = own()
    elif type(model) in _BUILTIN_MODELS:
        params = model._repr_params()
    else:
        name = type(model).__name__
        raise TypeError(
            f"cannot describe the model {name} in a model file: implement {name}.model_params() "
            f"returning its constructor arguments as JSON-able values ({name}(**params) must "
            f"rebuild the model), then pass models=[{name}] to StructuredSVM.load")
    params = _jsonable(params)
    try:
        json.dumps(params, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{type(model).__name__} parameters are not JSON-able ({e}): "
                        f"{params!r}") from None
    return params


# -- warm-start state <-> (JSON layout, arrays) ---------------------------------------
# The one place that knows the state is nested tuples / lists of arrays and scalars:
# whatever shape the BCFW internals give it, it round-trips without code changes.
def pack_state(state: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The JSON layout of ``state``; its arrays go to ``arrays`` as ``state/<k>``."""
    if isinstance(state, np.ndarray):
        if state.dtype.kind not in "biuf":
            raise TypeError(f"warm-start state: cannot store an array of dtype {state.dtype}")
        key = f"state/{len(arrays)}"
        arrays[key] = state
        return {"array": key}
    if isinstance(state, (tuple, list)):
        return {type(state).__name__: [pack_state(s, arrays) for s in state]}
    if isinstance(state, dict):
        return {"dict": {str(k): pack_state(v, arrays) for k, v in state.items()}}
    if state is None or isinstance(state, (bool, int, float, str, np.generic)):
        return {"value": _jsonable(state)}
    raise TypeError(f"warm-start state: cannot store a {type(state).__name__}")


def unpack_state(layout: Any, arrays: dict[str, np.ndarray]) -> Any:
    """Inverse of :func:`pack_state`."""
    (kind, v), = layout.items()
    if kind == "array":
        return arrays[v]
    if kind in ("tuple", "list"):
        items = [unpack_state(u, arrays) for u in v]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: unpack_state(u, arrays) for k, u in v.items()}
    if kind == "value":
        return v
    raise ModelFileError(f"unknown warm-start state node {kind!r}")


def _digest(a: np.ndarray) -> str:
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def save_model(est: Any, path: str | os.PathLike[str], include_state: bool = False) -> None:
    """Write ``est`` (a fitted :class:`StructuredSVM`) to ``path`` (see the module doc)."""
    params = {k: v for k, v in est.get_params(deep=False).items() if k != "model"}
    if isinstance(params.get("random_state"), np.random.Generator):
        params["random_state"] = None  # a Generator's state is not a parameter worth a file
    params = _jsonable(params)
    try:
        json.dumps(params)
    except TypeError as e:
        raise TypeError(f"StructuredSVM.save: a parameter is not JSON-able ({e}); "
                        f"parameters: {params!r}") from None
    arrays: dict[str, np.ndarray] = {"w_": np.asarray(est.w_, dtype=np.float64)}
    columns = est.history_.columns
    for c in columns:
        arrays[f"history/{c}"] = np.asarray(est.history_[c], dtype=np.float64)
    layout = pack_state(est._warm_state(), arrays) if include_state else None
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": frankwolfe.__version__,
        "estimator": {"class": type(est).__name__, "params": params},
        "model": {"class": type(est.model).__name__, "params": model_params(est.model)},
        "fitted": {"lam_": float(est.lam_), "n_train_": int(est.n_train_)},
        "history_columns": list(columns),
        "state": layout,
        "sha256": {k: _digest(a) for k, a in arrays.items()},
    }
    head = np.frombuffer(json.dumps(header, allow_nan=True).encode(), dtype=np.uint8)
    arrays["header"] = head
    arrays["header_sha256"] = np.frombuffer(hashlib.sha256(head.tobytes()).digest(),
                                            dtype=np.uint8)
    with open(path, "wb") as fh:  # an open file: numpy does not append ".npz" to the name
        members: dict[str, Any] = arrays  # the stubs read **members as savez's keywords
        np.savez_compressed(fh, **members)


def _read_members(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as e:
        raise ModelFileError(f"{path}: not a readable model file (truncated, corrupted or not "
                             f"written by StructuredSVM.save): {e}") from None


def load_model(cls: type, path: str | os.PathLike[str],
               models: Iterable[type] = ()) -> Any:
    """Read a file written by :func:`save_model` into a new ``cls`` estimator."""
    members = _read_members(path)
    for need in ("header", "header_sha256"):
        if need not in members:
            raise ModelFileError(f"{path}: not a {FORMAT} model file (no {need!r} member)")
    head = members.pop("header")
    if hashlib.sha256(head.tobytes()).digest() != members.pop("header_sha256").tobytes():
        raise ModelFileError(f"{path}: the header does not match its checksum: the file was "
                             "modified or damaged after it was written")
    try:
        header = json.loads(head.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path}: unreadable header: {e}") from None
    if header.get("format") != FORMAT:
        raise ModelFileError(f"{path}: format {header.get('format')!r}, expected {FORMAT!r}")
    version = header.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: format version {version!r} written by frankwolfe "
            f"{header.get('library_version')}; this frankwolfe {frankwolfe.__version__} reads "
            f"format versions <= {FORMAT_VERSION}: upgrade frankwolfe to load it")
    digests = header["sha256"]
    if set(digests) != set(members):
        raise ModelFileError(f"{path}: members {sorted(members)} differ from the header's "
                             f"{sorted(digests)}: the file was modified")
    for k, a in members.items():
        if _digest(a) != digests[k]:
            raise ModelFileError(f"{path}: member {k!r} does not match its sha256 in the "
                                 "header: the file was modified or damaged")
    if header["estimator"]["class"] != cls.__name__:
        raise ModelFileError(f"{path} holds a {header['estimator']['class']}, not a "
                             f"{cls.__name__}")
    registry = {m.__name__: m for m in (*_BUILTIN_MODELS, *models)}
    mname = header["model"]["class"]
    if mname not in registry:
        raise ModelFileError(f"{path}: the model class {mname!r} is not a built-in model; pass "
                             f"it to load: StructuredSVM.load(path, models=[{mname}])")
    model = registry[mname](**header["model"]["params"])
    est = cls(model=model, **header["estimator"]["params"])
    est.w_ = members["w_"]
    est.lam_ = header["fitted"]["lam_"]
    est.n_train_ = header["fitted"]["n_train_"]
    est.history_ = History(tuple(header["history_columns"]))
    cols = {c: members[f"history/{c}"].tolist() for c in header["history_columns"]}
    for row in zip(*cols.values()):
        est.history_.append(**dict(zip(cols, row)))
    if header["state"] is not None:
        est._set_warm_state(unpack_state(header["state"], members))
    return est

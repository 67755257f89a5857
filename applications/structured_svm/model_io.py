"""Model files of :class:`StructuredSVM`: a versioned, pickle-free ``.npz`` format.

A model file is an ``.npz`` archive (read with ``allow_pickle=False``: loading
never runs code from the file) with these members:

``header``
    UTF-8 JSON (as a uint8 array): ``format`` (``"frankwolfe.StructuredSVM"``),
    ``format_version``, ``library_version``, ``estimator`` (class name and the
    JSON-able constructor parameters), ``model`` (class name and the
    constructor arguments that rebuild it), ``fitted`` (``lam_``,
    ``n_train_`` and, for a fit on a pandas ``DataFrame``, ``feature_names_in_``),
    ``history_columns`` (with ``history_rows`` and ``history_integers``, the
    columns stored as int64), ``state`` (the layout of the warm-start
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

Models are rebuilt from a registry of classes (every model the package ships,
the graph CRFs included, plus the ones passed to :func:`load_model` as
``models=``), never from a module path read from the file.

``random_state`` is stored as the parameter: an int, a list of ints, null, or a
``SeedSequence`` as ``{"SeedSequence": {"entropy", "spawn_key", "pool_size",
"n_children_spawned"}}`` (a load rebuilds an equal one: the same draws).  A
``Generator``, ``RandomState`` or ``BitGenerator`` is saved as null, with a warning.

A save is atomic (a temporary file, fsynced, renamed over the target).  A load
trusts nothing in the file: the checks of :mod:`.model_checks` bound every
member before it is inflated and hold the header to a schema, and
:func:`load_model` checks the model and the parameters through their own
validation and ``w_`` against the model's dimension.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

import frankwolfe
from frankwolfe import History
from frankwolfe._random import check_random_state
from frankwolfe._warnings import warn_user
from frankwolfe.compiled.atomic_files import atomic_write
from frankwolfe.result import out_path

from .model_checks import HEADER_CAP, MAX_DEPTH, Members, ModelFileError, check_schema, json_depth
from .models import (
    ChainModel,
    DirectionalGridCRF,
    EdgeFeatureGraphCRF,
    GraphCRF,
    GridCRF,
    LatentGraphCRF,
    MatchingModel,
    MulticlassModel,
    MultiLabelModel,
    StructuredModel,
)

__all__ = ["FORMAT", "FORMAT_VERSION", "ModelFileError", "save_model", "load_model"]

FORMAT = "frankwolfe.StructuredSVM"
#: the version this library writes; files of a higher version are refused
FORMAT_VERSION = 1
#: every model the package ships: a file of one loads without ``models=``
_BUILTIN_MODELS = (ChainModel, MulticlassModel, MatchingModel, MultiLabelModel, GraphCRF,
                   EdgeFeatureGraphCRF, GridCRF, DirectionalGridCRF, LatentGraphCRF)
#: ``random_state`` objects a file cannot hold (a generator's state is not a parameter):
#: saved as null, with a warning
_UNSTORABLE_SEEDS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)
_SEED_SEQUENCE_FIELDS = ("entropy", "spawn_key", "pool_size", "n_children_spawned")
#: numpy's default is 4; a file's larger one is refused before it allocates
_MAX_POOL_SIZE = 1 << 10


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
    path = out_path(path, "StructuredSVM.save")
    params = {k: v for k, v in est.get_params(deep=False).items() if k != "model"}
    # a file that saves must load: load checks that lam_ follows from the parameters
    lam = est._check(int(est.n_train_))
    if lam != est.lam_:
        raise ValueError(f"StructuredSVM.save: lam={est.lam!r} was set after the fit: it gives "
                         f"lam_={lam!r}, the fit used lam_={est.lam_!r}; set lam back or "
                         "refit before saving")
    seed = params.get("random_state")
    if isinstance(seed, (list, tuple, np.ndarray)):
        params["random_state"] = [int(v) for v in seed]
    elif isinstance(seed, np.random.SeedSequence):
        # plain entropy: the loaded model draws as the saved one
        params["random_state"] = {"SeedSequence": _pack_seed_sequence(seed)}
    elif isinstance(seed, _UNSTORABLE_SEEDS):
        warn_user(f"StructuredSVM.save: random_state={type(seed).__name__}(...) is saved "
                      "as null (a file holds no generator's state): a refit of the loaded "
                      "model draws from fresh entropy; give it a seed through set_params, "
                      "or fit with an int or a SeedSequence to save one", UserWarning)
        params["random_state"] = None
    executor = params.get("executor")
    if executor is not None:
        # a live object (threads, a Dask client), like a Generator: a file never holds one
        # (load refuses anything but null); a loaded model predicts without it and a refit
        # takes a new one through set_params
        params["executor"] = None
        try:
            type(est)(model=est.model, **params)._check(int(est.n_train_))
        except ValueError as e:  # a file that saves must load
            raise ValueError(f"StructuredSVM.save: executor={executor!r:.80} is saved as null "
                             f"(a file never holds a live object) and without it the "
                             f"parameters are refused ({e}); set batch_size=1 (the round "
                             f"size the fit ran) before saving") from None
    params = _jsonable(params)
    try:
        json.dumps(params)
    except TypeError as e:
        raise TypeError(f"StructuredSVM.save: a parameter is not JSON-able ({e}); "
                        f"parameters: {params!r}") from None
    arrays: dict[str, np.ndarray] = {"w_": np.asarray(est.w_, dtype=np.float64)}
    columns = est.history_.columns
    # integer columns (passes, oracle calls, rounds) as integers: a load gives them back
    integers = [c for c in columns if np.asarray(est.history_[c]).dtype.kind in "iu"]
    for c in columns:
        arrays[f"history/{c}"] = np.asarray(est.history_[c],
                                            dtype=np.int64 if c in integers else np.float64)
    layout = pack_state(est.warm_state(), arrays) if include_state else None
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": frankwolfe.__version__,
        "estimator": {"class": type(est).__name__, "params": params},
        "model": {"class": type(est.model).__name__, "params": model_params(est.model)},
        "fitted": _fitted_fields(est),
        "history_columns": list(columns),
        "history_rows": len(est.history_),
        "history_integers": integers,
        "state": layout,
        "sha256": {k: _digest(a) for k, a in arrays.items()},
    }
    head = np.frombuffer(json.dumps(header, allow_nan=True).encode(), dtype=np.uint8)
    arrays["header"] = head
    arrays["header_sha256"] = np.frombuffer(hashlib.sha256(head.tobytes()).digest(),
                                            dtype=np.uint8)
    # an open file: numpy does not append ".npz" to the name; atomic: an interrupted or
    # failed save leaves the previous file as it was
    with atomic_write(path) as fh:
        members: dict[str, Any] = arrays  # the stubs read **members as savez's keywords
        np.savez_compressed(fh, **members)



def _pack_seed_sequence(seed: np.random.SeedSequence) -> dict[str, Any]:
    """The fields that rebuild ``seed`` (``SeedSequence(**fields)``), as JSON."""
    entropy: Any = seed.entropy  # an int or a sequence of them (numpy draws a None)
    return {"entropy": int(entropy) if isinstance(entropy, (int, np.integer))
            else [int(v) for v in entropy],
            "spawn_key": [int(v) for v in seed.spawn_key],
            "pool_size": int(seed.pool_size),
            "n_children_spawned": int(seed.n_children_spawned)}


def _unpack_seed(path: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a stored ``SeedSequence`` random_state rebuilt, checked."""
    seed = params.get("random_state")
    if not isinstance(seed, dict):
        return params
    where = f"{path}: estimator.params.random_state"
    fields = seed.get("SeedSequence") if len(seed) == 1 else None
    if not isinstance(fields, dict) or set(fields) != set(_SEED_SEQUENCE_FIELDS):
        raise ModelFileError(f"{where}: an object must be {{\"SeedSequence\": {{"
                             f"{', '.join(_SEED_SEQUENCE_FIELDS)}}}}}, got {seed!r:.200}")
    try:
        entropy, spawn_key = fields["entropy"], fields["spawn_key"]
        if entropy is None:
            raise ValueError("its entropy is null: fresh entropy would not be the saved seed")
        check_random_state(entropy, "entropy")
        if not isinstance(spawn_key, list):
            raise TypeError(f"spawn_key must be a list, got {spawn_key!r:.80}")
        if spawn_key:
            check_random_state(spawn_key, "spawn_key")
        for name, cap in (("pool_size", _MAX_POOL_SIZE), ("n_children_spawned", None)):
            v = fields[name]
            # pool_size sizes an allocation: bounded, as every member of the file is
            if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (
                    cap is not None and v > cap):
                raise ValueError(f"{name} must be an int in [0, {cap or 'inf'}], got {v!r:.80}")
        rebuilt = np.random.SeedSequence(entropy, spawn_key=tuple(spawn_key),
                                         pool_size=fields["pool_size"],
                                         n_children_spawned=fields["n_children_spawned"])
    except (TypeError, ValueError) as e:
        raise ModelFileError(f"{where}: not a SeedSequence ({e})"[:400]) from None
    return dict(params, random_state=rebuilt)


def _history_cap(est: Any) -> int:
    """Rows a history can have: one evaluation a pass at most, plus the first and last."""
    return 8 * (int(est.max_passes) + 2) + 64


def _state_cap(n_train: int, dim: int) -> int:
    """Bytes the warm-start state may hold: a few dense points a training example."""
    return 32 * (n_train + 1) * (dim + 1) + (1 << 20)


def _check_layout(path: Any, layout: Any, names: set[str], field: str = "state") -> None:
    """The warm-start layout is nodes ``{kind: value}`` naming existing state members."""
    stack = [(layout, field)]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, dict) or len(node) != 1:
            raise ModelFileError(f"{path}: {where}: must be a one-key object, got {node!r:.80}")
        (kind, v), = node.items()
        if kind == "array":
            if v not in names:
                raise ModelFileError(f"{path}: {where}: names {v!r:.80}, not a state member")
        elif kind in ("tuple", "list"):
            if not isinstance(v, list):
                raise ModelFileError(f"{path}: {where}.{kind}: must be a list")
            stack.extend((u, f"{where}.{kind}[{i}]") for i, u in enumerate(v))
        elif kind == "dict":
            if not isinstance(v, dict):
                raise ModelFileError(f"{path}: {where}.dict: must be an object")
            stack.extend((u, f"{where}.dict[{k!r}]") for k, u in v.items())
        elif kind == "value":
            if not (v is None or isinstance(v, (bool, int, float, str))):
                raise ModelFileError(f"{path}: {where}.value: must be a JSON scalar")
        else:
            raise ModelFileError(f"{path}: {where}: unknown warm-start state node {kind!r:.40}")


def _build(path: Any, cls: type, header: dict[str, Any], registry: dict[str, type]
           ) -> tuple[Any, int]:
    """The estimator the header describes (its parameters re-checked by the estimator's
    own validation) and the model's dimension."""
    if header["estimator"]["class"] != cls.__name__:
        raise ModelFileError(f"{path}: estimator.class: holds a "
                             f"{header['estimator']['class']!r:.80}, not a {cls.__name__}")
    mname = header["model"]["class"]
    if mname not in registry:
        raise ModelFileError(f"{path}: model.class: the model class {mname!r:.80} is not a "
                             f"built-in model; pass it to load: "
                             f"StructuredSVM.load(path, models=[{mname:.80}])")
    try:
        model = registry[mname](**header["model"]["params"])
    except Exception as e:  # the model's own checks: ValueError, TypeError, ...
        raise ModelFileError(f"{path}: model.params: {mname}(**{header['model']['params']!r:.200}) "
                             f"is refused: {type(e).__name__}: {e}") from None
    dim = getattr(model, "size_joint_feature", None)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ModelFileError(f"{path}: model.params: {mname}.size_joint_feature is {dim!r:.80}, "
                             "not a positive integer")
    params = _unpack_seed(path, header["estimator"]["params"])
    if params.get("executor") is not None:  # a live object: a file never holds one
        raise ModelFileError(f"{path}: estimator.params.executor: must be null, got "
                             f"{params['executor']!r:.80}")
    try:
        est = cls(model=model, **params)
        lam = est._check(header["fitted"]["n_train_"])  # the estimator's own validation
    except Exception as e:
        raise ModelFileError(f"{path}: estimator.params: {type(e).__name__}: {e}") from None
    if lam != header["fitted"]["lam_"]:
        raise ModelFileError(f"{path}: fitted.lam_: {header['fitted']['lam_']!r} does not "
                             f"follow from lam={params.get('lam')!r} and n_train_="
                             f"{header['fitted']['n_train_']} (expected {lam!r})")
    return est, int(dim)


def _fitted_fields(est: Any) -> dict[str, Any]:
    fitted: dict[str, Any] = {"lam_": float(est.lam_), "n_train_": int(est.n_train_)}
    names = getattr(est, "feature_names_in_", None)
    if names is not None:  # a loaded model checks a DataFrame's columns as the fitted one
        fitted["feature_names_in_"] = [str(c) for c in names]
    return fitted


def load_model(cls: type, path: str | os.PathLike[str],
               models: Iterable[type] = ()) -> Any:
    """Read a file written by :func:`save_model` into a new ``cls`` estimator.

    Every check runs before the arrays it concerns are inflated: the header's
    schema, the model and the estimator's parameters (through their own validation),
    each member's declared size against a bound derived from the header (``w_`` is
    exactly the model's dimension), and the digests.  Every failure is a
    :class:`ModelFileError` naming the file and the field.
    """
    with Members(path) as members:
        for need in ("header", "header_sha256"):
            if need not in members.names():
                raise ModelFileError(f"{path}: not a {FORMAT} model file (no {need!r} member)")
        head = members.read("header", "u", HEADER_CAP, ndim=1, dtype=np.uint8)
        head_sha = members.read("header_sha256", "u", 32, shape=(32,), dtype=np.uint8)
        if hashlib.sha256(head.tobytes()).digest() != head_sha.tobytes():
            raise ModelFileError(f"{path}: the header does not match its checksum: the file "
                                 "was modified or damaged after it was written")
        try:
            header = json.loads(head.tobytes().decode())
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise ModelFileError(f"{path}: header: unreadable JSON: {type(e).__name__}: "
                                 f"{e}"[:300]) from None
        if json_depth(header) > MAX_DEPTH:
            raise ModelFileError(f"{path}: header: nested deeper than {MAX_DEPTH} levels")
        check_schema(path, header, FORMAT, FORMAT_VERSION, frankwolfe.__version__)
        registry = {m.__name__: m for m in (*_BUILTIN_MODELS, *models)}
        est, dim = _build(path, cls, header, registry)
        columns = header["history_columns"]
        expected = {"w_", *(f"history/{c}" for c in columns)}
        state_names = {k for k in members.names() if k.startswith("state/")}
        if header["state"] is not None:
            _check_layout(path, header["state"], state_names)
        elif state_names:
            raise ModelFileError(f"{path}: state: null, but the file holds state arrays")
        expected |= state_names
        digests = header["sha256"]
        if set(digests) != expected or members.names() - {"header", "header_sha256"} != expected:
            raise ModelFileError(f"{path}: sha256: members {sorted(members.names())} differ "
                                 f"from the header's {sorted(digests)}: the file was modified")
        arrays = {"w_": members.read("w_", "f", 8 * dim, shape=(dim,), dtype=np.float64)}
        # the fit's own count (max_passes may have been lowered after it); files of
        # earlier versions: one evaluation a pass of the parameters' max_passes
        declared = header.get("history_rows")
        integers = set(header.get("history_integers", ()))
        rows = None
        for c in columns:
            kind, dtype = ("i", np.int64) if c in integers else ("f", np.float64)
            if declared is None:
                a = members.read(f"history/{c}", kind, 8 * _history_cap(est), ndim=1,
                                 dtype=dtype)
            else:
                a = members.read(f"history/{c}", kind, 8 * declared, shape=(declared,),
                                 dtype=dtype)
            if rows is not None and a.size != rows:
                raise ModelFileError(f"{path}: member 'history/{c}': {a.size} rows, the other "
                                     f"columns {rows}")
            rows = a.size
            arrays[f"history/{c}"] = a
        budget = _state_cap(header["fitted"]["n_train_"], dim)
        for k in sorted(state_names):
            a = members.read(k, "biuf", budget)
            budget -= a.nbytes
            arrays[k] = a
    for k, a in arrays.items():
        if _digest(a) != digests[k]:
            raise ModelFileError(f"{path}: member {k!r} does not match its sha256 in the "
                                 "header: the file was modified or damaged")
    w = arrays["w_"]
    if not np.isfinite(w).all():
        raise ModelFileError(f"{path}: member 'w_': {int((~np.isfinite(w)).sum())} of its "
                             f"{w.size} weights are not finite")
    est.w_ = w
    est.lam_ = float(header["fitted"]["lam_"])
    est.n_train_ = header["fitted"]["n_train_"]
    if "feature_names_in_" in header["fitted"]:
        est.feature_names_in_ = np.asarray(header["fitted"]["feature_names_in_"], dtype=object)
    est.history_ = History(tuple(columns))
    cols = {c: arrays[f"history/{c}"].tolist() for c in columns}
    for row in zip(*cols.values()):
        est.history_.append(**dict(zip(cols, row)))
    if header["state"] is not None:
        try:
            est.set_warm_state(unpack_state(header["state"], arrays))
        except Exception as e:  # a layout the estimator cannot take
            raise ModelFileError(f"{path}: state: not a warm-start state of {cls.__name__} "
                                 f"({type(e).__name__}: {e})"[:400]) from None
    return est

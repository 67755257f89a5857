"""Input checks shared by the estimators and loaders of the applications."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe._finite import first_non_finite
from frankwolfe._sparse import issparse

__all__ = ["check_feature_names", "check_finite_examples", "check_labels", "check_pair",
           "positional"]


def _numeric(x: Any) -> Any:
    """``x`` as a float/complex array, or None when it holds no floating-point numbers
    (integer ids can never be NaN or inf)."""
    if issparse(x):
        return x if x.dtype.kind in "fc" else None
    if isinstance(x, np.ndarray):
        return x if x.dtype.kind in "fc" else None
    if isinstance(x, (list, tuple, float)):
        try:
            a = np.asarray(x)
        except ValueError:  # ragged nested lists: nothing numeric to check as one array
            return None
        return a if a.dtype.kind in "fc" else None
    return None


def positional(data: Any) -> Any:
    """A pandas ``DataFrame`` or ``Series`` as the numpy array of its rows, a scipy.sparse
    matrix as the dense array of its rows; anything else as it is.

    Examples are taken by position: indexing a subset or a shuffled fold by its labels
    (``Y[0]``) raised ``KeyError``, and iterating a DataFrame gave its column names.  A
    sparse matrix has no ``len`` ("sparse array length is ambiguous") and its rows are
    1 x D sparse matrices, while the models' kernels take each example as a dense array:
    densified, it costs the memory of the dense ``X`` it stands for.
    """
    if hasattr(data, "iloc") and hasattr(data, "to_numpy"):
        return data.to_numpy()
    if issparse(data):
        return data.toarray()
    return data


def check_feature_names(estimator: Any, X: Any, reset: bool) -> None:
    """Record (``reset``) or check the column names of a pandas ``DataFrame`` ``X``, as
    scikit-learn's own estimators do, before :func:`positional` drops them.

    ``fit`` sets ``feature_names_in_`` when ``X`` is a DataFrame with string column
    names (and deletes it otherwise); ``predict`` and the scores then refuse a DataFrame
    whose columns differ or are reordered with scikit-learn's ``ValueError`` ("The
    feature names should match those that were passed during fit"), and warn when only
    one of the fit's and this ``X`` has names.  Examples are taken by position, so
    reordered columns predicted with the wrong weights without a word.  Nothing else of
    ``X`` is checked (no ``n_features_in_``: a list of examples has no feature count).
    """
    # scikit-learn's public entry point; imported here: the loaders import this module
    # without needing scikit-learn
    from sklearn.utils.validation import validate_data

    validate_data(estimator, X, reset=reset, skip_check_array=True, ensure_2d=False)


def check_finite_examples(X: Sequence[Any], name: str, where: str) -> None:
    """Raise a ``ValueError`` naming the example and the position of the first NaN / inf
    in a sequence of examples (each an array, or a tuple of arrays), or naming the first
    example with complex values (the models' ``np.asarray(x, dtype=float)`` trained on
    their real parts with a mere ``ComplexWarning``)."""
    for i, x in enumerate(X):
        parts = x if isinstance(x, tuple) else (x,)
        for j, part in enumerate(parts):
            arr = _numeric(part)
            if arr is None:
                continue
            at = f"{name}[{i}]" if len(parts) == 1 else f"{name}[{i}][{j}]"
            if arr.dtype.kind == "c":
                raise ValueError(f"{where}: {at} has complex values (dtype {arr.dtype}); "
                                 f"features must be real")
            hit = first_non_finite(arr)
            if hit is not None:
                pos = hit.index if isinstance(hit.index, tuple) else (hit.index,)
                raise ValueError(f"{where}: {at} contains {hit.value} (NaN or inf) at "
                                 f"position {pos}; features must be finite")


def check_labels(Y: Any, name: str, where: str) -> Any:
    """``Y`` (a sequence of labellings: integers, or integer arrays) with float labels
    converted to integers when each is a whole number; ``Y`` itself when none is a float.

    Raises a ``ValueError`` naming the example, the position and the value of the first
    float label that is not a whole number (``1.5``, NaN, inf): truncating it would train
    on labels nobody gave.
    """
    arr = Y if isinstance(Y, np.ndarray) and Y.dtype.kind != "O" else None
    if arr is not None:  # one array of labels (multiclass) or of equal-length labellings
        if arr.dtype.kind != "f":
            return Y
        _whole(arr, lambda pos: f"{name}[{pos[0]}]" + (f" at position {_at(pos[1:])}"
                                                     if len(pos) > 1 else ""), where)
        return arr.astype(np.int64)
    out: list[Any] | None = None
    for i, y in enumerate(Y):
        a = np.asarray(y)
        if a.dtype.kind != "f":
            continue
        _whole(a, lambda pos, i=i: f"{name}[{i}]" + (f" at position {_at(pos)}" if pos
                                                      else ""), where)
        if out is None:
            out = list(Y)
        out[i] = int(a) if a.ndim == 0 else a.astype(np.int64)
    return Y if out is None else out


def _whole(a: np.ndarray, label: Any, where: str) -> None:
    bad = ~np.isfinite(a) | (a != np.trunc(np.where(np.isfinite(a), a, 0.0)))
    if not bad.any():
        return
    pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), a.shape))
    raise ValueError(f"{where}: {label(pos)} is the label {float(a[pos])!r}, not an integer; "
                     f"labels are class indices (whole numbers, also as floats such as 2.0)")


def _at(pos: tuple[int, ...]) -> Any:
    return pos[0] if len(pos) == 1 else pos


def check_pair(X: Any, Y: Any, where: str, names: tuple[str, str] = ("X", "Y"),
               empty: bool = False) -> None:
    """Raise a ``ValueError`` naming ``where``, both arguments and both lengths unless
    ``X`` and ``Y`` hold as many examples (``zip`` dropped the extra ones silently), and,
    unless ``empty``, when they hold none (a mean over no example is NaN)."""
    for name, value in zip(names, (X, Y)):
        # len(None) raised Python's "object of type 'NoneType' has no len()"
        if value is None:
            raise ValueError(f"{where} requires {name} to be passed, but {name} is None")
        if not hasattr(value, "__len__"):
            raise TypeError(f"{where}: {name} must be a sequence of examples (a list or an "
                            f"array), got {type(value).__name__}")
    if len(X) != len(Y):
        raise ValueError(f"{where}: {names[0]} has {len(X)} examples but {names[1]} has "
                         f"{len(Y)} labellings; they must have the same length")
    if not empty and len(X) == 0:
        raise ValueError(f"{where}: no examples ({names[0]} and {names[1]} are empty)")

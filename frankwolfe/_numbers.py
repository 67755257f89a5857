"""What the argument checks ask of a number: a real one (no bool, no text), a whole one;
and of an array of data: real numbers (no complex, no text, no ragged nesting).

One place for the tests that ``int(value) == value`` made by hand: ``int("x")``,
``int(nan)`` and ``int(inf)`` raise their own errors, which name no argument, and
``True`` passes for 1.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, Literal, overload

import numpy as np

__all__ = ["is_real", "as_real", "check_real", "is_whole", "check_whole", "check_flag",
           "real_array", "read_shape", "kind_of", "brief", "close_match"]


def is_real(value: Any) -> bool:
    """Whether ``value`` is a real number (Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def as_real(value: Any) -> float:
    """``value`` as a float where it is a real number (:func:`is_real`), else NaN, which
    every range check refuses; an integer beyond the float range (``10**400``, whose
    ``float()`` raises ``OverflowError``, and numpy's ``isfinite`` a ``TypeError``) as an
    infinity of its sign."""
    if not is_real(value):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def check_real(value: Any, name: str, where: str = "", *, low: float | None = None,
               high: float | None = None, low_open: bool = False, high_open: bool = False,
               finite: bool = True, note: str = "") -> float:
    """``value`` as a float (an int beyond the float range as an infinity).

    A ``TypeError`` naming ``where`` and ``name`` unless ``value`` is a real number
    (:func:`is_real`: Python's or numpy's, no bool, no text, no ``None``); a
    ``ValueError`` when it is NaN or infinite or outside the interval from ``low`` to
    ``high`` (either may be None, for no bound; each end open or closed).  With
    ``finite=False`` NaN and infinities are left to the bounds (NaN fails any bound; with
    none, the caller's own check of several arguments at once sees them).  ``note`` is said
    after the name (``"the curvature constant"``).

    The one check of a real parameter: ``np.isfinite("1")`` and ``float("1")`` raised or
    passed text with errors that named no argument, and ``ell <= 0`` let NaN through.
    """
    prefix = f"{where}: " if where else ""
    shown = f"`{name}` ({note})" if note else f"`{name}`"
    if not is_real(value):
        raise TypeError(f"{prefix}{shown} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    v = as_real(value)
    ok = math.isfinite(v) or not finite  # NaN fails any bound
    if low is not None:
        ok = ok and (v > low if low_open else v >= low)
    if high is not None:
        ok = ok and (v < high if high_open else v <= high)
    if not ok:
        number = "a finite number" if finite else "a number"
        if low is not None and high is not None:
            want = (f"in {'(' if low_open else '['}{low:g}, {high:g}"
                    f"{')' if high_open else ']'}")
        elif low == 0 and low_open and finite:  # as the domains' radii say it
            want = "positive and finite"
        elif low is not None:
            want = f"{number} {'>' if low_open else '>='} {low:g}"
        elif high is not None:
            want = f"{number} {'<' if high_open else '<='} {high:g}"
        else:
            want = number
        raise ValueError(f"{prefix}{shown} must be {want}, got {value!r}")
    return v


def is_whole(value: Any, least: int = 0) -> bool:
    """Whether ``value`` is a finite whole number (``2.0`` too) of at least ``least``."""
    if not is_real(value):
        return False
    if isinstance(value, (numbers.Integral, np.integer)):  # exact, whatever its size
        return int(value) >= least
    f = float(value)
    return math.isfinite(f) and f >= least and f == int(f)


@overload
def check_whole(value: Any, name: str, least: int = 1, where: str = "") -> int: ...


@overload
def check_whole(value: Any, name: str, least: int = 1, where: str = "", *,
                optional: bool) -> int | None: ...


def check_whole(value: Any, name: str, least: int = 1, where: str = "", *,
                optional: bool = False) -> int | None:
    """``value`` as an int: ``int()`` truncated ``2.5`` silently and raised its own
    errors on ``inf``, NaN and text, which named no argument.

    A ``TypeError`` naming ``where`` and ``name`` unless ``value`` is a real number
    (:func:`is_real`: Python's or numpy's, no bool, no text; ``None`` too where
    ``optional``), as :func:`check_real`; a ``ValueError`` when it is not a whole number
    (:func:`is_whole`: ``2.5``, NaN, an infinity; ``3.0`` passes) of at least ``least``.
    """
    if optional and value is None:
        return None
    if not is_whole(value, least):
        kind = {0: "a non-negative integer", 1: "a positive integer"}.get(
            least, f"an integer >= {least}")
        extra = " or None" if optional else ""
        prefix = f"{where}: " if where else ""
        if not is_real(value):
            raise TypeError(f"{prefix}`{name}` must be {kind}{extra}, got {value!r} "
                            f"({type(value).__name__})")
        raise ValueError(f"{prefix}`{name}` must be {kind}{extra}, got {value!r}")
    return int(value)


@overload
def check_flag(value: Any, name: str, *, where: str = "") -> bool: ...


@overload
def check_flag(value: Any, name: str, optional: bool, *, where: str = "") -> bool | None: ...


def check_flag(value: Any, name: str, optional: bool = False, *,
               where: str = "") -> bool | None:
    """``value`` as a bool, or a ``TypeError`` naming ``where`` and ``name`` unless it is
    one (numpy's too; ``None`` where ``optional``): ``"no"`` is true to ``bool()``."""
    if optional and value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        extra = ", or None" if optional else ""
        prefix = f"{where}: " if where else ""
        raise TypeError(f"{prefix}`{name}` must be True or False{extra}, got {value!r}")
    return bool(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


@overload
def real_array(value: Any, where: str, name: str, *, bools: bool = True,
               what: str = "an array of numbers", sparse: Literal[False] = False
               ) -> np.ndarray: ...


@overload
def real_array(value: Any, where: str, name: str, *, bools: bool = True,
               what: str = "an array of numbers", sparse: bool) -> Any: ...


def real_array(value: Any, where: str, name: str, *, bools: bool = True,
               what: str = "an array of numbers", sparse: bool = False) -> Any:
    """``value`` as a float array, or a ``ValueError`` naming ``where`` and ``name`` when it
    holds complex numbers (``np.asarray(value, dtype=float)`` dropped their imaginary
    parts with a mere ``ComplexWarning``), text (``"1"`` was read as 1.0), ``None`` (as
    NaN), nested sequences of different lengths or other objects (numpy's errors name no
    argument); with ``bools=False`` booleans too.  A scipy.sparse matrix is refused, or
    with ``sparse`` returned as it is once its entries are checked real."""
    prefix = f"{where}: " if where else ""
    if hasattr(value, "tocoo") and not isinstance(value, np.ndarray):  # scipy.sparse
        if not sparse:
            raise ValueError(f"{prefix}`{name}` must be {what} (dense), got a scipy.sparse "
                             f"{type(value).__name__}; pass {name}.toarray()")
        if value.dtype.kind == "c":
            raise ValueError(f"{prefix}`{name}` must be real, got complex values")
        if value.dtype.kind not in "biuf":
            raise ValueError(f"{prefix}`{name}` must be {what}, got a scipy.sparse "
                             f"{type(value).__name__} of dtype {value.dtype}")
        return value
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as err:  # nested sequences of different lengths
        raise ValueError(f"{prefix}`{name}` must be {what}, got {_shown(value)} ({err})"
                         ) from None
    kind = raw.dtype.kind
    if kind == "O" and any(isinstance(v, (complex, np.complexfloating)) for v in raw.flat):
        kind = "c"
    if kind == "c":
        raise ValueError(f"{prefix}`{name}` must be real, got complex values")
    if kind in "iuf" or (kind == "b" and bools):
        return raw.astype(float, copy=False)
    if kind == "O" and not any(isinstance(v, (str, bytes, bool, np.bool_)) or v is None
                               for v in raw.flat):
        try:  # numbers as Python objects (Fraction, Decimal)
            return raw.astype(float)
        except (TypeError, ValueError):
            pass
    raise ValueError(f"{prefix}`{name}` must be {what}, got {_shown(value)}")


def read_shape(value: Any, who: str, attribute: str = "shape", least: int = 0
               ) -> tuple[int, ...] | None:
    """A shape given by a user, as a tuple of ints (None as None): an int ``n`` is the
    vector shape ``(n,)`` and a sequence of whole numbers is its tuple; every dimension
    at least ``least`` (1 for an objective's ``shape`` argument; a domain's declared
    ``shape`` may be empty).  ``int()`` of each entry read ``True`` as 1 and ``"5"`` as 5
    and truncated 2.7 to 2.

    Raises
    ------
    TypeError
        When the value is neither a number nor a sequence of numbers (text, a bool, a
        mapping's keys), naming ``who``, ``attribute`` and the value.
    ShapeError
        When a number in it is not a whole number of at least ``least``.
    """
    if value is None:
        return None
    if type(value) is tuple and all(type(s) is int and s >= least for s in value):
        return value  # the usual case: a built-in domain's or a checked shape
    items = [value] if is_real(value) else value
    dims: list[Any] | None = None
    if not isinstance(items, (str, bytes, dict)):
        try:
            dims = list(items)
        except TypeError:
            pass
    kind = "non-negative" if least == 0 else ("positive" if least == 1 else f">= {least}")
    wanted = (f"`{attribute}` must be a tuple of {kind} integers (an int n for the vector "
              "shape (n,))")
    if dims is None or not all(is_real(s) for s in dims):
        raise TypeError(f"{who}: {wanted} or None, got {value!r}")
    if not all(is_whole(s, least) for s in dims):
        from .errors import ShapeError  # errors imports nothing; kept off the import path

        raise ShapeError(f"{who}: {wanted}, got {value!r}")
    return tuple(int(s) for s in dims)


def kind_of(value: Any) -> str:
    """How a message names a value of the wrong kind: its type's name, or, for a class
    given where an instance was expected (``ProbabilitySimplex`` for
    ``ProbabilitySimplex()``), the class with the way to make one."""
    if isinstance(value, type):
        return f"the class {value.__name__} (pass an instance: {value.__name__}(...))"
    return type(value).__name__


def brief(value: Any) -> str:
    """A short repr for a repr's parameter list: arrays of more than 6 entries (and
    sparse matrices) by shape and dtype, functions by name, long text cut."""
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return np.array2string(value, separator=", ", threshold=6)
        return f"<array {value.shape} {value.dtype}>"
    if hasattr(value, "tocsr") and hasattr(value, "nnz"):  # scipy.sparse
        return f"<sparse {value.shape} nnz={value.nnz}>"
    if callable(value) and hasattr(value, "__name__") and not isinstance(value, type):
        return str(value.__name__)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def close_match(word: Any, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a misspelt word close to one of ``choices``, else ``""``:
    a list of thirty names does not show which one was meant."""
    if not isinstance(word, str):
        return ""
    import difflib  # only on an error path

    found = difflib.get_close_matches(word.lower().replace("-", "_"), list(choices), n=1,
                                      cutoff=0.75)
    return f" (did you mean {found[0]!r}?)" if found else ""

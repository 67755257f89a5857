"""Declarative parameter checks for the applications' estimators.

Each estimator lists, per ``__init__`` parameter, the accepted forms (the first
match wins) and calls :func:`validate_params` once at the top of ``fit``.  The
messages follow scikit-learn's (``The 'lam' parameter of StructuredSVM must be
a float in the range (0.0, inf) or None. Got -1.0 instead.``), whose checker is
private API (``sklearn.utils._param_validation``) and may change in any release.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from frankwolfe._random import check_random_state

__all__ = ["InvalidParameterError", "Interval", "Options", "InstanceOf", "BOOLEAN",
           "RANDOM_STATE", "VERBOSE", "ANY", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A parameter of the wrong type or value (both a ``ValueError`` and a ``TypeError``,
    as scikit-learn's, so either ``except`` catches it)."""


@dataclass(frozen=True)
class Interval:
    """A number of type ``kind`` (``Integral`` or ``Real``) between ``left`` and ``right``
    (``None``: unbounded); ``closed`` is ``"left"``, ``"right"``, ``"both"`` or
    ``"neither"``."""

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is Integral:
            if not isinstance(value, (Integral, np.integer)):
                return False
        elif not isinstance(value, (Real, np.floating, np.integer)):
            return False
        if value != value or value in (np.inf, -np.inf):  # an unbounded side is open
            return False
        lo_closed = self.closed in ("left", "both")
        hi_closed = self.closed in ("right", "both")
        if self.left is not None and (value < self.left or (value == self.left and not lo_closed)):
            return False
        return not (self.right is not None
                    and (value > self.right or (value == self.right and not hi_closed)))

    def describe(self) -> str:
        integral = self.kind is Integral
        fmt = (lambda v: str(int(v))) if integral else (lambda v: str(float(v)))
        lo = "-inf" if self.left is None else fmt(self.left)
        hi = "inf" if self.right is None else fmt(self.right)
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{'an int' if integral else 'a float'} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of the strings ``values``."""

    values: frozenset[str]

    def __init__(self, values: Iterable[str]) -> None:
        object.__setattr__(self, "values", frozenset(values))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values

    def describe(self) -> str:
        return "a str among {" + ", ".join(repr(v) for v in sorted(self.values)) + "}"


@dataclass(frozen=True)
class InstanceOf:
    """An instance of ``cls``."""

    cls: type

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.cls)

    def describe(self) -> str:
        return f"an instance of {self.cls.__name__!r}"


@dataclass(frozen=True)
class _Named:
    name: str

    def accepts(self, value: Any) -> bool:
        if self.name == "boolean":
            return isinstance(value, (bool, np.bool_))
        if self.name == "random_state":  # the core's one policy (as_generator's)
            try:
                check_random_state(value)
            except (TypeError, ValueError):
                return False
            return True
        if self.name == "verbose":
            if isinstance(value, (bool, np.bool_)):
                return True
            return isinstance(value, (Integral, np.integer)) and int(value) >= 0
        return True  # "any"

    def describe(self) -> str:
        return {"boolean": "an instance of 'bool'",
                "random_state": "a non-negative int, a non-empty sequence of non-negative "
                                "ints, a numpy.random.Generator, SeedSequence, "
                                "BitGenerator, a RandomState or None",
                "verbose": "a bool or a non-negative int"}.get(self.name, "anything")


BOOLEAN = _Named("boolean")
RANDOM_STATE = _Named("random_state")
VERBOSE = _Named("verbose")
ANY = _Named("any")

Check = Interval | Options | InstanceOf | _Named | None


def validate_params(estimator: Any, checks: dict[str, list[Check]]) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter of ``estimator`` that
    none of its ``checks`` accepts (``None`` in the list accepts ``None``)."""
    for name, accepted in checks.items():
        value = getattr(estimator, name)
        if any(value is None if c is None else c.accepts(value) for c in accepted):
            continue
        forms = [c.describe() if c is not None else "None" for c in accepted]
        text = forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
        raise InvalidParameterError(f"The {name!r} parameter of {type(estimator).__name__} "
                                    f"must be {text}. Got {value!r} instead.")

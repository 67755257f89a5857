"""The names :func:`~frankwolfe.minimize` knows: each method registers itself beside its
definition with :func:`register`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ._numbers import close_match

__all__ = ["register", "available_methods", "lookup"]

_METHODS: dict[str, Callable[..., Any]] = {}

_Solver = TypeVar("_Solver", bound=Callable[..., Any])


def register(*names: str) -> Callable[[_Solver], _Solver]:
    """Decorator making ``solver(objective, domain, **options)`` available as
    ``minimize(objective, domain, method=name)`` under each of ``names`` and under its
    own function name unless that is private or already taken (``"block_coordinate_frank_wolfe"``
    as well as ``"bcfw"``), matched without regard to case; the solver is returned
    unchanged.

    Parameters
    ----------
    *names : str
        One or more names for ``minimize(method=...)`` (non-empty strings; matched
        lower-cased).  A name already taken is taken over by this solver.

    Returns
    -------
    callable
        The decorator: it registers the solver it is given and returns it unchanged.

    Raises
    ------
    TypeError
        When no name is given or a name is not a non-empty string; the decorator
        raises it when what it decorates is not callable.

    Examples
    --------
    A method registers itself where it is defined (the built-in ones too)::

        @register("my_fw")
        @solver()
        def my_frank_wolfe(objective, domain, x0=None, *,
                           **run: Unpack[RunKeywords]) -> Result:
            options = RunOptions(**run)
            ...

        minimize(objective, domain, method="my_fw", tol=1e-8)
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"register: give one or more method names, got {names!r}")

    def decorate(solver: _Solver) -> _Solver:
        if not callable(solver):
            raise TypeError(f"register: {solver!r} is not callable")
        for name in names:
            _METHODS[name.lower()] = solver
        own = getattr(solver, "__name__", None)
        if isinstance(own, str) and own.isidentifier() and not own.startswith("_"):
            # never over another method's entry: a user's wrapper named frank_wolfe and
            # registered as "my_fw" must not take over method="frank_wolfe"
            _METHODS.setdefault(own.lower(), solver)
        return solver

    return decorate


def available_methods() -> list[str]:
    """Names accepted by :func:`~frankwolfe.minimize`."""
    return sorted(_METHODS)


def lookup(method: str) -> Callable[..., Any]:
    """The solver registered as ``method``."""
    try:
        return _METHODS[method.lower()]
    except (KeyError, AttributeError):
        names = available_methods()
        raise ValueError(
            f"unknown method {method!r}{close_match(method, names)}; available: "
            f"{', '.join(names)}"
        ) from None

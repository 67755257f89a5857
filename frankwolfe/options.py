"""The run keywords every solver shares, written once.

Every Frank-Wolfe method takes the same budget, stopping, logging and
callback keywords (``tol``, ``rtol``, ``max_iter``, ``time_limit``,
``callback``, ``verbose``, ``history_every``, ``progress``).
:class:`RunOptions` holds them, and the decorator :func:`solver` gives a
method's public signature and its numpydoc "Parameters" section those
keywords, so a method writes only its own parameters::

    @solver()
    def frank_wolfe(objective, domain, x0=None, *, step_size=None,
                    **run: Unpack[RunKeywords]) -> Result:
        '''...numpydoc with the method's own parameters...'''
        options = RunOptions(**run)  # @solver passes every run keyword
        return run_frank_wolfe(objective, domain, _Vanilla(), x0,
                               step_size=step_size, options=options)

Users pass explicit keywords (``inspect.signature`` lists them, and type
checkers see them: :class:`RunKeywords` types ``**run`` and the decorator keeps
the method's signature, a ``ParamSpec``); the method builds one
:class:`RunOptions` from them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, ParamSpec, TypedDict, TypeVar

from ._run_checks import check_run_options
from .monitor import IterationState, Monitor

__all__ = ["RunOptions", "RunKeywords", "solver", "RUN_PARAMETERS_DOC"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


#: The numpydoc entries of the run keywords, inserted into every solver's docstring.
RUN_PARAMETERS_DOC = """\
tol : float, default 1e-6
    Stop when the certified gap is at most ``tol``.
rtol : float, default 0
    Relative tolerance for objectives with large values: also stop when
    ``gap <= rtol * (|f| - gap)``.  Since the optimal value lies within
    ``gap`` of ``f``, this certifies ``f - f* <= rtol * |f*|``.
max_iter : int, default 1000
    Budget of outer iterations; ``Result.nit`` counts the same unit.
time_limit : float, optional
    Wall-time budget in seconds.
callback : callable, optional
    ``callback(state) -> bool | None`` after each gap computation; return
    ``False`` (Python's or numpy's) or raise ``StopIteration`` (as in
    :func:`scipy.optimize.minimize`) to stop with ``status="callback_stop"``.
    ``state`` is an :class:`~frankwolfe.IterationState`.
verbose : bool or int, default False
    Print a progress table (an int sets the printing period).
history_every : int, default 1
    Period of the history records.
progress : bool, default False
    Show a tqdm progress bar."""


@dataclass(frozen=True)
class RunOptions:
    tol: float = 1e-6
    rtol: float = 0.0
    max_iter: int = 1000
    time_limit: float | None = None
    callback: Callable[[IterationState], Any] | None = None
    verbose: bool | int = False
    history_every: int = 1
    progress: bool = False

    def __post_init__(self) -> None:
        # at construction, with the monitor's messages: RunOptions(tol="a") was accepted
        # and refused only when a run built its monitor
        check_run_options(**self.as_kwargs())

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments (of a loop or a :class:`Monitor`)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def monitor(self, method: str) -> Monitor:
        """A :class:`~frankwolfe.monitor.Monitor` for ``method`` with these options."""
        return Monitor(method, **self.as_kwargs())


RunOptions.__doc__ = ("Budgets, stopping rule, logging and callback of one run.\n\n"
                      "Parameters\n----------\n" + RUN_PARAMETERS_DOC)
_RUN_NAMES = tuple(f.name for f in fields(RunOptions))

#: The run keywords' defaults, before a method's own.
_DEFAULTS = RunOptions()


class RunKeywords(TypedDict, total=False):
    """The run keywords as a solver's ``**run: Unpack[RunKeywords]`` (for type checkers;
    the fields of :class:`RunOptions`, which a test keeps in step)."""

    tol: float
    rtol: float
    max_iter: int
    time_limit: float | None
    callback: Callable[[IterationState], Any] | None
    verbose: bool | int
    history_every: int
    progress: bool


def _entries(doc: str) -> dict[str, list[str]]:
    """The numpydoc entries of ``doc`` (unindented) by keyword: each entry's lines."""
    entries: dict[str, list[str]] = {}
    for ln in doc.splitlines():
        if ln and not ln.startswith(" "):
            entries[ln.split(" :", 1)[0]] = []
        entries[next(reversed(entries))].append(ln)
    return entries


def _insert_parameters(doc: str | None, own: dict[str, list[str]] | None = None) -> str | None:
    """Append :data:`RUN_PARAMETERS_DOC` to the docstring's "Parameters" section, with the
    method's ``own`` wording of some entries (from :func:`_entries`) in their place."""
    if not doc:
        return doc
    lines = doc.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "Parameters")
    except StopIteration:
        return doc
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    end = len(lines)
    for i in range(start + 2, len(lines) - 1):  # the next section: a title over dashes
        nxt = lines[i + 1].strip()
        if lines[i].strip() and nxt and set(nxt) == {"-"} and lines[i].startswith(indent) \
                and not lines[i][len(indent):].startswith(" "):
            end = i
            while end > start and not lines[end - 1].strip():
                end -= 1
            break
    entries = {**_entries(RUN_PARAMETERS_DOC), **(own or {})}
    block = [indent + ln if ln else ln for entry in entries.values() for ln in entry]
    return "\n".join(lines[:end] + block + lines[end:])


def solver(
    defaults: dict[str, Any] | None = None,
    doc: str | None = None,
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorator giving a solver the shared run keywords.

    The decorated function ends its parameters with ``**run: Unpack[RunKeywords]`` and
    starts with ``options = RunOptions(**run)``: the public function passes it every
    run keyword (the caller's, else the method's default), refuses any other unknown
    keyword, lists the run keywords in its runtime signature and its docstring's
    "Parameters" section, and keeps the function's type (a ``ParamSpec``), so type
    checkers see the real parameters.

    Parameters
    ----------
    defaults : dict, optional
        ``{run_keyword: default}`` where the method's default differs from
        :class:`RunOptions`'; ``doc`` must then describe the keyword.
    doc : str, optional
        The method's own wording of some run keywords (numpydoc entries,
        unindented, as :data:`RUN_PARAMETERS_DOC`), for example a budget
        counted in passes; they replace the shared entries.  (Not in the
        method's docstring: the source's signature does not list them.)
    """
    defaults = dict(defaults or {})
    own = _entries(doc or "")
    unknown = (set(defaults) | set(own)) - set(_RUN_NAMES)
    if unknown:
        raise TypeError(f"@solver: {sorted(unknown)} are not run keywords")
    if set(defaults) - set(own):  # the shared entry would state the wrong default
        raise TypeError(f"@solver: a changed default needs its own `doc` entry: "
                        f"{sorted(set(defaults) - set(own))}")
    base = replace(_DEFAULTS, **defaults).as_kwargs()

    def decorate(func: Callable[_P, _R]) -> Callable[_P, _R]:
        sig = inspect.signature(func)
        params = list(sig.parameters.values())
        if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD \
                or params[-1].name != "run":
            raise TypeError(f"@solver: {func.__name__} must end its parameters with "
                            "`**run: Unpack[RunKeywords]`")
        run = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=value,
                                 annotation=RunOptions.__dataclass_fields__[name].type)
               for name, value in base.items()]
        public = sig.replace(parameters=params[:-1] + run)
        own_names = frozenset(p.name for p in params[:-1])
        name = func.__name__

        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for key in kwargs:  # **run would take them silently
                if key not in own_names and key not in base:
                    raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
            return func(*args, **{**base, **kwargs})

        wrapper.__signature__ = public  # type: ignore[attr-defined]
        wrapper.__doc__ = _insert_parameters(func.__doc__, own)
        return wrapper

    return decorate

"""The run keywords every solver shares, written once.

Every Frank-Wolfe method takes the same budget, stopping, logging and
callback keywords (``tol``, ``rtol``, ``max_iter``, ``time_limit``,
``callback``, ``verbose``, ``history_every``, ``progress``).
:class:`RunOptions` holds them, and the decorator :func:`solver` gives a
method's public signature and its numpydoc "Parameters" section those
keywords, so a method writes only its own parameters::

    @solver()
    def frank_wolfe(objective, domain, x0=None, *, step_size=None,
                    options: RunOptions) -> Result:
        '''...numpydoc with the method's own parameters...'''
        return run_frank_wolfe(objective, domain, _Vanilla(), x0,
                               step_size=step_size, options=options)

Users still see and pass explicit keywords (``inspect.signature`` lists
them); the method receives one :class:`RunOptions`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from .monitor import IterationState, Monitor

__all__ = ["RunOptions", "solver", "RUN_PARAMETERS_DOC"]


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
    ``False`` to stop.  ``state`` is an :class:`~frankwolfe.IterationState`.
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

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments (of a loop or a :class:`Monitor`)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def monitor(self, method: str) -> Monitor:
        """A :class:`~frankwolfe.monitor.Monitor` for ``method`` with these options."""
        return Monitor(method, **self.as_kwargs())


RunOptions.__doc__ = ("Budgets, stopping rule, logging and callback of one run.\n\n"
                      "Parameters\n----------\n" + RUN_PARAMETERS_DOC)
_RUN_NAMES = tuple(f.name for f in fields(RunOptions))


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
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator giving a solver the shared run keywords.

    The decorated function declares a keyword-only parameter
    ``options: RunOptions``; the public function replaces it by the
    keywords of :class:`RunOptions` (in its signature and its docstring's
    "Parameters" section) and passes them in as one ``RunOptions``.

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

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func)
        params = list(sig.parameters.values())
        names = [p.name for p in params]
        if "options" not in names:
            raise TypeError(f"@solver: {func.__name__} must declare a keyword `options`")
        at = names.index("options")
        run = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY,
                                 default=defaults.get(f.name, f.default), annotation=f.type)
               for f in fields(RunOptions)]
        public = sig.replace(parameters=params[:at] + run + params[at + 1:])
        name = func.__name__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if "options" in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument 'options'")
            opts = RunOptions(**{**defaults,
                                 **{k: kwargs.pop(k) for k in _RUN_NAMES if k in kwargs}})
            return func(*args, options=opts, **kwargs)

        wrapper.__signature__ = public  # type: ignore[attr-defined]
        wrapper.__doc__ = _insert_parameters(func.__doc__, own)
        return wrapper

    return decorate

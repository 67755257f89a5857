"""Result objects returned by every solver."""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Iterator, KeysView, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from .active_set import ActiveSet

__all__ = ["Result", "History", "Status"]


class Status(StrEnum):
    """Why a run stopped (a string: ``res.status == "converged"``)."""

    CONVERGED = "converged"
    MAX_ITER = "max_iter"
    TIME_LIMIT = "time_limit"
    CALLBACK_STOP = "callback_stop"
    #: Ctrl-C (SIGINT) ended the run at the end of an iteration
    INTERRUPTED = "interrupted"
    #: no progress: zero steps while the certified gap did not decrease
    STALLED = "stalled"
    ERROR = "error"


def _refused_key(key: object) -> TypeError:
    """The error for a :class:`History` key that is no column name, row or slice."""
    return TypeError(f"history: a key is a column name (str), a row number (int) or a "
                     f"slice of rows, got {key!r} of type {type(key).__name__}")


class History:
    """Per-iteration records, stored column-wise.

    ``history["gap"]`` is a numpy array (a column); ``history[-1]`` is a row as a dict
    ``{column: value}``, as iterating (``for row in history``) gives them (an int,
    negative from the end; out of range, an ``IndexError``), and ``history[a:b]`` a
    list of such rows.  :meth:`to_dict`, :meth:`to_pandas` and :meth:`to_csv` export
    the table.
    """

    def __init__(self, columns: tuple[str, ...] = ()) -> None:
        self._cols: dict[str, list[Any]] = {c: [] for c in columns}
        self._first = len(columns)  # how many columns the constructor named
        # rows of the first _width columns added by append_values or a row_appender and
        # not yet moved into _cols: one tuple appended per row, columns filled when read
        # (the monitor adds a row per iteration, and five list appends cost more than a
        # small problem's step)
        self._pending: list[tuple[Any, ...]] = []
        self._width = self._first

    def _columns(self) -> dict[str, list[Any]]:
        """The columns, with the pending rows moved in."""
        rows = self._pending
        if rows:
            lists = list(self._cols.values())
            for values_of, column in zip(lists, zip(*rows)):
                values_of.extend(column)
            for values_of in lists[self._width:]:  # the columns the rows do not have
                values_of.extend([np.nan] * len(rows))
            rows.clear()  # the same list: a row_appender's stays valid
        return self._cols

    def append(self, **row: Any) -> None:
        """Add one row; new columns are back-filled with NaN."""
        self.append_row(row)

    def append_row(self, row: dict[str, Any]) -> None:
        """:meth:`append` with the row as a dict (no keyword packing)."""
        cols = self._columns()
        if row.keys() == cols.keys():  # the usual case: same columns as before
            for name, value in row.items():
                cols[name].append(value)
            return
        n = len(self)
        for name in row:
            if name not in cols:
                cols[name] = [np.nan] * n
        for name, values in cols.items():
            values.append(row.get(name, np.nan))

    def append_values(self, values: tuple[Any, ...]) -> None:
        """Add a row of the columns named at construction, by position (in their
        order); columns added since are filled with NaN."""
        if len(values) != self._first:
            raise ValueError(f"History.append_values: {len(values)} values for the "
                             f"{self._first} columns {self.columns[:self._first]}")
        if self._width != self._first:
            self._columns()
            self._width = self._first
        self._pending.append(values)

    def row_appender(self, names: tuple[str, ...] | None = None
                     ) -> Callable[[tuple[Any, ...]], None]:
        """A function that adds a row of the columns ``names`` by position (default:
        those named at construction), as :meth:`append_row` would add the dict
        ``zip(names, values)``, for a caller that adds rows of these columns alone
        until it asks for another appender (the monitor, once per iteration): no
        check and no call of a method per row.

        New columns are back-filled with NaN when it is made; columns not in
        ``names`` are filled with NaN in its rows.
        """
        cols = self._columns()  # rows of the previous appender go in first
        if names is None:
            names = tuple(cols)[:self._first]
        n = len(self)
        for name in names:
            if name not in cols:
                cols[name] = [np.nan] * n
        if tuple(cols)[:len(names)] != names:  # another order, or a name twice: as dicts
            return lambda values: self.append_row(dict(zip(names, values)))
        self._width = len(names)
        return self._pending.append

    def pop(self) -> dict[str, Any]:
        """Remove the last row; returns it as a dict (an ``IndexError`` when empty)."""
        cols = self._columns()
        if not cols or not len(next(iter(cols.values()))):
            raise IndexError("History.pop: the history has no row")
        return {name: values.pop() for name, values in cols.items()}

    def __len__(self) -> int:
        cols = self._columns()
        return len(next(iter(cols.values()))) if cols else 0

    @overload
    def __getitem__(self, key: str) -> np.ndarray: ...

    @overload
    def __getitem__(self, key: SupportsIndex) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, key: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, key: str | SupportsIndex | slice
                    ) -> np.ndarray | dict[str, Any] | list[dict[str, Any]]:
        if isinstance(key, str):
            try:
                return np.asarray(self._columns()[key])
            except KeyError:
                raise KeyError(f"history has no column {key!r}; columns: "
                               f"{self.columns}") from None
        cols = self._columns()
        n = len(self)
        if isinstance(key, slice):
            return [{c: v[i] for c, v in cols.items()} for i in range(*key.indices(n))]
        # a bool is an int to operator.index: history[True] read as row 1
        if isinstance(key, (bool, np.bool_)) or not hasattr(key, "__index__"):
            raise _refused_key(key)
        try:
            i = operator.index(key)
        except TypeError:  # an array of one integer has __index__, but refuses it
            raise _refused_key(key) from None
        if not -n <= i < n:
            raise IndexError(f"history: row {i} out of range for a history of {n} rows")
        return {c: v[i] for c, v in cols.items()}

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __iter__(self) -> Iterator[dict[str, Any]]:
        cols = self._columns()
        names = list(cols)
        for i in range(len(self)):
            yield {c: cols[c][i] for c in names}

    @property
    def columns(self) -> list[str]:
        """Column names."""
        return list(self._cols)

    def to_dict(self) -> dict[str, np.ndarray]:
        """Columns as numpy arrays."""
        return {c: np.asarray(v) for c, v in self._columns().items()}

    def to_pandas(self) -> pd.DataFrame:
        """The table as a ``pandas.DataFrame`` (needs pandas: ``frankwolfe[pandas]``)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("History.to_pandas needs pandas, which is not installed: "
                              "pip install 'frankwolfe[pandas]' (or pip install pandas)") from e

        return pd.DataFrame(self.to_dict())

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the table as CSV (atomically: an interrupted write leaves the old file)."""
        import csv

        from .compiled.atomic_files import atomic_write

        path = out_path(path, "History.to_csv")
        with atomic_write(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(self.columns)
            for row in self:
                w.writerow([row[c] for c in self.columns])

    def __repr__(self) -> str:
        n = len(self)
        return f"History({n} row{'' if n == 1 else 's'}, columns={self.columns})"


def out_path(path: Any, where: str) -> str | os.PathLike[str]:
    """``path`` when it can name a file to write, or an error naming ``where`` and the
    path: ``None`` and ``""`` (the temporary file of an atomic write landed in the current
    folder, then a raw error) or a folder (a missing folder ``atomic_write`` names)."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise TypeError(f"{where}: `path` must be a file path (str or os.PathLike), "
                        f"got {path!r}")
    text = os.fspath(path)
    if not text:
        raise ValueError(f"{where}: `path` is empty; give a file path")
    if os.path.isdir(text) or text.endswith((os.sep, "/")):
        raise IsADirectoryError(f"{where}: `path` {text!r} is a folder; give a file path")
    return path


#: scipy's names of the counters (``OptimizeResult.nfev``, ``.njev``): properties of Result
_SCIPY_ALIASES = frozenset({"nfev", "njev"})


@dataclass
class Result(Mapping[str, Any]):
    """Outcome of a solver run, read like scipy's ``OptimizeResult``.

    Fields are attributes (``res.x``) and mapping items (``res["x"]``,
    ``res.keys()``, ``dict(res)``), as in ``scipy.optimize.OptimizeResult``;
    ``success`` is a key too.  The work counters also answer to scipy's names,
    ``nfev`` (``n_function_calls``) and ``njev`` (``n_gradient_calls``), as
    attributes and items (``res["nfev"]``); they are not keys (``dict(res)``
    holds each value once).  ``nit`` is the same name in both.

    Attributes
    ----------
    x : ndarray
        The returned iterate (the last good one if the run stopped on an error).
    fun : float
        ``f(x)``.
    gap : float
        Frank-Wolfe duality gap ``<grad f(x), x - v>`` at ``x``: a certified
        upper bound on ``f(x) - f*`` for convex ``f``; NaN when no certificate
        could be computed at ``x`` (``message`` says so).
    best_gap : float
        ``fun - dual_bound``, where ``dual_bound = max_k (f(x_k) - gap_k)``
        over the run: also certified for ``x``, and never larger than ``gap``.
    dual_bound : float
        Best certified lower bound on ``f*`` seen.
    status : Status
        ``converged``, ``max_iter``, ``time_limit``, ``callback_stop``,
        ``interrupted`` (Ctrl-C: the run stopped at the end of an iteration and
        returns its iterate), ``stalled`` (no progress; ``message`` says why) or
        ``error``.
    message : str
        Human-readable reason.
    nit : int
        Iterations performed.
    n_oracle_calls, n_gradient_calls, n_function_calls : int
        Work counters (the last two also as scipy's ``njev`` and ``nfev``).
    time : float
        Wall time in seconds, from the solver's start (set-up and numba
        compilation included) to the end of the closing certificate.
    history : History
        Per-iteration records.
    method : str
        The method's primary name, as :func:`~frankwolfe.minimize` accepts it
        (``"fw"``, ``"away"``, ``"pairwise"``, ``"bpcg"``, ``"bcg"``, ``"dicg"``,
        ``"rafw"``, ``"fcfw"``, ``"compiled_pairwise"``, ``"bcfw"``, ``"cfw"``,
        ``"bfw"``, ``"sfw"``, ``"alm"``, ``"saddle"``); the configuration
        (``blended``, the saddle ``variant``, ...) is in ``extra``.
    active_set : ActiveSet, tuple of two ActiveSet, or None
        The final active set of an active-set method (away, pairwise, BPCG, BCG,
        fully corrective, RAFW, compiled pairwise); the players' pair for the saddle
        away-step and corrective modes; None for the others.
    extra : dict
        Method-specific information.
    """

    x: np.ndarray
    fun: float
    gap: float
    best_gap: float
    dual_bound: float
    status: Status
    message: str
    nit: int
    n_oracle_calls: int
    n_gradient_calls: int
    n_function_calls: int
    time: float
    history: History
    method: str
    active_set: ActiveSet | tuple[ActiveSet, ActiveSet] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """True when the requested tolerance was reached."""
        return self.status == Status.CONVERGED

    @property
    def nfev(self) -> int:
        """scipy's name of ``n_function_calls``."""
        return self.n_function_calls

    @property
    def njev(self) -> int:
        """scipy's name of ``n_gradient_calls``."""
        return self.n_gradient_calls

    # -- the mapping face (scipy's OptimizeResult is a dict) ------------------------
    def keys(self) -> KeysView[str]:
        """The fields' names and ``success``, as ``OptimizeResult.keys()`` lists its own."""
        return KeysView(self)

    def __iter__(self) -> Iterator[str]:
        yield from _FIELD_NAMES
        yield "success"

    def __len__(self) -> int:
        return len(_FIELD_NAMES) + 1

    def __getitem__(self, name: str) -> Any:
        if name in _KEYS or name in _SCIPY_ALIASES:
            return getattr(self, name)
        # a method's own entries, as scipy's OptimizeResult holds a solver's fields
        # beside the common ones
        if name in self.extra:
            return self.extra[name]
        raise KeyError(f"Result has no key {name!r}; keys: {list(self)} and extra's "
                       f"{sorted(self.extra)}")

    def __contains__(self, name: object) -> bool:
        # as keys() lists: the aliases are readable items but not keys
        return isinstance(name, str) and name in _KEYS

    def __repr__(self) -> str:
        return (
            f"Result(method={self.method!r}, status={str(self.status)!r}, fun={self.fun:.10g}, "
            f"gap={self.gap:.3e}, nit={self.nit}, time={self.time:.3g}s)"
        )


_FIELD_NAMES = tuple(f.name for f in fields(Result))
_KEYS = frozenset((*_FIELD_NAMES, "success"))

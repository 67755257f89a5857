"""An oracle that remembers its answers, for lazy methods."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import numpy as np

from .._numbers import check_whole, kind_of
from ..active_set import ActiveSet
from ..atoms import Atom
from ..errors import ShapeError
from .base import LMO, declared_shape

__all__ = ["CachedLMO"]


class CachedLMO(LMO):
    """Wrap an oracle and keep the vertices it returned (the last ``cache_size``, or all).

    A call is always answered by the wrapped oracle (exact; the answer joins the
    cache).  :meth:`best_cached` looks through the cache instead: lazy methods
    (``frank_wolfe(lazy=True)``, the lazy active-set methods) ask it first for a
    vertex that is good enough and call the oracle only when none is, which pays
    when the oracle is expensive (an LP, an assignment problem, a shortest-path
    tree) and the iterates revisit few vertices.

    Parameters
    ----------
    lmo : LMO
        The oracle to wrap.
    cache_size : int, optional
        How many vertices to keep (least recently used dropped first); default:
        all.

    Notes
    -----
    Vertices are told apart by their atom keys (oracles give equal vertices equal
    keys).  They are stored as the rows of an :class:`~frankwolfe.ActiveSet` (its
    weights unused), so :meth:`best_cached` is one sparse or dense product,
    O(nnz of the cache).
    One cache holds the vertices of one shape: around a domain of no fixed size
    (``ProbabilitySimplex()`` without ``dim``), a call or a :meth:`best_cached` at
    another shape than the cached vertices' raises :class:`~frankwolfe.ShapeError`
    (a vertex key such as ``("e", 0)`` names a vertex of every dimension, so the
    cache cannot keep two shapes apart); call :meth:`clear` first to reuse it at
    another size, or wrap the domain in one ``CachedLMO`` per size.
    Everything else (``violation``, ``diameter``, the shape) is the wrapped
    oracle's.  One cache may serve concurrent solves (threads): a lock guards the
    cache's state (the wrapped oracle is called outside it, so it must be thread-safe
    itself, as the built-in domains are); a pickled cache gets a new lock.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import CachedLMO, ProbabilitySimplex
    >>> lmo = CachedLMO(ProbabilitySimplex(dim=3))
    >>> _ = lmo(np.array([1.0, -1.0, 0.0]))
    >>> atom, value = lmo.best_cached(np.array([0.0, -2.0, 1.0]))
    >>> atom.key, value
    (('e', 1), -2.0)
    """

    def __init__(self, lmo: LMO, cache_size: int | None = None) -> None:
        if not isinstance(lmo, LMO):
            raise TypeError(f"CachedLMO: `lmo` must be an LMO, got {kind_of(lmo)}")
        self.cache_size = check_whole(cache_size, "cache_size", 1, "CachedLMO", optional=True)
        self.lmo = lmo
        self.shape = declared_shape(lmo)
        self._order: OrderedDict[Hashable, None] = OrderedDict()  # keys, least recent first
        self._store = ActiveSet(keep_x=False)
        self.n_calls = 0  # calls of the wrapped oracle
        # concurrent solves may share the cache: the key order and the store change
        # together (a move, an eviction), and a lookup must not see them half done
        self._lock = threading.Lock()

    @property
    def sparse_directions(self) -> bool:  # type: ignore[override]
        """The wrapped oracle's: a sparse direction reaches it as that oracle takes it."""
        return bool(getattr(self.lmo, "sparse_directions", False))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        atom = self.lmo(direction)  # outside the lock: the expensive part, the oracle's own
        with self._lock:
            self.n_calls += 1
            self._remember(atom)
        return atom

    def _check_shape(self, shape: tuple[int, ...], what: str) -> None:
        """A clear error for a shape other than the cached vertices'; the caller holds
        the lock."""
        held = self._store.shape if len(self._order) else None
        if held is not None and tuple(shape) != tuple(held):
            raise ShapeError(
                f"CachedLMO: {what} of shape {tuple(shape)}, but the cache holds vertices "
                f"of shape {tuple(held)}; one cache serves one shape: call clear() before "
                "reusing it at another size, or use one CachedLMO per size")

    def _remember(self, atom: Atom) -> None:
        """Add ``atom`` (or mark it most recent); the caller holds the lock."""
        # before the key: ("e", 0) is the key of a vertex of every dimension
        self._check_shape(atom.shape, "a vertex")
        key = atom.key
        if key in self._order:
            self._order.move_to_end(key)
            return
        self._order[key] = None
        self._store.add(atom, 1.0)
        if self.cache_size is not None and len(self._order) > self.cache_size:
            old, _ = self._order.popitem(last=False)
            self._store.remove(old)

    def best_cached(self, direction: np.ndarray) -> tuple[Atom | None, float]:
        """The cached vertex minimizing ``<direction, v>`` and its value
        (``(None, inf)`` when the cache is empty).

        Raises
        ------
        ShapeError
            When ``direction``'s shape is not the cached vertices' (see the Notes of
            :class:`CachedLMO`).
        """
        with self._lock:
            if len(self._order) == 0:
                return None, np.inf
            self._check_shape(np.shape(direction), "a direction")
            scores = self._store.scores(direction)
            i = int(np.argmin(scores))
            best = self._store.atom_at(i)
            self._order.move_to_end(best.key)
            return best, float(scores[i])

    def __len__(self) -> int:
        return len(self._order)

    def clear(self) -> None:
        """Forget every cached vertex."""
        with self._lock:
            self._order.clear()
            self._store = ActiveSet(keep_x=False)

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            state = self.__dict__.copy()
        del state["_lock"]  # a lock does not pickle
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def violation(self, x: np.ndarray) -> float:
        return self.lmo.violation(x)

    def check_feasible(self, x: Any, name: str = "x0") -> None:
        self.lmo.check_feasible(x, name)

    def decompose(self, x: Any) -> ActiveSet | None:
        """The wrapped oracle's :meth:`~frankwolfe.LMO.decompose` (its atoms are the
        vertices this oracle answers with, keys included).

        Parameters
        ----------
        x : array_like
            A point of the domain.

        Returns
        -------
        ActiveSet or None
            None when the wrapped oracle has no decomposition.
        """
        return self.lmo.decompose(x)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        return self.lmo.diameter(shape)

    def initial_point(self, shape: tuple[int, ...] | None = None) -> Atom:
        atom = self.lmo.initial_point(shape)
        with self._lock:
            self._remember(atom)
        return atom

    def _repr_params(self) -> dict[str, Any]:
        return {"lmo": self.lmo, "cache_size": self.cache_size}

"""Saddle-point Frank-Wolfe's view of ``L``: an objective of ``z = (x, y)`` whose
"gradient" is the operator ``r(z) = (grad_x L, -grad_y L)``, and its tracker for a
:class:`~frankwolfe.BilinearObjective` (``M y`` and ``M^T x`` kept from the rows and
columns of ``M`` the vertices touch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ...atoms import Atom
from ...direction import Direction
from ...errors import ShapeError
from ...objectives.base import Objective, Tracker, checked_gradient, checked_value
from ...objectives.saddle import BilinearObjective, SaddleObjective

# The bilinear tracker recomputes M y and M^T x from scratch every this many moves.
_REFRESH = 1000
# Cached products of dense atoms with M (the cache is emptied when full).
_CACHE_SIZE = 256


class _SaddleAdapter(Objective):
    """``L`` seen as an objective of ``z = (x, y)`` whose "gradient" is ``r(z)``.

    Not a gradient field, so the loop's tangent-plane convexity check is off.
    """

    convex = False

    def __init__(self, saddle: SaddleObjective, shape_x: tuple[int, ...],
                 shape_y: tuple[int, ...]) -> None:
        self.saddle = saddle
        self.shape_x = shape_x
        self.shape_y = shape_y
        self.nx = int(np.prod(shape_x))
        self.n = self.nx + int(np.prod(shape_y))
        self.shape = (self.n,)
        # the names of the methods that answer, for the errors: the saddle's own
        # value_and_gradients when it has one, else value, gradient_x and gradient_y
        name = type(saddle).__name__
        if type(saddle).value_and_gradients is SaddleObjective.value_and_gradients:
            self._names = (f"{name}.value", f"{name}.gradient_x", f"{name}.gradient_y")
        else:
            self._names = (f"{name}.value_and_gradients",) * 3

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[: self.nx].reshape(self.shape_x), z[self.nx:].reshape(self.shape_y)

    def value_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        x, y = self.split(z)
        val, gx, gy = self.saddle.value_and_gradients(x, y)
        # checked_*: the float casts kept the real part of a complex answer with a mere
        # ComplexWarning; the shapes are checked below, both at once
        name_v, name_x, name_y = self._names
        val = checked_value(val, name_v, "")
        gx = checked_gradient(gx, None, name_x, "")
        gy = checked_gradient(gy, None, name_y, "")
        if gx.shape != self.shape_x or gy.shape != self.shape_y:
            raise ShapeError(
                f"{type(self.saddle).__name__}: gradients have shapes {gx.shape} and {gy.shape}, "
                f"expected {self.shape_x} and {self.shape_y}"
            )
        r = np.empty(self.n)
        r[: self.nx] = gx.reshape(-1)
        np.negative(gy.reshape(-1), out=r[self.nx:])
        return val, r

    def value(self, z: np.ndarray) -> float:
        x, y = self.split(z)
        return checked_value(self.saddle.value(x, y), type(self.saddle).__name__, "value")

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self.value_and_gradient(z)[1]

    def tracker(self, z: np.ndarray) -> Tracker:
        if isinstance(self.saddle, BilinearObjective):
            return _BilinearTracker(self, self.saddle, z)
        return Tracker(self, z)


class _BilinearTracker(Tracker):
    """Keeps ``M y`` and ``M^T x`` up to date from per-atom products.

    A step ``z <- (1 + gamma c0) z + gamma sum_i c_i a_i`` changes ``M y`` by
    ``M`` times the atoms' ``y`` parts, which for a simplex vertex ``e_j`` is
    one column of ``M``: O(m + n) per Frank-Wolfe step instead of two full
    products, O(nnz(M)).  The products are recomputed from scratch every
    ``_REFRESH`` moves (and on :meth:`set_point`), bounding the drift.
    """

    def __init__(self, adapter: _SaddleAdapter, saddle: BilinearObjective,
                 z: np.ndarray) -> None:
        super().__init__(adapter, z)
        self.adapter = adapter
        self.L = saddle
        self.nx = adapter.nx
        M: Any = saddle.M  # dense or sparse
        self.M = M
        self._rows: Any
        self._cols: Any
        if bool(sp.issparse(M)):  # bool(): M stays Any (scipy's stubs lack CSR attributes)
            self._rows = sp.csr_array(M)          # rows of M: M^T e_i
            self._cols = sp.csr_array(M.T)        # rows of M^T: M e_j
        else:
            self._rows = M
            self._cols = np.ascontiguousarray(M.T)  # columns read as contiguous rows
        self._cache: dict[Any, tuple[np.ndarray | None, np.ndarray | None]] = {}
        self._moves = 0
        self.n_refreshes = 0
        self._refresh()

    def _refresh(self) -> None:
        x, y = self.adapter.split(self.x)
        self.My: np.ndarray = np.asarray(self.M @ y.reshape(-1), dtype=float)
        self.MTx: np.ndarray = np.asarray(self.M.T @ x.reshape(-1), dtype=float)
        self.n_refreshes += 1

    def _products(self, atom: Atom) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(M^T a_x, M a_y)`` of a joint atom (None for a side it does not touch)."""
        nx = self.nx
        idx, val = atom.indices, atom.values
        if atom.is_sparse:
            cut = int(np.searchsorted(idx, nx)) if idx.size and idx[-1] >= nx else idx.size
            px = py = None
            if cut:
                px = _row_combination(self._rows, idx[:cut], val[:cut])
            if cut < idx.size:
                py = _row_combination(self._cols, idx[cut:] - nx, val[cut:])
            return px, py
        key = atom.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        a = atom.to_dense().reshape(-1)
        ax, ay = a[:nx], a[nx:]
        out = (np.asarray(self.M.T @ ax, dtype=float) if np.any(ax) else None,
               np.asarray(self.M @ ay, dtype=float) if np.any(ay) else None)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = out
        return out

    def move(self, direction: Direction, gamma: float) -> None:
        super().move(direction, gamma)
        self._moves += 1
        if self._moves % _REFRESH == 0:
            self._refresh()
            return
        scale = 1.0 + gamma * direction.x_coef
        if scale != 1.0:
            self.My *= scale
            self.MTx *= scale
        for c, a in direction.terms:
            px, py = self._products(a)
            if px is not None:
                self.MTx += (gamma * c) * px
            if py is not None:
                self.My += (gamma * c) * py

    def set_point(self, x: np.ndarray) -> None:
        super().set_point(x)
        self._refresh()

    def _evaluate(self) -> tuple[float, np.ndarray]:
        x, y = self.adapter.split(self.x)
        val, gx, gy = self.L.from_products(x.reshape(-1), y.reshape(-1), self.My, self.MTx)
        r = np.empty(self.x.shape)
        r[:self.nx] = gx
        np.negative(gy, out=r[self.nx:])
        self.n_function_calls += 1
        self.n_gradient_calls += 1
        return val, r


def _row_combination(R: Any, rows: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``sum_k coef_k R[rows_k]`` for a dense or CSR matrix ``R``."""
    sparse = sp.issparse(R)  # a plain bool: R stays Any for the type checker
    if not sparse:
        if rows.size == 1:
            return coef[0] * R[int(rows[0])]
        return coef @ R[rows]
    if rows.size > 8:
        return np.asarray(R[rows].T @ coef, dtype=float).reshape(-1)
    # a few CSR rows straight from the arrays: scipy's row indexing costs more per call
    # than the few rows' work (benchmarks/README.md, "Measurements behind code choices")
    out = np.zeros(R.shape[1])
    for i, c in zip(rows.tolist(), coef.tolist()):
        lo, hi = R.indptr[i], R.indptr[i + 1]
        out[R.indices[lo:hi]] += c * R.data[lo:hi]
    return out

"""Product domains: blocks embedded in one space.

A :class:`ProductDomain` has blocks ``i = 1..n``, each with its own LMO and its
own coordinate set ``idx_i`` in a common vector ``x``; the domain is
``{ sum_i E_i z_i : z_i in M_i }`` where ``E_i`` scatters block coordinates to
``idx_i``.  Disjoint coordinate sets give the Cartesian product
``M_1 x ... x M_n``; overlapping ones give the Minkowski sum
``M_1 + ... + M_n`` (the structured SVM dual in image space).  The LMO of
either is the sum of the block LMOs, because a linear function separates over
the blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .._finite import gap_below_rounding
from .._numbers import kind_of
from ..atoms import Atom
from ..errors import OracleError, ShapeError
from .base import LMO, declared_shape, size_advice

__all__ = ["ProductDomain", "check_block_gaps"]


def check_block_gaps(domain: ProductDomain, g_dot_x: np.ndarray, g_dot_s: np.ndarray,
                     f: float, f_top: float, where: str,
                     blocks: np.ndarray | None = None) -> None:
    """Raise :class:`~frankwolfe.OracleError` when a block's Frank-Wolfe gap
    ``<g_i, x_i> - <g_i, s_i>`` is below zero by more than rounding.

    A product's gap is the sum of its blocks' gaps, so a block oracle that does not
    minimize (a negative block gap) is hidden by the other blocks' positive gaps, and
    the sum certifies nothing.  The allowance is the one the algorithms grant a whole
    gap (:func:`~frankwolfe._finite.gap_below_rounding`), applied to each block: relative
    to the block's products (``1e-6`` of ``|<g_i, x_i>| + |<g_i, s_i>|``) and to the run's
    values of ``f`` (``1e-12`` of ``|f| + f_top``), no absolute floor.

    Parameters
    ----------
    domain : ProductDomain
        The domain whose blocks answered (its blocks name the culprit).
    g_dot_x, g_dot_s : ndarray
        ``<g_i, x_i>`` and ``<g_i, s_i>`` per block (``n_blocks`` entries each, or one
        per entry of ``blocks``).
    f, f_top : float
        The objective's value at ``x`` and the run's largest ``|f|`` so far.
    where : str
        Where in the run the gap was computed (``"iteration 12"``), for the message.
    blocks : ndarray of int, optional
        The blocks the products are about (default: all, in order).

    Raises
    ------
    OracleError
        Naming the first block beyond rounding and its oracle.
    """
    gx = np.asarray(g_dot_x, dtype=float)
    gs = np.asarray(g_dot_s, dtype=float)
    gaps = gx - gs
    # NaN compares False: a block that is not finite is not this check's to report
    bad = gap_below_rounding(gaps, gx, gs, f, f_top)
    if not bad.any():
        return
    j = int(np.argmax(bad))  # the first block beyond rounding
    i = j if blocks is None else int(blocks[j])
    gx, gs, gaps = gx[j:j + 1], gs[j:j + 1], gaps[j:j + 1]
    raise OracleError(
        f"{domain.blocks[i]!r} (block {i} of the ProductDomain) answered a vertex s_{i} "
        f"with <g_{i}, s_{i}> = {gs[0]:.12g} above <g_{i}, x_{i}> = {gx[0]:.12g} at {where}: "
        f"not a minimizer of <g_{i}, .> over a block domain that holds x_{i} (the block's "
        f"Frank-Wolfe gap {gaps[0]:.3g} < 0 certifies nothing, and in the product's gap the "
        f"other blocks' gaps hide it).  Either the block oracle does not minimize, or x_{i} "
        "left its domain (check its violation(), or run with frankwolfe.set_debug(True))")


class ProductDomain(LMO):
    """Cartesian product or Minkowski sum of block domains.

    Parameters
    ----------
    blocks : sequence of LMO
        One oracle per block.  A block's points have the block LMO's
        ``shape`` (vectors or matrices); they are flattened in C order into
        the block's coordinates.
    indices : sequence of array_like of int, slices or ranges, optional
        Coordinates of each block in the common vector (at least one per block,
        none repeated within a block).  When omitted the
        blocks are laid end to end, which needs every block LMO to know its
        shape (``dim``).  An index array of matrix shape gives a block LMO that
        knows no shape its points' shape (a ``NuclearNormBall()`` block then
        answers matrices).  The common vector has ``dim`` = the largest index
        plus one coordinates; one that no block holds is 0 in every point of the
        domain (the oracle never moves it, and :meth:`violation` counts a
        non-zero there).

    Attributes
    ----------
    dim : int
        Length of the common vector ``x``.
    disjoint : bool
        True for a Cartesian product, False when coordinate sets overlap
        (Minkowski sum).

    Notes
    -----
    Cost of one call: the sum of the block oracles' costs plus O(dim).
    """

    def __init__(self, blocks: Sequence[LMO], indices: Sequence[Any] | None = None) -> None:
        if isinstance(blocks, LMO) or not isinstance(blocks, Iterable):
            # ProductDomain(a, b) read b as the index sets, then failed iterating a
            raise TypeError(
                f"ProductDomain: `blocks` must be a list (or tuple) of LMOs, got "
                f"{type(blocks).__name__}; the blocks go in one list: "
                f"ProductDomain([block_0, block_1, ...])")
        self.blocks: tuple[LMO, ...] = tuple(blocks)
        #: the product minimizes exactly when every block does (LMO.exact)
        self.exact = all(bool(getattr(b, "exact", True)) for b in self.blocks)
        # a block's points' shape from a matrix-shaped index array (see block_shape)
        self._index_shapes: list[tuple[int, ...] | None] = [None] * len(self.blocks)
        if not self.blocks:
            raise ValueError("ProductDomain: `blocks` must hold at least one LMO")
        for i, b in enumerate(self.blocks):
            if not isinstance(b, LMO):
                raise TypeError(
                    f"ProductDomain: block {i} must be an LMO, got {kind_of(b)}")
        if indices is None:
            starts, pos = [], 0
            for i, b in enumerate(self.blocks):
                b_shape = declared_shape(b)
                if b_shape is None:
                    raise ShapeError(
                        f"ProductDomain: block {i} ({b!r}) does not know its shape; "
                        f"{size_advice(b)}, or pass `indices`"
                    )
                size = math.prod(b_shape)
                if size == 0:
                    raise ShapeError(f"ProductDomain: block {i} ({b!r}) has shape {b_shape}, "
                                     f"no coordinates; an oracle needs at least one")
                starts.append(np.arange(pos, pos + size, dtype=np.int64))
                pos += size
            self.block_indices: tuple[np.ndarray, ...] = tuple(starts)
            self.dim = pos
        else:
            if len(indices) != len(self.blocks):
                raise ValueError(
                    f"ProductDomain: {len(self.blocks)} blocks but {len(indices)} index sets"
                )
            idx_list = []
            # one array per distinct index object: blocks given the same one (a Minkowski
            # sum, the origins of traffic assignment over all links) share it, converted
            # and checked once, instead of a copy per block
            seen: dict[int, tuple[Any, np.ndarray]] = {}
            for i, (b, ix) in enumerate(zip(self.blocks, indices)):
                kept = seen.get(id(ix))
                if kept is None or kept[0] is not ix:
                    arr = _as_index_array(ix)
                    if arr.size == 0:
                        raise ShapeError(f"ProductDomain: block {i} has no coordinates (an "
                                         f"empty index set); an oracle needs at least one")
                    if arr.min() < 0:
                        raise ValueError(f"ProductDomain: block {i} has a negative index: "
                                         f"{int(arr[arr < 0][0])}")
                    if not _distinct(arr):
                        raise ValueError(f"ProductDomain: block {i} repeats a coordinate: "
                                         f"{_first_repeat(arr)} appears more than once")
                    seen[id(ix)] = (ix, arr)
                else:
                    arr = kept[1]
                if isinstance(ix, np.ndarray) and ix.ndim > 1:
                    self._index_shapes[i] = tuple(int(n) for n in ix.shape)
                b_shape = declared_shape(b)
                if b_shape is not None and arr.size != math.prod(b_shape):
                    raise ShapeError(
                        f"ProductDomain: block {i} has shape {b_shape} "
                        f"({math.prod(b_shape)} coordinates) but {arr.size} indices"
                    )
                idx_list.append(arr)
            self.block_indices = tuple(idx_list)
            self.dim = int(max((a.max() + 1 for a in idx_list if a.size), default=0))
        counts = np.zeros(self.dim, dtype=np.int64)
        for a in self.block_indices:
            counts[a] += 1
        self.disjoint: bool = bool(counts.max(initial=0) <= 1)
        self.shape = (self.dim,)
        # block_dots' coordinates and their blocks (built on first use)
        self._flat: tuple[np.ndarray | None, np.ndarray, np.ndarray] | None = None

    @property
    def n_blocks(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    def block_dots(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``<a_i, b_i>`` for every block ``i`` of two points of the common space: their
        products summed over each block's coordinates (O(dim), one vectorised pass).

        Parameters
        ----------
        a, b : ndarray
            Two points (or a gradient and a point) of the common space, ``dim`` entries.

        Returns
        -------
        ndarray, shape (n_blocks,)
            The blocks' terms of ``<a, b>``.

        Raises
        ------
        ValueError
            On a Minkowski sum, where a point does not determine its block parts.
        """
        if not self.disjoint:
            raise ValueError("ProductDomain.block_dots: a point of a Minkowski sum does not "
                             "determine its block parts")
        a = np.asarray(a, dtype=float).reshape(-1)
        b = np.asarray(b, dtype=float).reshape(-1)
        return self._block_sums(a, b)

    def _block_sums(self, a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None
                    ) -> np.ndarray:
        """Per block, the sum of ``a * b`` (``a * (b - c)`` with ``c``) over its
        coordinates; ``a``, ``b``, ``c`` flat float arrays of the common space."""
        flat = self._flat
        if flat is None:
            # every block's coordinates in one array, block after block (None: they are
            # 0 .. dim-1 in order, no gather), and where each non-empty block starts in
            # it: built once, then one product and one segmented sum per call (reduceat;
            # a weighted bincount took four times as long)
            sizes = np.array([a.size for a in self.block_indices], dtype=np.int64)
            every = np.concatenate(self.block_indices)
            whole = every.size == self.dim and bool(
                np.array_equal(every, np.arange(self.dim)))
            filled = np.flatnonzero(sizes > 0)
            flat = self._flat = (None if whole else every, filled,
                                 (np.cumsum(sizes) - sizes)[filled])
        coords, filled, starts = flat
        if coords is not None:
            a, b = a[coords], b[coords]
            c = None if c is None else c[coords]
        terms = a * b if c is None else a * (b - c)
        out = np.zeros(self.n_blocks)
        if starts.size:
            out[filled] = np.add.reduceat(terms, starts)
        return out

    def check_gaps(self, direction: np.ndarray, x: np.ndarray, answer: Atom | np.ndarray,
                   f: float, f_top: float, where: str) -> None:
        """Check every block's Frank-Wolfe gap at ``x``: ``answer`` is this domain's
        answer to ``direction`` (the gradient at ``x``), whose block parts are the block
        oracles' answers.  Raises :class:`~frankwolfe.OracleError` naming a block whose
        gap is negative beyond rounding (see :func:`check_block_gaps`); a Minkowski sum,
        whose points do not determine their block parts, is not checked.

        Parameters
        ----------
        direction : ndarray
            The gradient the answer minimizes, shape ``(dim,)``.
        x : ndarray
            The point of the domain the gap is about.
        answer : Atom or ndarray
            The domain's answer to ``direction``.
        f, f_top : float
            The objective's value at ``x`` and the run's largest ``|f|`` so far.
        where : str
            Where in the run (``"iteration 12"``), for the message.
        """
        if not self.disjoint:
            return
        s = answer.to_dense() if isinstance(answer, Atom) else answer
        g = np.asarray(direction, dtype=float).reshape(-1)
        xf = np.asarray(x, dtype=float).reshape(-1)
        sf = np.asarray(s, dtype=float).reshape(-1)
        # the blocks' gaps in one pass first: none below 0 (the common case, every
        # iteration of a run) cannot be below the allowance, and the products it is
        # relative to are not needed (NaN goes on, and check_block_gaps leaves it)
        if self._block_sums(g, xf, sf).min(initial=0.0) >= 0.0:
            return
        check_block_gaps(self, self._block_sums(g, xf), self._block_sums(g, sf), f, f_top,
                         where)

    def block_shape(self, i: int) -> tuple[int, ...]:
        """Shape of block ``i``'s points."""
        own = declared_shape(self.blocks[i])
        if own is not None:
            return own
        shaped = self._index_shapes[i]
        return shaped if shaped is not None else (self.block_indices[i].size,)

    def block_extreme_point(self, i: int, direction: np.ndarray) -> Atom:
        """Call block ``i``'s oracle on the block part of a full direction."""
        g = np.asarray(direction, dtype=float)[self.block_indices[i]]
        return self.blocks[i](g.reshape(self.block_shape(i)))

    def batch_block_oracle(self) -> Callable[[Sequence[int], np.ndarray], list[Atom]] | None:
        """A callable ``(which, gradient) -> atoms`` answering the oracles of blocks
        ``which`` at the full gradient in one call (the same atoms as ``blocks[i]`` at
        their slices, in that order; safe to call from several threads on disjoint
        lists), or ``None`` (default: the blocks are asked one by one).  Mini-batch
        rounds hand it one chunk of a round per thread, so a domain whose kernels
        release the GIL answers in parallel.  An oracle that also has a method
        ``shard(blocks: range)`` returning the (picklable) oracle of those contiguous
        blocks alone, numbered from 0, is cut into one piece per cluster worker by
        :class:`~frankwolfe.DaskExecutor`.  One that also has a method ``values(which,
        gradient)`` returning the answers' values ``<g_i, s_i>`` alone (an array, the
        atoms' inner products up to rounding) serves the certificates that keep no
        atom, such as a BCFW run's closing one, without building the atoms."""
        return None

    def embed(self, i: int, atom: Atom) -> Atom:
        """The block atom scattered into the common space (a sparse atom)."""
        idx = self.block_indices[i]
        if atom.is_sparse:
            # the block atom's values are shared: atoms are never modified
            return Atom.sparse(idx[atom.indices], atom.values, self.dim, key=(i, atom.key),
                               copy=False)
        # the domain's own index array, never modified: shared, as the values above
        return Atom.sparse(idx, atom.to_dense().reshape(-1), self.dim, key=(i, atom.key),
                           copy=False)

    def extreme_point(self, direction: np.ndarray) -> Atom:
        direction = np.asarray(direction, dtype=float)
        if direction.shape != (self.dim,):
            raise ShapeError(
                f"ProductDomain: direction has shape {direction.shape}, expected ({self.dim},)"
            )
        out = np.zeros(self.dim)
        keys = []
        for i in range(self.n_blocks):
            atom = self.block_extreme_point(i, direction)
            keys.append(atom.key)
            idx = self.block_indices[i]
            if atom.is_sparse:
                np.add.at(out, idx[atom.indices], atom.values)
            else:
                out[idx] += atom.to_dense().reshape(-1)
        return Atom(out, key=("product", tuple(keys)), copy=False)

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """Block parts of ``x`` (meaningful for a Cartesian product)."""
        x = np.asarray(x, dtype=float)
        return [x[idx].reshape(self.block_shape(i)) for i, idx in enumerate(self.block_indices)]

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """From the blocks' diameters: their root sum of squares for a Cartesian
        product, their sum for a Minkowski sum; None when one is unknown."""
        ds = [b.diameter(self.block_shape(i)) for i, b in enumerate(self.blocks)]
        known = [d for d in ds if d is not None]
        if len(known) < len(ds):
            return None
        return float(np.sqrt(sum(d * d for d in known))) if self.disjoint else float(sum(known))

    def violation(self, x: np.ndarray) -> float:
        if not self.disjoint:
            raise NotImplementedError(
                "membership in a Minkowski sum needs a decomposition into blocks; "
                "check the block iterates instead"
            )
        x = np.asarray(x, dtype=float)
        if x.shape != (self.dim,):
            return np.inf
        covered = np.zeros(self.dim, dtype=bool)
        worst, known = 0.0, False
        for b, part, idx in zip(self.blocks, self.split(x), self.block_indices):
            covered[idx] = True
            try:
                worst = max(worst, b.violation(part))
            except NotImplementedError:  # a block without violation(): the others checked
                continue
            known = True
        if not covered.all():  # coordinates in no block must be 0
            worst = max(worst, float(np.abs(x[~covered]).max()))
            known = True
        if not known:
            raise NotImplementedError("ProductDomain: no block implements violation()")
        return worst

    def initial_point(self, shape: tuple[int, ...] | None = None) -> Atom:
        self._resolve_shape(shape)
        return self(np.ones(self.dim))

    def _repr_params(self) -> dict[str, Any]:
        # what __init__ set: one that raised half-way leaves the object in the
        # traceback's locals, whose repr (pytest, debuggers) raised AttributeError
        params: dict[str, Any] = {}
        if "blocks" in self.__dict__:
            params["n_blocks"] = len(self.blocks)
        if "disjoint" in self.__dict__:
            params["dim"] = self.dim
            params["kind"] = "cartesian" if self.disjoint else "minkowski"
        return params


def _as_index_array(ix: Any) -> np.ndarray:
    if isinstance(ix, slice):
        if ix.stop is None:
            raise ValueError("ProductDomain: a slice of block indices needs a stop")
        return np.arange(ix.start or 0, ix.stop, ix.step or 1, dtype=np.int64)
    arr = np.asarray(ix)
    # a float index was truncated (2.5 -> 2: the blocks then overlapped, a Minkowski
    # sum), a boolean mask read as indices 0 and 1
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"ProductDomain: `indices` must hold integer coordinates, slices or "
                         f"ranges, got {ix!r} (dtype {arr.dtype})")
    # a copy: the domain must not change when the caller reuses its array
    return arr.astype(np.int64).ravel()


def _first_repeat(arr: np.ndarray) -> int:
    """The first coordinate of ``arr`` (in its order) that an earlier entry already holds;
    only asked once :func:`_distinct` has found one."""
    _, first = np.unique(arr, return_index=True)
    repeat = np.ones(arr.size, dtype=bool)
    repeat[first] = False
    return int(arr[np.flatnonzero(repeat)[0]])


def _distinct(arr: np.ndarray) -> bool:
    """Whether the indices are pairwise distinct: increasing ones (the usual ranges) in one
    O(n) pass, others by sorting."""
    if arr.size < 2 or bool(np.all(arr[1:] > arr[:-1])):
        return True
    return bool(np.unique(arr).size == arr.size)

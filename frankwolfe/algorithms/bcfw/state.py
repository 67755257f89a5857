"""The state of one BCFW run: the iterate, the block iterates and their start, the
per-block estimates and counters, the stored atoms and the average.

Every pass (:mod:`.passes`) reads and writes this state; none of them sees the
engine.  The domain's Python blocks (oracles, coordinate sets, offsets) are
built on first use: a compiled run of a domain's own kernels never asks for
them (for a large training set they cost gigabytes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...atoms import Atom
from ...compiled import BlockDomainHooks, CompiledBlocks
from ...errors import ShapeError
from ...lmo.product import ProductDomain
from ...objectives.base import Objective
from ..block_orders import BlockOrder
from .store import BlockAtomStore, LazyAverage

__all__ = ["BlockState", "PythonBlocks", "block_vector"]


def block_vector(atom: Atom, m: int) -> np.ndarray:
    """A block atom as a dense vector over the block's coordinates."""
    if atom.is_sparse:
        v = np.zeros(m)
        v[atom.indices] = atom.values
        return v
    return np.array(atom.to_dense(), dtype=float).reshape(-1)


def _is_active_set(p: Any) -> bool:
    """Whether a block's start is given as ``(Atom, weight)`` pairs."""
    return isinstance(p, (list, tuple)) and len(p) > 0 and all(
        isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], Atom) for e in p)


class PythonBlocks:
    """Oracles, coordinate sets and offsets of a product domain's blocks, and the store
    of their atoms when the run keeps atoms (cache, active sets)."""

    def __init__(self, domain: ProductDomain, keep_atoms: bool, cache_size: int,
                 atom_storage: str) -> None:
        n = domain.n_blocks
        self.lmos = domain.blocks
        self.shapes = [domain.block_shape(i) for i in range(n)]
        self.idx = [np.ascontiguousarray(a, dtype=np.int64) for a in domain.block_indices]
        # contiguous ranges are updated through slices (views, no fancy-index copies)
        self.sel: list[np.ndarray | slice] = []
        for a in self.idx:
            if a.size and a[-1] - a[0] == a.size - 1 and np.all(np.diff(a) == 1):
                self.sel.append(slice(int(a[0]), int(a[-1]) + 1))
            else:
                self.sel.append(a)
        self.sizes = np.array([a.size for a in self.idx], dtype=np.int64)
        self.off = np.concatenate(([0], np.cumsum(self.sizes)))
        self.store = BlockAtomStore(self.sizes, cache_size, atom_storage) if keep_atoms \
            else None


class BlockState:
    """What every pass of one run shares (see the module docstring).

    The iterate ``x`` exists from the start (zeros); :meth:`start` (block points of
    the Python blocks, ``Z``) or :meth:`start_owned` (a domain's compiled kernels own
    the block iterates in their own parametrization) sets it, once.
    """

    def __init__(self, objective: Objective, domain: ProductDomain, order: BlockOrder,
                 rng: np.random.Generator, *, keep_atoms: bool, cache_size: int,
                 atom_storage: str, averaging: str | None) -> None:
        self.f = objective
        self.dom = domain
        self.n = n = domain.n_blocks
        #: whether the block oracles minimize (LMO.exact; a product's is its blocks'): an
        #: inexact one's block gaps are estimates, which may be negative
        self.exact = bool(getattr(domain, "exact", True))
        self.order = order
        self.rng = rng
        self.est = np.full(n, np.inf)  # latest block-gap estimates (+inf: unvisited)
        self.G = np.inf  # latest certified global gap (cache threshold)
        self.f_top = 0.0  # the largest |f| of the certificates (their rounding scale)
        self.k = 0  # block steps done
        self.n_oracle = 0
        self.hits = 0
        self.misses = 0
        self.n_drop = 0
        self.last_gamma = np.nan
        self.x = np.zeros(domain.dim)
        self.Z: np.ndarray | None = None  # block iterates, block after block (Python start)
        self.block_points: Callable[[], Any] | None = None  # a domain's own (owned start)
        self.outputs: Callable[[], Any] | None = None  # ... and its Result.extra entries
        self.avg = LazyAverage(self.x, averaging) if averaging else None
        self._keep = (keep_atoms, cache_size, atom_storage)
        #: inactive atoms kept per block (for a domain's compiled kernels that keep atoms)
        self.cache_size = int(cache_size)
        self._blocks: PythonBlocks | None = None
        self._batch_oracle: Any = None
        self._batch_asked = False
        #: seconds of the start's oracle calls, one per block (None: the start asked none),
        #: what a certificate costs until one is timed
        self.start_seconds: float | None = None
        order.start(self.est)
        # a per-step call that costs more than its work, skipped when it does nothing
        self.order_update = None if type(order).update is BlockOrder.update else order.update

    def note_value(self, f: float) -> float:
        """Note ``f``, a certificate's value, and answer :attr:`f_top`, the largest
        finite ``|f|`` so far: with ``|f|``, the scale of the certificates' rounding
        allowance (see :func:`~frankwolfe.lmo.product.check_block_gaps`)."""
        a = abs(f)
        if self.f_top < a < np.inf:  # False for NaN: a value not finite is no scale
            self.f_top = a
        return self.f_top

    @property
    def store(self) -> BlockAtomStore | None:
        """The stored atoms (``None``: the run keeps none, or no Python blocks)."""
        return None if self._blocks is None else self._blocks.store

    def blocks(self) -> PythonBlocks:
        """The domain's Python blocks (built on the first call)."""
        if self._blocks is None:
            self._blocks = PythonBlocks(self.dom, *self._keep)
        return self._blocks

    def batch_oracle(self) -> Any:
        """The domain's batch block oracle (asked once; ``None``: none)."""
        if not self._batch_asked:
            self._batch_oracle = self.dom.batch_block_oracle()
            self._batch_asked = True
        return self._batch_oracle

    def pass_order(self) -> np.ndarray | None:
        """The block order of the next pass (``None``: the order picks step by step)."""
        order = self.order.pass_order(self.rng)
        if order is None:
            return None
        order = np.asarray(order)
        # an empty pass moves nothing: the run would spend its budget on no step at all
        if order.ndim != 1 or order.dtype.kind not in "iu" or order.size == 0 or not (
                0 <= order.min() and order.max() < self.n):
            raise ValueError(
                f"{type(self.order).__name__}.pass_order must return a non-empty 1-d integer "
                f"array of block indices in [0, {self.n}), got {order!r:.80}")
        return order.astype(np.int64, copy=False)

    def block_iterates(self) -> Any:
        """The block points, asked for when the run has ended: views of the block
        iterates ``Z`` (a list, one array per block; nothing writes them then, and
        a copy of them costs a large data set a share of its time limit:
        benchmarks/README.md, "Measurements behind code choices"), or, when a
        domain's compiled kernels own them, whatever their ``block_points()`` answers
        (the domain's own representation, which it reads again as a warm start: e.g.
        traffic's origin blocks answer a sparse ``(n_blocks, n_links)`` CSR array, since
        a block point is sparse and dense ones cost ``8 n_links`` bytes a block; the
        structured SVM's kernels their label marginals); ``None`` when neither."""
        if self.Z is not None:
            b, Z = self.blocks(), self.Z
            return [Z[b.off[i]:b.off[i + 1]].reshape(b.shapes[i]) for i in range(self.n)]
        return self.block_points() if self.block_points is not None else None

    # -- start --------------------------------------------------------------
    def start_owned(self, kernels: CompiledBlocks) -> None:
        """The domain's compiled kernels own the block iterates and write ``x``."""
        kernels.start(self.x)
        self.block_points = kernels.block_points
        self.outputs = kernels.outputs

    def start(self, x0: Any) -> np.ndarray:
        """Block iterates ``Z`` (returned) and ``x`` from ``x0`` (see the solver's
        docstring)."""
        b, dom, n = self.blocks(), self.dom, self.n
        store = b.store
        Z = np.empty(int(b.off[-1]))
        if x0 is None and isinstance(dom, BlockDomainHooks):
            x0 = dom.initial_block_points()  # a domain's natural start (e.g. SSVM: w = 0)
            if isinstance(x0, np.ndarray) and x0.shape == Z.shape:
                return self._start_flat(np.asarray(x0, dtype=float))
        if x0 is None:
            tic = time.perf_counter()
            for i in range(n):
                atom = b.lmos[i](np.ones(b.shapes[i]))
                self.n_oracle += 1
                v = block_vector(atom, int(b.sizes[i]))
                Z[b.off[i]:b.off[i + 1]] = v
                if store is not None:
                    store.add(i, atom.key, v, 1.0, 0)
            self.start_seconds = time.perf_counter() - tic
        else:
            if isinstance(x0, np.ndarray) and x0.ndim == 1 and x0.dtype != object:
                if x0.dtype.kind not in "biuf":
                    x0 = np.asarray(x0, dtype=float)  # numpy's error, or the same array
                if x0.shape != (dom.dim,):
                    raise ShapeError(f"x0 has shape {x0.shape}, expected ({dom.dim},)")
                if not dom.disjoint:
                    raise ValueError(
                        "x0: a point of a Minkowski sum (overlapping blocks) does not determine "
                        "the block iterates; pass a list of block points instead"
                    )
                parts = [x0[a] for a in b.idx]
            else:
                parts = list(x0)
                if len(parts) != n:
                    raise ShapeError(f"x0 has {len(parts)} block points, expected {n}")
            for i, p in enumerate(parts):
                if _is_active_set(p):
                    self._start_active_set(i, p, Z)
                    continue
                if isinstance(p, (list, tuple)) and p and all(
                        isinstance(e, tuple) and len(e) == 2 for e in p):
                    # (key, weight) pairs, as extra["active_sets"] lists them: keys alone
                    # do not say which vectors they are
                    raise TypeError(
                        f"x0: block {i} is a list of pairs but not (Atom, weight) pairs (got "
                        f"{type(p[0][0]).__name__} first); a result's extra['active_sets'] "
                        "holds the atoms' keys only: warm-start from the block points, "
                        "x0=res.x or res.extra['block_iterates']")
                given = p  # its own precision: a float32 block is allowed its rounding
                p = np.asarray(p, dtype=float)
                if p.size != b.sizes[i]:
                    raise ShapeError(
                        f"x0: block {i} has {p.size} entries, expected {int(b.sizes[i])} "
                        f"(shape {b.shapes[i]})"
                    )
                if not np.all(np.isfinite(p)):
                    raise ValueError(f"x0: block {i} contains NaN or inf")
                b.lmos[i].check_feasible(
                    given.reshape(b.shapes[i]) if isinstance(given, np.ndarray)
                    else p.reshape(b.shapes[i]), f"x0: block {i}")
                v = p.reshape(-1)
                Z[b.off[i]:b.off[i + 1]] = v
                if store is not None:
                    # the start point itself is a point of M_i: a valid (pseudo) atom
                    store.add(i, ("x0",), v, 1.0, 0)
        self.Z = Z
        x = self.x
        for i in range(n):
            np.add.at(x, b.idx[i], Z[b.off[i]:b.off[i + 1]])
        return Z

    def _start_flat(self, Z: np.ndarray) -> np.ndarray:
        """Start from a domain's own block points given as one array, block after block:
        no per-block checks of user input, and no scatter into ``x`` when they are all
        zero (on CoNLL-2000's 8936 blocks of ~7800 coordinates the per-block start took
        seconds of a time limit)."""
        b, store = self.blocks(), self.blocks().store
        if not np.all(np.isfinite(Z)):
            raise ValueError(f"{type(self.dom).__name__}.initial_block_points() contains NaN "
                             "or inf")
        if store is not None:
            for i in range(self.n):
                # the start point itself is a point of M_i: a valid (pseudo) atom
                store.add(i, ("x0",), Z[b.off[i]:b.off[i + 1]], 1.0, 0)
        self.Z = Z
        if Z.any():
            x = self.x
            for i in range(self.n):
                np.add.at(x, b.idx[i], Z[b.off[i]:b.off[i + 1]])
        return Z

    def _start_active_set(self, i: int, atoms: Sequence[tuple[Atom, float]],
                          Z: np.ndarray) -> None:
        """Start block ``i`` at the convex combination ``atoms`` (``(Atom, weight)``
        pairs), which become its active set (a warm start that keeps the atoms)."""
        b = self.blocks()
        store = b.store
        w = np.array([float(wa) for _, wa in atoms])
        if not (np.all(np.isfinite(w)) and w.min() >= 0.0 and abs(w.sum() - 1.0) <= 1e-9):
            raise ValueError(
                f"x0: block {i}'s active set must have non-negative weights summing to 1, got "
                f"sum {w.sum()!r} and minimum {w.min()!r}"
            )
        w /= w.sum()
        size = int(b.sizes[i])
        v = np.zeros(size)
        for (atom, _), wa in zip(atoms, w):
            if atom.nnz > size or int(np.prod(atom.shape)) != size:
                raise ShapeError(f"x0: an atom of block {i} has shape {atom.shape}, expected "
                                 f"{b.shapes[i]}")
            vec = block_vector(atom, size)
            v += wa * vec
            if store is not None:
                known = atom.key in store.keys[i]
                row = store.add(i, atom.key, vec, float(wa), 0)
                if known:  # the same atom twice: its weights add up
                    store.add_weight(i, row, float(wa))
        Z[b.off[i]:b.off[i + 1]] = v

"""Per-block bookkeeping for block-coordinate Frank-Wolfe.

Three small pieces, each O(|block|) or O(log n) per block step:

* :class:`BlockAtomStore` - per-block atoms (dense rows over the block's
  coordinates), active-set weights and last-use stamps: the oracle cache and
  the active set of away / pairwise block steps (gapBCFW keeps both in one
  table of labellings).
* :class:`GapSampler` - draws blocks with probability proportional to
  ``g_i ** degree`` from a sum tree, unvisited blocks first.
* :class:`LazyAverage` - the weighted / uniform / tail average of the
  iterates, updated lazily per coordinate so a block step never touches the
  whole vector.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from numba import njit

__all__ = ["BlockAtomStore", "GapSampler", "LazyAverage", "CompiledBlocks", "CompiledObjective",
           "compiled_driver", "fused_driver", "average_touch", "diag_quadratic_line", "diag_quadratic_update",
           "csr_quadratic_kernels", "simplex_blocks"]


class BlockAtomStore:
    """Atoms, weights and use stamps of every block.

    Block ``i`` holds up to ``max_size`` inactive atoms as rows of a dense
    ``(rows, m_i)`` array; atoms with positive weight (the block's active
    set) are never evicted, so a block may exceed ``max_size`` while they
    are needed.  Eviction removes the least recently used inactive atom.

    Parameters
    ----------
    sizes : sequence of int
        Number of coordinates ``m_i`` of each block.
    max_size : int
        Bound on the number of stored inactive atoms per block.
    """

    def __init__(self, sizes: np.ndarray, max_size: int) -> None:
        n = len(sizes)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.max_size = int(max_size)
        self.mats: list[np.ndarray | None] = [None] * n
        self.weights: list[np.ndarray | None] = [None] * n
        self.stamps: list[np.ndarray | None] = [None] * n
        self.keys: list[dict[Hashable, int]] = [{} for _ in range(n)]
        self.count = np.zeros(n, dtype=np.int64)

    def add(self, i: int, key: Hashable, vec: np.ndarray, weight: float, stamp: int) -> int:
        """Store ``vec`` under ``key`` in block ``i`` (or find it); return its row."""
        keys = self.keys[i]
        row = keys.get(key)
        if row is not None:
            self.stamps[i][row] = stamp
            return row
        c = int(self.count[i])
        if self.mats[i] is None:
            cap = 4
            self.mats[i] = np.empty((cap, self.sizes[i]))
            self.weights[i] = np.zeros(cap)
            self.stamps[i] = np.zeros(cap, dtype=np.int64)
        w = self.weights[i]
        if c >= self.max_size:
            inactive = np.flatnonzero(w[:c] <= 0.0)
            if inactive.size:  # reuse the least recently used inactive row
                row = int(inactive[np.argmin(self.stamps[i][inactive])])
                old = next(k for k, r in keys.items() if r == row)
                del keys[old]
                self._write(i, row, key, vec, weight, stamp)
                return row
        if c == self.mats[i].shape[0]:
            cap = 2 * c
            for name in ("mats", "weights", "stamps"):
                arr = getattr(self, name)[i]
                new = np.zeros((cap,) + arr.shape[1:], dtype=arr.dtype)
                new[:c] = arr[:c]
                getattr(self, name)[i] = new
        self.count[i] = c + 1
        self._write(i, c, key, vec, weight, stamp)
        return c

    def _write(self, i: int, row: int, key: Hashable, vec: np.ndarray, weight: float,
               stamp: int) -> None:
        self.mats[i][row] = vec
        self.weights[i][row] = weight
        self.stamps[i][row] = stamp
        self.keys[i][key] = row

    def rows(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Views ``(atoms, weights)`` of the stored rows of block ``i``."""
        c = int(self.count[i])
        return self.mats[i][:c], self.weights[i][:c]

    def active_size(self, i: int) -> int:
        """Number of atoms with positive weight in block ``i``."""
        c = int(self.count[i])
        return 0 if c == 0 else int(np.count_nonzero(self.weights[i][:c] > 0.0))

    def total_active(self) -> int:
        """Sum of the active-set sizes over the blocks."""
        return sum(self.active_size(i) for i in range(len(self.keys)))


# -- gap sampling -----------------------------------------------------------

@njit(cache=True, nogil=True)
def _tree_set(tree: np.ndarray, size: int, i: int, v: float) -> None:
    j = i + size
    tree[j] = v
    j //= 2
    while j >= 1:
        # recompute from children (not a running difference) so rounding
        # errors cannot accumulate over millions of updates
        tree[j] = tree[2 * j] + tree[2 * j + 1]
        j //= 2


@njit(cache=True, nogil=True)
def _tree_find(tree: np.ndarray, size: int, u: float) -> int:
    j = 1
    while j < size:
        left = tree[2 * j]
        if u < left or tree[2 * j + 1] <= 0.0:
            j = 2 * j
        else:
            u -= left
            j = 2 * j + 1
    return j - size


@njit(cache=True, nogil=True, inline="always")
def _pick_block(t, order, unif, sampling, est, tree, tsize, nextu, n):
    """Block of step ``t`` in a compiled pass: from ``order`` (uniform / perm),
    or by gap sampling (unvisited blocks first, then the sum tree)."""
    if sampling == 0:
        return order[t]
    while nextu[0] < n and np.isfinite(est[nextu[0]]):
        nextu[0] += 1
    if nextu[0] < n:
        return nextu[0]
    if tree[1] > 0.0:
        return min(_tree_find(tree, tsize, unif[t] * tree[1]), n - 1)
    return min(int(unif[t] * n), n - 1)


class GapSampler:
    """Block sampling proportional to ``g_i ** degree`` (gapBCFW).

    Blocks whose estimate is ``+inf`` (never visited) are taken first, in
    index order, so the first pass is a deterministic sweep as in gapBCFW.
    After that block ``i`` is drawn with probability ``g_i^degree / sum_j
    g_j^degree`` (uniformly when all estimates are 0) by one
    ``rng.random()`` and a sum-tree descent, O(log n).

    Parameters
    ----------
    estimates : ndarray
        The block-gap estimates, shared with (and updated by) the caller
        through :meth:`update` / :meth:`refresh`.
    degree : float
        Exponent of the gaps.
    greedy : bool
        Pick ``argmax g_i`` instead of sampling ("max_gap").
    """

    def __init__(self, estimates: np.ndarray, degree: float, greedy: bool = False) -> None:
        self.est = estimates
        self.n = estimates.size
        self.degree = float(degree)
        self.greedy = greedy
        self.size = 1 << max(0, int(self.n - 1).bit_length())
        self.tree = np.zeros(2 * self.size)
        self.next_unvisited = 0
        self.refresh()

    def _weight(self, g: np.ndarray | float) -> np.ndarray | float:
        g = np.maximum(g, 0.0)
        return g if self.degree == 1.0 else g ** self.degree

    def refresh(self) -> None:
        """Rebuild the tree from all estimates (after an exact gap pass)."""
        leaves = np.where(np.isfinite(self.est), self._weight(np.where(np.isfinite(self.est),
                                                                       self.est, 0.0)), 0.0)
        self.tree[:] = 0.0
        self.tree[self.size:self.size + self.n] = leaves
        lvl = self.size
        while lvl > 1:  # build parents level by level, vectorized
            half = lvl // 2
            self.tree[half:lvl] = self.tree[lvl:2 * lvl:2] + self.tree[lvl + 1:2 * lvl:2]
            lvl = half
        self.next_unvisited = 0
        self._skip_visited()

    def _skip_visited(self) -> None:
        est, k = self.est, self.next_unvisited
        while k < self.n and np.isfinite(est[k]):
            k += 1
        self.next_unvisited = k

    def update(self, i: int, g: float) -> None:
        """Set block ``i``'s estimate to ``g`` (finite)."""
        self.est[i] = g
        _tree_set(self.tree, self.size, i, float(self._weight(g)))

    def draw_u(self, u: float) -> int:
        """The next block, from a uniform number ``u`` in [0, 1) (unused while
        unvisited blocks remain or when sampling greedily)."""
        if self.next_unvisited < self.n:
            self._skip_visited()
            if self.next_unvisited < self.n:
                return self.next_unvisited
        if self.greedy:
            return int(np.argmax(self.est))
        total = self.tree[1]
        if not total > 0.0:
            return min(int(u * self.n), self.n - 1)
        return min(_tree_find(self.tree, self.size, u * total), self.n - 1)

    def draw(self, rng: np.random.Generator) -> int:
        """The next block."""
        if self.next_unvisited < self.n:
            self._skip_visited()
            if self.next_unvisited < self.n:
                return self.next_unvisited
        if self.greedy:
            return int(np.argmax(self.est))
        total = self.tree[1]
        if not total > 0.0:
            return int(rng.integers(self.n))
        return min(_tree_find(self.tree, self.size, rng.random() * total), self.n - 1)


# -- averaging ----------------------------------------------------------------

class LazyAverage:
    """Running average of the iterates ``x_0, x_1, ...`` in O(|block|) per step.

    ``kind``:

    * ``"weighted"`` - ``xbar <- k/(k+2) xbar + 2/(k+2) x`` after step ``k``
      (BCFW-wavg); iterate ``x_j`` gets weight proportional to ``j``;
    * ``"uniform"`` - the plain mean of ``x_0..x_K``;
    * ``"tail"`` - the plain mean since the last restart; the caller restarts
      at passes 1, 2, 4, 8, ... so the average covers at least the last half.

    Each coordinate keeps the accumulated weighted sum up to the step where
    it last changed; :meth:`touch` settles coordinates before they change
    and :meth:`value` settles everything.
    """

    def __init__(self, x: np.ndarray, kind: str) -> None:
        self.kind = kind
        self.acc = np.zeros(x.size)
        self.since = np.zeros(x.size, dtype=np.int64)  # first iterate holding today's value
        self.start = 0  # first averaged iterate ("tail" restarts move it)

    def _cum(self, t: np.ndarray | int) -> np.ndarray | float:
        """Sum of the weights of iterates ``start .. t-1``."""
        if self.kind == "weighted":
            return t * (t - 1) / 2.0  # weights j for j < t (x_0 gets weight 0)
        return t - self.start

    def touch(self, x: np.ndarray, idx: np.ndarray | slice, k: int) -> None:
        """Settle ``idx`` before step ``k`` changes them (``x`` holds ``x_k``)."""
        since = self.since[idx]
        self.acc[idx] += x[idx] * (self._cum(k + 1) - self._cum(since))
        self.since[idx] = k + 1

    def restart(self, x: np.ndarray, k: int) -> None:
        """Start a new average at iterate ``x_k`` (O(dim))."""
        self.acc[:] = 0.0
        self.since[:] = k
        self.start = k

    def value(self, x: np.ndarray, k: int) -> np.ndarray:
        """The average up to and including ``x_k`` (a new array)."""
        total = self._cum(k + 1)
        if total <= 0:
            return x.copy()
        return (self.acc + x * (total - self._cum(self.since))) / total


# -- compiled helpers -----------------------------------------------------------
#
# The Python cost of a block step (oracle call, Atom, a dozen small numpy
# calls) would dominate the O(|block|) arithmetic of small blocks, so whole
# passes can run in numba (the protocol below); these helpers serve both.

@njit(cache=True, nogil=True)
def _row_dot_csr(indptr, indices, data, r, x):
    s = 0.0
    for p in range(indptr[r], indptr[r + 1]):
        s += data[p] * x[indices[p]]
    return s


@njit(cache=True, nogil=True)
def _in_sorted(a, v):
    lo, hi = 0, a.size
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo if (lo < a.size and a[lo] == v) else -1


@njit(cache=True, nogil=True)
def csr_rows_dot(indptr, indices, data, rows, x):
    """``(Q @ x)[rows]`` for a CSR ``Q``, O(nnz of the rows)."""
    out = np.empty(rows.size)
    for a in range(rows.size):
        out[a] = _row_dot_csr(indptr, indices, data, rows[a], x)
    return out


@njit(cache=True, nogil=True)
def csr_block_quad(indptr, indices, data, rows, v):
    """``v^T Q[rows, rows] v`` for a CSR ``Q`` with sorted column indices and sorted ``rows``."""
    curv = 0.0
    for a in range(rows.size):
        r = rows[a]
        s = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            b = _in_sorted(rows, indices[p])
            if b >= 0:
                s += data[p] * v[b]
        curv += v[a] * s
    return curv


# -- the compiled block protocol ---------------------------------------------------
#
# A whole BCFW pass runs in numba when the domain and the objective each supply
# compiled kernels (duck-typed, see ``CompiledBlocks`` / ``CompiledObjective``).
# The driver below is generic: it never sees how a domain stores its block
# iterates (dense vectors over idx_i, per-position label marginals, ...); it
# only exchanges directions in the shared space, as sparse (indices, values)
# in scratch buffers.  Kernels are numba functions; the driver is compiled once
# per process for each kernel combination (numba cannot cache functions that
# take other jitted functions as arguments, so the driver is built by a
# memoized factory; the kernels themselves are cached).

class CompiledBlocks:
    """What a product domain supplies to run BCFW passes in numba.

    Parameters
    ----------
    direction : numba function
        ``direction(state, i, g, want, idx, val) -> (nnz, gap, score)``:
        calls block ``i``'s oracle on the gradient ``g`` (the full shared-space
        gradient, kept up to date by the objective kernels) and returns the
        block gap ``<g, A_i (z_i - s_i)>`` and the vertex score
        ``<g, A_i s_i>``; when ``want`` is true it also writes the direction
        ``A_i (s_i - z_i)`` as ``nnz`` unique indices / values into ``idx`` /
        ``val`` and remembers ``s_i`` for :attr:`commit`.
    commit : numba function
        ``commit(state, i, gamma)``: ``z_i <- z_i + gamma (s_i - z_i)`` for
        the vertex of the last ``direction`` call.
    state : tuple
        Arrays (and scalars) handed to both kernels; owned by the domain.
    max_nnz : int
        Upper bound on ``nnz`` (size of the scratch buffers).
    start : callable
        ``start(x)``: add the aggregate ``sum_i A_i z_i`` of the start point
        to the zero vector ``x`` (Python, once).
    block_points : callable, optional
        ``block_points()``: the block iterates for ``Result.extra``.
    step : numba function, optional
        Fused block step for objectives whose Hessian is a multiple of the
        identity on a prefix of the coordinates (``CompiledObjective.isotropic
        = (h, hdim)``): ``step(state, i, g, x, h, hdim, exact, gamma_open,
        avg_kind, ck1, acc, since, avg_start, k) -> (gap, gamma, df)`` calls
        block ``i``'s oracle, takes the exact step (``exact``; the clipped
        minimizer ``gap / curv``) or ``gamma_open``, settles the coordinates it
        is about to move in the lazy average (:func:`average_touch` with
        ``ck1``, the cumulative weight up to step ``k``), updates ``x`` and
        ``g`` and commits, without materializing the direction.  ``df`` is the
        change of ``f``.  When both the domain and the objective offer it the
        driver uses it instead of ``direction`` / ``line`` / ``update`` /
        ``commit``.
    sync : numba function, optional
        ``sync(state, g)``: rebuild whatever the domain derives from the
        gradient (e.g. a transposed copy its oracle reads contiguously); called
        by the fused driver whenever ``g`` was replaced (start, certificates).
        Required with ``step``.
    step_dim : int, optional
        The fused step assumes every coordinate below ``step_dim`` has
        Hessian ``h`` (the objective's ``hdim`` must be at least this).
    """

    def __init__(self, direction, commit, state, max_nnz, start, block_points=None,
                 step=None, sync=None, step_dim: int = 0) -> None:
        if (step is None) != (sync is None):
            raise ValueError("CompiledBlocks: `step` and `sync` go together (give both or neither)")
        self.direction = direction
        self.commit = commit
        self.state = state
        self.max_nnz = int(max_nnz)
        self.start = start
        self.block_points = block_points
        self.step = step
        self.sync = sync
        self.step_dim = int(step_dim)


class CompiledObjective:
    """What an objective supplies to run BCFW passes in numba.

    The objective must be quadratic along lines (``f(x + gamma d) = f(x) +
    gamma slope + gamma^2 curv / 2``), which is what makes the exact step and
    the exact change of ``f`` available from two numbers.

    Parameters
    ----------
    line : numba function
        ``line(data, x, g, idx, val, nnz) -> (slope, curv)`` for the sparse
        direction ``(idx[:nnz], val[:nnz])``.
    update : numba function
        ``update(data, x, g, idx, val, nnz, gamma)``: ``x += gamma d`` and the
        gradient ``g`` updated to match.
    data : tuple
        Arrays handed to both kernels.
    isotropic : tuple (float, int), optional
        ``(h, hdim)`` when the Hessian is ``h`` times the identity on the
        coordinates ``< hdim`` and zero on the others (a regularizer
        ``h/2 ||x[:hdim]||^2`` plus a linear term).  Lets a domain with a
        fused ``step`` kernel (see :class:`CompiledBlocks`) compute the
        curvature from its own structure and update ``x`` and ``g`` in one go.
    """

    def __init__(self, line, update, data, isotropic: tuple[float, int] | None = None) -> None:
        self.line = line
        self.update = update
        self.data = data
        self.isotropic = (None if isotropic is None
                          else (float(isotropic[0]), int(isotropic[1])))


@njit(cache=True, nogil=True)
def diag_quadratic_line(data, x, g, idx, val, nnz):  # pragma: no cover - compiled
    """``(slope, curv)`` of ``f = 1/2 sum h x^2 + c^T x`` (``data = (h,)``)."""
    h = data[0]
    slope = 0.0
    curv = 0.0
    for a in range(nnz):
        j = idx[a]
        v = val[a]
        slope += g[j] * v
        curv += h[j] * v * v
    return slope, curv


@njit(cache=True, nogil=True)
def diag_quadratic_update(data, x, g, idx, val, nnz, gamma):  # pragma: no cover - compiled
    """``x += gamma d``, ``g += gamma h * d`` for a diagonal quadratic."""
    h = data[0]
    for a in range(nnz):
        j = idx[a]
        v = gamma * val[a]
        x[j] += v
        g[j] += h[j] * v


@njit(cache=True, nogil=True)
def _csr_line(data, x, g, idx, val, nnz):  # pragma: no cover - compiled
    """``(slope, curv)`` of ``1/2 x^T Q x + c^T x`` along a direction with sorted indices."""
    indptr, indices, qdata = data
    slope = 0.0
    for a in range(nnz):
        slope += g[idx[a]] * val[a]
    rows = idx[:nnz]
    curv = 0.0
    if nnz > 0 and rows[nnz - 1] - rows[0] == nnz - 1:
        # a contiguous block (the usual Cartesian product): membership is a range check
        r0 = rows[0]
        for a in range(nnz):
            r = rows[a]
            s = 0.0
            for p in range(indptr[r], indptr[r + 1]):
                b = indices[p] - r0
                if 0 <= b < nnz:
                    s += qdata[p] * val[b]
            curv += val[a] * s
        return slope, curv
    for a in range(nnz):
        r = rows[a]
        s = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            b = _in_sorted(rows, indices[p])
            if b >= 0:
                s += qdata[p] * val[b]
        curv += val[a] * s
    return slope, curv


@njit(cache=True, nogil=True)
def _csr_update(data, x, g, idx, val, nnz, gamma):  # pragma: no cover - compiled
    """``x += gamma d`` and ``g += gamma Q d`` (Q symmetric: column j = row j)."""
    indptr, indices, qdata = data
    for a in range(nnz):
        j = idx[a]
        v = gamma * val[a]
        x[j] += v
        for p in range(indptr[j], indptr[j + 1]):
            g[indices[p]] += qdata[p] * v


def csr_quadratic_kernels(Q, c) -> CompiledObjective:
    """:class:`CompiledObjective` of ``1/2 x^T Q x + c^T x`` (``Q`` symmetric, any format)."""
    import scipy.sparse as sp

    Q = sp.csr_array(Q)
    Q.sort_indices()
    data = (np.asarray(Q.indptr, dtype=np.int64), np.asarray(Q.indices, dtype=np.int64),
            np.asarray(Q.data, dtype=float))
    return CompiledObjective(_csr_line, _csr_update, data)


@njit(cache=True, nogil=True)
def _simplex_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    """Block kernel of a product of scaled probability simplices (dense block iterates)."""
    Z, idx_flat, off, radius, last = state
    lo = off[i]
    hi = off[i + 1]
    m = hi - lo
    jmin = 0
    gz = 0.0
    for a in range(m):
        ga = g[idx_flat[lo + a]]
        gz += ga * Z[lo + a]
        if ga < g[idx_flat[lo + jmin]]:
            jmin = a
    score = radius[i] * g[idx_flat[lo + jmin]]
    last[0] = jmin
    if want:
        for a in range(m):
            idx[a] = idx_flat[lo + a]
            val[a] = -Z[lo + a]
        val[jmin] += radius[i]
    return m, gz - score, score


@njit(cache=True, nogil=True)
def _simplex_commit(state, i, gamma):  # pragma: no cover - compiled
    Z, idx_flat, off, radius, last = state
    lo = off[i]
    for a in range(off[i + 1] - lo):
        Z[lo + a] *= 1.0 - gamma
    Z[lo + last[0]] += gamma * radius[i]


def simplex_blocks(Z: np.ndarray, idx_flat: np.ndarray, off: np.ndarray,
                   radius: np.ndarray) -> CompiledBlocks:
    """:class:`CompiledBlocks` of a product of probability simplices whose block
    iterates are the dense rows ``Z[off[i]:off[i+1]]`` over ``idx_flat[off[i]:off[i+1]]``
    (updated in place)."""
    state = (Z, idx_flat, off, radius, np.zeros(1, dtype=np.int64))
    sizes = np.diff(off)
    return CompiledBlocks(_simplex_direction, _simplex_commit, state,
                          int(sizes.max(initial=1)), start=None)


@njit(cache=True, nogil=True)
def _avg_cum(kind, t, start):  # pragma: no cover - compiled
    if kind == 1:  # weighted: weights j for j < t
        return t * (t - 1) / 2.0
    return float(t - start)


@njit(cache=True, nogil=True, inline="always")
def average_touch(acc, since, x, j, ck1, kind, start, k):  # pragma: no cover - compiled
    """Settle coordinate ``j`` of a lazy average before step ``k`` moves it.

    ``ck1`` is the cumulative weight up to iterate ``k`` (``_avg_cum(kind, k + 1,
    start)``); touching a coordinate twice in one step adds zero the second time.
    """
    acc[j] += x[j] * (ck1 - _avg_cum(kind, since[j], start))
    since[j] = k + 1


_DRIVERS: dict = {}


def _fused_driver(step, sync):
    """Pass and certificate functions for a domain's fused ``step`` kernel."""
    key = ("fused", step, sync)
    hit = _DRIVERS.get(key)
    if hit is not None:
        return hit

    @njit(nogil=True)
    def run_pass(order, unif, sampling, dstate, x, g, est, tree, tsize, degree, nextu,
                 exact, ell, h, hdim, k, n, avg_kind, acc, since, avg_start, resync):
        if resync:
            sync(dstate, g)
        gamma = np.nan
        df = 0.0
        nl = ell * n
        for t in range(n):
            i = _pick_block(t, order, unif, sampling, est, tree, tsize, nextu, n)
            ck1 = _avg_cum(avg_kind, k + 1, avg_start) if avg_kind > 0 else 0.0
            gap, gamma, dfi = step(dstate, i, g, x, h, hdim, exact, min(1.0, nl / (k + nl)),
                                   avg_kind, ck1, acc, since, avg_start, k)
            gi = gap if gap > 0.0 else 0.0
            est[i] = gi
            if sampling == 1:
                _tree_set(tree, tsize, i, gi if degree == 1.0 else gi ** degree)
            df += dfi
            k += 1
        return k, gamma, df

    _DRIVERS[key] = run_pass
    return run_pass


def fused_driver(blocks: CompiledBlocks, objective: CompiledObjective):
    """The fused pass function when both sides support it, else ``None``.

    ``run_pass(order, unif, sampling, dstate, x, g, est, tree, tsize, degree, nextu,
    exact, ell, h, hdim, k, n, avg_kind, acc, since, avg_start, resync) -> (k,
    last_gamma, df)``: as the pass of :func:`compiled_driver`, each block step
    being one call of the domain's ``step`` kernel; ``resync`` first calls
    ``sync(dstate, g)``.
    """
    iso = getattr(objective, "isotropic", None)
    if getattr(blocks, "step", None) is None or iso is None or iso[1] < blocks.step_dim:
        return None
    return _fused_driver(blocks.step, blocks.sync)


def compiled_driver(blocks: CompiledBlocks, objective: CompiledObjective):
    """The (memoized) numba pass and certificate functions for these kernels.

    Returns ``(run_pass, certify)``:

    * ``run_pass(order, unif, sampling, dstate, odata, x, g, est, tree, tsize, degree,
      nextu, exact, ell, k, n, avg_kind, acc, since, avg_start, idx, val)
      -> (k, last_gamma, df)`` runs ``n`` block steps (``sampling`` 0: blocks
      from ``order``; 1: gap sampling from the sum tree, unvisited blocks
      first, one uniform number per step from ``unif``); ``avg_kind`` 0 (none),
      1 (weighted), 2 (uniform / tail).
    * ``certify(dstate, g, est, refresh, idx, val) -> (sum_gap, sum_score)``:
      one oracle call per block; with ``refresh`` the block-gap estimates are
      replaced by the exact block gaps.
    """
    key = (blocks.direction, blocks.commit, objective.line, objective.update)
    hit = _DRIVERS.get(key)
    if hit is not None:
        return hit
    direction, commit, line, update = key

    @njit(nogil=True)
    def run_pass(order, unif, sampling, dstate, odata, x, g, est, tree, tsize, degree, nextu,
                 exact, ell, k, n, avg_kind, acc, since, avg_start, idx, val):
        gamma = np.nan
        df = 0.0
        for t in range(n):
            i = _pick_block(t, order, unif, sampling, est, tree, tsize, nextu, n)
            nnz, gap, score = direction(dstate, i, g, True, idx, val)
            gi = gap if gap > 0.0 else 0.0
            est[i] = gi
            if sampling == 1:
                _tree_set(tree, tsize, i, gi if degree == 1.0 else gi ** degree)
            gamma = 0.0
            if gap > 0.0:
                slope, curv = line(odata, x, g, idx, val, nnz)
                if exact:
                    gamma = 1.0 if curv <= 0.0 else min(1.0, -slope / curv)
                else:
                    gamma = min(1.0, ell * n / (k + ell * n))
                if gamma > 0.0:
                    if avg_kind > 0:
                        ck1 = _avg_cum(avg_kind, k + 1, avg_start)
                        for a in range(nnz):
                            j = idx[a]
                            acc[j] += x[j] * (ck1 - _avg_cum(avg_kind, since[j], avg_start))
                            since[j] = k + 1
                    df += gamma * (slope + 0.5 * gamma * curv)
                    update(odata, x, g, idx, val, nnz, gamma)
                    commit(dstate, i, gamma)
            k += 1
        return k, gamma, df

    @njit(nogil=True)
    def certify(dstate, g, est, refresh, idx, val):
        n = est.size
        total = 0.0
        scores = 0.0
        for i in range(n):
            nnz, gap, score = direction(dstate, i, g, False, idx, val)
            total += gap
            scores += score
            if refresh:
                est[i] = gap if gap > 0.0 else 0.0
        return total, scores

    _DRIVERS[key] = (run_pass, certify)
    return run_pass, certify
